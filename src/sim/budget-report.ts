/**
 * How the reports show disruption budgets and evictions: a table of every
 * budget's domains after a step, and per drain (or evict) step a table of
 * what happened to each pod (evicted, or refused and by which budget). The
 * table report (report-table.ts) and the HTML report (html-report.ts) call
 * these; both stay silent when a scenario has no budgets and no evictions.
 * Pure; HTML output escapes everything that comes from the cluster.
 */
import type { BudgetRecord } from '../core/budget-records.ts';
import type { EvictionRecord } from './drain.ts';
import { columns } from './columns.ts';
import { escapeXml as esc } from './timeline-chart.ts';

/** `00:05:10` out of `2026-01-01T00:05:10Z`. */
const clockOf = (time: string | undefined): string => (time === undefined ? '-' : (/T(\d\d:\d\d:\d\d)/.exec(time)?.[1] ?? time));

const label = (b: BudgetRecord): string => `${b.kind === 'DomainDisruptionBudget' ? 'ddb' : 'pdb'}/${b.namespace === 'default' ? '' : `${b.namespace}/`}${b.name}`;

function domainRows(b: BudgetRecord): string[][] {
  const head = `${label(b)} (${b.limit}${b.mode === '' || b.mode === 'pdb' ? '' : `, ${b.mode}`})${b.observed ? '' : ' [not observed yet]'}`;
  if (b.domains.length === 0) return [[head, '-', '-', '-', '-', '-', '-']];
  return b.domains.map((d, i) => [i === 0 ? head : '', d.name, String(d.expectedPods), String(d.currentHealthy), String(d.desiredHealthy), String(d.disruptionsAllowed), d.disruptedPods.length === 0 ? '-' : d.disruptedPods.join(',')]);
}

/** The budgets table of the text report (empty when there are none). */
export function budgetTable(budgets: readonly BudgetRecord[], indent = '  '): string {
  if (budgets.length === 0) return '';
  const rows = [['BUDGET', 'DOMAIN', 'EXPECTED', 'HEALTHY', 'DESIRED', 'ALLOWED', 'AWAITING DELETION']];
  for (const b of budgets) rows.push(...domainRows(b));
  return `${indent}budgets\n${columns(rows, `${indent}  `)}`;
}

function resultText(e: EvictionRecord): string {
  if (e.result === 'refused') return `refused ${e.refusals}×`;
  if (e.result === 'evicted') return e.refusals === 0 ? 'evicted' : `evicted after ${e.refusals} refusal(s)`;
  return e.result;
}

/** The evictions of a step in the text report (empty when there were none). */
export function evictionTable(evictions: readonly EvictionRecord[], indent = '  '): string {
  if (evictions.length === 0) return '';
  const rows = [['POD', 'NODE', 'RESULT', 'REFUSED BY', 'FIRST REFUSED', 'EVICTED', 'GONE']];
  for (const e of evictions) {
    const by = e.refusedBy.length === 0 ? '-' : `${e.refusedBy.join(', ')}${e.refusedIn.length === 0 ? '' : ` (${e.refusedIn.join(', ')})`}`;
    rows.push([`${e.namespace === 'default' ? '' : `${e.namespace}/`}${e.pod}`, e.node, resultText(e), by, clockOf(e.firstRefusedAt), clockOf(e.evictedAt), clockOf(e.goneAt)]);
  }
  const failed = evictions.filter((e) => e.result === 'failed' && e.message !== undefined);
  return `${indent}evictions\n${columns(rows, `${indent}  `)}${failed.map((e) => `${indent}  ${e.pod}: ${e.message ?? ''}\n`).join('')}`;
}

/** The budgets cell of a step row in the HTML report. */
export function budgetsCell(budgets: readonly BudgetRecord[]): string {
  if (budgets.length === 0) return '';
  return budgets
    .map((b) => {
      const domains = b.domains.map((d) => `<li>${esc(d.name)}: <b title="disruptions allowed">${d.disruptionsAllowed}</b> <span class="meta">(${d.currentHealthy}/${d.expectedPods} healthy, ${d.desiredHealthy} desired${d.disruptedPods.length === 0 ? '' : `, awaiting ${esc(d.disruptedPods.join(', '))}`})</span></li>`);
      return `<div>${esc(label(b))}</div><ul class="x">${domains.join('') || '<li class="meta">no domains</li>'}</ul>`;
    })
    .join('');
}

/** The evictions of a step in the HTML report: a summary line and the per-pod table folded. */
export function evictionsHtml(evictions: readonly EvictionRecord[]): string {
  if (evictions.length === 0) return '';
  const evicted = evictions.filter((e) => e.result === 'evicted' || e.result === 'gone').length;
  const refused = evictions.filter((e) => e.refusals > 0).length;
  const rows = evictions
    .map((e) => `<tr><td>${esc(e.pod)}</td><td>${esc(e.node)}</td><td class="${e.result === 'refused' || e.result === 'failed' ? 'bad' : ''}">${esc(resultText(e))}</td><td>${esc(e.refusedBy.join(', ') || '-')}${e.refusedIn.length === 0 ? '' : ` <span class="meta">(${esc(e.refusedIn.join(', '))})</span>`}</td><td>${esc(clockOf(e.evictedAt))}</td><td>${esc(clockOf(e.goneAt))}</td></tr>`)
    .join('');
  return `<details><summary>${evicted} evicted, ${refused} refused at least once</summary><table><tr><th>Pod</th><th>Node</th><th>Result</th><th>Refused by</th><th>Evicted</th><th>Gone</th></tr>${rows}</table></details>`;
}

/** The HTML report's section on budgets: every budget's domains after each step (only when the scenario has budgets). */
export function budgetsSection(points: readonly { label: string; budgets: readonly BudgetRecord[] }[]): string {
  const keys: string[] = [];
  for (const p of points) for (const b of p.budgets) for (const d of b.domains) if (!keys.includes(`${label(b)}|${d.name}`)) keys.push(`${label(b)}|${d.name}`);
  if (keys.length === 0) return '';
  const head = `<tr><th>Budget</th><th>Domain</th>${points.map((p) => `<th>${esc(p.label)}</th>`).join('')}</tr>`;
  const rows = keys.map((key) => {
    const [name = '', domain = ''] = key.split('|');
    const cells = points.map((p) => {
      const d = p.budgets.find((b) => label(b) === name)?.domains.find((x) => x.name === domain);
      return d === undefined ? '<td></td>' : `<td class="num" title="${esc(`${d.currentHealthy} healthy of ${d.expectedPods}, ${d.desiredHealthy} desired`)}">${d.disruptionsAllowed === 0 ? `<span class="bad">0</span>` : d.disruptionsAllowed}</td>`;
    });
    return `<tr><td>${esc(name)}</td><td>${esc(domain)}</td>${cells.join('')}</tr>`;
  });
  return `<section>
<h2>Disruption budgets</h2>
<p class="meta">Disruptions allowed per domain after each step (0 in red: an eviction there is refused with 429). Hover a number for the healthy, expected and desired pods.</p>
<table>${head}${rows.join('')}</table>
</section>`;
}
