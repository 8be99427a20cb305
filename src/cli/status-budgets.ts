/**
 * The disruption budgets in `workloadspread status` (issue 7): under each
 * WorkloadSpread, every budget that selects at least one of its active pods —
 * DomainDisruptionBudgets (webhook-enforced, per domain) and
 * PodDisruptionBudgets (API-server-enforced, one domain `all`), since an
 * eviction needs both to agree — with, per domain, the disruptions allowed
 * now, healthy / desired / expected pods and the pods whose eviction was
 * approved and whose deletion is awaited. The figures are the budgets'
 * stored status (their controllers keep it), read as the simulator reads it
 * (core/budget-records.ts). Pure; start at `budgetViews`.
 */
import { budgetSelects } from '../core/disruption-budget.ts';
import type { DomainDisruptionBudget } from '../api/disruption-budget.ts';
import { labelSelectorAsSelector } from '../k8s/label-selector.ts';
import { asRecord } from '../k8s/raw-json.ts';
import type { KubeObject, LabelSelector, Pod } from '../k8s/types.ts';
import { budgetRecords, type BudgetRecord } from '../core/budget-records.ts';
import { alignColumns } from './style.ts';
import type { Style } from './style.ts';

export interface BudgetView extends BudgetRecord {
  /** How many of the WorkloadSpread's active pods the budget selects. */
  selects: number;
}

/** A PDB's selector as the API server applies it: null selects nothing, `{}` everything. */
function pdbSelects(pdb: KubeObject, pod: Pod): boolean {
  if ((pod.metadata?.namespace ?? '') !== (pdb.metadata?.namespace ?? '')) return false;
  const raw = asRecord(pdb['spec'])?.['selector'];
  if (raw === undefined || raw === null) return false;
  const selector = labelSelectorAsSelector(raw as LabelSelector);
  return selector.ok && selector.selector.matches(pod.metadata?.labels);
}

/** The budgets selecting any of `pods` (the WorkloadSpread's active pods), sorted by kind then name. */
export function budgetViews(pods: readonly Pod[], ddbs: readonly KubeObject[], pdbs: readonly KubeObject[]): BudgetView[] {
  const views: BudgetView[] = [];
  const add = (record: BudgetRecord | undefined, selects: number): void => {
    if (record !== undefined && selects > 0) views.push({ ...record, selects });
  };
  for (const o of ddbs) add(budgetRecords([o], [])[0], pods.filter((p) => budgetSelects(o as unknown as DomainDisruptionBudget, p)).length);
  for (const o of pdbs) add(budgetRecords([], [o])[0], pods.filter((p) => pdbSelects(o, p)).length);
  return views.sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'DomainDisruptionBudget' ? -1 : 1));
}

const HEADER = ['BUDGET', 'DOMAIN', 'ALLOWED', 'HEALTHY', 'DESIRED', 'EXPECTED', 'AWAITING DELETION'] as const;

/** The lines under a WorkloadSpread's table (none when no budget selects its pods). */
export function renderBudgets(budgets: readonly BudgetView[] | undefined, style: Style): string[] {
  if (budgets === undefined || budgets.length === 0) return [];
  const rows: string[][] = [[...HEADER]];
  for (const b of budgets) {
    const title = `${b.kind === 'DomainDisruptionBudget' ? 'ddb' : 'pdb'}/${b.name}`;
    if (b.domains.length === 0) rows.push([title, style.yellow('not computed yet'), '-', '-', '-', '-', '-']);
    b.domains.forEach((d, i) => {
      rows.push([
        i === 0 ? title : '',
        d.name,
        d.disruptionsAllowed === 0 && d.expectedPods > 0 ? style.red('0') : String(d.disruptionsAllowed),
        String(d.currentHealthy),
        String(d.desiredHealthy),
        String(d.expectedPods),
        d.disruptedPods.length === 0 ? '-' : d.disruptedPods.join(', '),
      ]);
    });
  }
  const lines = [`Disruption budgets selecting its pods (${budgets.map((b) => `${b.kind === 'DomainDisruptionBudget' ? 'ddb' : 'pdb'}/${b.name}: ${b.limit}${b.mode === '' || b.mode === 'pdb' ? '' : `, ${b.mode}`}, ${b.selects} pod${b.selects === 1 ? '' : 's'}${b.observed ? '' : ', status not current'}`).join('; ')}):`];
  lines.push(...alignColumns(rows).map((l, i) => `  ${i === 0 ? style.dim(l) : l}`));
  return lines;
}
