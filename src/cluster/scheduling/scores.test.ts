import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { podRecord } from './node-info.ts';
import { normalize, scoreNodes, selectHost } from './scores.ts';
import { defaultSelector } from './topology-spread.ts';
import { cacheWith, node, pod, type PodFixture } from '../testing/scheduling-fixtures.ts';
import type { Node, Pod } from '../../k8s/types.ts';

function score(nodes: Node[], p: Pod, bound: Pod[] = [], spread: ReturnType<typeof defaultSelector> = []) {
  const { infos } = cacheWith(nodes, bound);
  return scoreNodes({ pod: p, record: podRecord(p, '', true), feasible: infos, allNodes: infos, spreadSelector: spread });
}

const byName = (scores: ReturnType<typeof scoreNodes>) => new Map(scores.map((s) => [s.name, s]));

describe('normalize (DefaultNormalizeScore)', () => {
  const cases: { name: string; input: [string, number][]; reverse: boolean; want: number[] }[] = [
    { name: 'scaled by the maximum', input: [['a', 0], ['b', 5], ['c', 10]], reverse: false, want: [0, 50, 100] },
    { name: 'reversed', input: [['a', 0], ['b', 5], ['c', 10]], reverse: true, want: [100, 50, 0] },
    { name: 'truncating like int64 division', input: [['a', 1], ['b', 3]], reverse: false, want: [33, 100] },
    { name: 'all zero, reversed: everyone best', input: [['a', 0], ['b', 0]], reverse: true, want: [100, 100] },
    { name: 'all zero: everyone zero', input: [['a', 0], ['b', 0]], reverse: false, want: [0, 0] },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual([...normalize(new Map(c.input), c.reverse).values()], c.want));
});

describe('score plugins', () => {
  test('LeastAllocated and BalancedAllocation, with the worked numbers', () => {
    // cpu 1/4 → ⌊3000·100/4000⌋ = 75, memory 1Gi/16Gi → ⌊93.75⌋ = 93, LeastAllocated ⌊(75+93)/2⌋ = 84;
    // balance |0.25 − 0.0625|/2 = 0.09375 → ⌊90.625⌋ = 90; TaintToleration 100 (×3); NodeAffinity and spreading skipped.
    const s = score([node({ name: 'a' })], pod({ cpu: '1', memory: '1Gi' }))[0]!;
    assert.deepEqual(s.plugins, { TaintToleration: 100, NodeResourcesFit: 84, NodeResourcesBalancedAllocation: 90 });
    assert.equal(s.total, 300 + 84 + 90);
  });

  test('a pod without requests counts as 100m / 200Mi for LeastAllocated, as nothing for balance', () => {
    const s = score([node({ name: 'a' })], pod())[0]!;
    // cpu ⌊3900·100/4000⌋ = 97, memory ⌊(16Gi − 200Mi)·100/16Gi⌋ = 98 → ⌊195/2⌋ = 97.
    assert.equal(s.plugins.NodeResourcesFit, 97);
    assert.equal(s.plugins.NodeResourcesBalancedAllocation, 100);
  });

  test('preferred node affinity outweighs free resources (weight 2 × 100)', () => {
    const nodes = [node({ name: 'a', labels: { disk: 'ssd' } }), node({ name: 'b' })];
    const busy = pod({ name: 'busy', nodeName: 'a', cpu: '3' });
    const p = pod({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 5, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } }] } } });
    const scores = byName(score(nodes, p, [busy]));
    assert.equal(scores.get('a')?.plugins.NodeAffinity, 100);
    assert.equal(scores.get('b')?.plugins.NodeAffinity, 0);
    // a: 300 + 200 + LeastAllocated ⌊(22+97)/2⌋ = 59 + balance ⌊(1 − 0.375)·100⌋ = 62; b: 300 + 0 + 97 + 100.
    assert.equal(scores.get('a')?.total, 621);
    assert.equal(scores.get('b')?.total, 497);
    assert.equal(selectHost({ pod: p, record: podRecord(p, '', true), feasible: cacheWith(nodes, [busy]).infos, allNodes: cacheWith(nodes, [busy]).infos, spreadSelector: [] })?.node, 'a');
  });

  test('without a preference, the less allocated node wins', () => {
    const nodes = [node({ name: 'a' }), node({ name: 'b' })];
    const scores = score(nodes, pod({ cpu: '500m' }), [pod({ name: 'x', nodeName: 'a', cpu: '2' })]);
    assert.equal(scores[0]?.name, 'b');
  });

  test('an untolerated PreferNoSchedule taint costs 3 × 100', () => {
    const nodes = [node({ name: 'a', taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }), node({ name: 'b' })];
    const plain = byName(score(nodes, pod()));
    assert.equal(plain.get('a')?.plugins.TaintToleration, 0);
    assert.equal(plain.get('b')?.plugins.TaintToleration, 100);
    const tolerating = score(nodes, pod({ tolerations: [{ key: 'soft', operator: 'Exists', effect: 'PreferNoSchedule' }] }));
    assert.equal(tolerating[0]?.total, tolerating[1]?.total);
  });

  test('equal totals: the first node by name wins (upstream picks at random)', () => {
    const scores = score([node({ name: 'b' }), node({ name: 'c' }), node({ name: 'a' })], pod());
    assert.deepEqual(scores.map((s) => s.name), ['a', 'b', 'c']);
  });

  test('one feasible node is chosen without scoring', () => {
    const { infos } = cacheWith([node({ name: 'only' })]);
    const p = pod();
    assert.deepEqual(selectHost({ pod: p, record: podRecord(p, '', true), feasible: infos, allNodes: infos, spreadSelector: [] }), { node: 'only', scores: [] });
  });
});

describe('PodTopologySpread with the system defaults', () => {
  const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } } } };
  const owned = (f: PodFixture): Pod => pod({ labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true }], ...f });
  const nodes = [node({ name: 'a1', labels: { 'topology.kubernetes.io/zone': 'a' } }), node({ name: 'a2', labels: { 'topology.kubernetes.io/zone': 'a' } }), node({ name: 'b1', labels: { 'topology.kubernetes.io/zone': 'b' } })];

  test('the selector comes from the ReplicaSet and the Services that select the pod', () => {
    const svc = { metadata: { name: 's', namespace: 'default' }, spec: { selector: { tier: 'front' } } };
    const other = { metadata: { name: 'o', namespace: 'default' }, spec: { selector: { app: 'db' } } };
    const p = owned({ labels: { app: 'web', tier: 'front' } });
    const reqs = defaultSelector(p, { services: [svc, other], owner: rs });
    assert.deepEqual(reqs.map((r) => `${r.key}${r.operator}${r.values.join('|')}`), ['tier=front', 'app=web']);
  });

  test('zone and hostname spreading with the worked numbers', () => {
    const bound = [owned({ name: 'w1', nodeName: 'a1' }), owned({ name: 'w2', nodeName: 'a2' })];
    const p = owned({ name: 'new' });
    const scores = byName(score(nodes, p, bound, defaultSelector(p, { services: [], owner: rs })));
    // raw: a1 = round(1·ln5 + 2 + 2·ln4 + 4) = 10, a2 = 10, b1 = round(0 + 2 + 0 + 4) = 6;
    // normalized 100·(max + min − s)/max: a = 60, b = 100.
    assert.equal(scores.get('a1')?.plugins.PodTopologySpread, 60);
    assert.equal(scores.get('a2')?.plugins.PodTopologySpread, 60);
    assert.equal(scores.get('b1')?.plugins.PodTopologySpread, 100);
  });

  test('a pod no controller or service selects is not spread', () => {
    const scores = score(nodes, pod());
    assert.equal(scores[0]?.plugins.PodTopologySpread, undefined);
  });

  test("the pod's own ScheduleAnyway constraint replaces the defaults", () => {
    const p = pod({ labels: { app: 'x' }, extraSpec: { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'x' } } }] } });
    const bound = [pod({ name: 'x1', nodeName: 'b1', labels: { app: 'x' } })];
    const scores = byName(score(nodes, p, bound));
    assert.ok((scores.get('a1')?.plugins.PodTopologySpread ?? 0) > (scores.get('b1')?.plugins.PodTopologySpread ?? 0));
  });
});

describe('PodTopologySpread node inclusion policies', () => {
  const zone = (z: string) => ({ 'topology.kubernetes.io/zone': z });
  const nodes = [node({ name: 'a1', labels: zone('a'), taints: [{ key: 'busy', effect: 'NoSchedule' }] }), node({ name: 'a2', labels: zone('a') }), node({ name: 'b1', labels: zone('b') })];
  const bound = [pod({ name: 'x1', nodeName: 'a1', labels: { app: 'x' } }), pod({ name: 'x2', nodeName: 'a1', labels: { app: 'x' } }), pod({ name: 'x3', nodeName: 'b1', labels: { app: 'x' } })];
  const spreading = (policy: Record<string, string>) =>
    pod({ labels: { app: 'x' }, extraSpec: { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'x' } }, ...policy }] } });
  const spreadScores = (p: Pod) => {
    const { infos, info } = cacheWith(nodes, bound);
    const feasible = [info('a2'), info('b1')];
    return byName(scoreNodes({ pod: p, record: podRecord(p, '', true), feasible, allNodes: infos, spreadSelector: [] }));
  };

  test('nodeTaintsPolicy Ignore (default): pods on a tainted node count for its zone', () => {
    const s = spreadScores(spreading({}));
    assert.ok((s.get('b1')?.plugins.PodTopologySpread ?? 0) > (s.get('a2')?.plugins.PodTopologySpread ?? 0));
  });

  test('nodeTaintsPolicy Honor: they do not', () => {
    const s = spreadScores(spreading({ nodeTaintsPolicy: 'Honor' }));
    assert.ok((s.get('a2')?.plugins.PodTopologySpread ?? 0) > (s.get('b1')?.plugins.PodTopologySpread ?? 0));
  });
});

describe('invariants', () => {
  test('selectHost picks a feasible node with the highest total, the first by name among equals', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ cpu: fc.integer({ min: 1, max: 16 }), used: fc.integer({ min: 0, max: 1000 }), soft: fc.boolean() }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 2000 }),
        (specs, want) => {
          const nodes = specs.map((s, i) => node({ name: `n${i}`, cpu: String(s.cpu), ...(s.soft ? { taints: [{ key: 's', effect: 'PreferNoSchedule' }] } : {}) }));
          const bound = specs.map((s, i) => pod({ name: `b${i}`, nodeName: `n${i}`, cpu: `${s.used}m` }));
          const p = pod({ cpu: `${want}m` });
          const { infos } = cacheWith(nodes, bound);
          const choice = selectHost({ pod: p, record: podRecord(p, '', true), feasible: infos, allNodes: infos, spreadSelector: [] });
          assert.ok(choice !== undefined);
          if (infos.length === 1) return;
          const best = Math.max(...choice.scores.map((s) => s.total));
          const first = choice.scores.filter((s) => s.total === best).map((s) => s.name).sort()[0];
          assert.equal(choice.node, first);
        },
      ),
    );
  });
});
