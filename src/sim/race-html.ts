/**
 * `simulate --races N --output html`: the race report (race-runs.ts) as ONE
 * self-contained HTML file, in the style of the run report (html-report.ts):
 * the verdict; a row per seed (its verdict, expectations, clock time, steps
 * that did not settle, why it ended early, and the command that replays it
 * with its own full report); every expectation whose outcome depends on the
 * seed, each observed value with the seeds that observed it; those that
 * failed under every seed. The same report gives the same bytes.
 * Everything that comes from the scenario or the cluster is escaped. Pure.
 */
import { describeExpectation, showElapsed, showValue } from './describe.ts';
import { REPORT_STYLE } from './html-report.ts';
import { raceSummaryLine, showSeeds } from './race-report.ts';
import type { RaceExpectation, RaceReport, RaceRun } from './race-runs.ts';
import { escapeXml as esc } from './timeline-chart.ts';

export interface RaceHtmlContext {
  /** The scenario's description. */
  description?: string | undefined;
  /** The scenario file as given on the command line, for the replay commands (default `SCENARIO.yaml`). */
  file?: string;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A shell word: bare when it is safe, otherwise single-quoted. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

function runRow(run: RaceRun, file: string): string {
  const total = run.passed + run.failed;
  let verdict: string;
  if (run.error !== undefined) verdict = `<span class="bad">ERROR</span> ${esc(run.error)}`;
  else if (run.failed === 0) verdict = `<span class="ok">PASS</span> ${plural(run.passed, 'expectation')} held`;
  else verdict = `<span class="bad">FAIL</span> ${run.failed} of ${plural(total, 'expectation')} failed`;
  const unsettled = run.unsettledSteps.length === 0 ? '' : `<div class="bad">did not settle after ${run.unsettledSteps.length === 1 ? 'step' : 'steps'} ${run.unsettledSteps.join(', ')}</div>`;
  const replay = `workloadspread simulate ${shellWord(file)} --race-seed ${run.seed} -o html --out ${shellWord(`race-seed-${run.seed}.html`)}`;
  return `<tr><td class="num">${run.seed}</td><td>${verdict}${unsettled}</td><td>${esc(showElapsed(run.elapsedMs))}</td><td><code>${esc(replay)}</code></td></tr>`;
}

function varyingBlock(e: RaceExpectation): string {
  const rows = e.outcomes.map((o) => `<tr><td class="${o.ok ? 'ok' : 'bad'}">${o.ok ? '✓ held' : '✗ failed'}</td><td>${esc(showValue(o.actual))}${o.message === undefined ? '' : ` <span class="meta">(${esc(o.message)})</span>`}</td><td>${esc(showSeeds(o.seeds))}</td></tr>`);
  if (e.notRun.length > 0) rows.push(`<tr><td class="meta">– not reached</td><td class="meta">the run ended early</td><td>${esc(showSeeds(e.notRun))}</td></tr>`);
  return `<h3><code>steps[${e.step}] ${esc(e.path)}</code> expected <code>${esc(showValue(e.expected))}</code></h3>
<p class="meta">held under ${e.passed.length === 0 ? 'no seed' : `${e.passed.length === 1 ? 'seed' : 'seeds'} ${esc(showSeeds(e.passed))}`}; failed under ${e.failed.length === 0 ? 'no seed' : `${e.failed.length === 1 ? 'seed' : 'seeds'} ${esc(showSeeds(e.failed))}`}</p>
<table><tr><th>Outcome</th><th>Observed</th><th>Seeds</th></tr>${rows.join('')}</table>`;
}

function failingItem(e: RaceExpectation): string {
  const o = e.outcomes[0];
  return `<li><code>steps[${e.step}]</code> ${esc(describeExpectation({ ok: false, path: e.path, expected: e.expected, actual: o?.actual ?? null, ...(o?.message === undefined ? {} : { message: o.message }) }))}</li>`;
}

/** The race report as one HTML document. */
export function renderRaceHtmlReport(report: RaceReport, context: RaceHtmlContext = {}): string {
  const file = context.file ?? 'SCENARIO.yaml';
  const line = raceSummaryLine(report);
  const verdictClass = report.interrupted === true ? 'warn' : report.ok ? 'pass' : 'fail';
  const varying =
    report.varying.length === 0
      ? '<p class="meta">No expectation changed its outcome between the seeds.</p>'
      : `<p class="meta">${report.varying.length} of ${plural(report.expectations, 'expectation')}: each value observed, with the seeds that observed it.</p>\n${report.varying.map(varyingBlock).join('\n')}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(`Scenario ${report.name}, race mode`)}</title>
<style>${REPORT_STYLE}</style>
</head>
<body>
<header>
<h1>Scenario ${esc(report.name)}</h1>
${context.description === undefined ? '' : `<p class="desc">${esc(context.description.trim())}</p>`}
<p class="meta">embedded cluster with the WorkloadSpread manager, virtual time, race mode: ${plural(report.seeds.length, 'seed')} (${esc(showSeeds(report.seeds))}), each varying the latencies and order of the controllers, watch streams and webhook calls</p>
<p class="verdict ${verdictClass}">${esc(line)}</p>
</header>
<main>
<section>
<h2>Depends on timing</h2>
${varying}
</section>
${report.failing.length === 0 ? '' : `<section>\n<h2>Failed under every seed</h2>\n<ul>${report.failing.map(failingItem).join('')}</ul>\n</section>`}
<section>
<h2>Seeds</h2>
<table><tr><th>Seed</th><th>Verdict</th><th>Clock</th><th>Replay with its own report</th></tr>
${report.runs.map((r) => runRow(r, file)).join('\n')}
</table>
</section>
</main>
<footer><p class="meta">Written by <code>workloadspread simulate --races</code>.</p></footer>
</body>
</html>
`;
}
