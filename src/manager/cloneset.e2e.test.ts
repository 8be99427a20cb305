/**
 * The manager's CloneSet paths end to end: the real manager (webhook and
 * controller) on the embedded cluster, whose CloneSet controller creates,
 * deletes and recreates the pods, on the virtual clock.
 *
 * - scale-out fills the subsets in spec order up to their limits; the
 *   controller writes deletion costs for CloneSet pods (D7) and the
 *   CloneSet's scale-in honours them;
 * - percentage limits: a scale-in keeps every subset within its limit at the
 *   new count (balanced costs, D17), in one step; a scale-out places the new
 *   pods by the limits at the new count, although the CloneSet creates them
 *   before it reports the new generation observed;
 * - a partitioned recreate rollout: pods are versioned by their revision
 *   (D12), the new revision gets the full quota of every subset, the old one
 *   the reversed costs, and the end state equals a fresh spread.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { BUILTIN } from '../client/resources.ts';
import { CLONESET_REF, WORKLOADSPREAD_REF } from '../kube/refs.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { countBySubset, podsOf, readSpread, subsetOf, workloadSpreadObject, zoneTerm } from '../testing/webhook-bed.ts';
import { startManagerCluster, startTestManager, stopOnClock, type ManagerCluster, type TestManager } from '../testing/manager-bed.ts';

const COST = 'controller.kubernetes.io/pod-deletion-cost';

function cloneSet(namespace: string, name: string, replicas: number, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '10m' } } }] } },
      ...extra,
    },
  };
}

describe('CloneSet end to end with the whole manager', () => {
  let env: ManagerCluster;
  let m: TestManager;
  before(async () => {
    env = await startManagerCluster({ budgetCrd: true });
    m = await startTestManager(env, { name: 'cloneset', leaderElection: false });
  });
  after(async () => {
    if (m !== undefined) await stopOnClock(env, m.manager);
    await env?.stop();
  });

  const spread = async (ns: string, subsets: Subset[], target = 'web', extra: Partial<WorkloadSpread['spec']> = {}): Promise<void> => {
    await env.cluster.client.create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, 'spread', { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: target }, subsets, ...extra }));
    await env.clock.quiesce();
  };
  const scale = async (ns: string, replicas: number, name = 'web'): Promise<void> => {
    await env.cluster.client.scale(CLONESET_REF, name, replicas, { namespace: ns });
    await env.cluster.settle();
  };
  const active = async (ns: string): Promise<Pod[]> => (await podsOf(env.cluster.client, ns)).filter((p) => p.metadata.deletionTimestamp === undefined);
  const costsBySubset = (pods: readonly Pod[], filter: (p: Pod) => boolean = () => true): Record<string, string[]> => {
    const out: Record<string, Set<string>> = {};
    for (const p of pods.filter(filter)) (out[subsetOf(p)] ??= new Set()).add(p.metadata.annotations?.[COST] ?? '');
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort((x, y) => Number(x) - Number(y))]));
  };
  const statuses = async (ns: string): Promise<[string, number, number][]> =>
    ((await readSpread(env.cluster.client, ns, 'spread')).status?.subsetStatuses ?? []).map((s) => [s.name, s.replicas, s.missingReplicas]);
  const threeZones = (a: number | string, b: number | string, c?: number | string): Subset[] => [
    { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: a },
    { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: b },
    { name: 'c', requiredNodeSelectorTerm: zoneTerm('c'), ...(c === undefined ? {} : { maxReplicas: c }) },
  ];

  test('scale-out fills a, b, c in order up to their limits; scale-in removes the lowest deletion costs', async () => {
    const ns = await env.namespace('cs-order');
    await spread(ns, threeZones(2, 2));
    await env.cluster.client.create(CLONESET_REF, cloneSet(ns, 'web', 3), { namespace: ns });
    await env.cluster.settle();
    assert.deepEqual(countBySubset(await active(ns)), { a: 2, b: 1 });
    await scale(ns, 6);
    const six = await active(ns);
    assert.deepEqual(countBySubset(six), { a: 2, b: 2, c: 2 });
    assert.deepEqual(costsBySubset(six), { a: ['300'], b: ['200'], c: ['100'] }, 'D7: CloneSet pods get deletion costs');
    assert.ok(six.every((p) => p.metadata.ownerReferences?.[0]?.kind === 'CloneSet'));
    await scale(ns, 3);
    assert.deepEqual(countBySubset(await active(ns)), { a: 2, b: 1 }, "c's pods went first, then one of b's");
    assert.deepEqual(await statuses(ns), [['a', 2, 0], ['b', 1, 1], ['c', 0, -1]]);
  });

  test('percentage limits: 20 % / 20 % / 60 % keep their ratio through a one-step scale-in, 10 → 5', async () => {
    const ns = await env.namespace('cs-balanced');
    await spread(ns, threeZones('20%', '20%', '60%'));
    await env.cluster.client.create(CLONESET_REF, cloneSet(ns, 'web', 10), { namespace: ns });
    await env.cluster.settle();
    const ten = await active(ns);
    assert.deepEqual(countBySubset(ten), { a: 2, b: 2, c: 6 });
    // D17: the five dearest pods already hold 1:1:3.
    const byCost = [...ten].sort((x, y) => Number(x.metadata.annotations?.[COST]) - Number(y.metadata.annotations?.[COST]));
    assert.deepEqual(countBySubset(byCost.slice(5)), { a: 1, b: 1, c: 3 });
    await scale(ns, 5);
    assert.deepEqual(countBySubset(await active(ns)), { a: 1, b: 1, c: 3 });
    assert.deepEqual(await statuses(ns), [['a', 1, 0], ['b', 1, 0], ['c', 3, 0]]);
  });

  test('percentage limits: a scale-out 5 → 10 places every new pod by the new limits (2 / 2 / 6), none unplaced', async () => {
    const ns = await env.namespace('cs-scale-out');
    await spread(ns, threeZones('20%', '20%', '60%'));
    await env.cluster.client.create(CLONESET_REF, cloneSet(ns, 'web', 5), { namespace: ns });
    await env.cluster.settle();
    assert.deepEqual(countBySubset(await active(ns)), { a: 1, b: 1, c: 3 });
    await scale(ns, 10);
    const ten = await active(ns);
    assert.equal(ten.length, 10);
    assert.deepEqual(countBySubset(ten), { a: 2, b: 2, c: 6 }, 'every subset within its limit at 10');
    const unplaced = (await env.cluster.client.list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'NoSubsetAvailable');
    assert.equal(unplaced.length, 0, 'no new pod was admitted without a subset');
    assert.deepEqual(await statuses(ns), [['a', 2, 0], ['b', 2, 0], ['c', 6, 0]]);
    // The scaled-out pods carry the costs a fresh 10 would (D17): back to 5 keeps 1:1:3.
    await scale(ns, 5);
    assert.deepEqual(countBySubset(await active(ns)), { a: 1, b: 1, c: 3 });
  });

  test('a partitioned recreate rollout: the new revision is spread with its own quota, the old one gets the reversed costs', async () => {
    const ns = await env.namespace('cs-rollout');
    await spread(ns, threeZones(2, 2));
    // One pod at a time: distinct ready times make the pods the rollout recreates (the newest) predictable.
    await env.cluster.client.create(CLONESET_REF, cloneSet(ns, 'web', 6, { scaleStrategy: { maxUnavailable: 1 } }), { namespace: ns });
    await env.cluster.settle();
    const before = await active(ns);
    assert.deepEqual(countBySubset(before), { a: 2, b: 2, c: 2 });
    const oldHash = before[0]?.metadata.labels?.['pod-template-hash'] ?? '';
    assert.notEqual(oldHash, '');
    assert.ok(before.every((p) => p.metadata.labels?.['pod-template-hash'] === oldHash));

    await env.cluster.client.patch(CLONESET_REF, 'web', { type: 'merge', body: { spec: { updateStrategy: { partition: 3 }, template: { spec: { containers: [{ name: 'main', image: 'nginx:1.28' }] } } } } }, { namespace: ns });
    await env.cluster.settle();
    const mid = await active(ns);
    const cs = await env.cluster.client.get(CLONESET_REF, 'web', { namespace: ns });
    const newHash = String((cs['status'] as Record<string, unknown>)['updateRevision']).split('-').pop() ?? '';
    const isNew = (p: Pod) => p.metadata.labels?.['pod-template-hash'] === newHash;
    assert.equal(mid.length, 6);
    assert.deepEqual(countBySubset(mid.filter(isNew)), { a: 2, b: 1 }, 'the three new pods are spread like a fresh CloneSet');
    assert.deepEqual(countBySubset(mid.filter((p) => !isNew(p))), { a: 2, b: 1 }, 'the newest old pods (b, c, c) were recreated');
    assert.deepEqual(costsBySubset(mid, isNew), { a: ['300'], b: ['200'] });
    assert.deepEqual(costsBySubset(mid, (p) => !isNew(p)), { a: ['100'], b: ['200'] }, 'old revision: reversed order, a goes first');
    const ws = await readSpread(env.cluster.client, ns, 'spread');
    assert.deepEqual(Object.keys(ws.status?.versionedSubsetStatuses ?? {}).sort(), [newHash, oldHash].sort(), 'D12: statuses per revision');

    await env.cluster.client.patch(CLONESET_REF, 'web', { type: 'merge', body: { spec: { updateStrategy: { partition: 0 } } } }, { namespace: ns });
    await env.cluster.settle();
    const done = await active(ns);
    assert.ok(done.every(isNew), 'rolled out');
    assert.deepEqual(countBySubset(done), { a: 2, b: 2, c: 2 });
    assert.deepEqual(costsBySubset(done), { a: ['300'], b: ['200'], c: ['100'] });
    assert.deepEqual(Object.keys((await readSpread(env.cluster.client, ns, 'spread')).status?.versionedSubsetStatuses ?? {}), [newHash]);
  });
});
