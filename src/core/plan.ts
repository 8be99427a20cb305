/**
 * What-if planning without a cluster (`workloadspread plan`): scales the
 * target of a WorkloadSpread to each count in turn and reports, per step and
 * subset, the limit, the pods and their deletion costs, and the pods no
 * subset could take.
 *
 * The engine drives the same decisions the webhook and the controller make,
 * in the order a healthy cluster makes them (D19: what `plan` predicts is what
 * the cluster does — a test replays random scale sequences through both):
 * - a scale-out starts with a controller reconcile (the workload's replica
 *   count changed, so percentages resolve against the new count);
 * - scale-out admits pods one by one through `decidePodCreate` (admission.ts,
 *   the webhook's own decision) over a small in-memory cluster (`planView`:
 *   the WorkloadSpread, its workload at the step's replica count, the pods);
 *   every placed pod is assumed to schedule in its subset and become ready at
 *   once. A pod no subset can take (D11: admitted unchanged, a Warning event
 *   NoSubsetAvailable) is reported as **unplaced**: in a cluster the
 *   scheduler puts it on any node that fits it and the controller adopts it
 *   into the subset of that node (or none), which depends on the cluster's
 *   nodes — which `plan` does not know, so it never counts such a pod in a
 *   subset. It holds no place, has no node, and goes first on a scale-in (as
 *   the pods in no subset or over a limit do in a cluster);
 * - a scale-in removes pods at once, in the upstream ReplicaSet order with the
 *   deletion costs the pods carry at that moment (the last reconcile's; or
 *   the highest ordinals of a StatefulSet), and records each deletion through
 *   `decidePodDeletion`, as the webhook does;
 * - a step ends with a controller reconcile, whose result is reported.
 *
 * Cost: O(n log n) in the pods of a step. Within a scale-out the plan does
 * what the controller's next status does once a pod it admitted exists: the
 * pod's reservation (a `creatingPods` entry) becomes one of the subset's
 * `replicas`, and a recorded deletion (`deletingPods`) goes once the pod is
 * gone — so the status stays the size of the spec instead of growing by a
 * pod per admission, and every decision sees the same room (`missingReplicas`
 * and occupancy do not change). The pods are indexed (by name, and the
 * counts admission asks per subset) instead of scanned.
 * Virtual time advances one second per pod and ten minutes per step, starting
 * at `options.start`. Pure and deterministic: names and uids are sequential.
 */
import { POD_DELETION_COST_ANNOTATION, POD_TEMPLATE_HASH_LABEL, VERSION_IGNORED } from '../api/keys.ts';
import type { Whitelist } from '../api/whitelist.ts';
import type { SubsetStatus, WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { deepClone, isPlainObject } from '../k8s/json.ts';
import { lookupOf } from '../k8s/lookup.ts';
import { apiVersionGroup } from '../k8s/pod.ts';
import { podsToDeleteOnScaleDown } from '../k8s/pod-ranking.ts';
import { POD_PATCH_META, strategicMergePatch } from '../k8s/strategic-merge.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { decidePodCreate, decidePodDeletion } from './admission.ts';
import type { ClusterView, PlacedTally } from './cluster-view.ts';
import { writesDeletionCost } from './deletion-cost.ts';
import { markedSubset, readMarker } from './marker.ts';
import { resolveMaxReplicas } from './percent.ts';
import { placedAnswerKey, placedCountKeys, placedKeys } from './placed-count.ts';
import { isSupportedOwner } from './pod-selection.ts';
import { planReconcile } from './reconcile-plan.ts';
import { namesPodsByOrdinal } from './statefulset-ordinal.ts';

export interface PlanSubsetResult {
  /** The resolved maxReplicas; null when unlimited. */
  limit: number | null;
  /** Active pods placed in the subset. */
  pods: number;
  /** Sorted distinct deletion costs of the subset's pods (empty when the target gets none). */
  costs: number[];
}

export interface PlanStep {
  replicas: number;
  subsets: Record<string, PlanSubsetResult>;
  /** Active pods placed in a subset (the sum of the subsets' pods). */
  placed: number;
  /**
   * Active pods no subset could take (D11): admitted unchanged with a Warning
   * event NoSubsetAvailable; where they land, and so which subset the
   * controller adopts them into, depends on the cluster's nodes.
   */
  unplaced: number;
  /** The same count as `unplaced` (the name of earlier versions, kept for scripts). */
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

/**
 * The plan's pods, in creation order, indexed by name and by what admission
 * counts per subset (`placedKeys`, the index the manager's cache keeps), so
 * no decision scans the pods.
 */
class PlanPods {
  readonly #byName = new Map<string, Pod>();
  readonly #counts = new Map<string, number>();
  readonly #answers = new Map<string, number>();

  get size(): number {
    return this.#byName.size;
  }

  list(): Pod[] {
    return [...this.#byName.values()];
  }

  get(name: string): Pod | undefined {
    return this.#byName.get(name);
  }

  add(pod: Pod): void {
    this.#byName.set(pod.metadata.name ?? '', pod);
    const keys = placedKeys(pod);
    for (const k of keys.counts) this.#counts.set(k, (this.#counts.get(k) ?? 0) + 1);
    for (const k of keys.answers) this.#answers.set(k, (this.#answers.get(k) ?? 0) + 1);
  }

  remove(pod: Pod): void {
    if (this.#byName.get(pod.metadata.name ?? '') !== pod) return;
    this.#byName.delete(pod.metadata.name ?? '');
    const keys = placedKeys(pod);
    for (const k of keys.counts) this.#counts.set(k, (this.#counts.get(k) ?? 0) - 1);
    for (const k of keys.answers) this.#answers.set(k, (this.#answers.get(k) ?? 0) - 1);
  }

  /** Replaces every pod (after a reconcile patched some). */
  reset(pods: readonly Pod[]): void {
    this.#byName.clear();
    this.#counts.clear();
    this.#answers.clear();
    for (const pod of pods) this.add(pod);
  }

  /** As `tallyPods` over the same pods (core/placed-count.ts). */
  tally(namespace: string, wsName: string, version: string, options: Parameters<typeof placedCountKeys>[4]): PlacedTally {
    return {
      count: (subset) => placedCountKeys(namespace, wsName, subset, version, options).reduce((sum, k) => sum + (this.#counts.get(k) ?? 0), 0),
      shows: (key) => (this.#answers.get(placedAnswerKey(namespace, wsName, key)) ?? 0) > 0,
    };
  }
}

interface PlanState {
  ws: WorkloadSpread;
  /** Every pod of the plan is active: a deleted pod is removed at once. */
  pods: PlanPods;
  now: number;
  seq: number;
  reservations: number;
  /** The view of the current step (`planView` for its replica count). */
  view?: { replicas: number; view: ClusterView };
}

export function planSpread(input: WorkloadSpread, counts: readonly number[], options: PlanOptions = {}): PlanOutcome {
  const ws = deepClone(input);
  ws.metadata = { namespace: 'default', ...ws.metadata, generation: ws.metadata?.generation ?? 1 };
  delete ws.status;
  const state: PlanState = { ws, pods: new PlanPods(), now: options.start ?? Date.UTC(2026, 0, 1), seq: 0, reservations: 0 };
  // The StatefulSet controller names pods by ordinal (and removes the highest first).
  const ordinal = namesPodsByOrdinal(ws.spec.targetRef);
  const steps: PlanStep[] = [];
  for (const replicas of counts) {
    if (!Number.isInteger(replicas) || replicas < 0) return { ok: false, error: `replica count must be a non-negative integer, got ${replicas}` };
    state.now += STEP_GAP_MS;
    if (replicas < state.pods.size) {
      // D19: the ReplicaSet removes pods at once, by the costs they carry now (the last reconcile's).
      const removed = scaleDown(state, replicas, ordinal);
      if (!removed.ok) return removed;
    } else {
      // Scale-out: the controller resolves the percentages against the new count before the new pods come.
      const before = reconcile(state, replicas);
      if (!before.ok) return before;
      if (replicas > state.pods.size) {
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
  const pods = state.pods.list();
  const plan = planReconcile({
    ws,
    pods,
    // Placed pods are in their subsets already and unplaced ones have no node: nothing to adopt by node.
    nodeByName: () => undefined,
    workloadReplicas: replicas,
    latestVersion: latestVersion(ws),
    now: state.now,
    writeDeletionCost: writesDeletionCost(ws.spec.targetRef),
  });
  if (plan.error !== undefined) return { ok: false, error: plan.error };
  // The adoption patches are metadata-only strategic merges, applied as the API server would.
  const adoptions = new Map(plan.adoptions.map((a) => [a.pod, a.patch]));
  const patched = pods.map((pod) => {
    const patch = adoptions.get(pod.metadata.name ?? '');
    if (patch === undefined) return pod;
    const merged = strategicMergePatch(pod, patch, POD_PATCH_META);
    return merged.ok ? (merged.value as Pod) : pod;
  });
  ws.status = plan.status;
  const costs = new Map(plan.deletionCostPatches.map((p) => [p.pod, p.cost]));
  for (const pod of patched) {
    const cost = costs.get(pod.metadata.name ?? '');
    if (cost === undefined) continue;
    pod.metadata.annotations = { ...pod.metadata.annotations, [POD_DELETION_COST_ANNOTATION]: String(cost) };
  }
  state.pods.reset(patched);
  return { ok: true };
}

/** Admits one pod as the webhook would; the pod as it is created (injected, or unchanged). */
function admit(state: PlanState, replicas: number, template: Pod): { ok: true; pod: Pod } | { ok: false; error: string } {
  const input = {
    view: viewOf(state, replicas),
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

/**
 * Every subset list of the status (the top-level one and one per version),
 * each entry passed through `edit` (which returns the entry itself when it
 * has nothing to change); the status itself when nothing changed.
 */
function editStatuses(status: WorkloadSpreadStatus | undefined, edit: (s: SubsetStatus) => SubsetStatus): WorkloadSpreadStatus | undefined {
  if (status === undefined) return undefined;
  let changed = false;
  const list = (statuses: SubsetStatus[]): SubsetStatus[] => {
    const next = statuses.map((s) => edit(s));
    if (next.some((s, i) => s !== statuses[i])) {
      changed = true;
      return next;
    }
    return statuses;
  };
  const top = status.subsetStatuses === undefined ? undefined : list(status.subsetStatuses);
  const versioned = status.versionedSubsetStatuses === undefined ? undefined : Object.fromEntries(Object.entries(status.versionedSubsetStatuses).map(([v, l]) => [v, list(l)]));
  if (!changed) return status;
  return { ...status, ...(top === undefined ? {} : { subsetStatuses: top }), ...(versioned === undefined ? {} : { versionedSubsetStatuses: versioned }) };
}

/**
 * What the controller's next status does for a pod admission reserved a
 * place for, once the pod exists (core/subset-status.ts): the reservation
 * (`creatingPods[key]`) becomes one of the subset's replicas. Occupancy and
 * missingReplicas stay as they were, so later admissions decide the same.
 */
function countCreated(status: WorkloadSpreadStatus | undefined, key: string): WorkloadSpreadStatus | undefined {
  return editStatuses(status, (s) => {
    if (s.creatingPods === undefined || !Object.hasOwn(s.creatingPods, key)) return s;
    const { [key]: _taken, ...rest } = s.creatingPods;
    return { ...s, creatingPods: rest, replicas: s.replicas + 1 };
  });
}

/** The same for a deletion admission recorded, once the pod is gone: the `deletingPods` entry goes with the replica (the step's last reconcile recomputes the status from the pods). */
function countDeleted(status: WorkloadSpreadStatus | undefined, name: string): WorkloadSpreadStatus | undefined {
  return editStatuses(status, (s) => {
    if (s.deletingPods === undefined || !Object.hasOwn(s.deletingPods, name)) return s;
    const { [name]: _gone, ...rest } = s.deletingPods;
    return { ...s, deletingPods: rest, replicas: Math.max(0, s.replicas - 1) };
  });
}

/** Admits a new pod, runs it, and lets the status count it. */
function create(state: PlanState, replicas: number, name: string | undefined): { ok: true } | { ok: false; error: string } {
  state.now += 1000;
  const admitted = admit(state, replicas, newPod(state, name));
  if (!admitted.ok) return admitted;
  const pod = admitted.pod;
  if (name === undefined) pod.metadata.name = `${state.ws.spec.targetRef.name}-${String(state.seq).padStart(5, '0')}`;
  state.pods.add(run(state, pod));
  const marker = readMarker(pod);
  const key = marker?.uid !== undefined && marker.uid !== '' ? marker.uid : (pod.metadata.name ?? '');
  const counted = countCreated(state.ws.status, key);
  if (counted !== undefined) state.ws.status = counted;
  return { ok: true };
}

function scaleUp(state: PlanState, replicas: number): { ok: true } | { ok: false; error: string } {
  while (state.pods.size < replicas) {
    const created = create(state, replicas, undefined);
    if (!created.ok) return created;
  }
  return { ok: true };
}

/** The StatefulSet controller creates the missing ordinals, lowest first. */
function scaleUpOrdinal(state: PlanState, replicas: number): { ok: true } | { ok: false; error: string } {
  for (let ordinal = 0; ordinal < replicas; ordinal++) {
    const name = `${state.ws.spec.targetRef.name}-${ordinal}`;
    if (state.pods.get(name) !== undefined) continue;
    const created = create(state, replicas, name);
    if (!created.ok) return created;
  }
  return { ok: true };
}

function scaleDown(state: PlanState, replicas: number, ordinal: boolean): { ok: true } | { ok: false; error: string } {
  const active = state.pods.list();
  const diff = active.length - replicas;
  // The StatefulSet controller removes the highest ordinals first; a ReplicaSet ranks its pods.
  const victims = ordinal
    ? [...active].sort((a, b) => ordinalOf(b) - ordinalOf(a)).slice(0, diff)
    : podsToDeleteOnScaleDown(active, active, diff, state.now);
  for (const pod of victims) {
    state.now += 1000;
    const input = { view: viewOf(state, replicas), subject: { pod }, namespace: state.ws.metadata.namespace ?? 'default', now: state.now };
    let decision = decidePodDeletion(input);
    if (decision.kind === 'commit') decision = decidePodDeletion({ ...input, current: { ws: state.ws } });
    if (decision.kind === 'recorded') state.ws.status = decision.status;
    else if (decision.kind === 'error') return { ok: false, error: decision.message };
    state.pods.remove(pod);
    const counted = countDeleted(state.ws.status, pod.metadata.name ?? '');
    if (counted !== undefined) state.ws.status = counted;
  }
  return { ok: true };
}

/** The step's view, built once per replica count (it reads the pods and the WorkloadSpread's status live). */
function viewOf(state: PlanState, replicas: number): ClusterView {
  if (state.view?.replicas !== replicas) state.view = { replicas, view: planView(state, replicas) };
  return state.view.view;
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
    pod: (ns, name) => lookupOf(ns === namespace ? state.pods.get(name) : undefined),
    nodes: () => [],
    podsOnNode: () => [],
    requestedOnNode: () => ({ cpuMilli: 0, memory: 0, pods: 0 }),
    // The plan's pods are its own: every admitted pod is in `state.pods` before the next admission.
    placedTally: (ns, wsName, version, options) => state.pods.tally(ns, wsName, version, options),
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
  const wsName = state.ws.metadata.name ?? '';
  const bySubset = new Map<string, { pods: number; costs: Set<number> }>();
  let unplaced = 0;
  for (const pod of state.pods.list()) {
    const subset = markedSubset(pod, wsName);
    const entry = subset === undefined ? undefined : bySubset.get(subset) ?? bySubset.set(subset, { pods: 0, costs: new Set() }).get(subset);
    if (entry === undefined) {
      unplaced++;
      continue;
    }
    entry.pods++;
    const raw = pod.metadata.annotations?.[POD_DELETION_COST_ANNOTATION];
    if (raw !== undefined) entry.costs.add(Number(raw));
  }
  const subsets: Record<string, PlanSubsetResult> = {};
  let placed = 0;
  for (const subset of state.ws.spec.subsets) {
    const entry = bySubset.get(subset.name);
    const limit = resolveMaxReplicas(subset.maxReplicas, replicas);
    subsets[subset.name] = {
      limit: limit === undefined || limit < 0 ? null : limit,
      pods: entry?.pods ?? 0,
      costs: [...(entry?.costs ?? [])].sort((a, b) => a - b),
    };
    placed += entry?.pods ?? 0;
  }
  // A pod marked in a subset the spec no longer has counts as in no subset.
  unplaced = state.pods.size - placed;
  return { replicas, subsets, placed, unplaced, unassigned: unplaced };
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

/**
 * The pod Running and Ready: a placed pod on its subset's node, an unplaced
 * one on no node the plan could name (where it lands depends on the
 * cluster's nodes), which also makes it the first a ReplicaSet removes.
 */
function run(state: PlanState, pod: Pod): Pod {
  const subset = markedSubset(pod, state.ws.metadata.name ?? '');
  const at = formatTime(state.now);
  if (subset !== undefined) pod.spec.nodeName = `node-${subset}`;
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
