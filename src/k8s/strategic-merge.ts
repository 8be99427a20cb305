/**
 * Kubernetes strategic merge patch (`application/strategic-merge-patch+json`),
 * applied as k8s.io/apimachinery/pkg/util/strategicpatch applies it on the
 * server (StrategicMergeMapPatch: parallel lists merged, unmatched nulls ignored).
 *
 * Driven by a PatchMeta schema (tables in patch-meta.ts) that says, per field,
 * how lists merge:
 * - maps merge recursively; `null` deletes a key;
 * - lists replace, unless the field's strategy is `merge`: lists of objects
 *   then merge element-wise by `mergeKey`, lists of primitives as a set;
 * - directives: `$patch: replace|delete` in a map or as a list element,
 *   `$retainKeys`, `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`.
 *   `$patch: merge` is rejected, exactly as upstream's apply path rejects it.
 * Ordering follows upstream: `$setElementOrder` first, then the patch's order,
 *   then the live order; without `$setElementOrder`, new elements go first.
 *
 * Deliberate differences, because we store raw JSON where the real API server
 * would decode into typed structs: fields unknown to the PatchMeta merge as
 * maps / replace as lists instead of failing ("unable to find api field"),
 * and values copied verbatim from the patch are cleaned of nulls and
 * directives (the typed decode would drop them).
 * Inputs are never mutated. Start with `strategicMergePatch`.
 */
import { deepClone, isPlainObject, setProperty } from './json.ts';
import {
  DELETE_PREFIX,
  DIRECTIVE,
  ORDER_PREFIX,
  PatchError,
  RETAIN_KEYS,
  errBadArgType,
  errBadPatchType,
  errNoMergeKey,
  goFormat,
  hasOwn,
  kindOf,
  sanitize,
  type JsonMap,
} from './strategic-merge-values.ts';
import { elementKind, normalizeOrder, partitionMaps, partitionPrimitives } from './strategic-merge-order.ts';
import type { PatchMeta } from './patch-meta.ts';

export type { PatchMeta, PatchStrategy } from './patch-meta.ts';

export type StrategicMergeResult = { ok: true; value: unknown } | { ok: false; error: string };

export {
  OBJECT_META_PATCH_META,
  POD_PATCH_META,
  POD_SPEC_PATCH_META,
  POD_TEMPLATE_SPEC_PATCH_META,
  patchMetaForKind,
} from './patch-meta.ts';

function childMeta(meta: PatchMeta | undefined, key: string): PatchMeta | undefined {
  if (meta === undefined) return undefined;
  if (meta.fields !== undefined && Object.prototype.hasOwnProperty.call(meta.fields, key)) return meta.fields[key];
  return meta.map;
}

/** extractRetainKeysPatchStrategy: retainKeys only affects how clients build patches, not how they apply. */
function strategyOf(meta: PatchMeta | undefined): 'merge' | 'replace' | '' {
  switch (meta?.strategy) {
    case 'merge':
    case 'merge,retainKeys':
      return 'merge';
    case 'replace':
      return 'replace';
    default:
      return '';
  }
}

function setSanitized(original: JsonMap, key: string, value: unknown): void {
  const s = sanitize(value);
  if (s.keep) setProperty(original, key, s.value);
  else delete original[key];
}

function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw new PatchError(prefix === DELETE_PREFIX ? 'invalid patch format of primitive list' : 'invalid patch format of setElementOrder list');
  }
  return key.slice(slash + 1);
}

// ---------------------------------------------------------------------------
// Maps

function mergeMap(original: JsonMap | undefined, patch: JsonMap, meta: PatchMeta | undefined): JsonMap {
  if (hasOwn(patch, DIRECTIVE)) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') {
      delete patch[DIRECTIVE];
      return sanitize(patch).value as JsonMap;
    }
    if (directive === 'delete') return {};
    throw errBadPatchType(directive, patch);
  }
  const target = original ?? {};
  applyRetainKeys(target, patch);
  mergeOrderedLists(target, patch, meta);

  for (const k of Object.keys(patch)) {
    const patchV = patch[k];
    if (patchV === undefined) continue;
    let key = k;
    const isDeleteList = k.startsWith(DELETE_PREFIX);
    if (isDeleteList) key = extractKey(k, DELETE_PREFIX);

    if (patchV === null) {
      delete target[key];
      continue;
    }
    if (!hasOwn(target, key) || kindOf(target[key]) !== kindOf(patchV)) {
      if (!isDeleteList) setSanitized(target, key, patchV);
      continue;
    }
    const fieldMeta = childMeta(meta, key);
    const strategy = strategyOf(fieldMeta);
    const current = target[key];
    if (isPlainObject(current) && isPlainObject(patchV)) {
      if (strategy === 'replace') setSanitized(target, key, patchV);
      else setProperty(target, key, mergeMap(current, patchV, fieldMeta));
    } else if (Array.isArray(current) && Array.isArray(patchV)) {
      setProperty(target, key, mergeListField(current, patchV, fieldMeta, strategy, isDeleteList));
    } else {
      setProperty(target, key, patchV);
    }
  }
  return target;
}

/** `$retainKeys`: keys of the original not listed are cleared; every non-null patch key must be listed. */
function applyRetainKeys(original: JsonMap, patch: JsonMap): void {
  if (!hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw new PatchError('invalid patch format of retainKeys');
  const retained = new Set<unknown>(list);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_PREFIX) || k.startsWith(ORDER_PREFIX)) continue;
    if (!retained.has(k)) throw new PatchError('invalid patch format of retainKeys');
  }
  for (const k of Object.keys(original)) if (!retained.has(k)) delete original[k];
}

// ---------------------------------------------------------------------------
// Lists

function mergeListField(original: unknown[], patch: unknown[], meta: PatchMeta | undefined, strategy: string, isDeleteList: boolean): unknown[] {
  if (strategy === 'merge' || isDeleteList) return mergeList(original, patch, meta, isDeleteList);
  return sanitize(patch).value as unknown[];
}

function mergeList(original: unknown[], patch: unknown[], meta: PatchMeta | undefined, isDeleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch);
  const mergeKey = meta?.mergeKey ?? '';
  let server = original;
  let items = patch;
  let merged: unknown[];
  if (kind !== 'map') {
    if (isDeleteList) {
      const doomed = new Set(patch);
      return original.filter((v) => !doomed.has(v));
    }
    merged = [...new Set([...original, ...patch])];
  } else {
    if (mergeKey === '') throw new PatchError('cannot merge lists without merge key');
    [server, items] = applyListDirectives(original as JsonMap[], patch as JsonMap[], mergeKey);
    merged = mergeByKey(server as JsonMap[], items as JsonMap[], mergeKey, meta?.items);
  }
  const [patchItems, serverOnly] = mergeKey === '' ? partitionPrimitives(merged, items) : partitionMaps(merged, items, mergeKey);
  return normalizeOrder(patchItems, serverOnly, items, server, mergeKey, kind);
}

/** `$patch: delete` elements remove their key from the original; `$patch: replace` makes the rest of the patch the list. */
function applyListDirectives(original: JsonMap[], patch: JsonMap[], mergeKey: string): [JsonMap[], JsonMap[]] {
  let server = original;
  const plain: JsonMap[] = [];
  let replace = false;
  for (const v of patch) {
    if (!hasOwn(v, DIRECTIVE)) {
      plain.push(v);
      continue;
    }
    const directive = v[DIRECTIVE];
    if (directive === 'delete') {
      if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
      server = server.filter((e) => !(hasOwn(e, mergeKey) && e[mergeKey] === v[mergeKey]));
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw new PatchError('merging lists cannot yet be specified in the patch');
    } else {
      throw errBadPatchType(directive, v);
    }
  }
  if (replace) return [plain.map((v) => sanitize(v).value as JsonMap), []];
  return [server, plain];
}

/** Patch elements merge into the original element with the same key, or are appended. */
function mergeByKey(original: JsonMap[], patch: JsonMap[], mergeKey: string, itemMeta: PatchMeta | undefined): JsonMap[] {
  const result = [...original];
  for (const v of patch) {
    if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
    const i = result.findIndex((e) => hasOwn(e, mergeKey) && e[mergeKey] === v[mergeKey]);
    if (i >= 0) result[i] = mergeMap(result[i], v, itemMeta);
    else result.push(sanitize(v).value as JsonMap);
  }
  return result;
}

// ---------------------------------------------------------------------------
// $setElementOrder

function mergeOrderedLists(original: JsonMap, patch: JsonMap, meta: PatchMeta | undefined): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(ORDER_PREFIX)) continue;
    const order = patch[key];
    delete patch[key];
    if (order === undefined) continue;
    if (!Array.isArray(order)) throw errBadArgType('[]interface {}', order);
    const field = extractKey(key, ORDER_PREFIX);
    const foundOriginal = hasOwn(original, field);
    const foundPatch = Object.prototype.hasOwnProperty.call(patch, field) && patch[field] !== undefined;
    const originalList = foundOriginal ? original[field] : [];
    const patchList = foundPatch ? patch[field] : [];
    if (!Array.isArray(originalList)) throw errBadArgType('[]interface {}', originalList);
    if (!Array.isArray(patchList)) throw errBadArgType('[]interface {}', patchList);
    const fieldMeta = childMeta(meta, field);
    const mergeKey = fieldMeta?.mergeKey ?? '';
    validateAgainstOrder(patchList, order, mergeKey);
    let merged: unknown[];
    if (foundOriginal && !foundPatch) merged = originalList;
    else if (!foundOriginal && foundPatch) merged = sanitize(patchList).value as unknown[];
    else if (foundOriginal && foundPatch) merged = mergeListField(originalList, patchList, fieldMeta, strategyOf(fieldMeta), false);
    else continue;
    const [patchItems, serverOnly] = mergeKey === '' ? partitionPrimitives(merged, order) : partitionMaps(merged, order, mergeKey);
    const kind = elementKind(originalList, patchList);
    setProperty(original, field, normalizeOrder(patchItems, serverOnly, order, originalList, mergeKey, kind));
    delete patch[field];
  }
}

function sameMergeKey(left: unknown, right: unknown, mergeKey: string): boolean {
  if (mergeKey === '') return left === right;
  if (!isPlainObject(left)) throw errBadArgType('map[string]interface {}', left);
  if (!isPlainObject(right)) throw errBadArgType('map[string]interface {}', right);
  if (!hasOwn(left, mergeKey)) throw errNoMergeKey(left, mergeKey);
  if (!hasOwn(right, mergeKey)) throw errNoMergeKey(right, mergeKey);
  return left[mergeKey] === right[mergeKey];
}

/** The patch list's (non-deleting) elements must appear in `$setElementOrder`, in the same relative order. */
function validateAgainstOrder(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (patchList.length === 0 || order.length === 0) return;
  let items = patchList;
  if (mergeKey !== '') {
    for (const v of patchList) if (!isPlainObject(v)) throw errBadArgType('map[string]interface {}', v);
    items = patchList.filter((v) => (v as JsonMap)[DIRECTIVE] !== 'delete');
  }
  let p = 0;
  let o = 0;
  while (p < items.length && o < order.length) {
    const item = items[p];
    if (isPlainObject(item) && hasOwn(item, DIRECTIVE)) {
      p++;
      continue;
    }
    if (sameMergeKey(item, order[o], mergeKey)) p++;
    o++;
  }
  if (p < items.length) {
    throw new PatchError(`the order in patch list:\n${goFormat(patchList)}\n doesn't match ${ORDER_PREFIX} list:\n${goFormat(order)}`);
  }
}

// ---------------------------------------------------------------------------

/**
 * Applies a strategic merge patch to `original` (an object; null/undefined
 * read as `{}`) following `meta`. A null patch changes nothing.
 */
export function strategicMergePatch(original: unknown, patch: unknown, meta: PatchMeta): StrategicMergeResult {
  if (patch === null || patch === undefined) return { ok: true, value: deepClone(original ?? {}) };
  if (!isPlainObject(patch)) return { ok: false, error: 'invalid JSON document' };
  if (original !== null && original !== undefined && !isPlainObject(original)) return { ok: false, error: 'invalid JSON document' };
  try {
    const base = original === null || original === undefined ? {} : deepClone(original);
    return { ok: true, value: mergeMap(base, deepClone(patch), meta) };
  } catch (e) {
    if (e instanceof PatchError) return { ok: false, error: e.message };
    throw e;
  }
}
