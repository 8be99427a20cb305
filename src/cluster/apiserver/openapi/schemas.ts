/**
 * OpenAPI schemas of what the server serves, from two sources:
 *
 * - built-in kinds: the compact description generated from the Kubernetes
 *   API (builtin-schemas.generated.ts) expanded into schemas, with the
 *   strategic-merge extensions kubectl reads to compute patches
 *   (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`) laid
 *   over from the same patch metadata the server merges with
 *   (k8s/patch-meta.ts), and `x-kubernetes-group-version-kind` on kinds;
 * - custom resources: each served CRD version's `openAPIV3Schema`, with
 *   `metadata` pointing at ObjectMeta and apiVersion/kind described.
 * References are spelled for OpenAPI v3 (`allOf: [{$ref: '#/components/schemas/X'}]`,
 * upstream's style, which kubectl's patch code resolves) or v2
 * (`$ref: '#/definitions/X'`). Start at `SchemaCatalog`.
 */
import { asArray, asRecord, asString } from '../../../k8s/raw-json.ts';
import { patchMetaForKind } from '../../../k8s/strategic-merge.ts';
import type { PatchMeta } from '../../../k8s/strategic-merge.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import { BUILTIN_DEFINITIONS } from './builtin-schemas.generated.ts';

export type OpenApiVersion = 'v2' | 'v3';
export type SchemaObject = Record<string, unknown>;

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/** Definitions every document may need beyond the kinds: what operations refer to. */
const EXTRA_DEFINITIONS: Record<string, SchemaObject> = {
  [`${META}.Patch`]: { type: 'object', description: 'A patch document: JSON Patch, merge patch, strategic merge patch or an apply configuration.' },
  [`${META}.Status`]: {
    type: 'object',
    description: 'The result of an operation that does not return an object.',
    properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, code: { type: 'integer', format: 'int32' }, message: { type: 'string' }, reason: { type: 'string' }, status: { type: 'string' }, details: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  },
  [`${META}.ListMeta`]: { type: 'object', properties: { continue: { type: 'string' }, remainingItemCount: { type: 'integer', format: 'int64' }, resourceVersion: { type: 'string' }, selfLink: { type: 'string' } } },
};

/** Fields that must be present, by definition (kubectl explain marks them `-required-`). */
const REQUIRED: Record<string, string[]> = {
  'io.k8s.api.core.v1.PodSpec': ['containers'],
  'io.k8s.api.core.v1.Container': ['name'],
  'io.k8s.api.core.v1.ContainerPort': ['containerPort'],
  'io.k8s.api.core.v1.EnvVar': ['name'],
  'io.k8s.api.core.v1.Volume': ['name'],
  'io.k8s.api.core.v1.VolumeMount': ['name', 'mountPath'],
  'io.k8s.api.core.v1.ServicePort': ['port'],
  'io.k8s.api.apps.v1.DeploymentSpec': ['selector', 'template'],
  'io.k8s.api.apps.v1.ReplicaSetSpec': ['selector'],
  'io.k8s.api.apps.v1.StatefulSetSpec': ['selector', 'template'],
  'io.k8s.api.batch.v1.JobSpec': ['template'],
  'io.k8s.api.coordination.v1.LeaseSpec': [],
  [`${META}.LabelSelectorRequirement`]: ['key', 'operator'],
  [`${META}.OwnerReference`]: ['apiVersion', 'kind', 'name', 'uid'],
  'io.k8s.api.scheduling.v1.PriorityClass': ['value'],
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec': ['group', 'names', 'scope', 'versions'],
};

/** Upstream's definition name of a CRD kind: the group reversed (`apps.kruise.io` → `io.kruise.apps`). */
export function customResourceDefinitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

function ref(name: string, version: OpenApiVersion): SchemaObject {
  return version === 'v3' ? { allOf: [{ $ref: `#/components/schemas/${name}` }] } : { $ref: `#/definitions/${name}` };
}

/** A compact type (see the generated file) as a schema; collects the definitions it refers to. */
function expandType(t: string, version: OpenApiVersion, refs: Set<string>): SchemaObject {
  if (t.startsWith('[]')) return { type: 'array', items: expandType(t.slice(2), version, refs) };
  if (t.startsWith('{}')) return { type: 'object', additionalProperties: expandType(t.slice(2), version, refs) };
  if (t.startsWith('#')) {
    refs.add(t.slice(1));
    return { ...(version === 'v3' ? { default: {} } : {}), ...ref(t.slice(1), version) };
  }
  switch (t) {
    case 'string/byte':
      return { type: 'string', format: 'byte' };
    case 'string/date-time':
      return { type: 'string', format: 'date-time' };
    case 'integer/int32':
      return { type: 'integer', format: 'int32' };
    case 'integer/int64':
      return { type: 'integer', format: 'int64' };
    case 'number/double':
      return { type: 'number', format: 'double' };
    case 'int-or-string':
      // Swagger 2.0 has no anyOf: upstream's v2 spells IntOrString as a string of format int-or-string.
      return version === 'v3' ? { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } : { type: 'string', format: 'int-or-string' };
    case 'any':
      return version === 'v3' ? { 'x-kubernetes-preserve-unknown-fields': true } : { type: 'object' };
    case 'object':
      return { type: 'object' };
    default:
      return { type: t };
  }
}

/** (definition, field) → strategic-merge extensions, collected from the patch metadata of every kind. */
function patchExtensions(): Map<string, SchemaObject> {
  const out = new Map<string, SchemaObject>();
  const walk = (defName: string, meta: PatchMeta | undefined, seen: Set<string>): void => {
    const def = BUILTIN_DEFINITIONS[defName];
    if (def === undefined || meta?.fields === undefined) return;
    for (const [field, fm] of Object.entries(meta.fields)) {
      const t = def.p[field];
      if (t === undefined) continue;
      const ext: SchemaObject = {};
      if (fm.strategy !== undefined) ext['x-kubernetes-patch-strategy'] = fm.strategy;
      if (fm.mergeKey !== undefined) ext['x-kubernetes-patch-merge-key'] = fm.mergeKey;
      if (Object.keys(ext).length > 0) out.set(`${defName}#${field}`, ext);
      const key = `${defName}#${field}`;
      if (seen.has(key)) continue;
      const next = new Set(seen).add(key);
      if (t.startsWith('#')) walk(t.slice(1), fm, next);
      else if (t.startsWith('[]#')) walk(t.slice(3), fm.items ?? fm, next);
      else if (t.startsWith('{}#')) walk(t.slice(3), fm.map ?? fm, next);
    }
  };
  for (const [name, def] of Object.entries(BUILTIN_DEFINITIONS)) {
    if (def.k === undefined) continue;
    const [group, version, kind] = def.k;
    walk(name, patchMetaForKind(group === '' ? version : `${group}/${version}`, kind), new Set());
  }
  return out;
}

/**
 * What Swagger 2.0 (and kubectl's v2 model parser) can take of a CRD's structural schema, as
 * upstream's `ToStructuralOpenAPIV2` cuts it: no allOf/anyOf/oneOf/not; a nullable or
 * unknown-fields-preserving node loses its items and properties (a nullable one its type too);
 * an array left without items loses its type.
 */
export function toStructuralV2(schema: SchemaObject): SchemaObject {
  const out: SchemaObject = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'allOf' || k === 'anyOf' || k === 'oneOf' || k === 'not' || k === 'nullable') continue;
    if (k === 'properties' && asRecord(v) !== undefined) out[k] = Object.fromEntries(Object.entries(asRecord(v) ?? {}).map(([p, s]) => [p, toStructuralV2(asRecord(s) ?? {})]));
    else if ((k === 'items' || k === 'additionalProperties') && asRecord(v) !== undefined) out[k] = toStructuralV2(asRecord(v) ?? {});
    else out[k] = v;
  }
  if (schema['nullable'] === true) {
    delete out['type'];
    delete out['items'];
    delete out['properties'];
  }
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) {
    delete out['items'];
    delete out['properties'];
  }
  if (out['type'] === 'array' && out['items'] === undefined) delete out['type'];
  // A nullable field is not required any more in v2 (it may be absent where null was allowed).
  const props = asRecord(schema['properties']);
  const required = asArray(out['required']);
  if (props !== undefined && required !== undefined) {
    const kept = required.filter((f) => asRecord(props[String(f)])?.['nullable'] !== true);
    if (kept.length > 0) out['required'] = kept;
    else delete out['required'];
  }
  return out;
}

export interface GroupVersionKindRef {
  group: string;
  version: string;
  kind: string;
}

/** Schemas by definition name, in either OpenAPI version, plus which definition serves each kind. */
export class SchemaCatalog {
  readonly #extensions = patchExtensions();
  readonly #custom = new Map<string, { schema: SchemaObject; gvk: GroupVersionKindRef }>();
  readonly #kinds = new Map<string, string>();

  constructor() {
    for (const [name, def] of Object.entries(BUILTIN_DEFINITIONS)) {
      if (def.k !== undefined) this.#kinds.set(def.k.join('/'), name);
    }
  }

  /** The definition name of a kind, if it has a schema. */
  definitionOf(gvk: GroupVersionKindRef): string | undefined {
    return this.#kinds.get(`${gvk.group}/${gvk.version}/${gvk.kind}`);
  }

  /** Replaces the custom resource schemas with those of the given CRDs (served versions only). */
  setCustomResources(crds: readonly KubeObject[]): void {
    for (const [key, name] of [...this.#kinds]) if (this.#custom.has(name)) this.#kinds.delete(key);
    this.#custom.clear();
    for (const crd of crds) {
      const spec = asRecord(crd['spec']) ?? {};
      const group = asString(spec['group']) ?? '';
      const kind = asString(asRecord(spec['names'])?.['kind']) ?? '';
      for (const v of asArray(spec['versions']) ?? []) {
        const version = asRecord(v) ?? {};
        const vname = asString(version['name']) ?? '';
        if (version['served'] !== true || vname === '') continue;
        const schema = asRecord(asRecord(version['schema'])?.['openAPIV3Schema']) ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
        const name = customResourceDefinitionName(group, vname, kind);
        this.#custom.set(name, { schema, gvk: { group, version: vname, kind } });
        this.#kinds.set(`${group}/${vname}/${kind}`, name);
      }
    }
  }

  /** The schema of a definition, and the names it refers to. */
  schema(name: string, version: OpenApiVersion): { schema: SchemaObject; refs: Set<string> } | undefined {
    const refs = new Set<string>();
    const extra = EXTRA_DEFINITIONS[name];
    if (extra !== undefined) return { schema: structuredClone(extra), refs };
    const custom = this.#custom.get(name);
    if (custom !== undefined) return { schema: this.#customSchema(custom.schema, custom.gvk, version, refs), refs };
    const def = BUILTIN_DEFINITIONS[name];
    if (def === undefined) return undefined;
    const properties: Record<string, SchemaObject> = {};
    for (const [field, t] of Object.entries(def.p)) {
      const prop = expandType(t, version, refs);
      const ext = this.#extensions.get(`${name}#${field}`);
      properties[field] = ext === undefined ? prop : { ...prop, ...ext };
    }
    const schema: SchemaObject = { type: 'object', properties };
    const required = REQUIRED[name];
    if (required !== undefined && required.length > 0) schema['required'] = required;
    if (def.k !== undefined) schema['x-kubernetes-group-version-kind'] = [{ group: def.k[0], kind: def.k[2], version: def.k[1] }];
    return { schema, refs };
  }

  #customSchema(schema: SchemaObject, gvk: GroupVersionKindRef, version: OpenApiVersion, refs: Set<string>): SchemaObject {
    const out = version === 'v3' ? structuredClone(schema) : toStructuralV2(schema);
    const props = { ...(asRecord(out['properties']) ?? {}) };
    props['apiVersion'] = { type: 'string', description: 'The versioned schema of this representation of an object.' };
    props['kind'] = { type: 'string', description: 'The REST resource this object represents.' };
    props['metadata'] = { ...ref(`${META}.ObjectMeta`, version), description: 'Standard object metadata.' };
    refs.add(`${META}.ObjectMeta`);
    out['properties'] = props;
    out['type'] = 'object';
    out['x-kubernetes-group-version-kind'] = [{ group: gvk.group, kind: gvk.kind, version: gvk.version }];
    return out;
  }

  /** The definitions `roots` need, transitively: the `components.schemas` / `definitions` of a document. */
  closure(roots: Iterable<string>, version: OpenApiVersion): Record<string, SchemaObject> {
    const out: Record<string, SchemaObject> = {};
    const queue = [...roots];
    while (queue.length > 0) {
      const name = queue.shift() as string;
      if (out[name] !== undefined) continue;
      const s = this.schema(name, version);
      if (s === undefined) continue;
      out[name] = s.schema;
      for (const r of s.refs) if (out[r] === undefined) queue.push(r);
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
}
