/**
 * `simulate --output html`: ONE self-contained HTML file — inline CSS, inline
 * SVG, no script, no font, no external reference — so it can be mailed,
 * attached to a CI run or opened offline, and reads the same without
 * JavaScript (tooltips are SVG `<title>`s, the long lists `<details>`).
 *
 * Content: the verdict; per WorkloadSpread a timeline chart of pods per
 * subset over the steps (timeline-chart.ts) with limits dashed; the steps
 * with their pods per subset (and the rebalancer's state, D18), notable events and expectations (✓/✗, expected
 * vs actual); the deletion costs at the end, per subset and per pod; with
 * disruption budgets, their domains per step and each drain's evictions
 * (budget-report.ts).
 * Everything that comes from the scenario or the cluster is escaped. Pure.
 */
import { budgetsCell, budgetsSection, evictionsHtml } from './budget-report.ts';
import { describeExpectation, describeUnsettled, showElapsed } from './describe.ts';
import type { PodRecord } from './observation.ts';
import type { ScenarioRunResult, Snapshot, StepResult } from './runner.ts';
import { showRebalance, summarizeSpreads, type SpreadSummary } from './spread-summary.ts';
import { showCosts } from '../k8s/deletion-cost-text.ts';
import { escapeXml as esc, renderTimelineChart, type ChartSeries } from './timeline-chart.ts';

/** The reports' stylesheet (the race report's too: race-html.ts). */
export const REPORT_STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;margin:0 auto;max-width:1180px;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:14px;margin:16px 0 6px}
.meta{color:#666}.desc{white-space:pre-wrap}
.verdict{display:inline-block;padding:4px 10px;border-radius:4px;font-weight:600}
.pass{background:#e3f4e8;color:#14632e}.fail{background:#fbe4e4;color:#8a1c1c}.warn{background:#fff4d6;color:#7a5600}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f6f6f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}
ul.x{list-style:none;margin:0;padding:0}ul.x li{margin:1px 0;overflow-wrap:anywhere}
.sum{overflow-wrap:anywhere}
.ok{color:#14632e}.bad{color:#8a1c1c;font-weight:600}
.ev{color:#555;font-size:12px}.ev .Warning{color:#8a5a00}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f4f4f4;padding:0 3px;border-radius:3px}
details summary{cursor:pointer;color:#0b5cad}
svg.timeline{max-width:100%;height:auto;font-family:inherit}
`;

function chartFor(spread: SpreadSummary, points: { label: string; title: string; snapshot: Snapshot }[]): string {
  const perPoint = points.map((p) => summarizeSpreads(p.snapshot).find((s) => s.key === spread.key));
  const names: string[] = [];
  for (const s of perPoint) for (const sub of s?.subsets ?? []) if (!names.includes(sub.name)) names.push(sub.name);
  const series: ChartSeries[] = names.map((name) => ({
    label: name,
    values: perPoint.map((s) => s?.subsets.find((x) => x.name === name)?.pods ?? (s === undefined ? null : 0)),
    limits: perPoint.map((s) => s?.subsets.find((x) => x.name === name)?.limit ?? null),
  }));
  const unassigned = perPoint.map((s) => (s === undefined ? null : s.unassigned.pods));
  if (unassigned.some((v) => v !== null && v > 0)) series.push({ label: 'no subset', values: unassigned, muted: true });
  return renderTimelineChart({ title: `Pods per subset of ${spread.key} over the steps`, xLabels: points.map((p) => p.label), xTitles: points.map((p) => p.title), series });
}

function subsetCell(snapshot: Snapshot): string {
  return summarizeSpreads(snapshot)
    .map((s) => {
      const parts = s.subsets.map((sub) => `${esc(sub.name)} <b>${sub.pods}</b>${sub.limit === null ? '' : `/${sub.limit}`}`);
      if (s.unassigned.pods > 0) parts.push(`no subset <b>${s.unassigned.pods}</b>`);
      if (s.rebalance !== undefined) parts.push(`<span class="meta">rebalance: ${esc(showRebalance(s.rebalance))}</span>`);
      return `${summarizeSpreads(snapshot).length > 1 ? `<div>${esc(s.key)}</div>` : ''}${parts.join('<br>')}`;
    })
    .join('<hr>');
}

function eventsCell(snapshot: Snapshot): string {
  if (snapshot.events.length === 0) return '';
  const items = snapshot.events.map((e) => `<li><span class="${e.type === 'Warning' ? 'Warning' : 'Normal'}">${esc(e.reason)}</span> ${esc(e.object)}: ${esc(e.message)}${e.count > 1 ? ` (×${e.count})` : ''}</li>`);
  const notable = snapshot.events.filter((e) => e.object.startsWith('WorkloadSpread/') || e.type === 'Warning');
  const head = notable.length === 0 ? '' : `<ul class="x">${notable.slice(0, 4).map((e) => `<li><span class="${e.type === 'Warning' ? 'Warning' : 'Normal'}">${esc(e.reason)}</span> ${esc(e.object)}</li>`).join('')}</ul>`;
  return `<div class="ev">${head}<details><summary>${snapshot.events.length} event${snapshot.events.length === 1 ? '' : 's'}</summary><ul class="x">${items.join('')}</ul></details></div>`;
}

function stepRow(step: StepResult): string {
  const expectations = step.expectations.map((e) => `<li class="${e.ok ? 'ok' : 'bad'}">${e.ok ? '✓' : '✗'} ${esc(describeExpectation(e))}</li>`).join('');
  const unsettled = describeUnsettled(step.settled);
  const extra = [
    step.description === undefined ? '' : `<div class="meta">${esc(step.description)}</div>`,
    ...(step.notes ?? []).map((n) => `<div class="meta">${esc(n)}</div>`),
    step.error === undefined ? '' : `<div class="${step.expectations.some((e) => e.path === 'expectFailure' && e.ok) ? 'meta' : 'bad'}">refused: ${esc(step.error)}</div>`,
    unsettled === undefined ? '' : `<div class="bad">${esc(unsettled)}</div>`,
    ...(step.settled?.notes ?? []).map((n) => `<div class="meta">${esc(n)}</div>`),
  ].join('');
  return `<tr id="step-${step.step}"><td class="num">${step.step}</td><td><code>${esc(step.action)}</code> <span class="sum">${esc(step.summary)}</span>${extra}</td><td>${esc(step.time)}<br><span class="meta">${esc(showElapsed(step.elapsedMs))}</span></td><td>${step.action === 'expect' ? '' : subsetCell(step) + budgetsCell(step.budgets) + evictionsHtml(step.evictions ?? [])}</td><td>${eventsCell(step)}</td><td>${expectations === '' ? '' : `<ul class="x">${expectations}</ul>`}</td></tr>`;
}

function costTables(final: Snapshot): string {
  return summarizeSpreads(final)
    .map((s) => {
      const mine = final.pods.filter((p) => p.workloadSpread === s.key);
      const distribution = (pods: PodRecord[]) => {
        const counts = new Map<string, number>();
        for (const p of pods) counts.set(p.deletionCost === null ? 'none' : String(p.deletionCost), (counts.get(p.deletionCost === null ? 'none' : String(p.deletionCost)) ?? 0) + 1);
        return [...counts].map(([c, n]) => `${esc(c)} ×${n}`).join(', ') || '-';
      };
      const rows = [...s.subsets, s.unassigned]
        .filter((sub) => sub.name !== '(no subset)' || sub.pods > 0)
        .map((sub) => {
          const pods = mine.filter((p) => (sub.name === '(no subset)' ? p.subset === null : p.subset === sub.name));
          return `<tr><td>${esc(sub.name)}</td><td class="num">${sub.pods}</td><td class="num">${sub.limit === null ? 'unlimited' : sub.limit}</td><td>${esc(showCosts(sub.costs))}</td><td>${distribution(pods)}</td></tr>`;
        })
        .join('');
      const podRows = mine
        .map((p) => `<tr><td>${esc(p.name)}</td><td>${esc(p.subset ?? '-')}</td><td>${esc(p.node ?? '-')}</td><td>${esc(p.phase)}</td><td>${p.ready ? 'yes' : 'no'}</td><td class="num">${p.deletionCost === null ? '-' : p.deletionCost}</td></tr>`)
        .join('');
      return `<h3>${esc(s.key)} → ${esc(s.target)} (${s.replicas < 0 ? 'unknown' : s.replicas} replicas)</h3>
<table><tr><th>Subset</th><th>Pods</th><th>Limit</th><th>Deletion costs</th><th>Pods per cost</th></tr>${rows}</table>
<p class="meta">On scale-in, a ReplicaSet removes pods with lower deletion costs first (after unscheduled, pending and not-ready pods).</p>
<details><summary>${mine.length} pod${mine.length === 1 ? '' : 's'}</summary><table><tr><th>Pod</th><th>Subset</th><th>Node</th><th>Phase</th><th>Ready</th><th>Deletion cost</th></tr>${podRows}</table></details>`;
    })
    .join('\n');
}

function verdict(result: ScenarioRunResult): string {
  if (result.interrupted === true) return '<p class="verdict warn">INTERRUPTED</p>';
  if (result.error !== undefined) return `<p class="verdict fail">ERROR: ${esc(result.error)}</p>`;
  if (result.failed === 0) return `<p class="verdict pass">PASS: ${result.passed} expectation${result.passed === 1 ? '' : 's'} held over ${result.steps.length} step${result.steps.length === 1 ? '' : 's'}</p>`;
  const failures = result.steps.flatMap((s) => s.expectations.filter((e) => !e.ok).map((e) => `<li><a href="#step-${s.step}">steps[${s.step}]</a> ${esc(describeExpectation(e))}</li>`));
  return `<p class="verdict fail">FAIL: ${result.failed} of ${result.passed + result.failed} expectations failed</p><ul>${failures.join('')}</ul>`;
}

/** The report as one HTML document. */
export function renderHtmlReport(result: ScenarioRunResult): string {
  const points: { label: string; title: string; snapshot: Snapshot }[] = [];
  if (result.setup !== undefined) points.push({ label: 'setup', title: `setup (${result.setup.time})`, snapshot: result.setup });
  for (const s of result.steps) points.push({ label: String(s.step), title: `step ${s.step}: ${s.summary} (${s.time})`, snapshot: s });
  const last = points[points.length - 1]?.snapshot;
  const spreads = last === undefined ? [] : summarizeSpreads(last);
  const where = result.mode === 'embedded' ? `embedded cluster with the WorkloadSpread manager, virtual time${result.raceSeed === undefined ? '' : `, race seed ${result.raceSeed}`}` : 'existing cluster (--kubeconfig), real time';
  const first = points[0]?.snapshot.time;
  const charts = spreads.map((s) => `<h3>${esc(s.key)} → ${esc(s.target)}</h3>\n${chartFor(s, points)}`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(`Scenario ${result.name}`)}</title>
<style>${REPORT_STYLE}</style>
</head>
<body>
<header>
<h1>Scenario ${esc(result.name)}</h1>
${result.description === undefined ? '' : `<p class="desc">${esc(result.description.trim())}</p>`}
<p class="meta">${esc(where)}${first === undefined || last === undefined ? '' : ` · ${esc(first)} → ${esc(last.time)}`}</p>
${verdict(result)}
</header>
<main>
<section>
<h2>Pods per subset</h2>
${charts === '' ? '<p class="meta">No WorkloadSpread was observed.</p>' : `${charts}\n<p class="meta">Solid lines: active pods per subset after each step; dashed: the subset's limit (maxReplicas resolved). Hover a point for details.</p>`}
</section>
${budgetsSection(points.map((p) => ({ label: p.label, budgets: p.snapshot.budgets })))}
<section>
<h2>Steps</h2>
<table class="steps"><tr><th>#</th><th>Step</th><th>Time</th><th>Pods per subset</th><th>Events</th><th>Expectations</th></tr>
${result.setup === undefined ? '' : `<tr><td></td><td>objects applied, cluster settled</td><td>${esc(result.setup.time)}</td><td>${subsetCell(result.setup)}</td><td>${eventsCell(result.setup)}</td><td></td></tr>`}
${result.steps.map(stepRow).join('\n')}
</table>
</section>
<section>
<h2>Deletion costs at the end</h2>
${last === undefined ? '<p class="meta">The run ended before anything was observed.</p>' : costTables(last)}
</section>
</main>
<footer><p class="meta">Written by <code>workloadspread simulate</code>.</p></footer>
</body>
</html>
`;
}
