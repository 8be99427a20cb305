/**
 * What the per-subset gauges report after a reconcile (docs/operations.md
 * "Metrics"): per subset of the spec its resolved limit, the active pods
 * placed in it and how many are ready, the quota left, the admissions and
 * deletions not yet observed, and whether it is schedulable. Read from the
 * status the reconcile computed and the pods it saw, with the engine's own
 * rules (`resolveMaxReplicas`, `readMarker`, `isPodActive`). Pure.
 */
import { SUBSET_SCHEDULABLE } from '../api/keys.ts';
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { readMarker } from '../core/marker.ts';
import { resolveMaxReplicas } from '../core/percent.ts';
import { isPlainObject } from '../k8s/json.ts';
import { isPodActive, isPodReady } from '../k8s/pod.ts';
import type { Pod } from '../k8s/types.ts';

export interface SubsetReading {
  subset: string;
  /** Resolved `maxReplicas`; null when the subset is unlimited. */
  limit: number | null;
  /** Active pods placed in the subset (the status's `replicas`). */
  pods: number;
  /** Of those, ready. */
  ready: number;
  /** `missingReplicas`: quota left; null when unlimited. */
  missing: number | null;
  /** Admissions not yet seen as pods (`creatingPods`). */
  creating: number;
  /** Deletions not yet seen done (`deletingPods`). */
  deleting: number;
  /** False while the subset's `Schedulable` condition is False (Adaptive rescheduling gave up on it). */
  schedulable: boolean;
}

const count = (v: unknown): number => (isPlainObject(v) ? Object.keys(v).length : 0);

/** One reading per subset of the spec that has a status, in spec order. */
export function subsetReadings(ws: WorkloadSpread, status: WorkloadSpreadStatus, pods: readonly Pod[], workloadReplicas: number): SubsetReading[] {
  const name = ws.metadata?.name ?? '';
  const ready = new Map<string, number>();
  for (const pod of pods) {
    const marker = readMarker(pod);
    if (marker === undefined || marker.name !== name || !isPodActive(pod) || !isPodReady(pod)) continue;
    ready.set(marker.subset, (ready.get(marker.subset) ?? 0) + 1);
  }
  const statuses = new Map((status.subsetStatuses ?? []).map((s) => [s.name, s]));
  const out: SubsetReading[] = [];
  for (const subset of ws.spec?.subsets ?? []) {
    const s = statuses.get(subset.name);
    if (s === undefined) continue;
    const max = resolveMaxReplicas(subset.maxReplicas, workloadReplicas);
    const limited = max !== undefined && max >= 0;
    const conditions = Array.isArray(s.conditions) ? s.conditions : [];
    out.push({
      subset: subset.name,
      limit: limited ? max : null,
      pods: s.replicas,
      ready: ready.get(subset.name) ?? 0,
      missing: limited && s.missingReplicas >= 0 ? s.missingReplicas : null,
      creating: count(s.creatingPods),
      deleting: count(s.deletingPods),
      schedulable: !conditions.some((c) => c.type === SUBSET_SCHEDULABLE && c.status === 'False'),
    });
  }
  return out;
}
