/**
 * Per WorkloadSpread, per subset: how many active pods, how many ready,
 * the resolved limit and the distinct deletion costs — the rows every
 * report draws (table, HTML chart and cost table, the demo's bars).
 * Subsets come in spec order; a subset name found only on pods (the spec
 * lost it) follows; pods without a subset are summed in `unassigned`; with
 * rebalancing on (D18), what the rebalancer says (`rebalance`).
 * Pure.
 */
import { FAKE_SUBSET_NAME } from '../api/keys.ts';
import type { PodRecord, WorkloadSpreadRecord } from './observation.ts';

export interface SubsetSummary {
  name: string;
  pods: number;
  ready: number;
  /** Resolved maxReplicas; null when unlimited or unknown. */
  limit: number | null;
  /** Sorted distinct deletion costs (null: pods without the annotation). */
  costs: (number | null)[];
}

/** What the rebalancer (D18) said in the stored status; absent when rebalancing is off. */
export interface RebalanceSummary {
  reason: string;
  message: string;
  pending: number;
  /** Moves in flight: `pod: from → to`. */
  moves: string[];
}

export interface SpreadSummary {
  /** `namespace/name`. */
  key: string;
  namespace: string;
  name: string;
  /** `Kind/name`. */
  target: string;
  replicas: number;
  subsets: SubsetSummary[];
  unassigned: SubsetSummary;
  rebalance?: RebalanceSummary;
}

export function sortedCosts(pods: readonly PodRecord[]): (number | null)[] {
  return [...new Set(pods.map((p) => p.deletionCost))].sort((a, b) => (a === null ? -1 : b === null ? 1 : a - b));
}

function summarizeSubset(name: string, pods: readonly PodRecord[], limit: number | null): SubsetSummary {
  return { name, pods: pods.length, ready: pods.filter((p) => p.ready).length, limit, costs: sortedCosts(pods) };
}

export function summarizeSpreads(snapshot: { pods: readonly PodRecord[]; workloadSpreads: readonly WorkloadSpreadRecord[] }): SpreadSummary[] {
  return snapshot.workloadSpreads.map((ws) => {
    const key = `${ws.namespace}/${ws.name}`;
    const mine = snapshot.pods.filter((p) => p.workloadSpread === key);
    const names = ws.subsets.map((s) => s.name);
    for (const p of mine) if (p.subset !== null && !names.includes(p.subset)) names.push(p.subset);
    const subsets = names.map((n) => summarizeSubset(n, mine.filter((p) => p.subset === n), ws.subsets.find((s) => s.name === n)?.limit ?? null));
    const summary: SpreadSummary = { key, namespace: ws.namespace, name: ws.name, target: ws.target, replicas: ws.replicas, subsets, unassigned: summarizeSubset('(no subset)', mine.filter((p) => p.subset === null), null) };
    const rebalance = 'rebalance' in ws.status ? ws.status.rebalance : undefined;
    if (rebalance !== undefined) {
      summary.rebalance = {
        reason: rebalance.reason ?? '',
        message: rebalance.message ?? '',
        pending: rebalance.pending,
        moves: (rebalance.moves ?? []).map((m) => `${m.pod}: ${subsetName(m.from)} → ${m.to}`),
      };
    }
    return summary;
  });
}

function subsetName(name: string): string {
  return name === FAKE_SUBSET_NAME ? '(no subset)' : name;
}

/** One line on the rebalancer: `Moving · 2 pending · in flight web-x: zone-b → zone-a`, then the message unless it only repeats the moves. */
export function showRebalance(r: RebalanceSummary): string {
  const parts = [r.reason || 'unknown', `${r.pending} pending`];
  if (r.moves.length > 0) parts.push(`in flight ${r.moves.join(', ')}`);
  if (r.message !== '' && r.reason !== 'Moving' && r.reason !== 'Balanced') parts.push(r.message);
  return parts.join(' · ');
}
