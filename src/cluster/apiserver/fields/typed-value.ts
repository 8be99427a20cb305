/**
 * The operations of server-side apply on typed objects (structured-merge-diff's
 * typed package), over the raw JSON the server stores:
 *
 * - `compareObjects`: the paths a write added or modified (`changed`) and the
 *   ones it removed — upstream's Comparison, with Added and Modified joined;
 * - `appliedFieldSet`: the paths an apply configuration sets (leaves, map
 *   entries and list elements);
 * - `mergeApplied`: the object an apply configuration makes of the live one
 *   (granular maps merge, associative lists merge by key in upstream's order,
 *   everything else is replaced);
 * - `pruneApplied`: the fields an applier set before and no longer sets,
 *   removed unless someone still owns them.
 *
 * All of them work on whole objects: `apiVersion`, `kind`, `metadata` itself
 * and the system fields of metadata (name, uid, resourceVersion...) are never
 * owned (upstream's stripped fields), and `tracked` says which top-level fields
 * a write may own (not `status` on the main resource, only `status` on
 * `/status`...). Inputs are never mutated: results share untouched subtrees
 * with them.
 */
import { deepEqual, isPlainObject } from '../../../k8s/json.ts';
import { childKeys, compareKeys, EMPTY, fieldKey, isMember, keyKey, node, valueKey, type FieldTree } from './field-set.ts';
import { childType, objectMetaType, type FieldType, type ListType, type MapType } from './field-types.ts';

/** Metadata fields no manager ever owns (upstream's stripMetaManager). */
export const STRIPPED_METADATA = new Set(['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion']);

/** Which top-level fields (metadata included; never apiVersion and kind) a write may own. */
export type TrackedFields = (field: string) => boolean;

type Json = Record<string, unknown>;
type Pair = readonly [FieldTree | undefined, FieldTree | undefined];

const NONE: Pair = [undefined, undefined];
const ADDED: Pair = [EMPTY, undefined];
const REMOVED: Pair = [undefined, EMPTY];

function isObj(v: unknown): v is Json {
  return isPlainObject(v);
}

function emptyMapValue(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (!isObj(v)) return false;
  for (const k in v) if (v[k] !== undefined) return false;
  return true;
}

function emptyListValue(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0);
}

function sortChildren(children: [string, FieldTree][]): [string, FieldTree][] {
  if (children.length > 1) children.sort((a, b) => compareKeys(a[0], b[0]));
  return children;
}

/** The path element of each element of an associative list (undefined when its key fields are missing). */
function itemKey(t: ListType, item: unknown): string | undefined {
  if (t.keys === undefined) return valueKey(item);
  return isObj(item) ? keyKey(t.keys, item, t.keyDefaults) : undefined;
}

function indexItems(t: ListType, list: unknown): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!Array.isArray(list)) return out;
  for (const item of list) {
    const key = itemKey(t, item);
    if (key !== undefined && !out.has(key)) out.set(key, item);
  }
  return out;
}

// ---- compare ----

function finish(changed: [string, FieldTree][], removed: [string, FieldTree][], l: unknown, r: unknown): Pair {
  const c = node(sortChildren(changed), l === undefined);
  const d = node(sortChildren(removed), r === undefined);
  return c === undefined && d === undefined ? NONE : [c, d];
}

// The walkers below use plain loops, not closures: they run on every write.

function compareMap(l: unknown, r: unknown, type: MapType | undefined): Pair {
  const lo = isObj(l) ? l : undefined;
  const ro = isObj(r) ? r : undefined;
  const changed: [string, FieldTree][] = [];
  const removed: [string, FieldTree][] = [];
  if (lo !== undefined) {
    for (const k in lo) {
      const lv = lo[k];
      if (lv === undefined) continue;
      const [c, d] = compareAt(lv, ro?.[k], type === undefined ? undefined : childType(type, k));
      if (c !== undefined) changed.push([fieldKey(k), c]);
      if (d !== undefined) removed.push([fieldKey(k), d]);
    }
  }
  if (ro !== undefined) {
    for (const k in ro) {
      const rv = ro[k];
      if (rv === undefined || (lo !== undefined && lo[k] !== undefined)) continue;
      const [c, d] = compareAt(undefined, rv, type === undefined ? undefined : childType(type, k));
      if (c !== undefined) changed.push([fieldKey(k), c]);
      if (d !== undefined) removed.push([fieldKey(k), d]);
    }
  }
  return finish(changed, removed, l, r);
}

function compareList(l: unknown, r: unknown, type: ListType): Pair {
  const li = indexItems(type, l);
  const ri = indexItems(type, r);
  const changed: [string, FieldTree][] = [];
  const removed: [string, FieldTree][] = [];
  for (const [k, lv] of li) {
    const [c, d] = compareAt(lv, ri.get(k), type.item);
    if (c !== undefined) changed.push([k, c]);
    if (d !== undefined) removed.push([k, d]);
  }
  for (const [k, rv] of ri) {
    if (li.has(k)) continue;
    const [c, d] = compareAt(undefined, rv, type.item);
    if (c !== undefined) changed.push([k, c]);
    if (d !== undefined) removed.push([k, d]);
  }
  return finish(changed, removed, l, r);
}

/** Changed and removed paths below (and at) one node; `type` undefined means deduced. */
function compareAt(l: unknown, r: unknown, type: FieldType | undefined): Pair {
  if (l === r) return NONE;
  const kind = type?.kind ?? 'deduced';
  if ((kind === 'map' || kind === 'deduced') && (isObj(l) || isObj(r)) && !(emptyMapValue(l) && emptyMapValue(r))) {
    return compareMap(l, r, kind === 'map' ? (type as MapType) : undefined);
  }
  if (kind === 'list' && (Array.isArray(l) || Array.isArray(r)) && !(emptyListValue(l) && emptyListValue(r))) {
    return compareList(l, r, type as ListType);
  }
  if (l === undefined) return ADDED;
  if (r === undefined) return REMOVED;
  return deepEqual(l, r) ? NONE : ADDED;
}

export interface Comparison {
  /** Paths added or modified (upstream's Added ∪ Modified). */
  changed: FieldTree;
  removed: FieldTree;
}

/** What turning `live` into `next` added, modified and removed, among the fields a write may own. */
export function compareObjects(live: Json, next: Json, type: MapType, tracked: TrackedFields): Comparison {
  const changed: [string, FieldTree][] = [];
  const removed: [string, FieldTree][] = [];
  for (let side = 0; side < 2; side++) {
    const obj = side === 0 ? live : next;
    for (const k in obj) {
      if (obj[k] === undefined || (side === 1 && live[k] !== undefined)) continue;
      if (k === 'apiVersion' || k === 'kind' || !tracked(k)) continue;
      const [c, d] = k === 'metadata' ? compareMetadata(live['metadata'], next['metadata']) : compareAt(live[k], next[k], childType(type, k));
      if (c !== undefined) changed.push([fieldKey(k), c]);
      if (d !== undefined) removed.push([fieldKey(k), d]);
    }
  }
  return { changed: node(sortChildren(changed), false) ?? EMPTY, removed: node(sortChildren(removed), false) ?? EMPTY };
}

function compareMetadata(l: unknown, r: unknown): Pair {
  const lo = isObj(l) ? l : {};
  const ro = isObj(r) ? r : {};
  const meta = objectMetaType();
  const changed: [string, FieldTree][] = [];
  const removed: [string, FieldTree][] = [];
  for (let side = 0; side < 2; side++) {
    const obj = side === 0 ? lo : ro;
    for (const k in obj) {
      if (obj[k] === undefined || (side === 1 && lo[k] !== undefined) || STRIPPED_METADATA.has(k)) continue;
      const [c, d] = compareAt(lo[k], ro[k], childType(meta, k));
      if (c !== undefined) changed.push([fieldKey(k), c]);
      if (d !== undefined) removed.push([fieldKey(k), d]);
    }
  }
  const c = node(sortChildren(changed), false);
  const d = node(sortChildren(removed), false);
  return c === undefined && d === undefined ? NONE : [c, d];
}

// ---- the field set of an apply configuration ----

function withMember(tree: FieldTree | undefined): FieldTree {
  if (tree === undefined || isMember(tree)) return tree ?? EMPTY;
  return { ...tree, '.': EMPTY };
}

function setAt(v: unknown, type: FieldType | undefined): FieldTree | undefined {
  const kind = type?.kind ?? 'deduced';
  if ((kind === 'map' || kind === 'deduced') && isObj(v)) {
    const map = kind === 'map' ? (type as MapType) : undefined;
    const children: [string, FieldTree][] = [];
    for (const k in v) {
      if (v[k] === undefined) continue;
      const declared = map?.field(k);
      const child = setAt(v[k], declared ?? map?.elem);
      // Map entries (undeclared keys) are members themselves; struct fields only through their leaves.
      if (declared === undefined) children.push([fieldKey(k), withMember(child)]);
      else if (child !== undefined) children.push([fieldKey(k), child]);
    }
    return node(sortChildren(children), false);
  }
  if (kind === 'list' && Array.isArray(v)) {
    const list = type as ListType;
    const children: [string, FieldTree][] = [];
    const seen = new Set<string>();
    for (const item of v) {
      const key = itemKey(list, item);
      if (key === undefined || seen.has(key)) continue;
      seen.add(key);
      children.push([key, withMember(setAt(item, list.item))]);
    }
    return node(sortChildren(children), false);
  }
  return EMPTY;
}

/** The paths an apply configuration sets (upstream's ToFieldSet, minus the fields nobody owns). */
export function appliedFieldSet(config: Json, type: MapType, tracked: TrackedFields): FieldTree {
  const children: [string, FieldTree][] = [];
  for (const k in config) {
    if (config[k] === undefined || k === 'apiVersion' || k === 'kind' || !tracked(k)) continue;
    if (k === 'metadata') {
      const meta = config['metadata'];
      if (!isObj(meta)) continue;
      const stripped: Json = {};
      for (const mk in meta) if (!STRIPPED_METADATA.has(mk)) stripped[mk] = meta[mk];
      const child = setAt(stripped, objectMetaType());
      if (child !== undefined) children.push([fieldKey(k), child]);
      continue;
    }
    const child = setAt(config[k], childType(type, k));
    if (child !== undefined) children.push([fieldKey(k), child]);
  }
  return node(sortChildren(children), false) ?? EMPTY;
}

// ---- merge ----

/** Upstream's merge order of an associative list: the live order where the configuration leaves it alone, the configuration's order for what it sets. */
function mergeList(l: unknown[], c: unknown[], type: ListType): unknown[] {
  const lKeys = l.map((item, i) => itemKey(type, item) ?? `#l${i}`);
  const cKeys = c.map((item, i) => itemKey(type, item) ?? `#c${i}`);
  const lIndex = new Map<string, unknown>();
  l.forEach((item, i) => {
    if (!lIndex.has(lKeys[i] as string)) lIndex.set(lKeys[i] as string, item);
  });
  const cIndex = new Map<string, unknown>();
  c.forEach((item, i) => {
    if (!cIndex.has(cKeys[i] as string)) cIndex.set(cKeys[i] as string, item);
  });
  const shared = cKeys.filter((k) => lIndex.has(k));
  let next = 0;
  const out: unknown[] = [];
  const emitted = new Set<string>();
  const emit = (k: string, value: unknown) => {
    if (emitted.has(k)) return;
    emitted.add(k);
    out.push(value);
  };
  let li = 0;
  let ci = 0;
  while (li < lKeys.length || ci < cKeys.length) {
    const lk = lKeys[li];
    const ck = cKeys[ci];
    if (lk !== undefined && ck !== undefined) {
      if (lk === ck) {
        emit(lk, mergeAt(lIndex.get(lk), cIndex.get(ck), type.item));
        li++;
        ci++;
        next++;
        continue;
      }
      if (cIndex.has(lk) && next < shared.length && shared[next] !== lk) {
        li++;
        continue;
      }
    }
    if (lk !== undefined && !cIndex.has(lk)) {
      emit(lk, lIndex.get(lk));
      li++;
      continue;
    }
    if (ck !== undefined) {
      emit(ck, mergeAt(lIndex.get(ck), cIndex.get(ck), type.item));
      ci++;
      if (next < shared.length && shared[next] === ck) next++;
      continue;
    }
    li++; // a live element the configuration already placed
  }
  return out;
}

function mergeAt(l: unknown, c: unknown, type: FieldType | undefined): unknown {
  if (c === undefined) return l;
  if (l === undefined || l === null) return c;
  const kind = type?.kind ?? 'deduced';
  if ((kind === 'map' || kind === 'deduced') && isObj(l) && isObj(c)) {
    const out: Json = { ...l };
    for (const k in c) {
      const cv = c[k];
      if (cv === undefined) continue;
      if (cv === null) delete out[k];
      else out[k] = mergeAt(l[k], cv, kind === 'map' ? childType(type as MapType, k) : undefined);
    }
    return out;
  }
  if (kind === 'list' && Array.isArray(l) && Array.isArray(c)) return mergeList(l, c, type as ListType);
  return c;
}

/** The live object with an apply configuration merged in (shares unchanged parts with `live`). */
export function mergeApplied(live: Json, config: Json, type: MapType): Json {
  const out: Json = { ...live };
  for (const k in config) {
    const cv = config[k];
    if (cv === undefined) continue;
    if (cv === null) delete out[k];
    else out[k] = mergeAt(live[k], cv, k === 'metadata' ? objectMetaType() : childType(type, k));
  }
  return out;
}

// ---- prune ----

function pruneAt(v: unknown, last: FieldTree, keep: FieldTree, type: FieldType | undefined): unknown {
  const kind = type?.kind ?? 'deduced';
  if ((kind === 'map' || kind === 'deduced') && isObj(v)) {
    let out: Json | undefined;
    for (const key of childKeys(last)) {
      if (!key.startsWith('f:')) continue;
      const name = key.slice(2);
      if (v[name] === undefined) continue;
      const k = keep[key];
      if (k === undefined) {
        out ??= { ...v };
        delete out[name];
        continue;
      }
      const pruned = pruneAt(v[name], last[key] as FieldTree, k, kind === 'map' ? childType(type as MapType, name) : undefined);
      if (pruned !== v[name]) {
        out ??= { ...v };
        out[name] = pruned;
      }
    }
    return out ?? v;
  }
  if (kind === 'list' && Array.isArray(v)) {
    const list = type as ListType;
    const lastKeys = new Set(childKeys(last));
    let changed = false;
    const out: unknown[] = [];
    for (const item of v) {
      const key = itemKey(list, item);
      if (key === undefined || !lastKeys.has(key)) {
        out.push(item);
        continue;
      }
      const k = keep[key];
      // An element stays only when someone owns the element itself (owning a field inside it does not keep it).
      if (k === undefined || !isMember(k)) {
        changed = true;
        continue;
      }
      const pruned = pruneAt(item, last[key] as FieldTree, k, list.item);
      if (pruned !== item) changed = true;
      out.push(pruned);
    }
    return changed ? out : v;
  }
  return v;
}

/**
 * Removes from `merged` what the applier owned before (`last`) and no one owns
 * now (`keep`: its new field set and every other manager's), as upstream's
 * prune does; apiVersion, kind, metadata itself and its system fields stay.
 */
export function pruneApplied(merged: Json, last: FieldTree, keep: FieldTree, type: MapType): Json {
  let out: Json | undefined;
  for (const key of childKeys(last)) {
    if (!key.startsWith('f:')) continue;
    const name = key.slice(2);
    if (name === 'apiVersion' || name === 'kind' || merged[name] === undefined) continue;
    const k = keep[key];
    if (k === undefined && name !== 'metadata') {
      out ??= { ...merged };
      delete out[name];
      continue;
    }
    const pruned = pruneAt(merged[name], last[key] as FieldTree, k ?? EMPTY, name === 'metadata' ? objectMetaType() : childType(type, name));
    if (pruned !== merged[name]) {
      out ??= { ...merged };
      out[name] = pruned;
    }
  }
  return out ?? merged;
}
