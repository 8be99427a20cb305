/**
 * What-if planning without a cluster (`workloadspread plan`): scales the
 * target of a WorkloadSpread to each count in turn and reports, per step and
 * subset, the limit, the pods and their deletion costs.
 *
 * The engine drives the same decisions the webhook and the controller make,
 * in the order a healthy cluster makes them (D19: what `plan` predicts is what
 * the cluster does — a test replays random scale sequences through both):
 * - a scale-out starts with a controller reconcile (the workload's replica
 *   count changed, so percentages resolve against the new count);
 * - scale-out admits pods one by one through `decidePodCreate` (admission.ts,
 *   the webhook's own decision) over a small in-memory cluster (`planView`:
 *   the WorkloadSpread, its workload at the step's replica count, the pods);
 *   every pod is assumed to schedule and become ready at once, on one node
 *   per subset (`planNodes`: labelled so the subset's required term matches,
 *   untainted, room for every pod). A pod no subset can take (D11) goes where
 *   the scheduler would put it — the node with the fewest pods, the first by
 *   name on a tie (the embedded scheduler's order; a real one breaks ties at
 *   random) — and the next reconcile adopts it into that node's subset;
 * - a scale-in removes pods at once, in the upstream ReplicaSet order with the
 *   deletion costs the pods carry at that moment (the last reconcile's; or
 *   the highest ordinals of a StatefulSet), and records each deletion through
 *   `decidePodDeletion`, as the webhook does;
 * - a step ends with a controller reconcile, whose result is reported.
 * Virtual time advances one second per pod and ten minutes per step, starting
 * at `options.start`. Pure and deterministic: names and uids are sequential.
 */
import { POD_DELETION_COST_ANNOTATION, POD_TEMPLATE_HASH_LABEL, VERSION_IGNORED } from '../api/keys.ts';
import type { Whitelist } from '../api/whitelist.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { deepClone, isPlainObject } from '../k8s/json.ts';
import { lookupOf } from '../k8s/lookup.ts';
import { apiVersionGroup, isPodActive } from '../k8s/pod.ts';
import { podsToDeleteOnScaleDown } from '../k8s/pod-ranking.ts';
import { POD_PATCH_META, strategicMergePatch } from '../k8s/strategic-merge.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Node, Pod } from '../k8s/types.ts';
import { decidePodCreate, decidePodDeletion } from './admission.ts';
import type { ClusterView } from './cluster-view.ts';
import { writesDeletionCost } from './deletion-cost.ts';
import { markedSubset } from './marker.ts';
import { resolveMaxReplicas } from './percent.ts';
import { tallyPods } from './placed-count.ts';
import { isSupportedOwner } from './pod-selection.ts';
import { planReconcile } from './reconcile-plan.ts';
import { namesPodsByOrdinal } from './statefulset-ordinal.ts';

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
  /** One node per subset (see `planNodes`), in name order. */
  nodes: Node[];
  pods: Pod[];
  now: number;
  seq: number;
  reservations: number;
}

export function planSpread(input: WorkloadSpread, counts: readonly number[], options: PlanOptions = {}): PlanOutcome {
  const ws = deepClone(input);
  ws.metadata = { namespace: 'default', ...ws.metadata, generation: ws.metadata?.generation ?? 1 };
  delete ws.status;
  const state: PlanState = { ws, nodes: planNodes(ws), pods: [], now: options.start ?? Date.UTC(2026, 0, 1), seq: 0, reservations: 0 };
  // The StatefulSet controller names pods by ordinal (and removes the highest first).
  const ordinal = namesPodsByOrdinal(ws.spec.targetRef);
  const steps: PlanStep[] = [];
  for (const replicas of counts) {
    if (!Number.isInteger(replicas) || replicas < 0) return { ok: false, error: `replica count must be a non-negative integer, got ${replicas}` };
    state.now += STEP_GAP_MS;
    const active = () => state.pods.filter(isPodActive);
    if (replicas < active().length) {
      // D19: the ReplicaSet removes pods at once, by the costs they carry now (the last reconcile's).
      const removed = scaleDown(state, replicas, ordinal);
      if (!removed.ok) return removed;
    } else {
      // Scale-out: the controller resolves the percentages against the new count before the new pods come.
      const before = reconcile(state, replicas);
      if (!before.ok) return before;
      if (replicas > active().length) {
        const added = ordinal ? scaleUpOrdinal(state, replicas) : scaleUp(state, replicas);
        if (!added.ok) return added;
      }
    }
    const after = reconcile(state, replicas);
    if (!after.ok) return after;
    steps.push(report(state, replicas));
  }
  return { ok: true, result: { steps } };
}

/** One controller pass: adoptions, status, deletion costs. */
function reconcile(state: PlanState, replicas: number): { ok: true } | { ok: false; error: string } {
  const { ws } = state;
  const plan = planReconcile({
    ws,
    pods: state.pods,
    nodeByName: (name) => state.nodes.find((n) => n.metadata.name === name),
    workloadReplicas: replicas,
    latestVersion: latestVersion(ws),
    now: state.now,
    writeDeletionCost: writesDeletionCost(ws.spec.targetRef),
  });
  if (plan.error !== undefined) return { ok: false, error: plan.error };
  // The adoption patches are metadata-only strategic merges, applied as the API server would.
  const adoptions = new Map(plan.adoptions.map((a) => [a.pod, a.patch]));
  state.pods = state.pods.map((pod) => {
    const patch = adoptions.get(pod.metadata.name ?? '');
    if (patch === undefined) return pod;
    const merged = strategicMergePatch(pod, patch, POD_PATCH_META);
    return merged.ok ? (merged.value as Pod) : pod;
  });
  ws.status = plan.status;
  const costs = new Map(plan.deletionCostPatches.map((p) => [p.pod, p.cost]));
  for (const pod of state.pods) {
    const cost = costs.get(pod.metadata.name ?? '');
    if (cost === undefined) continue;
    pod.metadata.annotations = { ...pod.metadata.annotations, [POD_DELETION_COST_ANNOTATION]: String(cost) };
  }
  return { ok: true };
}

/** Admits one pod as the webhook would; the pod as it is created (injected, or unchanged). */
function admit(state: PlanState, replicas: number, template: Pod): { ok: true; pod: Pod } | { ok: false; error: string } {
  const input = {
    view: planView(state, replicas),
    pod: template,
    namespace: state.ws.metadata.namespace ?? 'default',
    now: state.now,
    newUid: () => `reservation-${String(++state.reservations).padStart(6, '0')}`,
  };
  let decision = decidePodCreate(input);
  if (decision.kind === 'commit') decision = decidePodCreate({ ...input, current: { ws: state.ws } });
  switch (decision.kind) {
    case 'placed':
      if (decision.status !== undefined) state.ws.status = decision.status;
      return { ok: true, pod: decision.pod };
    case 'unplaced':
      return { ok: true, pod: decision.pod ?? template };
    case 'admit':
      return { ok: true, pod: template };
    case 'error':
      return { ok: false, error: decision.message };
    default:
      return { ok: false, error: `planning asked for ${decision.kind === 'read' ? `a read of ${JSON.stringify(decision.read)}` : 'a second commit'}, which the in-memory cluster cannot need` };
  }
}

function scaleUp(state: PlanState, replicas: number): { ok: true } | { ok: false; error: string } {
  while (state.pods.filter(isPodActive).length < replicas) {
    state.now += 1000;
    const admitted = admit(state, replicas, newPod(state, undefined));
    if (!admitted.ok) return admitted;
    const pod = admitted.pod;
    pod.metadata.name = `${state.ws.spec.targetRef.name}-${String(state.seq).padStart(5, '0')}`;
    state.pods.push(run(state, pod));
  }
  return { ok: true };
}

/** The StatefulSet controller creates the missing ordinals, lowest first. */
function scaleUpOrdinal(state: PlanState, replicas: number): { ok: true } | { ok: false; error: string } {
  for (let ordinal = 0; ordinal < replicas; ordinal++) {
    const name = `${state.ws.spec.targetRef.name}-${ordinal}`;
    if (state.pods.some((p) => p.metadata.name === name)) continue;
    state.now += 1000;
    const admitted = admit(state, replicas, newPod(state, name));
    if (!admitted.ok) return admitted;
    state.pods.push(run(state, admitted.pod));
  }
  return { ok: true };
}

function scaleDown(state: PlanState, replicas: number, ordinal: boolean): { ok: true } | { ok: false; error: string } {
  const active = state.pods.filter(isPodActive);
  const diff = active.length - replicas;
  // The StatefulSet controller removes the highest ordinals first; a ReplicaSet ranks its pods.
  const victims = ordinal
    ? [...active].sort((a, b) => ordinalOf(b) - ordinalOf(a)).slice(0, diff)
    : podsToDeleteOnScaleDown(active, active, diff, state.now);
  for (const pod of victims) {
    state.now += 1000;
    const input = { view: planView(state, replicas), subject: { pod }, namespace: state.ws.metadata.namespace ?? 'default', now: state.now };
    let decision = decidePodDeletion(input);
    if (decision.kind === 'commit') decision = decidePodDeletion({ ...input, current: { ws: state.ws } });
    if (decision.kind === 'recorded') state.ws.status = decision.status;
    else if (decision.kind === 'error') return { ok: false, error: decision.message };
    state.pods = state.pods.filter((p) => p !== pod);
  }
  return { ok: true };
}

/**
 * The cluster a plan step runs in, as admission sees it: the WorkloadSpread,
 * its workload with `replicas` (in the field admission reads: the targetFilter
 * paths, `spec.parallelism` of a Job, else `spec.replicas`), the ReplicaSet a
 * Deployment's pods are owned by, and the pods. A target of a custom kind is
 * whitelisted with `spec.replicas`, so it is planned as a cluster that
 * whitelists it would run it. No nodes: the simulation schedule (D3) then
 * falls back to the quota-only choice, as the plan assumes room everywhere.
 */
function planView(state: PlanState, replicas: number): ClusterView {
  const { ws } = state;
  const ref = ws.spec.targetRef;
  const namespace = ws.metadata.namespace ?? 'default';
  const gv = apiVersionGroup(ref.apiVersion);
  const whitelist: Whitelist = isSupportedOwner(groupOf(ref.apiVersion), ref.kind, { workloads: [] })
    ? { workloads: [] }
    : { workloads: [{ group: groupOf(ref.apiVersion), version: gv.ok ? gv.version : '', kind: ref.kind, subResources: [], replicasPath: 'spec.replicas' }] };
  const target = workloadWithReplicas(ws, replicas);
  const replicaSet: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: `${ref.name}-${POD_TEMPLATE_HASH}`, namespace, uid: `owner-${ref.name}`, ownerReferences: [{ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: `owner-${ref.name}`, controller: true }] },
  };
  const objects = ref.kind === 'Deployment' ? [target, replicaSet] : [target];
  return {
    whitelist: () => whitelist,
    workloadSpreads: (ns) => (ns === namespace ? [ws] : []),
    workloadSpread: (ns, name) => lookupOf(ns === namespace && name === ws.metadata.name ? ws : undefined),
    object: (ns, r) => {
      const wanted = groupOf(r.apiVersion);
      return lookupOf(ns === namespace ? objects.find((o) => o.kind === r.kind && o.metadata?.name === r.name && groupOf(o.apiVersion ?? '') === wanted) : undefined);
    },
    pod: (ns, name) => lookupOf(state.pods.find((p) => p.metadata.namespace === ns && p.metadata.name === name)),
    nodes: () => [],
    podsOnNode: () => [],
    requestedOnNode: () => ({ cpuMilli: 0, memory: 0, pods: 0 }),
    // The plan's pods are its own: every admitted pod is in `state.pods` before the next admission.
    placedTally: (ns, wsName, version, options) => tallyPods(state.pods, ns, wsName, version, options),
    recentPlacements: () => [],
  };
}

function groupOf(apiVersion: string): string {
  const gv = apiVersionGroup(apiVersion);
  return gv.ok ? gv.group : apiVersion;
}

/** The target as admission reads its replica count (spec §5.1). */
function workloadWithReplicas(ws: WorkloadSpread, replicas: number): KubeObject {
  const ref = ws.spec.targetRef;
  const obj: KubeObject = { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ws.metadata.namespace ?? 'default', uid: `owner-${ref.name}` } };
  const paths = ws.spec.targetFilter?.replicasPathList ?? [];
  if (paths.length > 0) {
    // The sum of the paths is the count: the first carries it, the others 0.
    paths.forEach((path, i) => setPath(obj as Record<string, unknown>, path, i === 0 ? replicas : 0));
  } else {
    obj['spec'] = ref.kind === 'Job' ? { parallelism: replicas } : { replicas };
  }
  return obj;
}

/** Sets a dotted replicas path (numeric segments index arrays, as the path walker reads them). */
function setPath(obj: Record<string, unknown>, path: string, value: number): void {
  const segments = path.split('.');
  let current: unknown = obj;
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    const nextIsIndex = !last && /^\d+$/.test(segments[i + 1] ?? '');
    const fresh = (): unknown => (nextIsIndex ? [] : {});
    if (Array.isArray(current)) {
      const index = Number(segment);
      while (current.length <= index) current.push({});
      if (last) current[index] = value;
      else if (!isPlainObject(current[index]) && !Array.isArray(current[index])) current[index] = fresh();
      current = current[index];
    } else if (isPlainObject(current)) {
      if (last) current[segment] = value;
      else if (!isPlainObject(current[segment]) && !Array.isArray(current[segment])) current[segment] = fresh();
      current = current[segment];
    }
  });
}

function report(state: PlanState, replicas: number): PlanStep {
  const subsets: Record<string, PlanSubsetResult> = {};
  const active = state.pods.filter(isPodActive);
  let unassigned = active.length;
  for (const subset of state.ws.spec.subsets) {
    const pods = active.filter((p) => markedSubset(p, state.ws.metadata.name ?? '') === subset.name);
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

/** The pod scheduled (onto its subset's node, or where the scheduler would put an unplaced one) and Running+Ready. */
function run(state: PlanState, pod: Pod): Pod {
  const subset = markedSubset(pod, state.ws.metadata.name ?? '');
  const at = formatTime(state.now);
  pod.spec.nodeName = subset !== undefined ? `node-${subset}` : leastLoadedNode(state);
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

/** The node with the fewest active pods, the first by name on a tie (as the embedded scheduler scores equal nodes). */
function leastLoadedNode(state: PlanState): string {
  let best: { name: string; pods: number } | undefined;
  for (const node of state.nodes) {
    const name = node.metadata.name ?? '';
    const pods = state.pods.filter((p) => isPodActive(p) && p.spec.nodeName === name).length;
    if (best === undefined || pods < best.pods) best = { name, pods };
  }
  return best?.name ?? 'node-unassigned';
}

/**
 * One node per subset, named `node-<subset>`, with the labels its required
 * term asks for (`In`: the first value; `Exists`: "true"; `Gt`/`Lt`: one past
 * the bound; `NotIn`/`DoesNotExist`: none), so a pod there is adopted into
 * that subset as the controller would adopt it.
 */
function planNodes(ws: WorkloadSpread): Node[] {
  const nodes = ws.spec.subsets.map((subset): Node => {
    const labels: Record<string, string> = {};
    for (const e of subset.requiredNodeSelectorTerm?.matchExpressions ?? []) {
      const first = e.values?.[0];
      if (e.operator === 'In' && first !== undefined) labels[e.key] = first;
      else if (e.operator === 'Exists') labels[e.key] = 'true';
      else if (e.operator === 'Gt' && first !== undefined) labels[e.key] = String(Number(first) + 1);
      else if (e.operator === 'Lt' && first !== undefined) labels[e.key] = String(Number(first) - 1);
    }
    return { apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${subset.name}`, labels } };
  });
  return nodes.sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
}

function latestVersion(ws: WorkloadSpread): string {
  const kind = ws.spec.targetRef.kind;
  return kind === 'Deployment' || kind === 'ReplicaSet' ? POD_TEMPLATE_HASH : VERSION_IGNORED;
}

function ordinalOf(pod: Pod): number {
  const m = /-(\d+)$/.exec(pod.metadata.name ?? '');
  return m === null ? -1 : Number(m[1]);
}
