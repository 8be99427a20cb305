/**
 * Revision history of a workload controller that versions its pods with
 * ControllerRevisions (upstream's pkg/controller/history, as the StatefulSet
 * controller and OpenKruise's CloneSet use it). Pure: the controllers perform
 * the writes (controller-history.ts).
 *
 * - A revision records the part of the set that versions its pods: the pod
 *   template, as the patch `{"spec":{"template":{…,"$patch":"replace"}}}`
 *   (upstream's getPatch). Applying it to the live set gives the set "as of"
 *   that revision (`applyRevision`).
 * - Its name is `<set>-<hash>`: FNV-1 (32 bits) over the patch serialized as
 *   Go's json.Marshal prints a map (keys sorted at every level, `<`, `>`, `&`
 *   escaped), then over the collision count in decimal, printed in decimal
 *   through apimachinery's "safe" alphabet. Go serializes the template from a
 *   typed struct, so fields it would print as zero values (e.g. a template's
 *   `creationTimestamp: null`) are not part of our bytes: names are stable and
 *   change with the template as upstream's do, but may differ from a real
 *   cluster's for the same manifest.
 * - Two revisions are equal when their data are (deep) equal; the history is
 *   ordered by revision number, then creation time, then name.
 * Start at `newControllerRevision` and `sortRevisions`.
 */
import { deepClone, deepEqual, isPlainObject } from '../../k8s/json.ts';
import { ownerReferenceFor } from '../../k8s/owner.ts';
import { asNumber, asRecord, asString, stringMap } from '../../k8s/raw-json.ts';
import { parseTime } from '../../k8s/time.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { canonicalJson, safeEncodeString } from './pod-template-hash.ts';

/** The label every ControllerRevision carries with its hash (history.ControllerRevisionHashLabel). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';
/** The label a StatefulSet's (and a CloneSet's) pods carry with the name of their revision. */
export const CONTROLLER_REVISION_LABEL = 'controller-revision-hash';

export interface ControllerRevision extends KubeObject {
  data?: unknown;
  revision?: number;
}

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;
const MAX_PREFIX = 223;

/** FNV-1 (multiply, then xor: Go's `hash/fnv.New32`), 32 bits, continuing from `hash`. */
export function fnv32(bytes: Uint8Array, hash = FNV32_OFFSET): number {
  let h = hash >>> 0;
  for (const b of bytes) {
    h = Math.imul(h, FNV32_PRIME) >>> 0;
    h = (h ^ b) >>> 0;
  }
  return h >>> 0;
}

/** JSON as Go's encoding/json prints a map: sorted keys and HTML-safe escapes. */
export function goJson(value: unknown): string {
  return canonicalJson(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** The pod template of a set (an empty object when missing or malformed). */
export function templateOf(set: KubeObject): Record<string, unknown> {
  return asRecord(asRecord(set['spec'])?.['template']) ?? {};
}

/** getPatch: what a revision stores — the template, marked to replace the live one. */
export function revisionPatch(set: KubeObject): Record<string, unknown> {
  const template = deepClone(templateOf(set));
  template['$patch'] = 'replace';
  return { spec: { template } };
}

/** HashControllerRevision: the hash of the data, salted with the collision count. */
export function hashRevision(data: unknown, collisionCount: number): string {
  const encoder = new TextEncoder();
  let h = fnv32(encoder.encode(goJson(data ?? null)));
  h = fnv32(encoder.encode(String(Math.trunc(collisionCount))), h);
  return safeEncodeString(String(h));
}

/** ControllerRevisionName: `<prefix>-<hash>`, the prefix cut so the name stays a valid DNS subdomain. */
export function revisionName(prefix: string, hash: string): string {
  return `${prefix.length > MAX_PREFIX ? prefix.slice(0, MAX_PREFIX) : prefix}-${hash}`;
}

/** The apiVersion and kind a revision's controller reference names. */
export interface RevisionOwnerKind {
  apiVersion: string;
  kind: string;
}

/**
 * newRevision + history.NewControllerRevision: the revision the set would
 * create now, numbered `revision`, named with `collisionCount`. It carries the
 * template's labels (plus the hash label), the set's annotations, and a
 * controller reference to the set (as `owner` names its kind).
 */
export function newControllerRevision(set: KubeObject, owner: RevisionOwnerKind, revision: number, collisionCount: number): ControllerRevision {
  const data = revisionPatch(set);
  const hash = hashRevision(data, collisionCount);
  const labels: Record<string, string> = Object.fromEntries(stringMap(asRecord(templateOf(set)['metadata'])?.['labels']));
  labels[CONTROLLER_REVISION_HASH_LABEL] = hash;
  const metadata: ControllerRevision['metadata'] = {
    name: revisionName(set.metadata?.name ?? '', hash),
    namespace: set.metadata?.namespace ?? '',
    labels,
    ownerReferences: [ownerReferenceFor({ ...set, apiVersion: owner.apiVersion, kind: owner.kind })],
  };
  const annotations = Object.fromEntries(stringMap(set.metadata?.annotations));
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata, data, revision };
}

export function revisionNumber(r: ControllerRevision): number {
  return asNumber(r.revision) ?? 0;
}

/** history.SortControllerRevisions: by revision number, then creation time, then name. */
export function sortRevisions<T extends ControllerRevision>(revisions: readonly T[]): T[] {
  return [...revisions].sort((a, b) => {
    const byNumber = revisionNumber(a) - revisionNumber(b);
    if (byNumber !== 0) return byNumber;
    const ta = parseTime(a.metadata?.creationTimestamp) ?? 0;
    const tb = parseTime(b.metadata?.creationTimestamp) ?? 0;
    if (ta !== tb) return ta - tb;
    const na = a.metadata?.name ?? '';
    const nb = b.metadata?.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
}

/** history.EqualRevision: same recorded data. */
export function equalRevision(a: ControllerRevision | undefined, b: ControllerRevision | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return deepEqual(a.data ?? null, b.data ?? null);
}

/** history.FindEqualRevisions, in the order given. */
export function findEqualRevisions<T extends ControllerRevision>(revisions: readonly T[], needle: ControllerRevision): T[] {
  return revisions.filter((r) => equalRevision(r, needle));
}

/** nextRevision: one more than the highest number of a sorted history, 1 for an empty one. */
export function nextRevisionNumber(sorted: readonly ControllerRevision[]): number {
  const last = sorted[sorted.length - 1];
  return last === undefined ? 1 : revisionNumber(last) + 1;
}

/**
 * ApplyRevision: the set with the template its revision recorded. Malformed
 * data leaves the live template in place (upstream would fail the sync; a
 * revision we cannot read must not stop the set from being managed).
 */
export function applyRevision(set: KubeObject, revision: ControllerRevision): KubeObject {
  const spec = asRecord(asRecord(revision.data)?.['spec']);
  const recorded = spec?.['template'];
  if (!isPlainObject(recorded)) return set;
  const template = deepClone(recorded);
  delete template['$patch'];
  return { ...set, spec: { ...(asRecord(set['spec']) ?? {}), template } };
}

/** The name of a revision ('' when missing). */
export function nameOf(obj: KubeObject | undefined): string {
  return asString(obj?.metadata?.name) ?? '';
}
