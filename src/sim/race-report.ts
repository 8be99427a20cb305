/**
 * The reports of `simulate --races N` (race-runs.ts): a table — a line per
 * seed as it finishes, then every expectation whose outcome depends on the
 * seed (each different value with the seeds that observed it), those that
 * failed under every seed, and a summary line — or one JSON document with the
 * same content (`raceReportJson`). Pure; nothing in them depends on the wall
 * clock, so the same runs give byte-identical reports.
 */
import { escapeTerminalDeep } from '../k8s/terminal-text.ts';
import { describeExpectation, showElapsed, showValue } from './describe.ts';
import type { RaceExpectation, RaceReport, RaceRun } from './race-runs.ts';
import type { TableStyle } from './report-table.ts';

const paint = (style: TableStyle, code: string, text: string): string => (style.color ? `\u001b[${code}m${text}\u001b[0m` : text);
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Seeds as short as they go: `1-3, 7`. */
export function showSeeds(seeds: readonly number[]): string {
  const sorted = [...new Set(seeds)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j - i >= 2 ? `${sorted[i]}-${sorted[j]}` : sorted.slice(i, j + 1).join(', '));
    i = j + 1;
  }
  return parts.join(', ');
}

const seedWord = (seeds: readonly number[]): string => `${seeds.length === 1 ? 'seed' : 'seeds'} ${showSeeds(seeds)}`;

/** The header: the scenario and the seeds it is played under. */
export function renderRaceHeader(raw: { name: string; description?: string | undefined; seeds: readonly number[] }): string {
  const r = escapeTerminalDeep(raw);
  return `Scenario ${r.name} (embedded cluster, virtual time, race mode: ${seedWord(r.seeds)})\n${r.description === undefined ? '' : `${r.description.trim()}\n`}\n`;
}

/** One seed's line: verdict, expectations, clock time, steps that did not settle, or why it ended early. */
export function renderRaceRun(raw: RaceRun, style: TableStyle): string {
  const run = escapeTerminalDeep(raw);
  const total = run.passed + run.failed;
  let verdict: string;
  if (run.error !== undefined) verdict = `${paint(style, '31', 'ERROR')}  ${run.error}`;
  else if (run.failed === 0) verdict = `${paint(style, '32', 'PASS')}   ${plural(run.passed, 'expectation')} held`;
  else verdict = `${paint(style, '31', 'FAIL')}   ${run.failed} of ${plural(total, 'expectation')} failed`;
  const unsettled = run.unsettledSteps.length === 0 ? '' : `; did not settle after ${run.unsettledSteps.length === 1 ? 'step' : 'steps'} ${run.unsettledSteps.join(', ')}`;
  return `seed ${run.seed}  ${verdict}  (${showElapsed(run.elapsedMs)}${unsettled})\n`;
}

function expectationBlock(e: RaceExpectation, style: TableStyle): string {
  let out = `  steps[${e.step}] ${e.path}  expected ${showValue(e.expected)}\n`;
  for (const o of e.outcomes) {
    const mark = o.ok ? paint(style, '32', '✓') : paint(style, '31', '✗');
    out += `    ${mark} ${showValue(o.actual)}${o.message === undefined ? '' : ` (${o.message})`}  ${seedWord(o.seeds)}\n`;
  }
  if (e.notRun.length > 0) out += `    – not reached (the run ended early)  ${seedWord(e.notRun)}\n`;
  return out;
}

/** The one-line verdict over every seed. */
export function raceSummaryLine(report: RaceReport): string {
  const seeds = `${plural(report.seeds.length, 'seed')} (${showSeeds(report.seeds)})`;
  if (report.interrupted === true) return `INTERRUPTED: ${report.runs.length} of ${seeds} played; everything the runs started was cleaned up`;
  const errors = report.runs.filter((r) => r.error !== undefined);
  const failedSeeds = report.runs.filter((r) => !r.ok).map((r) => r.seed);
  const parts: string[] = [];
  if (report.varying.length > 0) parts.push(`${report.varying.length} of ${plural(report.expectations, 'expectation')} depend${report.varying.length === 1 ? 's' : ''} on timing`);
  if (report.failing.length > 0) parts.push(`${report.failing.length} failed under every seed`);
  if (errors.length > 0) parts.push(`the run ended early under ${seedWord(errors.map((r) => r.seed))}`);
  if (report.ok) return `RACES PASS: every one of ${plural(report.expectations, 'expectation')} held under ${seeds}; no outcome depends on timing`;
  return `RACES FAIL: ${parts.join('; ')} — ${seeds}; failed under ${seedWord(failedSeeds)} (replay one with --race-seed ${failedSeeds[0] ?? ''})`;
}

/** Everything after the per-seed lines: what depends on timing, what always failed, the verdict. */
export function renderRaceReport(raw: RaceReport, style: TableStyle): string {
  const report = escapeTerminalDeep(raw);
  let out = '\n';
  if (report.varying.length > 0) {
    out += `${paint(style, '1', 'Depends on timing')} (${report.varying.length} of ${plural(report.expectations, 'expectation')}):\n`;
    for (const e of report.varying) out += expectationBlock(e, style);
    out += '\n';
  }
  if (report.failing.length > 0) {
    out += `${paint(style, '1', 'Failed under every seed')} (${report.failing.length}):\n`;
    for (const e of report.failing) {
      const o = e.outcomes[0];
      out += `  steps[${e.step}] ${describeExpectation({ ok: false, path: e.path, expected: e.expected, actual: o?.actual ?? null, ...(o?.message === undefined ? {} : { message: o.message }) })}\n`;
    }
    out += '\n';
  }
  const line = raceSummaryLine(raw);
  const colour = report.interrupted === true ? '33' : report.ok ? '32' : '31';
  const colon = line.indexOf(':');
  return `${out}${paint(style, colour, line.slice(0, colon))}${line.slice(colon)}\n`;
}

/** `-o json`: one JSON document (indented), the report plus its summary line. */
export function raceReportJson(report: RaceReport): string {
  const doc = {
    scenario: report.name,
    seeds: report.seeds,
    ok: report.ok,
    ...(report.interrupted === true ? { interrupted: true } : {}),
    expectations: report.expectations,
    runs: report.runs,
    varying: report.varying,
    failing: report.failing,
    summary: raceSummaryLine(report),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
