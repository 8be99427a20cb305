/**
 * Objects embedded in a custom resource (`x-kubernetes-embedded-resource:
 * true`, e.g. a pod template kept whole) must look like Kubernetes objects
 * (apiextensions-apiserver pkg/apiserver/schema/objectmeta): `apiVersion` and
 * `kind` present and well formed (a kind is a DNS-1035 label in any case),
 * and their `metadata` — when given — has valid labels, annotations and name.
 * Errors carry the embedded object's path (`spec.template.kind: Required value:
 * must not be empty`).
 */
import { invalid, required, root, type FieldError, type FieldPath } from '../field-errors.ts';
import { validateAnnotations, validateLabels } from '../meta-validation.ts';
import { isDNS1035Label, isDNS1123Subdomain } from '../name-formats.ts';
import { asRecord } from '../raw-json.ts';
import { additionalPropertiesSchema, isEmbeddedResource, itemsSchema, properties, type Schema } from './structural.ts';

function validateEmbedded(obj: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!('apiVersion' in obj)) errs.push(required(path.child('apiVersion'), 'must not be empty'));
  else if (typeof obj['apiVersion'] !== 'string') errs.push(invalid(path.child('apiVersion'), obj['apiVersion'], 'must be a string'));
  else if (obj['apiVersion'] === '') errs.push(invalid(path.child('apiVersion'), '', 'must not be empty'));
  else if (obj['apiVersion'].split('/').length > 2) errs.push(invalid(path.child('apiVersion'), obj['apiVersion'], `unexpected GroupVersion string: ${obj['apiVersion']}`));
  if (!('kind' in obj)) errs.push(required(path.child('kind'), 'must not be empty'));
  else if (typeof obj['kind'] !== 'string') errs.push(invalid(path.child('kind'), obj['kind'], 'must be a string'));
  else if (obj['kind'] === '') errs.push(invalid(path.child('kind'), '', 'must not be empty'));
  else {
    const msgs = isDNS1035Label(obj['kind'].toLowerCase());
    if (msgs.length > 0) errs.push(invalid(path.child('kind'), obj['kind'], `may have mixed case, but should otherwise match: ${msgs.join(',')}`));
  }
  const meta = asRecord(obj['metadata']);
  if (meta !== undefined) {
    const mp = path.child('metadata');
    const name = meta['name'];
    if (typeof name === 'string' && name !== '') for (const msg of isDNS1123Subdomain(name)) errs.push(invalid(mp.child('name'), name, msg));
    errs.push(...validateLabels(meta['labels'], mp.child('labels')));
    errs.push(...validateAnnotations(meta['annotations'], mp.child('annotations')));
  }
  return errs;
}

function walk(value: unknown, schema: Schema | undefined, path: FieldPath | undefined, errs: FieldError[]): void {
  if (schema === undefined) return;
  if (Array.isArray(value)) {
    const items = itemsSchema(schema);
    value.forEach((el, i) => walk(el, items, path === undefined ? root('').index(i) : path.index(i), errs));
    return;
  }
  const rec = asRecord(value);
  if (rec === undefined) return;
  if (path !== undefined && isEmbeddedResource(schema)) errs.push(...validateEmbedded(rec, path));
  const props = properties(schema);
  const additional = additionalPropertiesSchema(schema);
  for (const key of Object.keys(rec)) {
    if (path === undefined && (key === 'metadata' || key === 'apiVersion' || key === 'kind')) continue;
    const child = props[key] ?? (additional !== undefined && additional !== true ? additional : undefined);
    walk(rec[key], child, path === undefined ? root(key) : path.child(key), errs);
  }
}

/** Field errors of the embedded objects of a custom resource. */
export function validateEmbeddedResources(obj: unknown, schema: Schema | undefined): FieldError[] {
  const errs: FieldError[] = [];
  walk(obj, schema, undefined, errs);
  return errs;
}
