/**
 * Scoring the feasible nodes, as kube-scheduler 1.32's default profile does:
 * each plugin gives every node 0..100 (normalized across the feasible nodes),
 * the node's total is Σ weight × score, the highest total wins.
 *
 *   plugin (weight)                  score of a node
 *   TaintToleration (3)              100 − 100·n/max n, n = PreferNoSchedule taints it does not tolerate
 *   NodeAffinity (2)                 100·w/max w, w = Σ weights of matching preferred terms
 *                                    (skipped — 0 everywhere — when the pod has none)
 *   PodTopologySpread (2)            see topology-spread.ts
 *   NodeResourcesFit (1)             LeastAllocated over cpu and memory (weights 1:1):
 *                                    avg over resources of ⌊(alloc − req)·100/alloc⌋, req including
 *                                    the pod, using non-zero requests (100m / 200Mi per container)
 *   NodeResourcesBalancedAllocation (1)  ⌊(1 − |f_cpu − f_mem|/2)·100⌋, f = requested/allocatable
 *                                    (actual requests, each fraction capped at 1)
 * Integer arithmetic truncates as Go's int64 division does.
 * Not emulated: InterPodAffinity (2) and ImageLocality (1) — the fake nodes
 * have no images, so upstream would score them 0 everywhere too.
 * Ties: upstream picks uniformly at random among the best nodes; here the
 * first by node name wins, so runs are reproducible.
 * Pure; start at `scoreNodes`.
 */
import { preferredSchedulingTermsScore } from '../../k8s/node-selector.ts';
import { tolerationToleratesTaint } from '../../k8s/taints.ts';
import type { Requirement } from '../../k8s/label-selector.ts';
import { asArray, asRecord } from '../../k8s/raw-json.ts';
import type { Pod, PreferredSchedulingTerm, Taint, Toleration } from '../../k8s/types.ts';
import type { NodeInfo, PodRecord } from './node-info.ts';
import { topologySpreadScores } from './topology-spread.ts';

export const MAX_NODE_SCORE = 100;

export const SCORE_WEIGHTS = {
  TaintToleration: 3,
  NodeAffinity: 2,
  PodTopologySpread: 2,
  NodeResourcesFit: 1,
  NodeResourcesBalancedAllocation: 1,
} as const;

export type ScorePlugin = keyof typeof SCORE_WEIGHTS;

export interface NodeScore {
  name: string;
  total: number;
  /** Normalized score per plugin (before weighting); absent when the plugin skipped the pod. */
  plugins: Partial<Record<ScorePlugin, number>>;
}

/** DefaultNormalizeScore: scale onto 0..100 by the maximum (optionally reversed). */
export function normalize(scores: Map<string, number>, reverse: boolean): Map<string, number> {
  let max = 0;
  for (const s of scores.values()) max = Math.max(max, s);
  const out = new Map<string, number>();
  for (const [name, s] of scores) {
    if (max === 0) out.set(name, reverse ? MAX_NODE_SCORE : s);
    else {
      const scaled = Math.trunc((MAX_NODE_SCORE * s) / max);
      out.set(name, reverse ? MAX_NODE_SCORE - scaled : scaled);
    }
  }
  return out;
}

function taintTolerationScores(pod: Pod, feasible: readonly NodeInfo[]): Map<string, number> {
  const tolerations = ((asArray(pod.spec?.tolerations) ?? []) as Toleration[]).filter((t) => {
    const effect = asRecord(t)?.['effect'];
    return effect === undefined || effect === '' || effect === 'PreferNoSchedule';
  });
  const raw = new Map<string, number>();
  for (const info of feasible) {
    let n = 0;
    for (const t of (asArray(asRecord(info.node?.spec)?.['taints']) ?? []) as Taint[]) {
      if (asRecord(t)?.['effect'] !== 'PreferNoSchedule') continue;
      if (!tolerations.some((tol) => tolerationToleratesTaint(tol, t))) n++;
    }
    raw.set(info.name, n);
  }
  return normalize(raw, true);
}

function nodeAffinityScores(pod: Pod, feasible: readonly NodeInfo[]): Map<string, number> | undefined {
  const preferred = asArray(asRecord(asRecord(pod.spec?.affinity)?.['nodeAffinity'])?.['preferredDuringSchedulingIgnoredDuringExecution']) as PreferredSchedulingTerm[] | undefined;
  if (preferred === undefined || preferred.length === 0) return undefined;
  const raw = new Map<string, number>();
  for (const info of feasible) raw.set(info.name, info.node === undefined ? 0 : preferredSchedulingTermsScore(preferred, info.node));
  return normalize(raw, false);
}

function leastRequested(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

function leastAllocatedScore(record: PodRecord, info: NodeInfo): number {
  let sum = 0;
  let weights = 0;
  const pairs: [number, number][] = [
    [info.nonZeroRequested.cpuMilli + record.nonZero.cpuMilli, info.allocatable.cpuMilli],
    [info.nonZeroRequested.memory + record.nonZero.memory, info.allocatable.memory],
  ];
  for (const [requested, allocatable] of pairs) {
    if (allocatable === 0) continue;
    sum += leastRequested(requested, allocatable);
    weights++;
  }
  return weights === 0 ? 0 : Math.trunc(sum / weights);
}

function balancedAllocationScore(record: PodRecord, info: NodeInfo): number {
  const fractions: number[] = [];
  const pairs: [number, number][] = [
    [info.requested.cpuMilli + record.requests.cpuMilli, info.allocatable.cpuMilli],
    [info.requested.memory + record.requests.memory, info.allocatable.memory],
  ];
  for (const [requested, allocatable] of pairs) {
    if (allocatable === 0) continue;
    fractions.push(Math.min(1, requested / allocatable));
  }
  let std = 0;
  if (fractions.length === 2) std = Math.abs((fractions[0]! - fractions[1]!) / 2);
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

export interface ScoreInput {
  pod: Pod;
  record: PodRecord;
  feasible: readonly NodeInfo[];
  /** Every node with a Node object (PodTopologySpread counts pods there). */
  allNodes: readonly NodeInfo[];
  /** The system-default spreading selector of the pod (`defaultSelector`); empty for none. */
  spreadSelector: readonly Requirement[];
}

/** Every feasible node with its weighted total, best first (ties by name). */
export function scoreNodes(input: ScoreInput): NodeScore[] {
  const { pod, record, feasible } = input;
  const perPlugin: [ScorePlugin, Map<string, number> | undefined][] = [
    ['TaintToleration', taintTolerationScores(pod, feasible)],
    ['NodeAffinity', nodeAffinityScores(pod, feasible)],
    ['PodTopologySpread', topologySpreadScores(pod, feasible, input.allNodes, input.spreadSelector)],
    ['NodeResourcesFit', new Map(feasible.map((n) => [n.name, leastAllocatedScore(record, n)]))],
    ['NodeResourcesBalancedAllocation', new Map(feasible.map((n) => [n.name, balancedAllocationScore(record, n)]))],
  ];
  const out: NodeScore[] = feasible.map((info) => {
    const score: NodeScore = { name: info.name, total: 0, plugins: {} };
    for (const [plugin, scores] of perPlugin) {
      const s = scores?.get(info.name);
      if (s === undefined) continue;
      score.plugins[plugin] = s;
      score.total += s * SCORE_WEIGHTS[plugin];
    }
    return score;
  });
  return out.sort((a, b) => b.total - a.total || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The node a pod goes to: the only feasible one, or the best scored. */
export function selectHost(input: ScoreInput): { node: string; scores: NodeScore[] } | undefined {
  if (input.feasible.length === 0) return undefined;
  if (input.feasible.length === 1) return { node: input.feasible[0]!.name, scores: [] };
  const scores = scoreNodes(input);
  return { node: scores[0]!.name, scores };
}
