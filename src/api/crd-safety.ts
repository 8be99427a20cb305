/**
 * What the Kubernetes API server would refuse in a CRD: a walker over an
 * `openAPIV3Schema` (and the CRD around it) that lists every construct
 * `apiextensions.k8s.io/v1` rejects or that makes a schema non-structural
 * (see the Kubernetes docs "Specifying a structural schema"):
 *
 * - keywords JSONSchemaProps does not have (`const`, `patternProperties`,
 *   `$ref`, `definitions`, `if`/`then`/`else`, ...) and v1-forbidden ones
 *   (`uniqueItems: true`, `additionalProperties: false`, `additionalProperties`
 *   next to `properties`, `x-kubernetes-preserve-unknown-fields: false`);
 * - a missing `type` on the root, a property, an array item or a map value,
 *   unless the node is int-or-string or preserves unknown fields;
 * - `type: null` or a list of types (nullable-by-union; use `nullable`);
 * - inside `anyOf`/`allOf`/`oneOf`/`not`: `type`, `description`, `default`,
 *   `additionalProperties`, `nullable`, or properties/items not also declared
 *   outside — except the two int-or-string forms;
 * - a root `metadata` that says more than `type: object` (name/generateName
 *   restrictions aside), or preserves unknown fields;
 * - printer columns with an unknown type or a JSONPath not starting with `.`.
 *
 * Each finding is `<json path>: <problem>`; an empty list means the CRD is safe.
 */

type Node = Record<string, unknown>;

const KNOWN_KEYWORDS = new Set([
  'id', '$schema', 'description', 'type', 'format', 'title', 'default', 'maximum', 'exclusiveMaximum', 'minimum',
  'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'enum',
  'maxProperties', 'minProperties', 'required', 'items', 'allOf', 'oneOf', 'anyOf', 'not', 'properties',
  'additionalProperties', 'nullable', 'externalDocs', 'example',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys', 'x-kubernetes-list-type', 'x-kubernetes-map-type', 'x-kubernetes-validations',
]);
/** Keywords JSONSchemaProps has but v1 CRDs may not use. */
const FORBIDDEN_IN_V1 = new Set(['id', '$schema']);
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const JUNCTORS = ['allOf', 'anyOf', 'oneOf'] as const;
const NOT_IN_JUNCTOR = ['type', 'description', 'default', 'additionalProperties', 'nullable'];

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `anyOf: [{type: integer}, {type: string}]`, exactly. */
function isIntOrStringAnyOf(v: unknown): boolean {
  if (!Array.isArray(v) || v.length !== 2) return false;
  const [a, b] = v as unknown[];
  const only = (n: unknown, t: string) => isNode(n) && n['type'] === t && Object.keys(n).length === 1;
  return only(a, 'integer') && only(b, 'string');
}

/** The two junctor shapes Kubernetes allows on an `x-kubernetes-int-or-string` node. */
function isIntOrStringPattern(node: Node): boolean {
  if (node['x-kubernetes-int-or-string'] !== true) return false;
  if (node['anyOf'] !== undefined) return isIntOrStringAnyOf(node['anyOf']);
  const allOf = node['allOf'];
  return Array.isArray(allOf) && allOf.length > 0 && isNode(allOf[0]) && Object.keys(allOf[0]).length === 1 && isIntOrStringAnyOf(allOf[0]['anyOf']);
}

interface Context {
  /** Inside a logical junctor: structural information must come from outside. */
  inJunctor: boolean;
  /** The outer node's declared properties / items, which junctor branches may only restate. */
  outerProperties: Node | undefined;
  outerHasItems: boolean;
}

function walk(node: unknown, path: string, ctx: Context, out: string[], typeRequired: boolean): void {
  if (!isNode(node)) {
    out.push(`${path}: a schema must be an object`);
    return;
  }
  for (const key of Object.keys(node)) {
    if (!KNOWN_KEYWORDS.has(key)) out.push(`${path}: "${key}" is not allowed in a CRD schema`);
    else if (FORBIDDEN_IN_V1.has(key)) out.push(`${path}: "${key}" is forbidden in apiextensions.k8s.io/v1`);
  }
  const type = node['type'];
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  const preserve = node['x-kubernetes-preserve-unknown-fields'];
  if (Array.isArray(type) || type === 'null') out.push(`${path}: type must be a single non-null type (use nullable: true instead of a union with null)`);
  else if (type !== undefined && (typeof type !== 'string' || !TYPES.has(type))) out.push(`${path}: unknown type ${JSON.stringify(type)}`);
  if (ctx.inJunctor) {
    for (const key of NOT_IN_JUNCTOR) if (key in node) out.push(`${path}: "${key}" must not be set inside anyOf/allOf/oneOf/not`);
  } else if (typeRequired && type === undefined && !intOrString && preserve !== true) {
    out.push(`${path}: type is required in a structural schema`);
  }
  if (intOrString && type !== undefined) out.push(`${path}: x-kubernetes-int-or-string must not be combined with type`);
  if (preserve !== undefined && preserve !== true) out.push(`${path}: x-kubernetes-preserve-unknown-fields must be true or absent`);
  if (node['uniqueItems'] === true) out.push(`${path}: uniqueItems cannot be set to true`);
  if (node['nullable'] !== undefined && typeof node['nullable'] !== 'boolean') out.push(`${path}: nullable must be a boolean`);
  if (Array.isArray(node['enum']) && typeof type === 'string') {
    const jsType = type === 'integer' || type === 'number' ? 'number' : type;
    if (TYPES.has(type) && type !== 'object' && type !== 'array' && node['enum'].some((v) => typeof v !== jsType)) {
      out.push(`${path}: enum values must be of type ${type}`);
    }
  }
  const mapType = node['x-kubernetes-map-type'];
  if (mapType !== undefined && mapType !== 'granular' && mapType !== 'atomic') out.push(`${path}: x-kubernetes-map-type must be granular or atomic`);

  const properties = node['properties'];
  if (properties !== undefined) {
    if (!isNode(properties)) out.push(`${path}.properties: must be an object`);
    else {
      for (const [name, child] of Object.entries(properties)) {
        if (ctx.inJunctor && !(ctx.outerProperties && name in ctx.outerProperties)) {
          out.push(`${path}.properties.${name}: a property inside anyOf/allOf/oneOf/not must also be declared outside`);
        }
        walk(child, `${path}.properties.${name}`, { inJunctor: ctx.inJunctor, outerProperties: undefined, outerHasItems: false }, out, true);
      }
    }
  }
  const additional = node['additionalProperties'];
  if (additional !== undefined) {
    if (additional === false) out.push(`${path}: additionalProperties cannot be set to false`);
    else if (additional === true) out.push(`${path}: additionalProperties: true is not structural (use x-kubernetes-preserve-unknown-fields)`);
    else walk(additional, `${path}.additionalProperties`, { ...ctx, outerProperties: undefined }, out, true);
    if (properties !== undefined) out.push(`${path}: additionalProperties and properties are mutually exclusive`);
  }
  const items = node['items'];
  if (items !== undefined) {
    if (Array.isArray(items)) out.push(`${path}.items: must be a single schema, not a tuple`);
    else {
      if (ctx.inJunctor && !ctx.outerHasItems) out.push(`${path}.items: items inside anyOf/allOf/oneOf/not must also be declared outside`);
      walk(items, `${path}.items`, { inJunctor: ctx.inJunctor, outerProperties: undefined, outerHasItems: false }, out, true);
    }
  } else if (type === 'array' && !ctx.inJunctor) {
    out.push(`${path}: an array must declare items`);
  }
  const junctorCtx: Context = { inJunctor: true, outerProperties: isNode(properties) ? properties : undefined, outerHasItems: items !== undefined };
  const intOrStringPattern = isIntOrStringPattern(node);
  for (const junctor of JUNCTORS) {
    const branches = node[junctor];
    if (branches === undefined) continue;
    if (!Array.isArray(branches)) {
      out.push(`${path}.${junctor}: must be a list of schemas`);
      continue;
    }
    if (intOrStringPattern) continue;
    branches.forEach((branch, i) => walk(branch, `${path}.${junctor}[${i}]`, junctorCtx, out, false));
  }
  if (node['not'] !== undefined) walk(node['not'], `${path}.not`, junctorCtx, out, false);
}

/** Problems of one `openAPIV3Schema` (the root of a version's schema). */
export function crdSchemaViolations(schema: unknown, path = 'openAPIV3Schema'): string[] {
  const out: string[] = [];
  if (!isNode(schema)) return [`${path}: a schema must be an object`];
  if (schema['type'] !== 'object') out.push(`${path}: the root type must be object`);
  const metadata = isNode(schema['properties']) ? schema['properties']['metadata'] : undefined;
  if (metadata !== undefined) {
    if (!isNode(metadata)) out.push(`${path}.properties.metadata: must be an object schema`);
    else {
      if (metadata['x-kubernetes-preserve-unknown-fields'] !== undefined) out.push(`${path}.properties.metadata: must not set x-kubernetes-preserve-unknown-fields`);
      const extra = Object.keys(metadata).filter((k) => k !== 'type' && k !== 'properties' && k !== 'description');
      if (extra.length > 0) out.push(`${path}.properties.metadata: only type (and restrictions of name/generateName) may be specified, found ${extra.join(', ')}`);
      const props = isNode(metadata['properties']) ? Object.keys(metadata['properties']) : [];
      const other = props.filter((p) => p !== 'name' && p !== 'generateName');
      if (other.length > 0) out.push(`${path}.properties.metadata: only name and generateName may be restricted, found ${other.join(', ')}`);
    }
  }
  walk(schema, path, { inJunctor: false, outerProperties: undefined, outerHasItems: false }, out, true);
  return out;
}

const COLUMN_TYPES = new Set(['integer', 'number', 'string', 'boolean', 'date']);

/** Problems of a whole CRD: every version's schema, and its printer columns. */
export function crdViolations(crd: unknown): string[] {
  const out: string[] = [];
  const spec = isNode(crd) && isNode(crd['spec']) ? crd['spec'] : undefined;
  const versions = spec && Array.isArray(spec['versions']) ? spec['versions'] : [];
  if (versions.length === 0) out.push('spec.versions: at least one version is required');
  versions.forEach((v, i) => {
    const version = isNode(v) ? v : {};
    const schema = isNode(version['schema']) ? version['schema']['openAPIV3Schema'] : undefined;
    out.push(...crdSchemaViolations(schema, `spec.versions[${i}].schema.openAPIV3Schema`));
    const columns = Array.isArray(version['additionalPrinterColumns']) ? version['additionalPrinterColumns'] : [];
    const names = new Set<string>();
    columns.forEach((c, j) => {
      const column = isNode(c) ? c : {};
      const where = `spec.versions[${i}].additionalPrinterColumns[${j}]`;
      if (typeof column['name'] !== 'string' || column['name'].length === 0) out.push(`${where}.name: required`);
      else if (names.has(column['name'])) out.push(`${where}.name: duplicate column ${column['name']}`);
      else names.add(column['name']);
      if (!COLUMN_TYPES.has(column['type'] as string)) out.push(`${where}.type: must be one of integer, number, string, boolean, date`);
      if (typeof column['jsonPath'] !== 'string' || !column['jsonPath'].startsWith('.')) out.push(`${where}.jsonPath: must start with "."`);
    });
  });
  const storage = versions.filter((v) => isNode(v) && v['storage'] === true);
  if (versions.length > 0 && storage.length !== 1) out.push('spec.versions: exactly one version must be the storage version');
  return out;
}
