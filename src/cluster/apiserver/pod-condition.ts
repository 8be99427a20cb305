/**
 * Writing one condition into a pod's status the way upstream's
 * podutil.UpdatePodCondition does (used by the binding and eviction
 * subresources): the condition replaces the one of its type in place (or is
 * appended); `lastTransitionTime` is now unless the status is unchanged, in
 * which case the old time is kept; reason and message are what the caller
 * gives (absent ones are cleared); `lastProbeTime` is Go's zero time, null.
 */
import { deepEqual } from '../../k8s/json.ts';
import { asArray, asRecord } from '../../k8s/raw-json.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject } from '../../k8s/types.ts';

export interface PodConditionInput {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

/** Updates `pod.status.conditions` in place; true when something changed. */
export function updatePodCondition(pod: KubeObject, input: PodConditionInput, now: number): boolean {
  const status = asRecord(pod.status) ?? {};
  pod.status = status;
  const conditions = [...(asArray(status['conditions']) ?? [])];
  const index = conditions.findIndex((c) => asRecord(c)?.['type'] === input.type);
  const old = index >= 0 ? asRecord(conditions[index]) : undefined;
  const next: Record<string, unknown> = { type: input.type, status: input.status, lastProbeTime: null };
  next['lastTransitionTime'] = old !== undefined && old['status'] === input.status ? (old['lastTransitionTime'] ?? null) : formatTime(now);
  if (input.reason !== undefined && input.reason !== '') next['reason'] = input.reason;
  if (input.message !== undefined && input.message !== '') next['message'] = input.message;
  if (index < 0) conditions.push(next);
  else conditions[index] = next;
  status['conditions'] = conditions;
  return old === undefined || !deepEqual(old, next);
}
