/**
 * Disruption-budget math for DomainDisruptionBudgets (DECISIONS D14, KEP-8
 * stories 1–3): which pods a budget governs, which domain each one is in, and
 * the status of every domain — the same figures a PodDisruptionBudget keeps,
 * computed per domain. Pure: the pods, nodes and WorkloadSpread are passed
 * in, and so is `now`.
 *
 * Per domain (upstream's disruption controller, one domain at a time):
 * - expectedPods: selected pods in the domain that have not finished
 *   (Succeeded/Failed); terminating pods still count, so a pod on its way out
 *   keeps occupying the budget until it is gone;
 * - desiredHealthy: minAvailable (a percentage of expectedPods, rounded up),
 *   or expectedPods − maxUnavailable (a percentage rounded up), never < 0;
 * - disruptedPods: evictions approved by the webhook and not yet observed;
 *   an entry is dropped when its pod is gone or terminating, or 2 minutes
 *   after its approval (the pod was not deleted after all);
 * - currentHealthy: Ready pods of the domain that are neither terminating nor
 *   in disruptedPods;
 * - disruptionsAllowed: currentHealthy − desiredHealthy, never < 0, and 0
 *   for a domain without expected pods.
 *
 * Domains (`domainOfPod`): one per value of `topologyKey`; the pods on nodes
 * matching `nodeSelectorTerm` (others are not governed); one per subset named
 * by the pod's marker for `workloadSpreadRef` (subsets without pods still
 * appear, with 0); `all` without a mode. Choices where the issue left room:
 * a pod not scheduled yet is not governed by a topologyKey or
 * nodeSelectorTerm budget (it is in no domain yet, and never Ready);
 * a pod on a node without the topologyKey label, or on a node we do not know,
 * is in the domain `<none>` (still protected, and visible in the status); with
 * workloadSpreadRef, a pod without that WorkloadSpread's marker is in `<none>`.
 * An empty selector selects nothing (validation refuses it; this keeps a
 * budget that slipped through from governing a whole namespace).
 * Start at `computeBudgetStatus`; eviction decisions are in
 * `disruption-decision.ts`.
 */
import {
  CONDITION_DISRUPTION_ALLOWED,
  CONDITION_SPEC_VALID,
  CONDITION_WORKLOADSPREAD_FOUND,
  DISRUPTED_POD_TIMEOUT_MS,
  DOMAIN_ALL,
  DOMAIN_MATCHING_NODES,
  DOMAIN_NONE,
  REASON_FOUND,
  REASON_INSUFFICIENT_PODS,
  REASON_INVALID,
  REASON_NOT_FOUND,
  REASON_SUFFICIENT_PODS,
  REASON_VALID,
} from '../api/names.ts';
import type { BudgetCondition, DomainDisruptionBudget, DomainDisruptionBudgetStatus, DomainStatus } from '../api/disruption-budget.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { deepEqual, isPlainObject } from '../k8s/json.ts';
import { labelSelectorAsSelector } from '../k8s/label-selector.ts';
import { nodeSelectorTermMatches } from '../k8s/node-selector.ts';
import { isPodReady, isPodTerminating, podPhase } from '../k8s/pod.ts';
import { formatTime, parseTime } from '../k8s/time.ts';
import type { IntOrString, LabelSelector, Node, NodeSelectorTerm, Pod } from '../k8s/types.ts';
import { markedSubset } from './marker.ts';
import { scaledValue } from './percent.ts';

export type DomainMode =
  | { kind: 'all' }
  | { kind: 'nodeSelectorTerm'; term: NodeSelectorTerm }
  | { kind: 'topologyKey'; key: string }
  | { kind: 'workloadSpreadRef'; name: string };

/** How a budget names its domains; the first mode set wins when a stored object has several (validation refuses that). */
export function domainMode(budget: DomainDisruptionBudget): DomainMode {
  const spec = isPlainObject(budget?.spec) ? budget.spec : undefined;
  if (spec === undefined) return { kind: 'all' };
  if (isPlainObject(spec.nodeSelectorTerm)) return { kind: 'nodeSelectorTerm', term: spec.nodeSelectorTerm };
  if (typeof spec.topologyKey === 'string' && spec.topologyKey !== '') return { kind: 'topologyKey', key: spec.topologyKey };
  const ref = spec.workloadSpreadRef;
  if (isPlainObject(ref) && typeof ref.name === 'string' && ref.name !== '') return { kind: 'workloadSpreadRef', name: ref.name };
  return { kind: 'all' };
}

/** The status's `mode`, for `kubectl get ddb`. */
export function describeMode(mode: DomainMode): string {
  switch (mode.kind) {
    case 'all':
      return 'all';
    case 'nodeSelectorTerm':
      return 'nodeSelectorTerm';
    case 'topologyKey':
      return `topologyKey=${mode.key}`;
    case 'workloadSpreadRef':
      return `workloadSpreadRef=${mode.name}`;
  }
}

function hasRequirements(selector: unknown): boolean {
  if (!isPlainObject(selector)) return false;
  const labels = selector['matchLabels'];
  const expressions = selector['matchExpressions'];
  return (isPlainObject(labels) && Object.keys(labels).length > 0) || (Array.isArray(expressions) && expressions.length > 0);
}

/** A predicate for the pods a budget selects: its namespace, its (non-empty, valid) selector; undefined when it selects nothing. */
export function budgetSelector(budget: DomainDisruptionBudget): ((pod: Pod) => boolean) | undefined {
  const selector = budget?.spec?.selector;
  if (!hasRequirements(selector)) return undefined;
  const parsed = labelSelectorAsSelector(selector as LabelSelector);
  if (!parsed.ok) return undefined;
  const namespace = budget.metadata?.namespace ?? '';
  return (pod) => (pod?.metadata?.namespace ?? '') === namespace && parsed.selector.matches(pod.metadata?.labels);
}

/** Whether the budget selects the pod (namespace and selector). */
export function budgetSelects(budget: DomainDisruptionBudget, pod: Pod): boolean {
  return budgetSelector(budget)?.(pod) ?? false;
}

/** Finished pods are not expected anywhere. */
export function isPodFinished(pod: Pod): boolean {
  const phase = podPhase(pod);
  return phase === 'Succeeded' || phase === 'Failed';
}

/**
 * The domain of a pod the budget selects, or undefined when the budget does
 * not govern it (see the module comment for unscheduled pods and unknown nodes).
 * `node` is the pod's node from the cache (undefined when unscheduled or unknown);
 * `marker` the pod's WorkloadSpread marker.
 */
export function domainOfPod(budget: DomainDisruptionBudget, pod: Pod, node: Node | undefined): string | undefined {
  const mode = domainMode(budget);
  const nodeName = pod?.spec?.nodeName;
  const scheduled = typeof nodeName === 'string' && nodeName !== '';
  switch (mode.kind) {
    case 'all':
      return DOMAIN_ALL;
    case 'nodeSelectorTerm':
      return scheduled && node !== undefined && nodeSelectorTermMatches(mode.term, node) ? DOMAIN_MATCHING_NODES : undefined;
    case 'topologyKey': {
      if (!scheduled) return undefined;
      const value = node?.metadata?.labels?.[mode.key];
      return typeof value === 'string' ? value : DOMAIN_NONE;
    }
    case 'workloadSpreadRef':
      return markedSubset(pod, mode.name) ?? DOMAIN_NONE;
  }
}

export type Desired = { ok: true; value: number } | { ok: false; error: string };

/** desiredHealthy of a domain with `expected` pods, rounded as a PodDisruptionBudget rounds (up, for both fields). */
export function desiredHealthy(budget: DomainDisruptionBudget, expected: number): Desired {
  const max: IntOrString | undefined = budget?.spec?.maxUnavailable ?? undefined;
  const min: IntOrString | undefined = budget?.spec?.minAvailable ?? undefined;
  if (max !== undefined && min !== undefined) return { ok: false, error: 'both maxUnavailable and minAvailable are set' };
  const amount = max ?? min;
  if (amount === undefined) return { ok: false, error: 'neither maxUnavailable nor minAvailable is set' };
  if (typeof amount !== 'number' && typeof amount !== 'string') return { ok: false, error: 'the budget is neither an integer nor a percentage' };
  const scaled = scaledValue(amount, expected, true);
  if (!scaled.ok) return { ok: false, error: scaled.error };
  if (scaled.value < 0) return { ok: false, error: `${JSON.stringify(amount)} is negative` };
  return { ok: true, value: max !== undefined ? Math.max(0, expected - scaled.value) : scaled.value };
}

/** disruptionsAllowed from the other three figures. */
export function disruptionsAllowed(expected: number, current: number, desired: number): number {
  return expected <= 0 ? 0 : Math.max(0, current - desired);
}

/** Sets a condition, keeping its transition time unless its status changes. */
export function setCondition(conditions: readonly BudgetCondition[] | undefined, next: Omit<BudgetCondition, 'lastTransitionTime'>, now: number): BudgetCondition[] {
  const out = (conditions ?? []).filter((c) => isPlainObject(c)).map((c) => ({ ...c }));
  const index = out.findIndex((c) => c.type === next.type);
  const previous = index >= 0 ? out[index] : undefined;
  const lastTransitionTime = previous !== undefined && previous.status === next.status && previous.lastTransitionTime !== undefined ? previous.lastTransitionTime : formatTime(now);
  const condition: BudgetCondition = { ...next, lastTransitionTime };
  if (index >= 0) out[index] = condition;
  else out.push(condition);
  return out;
}

/** The DisruptionAllowed condition a domain with `allowed` disruptions carries. */
export function disruptionAllowedCondition(allowed: number): Omit<BudgetCondition, 'lastTransitionTime'> {
  return allowed > 0
    ? { type: CONDITION_DISRUPTION_ALLOWED, status: 'True', reason: REASON_SUFFICIENT_PODS, message: '' }
    : { type: CONDITION_DISRUPTION_ALLOWED, status: 'False', reason: REASON_INSUFFICIENT_PODS, message: '' };
}

/** Domains that have pods but allow no eviction (the printer column Blocked). */
export function blockedDomainCount(domains: readonly DomainStatus[]): number {
  return domains.filter((d) => d.expectedPods > 0 && d.disruptionsAllowed <= 0).length;
}

/** Every approved eviction the stored status holds, pod name → time, across domains. */
export function recordedDisruptions(status: DomainDisruptionBudgetStatus | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const domains = Array.isArray(status?.domains) ? status.domains : [];
  for (const d of domains) {
    if (!isPlainObject(d) || !isPlainObject(d.disruptedPods)) continue;
    for (const [pod, time] of Object.entries(d.disruptedPods)) if (typeof time === 'string') out.set(pod, time);
  }
  return out;
}

export interface BudgetStatusResult {
  status: DomainDisruptionBudgetStatus;
  /** When the status must be computed again (the next disruptedPods expiry), in ms from now. */
  requeueAfterMs?: number;
  /** Pods whose approved eviction expired without the pod being deleted (the PDB's NotDeleted). */
  expired: string[];
}

interface DomainTally {
  expected: number;
  ready: Pod[];
  disrupted: Record<string, string>;
}

/** The node of a pod, by name; a Map or a lookup function. */
export type NodeLookup = ReadonlyMap<string, Node> | ((name: string) => Node | undefined);

function lookupNode(nodes: NodeLookup, name: string | undefined): Node | undefined {
  if (typeof name !== 'string' || name === '') return undefined;
  return typeof nodes === 'function' ? nodes(name) : nodes.get(name);
}

/**
 * The status the budget should have, computed from the pods of its namespace
 * (others are ignored), the nodes, and — for workloadSpreadRef — the
 * WorkloadSpread (undefined: missing). Transition times of unchanged
 * conditions are kept, so an unchanged world gives a deep-equal status.
 */
export function computeBudgetStatus(budget: DomainDisruptionBudget, pods: readonly Pod[], nodes: NodeLookup, ws: WorkloadSpread | undefined, now: number): BudgetStatusResult {
  const old = isPlainObject(budget?.status) ? budget.status : {};
  const mode = domainMode(budget);
  const selects = budgetSelector(budget);
  const tallies = new Map<string, DomainTally>();
  const tally = (name: string): DomainTally => {
    let t = tallies.get(name);
    if (t === undefined) tallies.set(name, (t = { expected: 0, ready: [], disrupted: {} }));
    return t;
  };
  // Domains that exist even without pods.
  if (mode.kind === 'all') tally(DOMAIN_ALL);
  if (mode.kind === 'nodeSelectorTerm') tally(DOMAIN_MATCHING_NODES);
  const subsetOrder = mode.kind === 'workloadSpreadRef' && ws !== undefined ? ws.spec.subsets.map((s) => s.name) : [];
  for (const name of subsetOrder) tally(name);

  const recorded = recordedDisruptions(old);
  const expired: string[] = [];
  let nextExpiry: number | undefined;
  for (const pod of selects === undefined ? [] : pods) {
    if (!selects?.(pod) || isPodFinished(pod)) continue;
    const domain = domainOfPod(budget, pod, lookupNode(nodes, pod.spec?.nodeName));
    if (domain === undefined) continue;
    const t = tally(domain);
    t.expected++;
    if (isPodTerminating(pod)) continue;
    const name = pod.metadata?.name ?? '';
    const approvedAt = recorded.get(name);
    if (approvedAt !== undefined) {
      const expiresAt = (parseTime(approvedAt) ?? Number.NEGATIVE_INFINITY) + DISRUPTED_POD_TIMEOUT_MS;
      if (expiresAt > now) {
        t.disrupted[name] = approvedAt;
        if (nextExpiry === undefined || expiresAt < nextExpiry) nextExpiry = expiresAt;
        continue;
      }
      expired.push(name);
    }
    if (isPodReady(pod)) t.ready.push(pod);
  }

  const oldDomains = new Map((Array.isArray(old.domains) ? old.domains : []).filter((d) => isPlainObject(d)).map((d) => [d.name, d] as const));
  let specError: string | undefined = selects === undefined ? 'the selector is empty or invalid: the budget selects no pod' : undefined;
  const domains: DomainStatus[] = [];
  const subsetRank = (name: string): number => {
    const i = subsetOrder.indexOf(name);
    return i < 0 ? subsetOrder.length : i;
  };
  const names = [...tallies.keys()].sort((a, b) => subsetRank(a) - subsetRank(b) || (a < b ? -1 : a > b ? 1 : 0));
  for (const name of names) {
    const t = tallies.get(name) as DomainTally;
    const desired = desiredHealthy(budget, t.expected);
    // A budget that cannot be resolved allows nothing (the PDB's fail-safe).
    if (!desired.ok) specError ??= desired.error;
    const desiredValue = desired.ok ? desired.value : t.expected;
    const current = t.ready.length;
    const allowed = desired.ok ? disruptionsAllowed(t.expected, current, desiredValue) : 0;
    const entry: DomainStatus = { name, expectedPods: t.expected, currentHealthy: current, desiredHealthy: desiredValue, disruptionsAllowed: allowed };
    if (Object.keys(t.disrupted).length > 0) entry.disruptedPods = t.disrupted;
    entry.conditions = setCondition(oldDomains.get(name)?.conditions, disruptionAllowedCondition(allowed), now);
    domains.push(entry);
  }

  let conditions = setCondition(
    old.conditions,
    specError === undefined ? { type: CONDITION_SPEC_VALID, status: 'True', reason: REASON_VALID, message: '' } : { type: CONDITION_SPEC_VALID, status: 'False', reason: REASON_INVALID, message: specError },
    now,
  );
  if (mode.kind === 'workloadSpreadRef') {
    conditions = setCondition(
      conditions,
      ws !== undefined
        ? { type: CONDITION_WORKLOADSPREAD_FOUND, status: 'True', reason: REASON_FOUND, message: '' }
        : { type: CONDITION_WORKLOADSPREAD_FOUND, status: 'False', reason: REASON_NOT_FOUND, message: `WorkloadSpread ${budget.metadata?.namespace ?? ''}/${mode.name} does not exist: domains are the subsets named by the pods' markers` },
      now,
    );
  } else {
    conditions = conditions.filter((c) => c.type !== CONDITION_WORKLOADSPREAD_FOUND);
  }

  const status: DomainDisruptionBudgetStatus = {};
  const generation = budget?.metadata?.generation;
  if (typeof generation === 'number') status.observedGeneration = generation;
  status.mode = describeMode(mode);
  status.domains = domains;
  status.domainCount = domains.length;
  status.blockedDomains = blockedDomainCount(domains);
  status.conditions = conditions;
  const result: BudgetStatusResult = { status, expired };
  if (nextExpiry !== undefined) result.requeueAfterMs = Math.max(0, nextExpiry - now);
  return result;
}

/** Whether two statuses say the same thing (the controller writes only when they do not, D9). */
export function budgetStatusEqual(a: DomainDisruptionBudgetStatus | undefined, b: DomainDisruptionBudgetStatus | undefined): boolean {
  return deepEqual(a ?? {}, b ?? {});
}
