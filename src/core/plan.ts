/**
 * What-if planning without a cluster (`workloadspread plan`): scales the
 * target of a WorkloadSpread to each count in turn and reports, per step and
 * subset, the limit, the pods and their deletion costs.
 *
 * The engine drives the same decisions the webhook and the controller make,
 * in the order a healthy cluster makes them:
 * - a step starts with a controller reconcile (the workload's replica count
 *   changed, so percentages resolve against the new count);
 * - scale-out admits pods one by one through `chooseSubset` (or the ordinal
 *   path for StatefulSets) and `injectSubset`; every pod is assumed to
 *   schedule and become ready at once, on one node per subset;
 * - scale-in assigns deletion costs as the controller does, removes pods in the
 *   upstream ReplicaSet order (or the highest ordinals of a StatefulSet), and
 *   records each deletion as the webhook does;
 * - a step ends with a controller reconcile, whose result is reported.
 * Virtual time advances one second per pod and ten minutes per step, starting
 * at `options.start`. Pure and deterministic: names and uids are sequential.
 */
import { POD_DELETION_COST_ANNOTATION, POD_TEMPLATE_HASH_LABEL, VERSION_IGNORED } from '../api/keys.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { deepClone } from '../k8s/json.ts';
import { isPodActive } from '../k8s/pod.ts';
import { podsToDeleteOnScaleDown } from '../k8s/pod-ranking.ts';
import { formatTime } from '../k8s/time.ts';
import type { Node, Pod } from '../k8s/types.ts';
import { writesDeletionCost } from './deletion-cost.ts';
import { recordDeletion } from './deletion.ts';
import { injectSubset } from './inject.ts';
import { readMarker } from './marker.ts';
import { resolveMaxReplicas } from './percent.ts';
import { podVersion } from './pod-version.ts';
import { planReconcile } from './reconcile-plan.ts';
import { chooseSubsetByOrdinal } from './statefulset-ordinal.ts';
import { chooseSubset } from './subset-choice.ts';

export interface PlanSubsetResult {
  /** The resolved maxReplicas; null when unlimited. */
  limit: number | null;
  /** Active pods in the subset. */
  pods: number;
  /** Sorted distinct deletion costs of the subset's pods (empty when the target gets none). */
  costs: number[];
}

export interface PlanStep {
  replicas: number;
  subsets: Record<string, PlanSubsetResult>;
  /** Active pods that got no subset. */
  unassigned: number;
}

export interface PlanResult {
  steps: PlanStep[];
}

export interface PlanOptions {
  /** Epoch ms the plan starts at (default 2026-01-01T00:00:00Z). */
  start?: number;
}

export type PlanOutcome = { ok: true; result: PlanResult } | { ok: false; error: string };

const POD_TEMPLATE_HASH = '7c5b9d4f6';
const STEP_GAP_MS = 10 * 60_000;

interface PlanState {
  ws: WorkloadSpread;
  pods: Pod[];
  now: number;
  seq: number;
  reservations: number;
}

export function planSpread(input: WorkloadSpread, counts: readonly number[], options: PlanOptions = {}): PlanOutcome {
  const ws = deepClone(input);
  ws.metadata = { namespace: 'default', ...ws.metadata, generation: ws.metadata?.generation ?? 1 };
  delete ws.status;
  const state: PlanState = { ws, pods: [], now: options.start ?? Date.UTC(2026, 0, 1), seq: 0, reservations: 0 };
  const ordinal = ws.spec.targetRef.kind === 'StatefulSet';
  const steps: PlanStep[] = [];
  for (const replicas of counts) {
    if (!Number.isInteger(replicas) || replicas < 0) return { ok: false, error: `replica count must be a non-negative integer, got ${replicas}` };
    state.now += STEP_GAP_MS;
    const before = reconcile(state, replicas);
    if (!before.ok) return before;
    const active = () => state.pods.filter(isPodActive);
    if (replicas > active().length) {
      const added = ordinal ? scaleUpOrdinal(state, replicas) : scaleUp(state, replicas);
      if (!added.ok) return added;
    } else if (replicas < active().length) {
      const removed = scaleDown(state, replicas, ordinal);
      if (!removed.ok) return removed;
    }
    const after = reconcile(state, replicas);
    if (!after.ok) return after;
    steps.push(report(state, replicas));
  }
  return { ok: true, result: { steps } };
}

/** One controller pass: status, deletion costs. */
function reconcile(state: PlanState, replicas: number): { ok: true } | { ok: false; error: string } {
  const { ws } = state;
  const plan = planReconcile({
    ws,
    pods: state.pods,
    nodeByName: (name): Node => ({ metadata: { name } }),
    workloadReplicas: replicas,
    latestVersion: latestVersion(ws),
    now: state.now,
    writeDeletionCost: writesDeletionCost(ws.spec.targetRef),
  });
  if (plan.error !== undefined) return { ok: false, error: plan.error };
  ws.status = plan.status;
  const costs = new Map(plan.deletionCostPatches.map((p) => [p.pod, p.cost]));
  for (const pod of state.pods) {
    const cost = costs.get(pod.metadata.name ?? '');
    if (cost === undefined) continue;
    pod.metadata.annotations = { ...pod.metadata.annotations, [POD_DELETION_COST_ANNOTATION]: String(cost) };
  }
  return { ok: true };
}

function scaleUp(state: PlanState, replicas: number): { ok: true } | { ok: false; error: string } {
  const { ws } = state;
  while (state.pods.filter(isPodActive).length < replicas) {
    state.now += 1000;
    const template = newPod(state, undefined);
    const choice = chooseSubset({
      ws,
      pod: template,
      version: podVersion(template),
      workloadReplicas: () => ({ ok: true, replicas }),
      now: state.now,
      newUid: () => `reservation-${String(++state.reservations).padStart(6, '0')}`,
    });
    if (choice.kind === 'error') return { ok: false, error: choice.message };
    let pod = template;
    if (choice.kind === 'chosen') {
      if (choice.status !== undefined) ws.status = choice.status;
      const injected = injectSubset(template, ws, choice.subset, choice.uid);
      if (!injected.ok) return { ok: false, error: injected.error };
      pod = injected.pod;
    }
    pod.metadata.name = `${ws.spec.targetRef.name}-${String(state.seq).padStart(5, '0')}`;
    state.pods.push(run(pod, state.now));
  }
  return { ok: true };
}

function scaleUpOrdinal(state: PlanState, replicas: number): { ok: true } | { ok: false; error: string } {
  const { ws } = state;
  for (let ordinal = 0; ordinal < replicas; ordinal++) {
    const name = `${ws.spec.targetRef.name}-${ordinal}`;
    if (state.pods.some((p) => p.metadata.name === name)) continue;
    state.now += 1000;
    let pod = newPod(state, name);
    const subset = chooseSubsetByOrdinal(ws, name);
    if (subset !== undefined) {
      const injected = injectSubset(pod, ws, subset);
      if (!injected.ok) return { ok: false, error: injected.error };
      pod = injected.pod;
    }
    state.pods.push(run(pod, state.now));
  }
  return { ok: true };
}

function scaleDown(state: PlanState, replicas: number, ordinal: boolean): { ok: true } | { ok: false; error: string } {
  const active = state.pods.filter(isPodActive);
  const diff = active.length - replicas;
  const victims = ordinal
    ? [...active].sort((a, b) => ordinalOf(b) - ordinalOf(a)).slice(0, diff)
    : podsToDeleteOnScaleDown(active, active, diff, state.now);
  for (const pod of victims) {
    state.now += 1000;
    const marker = readMarker(pod);
    if (marker !== undefined && marker.name === state.ws.metadata.name && !ordinal) {
      const record = recordDeletion({ ws: state.ws, pod, marker, version: podVersion(pod), workloadReplicas: replicas, now: state.now });
      if (record.changed) state.ws.status = record.status;
    }
    state.pods = state.pods.filter((p) => p !== pod);
  }
  return { ok: true };
}

function report(state: PlanState, replicas: number): PlanStep {
  const subsets: Record<string, PlanSubsetResult> = {};
  const active = state.pods.filter(isPodActive);
  let unassigned = active.length;
  for (const subset of state.ws.spec.subsets) {
    const pods = active.filter((p) => {
      const m = readMarker(p);
      return m !== undefined && m.name === state.ws.metadata.name && m.subset === subset.name;
    });
    unassigned -= pods.length;
    const costs = new Set<number>();
    for (const p of pods) {
      const raw = p.metadata.annotations?.[POD_DELETION_COST_ANNOTATION];
      if (raw !== undefined) costs.add(Number(raw));
    }
    const limit = resolveMaxReplicas(subset.maxReplicas, replicas);
    subsets[subset.name] = {
      limit: limit === undefined || limit < 0 ? null : limit,
      pods: pods.length,
      costs: [...costs].sort((a, b) => a - b),
    };
  }
  return { replicas, subsets, unassigned };
}

/** A pod of the target as its controller would create it (before admission). */
function newPod(state: PlanState, name: string | undefined): Pod {
  const { ws } = state;
  const seq = ++state.seq;
  const ref = ws.spec.targetRef;
  const viaReplicaSet = ref.kind === 'Deployment';
  const owner = {
    apiVersion: viaReplicaSet ? 'apps/v1' : ref.apiVersion,
    kind: viaReplicaSet ? 'ReplicaSet' : ref.kind,
    name: viaReplicaSet ? `${ref.name}-${POD_TEMPLATE_HASH}` : ref.name,
    uid: `owner-${ref.name}`,
    controller: true,
  };
  const versioned = owner.kind === 'ReplicaSet';
  const metadata: Pod['metadata'] = {
    namespace: ws.metadata.namespace ?? 'default',
    uid: `plan-pod-${String(seq).padStart(6, '0')}`,
    creationTimestamp: formatTime(state.now),
    labels: versioned ? { [POD_TEMPLATE_HASH_LABEL]: POD_TEMPLATE_HASH } : {},
    ownerReferences: [owner],
  };
  if (name === undefined) metadata.generateName = `${ref.name}-`;
  else metadata.name = name;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'main', image: 'plan' }] } };
}

/** The pod scheduled onto its subset's node and Running+Ready. */
function run(pod: Pod, now: number): Pod {
  const subset = readMarker(pod)?.subset;
  const at = formatTime(now);
  pod.spec.nodeName = subset === undefined || subset === '' ? 'node-unassigned' : `node-${subset}`;
  pod.status = {
    phase: 'Running',
    startTime: at,
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: at },
      { type: 'Ready', status: 'True', lastTransitionTime: at },
    ],
    containerStatuses: [{ name: 'main', ready: true, restartCount: 0 }],
  };
  return pod;
}

function latestVersion(ws: WorkloadSpread): string {
  const kind = ws.spec.targetRef.kind;
  return kind === 'Deployment' || kind === 'ReplicaSet' ? POD_TEMPLATE_HASH : VERSION_IGNORED;
}

function ordinalOf(pod: Pod): number {
  const m = /-(\d+)$/.exec(pod.metadata.name ?? '');
  return m === null ? -1 : Number(m[1]);
}
