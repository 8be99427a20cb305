/**
 * When a DomainDisruptionBudget's domain counts as blocked for long enough
 * to tell someone (D14; the budget controller's DisruptionBlocked /
 * DisruptionUnblocked Events). Pure: the controller remembers which domains
 * it already warned about and asks this module what changed.
 *
 * A domain is *blocked* when it has pods, allows no disruption, and would
 * allow one if every expected pod were healthy (desiredHealthy <
 * expectedPods). A domain that allows nothing by construction
 * (`maxUnavailable: 0`, `minAvailable: 100%`, KEP story 1's protected zones)
 * is the budget doing its job, not news: no Event. The blockage started at
 * the `lastTransitionTime` of the domain's DisruptionAllowed=False condition,
 * so it survives a manager restart; it is *due* once it has lasted the
 * threshold. Start at `domainBlockages`.
 */
import { CONDITION_DISRUPTION_ALLOWED, type DomainDisruptionBudgetStatus } from '../api/disruption-budget.ts';
import { isPlainObject } from '../k8s/json.ts';
import { parseTime } from '../k8s/time.ts';

/** Default time a domain must stay blocked before a Warning Event. */
export const DEFAULT_BLOCKED_THRESHOLD_MS = 10 * 60_000;

export interface DomainBlockage {
  domain: string;
  /** When the domain stopped allowing disruptions (epoch ms; `now` when the condition has no time). */
  since: number;
  /** Whether it has been blocked for at least the threshold. */
  due: boolean;
  expectedPods: number;
  currentHealthy: number;
  desiredHealthy: number;
}

export interface BlockageReport {
  blocked: DomainBlockage[];
  /** Milliseconds until the next not-yet-due blockage becomes due (undefined: none pending). */
  nextDueInMs?: number;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** The blocked domains of a status (see the module comment), and when the next one becomes due. */
export function domainBlockages(status: DomainDisruptionBudgetStatus | undefined, now: number, thresholdMs: number = DEFAULT_BLOCKED_THRESHOLD_MS): BlockageReport {
  const blocked: DomainBlockage[] = [];
  let nextDueInMs: number | undefined;
  for (const d of Array.isArray(status?.domains) ? status.domains : []) {
    if (!isPlainObject(d) || typeof d.name !== 'string') continue;
    const expectedPods = count(d.expectedPods);
    const desiredHealthy = count(d.desiredHealthy);
    if (expectedPods === 0 || count(d.disruptionsAllowed) > 0 || desiredHealthy >= expectedPods) continue;
    const condition = (Array.isArray(d.conditions) ? d.conditions : []).find((c) => isPlainObject(c) && c.type === CONDITION_DISRUPTION_ALLOWED);
    const since = condition?.status === 'False' ? (parseTime(condition.lastTransitionTime) ?? now) : now;
    const due = now - since >= thresholdMs;
    if (!due) {
      const wait = since + thresholdMs - now;
      if (nextDueInMs === undefined || wait < nextDueInMs) nextDueInMs = wait;
    }
    blocked.push({ domain: d.name, since, due, expectedPods, currentHealthy: count(d.currentHealthy), desiredHealthy });
  }
  const report: BlockageReport = { blocked };
  if (nextDueInMs !== undefined) report.nextDueInMs = nextDueInMs;
  return report;
}
