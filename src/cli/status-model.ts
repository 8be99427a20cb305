/**
 * What `workloadspread status` shows for one WorkloadSpread (DECISIONS D16),
 * computed from two sources that can disagree for a moment, and both shown:
 *
 * - the live pods: which pods belong to the target (`podsForWorkloadSpread`,
 *   the controller's rule), which subset each is in (its marker annotation,
 *   `readMarker`), whether it is active and ready, its deletion cost;
 * - the stored status: the remaining quota (`missingReplicas`), the
 *   admission bookkeeping (`creatingPods` / `deletingPods`) and the
 *   `Schedulable` condition, as the manager last wrote them.
 *
 * The limit is the subset's `maxReplicas` resolved against the workload's
 * replicas (`resolveMaxReplicas`, rounding percentages up as the engine
 * does). A pod counts in a subset when it is active and its marker names this
 * WorkloadSpread and a subset of its spec; every other active pod of the
 * target is listed as unassigned (created before the WorkloadSpread, admitted
 * when no subset had room, marked by another WorkloadSpread, or in a subset
 * that was removed from the spec). Nothing here decides anything the engine
 * decides: it reads. Pure; start at `workloadSpreadView`.
 */
import { FAKE_SUBSET_NAME, POD_DELETION_COST_ANNOTATION, SUBSET_SCHEDULABLE } from '../api/keys.ts';
import { rebalanceRequested, rebalanceSettings } from '../api/rebalance-settings.ts';
import type { SubsetStatus, WorkloadSpread } from '../api/workloadspread.ts';
import { decodeWorkloadSpread } from '../api/decode.ts';
import { markedSubset, readMarker } from '../core/marker.ts';
import { resolveMaxReplicas } from '../core/percent.ts';
import { podsForWorkloadSpread } from '../core/workload-pods.ts';
import { isPlainObject } from '../k8s/json.ts';
import { isPodActive, isPodReady, podDeletionCost, podPhase } from '../k8s/pod.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import type { BudgetView } from './status-budgets.ts';

export interface CostRange {
  min: number;
  max: number;
}

export interface SubsetView {
  name: string;
  /** Resolved maxReplicas; null when unlimited (or unresolvable, see `problems`). */
  limit: number | null;
  minReplicas: number | null;
  /** Active pods in the subset (live). */
  pods: number;
  /** Of those, ready. */
  ready: number;
  /** Of those, not bound to a node yet (the scheduler found no room, or has not looked yet). */
  pending: number;
  /** Stored `missingReplicas`: quota left; null when unlimited or not reported yet. */
  missing: number | null;
  /** Stored admissions not yet seen as pods. */
  creating: number;
  /** Stored deletions not yet seen gone. */
  deleting: number;
  /** The stored `Schedulable` condition; null when the subset has none (no Adaptive rescheduling, or not reported yet). */
  schedulable: { status: string; reason: string | null; since: string | null } | null;
  /** Range of the deletion costs of the subset's pods that carry one. */
  deletionCost: CostRange | null;
}

export interface PodView {
  name: string;
  node: string | null;
  phase: string;
  ready: boolean;
  /** The subset of the spec it counts in; null when it belongs to none. */
  subset: string | null;
  /** Why it belongs to no subset (unassigned pods only). */
  reason?: string;
  deletionCost: number | null;
}

export interface TargetView {
  apiVersion: string;
  kind: string;
  name: string;
  found: boolean;
  /** The replicas percentages resolve against; null when unknown. */
  replicas: number | null;
}

/** D18: the rebalancer's settings (annotations) and what it last said (`status.rebalance`). */
export interface RebalanceView {
  /** Whether the annotation asks for it; `error` when its value is not valid (nothing moves then). */
  enabled: boolean;
  maxInFlight: number | null;
  error?: string;
  /** From the stored status; null until the manager has looked. */
  reason: string | null;
  message: string | null;
  since: string | null;
  pending: number | null;
  moves: { pod: string; from: string | null; to: string; evictedAt: string }[];
}

export interface WorkloadSpreadView {
  namespace: string;
  name: string;
  target: TargetView;
  /** True when the stored status is for the current spec (observedGeneration = generation). */
  statusCurrent: boolean;
  subsets: SubsetView[];
  /** Active pods of the target in a subset / ready among them. */
  placed: number;
  ready: number;
  /** Every active pod of the target, by name; `subset` is null for those in no subset of the spec. */
  pods: PodView[];
  /** The active pods of the target that belong to no subset (`pods` with a null subset, with a reason). */
  unassigned: PodView[];
  /** Things that make the view incomplete (target missing, replicas unknown, a bad selector). */
  problems: string[];
  /** Disruption budgets selecting its pods (status-budgets.ts), when the caller listed budgets. */
  budgets?: BudgetView[];
  /** Rebalancing (D18), when the annotation asks for it or the status still reports it. */
  rebalance?: RebalanceView;
}

export interface ViewInput {
  ws: WorkloadSpread;
  /** The target; undefined when it does not exist. */
  workload: KubeObject | undefined;
  /** The target's replicas (`controllerWorkloadReplicas`), or why they are unknown. */
  replicas: { ok: true; replicas: number } | { ok: false; error: string };
  /** ReplicaSets of the namespace (for a Deployment target). */
  replicaSets: readonly KubeObject[];
  /** Pods of the namespace. */
  pods: readonly Pod[];
  /** A custom workload's pod selector (its scale subresource's `status.selector`). */
  fallbackSelector?: { matches(labels: Record<string, string>): boolean };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function countKeys(v: unknown): number {
  return isPlainObject(v) ? Object.keys(v).length : 0;
}

function hasDeletionCost(pod: Pod): boolean {
  const annotations: unknown = pod.metadata?.annotations;
  return isPlainObject(annotations) && typeof annotations[POD_DELETION_COST_ANNOTATION] === 'string';
}

function podView(pod: Pod, subset: string | null): PodView {
  const node = str(pod.spec?.nodeName);
  return {
    name: str(pod.metadata?.name),
    node: node === '' ? null : node,
    phase: podPhase(pod) || 'Unknown',
    ready: isPodReady(pod),
    subset,
    deletionCost: hasDeletionCost(pod) ? podDeletionCost(pod) : null,
  };
}

function schedulableOf(status: SubsetStatus | undefined): SubsetView['schedulable'] {
  const conditions: unknown = status?.conditions;
  if (!Array.isArray(conditions)) return null;
  for (const c of conditions as unknown[]) {
    if (!isPlainObject(c) || c['type'] !== SUBSET_SCHEDULABLE) continue;
    const reason = str(c['reason']);
    const since = str(c['lastTransitionTime']);
    return { status: str(c['status']) || 'Unknown', reason: reason === '' ? null : reason, since: since === '' ? null : since };
  }
  return null;
}

function byName(list: unknown): Map<string, SubsetStatus> {
  const out = new Map<string, SubsetStatus>();
  if (!Array.isArray(list)) return out;
  for (const s of list as unknown[]) {
    if (isPlainObject(s) && typeof s['name'] === 'string' && !out.has(s['name'])) out.set(s['name'], s as unknown as SubsetStatus);
  }
  return out;
}

const compareNames = (a: PodView, b: PodView): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The view of one WorkloadSpread; never throws on malformed objects. */
export function workloadSpreadView(input: ViewInput): WorkloadSpreadView {
  const { ws } = input;
  const problems: string[] = [];
  const namespace = str(ws.metadata?.namespace);
  const name = str(ws.metadata?.name);
  const ref: unknown = ws.spec?.targetRef;
  const targetRef = isPlainObject(ref) ? ref : {};
  const replicas = input.replicas.ok ? input.replicas.replicas : null;
  const target: TargetView = {
    apiVersion: str(targetRef['apiVersion']),
    kind: str(targetRef['kind']),
    name: str(targetRef['name']),
    found: input.workload !== undefined,
    replicas: replicas !== null && replicas >= 0 ? replicas : null,
  };
  if (!target.found) problems.push(`the target ${target.kind || '?'} ${target.name || '?'} does not exist`);
  if (!input.replicas.ok) problems.push(`the target's replicas: ${input.replicas.error}`);
  else if (input.replicas.replicas < 0) problems.push("the target's replicas are unknown (a custom kind without a replicas path or scale subresource)");

  const subsets = Array.isArray(ws.spec?.subsets) ? ws.spec.subsets.filter((s) => isPlainObject(s) && typeof s.name === 'string') : [];
  const stored = byName(ws.status?.subsetStatuses);
  const generation = ws.metadata?.generation;
  const observed = ws.status?.observedGeneration;
  const statusCurrent = typeof generation !== 'number' || observed === generation;

  // The pods the controller considers; with replicas unknown, as the controller does, resolve against 0.
  // A WorkloadSpread the manager cannot decode is ignored by it (kube/caches.ts): say so, select nothing.
  const decoded = decodeWorkloadSpread(ws);
  if (!decoded.ok) problems.push(`the manager ignores this WorkloadSpread: ${decoded.error}`);
  const selected = target.found && decoded.ok
    ? podsForWorkloadSpread({
        ws: decoded.value,
        workload: input.workload,
        replicaSets: input.replicaSets,
        pods: input.pods,
        workloadReplicas: replicas ?? 0,
        ...(input.fallbackSelector === undefined ? {} : { fallbackSelector: input.fallbackSelector }),
      })
    : { ok: true as const, pods: [] as Pod[] };
  if (!selected.ok) problems.push(selected.error);
  const pods = selected.ok ? selected.pods.filter(isPodActive) : [];

  const members = new Map<string, Pod[]>(subsets.map((s) => [s.name, []]));
  const podViews: PodView[] = [];
  const unassigned: PodView[] = [];
  for (const pod of pods) {
    const subset = markedSubset(pod, name);
    const list = subset === undefined ? undefined : members.get(subset);
    const view = podView(pod, list === undefined ? null : (subset ?? null));
    podViews.push(view);
    if (list !== undefined) {
      list.push(pod);
      continue;
    }
    const marker = readMarker(pod);
    view.reason = subset !== undefined
      ? `subset ${subset} is not in the spec`
      : marker !== undefined && marker.name !== ''
        ? `placed by WorkloadSpread ${marker.name}`
        : 'no subset (created before the WorkloadSpread, or no subset had room)';
    unassigned.push(view);
  }
  podViews.sort(compareNames);
  unassigned.sort(compareNames);

  const views: SubsetView[] = subsets.map((subset) => {
    const list = members.get(subset.name) ?? [];
    let limit: number | null = null;
    if (subset.maxReplicas !== undefined && subset.maxReplicas !== null) {
      const resolved = resolveMaxReplicas(subset.maxReplicas, replicas ?? 0);
      if (resolved === undefined) problems.push(`subset ${subset.name}: maxReplicas ${JSON.stringify(subset.maxReplicas)} cannot be resolved`);
      else if (resolved >= 0) limit = resolved;
    }
    const status = stored.get(subset.name);
    const costs = list.filter(hasDeletionCost).map(podDeletionCost);
    const missing = status?.missingReplicas;
    return {
      name: subset.name,
      limit,
      minReplicas: typeof subset.minReplicas === 'number' ? subset.minReplicas : null,
      pods: list.length,
      ready: list.filter(isPodReady).length,
      pending: list.filter((p) => str(p.spec?.nodeName) === '').length,
      missing: typeof missing === 'number' && missing >= 0 ? missing : null,
      creating: countKeys(status?.creatingPods),
      deleting: countKeys(status?.deletingPods),
      schedulable: schedulableOf(status),
      deletionCost: costs.length === 0 ? null : { min: Math.min(...costs), max: Math.max(...costs) },
    };
  });

  const view: WorkloadSpreadView = {
    namespace,
    name,
    target,
    statusCurrent,
    subsets: views,
    placed: views.reduce((n, s) => n + s.pods, 0),
    ready: views.reduce((n, s) => n + s.ready, 0),
    pods: podViews,
    unassigned,
    problems,
  };
  const rebalance = rebalanceView(ws);
  if (rebalance !== undefined) view.rebalance = rebalance;
  return view;
}

/** D18's part of the view: undefined when rebalancing is neither asked for nor reported. */
function rebalanceView(ws: WorkloadSpread): RebalanceView | undefined {
  const stored: unknown = ws.status?.rebalance;
  const status = isPlainObject(stored) ? stored : undefined;
  if (!rebalanceRequested(ws) && status === undefined) return undefined;
  const settings = rebalanceSettings(ws);
  const out: RebalanceView = {
    enabled: settings.ok && settings.settings.enabled,
    maxInFlight: settings.ok && settings.settings.enabled ? settings.settings.maxInFlight : null,
    reason: str(status?.['reason']) || null,
    message: str(status?.['message']) || null,
    since: str(status?.['lastTransitionTime']) || null,
    pending: typeof status?.['pending'] === 'number' ? status['pending'] : null,
    moves: (Array.isArray(status?.['moves']) ? (status['moves'] as unknown[]) : []).filter(isPlainObject).map((m) => ({
      pod: str(m['pod']),
      from: str(m['from']) === FAKE_SUBSET_NAME ? null : str(m['from']),
      to: str(m['to']),
      evictedAt: str(m['evictedAt']),
    })),
  };
  if (!settings.ok) out.error = settings.error;
  return out;
}
