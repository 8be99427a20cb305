/**
 * Disruption budgets as the simulator reports them after every step and
 * `workloadspread status` shows them: each DomainDisruptionBudget with its
 * domains as its status says (expected, healthy, desired, allowed, the pods
 * whose eviction is awaited), and each PodDisruptionBudget as one domain
 * named `all` — so a scenario can show and check both kinds side by side (an
 * eviction needs both to agree).
 *
 * Pure: raw objects in, records out; nothing in the objects can make it
 * throw. Listing them from a cluster is the simulator's
 * (sim/budget-listing.ts).
 */
import { DOMAIN_ALL } from '../api/names.ts';
import { asArray, asNumber, asRecord, asString } from '../k8s/raw-json.ts';
import type { KubeObject } from '../k8s/types.ts';

export type BudgetKind = 'DomainDisruptionBudget' | 'PodDisruptionBudget';

export interface BudgetDomainRecord {
  name: string;
  expectedPods: number;
  currentHealthy: number;
  desiredHealthy: number;
  disruptionsAllowed: number;
  /** Pods whose eviction was approved and whose deletion is awaited, by name. */
  disruptedPods: string[];
}

export interface BudgetRecord {
  kind: BudgetKind;
  namespace: string;
  name: string;
  /** How domains are named (`topologyKey=topology.kubernetes.io/zone`, `nodeSelectorTerm`, `all`, …); `pdb` for a PodDisruptionBudget. */
  mode: string;
  /** `maxUnavailable 1`, `minAvailable 50%`, as written. */
  limit: string;
  /** The status was computed for the current spec (observedGeneration ≥ generation). */
  observed: boolean;
  domains: BudgetDomainRecord[];
}

const count = (v: unknown): number => asNumber(v) ?? 0;

function limitOf(spec: Record<string, unknown> | undefined): string {
  for (const key of ['maxUnavailable', 'minAvailable']) {
    const v = spec?.[key];
    if (typeof v === 'number' || typeof v === 'string') return `${key} ${v}`;
  }
  return '-';
}

function observed(o: KubeObject, status: Record<string, unknown> | undefined): boolean {
  const generation = asNumber(o.metadata?.generation) ?? 0;
  return status !== undefined && count(status['observedGeneration']) >= generation;
}

function domainRecord(name: string, raw: Record<string, unknown>): BudgetDomainRecord {
  return {
    name,
    expectedPods: count(raw['expectedPods']),
    currentHealthy: count(raw['currentHealthy']),
    desiredHealthy: count(raw['desiredHealthy']),
    disruptionsAllowed: count(raw['disruptionsAllowed']),
    disruptedPods: Object.keys(asRecord(raw['disruptedPods']) ?? {}).sort(),
  };
}

const byKey = (a: BudgetRecord, b: BudgetRecord): number => `${a.namespace}/${a.name}/${a.kind}`.localeCompare(`${b.namespace}/${b.name}/${b.kind}`);

/** Records of the listed budgets, sorted by namespace, name, kind. */
export function budgetRecords(ddbs: readonly KubeObject[], pdbs: readonly KubeObject[]): BudgetRecord[] {
  const out: BudgetRecord[] = [];
  for (const o of ddbs) {
    const status = asRecord(o['status']);
    const domains: BudgetDomainRecord[] = [];
    for (const d of asArray(status?.['domains']) ?? []) {
      const raw = asRecord(d);
      const name = asString(raw?.['name']);
      if (raw !== undefined && name !== undefined) domains.push(domainRecord(name, raw));
    }
    out.push({
      kind: 'DomainDisruptionBudget',
      namespace: o.metadata?.namespace ?? '',
      name: o.metadata?.name ?? '',
      mode: asString(status?.['mode']) ?? '',
      limit: limitOf(asRecord(o['spec'])),
      observed: observed(o, status),
      domains,
    });
  }
  for (const o of pdbs) {
    const status = asRecord(o['status']);
    out.push({
      kind: 'PodDisruptionBudget',
      namespace: o.metadata?.namespace ?? '',
      name: o.metadata?.name ?? '',
      mode: 'pdb',
      limit: limitOf(asRecord(o['spec'])),
      observed: observed(o, status),
      domains: status === undefined ? [] : [domainRecord(DOMAIN_ALL, status)],
    });
  }
  return out.sort(byKey);
}

/**
 * The budget a scenario names: `[namespace/]name`, a DomainDisruptionBudget
 * before a PodDisruptionBudget of the same name.
 */
export function findBudget(budgets: readonly BudgetRecord[], ref: { namespace: string; name: string }): BudgetRecord | undefined {
  const matching = budgets.filter((b) => b.namespace === ref.namespace && b.name === ref.name);
  return matching.find((b) => b.kind === 'DomainDisruptionBudget') ?? matching[0];
}
