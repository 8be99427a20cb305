/**
 * Validation of a CustomResourceDefinition object itself
 * (apiextensions-apiserver pkg/apis/apiextensions/validation), answered as a
 * 422 with upstream's field paths and texts:
 *
 * - `metadata.name` is `<plural>.<group>`; `spec.group` a DNS subdomain with a dot;
 * - names: plural, singular, kind, listKind present and DNS-1035 labels
 *   (kind/listKind may be mixed case), kind ≠ listKind, short names and
 *   categories DNS-1035 labels;
 * - `spec.scope` Cluster or Namespaced; `spec.preserveUnknownFields` not true;
 *   `spec.conversion.strategy` None or Webhook (Webhook needs a clientConfig);
 * - versions: at least one, unique DNS-1035 names, exactly one storage
 *   version, at least one served; a structural schema each
 *   (structural-validation.ts); subresources: `status` an empty object,
 *   `scale` paths under `.spec` / `.status`; printer columns: name, a type in
 *   integer/number/string/boolean/date, a known format, a parsable JSONPath;
 * - on update: group and scope immutable, every `status.storedVersions`
 *   entry still listed in `spec.versions`.
 * Skipped: CEL rules, conversion webhooks (accepted, but every version is
 * served as the stored one — no conversion is performed), selectable fields.
 */
import { duplicate, forbidden, invalid, notSupported, required, root, type FieldError, type FieldPath } from '../field-errors.ts';
import { parseJsonPath } from '../jsonpath.ts';
import { isDNS1035Label, isDNS1123Subdomain } from '../name-formats.ts';
import { asArray, asRecord, asString } from '../raw-json.ts';
import type { KubeObject } from '../types.ts';
import { validateStructuralSchema } from './structural-validation.ts';

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

function validateNames(names: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const plural = asString(names['plural']) ?? '';
  const singular = asString(names['singular']) ?? '';
  const kind = asString(names['kind']) ?? '';
  const listKind = asString(names['listKind']) ?? '';
  if (plural === '') errs.push(required(path.child('plural')));
  else if (isDNS1035Label(plural).length > 0) errs.push(invalid(path.child('plural'), plural, isDNS1035Label(plural).join(',')));
  if (singular === '') errs.push(required(path.child('singular')));
  else if (isDNS1035Label(singular).length > 0) errs.push(invalid(path.child('singular'), singular, isDNS1035Label(singular).join(',')));
  if (kind === '') errs.push(required(path.child('kind')));
  else if (isDNS1035Label(kind.toLowerCase()).length > 0) {
    errs.push(invalid(path.child('kind'), kind, `may have mixed case, but should otherwise match: ${isDNS1035Label(kind.toLowerCase()).join(',')}`));
  }
  if (listKind === '') errs.push(required(path.child('listKind')));
  else if (isDNS1035Label(listKind.toLowerCase()).length > 0) {
    errs.push(invalid(path.child('listKind'), listKind, `may have mixed case, but should otherwise match: ${isDNS1035Label(listKind.toLowerCase()).join(',')}`));
  }
  if (kind !== '' && kind === listKind) errs.push(invalid(path.child('listKind'), listKind, 'kind and listKind may not be the same'));
  const shortNames = asArray(names['shortNames']) ?? [];
  const seen = new Set<string>();
  shortNames.forEach((sn, i) => {
    const s = asString(sn) ?? '';
    const msgs = isDNS1035Label(s);
    if (msgs.length > 0) errs.push(invalid(path.child('shortNames').index(i), sn, msgs.join(',')));
    if (seen.has(s)) errs.push(duplicate(path.child('shortNames').index(i), s));
    seen.add(s);
  });
  (asArray(names['categories']) ?? []).forEach((c, i) => {
    const msgs = isDNS1035Label(asString(c) ?? '');
    if (msgs.length > 0) errs.push(invalid(path.child('categories').index(i), c, msgs.join(',')));
  });
  return errs;
}

/** A scale path: `.spec.x` (or `.status.x`) made of plain field names. */
function scalePathError(value: string, prefixes: string[]): boolean {
  if (!/^(\.[A-Za-z0-9_-]+)+$/.test(value)) return true;
  return !prefixes.some((p) => value.startsWith(`${p}.`));
}

function validateSubresources(subs: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const status = subs['status'];
  if (status !== undefined && status !== null && (asRecord(status) === undefined || Object.keys(asRecord(status) ?? {}).length > 0)) {
    errs.push(invalid(path.child('status'), status, 'must be an empty object'));
  }
  const scale = asRecord(subs['scale']);
  if (subs['scale'] !== undefined && subs['scale'] !== null && scale === undefined) errs.push(invalid(path.child('scale'), subs['scale'], 'must be an object'));
  if (scale !== undefined) {
    const sp = path.child('scale');
    const spec = asString(scale['specReplicasPath']) ?? '';
    if (spec === '') errs.push(required(sp.child('specReplicasPath')));
    else if (scalePathError(spec, ['.spec'])) errs.push(invalid(sp.child('specReplicasPath'), spec, 'should be a json path under .spec'));
    const statusPath = asString(scale['statusReplicasPath']) ?? '';
    if (statusPath === '') errs.push(required(sp.child('statusReplicasPath')));
    else if (scalePathError(statusPath, ['.status'])) errs.push(invalid(sp.child('statusReplicasPath'), statusPath, 'should be a json path under .status'));
    const selector = asString(scale['labelSelectorPath']);
    if (selector !== undefined && selector !== '' && scalePathError(selector, ['.spec', '.status'])) {
      errs.push(invalid(sp.child('labelSelectorPath'), selector, 'should be a json path under either .spec or .status'));
    }
  }
  return errs;
}

function validateColumns(columns: unknown[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  columns.forEach((c, i) => {
    const col = asRecord(c) ?? {};
    const cp = path.index(i);
    if ((asString(col['name']) ?? '') === '') errs.push(required(cp.child('name')));
    const type = asString(col['type']) ?? '';
    if (type === '') errs.push(required(cp.child('type'), `must be one of ${COLUMN_TYPES.join(', ')}`));
    else if (!COLUMN_TYPES.includes(type)) errs.push(notSupported(cp.child('type'), type, COLUMN_TYPES));
    const format = asString(col['format']) ?? '';
    if (format !== '' && !COLUMN_FORMATS.includes(format)) errs.push(notSupported(cp.child('format'), format, COLUMN_FORMATS));
    const jsonPath = asString(col['jsonPath']) ?? '';
    if (jsonPath === '') errs.push(required(cp.child('jsonPath')));
    else if (!jsonPath.startsWith('.') || !parseJsonPath(`{${jsonPath}}`).ok) errs.push(invalid(cp.child('jsonPath'), jsonPath, 'must be a simple json path starting with .'));
  });
  return errs;
}

function validateVersions(versions: unknown[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (versions.length === 0) {
    errs.push(required(path, 'must have exactly one version marked as storage version'));
    return errs;
  }
  const seen = new Set<string>();
  let storage = 0;
  let served = 0;
  let unique = true;
  versions.forEach((v, i) => {
    const version = asRecord(v) ?? {};
    const vp = path.index(i);
    const name = asString(version['name']) ?? '';
    if (name === '') errs.push(required(vp.child('name')));
    else for (const msg of isDNS1035Label(name)) errs.push(invalid(vp.child('name'), name, msg));
    if (seen.has(name)) unique = false;
    seen.add(name);
    if (version['storage'] === true) storage++;
    if (version['served'] === true) served++;
    const schema = asRecord(version['schema']);
    const open = schema?.['openAPIV3Schema'];
    if (open === undefined || open === null) errs.push(required(vp.child('schema', 'openAPIV3Schema'), 'schemas are required'));
    else errs.push(...validateStructuralSchema(open, vp.child('schema', 'openAPIV3Schema')));
    const subs = asRecord(version['subresources']);
    if (subs !== undefined) errs.push(...validateSubresources(subs, vp.child('subresources')));
    const cols = asArray(version['additionalPrinterColumns']);
    if (cols !== undefined) errs.push(...validateColumns(cols, vp.child('additionalPrinterColumns')));
  });
  if (!unique) errs.push(invalid(path, versions, 'must contain unique version names'));
  if (storage !== 1) errs.push(invalid(path, versions, 'must have exactly one version marked as storage version'));
  if (served === 0) errs.push(invalid(path, versions, 'must serve at least one version'));
  return errs;
}

/** Everything upstream checks on create. */
export function validateCustomResourceDefinition(crd: KubeObject): FieldError[] {
  const spec = asRecord(crd['spec']) ?? {};
  const path = root('spec');
  const errs: FieldError[] = [];
  const group = asString(spec['group']) ?? '';
  if (group === '') errs.push(required(path.child('group')));
  else if (isDNS1123Subdomain(group).length > 0 || !group.includes('.')) errs.push(invalid(path.child('group'), group, 'should be a domain with at least one dot'));
  const names = asRecord(spec['names']) ?? {};
  const plural = asString(names['plural']) ?? '';
  const name = asString(crd.metadata?.name) ?? '';
  if (plural !== '' && group !== '' && name !== `${plural}.${group}`) errs.push(invalid(root('metadata', 'name'), name, 'must be spec.names.plural+"."+spec.group'));
  const scope = asString(spec['scope']) ?? '';
  if (scope === '') errs.push(required(path.child('scope')));
  else if (!['Namespaced', 'Cluster'].includes(scope)) errs.push(notSupported(path.child('scope'), scope, ['Cluster', 'Namespaced']));
  errs.push(...validateNames(names, path.child('names')));
  errs.push(...validateVersions(asArray(spec['versions']) ?? [], path.child('versions')));
  if (spec['preserveUnknownFields'] === true) {
    errs.push(invalid(path.child('preserveUnknownFields'), true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  const conversion = asRecord(spec['conversion']);
  const strategy = asString(conversion?.['strategy']) ?? 'None';
  if (!['None', 'Webhook'].includes(strategy)) errs.push(notSupported(path.child('conversion', 'strategy'), strategy, ['None', 'Webhook']));
  if (strategy === 'Webhook' && asRecord(asRecord(conversion?.['webhook'])?.['clientConfig']) === undefined) {
    errs.push(required(path.child('conversion', 'webhook'), 'required when strategy is set to Webhook'));
  }
  if (strategy === 'None' && conversion?.['webhook'] !== undefined) errs.push(forbidden(path.child('conversion', 'webhook'), 'should not be set when strategy is not set to Webhook'));
  return errs;
}

/** The create checks plus what may not change and what must stay listed. */
export function validateCustomResourceDefinitionUpdate(crd: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateCustomResourceDefinition(crd);
  const spec = asRecord(crd['spec']) ?? {};
  const prev = asRecord(old['spec']) ?? {};
  if (spec['group'] !== prev['group']) errs.push(invalid(root('spec', 'group'), spec['group'] ?? '', 'field is immutable'));
  if (spec['scope'] !== prev['scope']) errs.push(invalid(root('spec', 'scope'), spec['scope'] ?? '', 'field is immutable'));
  errs.push(...validateStoredVersions(crd));
  return errs;
}

/** `status.storedVersions`: every entry must still be a version of the CRD. */
export function validateStoredVersions(crd: KubeObject): FieldError[] {
  const versions = new Set((asArray(asRecord(crd['spec'])?.['versions']) ?? []).map((v) => asString(asRecord(v)?.['name']) ?? ''));
  const errs: FieldError[] = [];
  (asArray(asRecord(crd.status)?.['storedVersions']) ?? []).forEach((v, i) => {
    if (!versions.has(asString(v) ?? '')) errs.push(invalid(root('status', 'storedVersions').index(i), v, 'must appear in spec.versions'));
  });
  return errs;
}
