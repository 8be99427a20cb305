/**
 * `metadata.managedFields`: who owns which field, kept as kube-apiserver's
 * field manager keeps it (k8s.io/apimachinery/pkg/util/managedfields) on
 * every create, update, patch and apply.
 *
 * - Entries are identified by manager, operation and subresource, plus the
 *   apiVersion for `Update` entries; an update merges into its manager's
 *   entry, an apply replaces its manager's `Apply` entry.
 * - A write that is not an apply owns what it added or modified (compared with
 *   the stored object; on create, with an empty object of the kind), taking it
 *   from every other manager; what it removed leaves every entry; entries left
 *   empty are dropped; an entry's `time` moves only when its manager's fields
 *   changed.
 * - An apply owns exactly its configuration's fields. Fields owned by another
 *   manager that the apply would change are conflicts (409, one cause per
 *   field) unless `force` is set, which moves them to the applier. Applying the
 *   value a field already has shares it. Fields the applier set before and
 *   no longer sets are removed when no one else owns them.
 * - An object without managedFields stays untracked by updates; its first
 *   apply first gives its current fields to `before-first-apply`.
 * - A request may replace managedFields (`[]` or `[{}]` clears them);
 *   subresource writes cannot. At most 10 `Update` entries are kept; the
 *   oldest merge into `ancient-changes`.
 * Start at `FieldManager.update` and `FieldManager.apply`.
 */
import { deepEqual, isPlainObject } from '../../../k8s/json.ts';
import { formatTime, parseTime } from '../../../k8s/time.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import { statusError, type Result, type Status, fail, ok } from '../errors.ts';
import { apiVersionOf, type ResourceDef } from '../resource-def.ts';
import { canonical, difference, formatPath, intersection, isEmptySet, isFieldTree, memberPaths, union, type FieldTree, EMPTY } from './field-set.ts';
import { builtinKindType, customResourceType, type MapType } from './field-types.ts';
import { appliedFieldSet, compareObjects, mergeApplied, pruneApplied, type TrackedFields } from './typed-value.ts';
import { zeroObject } from './zero-objects.ts';

export type Operation = 'Apply' | 'Update';

/** One managedFields entry, decoded. `raw` is the stored entry it came from, reused while nothing changes. */
interface Entry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  time: string | undefined;
  subresource: string;
  fields: FieldTree;
  raw?: Record<string, unknown>;
}

const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';
const BEFORE_FIRST_APPLY = 'before-first-apply';
/** validation.FieldManagerMaxLength */
export const MAX_MANAGER_LENGTH = 128;

function identity(e: { manager: string; operation: Operation; apiVersion: string; subresource: string }): string {
  return e.operation === 'Apply' ? `A\u0000${e.manager}\u0000${e.subresource}` : `U\u0000${e.manager}\u0000${e.apiVersion}\u0000${e.subresource}`;
}

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isPrintable(ch: string): boolean {
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch);
}

/** The manager a request writes as: `?fieldManager=`, else its User-Agent up to the first `/` (printable, at most 128 bytes). */
export function managerName(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager !== undefined && fieldManager !== '') return fieldManager;
  const prefix = (userAgent ?? '').split('/')[0] ?? '';
  let out = '';
  let bytes = 0;
  for (const ch of prefix) {
    if (!isPrintable(ch)) continue;
    const n = Buffer.byteLength(ch);
    if (bytes + n > MAX_MANAGER_LENGTH) break;
    bytes += n;
    out += ch;
  }
  return out;
}

type Decoded = { kind: 'entries'; entries: Entry[] } | { kind: 'reset' } | { kind: 'invalid' };

/** A `metav1.Time` as it serializes (second precision); an unparsable one is kept as sent. */
function normalTime(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = parseTime(value);
  return ms === undefined ? value : formatTime(ms);
}

/**
 * Upstream's DecodeManagedFields; `[]` and `[{}]` are the request to clear them.
 * Entries of a request (`trusted` false) are re-encoded as the server writes
 * them; stored ones are kept as they are while nothing changes.
 */
function decode(value: unknown, trusted: boolean): Decoded {
  if (value === undefined || value === null) return { kind: 'entries', entries: [] };
  if (!Array.isArray(value)) return { kind: 'invalid' };
  if (value.length === 0) return { kind: 'reset' };
  if (value.length === 1 && isPlainObject(value[0]) && Object.keys(value[0]).every((k) => value[0][k] === undefined)) return { kind: 'reset' };
  const byId = new Map<string, Entry>();
  for (const raw of value) {
    if (!isPlainObject(raw)) return { kind: 'invalid' };
    const operation = raw['operation'];
    if (operation !== 'Apply' && operation !== 'Update') return { kind: 'invalid' };
    const apiVersion = typeof raw['apiVersion'] === 'string' ? raw['apiVersion'] : '';
    if (apiVersion === '' || raw['fieldsType'] !== 'FieldsV1') return { kind: 'invalid' };
    const fields: unknown = raw['fieldsV1'] ?? EMPTY;
    // What the server stored it wrote itself: only a request's trees need checking.
    if (!trusted && !isFieldTree(fields)) return { kind: 'invalid' };
    const entry: Entry = {
      manager: typeof raw['manager'] === 'string' ? raw['manager'] : '',
      operation,
      apiVersion,
      time: trusted ? (raw['time'] as string | undefined) : normalTime(raw['time']),
      subresource: typeof raw['subresource'] === 'string' ? raw['subresource'] : '',
      fields: trusted ? (fields as FieldTree) : canonical(fields as FieldTree),
    };
    if (trusted) entry.raw = raw;
    byId.set(identity(entry), entry);
  }
  return { kind: 'entries', entries: [...byId.values()] };
}

function seconds(time: string | undefined): number {
  const ms = time === undefined ? undefined : parseTime(time);
  return ms === undefined ? 0 : Math.floor(ms / 1000);
}

/** Upstream's order: Apply before Update, then by time, manager, apiVersion, subresource. */
function compareEntries(a: Entry, b: Entry): number {
  if (a.operation !== b.operation) return a.operation < b.operation ? -1 : 1;
  const t = seconds(a.time) - seconds(b.time);
  if (t !== 0) return t;
  for (const k of ['manager', 'apiVersion', 'subresource'] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  return 0;
}

function encodeEntry(e: Entry): Record<string, unknown> {
  if (e.raw !== undefined && e.raw['fieldsV1'] === e.fields && e.raw['time'] === e.time) return e.raw;
  const out: Record<string, unknown> = {};
  if (e.manager !== '') out['manager'] = e.manager;
  out['operation'] = e.operation;
  out['apiVersion'] = e.apiVersion;
  if (e.time !== undefined) out['time'] = e.time;
  out['fieldsType'] = 'FieldsV1';
  out['fieldsV1'] = e.fields;
  if (e.subresource !== '') out['subresource'] = e.subresource;
  return out;
}

/** Upstream's capManagersManager: beyond 10 Update entries, the oldest merge, per apiVersion, into `ancient-changes`. */
function capUpdateManagers(entries: Entry[]): Entry[] {
  let count = 0;
  for (const e of entries) if (e.operation === 'Update') count++;
  if (count <= MAX_UPDATE_MANAGERS) return entries;
  const updaters = entries.filter((e) => e.operation === 'Update');
  updaters.sort((a, b) => seconds(a.time) - seconds(b.time) || (identity(a) < identity(b) ? -1 : 1));
  const removed = new Set<Entry>();
  const firstByVersion = new Map<string, Entry>();
  const buckets = new Map<string, Entry>();
  for (const e of updaters) {
    if (count <= MAX_UPDATE_MANAGERS) break;
    const first = firstByVersion.get(e.apiVersion);
    if (first === undefined) {
      firstByVersion.set(e.apiVersion, e);
      continue;
    }
    let bucket = buckets.get(e.apiVersion);
    if (bucket === undefined) {
      const existing = entries.find((x) => !removed.has(x) && identity(x) === identity({ manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: e.apiVersion, subresource: '' }));
      if (existing !== undefined) {
        removed.add(existing);
        bucket = existing;
      } else {
        removed.add(first);
        bucket = { manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: e.apiVersion, time: first.time, subresource: '', fields: first.fields };
      }
    }
    buckets.set(e.apiVersion, { manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: e.apiVersion, subresource: '', fields: union(e.fields, bucket.fields), time: e.time });
    removed.add(e);
    count--;
  }
  return [...entries.filter((e) => !removed.has(e)), ...buckets.values()];
}

export interface ApplyRequest {
  manager: string;
  subresource: string;
  force: boolean;
  now: number;
}

/** The conflict answer of an apply (409, reason Conflict, one FieldManagerConflict cause per field). */
function conflictStatus(conflicts: { entry: Entry; paths: string[][] }[]): Status {
  const describe = (e: Entry) => {
    let s = JSON.stringify(e.manager);
    if (e.subresource !== '') s += ` with subresource ${JSON.stringify(e.subresource)}`;
    return e.operation === 'Update' ? `${s} using ${e.apiVersion}` : s;
  };
  const sorted = [...conflicts].sort((a, b) => (identity(a.entry) < identity(b.entry) ? -1 : 1));
  const causes = sorted.flatMap(({ entry, paths }) => paths.map((p) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describe(entry)}`, field: formatPath(p) })));
  let message: string;
  if (causes.length === 1) {
    const only = sorted[0] as { entry: Entry; paths: string[][] };
    message = `Apply failed with 1 conflict: conflict with ${describe(only.entry)}: ${formatPath(only.paths[0] as string[])}`;
  } else {
    const lines: string[] = [];
    for (const { entry, paths } of sorted) {
      lines.push(`conflicts with ${describe(entry)}:`);
      for (const p of paths) lines.push(`- ${formatPath(p)}`);
    }
    message = `Apply failed with ${causes.length} conflicts: ${lines.join('\n')}`;
  }
  return statusError(409, 'Conflict', message, { causes });
}

/** Which top-level fields a write through `subresource` may own (upstream's reset fields). */
function trackedFields(def: ResourceDef, subresource: string): TrackedFields {
  switch (subresource) {
    case '':
      return def.subresources.status === true ? (f) => f !== 'status' : () => true;
    case 'status':
      // Built-in status strategies keep metadata changes; custom resources' keep nothing but status.
      return def.builtin ? (f) => f === 'status' || f === 'metadata' : (f) => f === 'status';
    case 'scale':
      return (f) => f === 'spec';
    default:
      return () => true;
  }
}

export class FieldManager {
  readonly #crTypes = new WeakMap<ResourceDef, MapType>();
  /** The last second formatted: every write of a burst shares it. */
  #lastTime: { seconds: number; text: string } | undefined;

  #timeText(ms: number): string {
    const seconds = Math.floor(ms / 1000);
    if (this.#lastTime?.seconds !== seconds) this.#lastTime = { seconds, text: formatTime(ms) };
    return this.#lastTime.text;
  }

  /** The field types of a resource's kind. */
  typeOf(def: ResourceDef): MapType {
    if (def.builtin) return builtinKindType(apiVersionOf(def), def.kind) ?? customResourceType(undefined);
    let t = this.#crTypes.get(def);
    if (t === undefined) this.#crTypes.set(def, (t = customResourceType(def.openAPIV3Schema)));
    return t;
  }

  /**
   * Records a create, update or (non-apply) patch in `next`'s managedFields:
   * `live` is the stored object (undefined for a create). Mutates `next`'s metadata.
   */
  update(def: ResourceDef, live: KubeObject | undefined, next: KubeObject, manager: string, subresource: string, now: number): void {
    const base = this.#base(live, next, subresource);
    const meta = metaOf(next);
    if (base === undefined || (live !== undefined && base.length === 0)) {
      // Nothing to start from on an update: the object stays untracked (upstream's skipNonAppliedManager).
      delete meta['managedFields'];
      return;
    }
    const before = live ?? zeroObject(def);
    const entries = this.#recordUpdate(def, before, next, base, manager, subresource, now);
    setManagedFields(next, entries);
  }

  /** The object an apply makes of `live` (undefined: the apply creates it), with its managedFields; or the 409 of a conflict. */
  apply(def: ResourceDef, live: KubeObject | undefined, config: KubeObject, req: ApplyRequest, finish: (merged: KubeObject) => Result<KubeObject>): Result<KubeObject> {
    const type = this.typeOf(def);
    const tracked = trackedFields(def, req.subresource);
    const apiVersion = apiVersionOf(def);
    const liveBody: KubeObject = live === undefined ? {} : withoutManagedFields(live);
    const before = live === undefined ? zeroObject(def) : liveBody;
    let entries: Entry[] = [];
    if (live !== undefined) {
      const decoded = decode(live.metadata?.managedFields, true);
      entries = decoded.kind === 'entries' ? decoded.entries : [];
      if (entries.length === 0) entries = this.#recordUpdate(def, zeroObject(def), liveBody, [], BEFORE_FIRST_APPLY, '', req.now);
    }
    const self = { manager: req.manager, operation: 'Apply' as const, apiVersion, subresource: req.subresource };
    const selfId = identity(self);
    const last = entries.find((e) => identity(e) === selfId);
    const others = entries.filter((e) => identity(e) !== selfId);
    const set = appliedFieldSet(config, type, tracked);
    let merged = mergeApplied(liveBody, config, type);
    if (last !== undefined && !isEmptySet(last.fields)) {
      let keep = set;
      for (const o of others) keep = union(keep, o.fields);
      merged = pruneApplied(merged, last.fields, keep, type);
    }
    const finished = finish(merged);
    if (!finished.ok) return finished;
    const next = finished.value;
    delete metaOf(next)['managedFields'];
    const { changed, removed } = compareObjects(before, next, type, tracked);
    const conflicts: { entry: Entry; paths: string[][] }[] = [];
    const kept: Entry[] = [];
    for (const o of others) {
      const lost = intersection(o.fields, changed);
      if (!isEmptySet(lost)) conflicts.push({ entry: o, paths: memberPaths(lost) });
      const fields = difference(difference(o.fields, changed), removed);
      if (!isEmptySet(fields)) kept.push(fields === o.fields ? o : { ...o, fields });
    }
    if (conflicts.length > 0 && !req.force) return fail(conflictStatus(conflicts));
    const objectChanged = live === undefined || !deepEqual(next, liveBody);
    if (!isEmptySet(set)) {
      const time = objectChanged ? this.#timeText(req.now) : last?.time;
      const fields = last !== undefined && deepEqual(last.fields, set) ? last.fields : set;
      const entry: Entry = { ...self, time, fields };
      if (last?.raw !== undefined && fields === last.fields && time === last.time && last.apiVersion === apiVersion) entry.raw = last.raw;
      kept.push(entry);
    }
    setManagedFields(next, capUpdateManagers(kept));
    return ok(next);
  }

  /** The entries an update starts from: the request's (unless on a subresource or invalid), else the stored ones; undefined when there are none to keep. */
  #base(live: KubeObject | undefined, next: KubeObject, subresource: string): Entry[] | undefined {
    const fromLive = (): Entry[] => {
      const d = decode(live?.metadata?.managedFields, true);
      return d.kind === 'entries' ? d.entries : [];
    };
    if (subresource !== '') return fromLive();
    const sent = next.metadata?.managedFields;
    // Most writers send back the entries they read: those are the stored ones, already decoded once.
    if (sent !== undefined && live !== undefined && deepEqual(sent, live.metadata?.managedFields)) return fromLive();
    const requested = decode(sent, false);
    if (requested.kind === 'reset') return live === undefined ? [] : undefined;
    if (requested.kind === 'entries' && requested.entries.length > 0) return requested.entries;
    return fromLive();
  }

  #recordUpdate(def: ResourceDef, before: KubeObject, next: KubeObject, base: Entry[], manager: string, subresource: string, now: number): Entry[] {
    const { changed, removed } = compareObjects(before, next, this.typeOf(def), trackedFields(def, subresource));
    const self = { manager, operation: 'Update' as const, apiVersion: apiVersionOf(def), subresource };
    const selfId = identity(self);
    const out: Entry[] = [];
    let previous: Entry | undefined;
    for (const e of base) {
      let fields = e.fields;
      if (!isEmptySet(changed)) fields = difference(fields, changed);
      if (!isEmptySet(removed)) fields = difference(fields, removed);
      const kept = fields === e.fields ? e : { ...e, fields };
      if (identity(e) === selfId) previous = kept;
      else if (!isEmptySet(fields)) out.push(kept);
    }
    if (!isEmptySet(changed)) {
      out.push({ ...self, time: this.#timeText(now), fields: previous === undefined ? changed : union(changed, previous.fields) });
    } else if (previous !== undefined && !isEmptySet(previous.fields)) {
      out.push(previous);
    }
    return capUpdateManagers(out);
  }
}

function metaOf(obj: KubeObject): Record<string, unknown> {
  if (!isPlainObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as Record<string, unknown>;
}

function withoutManagedFields(obj: KubeObject): KubeObject {
  if (!isPlainObject(obj.metadata) || obj.metadata['managedFields'] === undefined) return obj;
  const { managedFields: _dropped, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
}

function setManagedFields(obj: KubeObject, entries: Entry[]): void {
  const meta = metaOf(obj);
  if (entries.length === 0) {
    delete meta['managedFields'];
    return;
  }
  meta['managedFields'] = [...entries].sort(compareEntries).map(encodeEntry);
}
