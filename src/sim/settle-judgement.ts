/**
 * When a settle may end: the one judgement both backends use
 * (`judgeSettled`), from what the runner listed. Pure.
 *
 * The cluster is settled when
 * - every WorkloadSpread's status describes the pods it can see: the
 *   controller observed its latest generation; per subset, `replicas` is the
 *   number of active pods whose marker names the subset (as the observation
 *   counts them), `missingReplicas` is the limit minus those (-1 when
 *   unlimited), and no creation or deletion is in flight (`creatingPods`,
 *   `deletingPods`); the display fields `placed` and `ready` count the same
 *   pods; no rebalancing move is in flight. (A WorkloadSpread ignored as a
 *   duplicate has no subset status: only its generation is checked.) The
 *   manager holds back status changes admission does not need for a few
 *   seconds, so this is what "nothing changed for a while" cannot tell;
 * - every workload the scenario created (and every target) finished what its
 *   spec asks for (k8s/rollout-status.ts: a Deployment's rollout with its
 *   `minReadySeconds`, a StatefulSet's revision, a Job's completion or its
 *   active pods).
 *
 * Otherwise the judgement says exactly what is still awaited, one line per
 * object (`Deployment default/web: 3 of 6 pods available (Ready for
 * minReadySeconds: 120)`), which the settle's timeout message repeats. Notes
 * name workloads that will not reach their spec by themselves (a Deployment
 * past its progress deadline): they do not hold a settle up.
 */
import type { SubsetStatus, WorkloadSpread } from '../api/workloadspread.ts';
import { hasDuplicateTarget } from '../core/target-conflict.ts';
import { rolloutStatus } from '../k8s/rollout-status.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import type { PodsAndSpreads, WorkloadSpreadRecord } from './observation.ts';

export interface SettleFacts {
  /** Clock time (epoch ms): virtual on the embedded cluster. */
  now: number;
  /** The scenario's WorkloadSpreads as listed. */
  workloadSpreads: readonly WorkloadSpread[];
  /** What the observation made of them (their pods with subsets, resolved limits). */
  observed: PodsAndSpreads;
  /** The workloads whose rollouts a settle waits for. */
  workloads: readonly KubeObject[];
  /** The ReplicaSets and pods of the scenario's namespaces. */
  replicaSets: readonly KubeObject[];
  pods: readonly Pod[];
}

export interface SettleJudgement {
  settled: boolean;
  /** What is not true yet, one line per object; empty when settled. */
  waitingFor: string[];
  /** Workloads that stopped short of their spec and will not move on by themselves. */
  notes: string[];
}

const keyOf = (o: { metadata?: { namespace?: string | undefined; name?: string | undefined } | undefined }): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

const count = (map: Record<string, string> | undefined): number => (map === undefined || map === null ? 0 : Object.keys(map).length);

/** The numerator of a display ratio (`7/10` → 7); undefined when it is not one. */
function numerator(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^(\d+)\//.exec(text);
  return m === null ? undefined : Number(m[1]);
}

/** What a WorkloadSpread's status does not show yet of its pods. */
function workloadSpreadGaps(ws: WorkloadSpread, record: WorkloadSpreadRecord, observed: PodsAndSpreads): string[] {
  const gaps: string[] = [];
  const status = ws.status ?? {};
  const generation = ws.metadata?.generation;
  if (typeof generation === 'number' && status.observedGeneration !== generation) {
    return [`its status to observe generation ${generation} (status is of ${status.observedGeneration ?? 'none'})`];
  }
  if (hasDuplicateTarget(ws.status)) return gaps;
  const key = `${record.namespace}/${record.name}`;
  const mine = observed.pods.filter((p) => p.workloadSpread === key);
  const entries = new Map<string, SubsetStatus>();
  for (const s of Array.isArray(status.subsetStatuses) ? status.subsetStatuses : []) if (s !== null && typeof s === 'object' && !entries.has(s.name)) entries.set(s.name, s);
  let placed = 0;
  let ready = 0;
  for (const subset of record.subsets) {
    const pods = mine.filter((p) => p.subset === subset.name);
    placed += pods.length;
    ready += pods.filter((p) => p.ready).length;
    const entry = entries.get(subset.name);
    if (entry === undefined) {
      gaps.push(`subset ${subset.name}: a status entry`);
      continue;
    }
    const inFlight = [count(entry.creatingPods) > 0 ? `${count(entry.creatingPods)} creation(s) (creatingPods)` : '', count(entry.deletingPods) > 0 ? `${count(entry.deletingPods)} deletion(s) (deletingPods)` : ''].filter((s) => s !== '');
    if (inFlight.length > 0) gaps.push(`subset ${subset.name}: ${inFlight.join(' and ')} in flight to be seen through`);
    if (entry.replicas !== pods.length) gaps.push(`subset ${subset.name}: status replicas ${entry.replicas} to become ${pods.length}, the active pods marked in it`);
    else if (inFlight.length === 0) {
      const missing = subset.limit === null ? -1 : Math.max(0, subset.limit - pods.length);
      if (entry.missingReplicas !== missing) gaps.push(`subset ${subset.name}: status missingReplicas ${entry.missingReplicas} to become ${missing} (limit ${subset.limit ?? 'unlimited'}, ${pods.length} pods)`);
    }
  }
  const shownPlaced = numerator(status.placed);
  if (shownPlaced !== undefined && shownPlaced !== placed) gaps.push(`status placed ${String(status.placed)} to count ${placed} pods`);
  const shownReady = numerator(status.ready);
  if (shownReady !== undefined && shownReady !== ready) gaps.push(`status ready ${String(status.ready)} to count ${ready} Ready pods`);
  const moves = status.rebalance?.moves?.length ?? 0;
  if (moves > 0) gaps.push(`${moves} rebalancing move(s) in flight`);
  return gaps;
}

/** Whether the cluster is settled, and if not, what it still waits for (see the module comment). */
export function judgeSettled(facts: SettleFacts): SettleJudgement {
  const waitingFor: string[] = [];
  const notes: string[] = [];
  const records = new Map(facts.observed.workloadSpreads.map((r) => [`${r.namespace}/${r.name}`, r]));
  for (const ws of [...facts.workloadSpreads].sort((a, b) => keyOf(a).localeCompare(keyOf(b)))) {
    const record = records.get(keyOf(ws));
    if (record === undefined) continue;
    for (const gap of workloadSpreadGaps(ws, record, facts.observed)) waitingFor.push(`WorkloadSpread ${keyOf(ws)}: ${gap}`);
  }
  for (const workload of [...facts.workloads].sort((a, b) => `${a.kind ?? ''}${keyOf(a)}`.localeCompare(`${b.kind ?? ''}${keyOf(b)}`))) {
    const ns = workload.metadata?.namespace ?? '';
    const r = rolloutStatus({
      workload,
      replicaSets: facts.replicaSets.filter((rs) => rs.metadata?.namespace === ns),
      pods: facts.pods.filter((p) => p.metadata?.namespace === ns),
      now: facts.now,
    });
    const name = `${workload.kind ?? ''} ${keyOf(workload)}`;
    if (!r.done) waitingFor.push(`${name}: ${r.waitingFor}`);
    else if (r.note !== undefined) notes.push(`${name}: ${r.note}`);
  }
  return { settled: waitingFor.length === 0, waitingFor, notes };
}
