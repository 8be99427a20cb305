/**
 * Subset choice for StatefulSet targets (spec §2.3 B, §9.6; the ordinal path
 * of admission.ts, which decides when it applies): a pod goes to the
 * subset whose cumulative maxReplicas threshold its ordinal is below. No
 * status is read except the top-level Schedulable conditions, and none is
 * written, on create or on delete.
 *
 * Example: a(5), b(5), c(nil) → ordinals 0–4 in a, 5–9 in b, 10+ in c; with a
 * marked Schedulable=False, 0–4 in b and 5+ in c (a skipped subset adds
 * nothing to the threshold). Advanced StatefulSet `reserveOrdinals` are not
 * taken into account, as in the reference.
 */
import { MAX_INT32 } from '../api/keys.ts';
import type { IntOrString } from '../k8s/types.ts';
import { named, type WorkloadSpread } from '../api/workloadspread.ts';
import { isSchedulableFalse } from './subset-choice.ts';

/**
 * Whether the target's pods are named by ordinal — a StatefulSet, in any
 * group (apps, or OpenKruise's Advanced StatefulSet), as the reference tests
 * the kind alone (§2.3 B). Admission takes the ordinal path for them, and
 * `plan` creates and removes their pods by ordinal, as their controller does.
 */
export function namesPodsByOrdinal(targetRef: { kind: string }): boolean {
  return targetRef.kind === 'StatefulSet';
}

/** `<parent>-<ordinal>`; greedy, so `web-1-2` is parent `web-1`, ordinal 2. */
const STATEFUL_POD_NAME = /^(.*)-([0-9]+)$/;

/** The pod's ordinal, or -1 when the name has none (or it does not fit an int32, as upstream parses it). */
export function podOrdinal(podName: string): number {
  const match = STATEFUL_POD_NAME.exec(podName);
  const digits = match?.[2];
  if (digits === undefined) return -1;
  const ordinal = Number(digits);
  return ordinal <= MAX_INT32 ? ordinal : -1;
}

/**
 * What a maxReplicas adds to the threshold: an int as is, nil as int32 max,
 * a string read as a plain integer (Go's IntOrString.IntValue), so a
 * percentage counts 0 (validation forbids percentages here).
 */
function thresholdStep(maxReplicas: IntOrString | undefined): number {
  if (maxReplicas === undefined || maxReplicas === null) return MAX_INT32;
  if (typeof maxReplicas === 'number') return Number.isFinite(maxReplicas) ? Math.trunc(maxReplicas) : 0;
  return /^[+-]?[0-9]+$/.test(maxReplicas) ? Number(maxReplicas) : 0;
}

/** The subset of a StatefulSet pod, or undefined when no threshold covers its ordinal (no injection then). */
export function chooseSubsetByOrdinal(ws: WorkloadSpread, podName: string): string | undefined {
  const topLevel = ws.status?.subsetStatuses ?? [];
  const ordinal = podOrdinal(podName);
  let threshold = 0;
  for (const subset of ws.spec.subsets) {
    const status = named(topLevel, subset.name);
    if (status !== undefined && isSchedulableFalse(status)) continue;
    threshold += thresholdStep(subset.maxReplicas);
    if (ordinal < threshold) return subset.name;
  }
  return undefined;
}
