/**
 * `workloadspread plan -f WS.yaml --replicas 10,100,30 [-o table|json|yaml]`: the
 * spread engine alone, no cluster (see src/core/plan.ts for the model).
 * The JSON shape is an interface others script against (keys are only added):
 * `{"steps":[{"replicas":10,"subsets":{"a":{"limit":2,"pods":2,"costs":[200]}},"placed":2,"unplaced":0,"unassigned":0}]}`,
 * plus `unplacedPods` (what happens to pods no subset can take) when a step has some.
 *
 * Cost: O(n log n) in the largest count (core/plan.ts); `bench/plan.ts`
 * prints the figures.
 */
import { validateWorkloadSpreadFull } from '../api/validation.ts';
import { EMPTY_WHITELIST } from '../api/whitelist.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { planSpread, type PlanResult } from '../core/plan.ts';
import { formatFieldError } from '../k8s/field-errors.ts';
import { stringify } from 'yaml';
import { CommandError, UsageError, inputName, parseMaxInputSize, type CliIo } from './io.ts';
import { describeObject, groupOf, isWorkloadSpread, namespaceOf, readDocuments } from './documents.ts';
import { showCosts } from '../k8s/deletion-cost-text.ts';
import { renderTable } from './table.ts';

export interface PlanCommandOptions {
  /** `-` reads stdin. */
  file: string;
  replicas: string;
  output: 'table' | 'json' | 'yaml';
  /** `--max-input-size` (default 10Mi). */
  maxInputSize?: string;
}

const MAX_REPLICAS = 100_000;

/**
 * What happens to a pod no subset can take, in the JSON output (and, in
 * words, under the table): the webhook's answer, and what the plan cannot
 * know.
 */
export const UNPLACED_OUTCOME = {
  admission: 'admitted unchanged (no subset is injected)',
  event: { type: 'Warning', reason: 'NoSubsetAvailable', object: 'WorkloadSpread' },
  next: "the scheduler puts the pod on any node that fits it; the controller then adopts it into the subset whose node selector that node matches (even over that subset's limit, as a surplus pod that goes first on a scale-in), or into none. Which depends on the cluster's nodes, which plan does not know: it counts the pod in no subset",
} as const;

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
  const docs = await readDocuments(io, [options.file], parseMaxInputSize(options.maxInputSize));
  const spreads = docs.filter((d) => isWorkloadSpread(d.object));
  const first = spreads[0];
  if (first === undefined) throw new CommandError(`no WorkloadSpread (apps.kruise.io) found in ${inputName(options.file)}`, 1);
  const ws = first.object;
  const ref = (ws.spec as { targetRef?: { apiVersion?: unknown; kind?: unknown; name?: unknown } } | undefined)?.targetRef;
  const workload = docs
    .map((d) => d.object)
    .find((o) => ref !== undefined && o.kind === ref.kind && o.metadata?.name === ref.name && groupOf(o.apiVersion) === groupOf(ref.apiVersion));
  const errors = validateWorkloadSpreadFull(ws, { whitelist: EMPTY_WHITELIST, workload, others: [] });
  // A custom workload kind is only "not permitted" for lack of a cluster whitelist; plan it anyway.
  const blocking = errors.filter((e) => !(e.field === 'spec.targetRef' && e.detail.includes('not permitted')));
  if (blocking.length > 0) {
    io.err(`${inputName(options.file)}: ${describeObject(ws)} is invalid:\n`);
    for (const e of blocking) io.err(`  - ${formatFieldError(e)}\n`);
    return 1;
  }
  if (spreads.length > 1) io.err(`note: ${inputName(options.file)} has ${spreads.length} WorkloadSpreads; planning the first, ${describeObject(ws)}\n`);
  const outcome = planSpread(ws as unknown as WorkloadSpread, counts);
  if (!outcome.ok) throw new CommandError(`cannot plan ${describeObject(ws)}: ${outcome.error}`, 1);
  const anyUnplaced = outcome.result.steps.some((s) => s.unplaced > 0);
  const document = anyUnplaced ? { ...outcome.result, unplacedPods: UNPLACED_OUTCOME } : outcome.result;
  if (options.output === 'json') {
    io.out(`${JSON.stringify(document)}\n`);
    return 0;
  }
  if (options.output === 'yaml') {
    io.out(stringify(document, { version: '1.1', lineWidth: 0 }));
    return 0;
  }
  io.out(`${describeObject(ws)} → ${String(ref?.kind)} ${namespaceOf(ws)}/${String(ref?.name)}\n`);
  io.out(renderPlanTable(outcome.result));
  if (anyUnplaced) io.out(`\n${unplacedNote(outcome.result)}`);
  return 0;
}

/** The words under the table when some step has pods no subset can take. */
export function unplacedNote(result: PlanResult): string {
  const where = result.steps.flatMap((s, i) => (s.unplaced > 0 ? [`step ${i + 1}: ${s.unplaced}`] : [])).join(', ');
  return [
    `(unplaced): pods no subset can take (${where}). Each is ${UNPLACED_OUTCOME.admission}, with a ${UNPLACED_OUTCOME.event.type} event ${UNPLACED_OUTCOME.event.reason} on the WorkloadSpread.`,
    `Next, ${UNPLACED_OUTCOME.next}. \`simulate\` with your nodes shows where they land.`,
    '',
  ].join('\n');
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
    if (step.unplaced > 0) rows.push(['', '', '(unplaced)', '-', String(step.unplaced), '-']);
  });
  return renderTable(['STEP', 'REPLICAS', 'SUBSET', 'LIMIT', 'PODS', 'DELETION COSTS'], rows);
}
