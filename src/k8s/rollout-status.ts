/**
 * Whether a workload has finished what its spec asks for — the judgement of
 * `kubectl rollout status`, extended with what its pods say — as a pure
 * function of the workload, the ReplicaSets and pods of its namespace and the
 * time: `rolloutStatus`.
 *
 * - Deployment: the controller observed the latest generation; every pod is
 *   of the newest ReplicaSet (no old pod left, updatedReplicas and replicas
 *   equal spec.replicas); every one of them available — Ready for at least
 *   `minReadySeconds` by `now`, in the status and by the pods' own Ready
 *   times. A Deployment whose Progressing condition says
 *   ProgressDeadlineExceeded, or that is paused, will not move on by itself:
 *   it counts as done, with a note saying why.
 * - StatefulSet: observed; every replica ready (and available, with
 *   `minReadySeconds`); a RollingUpdate done to `partition`
 *   (updateRevision reached, currentRevision == updateRevision when no
 *   partition); OnDelete: ready is enough.
 * - ReplicaSet (one not run by a Deployment), CloneSet: observed; the pods
 *   it owns are spec.replicas, all available; a CloneSet's update reaches
 *   its partition.
 * - Job: finished (Complete or Failed, or suspended), or running the pods it
 *   wants now — min(parallelism, completions not yet succeeded) — in its
 *   status and in its pods.
 * Other kinds: nothing to wait for. Every accessor tolerates missing fields.
 */
import { isPlainObject } from './json.ts';
import { controllerRef } from './owner.ts';
import { isPodActive, isPodReady, podReadyTime } from './pod.ts';
import { asNumber, asRecord, asString } from './raw-json.ts';
import type { KubeObject, Pod } from './types.ts';

/** `done` with the notes of a workload that stopped short of its spec; else what it still waits for. */
export type RolloutStatus = { done: true; note?: string } | { done: false; waitingFor: string };

export const DEPLOYMENT_REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

/** The workload kinds `rolloutStatus` judges, as `group/Kind`. */
export const ROLLOUT_KINDS: ReadonlySet<string> = new Set(['apps/Deployment', 'apps/StatefulSet', 'apps/ReplicaSet', 'batch/Job', 'apps.kruise.io/CloneSet']);

export interface RolloutInput {
  workload: KubeObject;
  /** The ReplicaSets of the workload's namespace (a Deployment's are found by their controller). */
  replicaSets: readonly KubeObject[];
  /** The pods of the workload's namespace. */
  pods: readonly Pod[];
  /** Epoch ms (minReadySeconds). */
  now: number;
}

const specOf = (o: KubeObject): Record<string, unknown> => asRecord(o['spec']) ?? {};
const statusOf = (o: KubeObject): Record<string, unknown> => asRecord(o['status']) ?? {};
const num = (v: unknown, fallback = 0): number => asNumber(v) ?? fallback;

function groupOf(apiVersion: string | undefined): string {
  const s = apiVersion ?? '';
  const slash = s.indexOf('/');
  return slash < 0 ? '' : s.slice(0, slash);
}

function conditionOf(o: KubeObject, type: string): Record<string, unknown> | undefined {
  const list = statusOf(o)['conditions'];
  if (!Array.isArray(list)) return undefined;
  return (list as unknown[]).find((c): c is Record<string, unknown> => isPlainObject(c) && c['type'] === type);
}

/** Generation not observed yet: the status describes an older spec. */
function unobserved(o: KubeObject): string | undefined {
  const generation = asNumber(o.metadata?.generation);
  const observed = asNumber(statusOf(o)['observedGeneration']);
  if (generation === undefined || (observed !== undefined && observed >= generation)) return undefined;
  return `its controller to observe generation ${generation} (status is of ${observed ?? 'none'})`;
}

/** Ready for at least `minReadySeconds` at `now` (upstream's IsPodAvailable). */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = podReadyTime(pod);
  return since !== undefined && since + minReadySeconds * 1000 <= now;
}

const owned = (pods: readonly Pod[], uid: string | undefined): Pod[] => (uid === undefined || uid === '' ? [] : pods.filter((p) => isPodActive(p) && controllerRef(p)?.uid === uid));

/** `3 of 5 pods available (Ready for minReadySeconds: 120)`. */
function availabilityGap(available: number, wanted: number, minReady: number, what = 'pods'): string | undefined {
  if (available >= wanted) return undefined;
  return `${available} of ${wanted} ${what} available${minReady > 0 ? ` (Ready for minReadySeconds: ${minReady})` : ''}`;
}

function deployment(input: RolloutInput): RolloutStatus {
  const d = input.workload;
  const spec = specOf(d);
  const status = statusOf(d);
  const wanted = num(spec['replicas'], 1);
  const minReady = num(spec['minReadySeconds']);
  const waiting = unobserved(d);
  if (waiting !== undefined) return { done: false, waitingFor: waiting };
  if (spec['paused'] === true) return { done: true, note: 'paused: its rollout does not move on' };
  const progressing = conditionOf(d, 'Progressing');
  if (progressing?.['reason'] === 'ProgressDeadlineExceeded') return { done: true, note: `its rollout exceeded its progress deadline (${num(spec['progressDeadlineSeconds'], 600)} s) and does not move on` };
  const updated = num(status['updatedReplicas']);
  if (updated < wanted) return { done: false, waitingFor: `${updated} of ${wanted} pods updated to the latest template` };
  const total = num(status['replicas']);
  if (total > updated) return { done: false, waitingFor: `${total - updated} old pod(s) to terminate` };
  const gap = availabilityGap(num(status['availableReplicas']), wanted, minReady);
  if (gap !== undefined) return { done: false, waitingFor: gap };
  // The pods themselves: those of the newest ReplicaSet, none of the older ones.
  const uid = d.metadata?.uid;
  const mine = input.replicaSets.filter((rs) => uid !== undefined && controllerRef(rs)?.uid === uid && rs.metadata?.deletionTimestamp == null);
  const revision = (rs: KubeObject) => Number(rs.metadata?.annotations?.[DEPLOYMENT_REVISION_ANNOTATION] ?? '0') || 0;
  const newest = mine.reduce<KubeObject | undefined>((best, rs) => (best === undefined || revision(rs) > revision(best) ? rs : best), undefined);
  const oldPods = mine.filter((rs) => rs !== newest).reduce((n, rs) => n + owned(input.pods, rs.metadata?.uid).length, 0);
  if (oldPods > 0) return { done: false, waitingFor: `${oldPods} pod(s) of an older ReplicaSet to go` };
  const current = newest === undefined ? [] : owned(input.pods, newest.metadata?.uid);
  if (current.length !== wanted) return { done: false, waitingFor: `${current.length} pods to become ${wanted}` };
  const podGap = availabilityGap(current.filter((p) => isPodAvailable(p, minReady, input.now)).length, wanted, minReady);
  return podGap === undefined ? { done: true } : { done: false, waitingFor: podGap };
}

/** A partition as a number of pods (an int, or a percentage of `replicas` rounded up, as Kruise reads it). */
function partitionOf(value: unknown, replicas: number): number {
  if (typeof value === 'number') return Math.max(0, value);
  const text = asString(value);
  const m = text === undefined ? null : /^(\d+)%$/.exec(text);
  return m === null ? 0 : Math.ceil((Number(m[1]) * replicas) / 100);
}

function statefulSet(input: RolloutInput): RolloutStatus {
  const s = input.workload;
  const spec = specOf(s);
  const status = statusOf(s);
  const wanted = num(spec['replicas'], 1);
  const minReady = num(spec['minReadySeconds']);
  const waiting = unobserved(s);
  if (waiting !== undefined) return { done: false, waitingFor: waiting };
  const ready = num(status['readyReplicas']);
  if (ready < wanted) return { done: false, waitingFor: `${ready} of ${wanted} pods Ready` };
  const available = asNumber(status['availableReplicas']);
  if (available !== undefined) {
    const gap = availabilityGap(available, wanted, minReady);
    if (gap !== undefined) return { done: false, waitingFor: gap };
  }
  const pods = owned(input.pods, s.metadata?.uid);
  if (pods.length !== wanted) return { done: false, waitingFor: `${pods.length} pods to become ${wanted}` };
  const strategy = asRecord(spec['updateStrategy']);
  if (asString(strategy?.['type']) === 'OnDelete') return { done: true };
  const partition = partitionOf(asRecord(strategy?.['rollingUpdate'])?.['partition'], wanted);
  const updated = num(status['updatedReplicas']);
  if (partition > 0) {
    const target = Math.max(0, wanted - partition);
    return updated >= target ? { done: true } : { done: false, waitingFor: `${updated} of ${target} pods updated (partition ${partition})` };
  }
  const currentRevision = asString(status['currentRevision']);
  const updateRevision = asString(status['updateRevision']);
  if (updateRevision !== undefined && currentRevision !== updateRevision) return { done: false, waitingFor: `the rolling update to revision ${updateRevision} to complete (${updated} of ${wanted} pods updated)` };
  return { done: true };
}

/** A ReplicaSet, or a CloneSet (whose update also stops at its partition). */
function replicated(input: RolloutInput, cloneSet: boolean): RolloutStatus {
  const o = input.workload;
  const spec = specOf(o);
  const status = statusOf(o);
  const wanted = num(spec['replicas'], 1);
  const minReady = num(spec['minReadySeconds']);
  const waiting = unobserved(o);
  if (waiting !== undefined) return { done: false, waitingFor: waiting };
  const total = num(status['replicas']);
  if (total !== wanted) return { done: false, waitingFor: `${total} pods in its status to become ${wanted}` };
  if (cloneSet) {
    const partition = partitionOf(asRecord(spec['updateStrategy'])?.['partition'], wanted);
    const target = Math.max(0, wanted - partition);
    const updated = num(status['updatedReplicas']);
    if (updated < target) return { done: false, waitingFor: `${updated} of ${target} pods updated${partition > 0 ? ` (partition ${partition})` : ''}` };
  }
  const gap = availabilityGap(num(status['availableReplicas'] ?? status['readyReplicas']), wanted, minReady);
  if (gap !== undefined) return { done: false, waitingFor: gap };
  const pods = owned(input.pods, o.metadata?.uid);
  if (pods.length !== wanted) return { done: false, waitingFor: `${pods.length} pods to become ${wanted}` };
  const podGap = availabilityGap(pods.filter((p) => isPodAvailable(p, minReady, input.now)).length, wanted, minReady);
  return podGap === undefined ? { done: true } : { done: false, waitingFor: podGap };
}

function job(input: RolloutInput): RolloutStatus {
  const j = input.workload;
  const spec = specOf(j);
  const status = statusOf(j);
  for (const type of ['Complete', 'Failed'] as const) {
    if (conditionOf(j, type)?.['status'] === 'True') return { done: true };
  }
  if (spec['suspend'] === true) return { done: true, note: 'suspended' };
  const parallelism = num(spec['parallelism'], 1);
  const completions = asNumber(spec['completions']);
  const succeeded = num(status['succeeded']);
  const wanted = completions === undefined ? parallelism : Math.min(parallelism, completions - succeeded);
  if (wanted <= 0) return { done: false, waitingFor: 'the Job to record its completion' };
  const active = num(status['active']);
  if (active !== wanted) return { done: false, waitingFor: `${active} active pods in its status to become ${wanted}` };
  const pods = owned(input.pods, j.metadata?.uid);
  if (pods.length !== wanted) return { done: false, waitingFor: `${pods.length} active pods to become ${wanted}` };
  return { done: true };
}

/** Whether the workload is done with what its spec asks (see the module comment); other kinds are always done. */
export function rolloutStatus(input: RolloutInput): RolloutStatus {
  const w = input.workload;
  const key = `${groupOf(w.apiVersion)}/${w.kind ?? ''}`;
  switch (key) {
    case 'apps/Deployment':
      return deployment(input);
    case 'apps/StatefulSet':
      return statefulSet(input);
    case 'apps/ReplicaSet':
      return replicated(input, false);
    case 'apps.kruise.io/CloneSet':
      return replicated(input, true);
    case 'batch/Job':
      return job(input);
    default:
      return { done: true };
  }
}
