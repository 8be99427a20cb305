import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import type { Node, Pod, Taint } from '../k8s/types.ts';
import { chooseSubset } from './subset-choice.ts';
import {
  nodeCanHostPod,
  simulationCanHost,
  simulationScheduleEnabled,
  subsetCanHostPod,
  type NodeRequested,
} from './simulation-schedule.ts';

function node(name: string, labels: Record<string, string>, more: { taints?: Taint[]; unschedulable?: boolean; allocatable?: Record<string, string> | null; capacity?: Record<string, string> } = {}): Node {
  const n: Node = { metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } }, spec: {}, status: {} };
  if (more.taints !== undefined) n.spec!.taints = more.taints;
  if (more.unschedulable !== undefined) n.spec!.unschedulable = more.unschedulable;
  if (more.allocatable !== null) n.status!.allocatable = more.allocatable ?? { cpu: '4', memory: '8Gi', pods: '110' };
  if (more.capacity !== undefined) n.status!.capacity = more.capacity;
  return n;
}

function pod(requests: Record<string, string> = { cpu: '1', memory: '1Gi' }, spec: Partial<Pod['spec']> = {}): Pod {
  return { metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [{ name: 'main', resources: { requests } }], ...spec } };
}

const idle: NodeRequested = { cpuMilli: 0, memory: 0, pods: 0 };
const GI = 1024 ** 3;

describe('nodeCanHostPod (D3)', () => {
  const cases: { name: string; node: Node; pod?: Pod; requested?: NodeRequested; want: boolean }[] = [
    { name: 'an idle node fits', node: node('n', {}), want: true },
    { name: 'a cordoned node does not', node: node('n', {}, { unschedulable: true }), want: false },
    { name: "the pod's nodeSelector must match", node: node('n', { disk: 'hdd' }), pod: pod(undefined, { nodeSelector: { disk: 'ssd' } }), want: false },
    { name: "the pod's nodeSelector matching", node: node('n', { disk: 'ssd' }), pod: pod(undefined, { nodeSelector: { disk: 'ssd' } }), want: true },
    {
      name: "the pod's required affinity must match",
      node: node('n', { arch: 'amd64' }),
      pod: pod(undefined, { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'arch', operator: 'In', values: ['arm64'] }] }] } } } }),
      want: false,
    },
    { name: 'an untolerated NoSchedule taint blocks', node: node('n', {}, { taints: [{ key: 'spot', effect: 'NoSchedule' }] }), want: false },
    { name: 'an untolerated NoExecute taint blocks', node: node('n', {}, { taints: [{ key: 'spot', effect: 'NoExecute' }] }), want: false },
    { name: 'PreferNoSchedule does not block', node: node('n', {}, { taints: [{ key: 'spot', effect: 'PreferNoSchedule' }] }), want: true },
    {
      name: 'a tolerated taint does not block',
      node: node('n', {}, { taints: [{ key: 'spot', effect: 'NoSchedule' }] }),
      pod: pod(undefined, { tolerations: [{ key: 'spot', operator: 'Exists' }] }),
      want: true,
    },
    { name: 'cpu exactly filling the node fits', node: node('n', {}), requested: { cpuMilli: 3000, memory: 0, pods: 1 }, want: true },
    { name: 'cpu one milli over does not', node: node('n', {}), requested: { cpuMilli: 3001, memory: 0, pods: 1 }, want: false },
    { name: 'memory over does not', node: node('n', {}), requested: { cpuMilli: 0, memory: 7.5 * GI, pods: 1 }, want: false },
    { name: 'memory exactly filling fits', node: node('n', {}), requested: { cpuMilli: 0, memory: 7 * GI, pods: 1 }, want: true },
    { name: 'a full pod count does not', node: node('n', {}), requested: { cpuMilli: 0, memory: 0, pods: 110 }, want: false },
    { name: 'a pod requesting nothing fits an overcommitted node', node: node('n', {}), pod: pod({}), requested: { cpuMilli: 9000, memory: 99 * GI, pods: 3 }, want: true },
    { name: 'millicore requests', node: node('n', {}, { allocatable: { cpu: '1500m', memory: '1Gi', pods: '10' } }), pod: pod({ cpu: '500m', memory: '512Mi' }), requested: { cpuMilli: 1000, memory: 512 * 1024 ** 2, pods: 2 }, want: true },
    { name: 'capacity stands in for a missing allocatable', node: node('n', {}, { allocatable: null, capacity: { cpu: '2', memory: '2Gi', pods: '5' } }), want: true },
    { name: 'no resources reported at all: no room', node: node('n', {}, { allocatable: null }), want: false },
  ];
  for (const c of cases) {
    test(c.name, () => assert.equal(nodeCanHostPod(c.node, c.pod ?? pod(), c.requested ?? idle), c.want));
  }
});

const zoneA = { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] };
const zoneB = { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] };
const nodes = [node('a1', { zone: 'a' }), node('a2', { zone: 'a' }), node('b1', { zone: 'b', gpu: 'true' }), node('s1', { zone: 's' }, { taints: [{ key: 'spot', effect: 'NoSchedule' }] })];
const busy = (full: string[]) => (name: string): NodeRequested => (full.includes(name) ? { cpuMilli: 4000, memory: 0, pods: 1 } : idle);

describe('subsetCanHostPod (D3)', () => {
  test('only nodes matching the subset term count', () => {
    assert.equal(subsetCanHostPod({ name: 'a', requiredNodeSelectorTerm: zoneA }, pod(), nodes, busy(['a1', 'a2'])), false);
    assert.equal(subsetCanHostPod({ name: 'a', requiredNodeSelectorTerm: zoneA }, pod(), nodes, busy(['a1'])), true);
    assert.equal(subsetCanHostPod({ name: 'b', requiredNodeSelectorTerm: zoneB }, pod(), nodes, busy(['a1', 'a2'])), true);
  });

  test("the pod's own selector applies on top of the subset term", () => {
    const gpuPod = pod(undefined, { nodeSelector: { gpu: 'true' } });
    assert.equal(subsetCanHostPod({ name: 'a', requiredNodeSelectorTerm: zoneA }, gpuPod, nodes, () => idle), false);
    assert.equal(subsetCanHostPod({ name: 'b', requiredNodeSelectorTerm: zoneB }, gpuPod, nodes, () => idle), true);
  });

  test("the subset's tolerations count with the pod's", () => {
    const spot = { matchExpressions: [{ key: 'zone', operator: 'In', values: ['s'] }] };
    assert.equal(subsetCanHostPod({ name: 's', requiredNodeSelectorTerm: spot }, pod(), nodes, () => idle), false);
    assert.equal(subsetCanHostPod({ name: 's', requiredNodeSelectorTerm: spot, tolerations: [{ key: 'spot', operator: 'Exists' }] }, pod(), nodes, () => idle), true);
  });

  test('a subset without a term considers every node; no nodes means no room', () => {
    assert.equal(subsetCanHostPod({ name: 'any' }, pod(), nodes, busy(['a1', 'a2'])), true);
    assert.equal(subsetCanHostPod({ name: 'any' }, pod(), [], () => idle), false);
  });
});

function spread(subsets: Subset[], strategy?: WorkloadSpread['spec']['scheduleStrategy']): WorkloadSpread {
  const ws: WorkloadSpread = { metadata: { name: 'ws', namespace: 'ns' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets } };
  if (strategy !== undefined) ws.spec.scheduleStrategy = strategy;
  return ws;
}

describe('simulationScheduleEnabled', () => {
  const cases: [string, WorkloadSpread['spec']['scheduleStrategy'] | undefined, boolean][] = [
    ['no strategy', undefined, false],
    ['Fixed', { type: 'Fixed' }, false],
    ['empty type', { type: '' }, false],
    ['Adaptive', { type: 'Adaptive' }, true],
    ['Adaptive with rescheduling', { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } }, true],
    ['Adaptive with simulation disabled', { type: 'Adaptive', adaptive: { disableSimulationSchedule: true } }, false],
  ];
  for (const [name, strategy, want] of cases) test(name, () => assert.equal(simulationScheduleEnabled(spread([{ name: 'a' }], strategy)), want));
});

describe('simulationCanHost with chooseSubset', () => {
  const subsets: Subset[] = [
    { name: 'a', requiredNodeSelectorTerm: zoneA, maxReplicas: 3 },
    { name: 'b', requiredNodeSelectorTerm: zoneB },
  ];
  const ws = spread(subsets, { type: 'Adaptive' });
  const decide = (requested: (n: string) => NodeRequested, w: WorkloadSpread = ws) =>
    chooseSubset({ ws: w, pod: pod(), version: 'v', workloadReplicas: () => ({ ok: true, replicas: 5 }), now: 0, newUid: () => 'u', canHost: simulationCanHost(w, pod(), nodes, requested) });

  test('a subset with room is chosen', () => {
    const got = decide(() => idle);
    assert.equal(got.kind === 'chosen' && got.subset, 'a');
  });

  test('a full subset is skipped for the next one', () => {
    const got = decide(busy(['a1', 'a2']));
    assert.equal(got.kind === 'chosen' && got.subset, 'b');
  });

  test("the subset's patch is simulated: bigger requests no node of the subset can hold", () => {
    const patched = spread([{ ...subsets[0]!, patch: { spec: { containers: [{ name: 'main', resources: { requests: { cpu: '8' } } }] } } }, subsets[1]!], { type: 'Adaptive' });
    const got = decide(() => idle, patched);
    assert.equal(got.kind === 'chosen' && got.subset, 'b');
  });
});

describe('simulationCanHost without a subset patch answers as the injected pod would', () => {
  // Every combination of a pod's own placement rules and a subset's term and tolerations, on every
  // node's load: the shortcut (the pod as it is, against the term, with the tolerations added)
  // must say what trying the injected pod on each node says.
  const pods: [string, Pod][] = [
    ['plain', pod()],
    ['node selector', pod(undefined, { nodeSelector: { gpu: 'true' } })],
    ['two ORed required terms', pod(undefined, { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [zoneB, { matchExpressions: [{ key: 'zone', operator: 'In', values: ['s'] }] }] } } } })],
    ['tolerates spot', pod(undefined, { tolerations: [{ key: 'spot', operator: 'Exists' }] })],
    ['requests nothing', pod({})],
  ];
  const spotTerm = { matchExpressions: [{ key: 'zone', operator: 'In', values: ['s'] }] };
  const subsets: Subset[] = [
    { name: 'a', requiredNodeSelectorTerm: zoneA },
    { name: 'b', requiredNodeSelectorTerm: zoneB, preferredNodeSelectorTerms: [{ weight: 1, preference: zoneA }] },
    { name: 's', requiredNodeSelectorTerm: spotTerm },
    { name: 's-tolerated', requiredNodeSelectorTerm: spotTerm, tolerations: [{ key: 'spot', operator: 'Exists' }] },
    { name: 'any' },
  ];
  const loads: [string, (n: string) => NodeRequested][] = [
    ['idle', () => idle],
    ['zone a full', busy(['a1', 'a2'])],
    ['b1 and s1 full', busy(['b1', 's1'])],
  ];
  for (const [podName, p] of pods) {
    test(podName, () => {
      for (const subset of subsets) {
        const ws = spread([subset, { ...subset, name: `${subset.name}-patched`, patch: { metadata: { labels: { patched: 'yes' } } } }], { type: 'Adaptive' });
        for (const [loadName, load] of loads) {
          const canHost = simulationCanHost(ws, p, nodes, load);
          // The patched twin changes only a label, so it takes the injecting path to the same answer.
          assert.equal(canHost(ws.spec.subsets[0]!), canHost(ws.spec.subsets[1]!), `${subset.name} under ${loadName}`);
        }
      }
    });
  }
});
