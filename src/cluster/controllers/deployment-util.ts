/**
 * The arithmetic of the Deployment controller (k8s.io/kubernetes
 * pkg/controller/deployment/util and pkg/controller's ReplicaSet orderings),
 * as pure functions over raw ReplicaSet / Deployment JSON:
 * - fenceposts (int-or-percent.ts does the scaling): `maxSurge` rounds up, `maxUnavailable` rounds down, both 0 → unavailable 1;
 * - which ReplicaSet is new (template equal ignoring the hash label, oldest
 *   first) and which are old; `newRSNewReplicas` (how far a rollout may grow
 *   the new set); saturation; `findActiveOrLatest`;
 * - proportional scaling: `getProportion` from the `max-replicas` annotation;
 * - revision and replica annotations, with the revision-history rules;
 * - the orderings: by creation time (name breaks ties), by size (newer or
 *   older first among equals), by revision.
 * Functions that edit (`setNewReplicaSetAnnotations`, `setReplicasAnnotations`)
 * edit the copy they are given and answer whether anything changed.
 */
import { deepEqual } from '../../k8s/json.ts';
import { asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import { parseTime } from '../../k8s/time.ts';
import type { IntOrString, KubeObject } from '../../k8s/types.ts';
import { scaledIntOrPercent } from './int-or-percent.ts';
import { POD_TEMPLATE_HASH_LABEL } from './pod-template-hash.ts';
import { specReplicas } from './replicaset-status.ts';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
const DEPRECATED_ROLLBACK_TO = 'deprecated.deployment.rollback.to';
/** Deployment annotations never copied onto its ReplicaSets. */
const ANNOTATIONS_TO_SKIP = new Set([LAST_APPLIED_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, DEPRECATED_ROLLBACK_TO]);
/** Longest revision-history annotation kept (upstream's maxRevHistoryLengthInChars). */
export const MAX_REV_HISTORY_LENGTH = 2000;
/** Go's math.MaxInt32: the "unset" value of revisionHistoryLimit / progressDeadlineSeconds. */
const MAX_INT32 = 2147483647;

// ---- small accessors ----

export const specOf = (obj: KubeObject): Record<string, unknown> => asRecord(obj['spec']) ?? {};
export const statusNumber = (obj: KubeObject, field: string): number => asNumber(asRecord(obj['status'])?.[field]) ?? 0;
export const annotationsOf = (obj: KubeObject): Record<string, string> => (asRecord(obj.metadata?.annotations) as Record<string, string> | undefined) ?? {};
export const templateOf = (obj: KubeObject): unknown => specOf(obj)['template'];
export const isRecreate = (d: KubeObject): boolean => asString(asRecord(specOf(d)['strategy'])?.['type']) === 'Recreate';
export const isRollingUpdate = (d: KubeObject): boolean => asString(asRecord(specOf(d)['strategy'])?.['type']) === 'RollingUpdate';
export const isPaused = (d: KubeObject): boolean => specOf(d)['paused'] === true;

export function progressDeadlineSeconds(d: KubeObject): number | undefined {
  const n = asNumber(specOf(d)['progressDeadlineSeconds']);
  return n === undefined || n === MAX_INT32 ? undefined : n;
}

export function revisionHistoryLimit(d: KubeObject): number | undefined {
  const n = asNumber(specOf(d)['revisionHistoryLimit']);
  return n === undefined || n === MAX_INT32 ? undefined : n;
}

// ---- IntOrString and fenceposts ----

/** ResolveFenceposts: surge rounds up, unavailable down; when both are 0, unavailable becomes 1. */
export function resolveFenceposts(maxSurge: unknown, maxUnavailable: unknown, desired: number): { ok: true; surge: number; unavailable: number } | { ok: false; error: string } {
  const surge = scaledIntOrPercent((maxSurge ?? 0) as IntOrString, desired, true);
  if (!surge.ok) return surge;
  const unavailable = scaledIntOrPercent((maxUnavailable ?? 0) as IntOrString, desired, false);
  if (!unavailable.ok) return unavailable;
  return { ok: true, surge: surge.value, unavailable: surge.value === 0 && unavailable.value === 0 ? 1 : unavailable.value };
}

function rollingUpdateOf(d: KubeObject): Record<string, unknown> {
  return asRecord(asRecord(specOf(d)['strategy'])?.['rollingUpdate']) ?? {};
}

/** MaxSurge: 0 unless RollingUpdate (and 0 on an invalid value, which validation prevents). */
export function maxSurge(d: KubeObject): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = rollingUpdateOf(d);
  const r = resolveFenceposts(ru['maxSurge'], ru['maxUnavailable'], specReplicas(d));
  return r.ok ? r.surge : 0;
}

/** MaxUnavailable: 0 unless RollingUpdate with replicas > 0; never above replicas. */
export function maxUnavailable(d: KubeObject): number {
  const replicas = specReplicas(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const ru = rollingUpdateOf(d);
  const r = resolveFenceposts(ru['maxSurge'], ru['maxUnavailable'], replicas);
  if (!r.ok) return 0;
  return Math.min(r.unavailable, replicas);
}

// ---- counting ----

export const sumSpecReplicas = (rss: readonly (KubeObject | undefined)[]): number => rss.reduce((n, rs) => n + (rs === undefined ? 0 : specReplicas(rs)), 0);
export const sumStatus = (rss: readonly (KubeObject | undefined)[], field: string): number => rss.reduce((n, rs) => n + (rs === undefined ? 0 : statusNumber(rs, field)), 0);
/** FilterActiveReplicaSets: the sets with spec.replicas > 0. */
export const activeReplicaSets = (rss: readonly (KubeObject | undefined)[]): KubeObject[] => rss.filter((rs): rs is KubeObject => rs !== undefined && specReplicas(rs) > 0);

// ---- orderings ----

const created = (obj: KubeObject): number => parseTime(obj.metadata?.creationTimestamp) ?? 0;
const nameOf = (obj: KubeObject): string => obj.metadata?.name ?? '';

/** ReplicaSetsByCreationTimestamp: older first, then by name. */
export function byCreationTimestamp(a: KubeObject, b: KubeObject): number {
  const d = created(a) - created(b);
  if (d !== 0) return d;
  return nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0;
}

/** ReplicaSetsBySizeNewer: larger first; among equals, newer first (scaling up). */
export function bySizeNewer(a: KubeObject, b: KubeObject): number {
  const d = specReplicas(b) - specReplicas(a);
  return d !== 0 ? d : byCreationTimestamp(b, a);
}

/** ReplicaSetsBySizeOlder: larger first; among equals, older first (scaling down). */
export function bySizeOlder(a: KubeObject, b: KubeObject): number {
  const d = specReplicas(b) - specReplicas(a);
  return d !== 0 ? d : byCreationTimestamp(a, b);
}

/** ReplicaSetsByRevision: lower revision first; equal revisions by creation time. */
export function byRevision(a: KubeObject, b: KubeObject): number {
  const ra = revisionOf(a) ?? 0;
  const rb = revisionOf(b) ?? 0;
  return ra === rb ? byCreationTimestamp(a, b) : ra - rb;
}

// ---- revisions and annotations ----

/** The revision annotation as an integer; 0 when absent, undefined when malformed. */
export function revisionOf(obj: KubeObject): number | undefined {
  const v = annotationsOf(obj)[REVISION_ANNOTATION];
  if (v === undefined) return 0;
  return /^[+-]?\d+$/.test(v) ? Number(v) : undefined;
}

/** MaxRevision: the highest valid revision among the sets (0 for none). */
export function maxRevision(rss: readonly KubeObject[]): number {
  let max = 0;
  for (const rs of rss) {
    const v = revisionOf(rs);
    if (v !== undefined && v > max) max = v;
  }
  return max;
}

function intAnnotation(obj: KubeObject, key: string): number | undefined {
  const v = annotationsOf(obj)[key];
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return undefined;
  const n = Number(v);
  return n >= -2147483648 && n <= MAX_INT32 ? n : undefined;
}

export const desiredReplicasAnnotation = (rs: KubeObject): number | undefined => intAnnotation(rs, DESIRED_REPLICAS_ANNOTATION);
export const maxReplicasAnnotation = (rs: KubeObject): number | undefined => intAnnotation(rs, MAX_REPLICAS_ANNOTATION);

function ensureAnnotations(obj: KubeObject): Record<string, string> {
  const meta = (obj.metadata ??= {});
  const existing = asRecord(meta.annotations) as Record<string, string> | undefined;
  if (existing !== undefined) return existing;
  const fresh: Record<string, string> = {};
  meta.annotations = fresh;
  return fresh;
}

/** SetReplicasAnnotations: desired-replicas and max-replicas; true when either changed. */
export function setReplicasAnnotations(rs: KubeObject, desired: number, max: number): boolean {
  const a = ensureAnnotations(rs);
  let updated = false;
  if (a[DESIRED_REPLICAS_ANNOTATION] !== String(desired)) {
    a[DESIRED_REPLICAS_ANNOTATION] = String(desired);
    updated = true;
  }
  if (a[MAX_REPLICAS_ANNOTATION] !== String(max)) {
    a[MAX_REPLICAS_ANNOTATION] = String(max);
    updated = true;
  }
  return updated;
}

export function replicasAnnotationsNeedUpdate(rs: KubeObject, desired: number, max: number): boolean {
  const a = annotationsOf(rs);
  return a[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || a[MAX_REPLICAS_ANNOTATION] !== String(max);
}

/**
 * SetNewReplicaSetAnnotations: copy the Deployment's annotations (but not the
 * skipped ones), raise the revision to `newRevision` when it is lower —
 * remembering the old one in the revision history when the set is reused
 * (a rollback) — and, for a set about to be created, the replica annotations.
 */
export function setNewReplicaSetAnnotations(d: KubeObject, rs: KubeObject, newRevision: number, exists: boolean, historyLimit = MAX_REV_HISTORY_LENGTH): boolean {
  const a = ensureAnnotations(rs);
  let changed = false;
  for (const [k, v] of Object.entries(annotationsOf(d))) {
    if (ANNOTATIONS_TO_SKIP.has(k) || a[k] === v) continue;
    a[k] = v;
    changed = true;
  }
  const oldRevision = a[REVISION_ANNOTATION];
  let oldRevisionInt = 0;
  if (oldRevision !== undefined && oldRevision !== '') {
    if (!/^[+-]?\d+$/.test(oldRevision)) return changed;
    oldRevisionInt = Number(oldRevision);
  }
  if (oldRevisionInt < newRevision) {
    a[REVISION_ANNOTATION] = String(newRevision);
    changed = true;
    if (oldRevision !== undefined) appendRevisionHistory(a, oldRevision, historyLimit);
  }
  if (!exists && setReplicasAnnotations(rs, specReplicas(d), specReplicas(d) + maxSurge(d))) changed = true;
  return changed;
}

/** Adds `oldRevision` to the comma-separated history, dropping the oldest entries to stay within `limit` characters. */
function appendRevisionHistory(a: Record<string, string>, oldRevision: string, limit: number): void {
  const history = a[REVISION_HISTORY_ANNOTATION] ?? '';
  const entries = history.split(',');
  if ((entries[0] ?? '') === '') {
    a[REVISION_HISTORY_ANNOTATION] = oldRevision;
    return;
  }
  let total = history.length + oldRevision.length + 1;
  let start = 0;
  while (total > limit && start < entries.length) {
    total -= (entries[start] ?? '').length + 1;
    start++;
  }
  if (total <= limit) a[REVISION_HISTORY_ANNOTATION] = [...entries.slice(start), oldRevision].join(',');
}

/** SetDeploymentRevision: true when the Deployment's revision annotation changed. */
export function setDeploymentRevision(d: KubeObject, revision: string): boolean {
  const a = ensureAnnotations(d);
  if (a[REVISION_ANNOTATION] === revision) return false;
  a[REVISION_ANNOTATION] = revision;
  return true;
}

// ---- new and old ReplicaSets ----

/** Drops null, empty lists and empty maps, as Go's semantic equality treats nil and empty alike. */
function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map((x) => normalize(x) ?? null);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const n = normalize(x);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v === null ? undefined : v;
}

/** EqualIgnoreHash: pod templates equal once the pod-template-hash label is removed from both. */
export function equalIgnoreHash(t1: unknown, t2: unknown): boolean {
  const strip = (t: unknown): unknown => {
    const copy = structuredClone(asRecord(t) ?? {});
    const labels = asRecord(asRecord(copy['metadata'])?.['labels']);
    if (labels !== undefined) delete labels[POD_TEMPLATE_HASH_LABEL];
    return normalize(copy);
  };
  return deepEqual(strip(t1) ?? null, strip(t2) ?? null);
}

/** FindNewReplicaSet: the oldest set whose template matches the Deployment's. */
export function findNewReplicaSet(d: KubeObject, rss: readonly KubeObject[]): KubeObject | undefined {
  return [...rss].sort(byCreationTimestamp).find((rs) => equalIgnoreHash(templateOf(rs), templateOf(d)));
}

/** FindOldReplicaSets: every set but the new one (all, and those with replicas > 0). */
export function findOldReplicaSets(d: KubeObject, rss: readonly KubeObject[]): { required: KubeObject[]; all: KubeObject[] } {
  const uid = findNewReplicaSet(d, rss)?.metadata?.uid;
  const all = rss.filter((rs) => uid === undefined || rs.metadata?.uid !== uid);
  return { required: all.filter((rs) => specReplicas(rs) !== 0), all };
}

/** NewRSNewReplicas: what the new set may be scaled to now. */
export function newRSNewReplicas(d: KubeObject, allRSs: readonly KubeObject[], newRS: KubeObject): { ok: true; value: number } | { ok: false; error: string } {
  const replicas = specReplicas(d);
  if (isRecreate(d)) return { ok: true, value: replicas };
  if (!isRollingUpdate(d)) return { ok: false, error: `deployment type ${String(asRecord(specOf(d)['strategy'])?.['type'])} isn't supported` };
  const surge = scaledIntOrPercent(rollingUpdateOf(d)['maxSurge'] as IntOrString | undefined, replicas, true);
  if (!surge.ok) return surge;
  const current = sumSpecReplicas(allRSs);
  const maxTotal = replicas + surge.value;
  const newReplicas = specReplicas(newRS);
  if (current >= maxTotal) return { ok: true, value: newReplicas };
  return { ok: true, value: newReplicas + Math.min(maxTotal - current, replicas - newReplicas) };
}

/** IsSaturated: the new set is at full size, says so in its annotation, and all of it is available. */
export function isSaturated(d: KubeObject, rs: KubeObject | undefined): boolean {
  if (rs === undefined) return false;
  const replicas = specReplicas(d);
  return specReplicas(rs) === replicas && desiredReplicasAnnotation(rs) === replicas && statusNumber(rs, 'availableReplicas') === replicas;
}

/** FindActiveOrLatest: the only active set; with none active, the new one or else the newest old one; undefined with several. */
export function findActiveOrLatest(newRS: KubeObject | undefined, oldRSs: readonly KubeObject[]): KubeObject | undefined {
  if (newRS === undefined && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => byCreationTimestamp(b, a));
  const active = activeReplicaSets([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

// ---- proportional scaling ----

/** Go's math.Round: halves away from zero. */
const roundHalfAway = (x: number): number => Math.sign(x) * Math.round(Math.abs(x));

/** getReplicaSetFraction: this set's share of the change in the Deployment's maximum size. */
function replicaSetFraction(rs: KubeObject, d: KubeObject): number {
  const replicas = specReplicas(d);
  if (replicas === 0) return -specReplicas(rs);
  const maxReplicas = replicas + maxSurge(d);
  const annotated = maxReplicasAnnotation(rs) ?? statusNumber(d, 'replicas');
  // Upstream divides by zero here only in states it never reaches (an unscaled set of size 0).
  if (annotated === 0) return 0;
  const newSize = (specReplicas(rs) * maxReplicas) / annotated;
  return roundHalfAway(newSize) - specReplicas(rs);
}

/** GetProportion: how many replicas `rs` gains (or loses) of `toAdd`, given `added` handed out so far. */
export function getProportion(rs: KubeObject | undefined, d: KubeObject, toAdd: number, added: number): number {
  if (rs === undefined || specReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = replicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

export interface ProportionalScale {
  /** 'up', 'down' or '' (nothing to add or remove). */
  operation: 'up' | 'down' | '';
  /** The active sets in the order they are written, with their new sizes. */
  sizes: { rs: KubeObject; size: number }[];
}

/**
 * The proportional part of upstream's `scale`: the active sets share what the
 * Deployment may add (or must remove) — its replicas plus maxSurge, minus what
 * they hold — in proportion to their size; the largest set goes first (among
 * equals the newest when growing, the oldest when shrinking) and takes what
 * rounding left over, never going below 0.
 */
export function proportionalScale(d: KubeObject, activeRSs: readonly KubeObject[]): ProportionalScale {
  const replicas = specReplicas(d);
  const allowed = replicas > 0 ? replicas + maxSurge(d) : 0;
  const toAdd = allowed - sumSpecReplicas(activeRSs);
  const ordered = [...activeRSs];
  let operation: ProportionalScale['operation'] = '';
  if (toAdd > 0) {
    ordered.sort(bySizeNewer);
    operation = 'up';
  } else if (toAdd < 0) {
    ordered.sort(bySizeOlder);
    operation = 'down';
  }
  let added = 0;
  const sizes = ordered.map((rs) => {
    if (toAdd === 0) return { rs, size: specReplicas(rs) };
    const proportion = getProportion(rs, d, toAdd, added);
    added += proportion;
    return { rs, size: specReplicas(rs) + proportion };
  });
  const first = sizes[0];
  if (first !== undefined && toAdd !== 0) first.size = Math.max(0, first.size + toAdd - added);
  return { operation, sizes };
}
