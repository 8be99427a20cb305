/**
 * `workloadspread plan -f WS.yaml --replicas 10,100,30 [-o table|json]`: the
 * spread engine alone, no cluster (see src/core/plan.ts for the model).
 * The JSON shape is an interface others script against:
 * `{"steps":[{"replicas":10,"subsets":{"a":{"limit":2,"pods":2,"costs":[200]}},"unassigned":0}]}`.
 */
import { validateWorkloadSpreadFull } from '../api/validation.ts';
import { EMPTY_WHITELIST } from '../api/whitelist.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { planSpread, type PlanResult } from '../core/plan.ts';
import { formatFieldError } from '../k8s/field-errors.ts';
import { CommandError, UsageError, type CliIo } from './io.ts';
import { describeObject, groupOf, isWorkloadSpread, namespaceOf, readDocuments } from './documents.ts';
import { showCosts } from '../sim/spread-summary.ts';
import { renderTable } from './table.ts';

export interface PlanCommandOptions {
  file: string;
  replicas: string;
  output: 'table' | 'json';
}

const MAX_REPLICAS = 100_000;

export function parseReplicaCounts(value: string): number[] {
  const parts = value.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => p === '')) {
    throw new UsageError(`--replicas must be a comma-separated list of counts, e.g. 10,100,30; got "${value}"`);
  }
  return parts.map((p) => {
    if (!/^\d+$/.test(p)) throw new UsageError(`--replicas: "${p}" is not a non-negative integer`);
    const n = Number(p);
    if (n > MAX_REPLICAS) throw new UsageError(`--replicas: ${n} is more than the ${MAX_REPLICAS} this command plans for`);
    return n;
  });
}

export async function runPlan(options: PlanCommandOptions, io: CliIo): Promise<number> {
  const counts = parseReplicaCounts(options.replicas);
  const docs = readDocuments(io, [options.file]);
  const spreads = docs.filter((d) => isWorkloadSpread(d.object));
  const first = spreads[0];
  if (first === undefined) throw new CommandError(`no WorkloadSpread (apps.kruise.io) found in ${options.file}`, 1);
  const ws = first.object;
  const ref = (ws.spec as { targetRef?: { apiVersion?: unknown; kind?: unknown; name?: unknown } } | undefined)?.targetRef;
  const workload = docs
    .map((d) => d.object)
    .find((o) => ref !== undefined && o.kind === ref.kind && o.metadata?.name === ref.name && groupOf(o.apiVersion) === groupOf(ref.apiVersion));
  const errors = validateWorkloadSpreadFull(ws, { whitelist: EMPTY_WHITELIST, workload, others: [] });
  // A custom workload kind is only "not permitted" for lack of a cluster whitelist; plan it anyway.
  const blocking = errors.filter((e) => !(e.field === 'spec.targetRef' && e.detail.includes('not permitted')));
  if (blocking.length > 0) {
    io.err(`${options.file}: ${describeObject(ws)} is invalid:\n`);
    for (const e of blocking) io.err(`  - ${formatFieldError(e)}\n`);
    return 1;
  }
  if (spreads.length > 1) io.err(`note: ${options.file} has ${spreads.length} WorkloadSpreads; planning the first, ${describeObject(ws)}\n`);
  const outcome = planSpread(ws as unknown as WorkloadSpread, counts);
  if (!outcome.ok) throw new CommandError(`cannot plan ${describeObject(ws)}: ${outcome.error}`, 1);
  if (options.output === 'json') {
    io.out(`${JSON.stringify(outcome.result)}\n`);
    return 0;
  }
  io.out(`${describeObject(ws)} → ${String(ref?.kind)} ${namespaceOf(ws)}/${String(ref?.name)}\n`);
  io.out(renderPlanTable(outcome.result));
  return 0;
}

export function renderPlanTable(result: PlanResult): string {
  const rows: string[][] = [];
  result.steps.forEach((step, i) => {
    const entries = Object.entries(step.subsets);
    entries.forEach(([name, s], j) => {
      rows.push([
        j === 0 ? String(i + 1) : '',
        j === 0 ? String(step.replicas) : '',
        name,
        s.limit === null ? 'unlimited' : String(s.limit),
        String(s.pods),
        showCosts(s.costs),
      ]);
    });
    if (step.unassigned > 0) rows.push(['', '', '(no subset)', '-', String(step.unassigned), '-']);
  });
  return renderTable(['STEP', 'REPLICAS', 'SUBSET', 'LIMIT', 'PODS', 'DELETION COSTS'], rows);
}
