/**
 * Server-side apply (`application/apply-patch+yaml`), simplified: enough for
 * `kubectl apply --server-side` and controllers that apply with a field manager.
 *
 * - a missing object is created from the applied configuration;
 * - an existing one gets the applied configuration merged in (maps merge,
 *   lists merge by the built-in merge keys, other lists are replaced);
 * - fields the same manager applied before and no longer applies are removed,
 *   unless another manager's Apply entry still owns them;
 * - `metadata.managedFields` records one `Apply` entry per manager, with the
 *   owned fields in the FieldsV1 format (`f:`, `k:`, `v:`, `.`).
 * Not emulated: ownership of fields written by non-apply requests (`Update`
 * entries), and apply conflicts (409) between managers — `force` is accepted
 * and ignored.
 */
import { deepEqual, isPlainObject } from '../../k8s/json.ts';
import { patchMetaForKind, strategicMergePatch, type PatchMeta } from '../../k8s/strategic-merge.ts';
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { jsonMergePatch } from '../../k8s/merge-patch.ts';
import { badRequest, fail, ok, type Result } from './errors.ts';
import { metaOf } from './object-meta.ts';
import type { ObjectOperations, WriteOutcome } from './operations.ts';
import { apiVersionOf, type RequestContext, type ResourceDef } from './resource-def.ts';

type PathElement = { f: string } | { k: Record<string, unknown> } | { v: unknown } | { dot: true };
type FieldPath = PathElement[];

const SYSTEM_METADATA = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds']);

function elementKey(e: PathElement): string {
  if ('f' in e) return `f:${e.f}`;
  if ('k' in e) return `k:${JSON.stringify(sortKeys(e.k))}`;
  if ('v' in e) return `v:${JSON.stringify(e.v)}`;
  return '.';
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
}

function childMeta(meta: PatchMeta | undefined, key: string): PatchMeta | undefined {
  if (meta === undefined) return undefined;
  return meta.fields?.[key] ?? meta.map;
}

/** The set of field paths an applied configuration sets. */
export function fieldSetOf(obj: KubeObject, meta: PatchMeta | undefined): FieldPath[] {
  const out: FieldPath[] = [];
  const walk = (value: unknown, path: FieldPath, m: PatchMeta | undefined): void => {
    if (isPlainObject(value)) {
      const keys = Object.keys(value).filter((k) => value[k] !== undefined);
      if (keys.length === 0 && path.length > 0) out.push(path);
      for (const key of keys) walk(value[key], [...path, { f: key }], childMeta(m, key));
      return;
    }
    if (Array.isArray(value) && m?.strategy !== undefined && m.strategy.startsWith('merge')) {
      if (m.mergeKey !== undefined) {
        for (const el of value) {
          if (!isPlainObject(el) || el[m.mergeKey] === undefined) continue;
          const p: FieldPath = [...path, { k: { [m.mergeKey]: el[m.mergeKey] } }];
          out.push([...p, { dot: true }]);
          for (const key of Object.keys(el)) if (el[key] !== undefined) walk(el[key], [...p, { f: key }], childMeta(m.items, key));
        }
      } else {
        for (const el of value) out.push([...path, { v: el }]);
      }
      return;
    }
    if (path.length > 0) out.push(path);
  };
  for (const key of Object.keys(obj)) {
    if (key === 'apiVersion' || key === 'kind') continue;
    if (key === 'metadata' && isPlainObject(obj.metadata)) {
      for (const mk of Object.keys(obj.metadata)) {
        if (!SYSTEM_METADATA.has(mk)) walk(obj.metadata[mk], [{ f: 'metadata' }, { f: mk }], childMeta(childMeta(meta, 'metadata'), mk));
      }
      continue;
    }
    walk(obj[key], [{ f: key }], childMeta(meta, key));
  }
  return out;
}

/** FieldsV1: a tree of `f:`/`k:`/`v:` keys with `{}` leaves and `.` for list elements. */
export function toFieldsV1(paths: FieldPath[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const path of paths) {
    let node = root;
    for (const e of path) {
      const k = elementKey(e);
      const next = asRecord(node[k]) ?? {};
      node[k] = next;
      node = next;
    }
  }
  return root;
}

/** The leaf paths of a FieldsV1 tree (malformed parts are skipped). */
export function fromFieldsV1(tree: unknown): FieldPath[] {
  const out: FieldPath[] = [];
  const walk = (node: unknown, path: FieldPath): void => {
    const rec = asRecord(node);
    const keys = rec === undefined ? [] : Object.keys(rec);
    if (keys.length === 0) {
      if (path.length > 0) out.push(path);
      return;
    }
    for (const key of keys) {
      let e: PathElement | undefined;
      try {
        if (key === '.') e = { dot: true };
        else if (key.startsWith('f:')) e = { f: key.slice(2) };
        else if (key.startsWith('k:')) e = { k: JSON.parse(key.slice(2)) as Record<string, unknown> };
        else if (key.startsWith('v:')) e = { v: JSON.parse(key.slice(2)) as unknown };
      } catch {
        e = undefined;
      }
      if (e !== undefined) walk(rec?.[key], [...path, e]);
    }
  };
  walk(tree, []);
  return out;
}

const pathId = (p: FieldPath): string => p.map(elementKey).join('/');

/** Removes the field a path names (a `.` path removes the whole list element). */
function removePath(obj: unknown, path: FieldPath): void {
  let node: unknown = obj;
  const effective = path[path.length - 1] !== undefined && 'dot' in (path[path.length - 1] as PathElement) ? path.slice(0, -1) : path;
  for (let i = 0; i < effective.length; i++) {
    const e = effective[i] as PathElement;
    const last = i === effective.length - 1;
    if ('f' in e) {
      const rec = asRecord(node);
      if (rec === undefined) return;
      if (last) delete rec[e.f];
      else node = rec[e.f];
    } else if ('k' in e || 'v' in e) {
      const list = asArray(node);
      if (list === undefined) return;
      const idx = list.findIndex((el) => ('k' in e ? Object.entries(e.k).every(([k, v]) => deepEqual(asRecord(el)?.[k], v)) : deepEqual(el, e.v)));
      if (idx < 0) return;
      if (last) list.splice(idx, 1);
      else node = list[idx];
    }
  }
}

interface ManagedEntry {
  manager?: string;
  operation?: string;
  fieldsV1?: unknown;
  [key: string]: unknown;
}

function managedEntries(obj: KubeObject | undefined): ManagedEntry[] {
  return (asArray(obj?.metadata?.managedFields) ?? []).filter((e): e is ManagedEntry => isPlainObject(e));
}

/** Builds the object an apply makes of `current` (undefined: the object is created). */
export function applyConfiguration(def: ResourceDef, current: KubeObject | undefined, applied: KubeObject, manager: string, now: number): Result<KubeObject> {
  const meta = def.builtin ? patchMetaForKind(apiVersionOf(def), def.kind) : undefined;
  const fields = fieldSetOf(applied, meta);
  const entry = { manager, operation: 'Apply', apiVersion: apiVersionOf(def), time: formatTime(now), fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(fields) };
  if (current === undefined) {
    const created = structuredClone(applied);
    metaOf(created).managedFields = [entry];
    return ok(created);
  }
  let merged: unknown;
  if (meta !== undefined) {
    const result = strategicMergePatch(current, applied, meta);
    if (!result.ok) return fail(badRequest(result.error));
    merged = result.value;
  } else {
    merged = jsonMergePatch(current, applied);
  }
  const next = merged as KubeObject;
  const others = managedEntries(current).filter((e) => !(e.manager === manager && e.operation === 'Apply'));
  const previous = managedEntries(current).find((e) => e.manager === manager && e.operation === 'Apply');
  const keep = new Set(fields.map(pathId));
  for (const other of others) for (const p of fromFieldsV1(other.fieldsV1)) keep.add(pathId(p));
  for (const p of fromFieldsV1(previous?.fieldsV1)) if (!keep.has(pathId(p))) removePath(next, p);
  const unchangedOwnership = previous !== undefined && deepEqual(previous.fieldsV1, entry.fieldsV1);
  const withoutManaged = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...(o.metadata ?? {}), managedFields: undefined } });
  if (unchangedOwnership && deepEqual(withoutManaged(next), withoutManaged(current))) {
    metaOf(next).managedFields = current.metadata?.managedFields;
  } else {
    metaOf(next).managedFields = [...others, entry];
  }
  return ok(next);
}

/** PATCH with `application/apply-patch+yaml`. */
/** A PATCH request as the handler parsed it (every patch type; apply is one of them). */
export interface PatchRequest {
  patchType: string;
  /** The parsed body (JSON, or YAML for apply). */
  body: unknown;
  subresource: string;
  fieldManager?: string;
  force?: boolean;
  options?: Record<string, unknown>;
}

export async function applyObject(ops: ObjectOperations, def: ResourceDef, namespace: string, name: string, req: PatchRequest, ctx: RequestContext): Promise<Result<WriteOutcome>> {
  const manager = req.fieldManager ?? '';
  if (manager === '') return fail(badRequest('fieldManager is required for apply requests'));
  if (!isPlainObject(req.body)) return fail(badRequest('error decoding YAML: the applied configuration must be an object'));
  const body = req.body as KubeObject;
  if (isPlainObject(body.metadata) && body.metadata.managedFields !== undefined) return fail(badRequest('metadata.managedFields must be nil'));
  const checked = ops.checkBody(def, body);
  if (!checked.ok) return checked;
  const fields = ops.checkFields(def, checked.value, ctx, (unknown) => `failed to create typed patch object (${namespace}/${name}; ${apiVersionOf(def)}, Kind=${def.kind}): .${unknown[0] ?? ''}: field not declared in schema`);
  if (!fields.ok) return fields;
  const applied = checked.value;
  const appliedName = asString(applied.metadata?.name) ?? '';
  if (appliedName !== name) return fail(badRequest(`the name of the object (${appliedName}) does not match the name on the URL (${name})`));
  return ops.updateWith(
    def,
    namespace,
    name,
    ctx,
    req.subresource,
    req.options ?? {},
    async (current) => {
      const next = applyConfiguration(def, current, applied, manager, ops.now());
      if (!next.ok) return next;
      return current === undefined ? next : ops.checkBody(def, next.value);
    },
    'always',
  );
}
