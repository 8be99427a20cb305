/**
 * The generic half of every REST strategy: what upstream's `rest.BeforeCreate`,
 * `rest.BeforeUpdate` and `ValidateObjectMetaAccessor(Update)` do to any object
 * before the kind's own strategy runs (k8s.io/apiserver/pkg/registry/rest,
 * k8s.io/apimachinery/pkg/api/validation/objectmeta.go).
 *
 * - create: deletion fields cleared, generation 1 for kinds that track it,
 *   status reset where the kind has a status subresource;
 * - update of the main resource: status kept from the stored object,
 *   generation carried over and bumped when the kind's generation subject changed;
 * - update of `/status`: everything but metadata and status kept (custom
 *   resources: everything but status), generation untouched;
 * - both: uid, creationTimestamp and deletion fields cannot be changed.
 * Functions here mutate the (private) object they receive.
 */
import { deepEqual, isPlainObject } from '../../k8s/json.ts';
import { forbidden, invalid, required, root, type FieldError, type FieldPath } from '../../k8s/field-errors.ts';
import { isQualifiedName } from '../../k8s/name-formats.ts';
import { validateAnnotations, validateLabels, validateObjectMetaName, validateObjectMetaUpdate, nameIsDNSLabel } from '../../k8s/meta-validation.ts';
import { apiVersionGroup } from '../../k8s/pod.ts';
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject, ObjectMeta } from '../../k8s/types.ts';
import type { ResourceDef, StrategyContext } from './resource-def.ts';

export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/** The object's metadata, created when missing (a malformed non-object metadata is replaced). */
export function metaOf(obj: KubeObject): ObjectMeta {
  if (!isPlainObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as ObjectMeta;
}

export function nameOf(obj: KubeObject | undefined): string {
  return asString(obj?.metadata?.name) ?? '';
}

export function namespaceOf(obj: KubeObject | undefined): string {
  return asString(obj?.metadata?.namespace) ?? '';
}

export function finalizersOf(obj: KubeObject | undefined): string[] {
  return (asArray(obj?.metadata?.finalizers) ?? []).filter((f): f is string => typeof f === 'string');
}

/** A copy of the object without the keys that never count for "did anything change" (resourceVersion). */
function comparable(obj: KubeObject): KubeObject {
  const meta = { ...(obj.metadata ?? {}) };
  delete meta.resourceVersion;
  return { ...obj, metadata: meta };
}

/** True when writing `next` over `current` would change nothing (upstream skips such writes). */
export function isNoopWrite(next: KubeObject, current: KubeObject): boolean {
  return deepEqual(comparable(next), comparable(current));
}

// ---- create ----

/** rest.BeforeCreate's generic part, before the kind's `prepareForCreate`. */
export function prepareCreate(def: ResourceDef, obj: KubeObject, ctx: StrategyContext): void {
  const meta = metaOf(obj);
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  if (def.strategy.generationSubject !== undefined) meta.generation = 1;
  if (def.strategy.resetStatusOnCreate) {
    // Typed kinds serialize their zero status as {}; unstructured custom resources drop it.
    if (def.builtin) obj.status = {};
    else delete obj.status;
  }
  def.strategy.prepareForCreate?.(obj, ctx);
}

/** ValidateObjectMetaAccessor for a create: names, namespace, labels, annotations, owners, finalizers. */
export function validateCreateMeta(def: ResourceDef, obj: KubeObject): FieldError[] {
  const meta = asRecord(obj.metadata) ?? {};
  const path = root('metadata');
  const errs = validateObjectMetaName(meta['name'], path, def.kind, { generateName: meta['generateName'], ...(def.strategy.nameRule !== undefined ? { rule: def.strategy.nameRule } : {}) });
  const namespace = asString(meta['namespace']) ?? '';
  if (def.namespaced) {
    if (namespace === '') errs.push(required(path.child('namespace')));
    else for (const msg of nameIsDNSLabel(namespace, false)) errs.push(invalid(path.child('namespace'), namespace, msg));
  } else if (namespace !== '') {
    errs.push(forbidden(path.child('namespace'), 'not allowed on this type'));
  }
  errs.push(...validateCommonMeta(meta, path));
  return errs;
}

// ---- update ----

/** rest.BeforeUpdate's generic part for the main resource (kind hook runs inside). */
export function prepareUpdate(def: ResourceDef, obj: KubeObject, old: KubeObject, ctx: StrategyContext): void {
  carryGeneration(obj, old);
  if (def.subresources.status === true) {
    if (old.status === undefined) delete obj.status;
    else obj.status = old.status;
  }
  def.strategy.prepareForUpdate?.(obj, old, ctx);
  const subject = def.strategy.generationSubject;
  if (subject !== undefined && !deepEqual(subject(obj), subject(old))) {
    const meta = metaOf(obj);
    meta.generation = (typeof old.metadata?.generation === 'number' ? old.metadata.generation : 0) + 1;
  }
  keepSystemFields(obj, old);
}

/** The status strategy's PrepareForUpdate: only status (and, for built-ins, metadata) may change. */
export function prepareStatusUpdate(def: ResourceDef, obj: KubeObject, old: KubeObject, ctx: StrategyContext): void {
  if (!def.builtin) {
    const status = obj.status;
    const managedFields = obj.metadata?.managedFields;
    for (const key of Object.keys(obj)) delete obj[key];
    Object.assign(obj, structuredClone(old));
    if (status === undefined) delete obj.status;
    else obj.status = status;
    if (managedFields !== undefined) metaOf(obj).managedFields = managedFields;
  } else {
    for (const key of Object.keys(obj)) {
      if (!['metadata', 'status', 'apiVersion', 'kind'].includes(key)) delete obj[key];
    }
    for (const [key, value] of Object.entries(old)) {
      if (!['metadata', 'status', 'apiVersion', 'kind'].includes(key)) obj[key] = value;
    }
  }
  carryGeneration(obj, old);
  def.strategy.prepareForStatusUpdate?.(obj, old, ctx);
  keepSystemFields(obj, old);
}

function carryGeneration(obj: KubeObject, old: KubeObject): void {
  const meta = metaOf(obj);
  const oldGeneration = old.metadata?.generation;
  if (typeof oldGeneration === 'number') meta.generation = oldGeneration;
  else delete meta.generation;
}

/** uid defaults to the stored one; creationTimestamp and an existing deletion can never change. */
function keepSystemFields(obj: KubeObject, old: KubeObject): void {
  const meta = metaOf(obj);
  const oldMeta = old.metadata ?? {};
  if ((asString(meta.uid) ?? '') === '' && oldMeta.uid !== undefined) meta.uid = oldMeta.uid;
  if (oldMeta.creationTimestamp !== undefined) meta.creationTimestamp = oldMeta.creationTimestamp;
  if (oldMeta.deletionTimestamp !== undefined) meta.deletionTimestamp = oldMeta.deletionTimestamp;
  if (oldMeta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds === undefined) {
    meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
  }
}

/** ValidateObjectMetaAccessorUpdate plus the common field checks of an update. */
export function validateUpdateMeta(obj: KubeObject, old: KubeObject): FieldError[] {
  const path = root('metadata');
  const meta = asRecord(obj.metadata) ?? {};
  const oldMeta = asRecord(old.metadata) ?? {};
  const errs = validateObjectMetaUpdate(meta, oldMeta, path);
  if (oldMeta['deletionTimestamp'] !== undefined) {
    const before = new Set(finalizersOf(old));
    const added = finalizersOf(obj).filter((f) => !before.has(f));
    if (added.length > 0) {
      errs.push(forbidden(path.child('finalizers'), `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`));
    }
  }
  if (oldMeta['deletionTimestamp'] === undefined && meta['deletionTimestamp'] !== undefined) {
    errs.push(invalid(path.child('deletionTimestamp'), meta['deletionTimestamp'], 'field is immutable'));
  }
  if (!deepEqual(meta['deletionGracePeriodSeconds'], oldMeta['deletionGracePeriodSeconds'])) {
    errs.push(invalid(path.child('deletionGracePeriodSeconds'), meta['deletionGracePeriodSeconds'] ?? null, 'field is immutable'));
  }
  errs.push(...validateCommonMeta(meta, path));
  return errs;
}

// ---- shared checks ----

function validateCommonMeta(meta: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const generation = meta['generation'];
  if (typeof generation === 'number' && generation < 0) errs.push(invalid(path.child('generation'), generation, 'must be greater than or equal to 0'));
  errs.push(...validateLabels(meta['labels'], path.child('labels')));
  errs.push(...validateAnnotations(meta['annotations'], path.child('annotations')));
  errs.push(...validateOwnerReferences(meta['ownerReferences'], path.child('ownerReferences')));
  errs.push(...validateFinalizers(meta['finalizers'], path.child('finalizers')));
  return errs;
}

/** ValidateOwnerReferences: each reference complete, at most one controller. */
export function validateOwnerReferences(refs: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const controllers: string[] = [];
  (asArray(refs) ?? []).forEach((ref, i) => {
    const r = asRecord(ref) ?? {};
    const p = path.index(i);
    const apiVersion = asString(r['apiVersion']) ?? '';
    const gv = apiVersionGroup(apiVersion);
    if (!gv.ok || gv.version === '') errs.push(invalid(p.child('apiVersion'), apiVersion, 'version must not be empty'));
    for (const key of ['kind', 'name', 'uid']) {
      const v = asString(r[key]) ?? '';
      if (v === '') errs.push(invalid(p.child(key), v, 'must not be empty'));
    }
    if (r['controller'] === true) controllers.push(`${asString(r['kind']) ?? ''}/${asString(r['name']) ?? ''}`);
  });
  if (controllers.length > 1) {
    errs.push(invalid(path, refs, `Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(' and ')}`));
  }
  return errs;
}

/** ValidateFinalizers: qualified names; `orphan` and `foregroundDeletion` are exclusive. */
export function validateFinalizers(finalizers: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const list = (asArray(finalizers) ?? []).map((f) => asString(f) ?? '');
  list.forEach((f, i) => {
    for (const msg of isQualifiedName(f)) errs.push(invalid(path.index(i), f, msg));
  });
  if (list.includes(FINALIZER_ORPHAN) && list.includes(FINALIZER_FOREGROUND)) {
    errs.push(invalid(path, list, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

// ---- decoding ----

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

/**
 * The typed-decode check of ObjectMeta (what Go's json.Unmarshal would refuse),
 * in encoding/json's words; undefined when the metadata decodes.
 */
export function metaDecodeError(obj: KubeObject): string | undefined {
  const meta: unknown = obj.metadata;
  if (meta === undefined || meta === null) return undefined;
  const at = (field: string, goType: string, v: unknown) =>
    `json: cannot unmarshal ${jsonKind(v)} into Go struct field ObjectMeta.metadata.${field} of type ${goType}`;
  if (!isPlainObject(meta)) return `json: cannot unmarshal ${jsonKind(meta)} into Go struct field .metadata of type v1.ObjectMeta`;
  for (const key of ['name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp']) {
    const v = meta[key];
    if (v !== undefined && v !== null && typeof v !== 'string') return at(key, key.endsWith('Timestamp') ? 'v1.Time' : 'string', v);
  }
  for (const key of ['generation', 'deletionGracePeriodSeconds']) {
    const v = meta[key];
    if (v !== undefined && v !== null && !(typeof v === 'number' && Number.isInteger(v))) return at(key, 'int64', v);
  }
  for (const key of ['labels', 'annotations']) {
    const v = meta[key];
    if (v === undefined || v === null) continue;
    if (!isPlainObject(v)) return at(key, 'map[string]string', v);
    for (const value of Object.values(v)) if (value !== null && typeof value !== 'string') return at(key, 'string', value);
  }
  const finalizers = meta['finalizers'];
  if (finalizers !== undefined && finalizers !== null) {
    if (!Array.isArray(finalizers)) return at('finalizers', '[]string', finalizers);
    for (const f of finalizers) if (typeof f !== 'string') return at('finalizers', 'string', f);
  }
  const owners = meta['ownerReferences'];
  if (owners !== undefined && owners !== null) {
    if (!Array.isArray(owners)) return at('ownerReferences', '[]v1.OwnerReference', owners);
    for (const o of owners) if (!isPlainObject(o)) return at('ownerReferences', 'v1.OwnerReference', o);
  }
  return undefined;
}
