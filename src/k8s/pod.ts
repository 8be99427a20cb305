/**
 * Pod predicates and accessors with the semantics of k8s.io/kubernetes
 * pkg/api/v1/pod, pkg/controller (IsPodActive, deletion cost) and the
 * scheduler's effective resource request (component-helpers PodRequests).
 *
 * Invariants: "active" means phase not Succeeded/Failed and no
 * deletionTimestamp (spec §1.4, user-issues #16); an empty phase reads as ''.
 * Every accessor tolerates missing or malformed fields.
 */
import type { KubeObject, Pod, PodCondition, PodStatus } from './types.ts';
import { parseTime } from './time.ts';
import { parseQuantityNanos } from './quantity.ts';
import { isPlainObject } from './json.ts';
import { boundedMemo } from './memo.ts';

/** Upstream's annotation: a ReplicaSet scale-down removes pods with a lower cost first (Kubernetes ≥ 1.22). */
export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';

export { controllerRef } from './owner.ts';

export function podPhase(pod: Pod): string {
  const phase: unknown = pod?.status?.phase;
  return typeof phase === 'string' ? phase : '';
}

export function isPodTerminating(pod: Pod): boolean {
  const ts: unknown = pod?.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null;
}

/** Not finished (Succeeded/Failed) and not being deleted. */
export function isPodActive(pod: Pod): boolean {
  const phase = podPhase(pod);
  return phase !== 'Succeeded' && phase !== 'Failed' && !isPodTerminating(pod);
}

/** The first condition of `type` (as upstream's GetPodCondition). */
export function getPodCondition(status: PodStatus | undefined, type: string): PodCondition | undefined {
  const conditions: unknown = status?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  for (const c of conditions as unknown[]) {
    if (isPlainObject(c) && c.type === type) return c as unknown as PodCondition;
  }
  return undefined;
}

export function isPodReady(pod: Pod): boolean {
  return getPodCondition(pod?.status, 'Ready')?.status === 'True';
}

/** When a ready pod became ready (epoch ms); undefined when not ready or the time is missing. */
export function podReadyTime(pod: Pod): number | undefined {
  const ready = getPodCondition(pod?.status, 'Ready');
  if (ready?.status !== 'True') return undefined;
  const t: unknown = ready.lastTransitionTime;
  return parseTime(typeof t === 'string' ? t : undefined);
}

/** The highest restartCount among the (regular) container statuses; init containers do not count. */
export function maxContainerRestarts(pod: Pod): number {
  const statuses: unknown = pod?.status?.containerStatuses;
  let max = 0;
  if (!Array.isArray(statuses)) return max;
  for (const s of statuses as unknown[]) {
    if (isPlainObject(s) && typeof s.restartCount === 'number' && s.restartCount > max) max = s.restartCount;
  }
  return max;
}

/** Condition PodScheduled=False with reason Unschedulable, as the scheduler marks a pod it cannot place. */
export function isPodUnschedulable(pod: Pod): boolean {
  const c = getPodCondition(pod?.status, 'PodScheduled');
  return c !== undefined && c.status === 'False' && c.reason === 'Unschedulable';
}

export function isPodScheduled(pod: Pod): boolean {
  const nodeName: unknown = pod?.spec?.nodeName;
  return typeof nodeName === 'string' && nodeName !== '';
}

export type GroupVersionResult = { ok: true; group: string; version: string } | { ok: false; error: string };

/** schema.ParseGroupVersion: "v1" → core group; "apps/v1" → apps; "" and "/" are the empty group-version. */
export function apiVersionGroup(apiVersion: string): GroupVersionResult {
  if (typeof apiVersion !== 'string') return { ok: false, error: `unexpected GroupVersion string: ${String(apiVersion)}` };
  return parsedGroupVersion(apiVersion);
}

/** Admission splits the same few apiVersions several times per pod: each is split once (answers are frozen, shared). */
const parsedGroupVersion = boundedMemo(256, (apiVersion: string) => apiVersion, (apiVersion: string): GroupVersionResult => Object.freeze(splitGroupVersion(apiVersion)));

function splitGroupVersion(apiVersion: string): GroupVersionResult {
  if (apiVersion === '' || apiVersion === '/') return { ok: true, group: '', version: '' };
  const i = apiVersion.indexOf('/');
  if (i < 0) return { ok: true, group: '', version: apiVersion };
  if (apiVersion.indexOf('/', i + 1) < 0) return { ok: true, group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
  return { ok: false, error: `unexpected GroupVersion string: ${apiVersion}` };
}

/**
 * The `controller.kubernetes.io/pod-deletion-cost` annotation as an int32, as
 * the ReplicaSet controller reads it: absent, "+1", "007", non-integers and
 * out-of-range values all count as 0.
 */
export function podDeletionCost(pod: KubeObject): number {
  const annotations: unknown = pod?.metadata?.annotations;
  if (!isPlainObject(annotations)) return 0;
  const value = annotations[POD_DELETION_COST_ANNOTATION];
  if (typeof value !== 'string') return 0;
  // The first character must be '-', a non-zero digit, or the whole value must be "0".
  if (!/^(-|[1-9]|0$)/.test(value)) return 0;
  if (!/^-?[0-9]+$/.test(value)) return 0;
  const n = Number(value);
  // `|| 0` turns "-0" into 0 rather than -0.
  return n >= -2147483648 && n <= 2147483647 ? n || 0 : 0;
}

// ---------------------------------------------------------------------------
// Effective resource requests (spec: the scheduler's Fit plugin)

type ResourceSums = Map<string, bigint>;

function addRequests(into: ResourceSums, list: unknown): void {
  if (!isPlainObject(list)) return;
  for (const [name, q] of Object.entries(list)) {
    const nanos = typeof q === 'string' || typeof q === 'number' ? parseQuantityNanos(q) : undefined;
    into.set(name, (into.get(name) ?? 0n) + (nanos ?? 0n));
  }
}

function maxInto(into: ResourceSums, other: ResourceSums): void {
  for (const [name, v] of other) {
    const have = into.get(name);
    if (have === undefined || v > have) into.set(name, v);
  }
}

function requestsOf(container: unknown): unknown {
  return isPlainObject(container) && isPlainObject(container.resources) ? container.resources.requests : undefined;
}

const isPodLevelResource = (name: string): boolean => name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');

export interface PodResourceRequests {
  /** cpu in millicores (Quantity.MilliValue of the total). */
  cpuMilli: number;
  /** memory in bytes (Quantity.Value of the total, rounded up). */
  memory: number;
  /** Every other requested resource by name (Quantity.Value, rounded up); cpu appears only as cpuMilli. */
  [resource: string]: number;
}

/**
 * What the scheduler reserves for a pod: the larger of the sum of the regular
 * containers (plus restartable init containers, i.e. sidecars, which keep
 * running) and the peak of any init container (which runs next to the
 * sidecars started before it); pod-level requests (cpu, memory, hugepages-*)
 * override that; then `spec.overhead` is added. Unparseable quantities count as 0.
 */
export function podResourceRequests(pod: Pod): PodResourceRequests {
  const spec: unknown = pod?.spec;
  const sums: ResourceSums = new Map();
  if (isPlainObject(spec)) {
    for (const c of Array.isArray(spec.containers) ? (spec.containers as unknown[]) : []) addRequests(sums, requestsOf(c));
    const sidecars: ResourceSums = new Map();
    const initPeak: ResourceSums = new Map();
    for (const c of Array.isArray(spec.initContainers) ? (spec.initContainers as unknown[]) : []) {
      const own: ResourceSums = new Map();
      addRequests(own, requestsOf(c));
      if (isPlainObject(c) && c.restartPolicy === 'Always') {
        for (const [k, v] of own) sums.set(k, (sums.get(k) ?? 0n) + v);
        for (const [k, v] of own) sidecars.set(k, (sidecars.get(k) ?? 0n) + v);
        maxInto(initPeak, sidecars);
      } else {
        for (const [k, v] of sidecars) own.set(k, (own.get(k) ?? 0n) + v);
        maxInto(initPeak, own);
      }
    }
    maxInto(sums, initPeak);
    const podLevel = isPlainObject(spec.resources) ? spec.resources.requests : undefined;
    if (isPlainObject(podLevel)) {
      for (const [name, q] of Object.entries(podLevel)) {
        if (!isPodLevelResource(name)) continue;
        const nanos = typeof q === 'string' || typeof q === 'number' ? parseQuantityNanos(q) : undefined;
        sums.set(name, nanos ?? 0n);
      }
    }
    addRequests(sums, spec.overhead);
  }
  const result: PodResourceRequests = { cpuMilli: 0, memory: 0 };
  for (const [name, nanos] of sums) {
    if (name === 'cpu') result.cpuMilli = Number(roundAwayFromZero(nanos, 1_000_000n));
    else result[name] = Number(roundAwayFromZero(nanos, 1_000_000_000n));
  }
  return result;
}

function roundAwayFromZero(nanos: bigint, unit: bigint): bigint {
  const up = (a: bigint): bigint => (a + unit - 1n) / unit;
  return nanos < 0n ? -up(-nanos) : up(nanos);
}
