/**
 * Element order of merged lists, as strategicpatch's normalizeElementOrder and
 * mergeSortedSlice produce it: patch items follow the patch (or
 * `$setElementOrder`), live-only items follow the live list, and the two are
 * interleaved using the live positions. Also the element-kind check.
 */
import { isPlainObject } from './json.ts';
import { DIRECTIVE, PatchError, errBadArgType, errNoMergeKey, goFormat, hasOwn, kindOf, type JsonMap, type Kind } from './strategic-merge-values.ts';

/** The common element kind of the given lists (sliceElementType). */
export function elementKind(...lists: unknown[][]): Kind {
  let kind: Kind | undefined;
  for (const list of lists) {
    for (const v of list) {
      const k = kindOf(v);
      if (kind === undefined) {
        if (k === 'slice') throw new PatchError('lists of lists are not supported');
        kind = k;
      } else if (k !== kind) {
        throw new PatchError(`list element types are not identical: ${goFormat(lists)}`);
      }
    }
  }
  if (kind === undefined) throw new PatchError('no elements in any of the given slices');
  return kind;
}

export function partitionPrimitives(list: unknown[], by: unknown[]): [unknown[], unknown[]] {
  const inPatch = new Set(by);
  return [list.filter((v) => inPatch.has(v)), list.filter((v) => !inPatch.has(v))];
}

export function partitionMaps(list: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of list) {
    if (!isPlainObject(v)) throw errBadArgType('map[string]interface {}', v);
    if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
    const found = by.some((e, i) => {
      if (!isPlainObject(e)) throw new PatchError(`value for key ${i} is not a map`);
      return hasOwn(e, mergeKey) && e[mergeKey] === v[mergeKey];
    });
    (found ? inPatch : serverOnly).push(v);
  }
  return [inPatch, serverOnly];
}

export function indexIn(list: unknown[], item: unknown, mergeKey: string, kind: Kind): number {
  if (kind !== 'map') return list.indexOf(item);
  const key = (v: unknown): unknown => (isPlainObject(v) ? v[mergeKey] : undefined);
  return list.findIndex((v) => key(v) === key(item));
}

/** Stable sort by position in `order` (elements not in it keep their relative order, last); `$patch: delete` elements go last. */
export function sortByOrder(items: unknown[], order: unknown[], mergeKey: string, kind: Kind): unknown[] {
  let toSort = items;
  let deletes: unknown[] = [];
  if (kind === 'map') {
    for (const v of [...items, ...order]) {
      if (!isPlainObject(v)) throw errBadArgType('map[string]interface {}', v);
      if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
    }
    toSort = items.filter((v) => (v as JsonMap)[DIRECTIVE] !== 'delete');
    deletes = items.filter((v) => (v as JsonMap)[DIRECTIVE] === 'delete');
  }
  const pos = (v: unknown): number => {
    const i = indexIn(order, v, mergeKey, kind);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return [...[...toSort].sort((a, b) => pos(a) - pos(b)), ...deletes];
}

/**
 * normalizeElementOrder: patch items in patch order, server-only items in live
 * order, then interleaved: a server-only item is placed before the next patch
 * item only when the live list already had it before that item.
 */
export function normalizeOrder(patchItems: unknown[], serverOnly: unknown[], patchOrder: unknown[], serverOrder: unknown[], mergeKey: string, kind: Kind): unknown[] {
  const right = sortByOrder(patchItems, patchOrder, mergeKey, kind);
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, kind);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    const li = indexIn(serverOrder, left[i], mergeKey, kind);
    const ri = indexIn(serverOrder, right[j], mergeKey, kind);
    if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
    else out.push(right[j++]);
  }
  return [...out, ...left.slice(i), ...right.slice(j)];
}
