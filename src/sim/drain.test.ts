/**
 * The drain step: parsing, kubectl's pod filters, who refused an eviction,
 * and the drain itself on the embedded cluster against a plain
 * PodDisruptionBudget (enforced by the API server), on a virtual clock: one
 * pod at a time with maxUnavailable 1, retries every 5 s, the timeout.
 * DomainDisruptionBudgets are exercised through whole scenarios
 * (disruption-budget-stories.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BUILTIN } from '../client/resources.ts';
import type { VirtualClock } from '../clock/virtual-clock.ts';
import type { EmbeddedCluster } from '../cluster/index.ts';
import { podManifest, testCluster } from '../testing/cluster-bed.ts';
import { parseTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import type { SimBackend } from './backend.ts';
import { DEFAULT_DRAIN_TIMEOUT_MS, drainPlan, MIRROR_POD_ANNOTATION, parseDrain, runDrain } from './drain.ts';
import { refusingBudget } from './eviction-refusal.ts';
import { Problems } from './field-reader.ts';

describe('parseDrain', () => {
  const cases: [string, unknown, unknown, string[]][] = [
    ['a node name', 'n1', { action: 'drain', node: 'n1', timeoutMs: DEFAULT_DRAIN_TIMEOUT_MS }, []],
    ['node and timeout', { node: 'n1', timeout: '90s' }, { action: 'drain', node: 'n1', timeoutMs: 90_000 }, []],
    ['default timeout is 5m', { node: 'n1' }, { action: 'drain', node: 'n1', timeoutMs: 300_000 }, []],
    ['a bare number is no duration', { node: 'n1', timeout: 30 }, { action: 'drain', node: 'n1', timeoutMs: 300_000 }, ['d.timeout']],
    ['zero timeout', { node: 'n1', timeout: '0s' }, { action: 'drain', node: 'n1', timeoutMs: 300_000 }, ['d.timeout']],
    ['unknown key', { node: 'n1', force: true }, { action: 'drain', node: 'n1', timeoutMs: 300_000 }, ['d.force']],
    ['no node', { timeout: '1m' }, undefined, ['d.node']],
    ['a list', ['n1'], undefined, ['d']],
  ];
  for (const [name, value, want, paths] of cases) {
    test(name, () => {
      const problems = new Problems();
      assert.deepEqual(parseDrain(value, 'd', problems), want);
      assert.deepEqual(problems.list.map((p) => p.path), paths);
    });
  }
});

describe('drainPlan (kubectl drain --ignore-daemonsets --force)', () => {
  const pod = (name: string, node: string, extra: Partial<{ owner: string; annotations: Record<string, string>; namespace: string }> = {}): Pod =>
    ({
      metadata: {
        name,
        namespace: extra.namespace ?? 'default',
        ...(extra.annotations === undefined ? {} : { annotations: extra.annotations }),
        ...(extra.owner === undefined ? {} : { ownerReferences: [{ apiVersion: 'apps/v1', kind: extra.owner, name: 'o', uid: 'u', controller: true }] }),
      },
      spec: { nodeName: node, containers: [] },
    }) as unknown as Pod;
  test('evicts ReplicaSet, StatefulSet and bare pods of the node, in namespace/name order', () => {
    const plan = drainPlan([pod('c', 'n1', { owner: 'ReplicaSet' }), pod('a', 'n1'), pod('b', 'n1', { owner: 'StatefulSet', namespace: 'x' }), pod('z', 'n2')], 'n1');
    assert.deepEqual(plan.evict.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`), ['default/a', 'default/c', 'x/b']);
    assert.deepEqual(plan.skipped, []);
  });
  test('leaves DaemonSet pods and mirror pods alone', () => {
    const plan = drainPlan([pod('ds', 'n1', { owner: 'DaemonSet' }), pod('static', 'n1', { annotations: { [MIRROR_POD_ANNOTATION]: 'h' } }), pod('web', 'n1', { owner: 'ReplicaSet' })], 'n1');
    assert.deepEqual(plan.evict.map((p) => p.metadata?.name), ['web']);
    assert.deepEqual(plan.skipped.map((s) => [s.pod.metadata?.name, s.reason]), [['ds', 'DaemonSet-managed'], ['static', 'mirror pod']]);
  });
  test('a pod without a node or with junk metadata is not the node\'s and does not crash', () => {
    const plan = drainPlan([{ metadata: null, spec: null } as unknown as Pod, { spec: { nodeName: 'n1' }, metadata: { annotations: 'x' } } as unknown as Pod], 'n1');
    assert.equal(plan.evict.length, 1);
  });
});

describe('refusingBudget', () => {
  test('a PodDisruptionBudget is named in the DisruptionBudget cause', () => {
    const status = {
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web-pdb needs 2 healthy pods and has 2 currently' }] },
    };
    assert.deepEqual(refusingBudget(status), { kind: 'PodDisruptionBudget', name: 'web-pdb' });
  });
  test('a DomainDisruptionBudget and its domain are named in the webhook message', () => {
    const denied = 'admission webhook "vpod.workloadspread.io" denied the request: Cannot evict pod as it would violate the DomainDisruptionBudget';
    assert.deepEqual(refusingBudget({ message: `${denied} default/app-ddb in domain "zone-b": it needs 2 healthy pods and has 2` }), { kind: 'DomainDisruptionBudget', name: 'app-ddb', domain: 'zone-b' });
    assert.deepEqual(refusingBudget({ message: `${denied} team/x in domain <none> (pods whose domain cannot be named): …` }), { kind: 'DomainDisruptionBudget', name: 'x', domain: '<none>' });
    assert.deepEqual(refusingBudget({ message: `${denied} web` }), { kind: 'DomainDisruptionBudget', name: 'web' });
  });
  test('anything else names no budget', () => {
    assert.equal(refusingBudget({ message: 'the server is busy' }), undefined);
    assert.equal(refusingBudget({}), undefined);
  });
});

/** The parts of SimBackend a drain uses, over a bare embedded cluster (no manager: plain PDBs only). */
function clusterBackend(cluster: EmbeddedCluster): SimBackend {
  const clock = cluster.clock as VirtualClock;
  return {
    mode: 'embedded',
    client: cluster.client,
    clock,
    addNodes: (specs) => cluster.addNodes(specs),
    removeNode: (n) => cluster.removeNode(n),
    cordon: (n) => cluster.cordon(n),
    uncordon: (n) => cluster.uncordon(n),
    taint: (n, t) => cluster.taint(n, t),
    untaint: (n, k, e) => cluster.untaint(n, k, e),
    quiesce: () => clock.quiesce(),
    perform: (work) => work(),
    deliver: () => clock.quiesce(),
    settle: (ms) => clock.settle(ms),
    advance: (ms) => clock.advance(ms),
    stop: () => cluster.stop(),
  };
}

describe('runDrain on the embedded cluster with a PodDisruptionBudget', { timeout: 120_000 }, () => {
  let cluster: EmbeddedCluster;
  let backend: SimBackend;
  let seq = 0;
  before(async () => {
    cluster = await testCluster({ nodes: [{ name: 'n1', labels: { pool: 'p' } }], kubeletDelayMs: 2_000 });
    backend = clusterBackend(cluster);
  });
  after(() => cluster.stop());

  /** A namespace with a 3-replica Deployment on n1 and a PDB over it. */
  async function setUp(pdbSpec: Record<string, unknown>): Promise<string> {
    const ns = `drain-${++seq}`;
    const client = cluster.client;
    await client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const template = { metadata: { labels: { app: 'web' } }, spec: { nodeSelector: { pool: 'p' }, containers: [{ name: 'app', image: 'nginx' }] } };
    await client.create(BUILTIN.deployments, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template } } as KubeObject, { namespace: ns });
    await client.create(BUILTIN.poddisruptionbudgets, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web-pdb', namespace: ns }, spec: { selector: { matchLabels: { app: 'web' } }, ...pdbSpec } } as KubeObject, { namespace: ns });
    await cluster.settle(60_000);
    return ns;
  }

  const podsIn = async (ns: string): Promise<Pod[]> => (await cluster.client.list<Pod>(BUILTIN.pods, { namespace: ns })).items;

  test('with a node to move to, pods go one at a time, each after its replacement is Ready', async () => {
    const ns = await setUp({ maxUnavailable: 1 });
    assert.deepEqual((await podsIn(ns)).map((p) => p.spec?.nodeName), ['n1', 'n1', 'n1']);
    const added = await cluster.addNodes([{ name: `spare-${seq}`, labels: { pool: 'p' } }]);
    assert.ok(added.ok);
    const outcome = await runDrain(backend, { action: 'drain', node: 'n1', timeoutMs: 5 * 60_000 });
    try {
      assert.equal(outcome.ok, true, outcome.error);
      const mine = outcome.evictions.filter((e) => e.namespace === ns);
      assert.deepEqual(mine.map((e) => e.result), ['evicted', 'evicted', 'evicted']);
      // The budget refused the second and third pod until the previous replacement was Ready.
      assert.deepEqual(mine.map((e) => e.refusedBy), [[], ['PodDisruptionBudget/web-pdb'], ['PodDisruptionBudget/web-pdb']]);
      const times = mine.map((e) => parseTime(e.evictedAt) ?? NaN).sort((a, b) => a - b);
      for (let i = 1; i < times.length; i++) assert.ok((times[i] ?? 0) - (times[i - 1] ?? 0) >= 5_000, `evictions ${times.join(', ')} are at least one retry apart`);
      for (const e of mine) assert.ok(e.goneAt !== undefined && (parseTime(e.goneAt) ?? 0) >= (parseTime(e.evictedAt) ?? 0));
      assert.deepEqual((await podsIn(ns)).filter((p) => p.metadata?.deletionTimestamp === undefined).map((p) => p.spec?.nodeName), [`spare-${seq}`, `spare-${seq}`, `spare-${seq}`]);
      assert.ok(outcome.notes.includes('node n1 drained'));
    } finally {
      await cluster.uncordon('n1');
      await cluster.client.delete(BUILTIN.namespaces, ns);
      await cluster.removeNode(`spare-${seq}`);
      await cluster.settle(60_000);
    }
  });

  test('without anywhere to go, the second pod is refused every 5 s until the timeout', async () => {
    const ns = await setUp({ maxUnavailable: 1 });
    const start = cluster.clock.now();
    const outcome = await runDrain(backend, { action: 'drain', node: 'n1', timeoutMs: 60_000 });
    try {
      assert.equal(outcome.ok, false);
      assert.match(outcome.error ?? '', /^drain did not complete within 1m: /);
      assert.match(outcome.error ?? '', /needs 2 healthy pods/);
      const mine = outcome.evictions.filter((e) => e.namespace === ns);
      assert.deepEqual(mine.map((e) => e.result).sort(), ['evicted', 'refused', 'refused']);
      for (const e of mine.filter((r) => r.result === 'refused')) {
        // Attempts at 0 s, 5 s, … 55 s: the one at 60 s would be past the timeout.
        assert.equal(e.refusals, 12);
        assert.deepEqual(e.refusedBy, ['PodDisruptionBudget/web-pdb']);
        // Times have second precision, as Kubernetes writes them.
        assert.equal(e.firstRefusedAt !== undefined && parseTime(e.firstRefusedAt), Math.floor(start / 1000) * 1000);
      }
      assert.ok(cluster.clock.now() - start <= 61_000, 'the step ends at the timeout');
      assert.equal((await podsIn(ns)).filter((p) => p.metadata?.deletionTimestamp === undefined && p.spec?.nodeName === 'n1').length, 2);
    } finally {
      await cluster.uncordon('n1');
      await cluster.client.delete(BUILTIN.namespaces, ns);
      await cluster.settle(60_000);
    }
  });

  test('a missing node fails the step with the server\'s message; a pod gone meanwhile is no failure', async () => {
    const outcome = await runDrain(backend, { action: 'drain', node: 'nope', timeoutMs: 60_000 });
    assert.equal(outcome.ok, false);
    assert.match(outcome.error ?? '', /nope/);
    assert.deepEqual(outcome.evictions, []);
    await cluster.client.create(BUILTIN.pods, podManifest({ name: 'bare', nodeName: 'n1' }));
    await cluster.settle(10_000);
    const drained = await runDrain(backend, { action: 'drain', node: 'n1', timeoutMs: 60_000 });
    await cluster.uncordon('n1');
    assert.equal(drained.ok, true, drained.error);
    assert.deepEqual(drained.evictions.map((e) => [e.pod, e.result]), [['bare', 'evicted']]);
  });
});
