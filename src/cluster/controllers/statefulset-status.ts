/**
 * A StatefulSet's status as its controller writes it (upstream's
 * updateStatefulSetStatus, completeRollingUpdate, inconsistentStatus and the
 * status updater): a rolling update whose pods are all updated and ready makes
 * the update revision current; nothing is written unless a field the
 * controller owns changed; a conflict re-reads the set and tries again.
 * Counters Go omits when zero are omitted (and removed when they drop to zero).
 */
import { isConflict } from '../../client/errors.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { BUILTIN } from '../../client/resources.ts';
import { deepEqual } from '../../k8s/json.ts';
import { asRecord } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';

export interface StatefulSetStatus {
  observedGeneration: number;
  replicas: number;
  readyReplicas: number;
  currentReplicas: number;
  updatedReplicas: number;
  availableReplicas: number;
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
}

const STATUS_RETRIES = 3;
const STATUS_FIELDS = ['observedGeneration', 'replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'currentRevision', 'updateRevision', 'collisionCount'];
const OMITTED_WHEN_ZERO = ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'observedGeneration'] as const;

/** completeRollingUpdate: every pod updated and ready → the update revision is now the current one. */
export function completeRollingUpdate(status: StatefulSetStatus, rollingUpdate: boolean): StatefulSetStatus {
  if (!rollingUpdate || status.updatedReplicas !== status.replicas || status.readyReplicas !== status.replicas) return status;
  return { ...status, currentReplicas: status.updatedReplicas, currentRevision: status.updateRevision };
}

/** The status as Go serializes it: optional counters and revisions omitted when empty. */
export function wireStatus(s: StatefulSetStatus): Record<string, unknown> {
  const out: Record<string, unknown> = { replicas: s.replicas, collisionCount: s.collisionCount, availableReplicas: s.availableReplicas };
  for (const k of OMITTED_WHEN_ZERO) if (s[k] !== 0) out[k] = s[k];
  if (s.currentRevision !== '') out['currentRevision'] = s.currentRevision;
  if (s.updateRevision !== '') out['updateRevision'] = s.updateRevision;
  return out;
}

/** The fields this controller owns, with Go's zero values for absent ones. */
function comparable(status: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of STATUS_FIELDS) out[k] = status?.[k] ?? (k.endsWith('Revision') ? '' : 0);
  return out;
}

/** updateStatefulSetStatus: completes a finished rolling update, then writes only a changed status. */
export async function writeStatefulSetStatus(client: KubeClient, set: KubeObject, status: StatefulSetStatus, rollingUpdate: boolean): Promise<StatefulSetStatus> {
  const next = completeRollingUpdate(status, rollingUpdate);
  const wire = wireStatus(next);
  if (deepEqual(comparable(asRecord(set['status'])), comparable(wire))) return next;
  // PUT replaces the status: counters that dropped to zero must not survive from the old one.
  const dropped = Object.fromEntries(OMITTED_WHEN_ZERO.filter((k) => !(k in wire)).map((k) => [k, undefined]));
  let current = set;
  for (let attempt = 0; ; attempt++) {
    try {
      await client.updateStatus(BUILTIN.statefulsets, { ...current, status: { ...(asRecord(current['status']) ?? {}), ...wire, ...dropped } });
      return next;
    } catch (err) {
      if (!isConflict(err) || attempt >= STATUS_RETRIES) throw err;
      current = await client.get(BUILTIN.statefulsets, set.metadata?.name ?? '', { namespace: set.metadata?.namespace ?? '' });
      if (current.metadata?.uid !== set.metadata?.uid) return next;
    }
  }
}
