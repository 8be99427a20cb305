import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { DomainDisruptionBudget } from '../api/disruption-budget.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import { computeBudgetStatus } from './disruption-budget.ts';
import { budget, node, nodeMap, pod, STORY_1, STORY_2, STORY_3, T0, ZONE } from '../testing/budget-fixtures.ts';
import { decideEviction, MAX_DISRUPTED_PODS, releaseRecord, type EvictionDecision } from './disruption-decision.ts';

const NODES = nodeMap([node('f1', 'foo'), node('f2', 'foo'), node('b1', 'bar'), node('b2', 'bar'), node('z1', 'baz'), node('z2', 'baz')]);
const SIX = [pod('f-1', { node: 'f1' }), pod('f-2', { node: 'f2' }), pod('b-1', { node: 'b1' }), pod('b-2', { node: 'b2' }), pod('z-1', { node: 'z1' }), pod('z-2', { node: 'z2' })];

/** A budget whose status the controller computed from `pods`. */
function synced(spec: Parameters<typeof budget>[0], pods: readonly Pod[] = SIX, name = 'app-ddb'): DomainDisruptionBudget {
  const b = budget(spec, name);
  return { ...b, status: computeBudgetStatus(b, pods, NODES, undefined, T0).status };
}

const byName = (name: string, pods: readonly Pod[] = SIX): Pod => {
  const p = pods.find((x) => x.metadata.name === name);
  assert.ok(p, name);
  return p;
};

function decide(budgets: DomainDisruptionBudget[], p: Pod, options: Parameters<typeof decideEviction>[4] = {}): EvictionDecision {
  return decideEviction(budgets, p, p.spec.nodeName === undefined ? undefined : NODES.get(p.spec.nodeName), T0 + 1_000, options);
}

/** Applies a record decision to the budgets (what the webhook's status write does). */
function apply(budgets: DomainDisruptionBudget[], d: EvictionDecision): DomainDisruptionBudget[] {
  if (d.kind !== 'record') return budgets;
  return budgets.map((b) => {
    const r = d.records.find((x) => x.budget.metadata.name === b.metadata.name);
    return r === undefined ? b : { ...b, status: r.status };
  });
}

describe('the KEP-8 stories', () => {
  test('story 1: a pod of zone bar may go; a pod of any other zone may not', () => {
    const b = [synced(STORY_1)];
    assert.deepEqual(decide(b, byName('b-1')), { kind: 'allow', reason: 'NotGoverned' });
    const d = decide(b, byName('f-1'));
    assert.equal(d.kind, 'deny');
    assert.ok(d.kind === 'deny');
    assert.equal(d.budget, 'default/app-ddb');
    assert.equal(d.domain, 'matching-nodes');
    assert.equal(d.message, 'Cannot evict pod as it would violate the DomainDisruptionBudget default/app-ddb in domain "matching-nodes": it needs 4 healthy pods and has 4 (4 expected), so no disruption is allowed now');
  });
  test('story 2: one pod per zone, the second of a zone waits', () => {
    let b = [synced(STORY_2)];
    const first = decide(b, byName('f-1'));
    assert.equal(first.kind, 'record');
    b = apply(b, first);
    const second = decide(b, byName('f-2'));
    assert.deepEqual(second.kind === 'deny' && [second.domain, second.message.includes('needs 1 healthy pods and has 1')], ['foo', true]);
    const otherZone = decide(b, byName('z-1'));
    assert.equal(otherZone.kind, 'record');
  });
  test('story 3: one pod overall', () => {
    let b = [synced(STORY_3)];
    const first = decide(b, byName('f-1'));
    b = apply(b, first);
    assert.equal(first.kind, 'record');
    assert.equal(decide(b, byName('z-2')).kind, 'deny');
  });
});

describe('decideEviction: one case per rule', () => {
  const story2 = synced(STORY_2);
  test('a terminating pod is allowed without looking at budgets', () => {
    assert.deepEqual(decide([synced(STORY_1)], pod('f-1', { node: 'f1', terminating: true })), { kind: 'allow', reason: 'Terminating' });
  });
  test('a finished or Pending pod is allowed (the eviction API skips budgets for them)', () => {
    assert.deepEqual(decide([synced(STORY_1)], pod('f-1', { node: 'f1', phase: 'Succeeded' })), { kind: 'allow', reason: 'Finished' });
    assert.deepEqual(decide([synced(STORY_1)], pod('f-1', { node: 'f1', phase: 'Pending', ready: false })), { kind: 'allow', reason: 'Pending' });
  });
  test('a pod no budget selects is allowed', () => {
    assert.deepEqual(decide([story2], pod('x', { node: 'f1', labels: { app: 'other' } })), { kind: 'allow', reason: 'NotGoverned' });
    assert.deepEqual(decide([story2], pod('x', { node: 'f1', namespace: 'elsewhere' })), { kind: 'allow', reason: 'NotGoverned' });
    assert.deepEqual(decide([], byName('f-1')), { kind: 'allow', reason: 'NotGoverned' });
  });
  test('a record decrements the domain and notes the pod with the time of approval', () => {
    const d = decide([story2], byName('f-1'));
    assert.ok(d.kind === 'record');
    const [r] = d.records;
    assert.equal(r?.domain, 'foo');
    const foo = r?.status.domains?.find((x) => x.name === 'foo');
    assert.deepEqual([foo?.currentHealthy, foo?.disruptionsAllowed, foo?.disruptedPods], [1, 0, { 'f-1': formatTime(T0 + 1_000) }]);
    assert.deepEqual(foo?.conditions?.map((c) => [c.status, c.reason]), [['False', 'InsufficientPods']]);
    assert.equal(r?.status.blockedDomains, 1);
    assert.equal(r?.status.domains?.find((x) => x.name === 'bar')?.disruptionsAllowed, 1, 'other domains untouched');
  });
  test('a dry run is checked but not recorded', () => {
    assert.deepEqual(decide([story2], byName('f-1'), { dryRun: true }), { kind: 'allow', reason: 'DryRun' });
    const blocked = apply([story2], decide([story2], byName('f-1')));
    assert.equal(decide(blocked, byName('f-2'), { dryRun: true }).kind, 'deny', 'a dry run is refused like the real thing');
  });
  test('a pod already approved is allowed again without spending more (an eviction retried)', () => {
    const b = apply([story2], decide([story2], byName('f-1')));
    assert.deepEqual(decide(b, byName('f-1')), { kind: 'allow', reason: 'AlreadyDisrupted' });
  });
  test('a status older than the spec refuses with a retry hint', () => {
    const stale = { ...story2, metadata: { ...story2.metadata, generation: 2 } };
    const d = decide([stale], byName('f-1'));
    assert.ok(d.kind === 'deny');
    assert.equal(d.retryAfterSeconds, 10);
    assert.match(d.message, /still being processed/);
  });
  test('a domain missing from the status refuses with a retry hint', () => {
    const d = decide([synced(STORY_2, SIX.slice(0, 2))], byName('z-1'));
    assert.ok(d.kind === 'deny');
    assert.equal(d.domain, 'baz');
    assert.match(d.message, /not in the budget status yet/);
  });
  test('a budget that has no status yet refuses', () => {
    assert.equal(decide([budget(STORY_2)], byName('f-1')).kind, 'deny');
  });
  describe('a pod that is not Ready spends nothing', () => {
    // foo: two Ready pods and one not Ready → expected 3, desired 2, healthy 2: nothing to spare.
    const pods = [...SIX, pod('f-3', { node: 'f1', ready: false })];
    test('IfHealthyBudget: allowed while the domain has its desired healthy pods', () => {
      const b = synced(STORY_2, pods);
      assert.deepEqual(decide([b], byName('f-3', pods)), { kind: 'allow', reason: 'NotReady' });
      assert.equal(decide([b], byName('f-1', pods)).kind, 'deny', 'a Ready pod of the same domain is refused');
    });
    test('IfHealthyBudget: refused when the domain is below its desired healthy pods', () => {
      const below = [pod('f-1', { node: 'f1' }), pod('f-2', { node: 'f2', ready: false }), pod('f-3', { node: 'f2', ready: false })];
      assert.equal(decide([synced(STORY_2, below)], byName('f-3', below)).kind, 'deny');
    });
    test('AlwaysAllow: allowed even then', () => {
      const below = [pod('f-1', { node: 'f1' }), pod('f-2', { node: 'f2', ready: false }), pod('f-3', { node: 'f2', ready: false })];
      assert.deepEqual(decide([synced({ ...STORY_2, unhealthyPodEvictionPolicy: 'AlwaysAllow' }, below)], byName('f-3', below)), { kind: 'allow', reason: 'NotReady' });
    });
  });
  test('every budget selecting the pod must allow: one refusal refuses', () => {
    const overall = synced({ maxUnavailable: 0 }, SIX, 'overall');
    const d = decide([story2, overall], byName('f-1'));
    assert.ok(d.kind === 'deny');
    assert.deepEqual([d.budget, d.domain], ['default/overall', 'all']);
  });
  test('two budgets that allow: both record', () => {
    const d = decide([synced(STORY_3, SIX, 'overall'), story2], byName('f-1'));
    assert.ok(d.kind === 'record');
    assert.deepEqual(d.records.map((r) => [r.budget.metadata.name, r.domain]), [['app-ddb', 'foo'], ['overall', 'all']]);
  });
  test('what the caller observes now can only make the decision stricter', () => {
    // The controller has not seen the new, unready pod of foo yet: the stored status still allows 1.
    const now = [...SIX, pod('f-new', { node: 'f1', ready: false })];
    const d = decide([story2], byName('f-1'), { observed: { pods: now, nodes: NODES } });
    assert.ok(d.kind === 'deny');
    assert.match(d.message, /needs 2 healthy pods and has 2 \(3 expected\)/);
    // And a stale status that allows nothing is not overruled by a fresher view.
    const blocked = apply([story2], decide([story2], byName('f-1')));
    assert.equal(decide(blocked, byName('f-2'), { observed: { pods: SIX, nodes: NODES } }).kind, 'deny');
  });
  test(`more than ${MAX_DISRUPTED_PODS} unconfirmed evictions refuse new ones`, () => {
    const many = Object.fromEntries(Array.from({ length: MAX_DISRUPTED_PODS + 1 }, (_, i) => [`old-${i}`, formatTime(T0)]));
    const b = synced(STORY_3);
    const crowded = { ...b, status: { ...b.status, domains: (b.status?.domains ?? []).map((d) => ({ ...d, disruptedPods: many })) } };
    const d = decide([crowded], byName('f-1'));
    assert.ok(d.kind === 'deny');
    assert.match(d.message, /not confirmed yet/);
  });
  test('malformed budgets never crash the decision', () => {
    const broken = [
      { metadata: { name: 'x', namespace: 'default' }, spec: null },
      { metadata: { name: 'y', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'foo' } } }, status: { domains: 'nope' } },
      { metadata: { name: 'z', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'foo' } }, maxUnavailable: 1 }, status: { observedGeneration: 0, domains: [null, { name: 'all' }] } },
    ] as unknown as DomainDisruptionBudget[];
    for (const b of broken) assert.doesNotThrow(() => decide([b], byName('f-1')));
  });
});

describe('releaseRecord (giving an approval back)', () => {
  test('undoes a record: the pod leaves disruptedPods, the disruption and the healthy pod come back', () => {
    const before = synced(STORY_2);
    const d = decide([before], byName('f-1'));
    assert.equal(d.kind, 'record');
    const [after] = apply([before], d);
    assert.equal(after?.status?.domains?.find((x) => x.name === 'foo')?.disruptionsAllowed, 0);
    const released = releaseRecord(after?.status, 'foo', byName('f-1'), T0 + 2_000);
    const foo = released?.domains?.find((x) => x.name === 'foo');
    const orig = before.status?.domains?.find((x) => x.name === 'foo');
    assert.deepEqual([foo?.currentHealthy, foo?.disruptionsAllowed, foo?.disruptedPods], [orig?.currentHealthy, orig?.disruptionsAllowed, undefined]);
    assert.equal(released?.blockedDomains, before.status?.blockedDomains);
  });

  test('nothing to undo (pod not recorded, unknown domain, no status): undefined', () => {
    const b = synced(STORY_2);
    assert.equal(releaseRecord(b.status, 'foo', byName('f-1'), T0), undefined);
    assert.equal(releaseRecord(b.status, 'nowhere', byName('f-1'), T0), undefined);
    assert.equal(releaseRecord(undefined, 'foo', byName('f-1'), T0), undefined);
  });
});

describe('property: no sequence of decisions takes a domain below desiredHealthy', () => {
  interface ModelPod {
    name: string;
    zone: string;
    ready: boolean;
    /** Approved by the budget, deletion not started yet. */
    approved: boolean;
    terminating: boolean;
  }
  const zones = ['foo', 'bar', 'baz'];
  const nodeOf = (zone: string) => (zone === 'foo' ? 'f1' : zone === 'bar' ? 'b1' : 'z1');
  const toPod = (m: ModelPod): Pod => pod(m.name, { node: nodeOf(m.zone), ready: m.ready, terminating: m.terminating });

  type Op =
    | { op: 'evict'; i: number }
    | { op: 'sync' }
    | { op: 'delete'; i: number }
    | { op: 'gone'; i: number }
    | { op: 'add'; zone: string }
    | { op: 'ready'; i: number }
    | { op: 'advance'; ms: number };
  const arbOp: fc.Arbitrary<Op> = fc.oneof(
    { weight: 5, arbitrary: fc.record({ op: fc.constant('evict' as const), i: fc.nat(40) }) },
    { weight: 2, arbitrary: fc.constant({ op: 'sync' as const }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), i: fc.nat(40) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('gone' as const), i: fc.nat(40) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('add' as const), zone: fc.constantFrom(...zones) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('ready' as const), i: fc.nat(40) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 10_000 }) }) },
  );
  const arbAmount = fc.oneof(
    fc.record({ maxUnavailable: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`)) }),
    fc.record({ minAvailable: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`)) }),
  );

  for (const observedToo of [true, false]) {
    test(observedToo ? 'deciding on the stored status and the observed pods' : 'deciding on the stored status alone, pods changing only by evictions', () => {
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...zones), { minLength: 1, maxLength: 12 }), arbAmount, fc.boolean(), fc.array(arbOp, { maxLength: 60 }), (initial, amount, perZone, ops) => {
          let seq = 0;
          const model: ModelPod[] = initial.map((zone) => ({ name: `p-${seq++}`, zone, ready: true, approved: false, terminating: false }));
          const spec = { ...amount, ...(perZone ? { topologyKey: ZONE } : {}) };
          let b = budget(spec);
          let now = T0;
          const pods = () => model.map(toPod);
          const sync = () => (b = { ...b, status: computeBudgetStatus(b, pods(), NODES, undefined, now).status });
          sync();
          for (const o of ops) {
            if (o.op === 'sync') sync();
            else if (o.op === 'advance') now += o.ms; // never 2 minutes in one property run: approvals do not expire here
            else if (o.op === 'add') {
              if (observedToo) model.push({ name: `p-${seq++}`, zone: o.zone, ready: false, approved: false, terminating: false });
            } else if (model.length > 0) {
              const m = model[o.i % model.length] as ModelPod;
              if (o.op === 'delete' && m.approved) m.terminating = true;
              else if (o.op === 'gone' && m.terminating) model.splice(model.indexOf(m), 1);
              else if (o.op === 'ready' && observedToo && !m.terminating) m.ready = true;
              else if (o.op === 'evict') {
                const p = toPod(m);
                const d = decideEviction([b], p, NODES.get(nodeOf(m.zone)), now, observedToo ? { observed: { pods: pods(), nodes: NODES } } : {});
                if (d.kind === 'record') {
                  b = { ...b, status: d.records[0]?.status ?? {} };
                  m.approved = true;
                  // The invariant, on the truth: Ready pods of the domain not on their way out ≥ what the domain must keep.
                  const domain = perZone ? m.zone : undefined;
                  const inDomain = model.filter((x) => domain === undefined || x.zone === domain);
                  const healthy = inDomain.filter((x) => x.ready && !x.approved && !x.terminating).length;
                  const truth = computeBudgetStatus(budget(spec), inDomain.map(toPod), NODES, undefined, now).status.domains?.[0];
                  assert.ok(truth !== undefined);
                  assert.ok(healthy >= truth.desiredHealthy, `domain ${domain ?? 'all'}: ${healthy} healthy after evicting ${m.name}, needs ${truth.desiredHealthy}`);
                }
              }
            }
            assert.ok(now - T0 < 120_000);
          }
        }),
        { numRuns: 300 },
      );
    });
  }
});
