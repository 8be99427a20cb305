/**
 * The `workloadspread status` table: per WorkloadSpread a heading (target,
 * replicas, pods placed), one row per subset with a bar, then the target's
 * pods that belong to no subset, then what the rebalancer is doing (D18),
 * then the disruption budgets selecting its pods (status-budgets.ts).
 * `-o wide` adds a PENDING column and lists every pod (subset, node, phase,
 * readiness, deletion cost). Columns are aligned by visible width, so colour
 * never shifts them. The object formats (`-o json`, ...) are status-output.ts's. Pure.
 */
import { barLegend, barScale, renderBar, type BarCounts } from './bars.ts';
import { renderBudgets } from './status-budgets.ts';
import type { RebalanceView, SubsetView, WorkloadSpreadView } from './status-model.ts';
import { escapeTerminalDeep } from '../k8s/terminal-text.ts';
import { alignColumns, type Style } from './style.ts';

/** Bar width of the status table. */
export const STATUS_BAR_CELLS = 20;

const HEADER = ['SUBSET', 'LIMIT', 'PODS', 'READY', 'MISSING', 'CREATING', 'DELETING', 'SCHEDULABLE', 'DELETION COST', ''] as const;
const WIDE_HEADER = ['SUBSET', 'LIMIT', 'PODS', 'READY', 'PENDING', 'MISSING', 'CREATING', 'DELETING', 'SCHEDULABLE', 'DELETION COST', ''] as const;

export interface RenderOptions {
  /** `-o wide`: the PENDING column and every pod. */
  wide?: boolean;
}

export function costRange(s: Pick<SubsetView, 'deletionCost'>): string {
  const c = s.deletionCost;
  if (c === null) return '-';
  return c.min === c.max ? String(c.min) : `${c.min}..${c.max}`;
}

export function barCounts(s: SubsetView): BarCounts {
  return { ready: s.ready, notReady: s.pods - s.ready, limit: s.limit };
}

function schedulableCell(s: SubsetView, style: Style): string {
  if (s.schedulable === null) return '-';
  const text = s.schedulable.reason === null ? s.schedulable.status : `${s.schedulable.status} (${s.schedulable.reason})`;
  return s.schedulable.status === 'False' ? style.red(text) : s.schedulable.status === 'True' ? text : style.yellow(text);
}

function limitCell(s: SubsetView): string {
  const max = s.limit === null ? 'unlimited' : String(s.limit);
  return s.minReplicas === null ? max : `${s.minReplicas}..${max}`;
}

function heading(view: WorkloadSpreadView, style: Style): string {
  const t = view.target;
  const target = `${t.kind || '?'} ${t.name || '?'}`;
  const replicas = t.replicas === null ? 'replicas unknown' : `${t.replicas} replica${t.replicas === 1 ? '' : 's'}`;
  const summary = t.found ? `${replicas}, ${view.placed} placed, ${view.ready} ready` : style.red('not found');
  return `${style.bold(`WorkloadSpread ${view.namespace}/${view.name}`)} → ${target} (${summary})`;
}

/** The table of one WorkloadSpread (ends with a newline). */
export function renderView(raw: WorkloadSpreadView, style: Style, options: RenderOptions = {}): string {
  // Names, reasons and messages come from the cluster: their control characters are shown, not obeyed.
  const view = escapeTerminalDeep(raw);
  const wide = options.wide === true;
  const lines: string[] = [heading(view, style)];
  for (const problem of view.problems) lines.push(`  ${style.yellow('!')} ${problem}`);
  if (!view.statusCurrent) lines.push(`  ${style.yellow('!')} the stored status is for an older spec: the manager has not reconciled the latest change yet`);
  if (view.subsets.length > 0) {
    const scale = barScale(view.subsets.map(barCounts), STATUS_BAR_CELLS);
    const rows: string[][] = [wide ? [...WIDE_HEADER] : [...HEADER]];
    for (const s of view.subsets) {
      rows.push([
        s.name,
        limitCell(s),
        String(s.pods),
        String(s.ready),
        ...(wide ? [String(s.pending)] : []),
        s.missing === null ? '-' : String(s.missing),
        String(s.creating),
        String(s.deleting),
        schedulableCell(s, style),
        costRange(s),
        renderBar(barCounts(s), scale, style),
      ]);
    }
    lines.push(...alignColumns(rows).map((l, i) => (i === 0 ? style.dim(l) : l)));
  }
  if (wide && view.pods.length > 0) {
    lines.push(`Pods (${view.pods.length}):`);
    const rows = [['  NAME', 'SUBSET', 'NODE', 'PHASE', 'READY', 'DELETION COST']].concat(
      view.pods.map((p) => [`  ${p.name}`, p.subset ?? '<none>', p.node ?? '<unscheduled>', p.phase, p.ready ? 'true' : 'false', p.deletionCost === null ? '-' : String(p.deletionCost)]),
    );
    lines.push(...alignColumns(rows).map((l, i) => (i === 0 ? style.dim(l) : l)));
  }
  if (view.unassigned.length > 0) {
    lines.push(`Pods in no subset (${view.unassigned.length}):`);
    const rows = view.unassigned.map((p) => [
      `  ${p.name}`,
      p.node ?? '<unscheduled>',
      p.phase,
      p.ready ? 'ready' : 'not ready',
      p.deletionCost === null ? 'cost -' : `cost ${p.deletionCost}`,
      style.dim(p.reason ?? ''),
    ]);
    lines.push(...alignColumns(rows));
  }
  if (view.rebalance !== undefined) lines.push(...rebalanceLines(view.rebalance, style));
  lines.push(...renderBudgets(view.budgets, style));
  return `${lines.join('\n')}\n`;
}

/** D18 reasons that mean "a wanted move cannot be made now". */
const BLOCKED = new Set(['NoRoom', 'ReplacementWouldNotLand', 'EvictionRefused', 'EvictionFailed', 'Unsupported', 'InvalidSettings']);

/** `Rebalancing: on (1 move at a time) — Moving since …: 1 pod to move`, then the moves in flight. */
export function rebalanceLines(r: RebalanceView, style: Style): string[] {
  const setting = r.error !== undefined ? style.red(`invalid: ${r.error}`) : r.enabled ? `on (${r.maxInFlight ?? 1} move${(r.maxInFlight ?? 1) === 1 ? '' : 's'} at a time)` : 'off';
  if (r.reason === null) return [`Rebalancing: ${setting} — not looked at yet`];
  const reason = BLOCKED.has(r.reason) ? style.yellow(r.reason) : r.reason;
  const pending = r.pending === null ? '' : `: ${r.pending} pod${r.pending === 1 ? '' : 's'} to move`;
  const lines = [`Rebalancing: ${setting} — ${reason}${r.since === null ? '' : ` since ${r.since}`}${pending}`];
  if (r.message !== null && r.reason !== 'Balanced') lines.push(`  ${style.dim(r.message)}`);
  for (const m of r.moves) lines.push(`  moving ${m.pod}: ${m.from ?? '(no subset)'} → ${m.to}, evicted ${m.evictedAt}`);
  return lines;
}

/** Every view, a blank line apart, and the bar legend once. */
export function renderViews(views: readonly WorkloadSpreadView[], style: Style, options: RenderOptions = {}): string {
  if (views.length === 0) return '';
  const body = views.map((v) => renderView(v, style, options)).join('\n');
  return views.some((v) => v.subsets.length > 0) ? `${body}\n${style.dim('bars: ')}${barLegend(style)}\n` : body;
}
