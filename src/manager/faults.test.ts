/**
 * The manager under faults, end to end on the embedded cluster (virtual
 * clock), each time in the middle of a Deployment scale-up (pod creations
 * slowed down on the API server so the scale takes virtual seconds):
 *
 * - the manager restarted mid-scale (pod creations refused while it is
 *   away, failurePolicy Fail): the new one re-registers its webhooks, the
 *   ReplicaSet controller retries, and everything converges — placement,
 *   status and deletion costs, and the scale-in order they produce;
 * - every watch cut and the history compacted mid-scale (the informers see
 *   410 and relist): converges, and the relists show in the metrics;
 * - status writes refused with 409: transient conflicts are retried quietly
 *   (no error logged, counted in the metrics); persistent ones fail the pod
 *   creation with a clear message, and once they stop everything converges.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { FaultHandle } from '../cluster/index.ts';
import { BUILTIN } from '../client/resources.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { countBySubset, deployment, podsOf, readSpread, workloadSpreadObject, zoneTerm } from '../testing/webhook-bed.ts';
import { sample, scrape, startManagerCluster, startTestManager, stopOnClock, type ManagerCluster, type TestManager } from '../testing/manager-bed.ts';

const COST = 'controller.kubernetes.io/pod-deletion-cost';

describe('manager faults mid-scale', () => {
  let env: ManagerCluster;
  before(async () => {
    env = await startManagerCluster({ budgetCrd: true });
  });
  after(async () => {
    await env?.stop();
  });

  /** a (max 3), b (max 3), c (unlimited), one zone each, over Deployment `web` at 0 replicas. */
  async function spread(prefix: string): Promise<string> {
    const ns = await env.namespace(prefix);
    await env.cluster.client.create(
      WORKLOADSPREAD_REF,
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 3 },
          { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: 3 },
          { name: 'c', requiredNodeSelectorTerm: zoneTerm('c') },
        ],
      }),
    );
    await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 0));
    await env.cluster.settle();
    return ns;
  }

  /** Starts scaling `web` to `replicas` with every pod creation taking 500 ms on the server, and lets 1.2 s pass. */
  async function scaleSlowly(ns: string, replicas: number): Promise<FaultHandle> {
    const slow = env.cluster.apiServer.control.injectFault({ resource: 'pods', verb: 'create', namespace: ns, delayMs: 500 });
    await env.cluster.client.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { replicas } } }, { namespace: ns });
    await env.clock.advance(1_200);
    return slow;
  }

  async function activePods(ns: string) {
    return (await podsOf(env.cluster.client, ns)).filter((p) => p.metadata.deletionTimestamp === undefined && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  }

  /** What a converged a(3)/b(3)/c spread of `total` pods looks like: placement, status and costs 300/200/100. */
  async function assertConverged(ns: string, total: number): Promise<void> {
    const pods = await activePods(ns);
    const c = total - 6;
    assert.deepEqual(countBySubset(pods), { a: 3, b: 3, c });
    const ws: WorkloadSpread = await readSpread(env.cluster.client, ns, 'spread');
    assert.deepEqual(
      ws.status?.subsetStatuses?.map((s) => [s.name, s.replicas, s.missingReplicas, Object.keys(s.creatingPods ?? {}).length, Object.keys(s.deletingPods ?? {}).length]),
      [
        ['a', 3, 0, 0, 0],
        ['b', 3, 0, 0, 0],
        ['c', c, -1, 0, 0],
      ],
    );
    const costs = Object.fromEntries(['a', 'b', 'c'].map((s) => [s, [...new Set(pods.filter((p) => countBySubset([p])[s] === 1).map((p) => p.metadata.annotations?.[COST]))]]));
    assert.deepEqual(costs, { a: ['300'], b: ['200'], c: ['100'] });
  }

  /** Scale-in removes the cheapest pods first: 12 → 4 leaves a:3 b:1. */
  async function assertScaleInOrder(ns: string): Promise<void> {
    await env.cluster.client.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { replicas: 4 } } }, { namespace: ns });
    await env.cluster.settle();
    assert.deepEqual(countBySubset(await activePods(ns)), { a: 3, b: 1 });
  }

  test('the manager restarted mid-scale: pods are refused while it is away, then everything converges', async () => {
    const first: TestManager = await startTestManager(env, { name: 'before-restart', leaderElection: { leaseName: 'restart' } });
    let second: TestManager | undefined;
    try {
      const ns = await spread('restart');
      const slow = await scaleSlowly(ns, 12);
      const before = (await activePods(ns)).length;
      assert.ok(before > 0 && before < 12, `mid-scale: ${before} pods`);
      await stopOnClock(env, first.manager);
      // Away: creations are refused (failurePolicy Fail), the ReplicaSet controller backs off.
      await env.clock.advance(5_000);
      const refused = (await env.cluster.client.list(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'FailedCreate');
      assert.ok(refused.length > 0, 'creations were refused while no webhook answered');
      assert.ok((await activePods(ns)).length < 12);

      second = await startTestManager(env, { name: 'after-restart', leaderElection: { leaseName: 'restart' } });
      slow.clear();
      await env.cluster.settle();
      await assertConverged(ns, 12);
      await assertScaleInOrder(ns);
      assert.deepEqual(first.log.lines.filter((l) => l.level === 'error'), []);
      assert.deepEqual(second.log.lines.filter((l) => l.level === 'error'), []);
    } finally {
      if (second !== undefined) await stopOnClock(env, second.manager);
      else await stopOnClock(env, first.manager);
    }
  });

  test('every watch cut and the history compacted mid-scale: the informers relist and the spread converges', async () => {
    const { manager, log } = await startTestManager(env, { name: 'compaction', leaderElection: { leaseName: 'compaction' } });
    try {
      const ns = await spread('compact');
      const slow = await scaleSlowly(ns, 12);
      const control = env.cluster.apiServer.control;
      control.compact();
      assert.ok(control.cutWatches() > 0);
      slow.clear();
      await env.cluster.settle();
      await assertConverged(ns, 12);
      const metrics = await scrape(manager);
      assert.ok((sample(metrics, 'workloadspread_watcher_transitions_total', { cause: 'gone' }) ?? 0) > 0, 'resuming the watches met 410 and relisted');
      await assertScaleInOrder(ns);
      assert.deepEqual(log.lines.filter((l) => l.level === 'error'), []);
    } finally {
      await stopOnClock(env, manager);
    }
  });

  test('status-write conflicts: transient ones are retried quietly; persistent ones refuse the pod with a clear message until they stop', async () => {
    const { manager, log } = await startTestManager(env, { name: 'conflicts', leaderElection: { leaseName: 'conflicts' } });
    const control = env.cluster.apiServer.control;
    try {
      const ns = await spread('conflict');
      const transient = control.injectFault({ resource: 'workloadspreads', subresource: 'status', verb: 'update', namespace: ns, status: 409, times: 3 });
      await env.cluster.client.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { replicas: 8 } } }, { namespace: ns });
      await env.cluster.settle();
      // Fewer than the 4 conflicting writes an admission survives, whichever writer (webhook or controller) meets them.
      assert.equal(transient.hits, 3);
      await assertConverged(ns, 8);
      const metrics = await scrape(manager);
      assert.equal(sample(metrics, 'workloadspread_status_write_conflicts_total'), 3, 'every conflict counted once');
      assert.equal((await env.cluster.client.list(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'FailedCreate').length, 0, 'no pod creation failed');
      assert.deepEqual(log.lines.filter((l) => l.level === 'error' || l.level === 'warn'), [], 'conflicts are not logged as problems');

      // Back to 2 (a keeps 2, so a has room again), then conflicts on every write while scaling up: the reservations cannot be stored.
      await env.cluster.client.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { replicas: 2 } } }, { namespace: ns });
      await env.cluster.settle();
      assert.deepEqual(countBySubset(await activePods(ns)), { a: 2 });
      const persistent = control.injectFault({ resource: 'workloadspreads', subresource: 'status', verb: 'update', namespace: ns, status: 409 });
      await env.cluster.client.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { replicas: 8 } } }, { namespace: ns });
      await env.clock.advance(3_000);
      const failed = (await env.cluster.client.list(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'FailedCreate');
      assert.ok(failed.length > 0);
      assert.match(String(failed[0]?.['note']), /admission webhook "mpod\.workloadspread\.io" denied the request: .*conflicting writes/);
      assert.ok(log.lines.some((l) => l.level === 'warn' && /reservation was not stored/.test(l.message)));
      assert.deepEqual(log.lines.filter((l) => l.level === 'error'), [], 'still nothing logged as an error');
      assert.deepEqual(countBySubset(await activePods(ns)), { a: 2 }, 'no pod got in without its reservation');
      persistent.clear();
      await env.cluster.settle();
      await assertConverged(ns, 8);
    } finally {
      await stopOnClock(env, manager);
    }
  });
});
