/**
 * What the CloneSet controller writes to `status` (kruise
 * pkg/controller/cloneset/cloneset_status.go), as pure functions of the set,
 * its active pods, its revisions and the time:
 * - replicas: the active pods it owns; readyReplicas: running and ready
 *   (and an in-place update condition, if any, True); availableReplicas:
 *   ready for longer than minReadySeconds; updatedReplicas /
 *   updatedReadyReplicas / updatedAvailableReplicas: the same at the update
 *   revision;
 * - updateRevision: the revision of the live template; currentRevision: the
 *   previous one, until every pod is at the update revision (no need to wait
 *   for them to be ready);
 * - expectedUpdatedReplicas: replicas, or replicas − partition while the
 *   revisions differ; labelSelector (the scale subresource's selector),
 *   collisionCount, observedGeneration;
 * - a FailedScale / FailedUpdate condition when that part of the round failed.
 * `statusNeedsWrite` compares what matters, so an unchanged status is not
 * written (`writeCloneSetStatus`). `truncatePodsToDelete` is the other write
 * of the end of a sync: names in `podsToDelete` that match no active pod go.
 */
import { isConflict, isNotFound } from '../../client/errors.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { deepEqual } from '../../k8s/json.ts';
import { isCloneSetPodUpdateReady } from '../../k8s/cloneset-pod-ranking.ts';
import { asRecord } from '../../k8s/raw-json.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import { CLONESET_REF } from './cloneset-crd.ts';
import { isAtRevision, partitionReplicas, type CloneSetSpecView } from './cloneset-pods.ts';

export interface CloneSetCondition {
  type: string;
  status: string;
  lastTransitionTime: string;
  message: string;
}

export interface CloneSetStatus {
  observedGeneration: number;
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
  updatedReplicas: number;
  updatedReadyReplicas: number;
  updatedAvailableReplicas: number;
  expectedUpdatedReplicas: number;
  updateRevision: string;
  currentRevision: string;
  collisionCount: number;
  labelSelector: string;
  conditions?: CloneSetCondition[];
}

export interface StatusInputs {
  spec: CloneSetSpecView;
  pods: readonly Pod[];
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
  labelSelector: string;
  /** Errors of the round's scale and update parts. */
  scaleError?: string;
  updateError?: string;
  now: number;
}

export function calculateStatus(cs: KubeObject, inputs: StatusInputs): CloneSetStatus {
  const { spec, pods, updateRevision, now } = inputs;
  const status: CloneSetStatus = {
    observedGeneration: cs.metadata?.generation ?? 0,
    replicas: 0,
    readyReplicas: 0,
    availableReplicas: 0,
    updatedReplicas: 0,
    updatedReadyReplicas: 0,
    updatedAvailableReplicas: 0,
    expectedUpdatedReplicas: 0,
    updateRevision,
    currentRevision: inputs.currentRevision,
    collisionCount: inputs.collisionCount,
    labelSelector: inputs.labelSelector,
  };
  for (const pod of pods) {
    const updated = isAtRevision(pod, updateRevision);
    const ready = isCloneSetPodUpdateReady(pod, 0, now);
    const available = isCloneSetPodUpdateReady(pod, spec.minReadySeconds, now);
    status.replicas++;
    if (ready) status.readyReplicas++;
    if (available) status.availableReplicas++;
    if (updated) {
      status.updatedReplicas++;
      if (ready) status.updatedReadyReplicas++;
      if (available) status.updatedAvailableReplicas++;
    }
  }
  if (status.updatedReplicas === status.replicas) status.currentRevision = updateRevision;
  status.expectedUpdatedReplicas = status.updateRevision === status.currentRevision ? spec.replicas : spec.replicas - partitionReplicas(spec.partition, spec.replicas);
  const conditions: CloneSetCondition[] = [];
  const at = formatTime(now);
  if (inputs.scaleError !== undefined) conditions.push({ type: 'FailedScale', status: 'True', lastTransitionTime: at, message: inputs.scaleError });
  if (inputs.updateError !== undefined) conditions.push({ type: 'FailedUpdate', status: 'True', lastTransitionTime: at, message: inputs.updateError });
  if (conditions.length > 0) status.conditions = conditions;
  return status;
}

const COUNTERS = [
  'observedGeneration',
  'replicas',
  'readyReplicas',
  'availableReplicas',
  'updatedReplicas',
  'updatedReadyReplicas',
  'updatedAvailableReplicas',
  'expectedUpdatedReplicas',
  'collisionCount',
] as const;

/** False when the stored status already says what `next` says (condition times aside). */
export function statusNeedsWrite(cs: KubeObject, next: CloneSetStatus): boolean {
  const cur = asRecord(cs['status']) ?? {};
  for (const k of COUNTERS) if ((cur[k] ?? 0) !== next[k]) return true;
  for (const k of ['updateRevision', 'currentRevision', 'labelSelector'] as const) if ((cur[k] ?? '') !== next[k]) return true;
  const shape = (list: unknown): unknown => (Array.isArray(list) ? list.map((c) => [asRecord(c)?.['type'], asRecord(c)?.['message']]) : []);
  return !deepEqual(shape(cur['conditions']), shape(next.conditions));
}

const STATUS_UPDATE_ATTEMPTS = 4;

/** PUT /status when something changed, re-reading the set on a conflict (Kruise: RetryOnConflict). */
export async function writeCloneSetStatus(client: KubeClient, cs: KubeObject, status: CloneSetStatus): Promise<void> {
  if (!statusNeedsWrite(cs, status)) return;
  let current = cs;
  for (let attempt = 1; ; attempt++) {
    try {
      await client.updateStatus(CLONESET_REF, { ...current, status });
      return;
    } catch (err) {
      if (!isConflict(err) || attempt >= STATUS_UPDATE_ATTEMPTS) throw err;
      current = await client.get(CLONESET_REF, cs.metadata?.name ?? '', { namespace: cs.metadata?.namespace ?? '' });
    }
  }
}

/** truncatePodsToDelete: names in `scaleStrategy.podsToDelete` that match no active pod of the set are dropped. */
export async function truncatePodsToDelete(client: KubeClient, cs: KubeObject, spec: CloneSetSpecView, pods: readonly Pod[]): Promise<void> {
  if (spec.podsToDelete.length === 0) return;
  const live = new Set(pods.map((p) => p.metadata?.name ?? ''));
  const kept = spec.podsToDelete.filter((n) => live.has(n));
  if (kept.length === spec.podsToDelete.length) return;
  const body = { metadata: { resourceVersion: cs.metadata?.resourceVersion }, spec: { scaleStrategy: { podsToDelete: kept.length === 0 ? null : kept } } };
  try {
    await client.patch(CLONESET_REF, cs.metadata?.name ?? '', { type: 'merge', body }, { namespace: cs.metadata?.namespace ?? '' });
  } catch (err) {
    // A newer version of the set will be synced anyway.
    if (!isConflict(err) && !isNotFound(err)) throw err;
  }
}
