/**
 * Strategies of the core/v1 kinds without pod templates: Namespace, Node,
 * ConfigMap, Secret, ServiceAccount, Endpoints and Event
 * (k8s.io/kubernetes/pkg/registry/core/*; defaults from pkg/apis/core/v1).
 *
 * Namespaces: the `kubernetes.io/metadata.name` label is a default (it can
 * never be removed), `spec.finalizers` starts as `[kubernetes]`, status phase
 * Active; a delete turns them Terminating and they stay until the finalizers
 * are gone (namespace-lifecycle.ts). Secrets: `stringData` is folded into
 * base64 `data` on write, as the v1 → internal conversion does.
 */
import { forbidden, invalid, root, tooLong, type FieldError } from '../../../k8s/field-errors.ts';
import { isConfigMapKey } from '../../../k8s/name-formats.ts';
import { asArray, asRecord, asString } from '../../../k8s/raw-json.ts';
import { validateTaintEffect } from '../../../k8s/scheduling-validation.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import { metaOf } from '../object-meta.ts';
import type { ResourceStrategy } from '../resource-def.ts';
import { immutable, setIfAbsent, specOf, strategy } from './base.ts';

export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';
export const NAMESPACE_FINALIZER = 'kubernetes';

// ---- Namespace ----

function namespaceFinalizers(obj: KubeObject): string[] {
  return (asArray(asRecord(obj['spec'])?.['finalizers']) ?? []).filter((f): f is string => typeof f === 'string');
}

export function namespaceStrategy(): ResourceStrategy {
  return strategy({
    applyDefaults: (obj) => {
      const meta = metaOf(obj);
      const name = asString(meta.name) ?? '';
      if (name !== '') meta.labels = { ...(asRecord(meta.labels) as Record<string, string> | undefined), [NAMESPACE_NAME_LABEL]: name };
    },
    resetStatusOnCreate: true,
    prepareForCreate: (obj) => {
      const spec = specOf(obj);
      const finalizers = namespaceFinalizers(obj);
      if (!finalizers.includes(NAMESPACE_FINALIZER)) finalizers.push(NAMESPACE_FINALIZER);
      spec['finalizers'] = finalizers;
      obj.status = { phase: 'Active' };
    },
    prepareForUpdate: (obj, old) => {
      // spec.finalizers only change through the /finalize subresource.
      const spec = specOf(obj);
      const prev = asRecord(old['spec'])?.['finalizers'];
      if (prev === undefined) delete spec['finalizers'];
      else spec['finalizers'] = prev;
    },
    prepareForDelete: (obj) => {
      const status = asRecord(obj.status) ?? {};
      status['phase'] = 'Terminating';
      obj.status = status;
    },
    deletionPending: (obj) => namespaceFinalizers(obj).length > 0,
    selectableFields: (obj) => ({ 'status.phase': asString(asRecord(obj.status)?.['phase']) ?? '' }),
  });
}

// ---- Node ----

export function nodeStrategy(): ResourceStrategy {
  const validateTaints = (obj: KubeObject): FieldError[] => {
    const errs: FieldError[] = [];
    (asArray(asRecord(obj['spec'])?.['taints']) ?? []).forEach((t, i) => {
      const taint = asRecord(t) ?? {};
      const path = root('spec', 'taints').index(i);
      if ((asString(taint['key']) ?? '') === '') errs.push({ type: 'FieldValueRequired', field: path.child('key').toString(), badValue: '', detail: '' });
      errs.push(...validateTaintEffect(asString(taint['effect']) ?? '', false, path.child('effect')));
    });
    return errs;
  };
  return strategy({
    validate: validateTaints,
    validateUpdate: validateTaints,
    selectableFields: (obj) => ({ 'spec.unschedulable': asRecord(obj['spec'])?.['unschedulable'] === true ? 'true' : 'false' }),
  });
}

// ---- ConfigMap and Secret ----

const MAX_DATA_BYTES = 1024 * 1024;

function validateDataKeys(obj: KubeObject, fields: string[]): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  const seen = new Set<string>();
  for (const field of fields) {
    for (const [key, value] of Object.entries(asRecord(obj[field]) ?? {})) {
      for (const msg of isConfigMapKey(key)) errs.push(invalid(root(field), key, msg));
      if (seen.has(key)) errs.push(invalid(root(field), key, 'duplicate of key present in ' + (field === 'data' ? 'binaryData' : 'data')));
      seen.add(key);
      total += typeof value === 'string' ? Buffer.byteLength(value) : 0;
    }
  }
  if (total > MAX_DATA_BYTES) errs.push(tooLong(root(''), '', MAX_DATA_BYTES));
  return errs;
}

function validateImmutableData(obj: KubeObject, old: KubeObject, fields: string[]): FieldError[] {
  if (old['immutable'] !== true) return [];
  const errs: FieldError[] = [];
  if (obj['immutable'] !== true) errs.push(forbidden(root('immutable'), 'field is immutable when `immutable` is set'));
  for (const field of fields) {
    if (JSON.stringify(obj[field] ?? {}) !== JSON.stringify(old[field] ?? {})) errs.push(forbidden(root(field), 'field is immutable when `immutable` is set'));
  }
  return errs;
}

export function configMapStrategy(): ResourceStrategy {
  return strategy({
    validate: (obj) => validateDataKeys(obj, ['data', 'binaryData']),
    validateUpdate: (obj, old) => [...validateDataKeys(obj, ['data', 'binaryData']), ...validateImmutableData(obj, old, ['data', 'binaryData'])],
  });
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Go's base64 decode error for a []byte field, or undefined when every value is valid standard base64. */
function secretDecodeError(obj: KubeObject): string | undefined {
  for (const value of Object.values(asRecord(obj['data']) ?? {})) {
    if (value === null) continue;
    if (typeof value !== 'string') return 'json: cannot unmarshal number into Go struct field Secret.data of type []uint8';
    if (value.length % 4 !== 0 || !BASE64.test(value)) {
      const bad = [...value].findIndex((c) => !/[A-Za-z0-9+/=]/.test(c));
      return `illegal base64 data at input byte ${bad >= 0 ? bad : value.length - (value.length % 4)}`;
    }
  }
  return undefined;
}

export function secretStrategy(): ResourceStrategy {
  return strategy({
    applyDefaults: (obj) => {
      setIfAbsent(obj, 'type', 'Opaque');
      const stringData = asRecord(obj['stringData']);
      if (stringData !== undefined) {
        const data = asRecord(obj['data']) ?? {};
        for (const [k, v] of Object.entries(stringData)) if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
        obj['data'] = data;
      }
      delete obj['stringData'];
    },
    decodeError: secretDecodeError,
    validate: (obj) => validateDataKeys(obj, ['data']),
    validateUpdate: (obj, old) => [
      ...validateDataKeys(obj, ['data']),
      ...immutable(obj['type'], old['type'], root('type')),
      ...validateImmutableData(obj, old, ['data']),
    ],
    selectableFields: (obj) => ({ type: asString(obj['type']) ?? '' }),
  });
}

// ---- ServiceAccount, Endpoints ----

export function serviceAccountStrategy(): ResourceStrategy {
  return strategy({ returnDeletedObject: true });
}

export function endpointsStrategy(): ResourceStrategy {
  return strategy({ allowCreateOnUpdate: true });
}

// ---- Event (core/v1) ----

export function eventFields(obj: KubeObject): Record<string, string> {
  const involved = asRecord(obj['involvedObject']) ?? {};
  const source = asRecord(obj['source']) ?? {};
  const str = (v: unknown): string => asString(v) ?? '';
  return {
    'involvedObject.kind': str(involved['kind']),
    'involvedObject.namespace': str(involved['namespace']),
    'involvedObject.name': str(involved['name']),
    'involvedObject.uid': str(involved['uid']),
    'involvedObject.apiVersion': str(involved['apiVersion']),
    'involvedObject.resourceVersion': str(involved['resourceVersion']),
    'involvedObject.fieldPath': str(involved['fieldPath']),
    reason: str(obj['reason']),
    reportingComponent: str(obj['reportingComponent']),
    source: str(source['component']),
    type: str(obj['type']),
  };
}

export function eventStrategy(): ResourceStrategy {
  const validate = (obj: KubeObject): FieldError[] => {
    const involvedNs = asString(asRecord(obj['involvedObject'])?.['namespace']) ?? '';
    const ns = asString(obj.metadata?.namespace) ?? '';
    return involvedNs !== '' && involvedNs !== ns ? [invalid(root('involvedObject', 'namespace'), involvedNs, 'does not match event.namespace')] : [];
  };
  return strategy({ allowCreateOnUpdate: true, validate, validateUpdate: validate, selectableFields: eventFields });
}
