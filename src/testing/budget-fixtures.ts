/**
 * Test fixtures for the disruption-budget math (core tests, webhook fixtures
 * and the property tests): zoned nodes, Ready or not pods, budgets in the
 * shape of KEP-8's stories. Not used by production code.
 */
import type { DomainDisruptionBudget, DomainDisruptionBudgetSpec } from '../api/disruption-budget.ts';
import type { Node, Pod } from '../k8s/types.ts';
import { formatTime } from '../k8s/time.ts';

export const ZONE = 'topology.kubernetes.io/zone';
export const T0 = Date.UTC(2026, 0, 1);

export function node(name: string, zone?: string): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: zone === undefined ? {} : { [ZONE]: zone } } };
}

export interface PodOptions {
  node?: string;
  ready?: boolean;
  phase?: string;
  terminating?: boolean;
  labels?: Record<string, string>;
  namespace?: string;
  /** The WorkloadSpread marker: `{name, subset}`. */
  marker?: { name: string; subset: string };
}

export function pod(name: string, options: PodOptions = {}): Pod {
  const ready = options.ready ?? true;
  const p: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: options.namespace ?? 'default', labels: options.labels ?? { app: 'foo' } },
    spec: { containers: [{ name: 'main' }] },
    status: { phase: options.phase ?? 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
  if (options.node !== undefined) p.spec.nodeName = options.node;
  if (options.terminating === true) p.metadata.deletionTimestamp = formatTime(T0);
  if (options.marker !== undefined) p.metadata.annotations = { 'apps.kruise.io/matched-workloadspread': JSON.stringify(options.marker) };
  return p;
}

export function budget(spec: Partial<DomainDisruptionBudgetSpec>, name = 'app-ddb', extra: Partial<DomainDisruptionBudget> = {}): DomainDisruptionBudget {
  return {
    apiVersion: 'policy.workloadspread.io/v1alpha1',
    kind: 'DomainDisruptionBudget',
    metadata: { name, namespace: 'default', generation: 1, uid: `uid-${name}`, resourceVersion: '1' },
    spec: { selector: { matchLabels: { app: 'foo' } }, ...spec },
    ...extra,
  };
}

/** KEP-8 story 1: no disruption anywhere but zone bar. */
export const STORY_1: Partial<DomainDisruptionBudgetSpec> = {
  maxUnavailable: 0,
  nodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'NotIn', values: ['bar'] }, { key: ZONE, operator: 'Exists' }] },
};
/** KEP-8 story 2: at most one unavailable per zone. */
export const STORY_2: Partial<DomainDisruptionBudgetSpec> = { maxUnavailable: 1, topologyKey: ZONE };
/** KEP-8 story 3: at most one unavailable overall. */
export const STORY_3: Partial<DomainDisruptionBudgetSpec> = { maxUnavailable: 1 };

export function nodeMap(nodes: readonly Node[]): Map<string, Node> {
  return new Map(nodes.map((n) => [n.metadata.name ?? '', n]));
}
