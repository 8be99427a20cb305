/**
 * The embedded cluster harness: what its nodes look like, their heartbeats,
 * the node operations (cordon, taint, remove), the component seam, errors as
 * data, and a `stop()` that leaves nothing running.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN } from '../client/resources.ts';
import { eventually } from '../testing/eventually.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Node } from '../k8s/types.ts';
import { ClusterConfigError, type ClusterOptions, type EmbeddedCluster } from './cluster.ts';
import { NODE_LEASE_NAMESPACE } from './kubelet/node-agent.ts';
import { condition, createPods, getPod, placement, testCluster } from '../testing/cluster-bed.ts';
import { nodeLifecycleController } from './controllers/node-lifecycle.ts';
import { schedulerController } from './controllers/scheduler.ts';
import type { ControllerFactory } from './controllers/component.ts';

async function withCluster(options: ClusterOptions, fn: (c: EmbeddedCluster) => Promise<void>): Promise<void> {
  const c = await testCluster({ controllers: [schedulerController, nodeLifecycleController], ...options });
  try {
    await fn(c);
  } finally {
    await c.stop();
  }
}

const getNode = (c: EmbeddedCluster, name: string) => c.client.get<Node>(BUILTIN.nodes, name);
const heartbeat = (n: Node) => n.status?.conditions?.find((x) => x.type === 'Ready')?.lastHeartbeatTime;

describe('nodes', () => {
  test('look like the nodes of a real 1.32 cluster', async () => {
    await withCluster({ nodes: [{ name: 'worker-1', labels: { 'topology.kubernetes.io/zone': 'z1', 'kubernetes.io/arch': 'arm64' }, capacity: { cpu: '8', memory: '32Gi' } }] }, async (c) => {
      const n = await getNode(c, 'worker-1');
      assert.deepEqual(n.metadata.labels, {
        'beta.kubernetes.io/arch': 'arm64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'arm64',
        'kubernetes.io/hostname': 'worker-1',
        'kubernetes.io/os': 'linux',
        'topology.kubernetes.io/zone': 'z1',
      });
      assert.deepEqual(n.status?.capacity, { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' });
      assert.deepEqual(n.status?.allocatable, n.status?.capacity);
      assert.deepEqual(
        n.status?.conditions?.map((x) => [x.type, x.status, x.reason]),
        [
          ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
          ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
          ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
          ['Ready', 'True', 'KubeletReady'],
        ],
      );
      const info = n.status?.['nodeInfo'] as Record<string, string>;
      assert.equal(info['kubeletVersion'], 'v1.32.4');
      assert.equal(info['architecture'], 'arm64');
      assert.deepEqual(n.status?.['addresses'], [{ type: 'InternalIP', address: '172.18.0.2' }, { type: 'Hostname', address: 'worker-1' }]);
      assert.equal(n.spec?.['podCIDR'], '10.244.0.0/24');
    });
  });

  test('groups expand to numbered nodes, and each node has a Lease in kube-node-lease', async () => {
    await withCluster({ nodes: [{ namePrefix: 'pool', count: 3 }, 'single'] }, async (c) => {
      assert.deepEqual(c.nodeNames(), ['pool-1', 'pool-2', 'pool-3', 'single']);
      const lease = await c.client.get<KubeObject>(BUILTIN.leases, 'pool-2', { namespace: NODE_LEASE_NAMESPACE });
      const spec = lease['spec'] as Record<string, unknown>;
      assert.equal(spec['holderIdentity'], 'pool-2');
      assert.equal(spec['leaseDurationSeconds'], 40);
      assert.equal(lease.metadata?.ownerReferences?.[0]?.kind, 'Node');
    });
  });

  test('heartbeats renew the Lease every 10 s and the Ready condition every 40 s, without holding settle()', async () => {
    await withCluster({ nodes: ['n'] }, async (c) => {
      const t0 = c.clock.now();
      const idle = await c.settle();
      assert.deepEqual(idle, { quiescent: true, elapsedMs: 0 });
      await c.advance(10_000);
      const lease = await c.client.get<KubeObject>(BUILTIN.leases, 'n', { namespace: NODE_LEASE_NAMESPACE });
      assert.equal(String((lease['spec'] as Record<string, unknown>)['renewTime']).slice(0, 19), formatTime(t0 + 10_000).slice(0, 19));
      assert.equal(heartbeat(await getNode(c, 'n')), formatTime(t0));
      await c.advance(30_000);
      assert.equal(heartbeat(await getNode(c, 'n')), formatTime(t0 + 40_000));
      assert.equal((await c.settle()).elapsedMs, 0);
    });
  });
});

describe('node operations', () => {
  test('cordon: no new pods, and the unschedulable taint follows; uncordon undoes both', async () => {
    await withCluster({ nodes: ['a', 'b'] }, async (c) => {
      assert.deepEqual(await c.cordon('a'), { ok: true });
      await c.settle();
      let a = await getNode(c, 'a');
      assert.equal(a.spec?.unschedulable, true);
      assert.deepEqual(a.spec?.taints, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }]);
      await createPods(c, [{ name: 'p1' }, { name: 'p2' }]);
      await c.settle();
      assert.deepEqual(await placement(c), { b: ['p1', 'p2'] });
      assert.deepEqual(await c.uncordon('a'), { ok: true });
      await c.settle();
      a = await getNode(c, 'a');
      assert.equal(a.spec?.unschedulable, undefined);
      assert.equal(a.spec?.taints, undefined);
    });
  });

  test('taint and untaint', async () => {
    await withCluster({ nodes: ['a'] }, async (c) => {
      assert.deepEqual(await c.taint('a', { key: 'dedicated', value: 'db', effect: 'NoSchedule' }), { ok: true });
      assert.deepEqual((await getNode(c, 'a')).spec?.taints, [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }]);
      await createPods(c, [{ name: 'p' }]);
      await c.settle();
      assert.equal(condition(await getPod(c, 'p'), 'PodScheduled')?.reason, 'Unschedulable');
      assert.deepEqual(await c.untaint('a', 'dedicated'), { ok: true });
      await c.settle();
      assert.equal((await getPod(c, 'p'))?.spec.nodeName, 'a');
    });
  });

  test('a NoExecute taint evicts the pods that do not tolerate it, and after tolerationSeconds those that do', async () => {
    await withCluster({ nodes: ['a'] }, async (c) => {
      const tolerate = (seconds?: number) => ({ tolerations: [{ key: 'maintenance', operator: 'Exists', effect: 'NoExecute', ...(seconds === undefined ? {} : { tolerationSeconds: seconds }) }] });
      await createPods(c, [{ name: 'plain' }, { name: 'forever', spec: tolerate() }, { name: 'for-a-minute', spec: tolerate(60) }]);
      await c.settle();
      const t = c.clock.now();
      assert.deepEqual(await c.taint('a', { key: 'maintenance', effect: 'NoExecute' }), { ok: true });
      await c.advance(59_000);
      assert.equal(await getPod(c, 'plain'), undefined);
      assert.notEqual(await getPod(c, 'for-a-minute'), undefined);
      await c.settle();
      assert.equal(await getPod(c, 'for-a-minute'), undefined);
      assert.ok(c.clock.now() >= t + 60_000);
      assert.equal((await getPod(c, 'forever'))?.status?.phase, 'Running');
    });
  });

  test("removeNode: the node's pods are collected 40 s later, as pod GC does", async () => {
    await withCluster({ nodes: ['doomed', 'other'] }, async (c) => {
      await createPods(c, [{ name: 'p', nodeName: 'doomed' }]);
      await c.settle();
      assert.equal((await getPod(c, 'p'))?.status?.phase, 'Running');
      const t = c.clock.now();
      assert.deepEqual(await c.removeNode('doomed'), { ok: true });
      assert.deepEqual(c.nodeNames(), ['other']);
      await c.advance(39_000);
      assert.equal((await getPod(c, 'p'))?.status?.phase, 'Running');
      await c.settle();
      assert.equal(await getPod(c, 'p'), undefined);
      assert.equal(c.clock.now(), t + 40_000);
      assert.deepEqual(await c.removeNode('doomed'), { ok: false, error: 'node doomed not found' });
    });
  });
});

describe('errors are data', () => {
  test('bad node specs and unknown nodes', async () => {
    await withCluster({ nodes: ['a'] }, async (c) => {
      assert.deepEqual(await c.addNodes(['a']), { ok: false, error: 'node a is already registered' });
      await c.client.create(BUILTIN.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'manual' } });
      assert.deepEqual(await c.addNodes(['manual']), { ok: false, error: 'cannot register node manual: POST /api/v1/nodes: 409 AlreadyExists: nodes "manual" already exists' });
      assert.deepEqual(await c.addNodes(['Bad_Name']), { ok: false, error: 'invalid node name "Bad_Name": must be a lowercase RFC 1123 subdomain' });
      assert.deepEqual(await c.addNodes([{ name: 'x', capacity: { cpu: 'lots' } }]), { ok: false, error: 'node x: invalid capacity cpu=lots' });
      assert.deepEqual(await c.cordon('missing'), { ok: false, error: 'node missing not found' });
      assert.deepEqual(await c.taint('a', { key: 'k', effect: 'Sometimes' }), { ok: false, error: 'invalid taint effect "Sometimes"' });
    });
  });

  test('invalid options reject startCluster with ClusterConfigError', async () => {
    await assert.rejects(testCluster({ nodes: [{ namePrefix: 'n', count: -1 }] }), ClusterConfigError);
    await assert.rejects(testCluster({ nodes: ['a', 'a'] }), /duplicate node name a/);
    await assert.rejects(testCluster({ kubeletDelayMs: -5 }), /kubeletDelayMs must be a non-negative number/);
  });
});

describe('components and stop()', () => {
  test('extra components get their own client, start after the nodes and stop first', async () => {
    const log: string[] = [];
    const probe: ControllerFactory = {
      name: 'probe',
      create: (ctx) => ({
        name: 'probe',
        start: async () => {
          const nodes = await ctx.client.list(BUILTIN.nodes);
          log.push(`start ${ctx.client.userAgent} nodes=${nodes.items.length}`);
        },
        stop: async () => {
          log.push('stop');
        },
      }),
    };
    const c = await testCluster({ nodes: ['a', 'b'], controllers: [schedulerController], components: [probe] });
    await c.stop();
    assert.deepEqual(log, ['start workloadspread-embedded/probe nodes=2', 'stop']);
  });

  test('stop() leaves no timer, watch or socket behind', async () => {
    const sockets = () => process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).length;
    const before = sockets();
    const c = await testCluster({ nodes: [{ namePrefix: 'n', count: 3 }] });
    await createPods(c, [{ name: 'p' }]);
    await c.settle();
    assert.ok(sockets() > before);
    await c.stop();
    assert.deepEqual(c.virtualClock?.pendingTimers(), []);
    assert.equal(c.virtualClock?.busy, 0);
    await eventually(() => assert.ok(sockets() <= before, `${sockets()} sockets open, ${before} before`), { timeoutMs: 20_000 });
  });
});
