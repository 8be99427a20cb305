/**
 * Disruption budgets in `workloadspread status`: which budgets are shown
 * under a WorkloadSpread (those selecting its pods, both kinds), the lines
 * drawn, and the command end to end on the embedded cluster (budgets read
 * through a kubeconfig, statuses as their controllers would store them).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { domainDisruptionBudgetCrd } from '../api/crd.ts';
import { DDB_API_VERSION, DDB_KIND } from '../api/disruption-budget.ts';
import { BUILTIN, type ResourceRef } from '../client/resources.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { startManagerCluster, type ManagerCluster } from '../testing/manager-bed.ts';
import { captureIo } from '../testing/cli-io.ts';
import { deployment, workloadSpreadObject, zoneTerm } from '../testing/webhook-bed.ts';
import { budgetViews, renderBudgets } from './status-budgets.ts';
import type { WorkloadSpreadView } from './status-model.ts';
import { runStatus } from './status.ts';
import { createStyle } from './style.ts';

const pod = (name: string, labels: Record<string, string>, namespace = 'ns'): Pod => ({ metadata: { name, namespace, labels } }) as Pod;

const ddb = (name: string, selector: unknown, status: unknown, namespace = 'ns'): KubeObject =>
  ({ apiVersion: DDB_API_VERSION, kind: DDB_KIND, metadata: { name, namespace, generation: 1 }, spec: { selector, maxUnavailable: 1, topologyKey: 'zone' }, status }) as KubeObject;
const pdb = (name: string, selector: unknown, status: unknown = { observedGeneration: 1, expectedPods: 3, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 }): KubeObject =>
  ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name, namespace: 'ns', generation: 1 }, spec: { selector, minAvailable: 2 }, status }) as KubeObject;

const zones = {
  observedGeneration: 1,
  mode: 'topologyKey=zone',
  domains: [
    { name: 'a', expectedPods: 2, currentHealthy: 1, desiredHealthy: 1, disruptionsAllowed: 0, disruptedPods: { 'web-1': '2026-01-01T00:00:00Z' } },
    { name: 'b', expectedPods: 1, currentHealthy: 1, desiredHealthy: 0, disruptionsAllowed: 1 },
  ],
};

describe('budgetViews', () => {
  const pods = [pod('web-1', { app: 'web', tier: 'front' }), pod('web-2', { app: 'web' })];
  test('budgets of both kinds that select at least one of the pods, DomainDisruptionBudgets first, with how many they select', () => {
    const views = budgetViews(pods, [ddb('z', { matchLabels: { app: 'web' } }, zones), ddb('other', { matchLabels: { app: 'db' } }, zones)], [pdb('front', { matchLabels: { tier: 'front' } }), pdb('none', null)]);
    assert.deepEqual(views.map((v) => [v.kind, v.name, v.selects]), [
      ['DomainDisruptionBudget', 'z', 2],
      ['PodDisruptionBudget', 'front', 1],
    ]);
    assert.deepEqual(views[0]?.domains.map((d) => [d.name, d.disruptionsAllowed, d.disruptedPods]), [['a', 0, ['web-1']], ['b', 1, []]]);
  });
  test('a budget of another namespace, or with an empty selector, selects nothing', () => {
    assert.deepEqual(budgetViews(pods, [ddb('elsewhere', { matchLabels: { app: 'web' } }, zones, 'other'), ddb('empty', {}, zones)], [pdb('all', {})]).map((v) => v.name), ['all']);
  });
  test('junk never throws', () => {
    assert.deepEqual(budgetViews([{} as Pod], [{} as KubeObject], [{ spec: { selector: 'x' } } as unknown as KubeObject]), []);
  });
});

describe('renderBudgets', () => {
  const style = createStyle(false);
  test('one row per domain, the budget named on its first; allowed, healthy, desired, expected, awaited pods', () => {
    const views = budgetViews([pod('web-1', { app: 'web' })], [ddb('z', { matchLabels: { app: 'web' } }, zones)], [pdb('p', { matchLabels: { app: 'web' } })]);
    assert.deepEqual(renderBudgets(views, style), [
      'Disruption budgets selecting its pods (ddb/z: maxUnavailable 1, topologyKey=zone, 1 pod; pdb/p: minAvailable 2, 1 pod):',
      '  BUDGET  DOMAIN  ALLOWED  HEALTHY  DESIRED  EXPECTED  AWAITING DELETION',
      '  ddb/z   a       0        1        1        2         web-1',
      '          b       1        1        0        1         -',
      '  pdb/p   all     1        3        2        3         -',
    ]);
  });
  test('a budget without a status yet says so; no budgets, no lines', () => {
    const views = budgetViews([pod('web-1', { app: 'web' })], [ddb('new', { matchLabels: { app: 'web' } }, undefined)], []);
    assert.match(renderBudgets(views, style).join('\n'), /ddb\/new +not computed yet/);
    assert.match(renderBudgets(views, style)[0] ?? '', /status not current/);
    assert.deepEqual(renderBudgets([], style), []);
    assert.deepEqual(renderBudgets(undefined, style), []);
  });
});

describe('workloadspread status shows the budgets of a WorkloadSpread (embedded cluster)', () => {
  let env: ManagerCluster;
  let dir: string;
  let kubeconfig: string;
  let ns: string;
  const ddbRef: ResourceRef = { group: 'policy.workloadspread.io', version: 'v1alpha1', resource: 'domaindisruptionbudgets', kind: DDB_KIND, namespaced: true };

  before(async () => {
    env = await startManagerCluster();
    const created = await env.cluster.apiServer.control.create(domainDisruptionBudgetCrd() as KubeObject);
    assert.ok(created.ok);
    await env.clock.quiesce();
    dir = mkdtempSync(join(tmpdir(), 'ws-status-budgets-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, env.cluster.kubeconfig);
    ns = await env.namespace('budgets');
    await env.cluster.client.create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, 'spread', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', requiredNodeSelectorTerm: zoneTerm('a') }] }));
    await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 2));
    const budget = await env.cluster.client.create<KubeObject>(ddbRef, { apiVersion: DDB_API_VERSION, kind: DDB_KIND, metadata: { name: 'per-zone', namespace: ns }, spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1, topologyKey: 'topology.kubernetes.io/zone' } });
    // The status as the budget controller would write it.
    await env.cluster.client.updateStatus(ddbRef, { ...budget, status: { ...zones, observedGeneration: budget.metadata?.generation } });
    await env.cluster.client.create(BUILTIN.poddisruptionbudgets, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web-pdb', namespace: ns }, spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 } });
    await env.cluster.client.create(BUILTIN.poddisruptionbudgets, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db-pdb', namespace: ns }, spec: { selector: { matchLabels: { app: 'db' } }, maxUnavailable: 1 } });
    await env.cluster.settle();
  });
  after(async () => {
    await env?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('-o json carries the budgets selecting its pods; the table shows them under the subsets', async () => {
    const json = captureIo();
    assert.equal(await runStatus({ kubeconfig, namespace: ns, output: 'json' }, json, { clock: env.clock }), 0, json.stderr);
    const [view] = (JSON.parse(json.stdout) as { items: WorkloadSpreadView[] }).items;
    assert.deepEqual(view?.budgets?.map((b) => [b.kind, b.name, b.selects, b.domains.map((d) => d.name)]), [
      ['DomainDisruptionBudget', 'per-zone', 2, ['a', 'b']],
      // The cluster's disruption controller computes the PDB: 2 pods, 1 may go.
      ['PodDisruptionBudget', 'web-pdb', 2, ['all']],
    ]);
    assert.deepEqual(view?.budgets?.[1]?.domains[0], { name: 'all', expectedPods: 2, currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1, disruptedPods: [] });
    const table = captureIo();
    assert.equal(await runStatus({ kubeconfig, namespace: ns, color: false }, table, { clock: env.clock }), 0);
    assert.match(table.stdout, /Disruption budgets selecting its pods \(ddb\/per-zone: maxUnavailable 1, topologyKey=zone, 2 pods; pdb\/web-pdb: maxUnavailable 1, 2 pods\):/);
    assert.match(table.stdout, /ddb\/per-zone +a +0 +1 +1 +2 +web-1/);
    assert.ok(!table.stdout.includes('db-pdb'));
  });
});
