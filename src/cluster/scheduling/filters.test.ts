import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { filterNode, findFeasibleNodes, fitErrorMessage, preemptionMessage, unschedulableMessage, type FilterStatus } from './filters.ts';
import { podRecord } from './node-info.ts';
import { cacheWith, node, pod, type NodeFixture, type PodFixture } from '../testing/scheduling-fixtures.ts';

function verdict(n: NodeFixture, p: PodFixture, onNode: PodFixture[] = []): FilterStatus | undefined {
  const thePod = pod(p);
  const { info } = cacheWith([node(n)], onNode.map((x, i) => pod({ name: `other-${i}`, nodeName: n.name, ...x })));
  return filterNode(thePod, podRecord(thePod, '', true), info(n.name));
}

const UNSCHEDULABLE_TOLERATION = { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' };

describe('filter plugins (one case per rule)', () => {
  const cases: { name: string; node: NodeFixture; pod: PodFixture; onNode?: PodFixture[]; want: Partial<FilterStatus> | undefined }[] = [
    { name: 'a plain pod fits an empty node', node: { name: 'n' }, pod: {}, want: undefined },
    // NodeUnschedulable
    { name: 'a cordoned node is unschedulable', node: { name: 'n', unschedulable: true }, pod: {}, want: { plugin: 'NodeUnschedulable', code: 'UnschedulableAndUnresolvable', reasons: ['node(s) were unschedulable'] } },
    { name: 'tolerating the unschedulable taint tolerates spec.unschedulable', node: { name: 'n', unschedulable: true }, pod: { tolerations: [UNSCHEDULABLE_TOLERATION] }, want: undefined },
    // TaintToleration
    {
      name: 'an untolerated NoSchedule taint',
      node: { name: 'n', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
      pod: {},
      want: { plugin: 'TaintToleration', code: 'UnschedulableAndUnresolvable', reasons: ['node(s) had untolerated taint {dedicated: gpu}'] },
    },
    { name: 'an untolerated NoExecute taint', node: { name: 'n', taints: [{ key: 'maintenance', effect: 'NoExecute' }] }, pod: {}, want: { reasons: ['node(s) had untolerated taint {maintenance: }'] } },
    { name: 'a PreferNoSchedule taint does not filter', node: { name: 'n', taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }, pod: {}, want: undefined },
    {
      name: 'a tolerated taint',
      node: { name: 'n', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
      pod: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] },
      want: undefined,
    },
    // NodeAffinity
    { name: 'nodeSelector mismatch', node: { name: 'n', labels: { zone: 'a' } }, pod: { nodeSelector: { zone: 'b' } }, want: { plugin: 'NodeAffinity', reasons: ["node(s) didn't match Pod's node affinity/selector"] } },
    { name: 'nodeSelector match', node: { name: 'n', labels: { zone: 'a' } }, pod: { nodeSelector: { zone: 'a' } }, want: undefined },
    {
      name: 'required node affinity mismatch',
      node: { name: 'n', labels: { zone: 'a' } },
      pod: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b', 'c'] }] }] } } } },
      want: { plugin: 'NodeAffinity' },
    },
    {
      name: 'required node affinity by matchFields metadata.name',
      node: { name: 'n' },
      pod: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n'] }] }] } } } },
      want: { plugin: 'NodeAffinity' },
    },
    // NodePorts
    { name: 'a host port already taken', node: { name: 'n' }, pod: { hostPort: 8080 }, onNode: [{ hostPort: 8080 }], want: { plugin: 'NodePorts', code: 'Unschedulable', reasons: ["node(s) didn't have free ports for the requested pod ports"] } },
    { name: 'a different host port', node: { name: 'n' }, pod: { hostPort: 8080 }, onNode: [{ hostPort: 9090 }], want: undefined },
    // NodeResourcesFit
    { name: 'not enough cpu left', node: { name: 'n', cpu: '2' }, pod: { cpu: '1500m' }, onNode: [{ cpu: '1' }], want: { plugin: 'NodeResourcesFit', code: 'Unschedulable', reasons: ['Insufficient cpu'] } },
    { name: 'exactly the cpu left fits', node: { name: 'n', cpu: '2' }, pod: { cpu: '1' }, onNode: [{ cpu: '1' }], want: undefined },
    { name: 'cpu and memory both short: both reasons', node: { name: 'n', cpu: '1', memory: '1Gi' }, pod: { cpu: '600m', memory: '600Mi' }, onNode: [{ cpu: '500m', memory: '512Mi' }], want: { reasons: ['Insufficient cpu', 'Insufficient memory'] } },
    { name: 'more than the whole node cannot be helped by preemption', node: { name: 'n', cpu: '2' }, pod: { cpu: '3' }, want: { code: 'UnschedulableAndUnresolvable', reasons: ['Insufficient cpu'] } },
    { name: 'the pods capacity', node: { name: 'n', pods: '1' }, pod: {}, onNode: [{}], want: { reasons: ['Too many pods'] } },
    { name: 'an extended resource the node lacks', node: { name: 'n' }, pod: { requests: { 'nvidia.com/gpu': '1' } }, want: { code: 'UnschedulableAndUnresolvable', reasons: ['Insufficient nvidia.com/gpu'] } },
    { name: 'an extended resource the node has', node: { name: 'n', extra: { 'nvidia.com/gpu': '2' } }, pod: { requests: { 'nvidia.com/gpu': '1' } }, onNode: [{ requests: { 'nvidia.com/gpu': '1' } }], want: undefined },
    {
      name: 'init containers count at their peak, overhead on top',
      node: { name: 'n', cpu: '2' },
      pod: { cpu: '500m', extraSpec: { initContainers: [{ name: 'init', image: 'busybox', resources: { requests: { cpu: '1800m' } } }], overhead: { cpu: '250m' } } },
      want: { reasons: ['Insufficient cpu'] },
    },
    // Order: the first failing plugin decides.
    { name: 'unschedulable wins over a taint', node: { name: 'n', unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }] }, pod: {}, want: { plugin: 'NodeUnschedulable' } },
    { name: 'a taint wins over affinity', node: { name: 'n', taints: [{ key: 'k', effect: 'NoSchedule' }] }, pod: { nodeSelector: { x: 'y' } }, want: { plugin: 'TaintToleration' } },
    { name: 'affinity wins over resources', node: { name: 'n', cpu: '1' }, pod: { nodeSelector: { x: 'y' }, cpu: '2' }, want: { plugin: 'NodeAffinity' } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = verdict(c.node, c.pod, c.onNode);
      if (c.want === undefined) assert.equal(got, undefined);
      else {
        assert.ok(got !== undefined, 'expected a rejection');
        for (const [k, v] of Object.entries(c.want)) assert.deepEqual(got[k as keyof FilterStatus], v, k);
      }
    });
  }
});

describe('NodeAffinity PreFilter on metadata.name', () => {
  const pinned = (terms: unknown[]) => pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } });
  const nodes = ['a', 'b', 'c'].map((name) => node({ name }));

  test('only the pinned nodes are candidates; the others did not satisfy the plugin', () => {
    const p = pinned([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['b'] }] }]);
    const { infos } = cacheWith(nodes);
    const { feasible, diagnosis } = findFeasibleNodes(p, podRecord(p, '', true), infos);
    assert.deepEqual(feasible.map((n) => n.name), ['b']);
    assert.equal(diagnosis.statuses.get('a')?.reasons[0], "node(s) didn't satisfy plugin(s) [NodeAffinity]");
  });

  test('terms pinning to different nodes are ORed', () => {
    const p = pinned([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['c'] }] }]);
    const { infos } = cacheWith(nodes);
    assert.deepEqual(findFeasibleNodes(p, podRecord(p, '', true), infos).feasible.map((n) => n.name), ['a', 'c']);
  });

  test('requirements of one term that exclude each other reject the pod before any node', () => {
    const p = pinned([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }, { key: 'metadata.name', operator: 'In', values: ['b'] }] }]);
    const { infos } = cacheWith(nodes);
    const { diagnosis } = findFeasibleNodes(p, podRecord(p, '', true), infos);
    assert.equal(unschedulableMessage(p, diagnosis), '0/3 nodes are available: pod affinity terms conflict. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.');
  });
});

describe('the unschedulable message', () => {
  test("upstream's wording and order: reasons counted per node, sorted, then the preemption summary", () => {
    const nodes = [node({ name: 'a', labels: { zone: 'x' } }), node({ name: 'b', labels: { zone: 'y' }, taints: [{ key: 'key', value: 'value', effect: 'NoSchedule' }] }), node({ name: 'c', labels: { zone: 'y' }, taints: [{ key: 'key', value: 'value', effect: 'NoSchedule' }] })];
    const p = pod({ nodeSelector: { zone: 'y' } });
    const { infos } = cacheWith(nodes);
    const { feasible, diagnosis } = findFeasibleNodes(p, podRecord(p, '', true), infos);
    assert.equal(feasible.length, 0);
    assert.equal(
      unschedulableMessage(p, diagnosis),
      "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated taint {key: value}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    );
  });

  test('nodes short of resources are where preemption would look for victims', () => {
    const nodes = [node({ name: 'a', cpu: '1' }), node({ name: 'b', cpu: '1' }), node({ name: 'c', cpu: '1', taints: [{ key: 'k', effect: 'NoSchedule' }] })];
    const p = pod({ cpu: '800m' });
    const bound = [pod({ name: 'x', nodeName: 'a', cpu: '500m' }), pod({ name: 'y', nodeName: 'b', cpu: '500m' })];
    const { infos } = cacheWith(nodes, bound);
    const { diagnosis } = findFeasibleNodes(p, podRecord(p, '', true), infos);
    assert.equal(
      unschedulableMessage(p, diagnosis),
      '0/3 nodes are available: 1 node(s) had untolerated taint {k: }, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.',
    );
  });

  test('counts sort as strings, as Go sorts the histogram ("10 …" before "2 …")', () => {
    const nodes = [...Array.from({ length: 10 }, (_, i) => node({ name: `t${i}`, unschedulable: true })), node({ name: 'z1', labels: { a: 'b' } }), node({ name: 'z2', labels: { a: 'b' } })];
    const p = pod({ nodeSelector: { a: 'c' } });
    const { infos } = cacheWith(nodes);
    const { diagnosis } = findFeasibleNodes(p, podRecord(p, '', true), infos);
    assert.match(fitErrorMessage(diagnosis, ''), /^0\/12 nodes are available: 10 node\(s\) were unschedulable, 2 node\(s\) didn't match Pod's node affinity\/selector\.$/);
  });

  test('a pod that may not preempt says so', () => {
    const p = pod({ cpu: '8', preemptionPolicy: 'Never' });
    const { infos } = cacheWith([node({ name: 'a', cpu: '4' })]);
    const { diagnosis } = findFeasibleNodes(p, podRecord(p, '', true), infos);
    assert.equal(preemptionMessage(p, diagnosis), 'preemption: not eligible due to preemptionPolicy=Never.');
  });

  test('no nodes at all', () => {
    const p = pod();
    const { diagnosis } = findFeasibleNodes(p, podRecord(p, '', true), []);
    assert.equal(unschedulableMessage(p, diagnosis), 'no nodes available to schedule pods');
  });
});

describe('invariants', () => {
  test('a node that passes NodeResourcesFit has room for the pod in cpu, memory and pod count', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 8000 }),
        fc.integer({ min: 0, max: 64 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.record({ cpu: fc.integer({ min: 0, max: 3000 }), mem: fc.integer({ min: 0, max: 16 }) }), { maxLength: 6 }),
        fc.record({ cpu: fc.integer({ min: 0, max: 4000 }), mem: fc.integer({ min: 0, max: 32 }) }),
        (cpu, memGi, podsCap, others, want) => {
          const n = node({ name: 'n', cpu: `${cpu}m`, memory: `${memGi}Gi`, pods: String(podsCap) });
          const bound = others.map((o, i) => pod({ name: `o${i}`, nodeName: 'n', cpu: `${o.cpu}m`, memory: `${o.mem}Gi` }));
          const p = pod({ cpu: `${want.cpu}m`, memory: `${want.mem}Gi` });
          const { info } = cacheWith([n], bound);
          const fits = filterNode(p, podRecord(p, '', true), info('n')) === undefined;
          const usedCpu = others.reduce((s, o) => s + o.cpu, 0);
          const usedMem = others.reduce((s, o) => s + o.mem, 0);
          const room = (want.cpu === 0 || usedCpu + want.cpu <= cpu) && (want.mem === 0 || usedMem + want.mem <= memGi) && others.length + 1 <= podsCap;
          assert.equal(fits, room);
        },
      ),
    );
  });
});
