/**
 * DomainDisruptionBudget enforcement in the validating webhook (D14): on
 * `pods/eviction` CREATE, and on pod DELETE when the manager runs with
 * `--guard-pod-deletion`. The rules are core's (`decideEviction`,
 * `decideBudgetEviction`); this module applies them:
 *
 * 1. the pod's budgets come from the budget cache — if they cannot be known
 *    (CRD served, cache not listed yet) the request is refused (429), never
 *    waved through;
 * 2. a first decision on the cached copies and what the caches observe (pods,
 *    nodes, WorkloadSpreads): a refusal or a plain allow is answered at once;
 * 3. otherwise every budget that approves is recorded, one budget at a time
 *    in `namespace/name` order, through a group commit per budget (the
 *    webhook's D13 machinery: evictions of one budget are decided in arrival
 *    order on the freshest copy and written together; a 409 re-reads and
 *    re-decides). So two concurrent evictions in a domain allowing one: one
 *    record is written, the other is decided again on it and refused;
 * 4. a budget refusing after another recorded → the earlier records are given
 *    back (best effort: if that fails too, the record expires within 2
 *    minutes, which errs on the side of fewer disruptions);
 * 5. a record that cannot be stored (conflicts exhausted, API errors) refuses
 *    the eviction: fail closed.
 * Refusals are HTTP 429 (TooManyRequests, cause DisruptionBudget) naming the
 * budget and the domain, as the eviction API refuses for a
 * PodDisruptionBudget, so `kubectl drain` waits and retries. Dry runs are
 * checked and never recorded. Start at `enforceBudgets`.
 */
import type { Clock } from '../clock/clock.ts';
import { podLogFields, silentLogger, type Logger } from '../client/logger.ts';
import { budgetKey, type DomainDisruptionBudget, type DomainDisruptionBudgetStatus } from '../api/disruption-budget.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { decideBudgetEviction, decideEviction, podBypassesBudgets, releaseRecord, type BudgetDenial, type BudgetEvictionDecision, type ObservedState } from '../core/disruption-decision.ts';
import type { Node, Pod } from '../k8s/types.ts';
import type { AdmissionResponse } from './admission-review.ts';
import { drive } from './admission-driver.ts';
import type { CallerGone } from './cpu-turns.ts';
import type { GroupCommit } from './group-commit.ts';

/** What enforcement reads: the budget cache and the caches it observes the pods through. */
export interface BudgetSources {
  /** The budgets of a namespace, or why they cannot be known now. */
  budgets(namespace: string): { ok: true; budgets: readonly DomainDisruptionBudget[] } | { ok: false; error: string };
  node(name: string): Node | undefined;
  pods(namespace: string): readonly Pod[];
  workloadSpread(namespace: string, name: string): WorkloadSpread | undefined;
}

export type BudgetEvictionResult = 'allowed' | 'denied' | 'failed';

export interface BudgetEnforcementMetrics {
  /** One eviction (or guarded deletion) decided for a budget that governs the pod. */
  budgetEviction?(namespace: string, budget: string, result: BudgetEvictionResult): void;
}

export type BudgetCommit = GroupCommit<DomainDisruptionBudget, DomainDisruptionBudgetStatus>;

export interface BudgetEnforcementDeps {
  clock: Clock;
  sources: BudgetSources;
  commit: BudgetCommit;
  metrics?: BudgetEnforcementMetrics;
  log?: Logger;
}

export type BudgetVerdict =
  | {
      allowed: true;
      recorded: { budget: string; domain: string }[];
      /** Gives the records back (the request was refused later, by the WorkloadSpread bookkeeping). */
      release(): Promise<void>;
    }
  | { allowed: false; code: 429 | 500; message: string; budget?: string; domain?: string; retryAfterSeconds?: number };

/** How the pod is going away, for logs and messages. */
export type DisruptionKind = 'Eviction' | 'Delete';

function observedState(namespace: string, sources: BudgetSources): ObservedState {
  return {
    pods: sources.pods(namespace),
    nodes: (name) => sources.node(name),
    workloadSpread: (name) => sources.workloadSpread(namespace, name),
  };
}

/** The answer to the API server: a 429 naming the budget and the domain, with the DisruptionBudget cause. */
export function budgetRefusal(uid: string, verdict: Extract<BudgetVerdict, { allowed: false }>): AdmissionResponse {
  return {
    uid,
    allowed: false,
    status: {
      code: verdict.code,
      status: 'Failure',
      reason: verdict.code === 429 ? 'TooManyRequests' : 'InternalError',
      message: verdict.message,
      details: {
        causes: [{ reason: 'DisruptionBudget', message: verdict.message, field: '' }],
        ...(verdict.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: verdict.retryAfterSeconds }),
      },
    },
  };
}

/**
 * Decides (and records) the disruption of `pod` in `namespace` under every
 * DomainDisruptionBudget selecting it.
 */
export async function enforceBudgets(pod: Pod, namespace: string, kind: DisruptionKind, dryRun: boolean, deps: BudgetEnforcementDeps, signal?: CallerGone): Promise<BudgetVerdict> {
  const log = deps.log ?? silentLogger;
  const metrics = deps.metrics ?? {};
  if (podBypassesBudgets(pod) !== undefined) return nothingRecorded();
  const listed = deps.sources.budgets(namespace);
  if (!listed.ok) {
    return { allowed: false, code: 429, message: `Cannot ${kind === 'Eviction' ? 'evict' : 'delete'} pod: the DomainDisruptionBudgets of namespace ${namespace} cannot be checked yet (${listed.error}); retry shortly` };
  }
  if (listed.budgets.length === 0) return nothingRecorded();
  const node = pod.spec?.nodeName ? deps.sources.node(pod.spec.nodeName) : undefined;
  const observed = () => observedState(namespace, deps.sources);
  const disruption = kind === 'Eviction' ? 'evict' : 'delete';
  const first = decideEviction(listed.budgets, pod, node, deps.clock.now(), { dryRun, observed: observed(), disruption });
  if (first.kind === 'deny') {
    metrics.budgetEviction?.(namespace, nameOf(first.budget), 'denied');
    return denial(first);
  }
  if (first.kind === 'allow') return nothingRecorded();

  const plog = { ...podLogFields(namespace, pod.metadata), kind };
  const recorded: { budget: DomainDisruptionBudget; domain: string }[] = [];
  for (const { budget } of first.records) {
    const key = budgetKey(budget);
    const commitKey = { uid: budget.metadata?.uid ?? key, namespace, name: budget.metadata?.name ?? '' };
    // The first decision over every budget said this one records: decided again on the budget's freshest copy, under its commit.
    const driven = await drive<BudgetEvictionDecision | { kind: 'commit' }, DomainDisruptionBudget, DomainDisruptionBudgetStatus>({
      commit: deps.commit,
      decide: (current) => (current === undefined ? { kind: 'commit' } : current.ws === undefined ? { kind: 'skip' } : decideBudgetEviction(current.ws, pod, node, deps.clock.now(), { observed: observed(), disruption })),
      commitKey: (d) => (d.kind === 'commit' ? commitKey : undefined),
      round: (d) => (d.kind === 'record' ? { value: d, status: d.status } : { value: d }),
      ...(signal === undefined ? {} : { signal }),
    });
    if (!driven.ok) {
      metrics.budgetEviction?.(namespace, nameOf(key), 'failed');
      log.warn({ ...plog, budget: budget.metadata?.name ?? '', err: driven.error }, 'disruption refused: the budget record could not be stored');
      await giveBack(recorded, pod, deps, log);
      const message = `Cannot ${kind === 'Eviction' ? 'evict' : 'delete'} pod: the approval could not be recorded in the status of DomainDisruptionBudget ${key}, so the disruption is refused (${driven.error})`;
      return { allowed: false, code: driven.conflict ? 429 : 500, message, budget: key };
    }
    const d = driven.decision;
    if (d.kind === 'deny') {
      metrics.budgetEviction?.(namespace, nameOf(key), 'denied');
      await giveBack(recorded, pod, deps, log);
      return denial(d);
    }
    if (d.kind === 'record') recorded.push({ budget, domain: d.domain });
    metrics.budgetEviction?.(namespace, nameOf(key), 'allowed');
  }
  log.debug({ ...plog, budgets: recorded.map((r) => `${r.budget.metadata?.name ?? ''}[${r.domain}]`) }, 'disruption recorded in DomainDisruptionBudgets');
  return { allowed: true, recorded: recorded.map((r) => ({ budget: budgetKey(r.budget), domain: r.domain })), release: () => giveBack(recorded, pod, deps, log) };
}

function denial(d: BudgetDenial): BudgetVerdict {
  const out: BudgetVerdict = { allowed: false, code: 429, message: d.message, budget: d.budget, domain: d.domain };
  if (d.retryAfterSeconds !== undefined) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

function nothingRecorded(): BudgetVerdict {
  return { allowed: true, recorded: [], release: async () => {} };
}

function nameOf(key: string): string {
  return key.slice(key.indexOf('/') + 1);
}

/** Step 4: gives back the records of budgets that approved, when another refused. */
async function giveBack(recorded: readonly { budget: DomainDisruptionBudget; domain: string }[], pod: Pod, deps: BudgetEnforcementDeps, log: Logger): Promise<void> {
  for (const { budget, domain } of recorded) {
    const key = budgetKey(budget);
    const outcome = await deps.commit.submit<boolean>({ uid: budget.metadata?.uid ?? key, namespace: budget.metadata?.namespace ?? '', name: budget.metadata?.name ?? '' }, (fresh) => {
      const status = fresh === undefined ? undefined : releaseRecord(fresh.status, domain, pod, deps.clock.now());
      return status === undefined ? { value: false } : { value: true, status };
    });
    if (!outcome.ok) log.warn({ ...podLogFields(budget.metadata?.namespace ?? '', pod.metadata), budget: budget.metadata?.name ?? '', err: outcome.error }, 'could not give back a budget record; it expires within 2 minutes');
  }
}
