/**
 * Whether an eviction (or, with `--guard-pod-deletion`, a deletion) may
 * proceed under the DomainDisruptionBudgets selecting the pod (DECISIONS D14),
 * decided the way the eviction subresource decides for a PodDisruptionBudget,
 * per domain and for every budget at once. Pure; the webhook applies the
 * result (`src/webhook/budget-eviction.ts`).
 *
 * For the pod:
 * 1. finished, Pending or already terminating → allowed, nothing spent (the
 *    eviction API skips budgets for these too);
 * 2. budgets that do not select the pod, or whose mode puts it in no domain,
 *    do not count; none left → allowed;
 * 3. per remaining budget, on the pod's domain:
 *    - the status must be current (observedGeneration ≥ generation) and list
 *      the domain, else deny and let the client retry;
 *    - the pod is already in the domain's disruptedPods (an eviction retried,
 *      e.g. after a PodDisruptionBudget refused it) → fine, nothing spent again;
 *    - a pod that is not Ready spends nothing when the policy is AlwaysAllow,
 *      or IfHealthyBudget (the default) while the domain has its desired
 *      healthy pods (currentHealthy ≥ desiredHealthy > 0);
 *    - otherwise the domain must allow a disruption: disruptionsAllowed > 0
 *      in the stored status AND, when the caller passes what it observes
 *      (`observed`), in the status recomputed from it — the stricter wins, so
 *      neither a lagging controller nor a lagging cache can allow too much;
 *      the pod is then recorded in disruptedPods and disruptionsAllowed
 *      decremented (`record`);
 *    - more than 2000 unconfirmed evictions in a budget refuse new ones.
 * 4. any budget denies → the eviction is denied (HTTP 429), naming the budget
 *    and the domain; else the records to write (none on a dry run: checked,
 *    not recorded), or a plain allow.
 * Start at `decideEviction`; `decideBudgetEviction` is one budget's part
 * (the webhook re-decides one budget at a time on fresh copies).
 */
import { budgetKey, DOMAIN_NONE, type DomainDisruptionBudget, type DomainDisruptionBudgetStatus, type DomainStatus } from '../api/disruption-budget.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { isPlainObject } from '../k8s/json.ts';
import { isPodReady, isPodTerminating, podPhase } from '../k8s/pod.ts';
import { formatTime } from '../k8s/time.ts';
import type { Node, Pod } from '../k8s/types.ts';
import { blockedDomainCount, budgetSelects, computeBudgetStatus, disruptionAllowedCondition, domainOfPod, isPodFinished, setCondition, type NodeLookup } from './disruption-budget.ts';

/** Budgets with more unconfirmed evictions than this refuse new ones (the eviction API's MaxDisruptedPodSize). */
export const MAX_DISRUPTED_PODS = 2000;

/** Seconds a client is told to wait when a budget's status is not current yet. */
export const RETRY_AFTER_PROCESSING_SECONDS = 10;

export type AllowReason = 'Terminating' | 'Finished' | 'Pending' | 'NotGoverned' | 'NotReady' | 'AlreadyDisrupted' | 'DryRun';

/** What the caller observes now (its caches), so the decision does not rest on the stored status alone. */
export interface ObservedState {
  pods: readonly Pod[];
  nodes: NodeLookup;
  /** The WorkloadSpread of a workloadSpreadRef budget, by name; undefined when missing. */
  workloadSpread?: (name: string) => WorkloadSpread | undefined;
}

export interface DecideOptions {
  /** What is asked: an eviction (default) or, with --guard-pod-deletion, a plain DELETE; only the wording differs. */
  disruption?: 'evict' | 'delete';
  dryRun?: boolean;
  observed?: ObservedState;
}

export interface BudgetDenial {
  kind: 'deny';
  /** `namespace/name` of the budget. */
  budget: string;
  domain: string;
  message: string;
  /** Set when the client should wait before retrying (status not current yet). */
  retryAfterSeconds?: number;
}

/** One budget's part of a decision. */
export type BudgetEvictionDecision =
  | { kind: 'skip' }
  | { kind: 'allow'; reason: AllowReason; domain: string }
  | BudgetDenial
  | { kind: 'record'; domain: string; status: DomainDisruptionBudgetStatus };

export interface BudgetRecord {
  budget: DomainDisruptionBudget;
  domain: string;
  /** The whole new status of the budget, to write conditionally on the budget's resourceVersion. */
  status: DomainDisruptionBudgetStatus;
}

export type EvictionDecision = { kind: 'allow'; reason: AllowReason } | BudgetDenial | { kind: 'record'; records: BudgetRecord[] };

/** Pod-level gates that make budgets irrelevant; undefined when the budgets decide. */
export function podBypassesBudgets(pod: Pod): AllowReason | undefined {
  if (isPodTerminating(pod)) return 'Terminating';
  if (isPodFinished(pod)) return 'Finished';
  if (podPhase(pod) === 'Pending') return 'Pending';
  return undefined;
}

function domainEntry(status: DomainDisruptionBudgetStatus | undefined, name: string): DomainStatus | undefined {
  const domains = Array.isArray(status?.domains) ? status.domains : [];
  return domains.find((d) => isPlainObject(d) && d.name === name);
}

function unconfirmed(status: DomainDisruptionBudgetStatus | undefined): number {
  let n = 0;
  for (const d of Array.isArray(status?.domains) ? status.domains : []) if (isPlainObject(d) && isPlainObject(d.disruptedPods)) n += Object.keys(d.disruptedPods).length;
  return n;
}

function domainLabel(domain: string): string {
  return domain === DOMAIN_NONE ? 'domain <none> (pods whose domain cannot be named)' : `domain ${JSON.stringify(domain)}`;
}

function deny(budget: DomainDisruptionBudget, domain: string, options: DecideOptions, detail: string, retryAfterSeconds?: number): BudgetDenial {
  const key = budgetKey(budget);
  const out: BudgetDenial = {
    kind: 'deny',
    budget: key,
    domain,
    message: `Cannot ${options.disruption ?? 'evict'} pod as it would violate the DomainDisruptionBudget ${key} in ${domainLabel(domain)}: ${detail}`,
  };
  if (retryAfterSeconds !== undefined) out.retryAfterSeconds = retryAfterSeconds;
  return out;
}

/** A count from a stored status; anything but a finite number reads as 0 (never as "allowed"). */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** The figures of a stored domain entry, read defensively. */
function figuresOf(d: DomainStatus): Pick<DomainStatus, 'expectedPods' | 'currentHealthy' | 'desiredHealthy' | 'disruptionsAllowed'> {
  return { expectedPods: count(d.expectedPods), currentHealthy: count(d.currentHealthy), desiredHealthy: count(d.desiredHealthy), disruptionsAllowed: count(d.disruptionsAllowed) };
}

/**
 * The pod recorded in the domain: one disruption fewer, one healthy pod fewer
 * when it was Ready (what the controller will count), Blocked and the
 * domain's condition kept true.
 */
function withRecord(status: DomainDisruptionBudgetStatus, domain: string, pod: Pod, now: number): DomainDisruptionBudgetStatus {
  const next = structuredClone(status);
  const podName = pod.metadata?.name ?? '';
  const domains = (Array.isArray(next.domains) ? next.domains : []).filter((d) => isPlainObject(d)).map((d) => {
    if (d.name !== domain) return d;
    const f = figuresOf(d);
    const allowed = Math.max(0, f.disruptionsAllowed - 1);
    const healthy = isPodReady(pod) ? Math.max(0, f.currentHealthy - 1) : f.currentHealthy;
    const disrupted = isPlainObject(d.disruptedPods) ? d.disruptedPods : {};
    return {
      ...d,
      ...f,
      currentHealthy: healthy,
      disruptionsAllowed: allowed,
      disruptedPods: { ...disrupted, [podName]: formatTime(now) },
      conditions: setCondition(Array.isArray(d.conditions) ? d.conditions : [], disruptionAllowedCondition(allowed), now),
    };
  });
  next.domains = domains;
  next.blockedDomains = blockedDomainCount(domains);
  return next;
}

/** One budget's decision for a pod that passed `podBypassesBudgets`. */
export function decideBudgetEviction(budget: DomainDisruptionBudget, pod: Pod, node: Node | undefined, now: number, options: DecideOptions = {}): BudgetEvictionDecision {
  if (!budgetSelects(budget, pod)) return { kind: 'skip' };
  const domain = domainOfPod(budget, pod, node);
  if (domain === undefined) return { kind: 'skip' };
  const status = isPlainObject(budget.status) ? budget.status : undefined;
  const generation = budget.metadata?.generation ?? 0;
  if ((status?.observedGeneration ?? 0) < generation) {
    return deny(budget, domain, options, 'the budget is still being processed (its status is older than its spec); retry shortly', RETRY_AFTER_PROCESSING_SECONDS);
  }
  const entry = domainEntry(status, domain);
  if (entry === undefined) return deny(budget, domain, options, 'the domain is not in the budget status yet; retry shortly', RETRY_AFTER_PROCESSING_SECONDS);
  const podName = pod.metadata?.name ?? '';
  if (isPlainObject(entry.disruptedPods) && typeof entry.disruptedPods[podName] === 'string') return { kind: 'allow', reason: 'AlreadyDisrupted', domain };

  const observed = options.observed;
  const stored = figuresOf(entry);
  const fresh = observed === undefined ? undefined : domainEntry(computeBudgetStatus(budget, observed.pods, observed.nodes, observedSpread(budget, observed), now).status, domain);
  if (!isPodReady(pod)) {
    const policy = budget.spec?.unhealthyPodEvictionPolicy ?? 'IfHealthyBudget';
    const healthy = (d: Pick<DomainStatus, 'currentHealthy' | 'desiredHealthy'>) => d.currentHealthy >= d.desiredHealthy && d.desiredHealthy > 0;
    if (policy === 'AlwaysAllow' || (healthy(stored) && (fresh === undefined || healthy(fresh)))) return { kind: 'allow', reason: 'NotReady', domain };
  }
  if (unconfirmed(status) > MAX_DISRUPTED_PODS) return deny(budget, domain, options, `more than ${MAX_DISRUPTED_PODS} approved evictions are not confirmed yet`);
  const binding = fresh !== undefined && fresh.disruptionsAllowed < stored.disruptionsAllowed ? fresh : stored;
  if (binding.disruptionsAllowed <= 0) {
    return deny(budget, domain, options, `it needs ${binding.desiredHealthy} healthy pods and has ${binding.currentHealthy} (${binding.expectedPods} expected), so no disruption is allowed now`);
  }
  if (options.dryRun === true) return { kind: 'allow', reason: 'DryRun', domain };
  return { kind: 'record', domain, status: withRecord(status ?? {}, domain, pod, now) };
}

function observedSpread(budget: DomainDisruptionBudget, observed: ObservedState): WorkloadSpread | undefined {
  const name = budget.spec?.workloadSpreadRef?.name;
  return typeof name === 'string' && name !== '' ? observed.workloadSpread?.(name) : undefined;
}

/**
 * The decision for the pod against every budget given (any namespace; those
 * not selecting the pod are ignored). Denials are reported for the first
 * denying budget in `namespace/name` order.
 */
export function decideEviction(budgets: readonly DomainDisruptionBudget[], pod: Pod, node: Node | undefined, now: number, options: DecideOptions = {}): EvictionDecision {
  const bypass = podBypassesBudgets(pod);
  if (bypass !== undefined) return { kind: 'allow', reason: bypass };
  const ordered = [...budgets].sort((a, b) => (budgetKey(a) < budgetKey(b) ? -1 : budgetKey(a) > budgetKey(b) ? 1 : 0));
  const records: BudgetRecord[] = [];
  let reason: AllowReason = 'NotGoverned';
  for (const budget of ordered) {
    const d = decideBudgetEviction(budget, pod, node, now, options);
    if (d.kind === 'deny') return d;
    if (d.kind === 'record') records.push({ budget, domain: d.domain, status: d.status });
    else if (d.kind === 'allow' && reason === 'NotGoverned') reason = d.reason;
  }
  return records.length > 0 ? { kind: 'record', records } : { kind: 'allow', reason };
}

/**
 * Undoes a record (an eviction that another budget refused after this one
 * approved it): the pod leaves the domain's disruptedPods and the disruption
 * is given back. Undefined when there is nothing to undo.
 */
export function releaseRecord(status: DomainDisruptionBudgetStatus | undefined, domain: string, pod: Pod, now: number): DomainDisruptionBudgetStatus | undefined {
  const podName = pod.metadata?.name ?? '';
  const entry = domainEntry(status, domain);
  if (status === undefined || entry === undefined || !isPlainObject(entry.disruptedPods) || typeof entry.disruptedPods[podName] !== 'string') return undefined;
  const next = structuredClone(status);
  const domains = (Array.isArray(next.domains) ? next.domains : []).filter((d) => isPlainObject(d)).map((d) => {
    if (d.name !== domain) return d;
    const f = figuresOf(d);
    const { [podName]: _released, ...rest } = isPlainObject(d.disruptedPods) ? d.disruptedPods : {};
    const allowed = f.disruptionsAllowed + 1;
    const out: DomainStatus = {
      ...d,
      ...f,
      currentHealthy: isPodReady(pod) ? f.currentHealthy + 1 : f.currentHealthy,
      disruptionsAllowed: allowed,
      conditions: setCondition(Array.isArray(d.conditions) ? d.conditions : [], disruptionAllowedCondition(allowed), now),
    };
    if (Object.keys(rest).length > 0) out.disruptedPods = rest;
    else delete out.disruptedPods;
    return out;
  });
  next.domains = domains;
  next.blockedDomains = blockedDomainCount(domains);
  return next;
}
