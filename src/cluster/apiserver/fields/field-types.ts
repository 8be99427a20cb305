/**
 * What field ownership needs to know of a kind's schema (structured-merge-diff's
 * schema.Schema, cut to its relationships):
 *
 * - `leaf`: a scalar, or an atomic list / map / struct — owned as a whole;
 * - `map`: a struct or a granular map: declared fields by name, other keys
 *   (map entries: labels, resource lists) typed by `elem`;
 * - `list`: an associative list — `keys` names the key fields of a
 *   `map` list (`k:{...}` elements), no keys means a `set` (`v:` elements);
 * - `deduced`: no schema (preserve-unknown-fields, RawExtension): objects are
 *   granular maps, lists atomic, as upstream deduces them.
 *
 * Built-in kinds come from the OpenAPI description the server publishes
 * (openapi/builtin-schemas.generated.ts) with the list semantics of their
 * strategic-merge metadata (k8s/patch-meta.ts: a merge key makes a map list,
 * a merge strategy without key a set, anything else is atomic — the rule
 * upstream applies to built-in types without an explicit `+listType`), plus the
 * `+listType`, `+listMapKey`, `+mapType=atomic` and `+structType=atomic`
 * markers of k8s.io/api that patch metadata does not carry (tables below).
 * Custom resources come from their CRD version's `openAPIV3Schema`
 * (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
 * `x-kubernetes-map-type`, `x-kubernetes-preserve-unknown-fields`); their
 * lists default to atomic, as upstream's do.
 *
 * Types are built lazily, one struct at a time, and memoized: a pod write walks
 * only the fields it has.
 */
import { OBJECT_META_PATCH_META, patchMetaForKind, type PatchMeta } from '../../../k8s/patch-meta.ts';
import { BUILTIN_DEFINITIONS } from '../openapi/builtin-schemas.generated.ts';

export interface LeafType {
  readonly kind: 'leaf';
}

export interface MapType {
  readonly kind: 'map';
  /** The type of a declared field; undefined for keys the struct does not declare. */
  field(name: string): FieldType | undefined;
  /** The type of undeclared keys (map entries); undefined when the struct has none. */
  readonly elem: FieldType | undefined;
}

export interface ListType {
  readonly kind: 'list';
  /** Key fields of a map list; undefined for a set. */
  readonly keys: readonly string[] | undefined;
  /** Values a missing key field takes (upstream uses the key field's schema default, e.g. protocol TCP). */
  readonly keyDefaults: Readonly<Record<string, unknown>> | undefined;
  readonly item: FieldType;
}

export interface DeducedType {
  readonly kind: 'deduced';
}

export type FieldType = LeafType | MapType | ListType | DeducedType;

export const LEAF: LeafType = { kind: 'leaf' };
export const DEDUCED: DeducedType = { kind: 'deduced' };

/** The type of a key of a map node: its declared field, its entries' type, or deduced. */
export function childType(type: MapType, key: string): FieldType {
  return type.field(key) ?? type.elem ?? DEDUCED;
}

// ---- built-in kinds ----

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const CORE = 'io.k8s.api.core.v1';

/** `+structType=atomic` definitions: owned as a whole. */
const ATOMIC_STRUCTS = new Set([
  `${META}.LabelSelector`,
  `${META}.OwnerReference`,
  `${CORE}.LocalObjectReference`,
  `${CORE}.ObjectReference`,
  `${CORE}.TypedLocalObjectReference`,
  `${CORE}.TypedObjectReference`,
  `${CORE}.NodeSelector`,
  `${CORE}.NodeSelectorTerm`,
  `${CORE}.TopologySelectorTerm`,
  `${CORE}.ConfigMapKeySelector`,
  `${CORE}.SecretKeySelector`,
  `${CORE}.FileKeySelector`,
  `${CORE}.ObjectFieldSelector`,
  `${CORE}.ResourceFieldSelector`,
  `${CORE}.ConfigMapEnvSource`,
  `${CORE}.SecretEnvSource`,
  `${CORE}.SecretReference`,
  'io.k8s.api.rbac.v1.RoleRef',
]);

/** `+mapType=atomic` maps. */
const ATOMIC_MAPS = new Set([`${CORE}.PodSpec#nodeSelector`, `${CORE}.ServiceSpec#selector`, `${CORE}.ReplicationControllerSpec#selector`]);

/** `+listType` / `+listMapKey` where they differ from what the patch metadata implies. */
const LIST_OVERRIDES: Record<string, { keys: string[] } | 'atomic'> = {
  [`${CORE}.Container#ports`]: { keys: ['containerPort', 'protocol'] },
  [`${CORE}.EphemeralContainer#ports`]: { keys: ['containerPort', 'protocol'] },
  [`${CORE}.ServiceSpec#ports`]: { keys: ['port', 'protocol'] },
  [`${CORE}.PodSpec#topologySpreadConstraints`]: { keys: ['topologyKey', 'whenUnsatisfiable'] },
  [`${CORE}.ResourceRequirements#claims`]: { keys: ['name'] },
  [`${CORE}.PodSpec#readinessGates`]: 'atomic',
  'io.k8s.api.batch.v1.JobStatus#conditions': 'atomic',
  'io.k8s.api.admissionregistration.v1.MutatingWebhook#matchConditions': { keys: ['name'] },
  'io.k8s.api.admissionregistration.v1.ValidatingWebhook#matchConditions': { keys: ['name'] },
};

/** Schema defaults of list-map key fields (a port without protocol is TCP). */
const KEY_DEFAULTS: Readonly<Record<string, unknown>> = { protocol: 'TCP' };

const kindIndex = new Map<string, string>();
for (const [name, def] of Object.entries(BUILTIN_DEFINITIONS)) {
  if (def.k === undefined) continue;
  const [group, version, kind] = def.k;
  kindIndex.set(`${group === '' ? version : `${group}/${version}`}/${kind}`, name);
}

/** Struct types by definition, then by the patch metadata that reached them (shared constants). */
const structs = new Map<string, Map<PatchMeta | undefined, MapType>>();

class BuiltinStruct implements MapType {
  readonly kind = 'map';
  readonly elem = undefined;
  readonly #name: string;
  readonly #meta: PatchMeta | undefined;
  readonly #fields = new Map<string, FieldType | undefined>();

  constructor(name: string, meta: PatchMeta | undefined) {
    this.#name = name;
    this.#meta = meta;
  }

  field(name: string): FieldType | undefined {
    if (this.#fields.has(name)) return this.#fields.get(name);
    const compact = BUILTIN_DEFINITIONS[this.#name]?.p[name];
    const type = compact === undefined ? undefined : fromCompact(compact, this.#meta?.fields?.[name], `${this.#name}#${name}`);
    this.#fields.set(name, type);
    return type;
  }
}

class EntryMap implements MapType {
  readonly kind = 'map';
  readonly elem: FieldType;
  constructor(elem: FieldType) {
    this.elem = elem;
  }
  field(): undefined {
    return undefined;
  }
}

function builtinStruct(name: string, meta: PatchMeta | undefined): FieldType {
  if (ATOMIC_STRUCTS.has(name)) return LEAF;
  if (BUILTIN_DEFINITIONS[name] === undefined) return DEDUCED;
  let byMeta = structs.get(name);
  if (byMeta === undefined) structs.set(name, (byMeta = new Map()));
  let t = byMeta.get(meta);
  if (t === undefined) byMeta.set(meta, (t = new BuiltinStruct(name, meta)));
  return t;
}

/** A compact type of the generated description (`[]#X`, `{}string`, `#X`, `string`...) as a field type. */
function fromCompact(compact: string, meta: PatchMeta | undefined, owner: string): FieldType {
  if (compact.startsWith('[]')) {
    const override = LIST_OVERRIDES[owner];
    const itemCompact = compact.slice(2);
    if (override === 'atomic') return LEAF;
    let keys: string[] | undefined;
    if (override !== undefined) keys = override.keys;
    else if (meta?.strategy?.startsWith('merge') === true) keys = meta.mergeKey === undefined ? undefined : [meta.mergeKey];
    else return LEAF;
    const item = fromCompact(itemCompact, meta?.items, `${owner}[]`);
    if (keys === undefined && item.kind !== 'leaf') return LEAF;
    return { kind: 'list', keys, keyDefaults: keys === undefined ? undefined : KEY_DEFAULTS, item };
  }
  if (compact.startsWith('{}')) {
    if (ATOMIC_MAPS.has(owner)) return LEAF;
    return new EntryMap(fromCompact(compact.slice(2), meta?.map, `${owner}{}`));
  }
  if (compact.startsWith('#')) return builtinStruct(compact.slice(1), meta);
  if (compact === 'any' || compact === 'object') return DEDUCED;
  return LEAF;
}

/** The type of a built-in kind (`apps/v1`, `Deployment`); undefined for kinds the description lacks. */
export function builtinKindType(apiVersion: string, kind: string): MapType | undefined {
  const name = kindIndex.get(`${apiVersion}/${kind}`);
  if (name === undefined) return undefined;
  const t = builtinStruct(name, patchMetaForKind(apiVersion, kind));
  return t.kind === 'map' ? t : undefined;
}

/** ObjectMeta, with its ownerReferences keyed by uid and finalizers a set. */
export function objectMetaType(): MapType {
  return builtinStruct(`${META}.ObjectMeta`, OBJECT_META_PATCH_META) as MapType;
}

// ---- custom resources ----

type Schema = Record<string, unknown>;

function asSchema(v: unknown): Schema | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Schema) : undefined;
}

class SchemaStruct implements MapType {
  readonly kind = 'map';
  readonly elem: FieldType | undefined;
  readonly #properties: Schema;
  readonly #fields = new Map<string, FieldType | undefined>();
  readonly #embedded: 'root' | 'embedded' | undefined;

  constructor(schema: Schema, embedded: 'root' | 'embedded' | undefined) {
    this.#properties = asSchema(schema['properties']) ?? {};
    this.#embedded = embedded;
    const additional = schema['additionalProperties'];
    if (additional === true || schema['x-kubernetes-preserve-unknown-fields'] === true) this.elem = DEDUCED;
    else this.elem = asSchema(additional) === undefined ? undefined : schemaType(asSchema(additional));
  }

  field(name: string): FieldType | undefined {
    if (this.#fields.has(name)) return this.#fields.get(name);
    let t: FieldType | undefined;
    if (this.#embedded === 'root' && name === 'metadata') t = objectMetaType();
    else if (Object.prototype.hasOwnProperty.call(this.#properties, name)) t = schemaType(asSchema(this.#properties[name]));
    else if (this.#embedded !== undefined && name === 'metadata') t = objectMetaType();
    else if (this.#embedded !== undefined && (name === 'apiVersion' || name === 'kind')) t = LEAF;
    this.#fields.set(name, t);
    return t;
  }
}

/** The field type a structural schema node describes. */
export function schemaType(schema: Schema | undefined): FieldType {
  if (schema === undefined) return DEDUCED;
  if (schema['x-kubernetes-int-or-string'] === true) return LEAF;
  const type = schema['type'];
  if (type === 'array') {
    const listType = schema['x-kubernetes-list-type'];
    const itemSchema = asSchema(schema['items']);
    if (listType === 'set') return { kind: 'list', keys: undefined, keyDefaults: undefined, item: LEAF };
    if (listType === 'map') {
      const keys = (Array.isArray(schema['x-kubernetes-list-map-keys']) ? schema['x-kubernetes-list-map-keys'] : []).filter((k): k is string => typeof k === 'string');
      const props = asSchema(itemSchema?.['properties']) ?? {};
      const defaults: Record<string, unknown> = {};
      for (const k of keys) {
        const d = asSchema(props[k])?.['default'];
        if (d !== undefined) defaults[k] = d;
      }
      return { kind: 'list', keys, keyDefaults: defaults, item: schemaType(itemSchema) };
    }
    return LEAF;
  }
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  if (type === 'object' || schema['properties'] !== undefined || schema['additionalProperties'] !== undefined || embedded) {
    if (schema['x-kubernetes-map-type'] === 'atomic') return LEAF;
    return new SchemaStruct(schema, embedded ? 'embedded' : undefined);
  }
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return DEDUCED;
  return LEAF;
}

/** The type of a custom resource from its `openAPIV3Schema` (metadata is ObjectMeta). */
export function customResourceType(schema: Schema | undefined): MapType {
  return new SchemaStruct(schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, 'root');
}
