/**
 * `simulate --output table` (the default): a readable block per step —
 * number, what it did, clock time and time since the start, per
 * WorkloadSpread the subsets (pods, ready, limit, deletion costs) and what the
 * rebalancer is doing (D18, when on), the
 * disruption budgets per domain and a drain's evictions (budget-report.ts), the
 * notable events (those about WorkloadSpreads, and warnings) and the
 * expectation results (✓ / ✗ with expected vs actual) — then a summary
 * naming every failed expectation. Blocks are rendered one at a time so
 * the CLI can print each step as soon as it ran. Colour only when asked.
 * Pure.
 */
import { escapeTerminalDeep } from '../k8s/terminal-text.ts';
import { budgetTable, evictionTable } from './budget-report.ts';
import { columns } from './columns.ts';
import { describeExpectation, describeUnsettled, showElapsed } from './describe.ts';
import type { ExpectationResult } from './evaluate.ts';
import type { EventRecord } from './observation.ts';
import type { ScenarioRunResult, Snapshot, StepResult } from './runner.ts';
import { showRebalance, summarizeSpreads } from './spread-summary.ts';
import { showCosts } from '../k8s/deletion-cost-text.ts';

export interface TableStyle {
  color: boolean;
}

const paint = (style: TableStyle, code: string, text: string): string => (style.color ? `\u001b[${code}m${text}\u001b[0m` : text);

function spreadTables(snapshot: Snapshot): string {
  let out = '';
  for (const s of summarizeSpreads(snapshot)) {
    out += `  ${s.key} → ${s.target} (${s.replicas < 0 ? 'unknown' : s.replicas} replicas)\n`;
    const rows = [['SUBSET', 'PODS', 'READY', 'LIMIT', 'DELETION COSTS']];
    for (const sub of s.subsets) rows.push([sub.name, String(sub.pods), String(sub.ready), sub.limit === null ? 'unlimited' : String(sub.limit), showCosts(sub.costs)]);
    if (s.unassigned.pods > 0) rows.push([s.unassigned.name, String(s.unassigned.pods), String(s.unassigned.ready), '-', showCosts(s.unassigned.costs)]);
    out += columns(rows, '    ');
    if (s.rebalance !== undefined) out += `    rebalance: ${showRebalance(s.rebalance)}\n`;
  }
  return out;
}

/** Events worth a line: about a WorkloadSpread, or warnings; the rest are counted. */
function eventLines(events: readonly EventRecord[], style: TableStyle): string {
  const notable = events.filter((e) => e.object.startsWith('WorkloadSpread/') || e.type === 'Warning');
  const shown = notable.slice(0, 8);
  let out = '';
  for (const e of shown) out += `  ${paint(style, e.type === 'Warning' ? '33' : '36', `event ${e.type} ${e.reason}`)} ${e.object}: ${e.message}${e.count > 1 ? ` (x${e.count})` : ''}\n`;
  const rest = events.length - shown.length;
  if (rest > 0) out += `  (${rest} ${shown.length === 0 ? '' : 'more '}event${rest === 1 ? '' : 's'}: ${[...new Set(events.filter((e) => !shown.includes(e)).map((e) => e.reason))].join(', ')})\n`;
  return out;
}

export function expectationLine(e: ExpectationResult, style: TableStyle): string {
  return `  ${e.ok ? paint(style, '32', '✓') : paint(style, '31', '✗')} ${describeExpectation(e)}\n`;
}

export function renderHeader(raw: Pick<ScenarioRunResult, 'name' | 'description' | 'mode' | 'raceSeed'>): string {
  const result = escapeTerminalDeep(raw);
  const where = result.mode === 'embedded' ? `embedded cluster, virtual time${result.raceSeed === undefined ? '' : `, race seed ${result.raceSeed}`}` : 'existing cluster (--kubeconfig), real time';
  return `Scenario ${result.name} (${where})\n${result.description === undefined ? '' : `${result.description.trim()}\n`}\n`;
}

export function renderSetup(raw: Snapshot, style: TableStyle): string {
  const setup = escapeTerminalDeep(raw);
  return `${paint(style, '1', 'setup')}  objects applied  ${setup.time} (${showElapsed(setup.elapsedMs)})\n${spreadTables(setup)}${budgetTable(setup.budgets)}${eventLines(setup.events, style)}\n`;
}

export function renderStep(raw: StepResult, style: TableStyle): string {
  // What the scenario and the cluster say is shown, never obeyed: control characters escaped before colouring.
  const step = escapeTerminalDeep(raw);
  let out = `${paint(style, '1', `step ${step.step}`)}  ${step.summary}  ${step.time} (${showElapsed(step.elapsedMs)})\n`;
  if (step.description !== undefined) out += `  ${step.description}\n`;
  for (const n of step.notes ?? []) out += `  note: ${n}\n`;
  if (step.error !== undefined) out += `  ${paint(style, step.expectations.some((e) => e.path === 'expectFailure' && e.ok) ? '33' : '31', 'refused')}: ${step.error}\n`;
  const unsettled = describeUnsettled(step.settled);
  if (unsettled !== undefined) out += `  ${paint(style, '33', 'warning')}: ${unsettled}\n`;
  for (const n of step.settled?.notes ?? []) out += `  note: ${n}\n`;
  if (step.action !== 'expect') out += spreadTables(step) + evictionTable(step.evictions ?? []) + budgetTable(step.budgets);
  out += eventLines(step.events, style);
  for (const e of step.expectations) out += expectationLine(e, style);
  return `${out}\n`;
}

/** The last lines: PASS, or FAIL with every failed expectation named (`steps[4] subsets.a: expected 2, got 3`). */
export function renderSummary(raw: ScenarioRunResult, style: TableStyle): string {
  const result = escapeTerminalDeep(raw);
  if (result.interrupted === true) return `${paint(style, '33', 'INTERRUPTED')}: the run was stopped; everything it started was cleaned up\n`;
  if (result.error !== undefined) return `${paint(style, '31', 'ERROR')}: ${result.error}\n`;
  if (result.failed === 0) return `${paint(style, '32', 'PASS')}: ${result.passed} expectation${result.passed === 1 ? '' : 's'} held over ${result.steps.length} step${result.steps.length === 1 ? '' : 's'}\n`;
  let out = `${paint(style, '31', 'FAIL')}: ${result.failed} of ${result.passed + result.failed} expectations failed\n`;
  for (const s of result.steps) for (const e of s.expectations) if (!e.ok) out += `  steps[${s.step}] ${describeExpectation(e)}\n`;
  return out;
}

/** The whole report at once (tests, and callers that do not stream). */
export function renderTableReport(result: ScenarioRunResult, style: TableStyle = { color: false }): string {
  let out = renderHeader(result);
  if (result.setup !== undefined) out += renderSetup(result.setup, style);
  for (const s of result.steps) out += renderStep(s, style);
  return out + renderSummary(result, style);
}
