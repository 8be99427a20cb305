/**
 * Two manager replicas sharing one cluster, as the Helm chart runs them:
 * both serve the webhooks (behind one URL, connections dealt in turn, as a
 * Service would), one leads and runs the controller.
 *
 * - a Deployment scaled from 0 to 500 (the ReplicaSet controller creates the
 *   pods in parallel batches of up to 245): no subset ends above
 *   its limit (optimistic concurrency between the replicas' group commits),
 *   the status agrees with the pods, both replicas answered admissions, and
 *   only the leader reconciled;
 * - the leader dies without giving up its lease: the other replica takes
 *   over only once the lease has expired (15 s of virtual time), and then
 *   reconciles a change;
 * - a CloneSet under percentage limits scaled 10 → 50: both replicas size
 *   the limits at 50 (D22) while the leader still waits for the CloneSet to
 *   report its generation observed; every pod placed, no subset above its limit.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { KubeObject } from '../k8s/types.ts';
import { BUILTIN } from '../client/resources.ts';
import { CLONESET_REF, WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { settleUntil } from '../testing/eventually.ts';
import { countBySubset, deployment, podsOf, readSpread, workloadSpreadObject, zoneTerm } from '../testing/webhook-bed.ts';
import { sample, scrape, startForwarder, startManagerCluster, startTestManager, stopOnClock, type Forwarder, type ManagerCluster, type TestManager } from '../testing/manager-bed.ts';

describe('two manager replicas', () => {
  let env: ManagerCluster;
  let forwarder: Forwarder;
  before(async () => {
    env = await startManagerCluster({ budgetCrd: true });
    forwarder = await startForwarder();
  });
  after(async () => {
    await forwarder?.close();
    await env?.stop();
  });

  /** Starts replicas a and b behind the forwarder (a first, so a leads). */
  async function twoReplicas(leaseName: string, releaseOnStop = true): Promise<[TestManager, TestManager]> {
    const a = await startTestManager(env, { name: `${leaseName}-a`, url: forwarder.url, leaderElection: { leaseName, releaseOnStop } });
    forwarder.setBackends([a.manager.endpoints().webhook ?? '']);
    await settleUntil(env.clock, () => assert.ok(a.manager.isLeader(), 'a is not leading yet'));
    const b = await startTestManager(env, { name: `${leaseName}-b`, url: forwarder.url, leaderElection: { leaseName, releaseOnStop } });
    forwarder.setBackends([a.manager.endpoints().webhook ?? '', b.manager.endpoints().webhook ?? '']);
    return [a, b];
  }

  test('500 pods created at once (a Deployment of 500): no subset above its limit, the status agrees, both replicas admitted, only the leader reconciled', async (t) => {
    const [a, b] = await twoReplicas('burst-lease');
    try {
      const ns = await env.namespace('burst');
      await env.cluster.client.create(
        WORKLOADSPREAD_REF,
        workloadSpreadObject(ns, 'spread', {
          targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          subsets: [
            { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 150 },
            { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: 150 },
            { name: 'c', requiredNodeSelectorTerm: zoneTerm('c') },
          ],
        }),
      );
      await env.clock.quiesce();
      // The ReplicaSet controller creates the 500 pods in one sync, its slow-start batches (…, 128, 245) all in parallel.
      await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 500));
      await env.cluster.settle();

      const pods = await podsOf(env.cluster.client, ns);
      const counts = countBySubset(pods);
      // A creation the API server gave up on after our webhook had reserved quota for it (its call to
      // the webhook timed out on a starved machine) leaves that reservation until it expires, and the
      // ReplicaSet's next pod goes to the next subset — as upstream. Each such slot is one FailedCreate.
      const failed = (await env.cluster.client.list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items
        .filter((e) => e['reason'] === 'FailedCreate')
        .reduce((n, e) => n + ((e['series'] as { count?: number } | undefined)?.count ?? 1), 0);
      const [ca, cb, cc] = [counts['a'] ?? 0, counts['b'] ?? 0, counts['c'] ?? 0];
      assert.ok(ca <= 150 && cb <= 150 && ca + cb + cc === 500, `no subset above its limit, every pod placed: ${JSON.stringify(counts)}`);
      assert.ok(300 - ca - cb <= failed, `a and b full but for abandoned reservations: ${JSON.stringify(counts)}, ${failed} failed creation(s)`);
      if (failed === 0) assert.deepEqual(counts, { a: 150, b: 150, c: 200 }, 'as stored after settling');
      for (const p of pods) assert.match(p.spec?.nodeName ?? '', new RegExp(`^${p.metadata.annotations?.['apps.kruise.io/matched-workloadspread']?.match(/"subset":"(\w)"/)?.[1] ?? '?'}[12]$`), `${p.metadata.name} runs in its subset's zone`);
      const ws: WorkloadSpread = await readSpread(env.cluster.client, ns, 'spread');
      assert.deepEqual(
        (ws.status?.subsetStatuses ?? []).map((s) => [s.name, s.replicas, s.missingReplicas, Object.keys(s.creatingPods ?? {}).length]),
        [
          ['a', ca, 150 - ca, 0],
          ['b', cb, 150 - cb, 0],
          ['c', cc, -1, 0],
        ],
        'the status agrees with the pods',
      );

      const [ma, mb] = [await scrape(a.manager), await scrape(b.manager)];
      const admitted = (m: string) => sample(m, 'workloadspread_admission_duration_seconds_count', { webhook: '/mutate-pod' }) ?? 0;
      assert.ok(admitted(ma) + admitted(mb) >= 500 && admitted(ma) + admitted(mb) <= 500 + failed, `every creation admitted once, plus the retries of failed ones (${admitted(ma) + admitted(mb)})`);
      assert.ok(admitted(ma) > 0 && admitted(mb) > 0, `both replicas admitted (a ${admitted(ma)}, b ${admitted(mb)})`);
      assert.ok(a.manager.isLeader() && !b.manager.isLeader());
      assert.ok((sample(ma, 'controller_runtime_reconcile_total', { result: 'success' }) ?? 0) > 0, 'the leader reconciled');
      assert.equal(sample(mb, 'controller_runtime_reconcile_total'), 0, 'the follower never reconciled');
      assert.equal(sample(mb, 'workloadspread_status_writes_total', { source: 'controller' }) ?? 0, 0);
      assert.equal(sample(ma, 'leader_election_master_status', { name: 'burst-lease' }), 1);
      assert.equal(sample(mb, 'leader_election_master_status', { name: 'burst-lease' }), 0);
      // Group commit (D13): far fewer reservation writes than admissions, even across two replicas.
      const writes = (sample(ma, 'workloadspread_status_writes_total', { source: 'webhook', result: 'ok' }) ?? 0) + (sample(mb, 'workloadspread_status_writes_total', { source: 'webhook', result: 'ok' }) ?? 0);
      assert.ok(writes < 250, `${writes} reservation writes for 300 limited admissions`);
      t.diagnostic(`admissions a=${admitted(ma)} b=${admitted(mb)}; failed creations ${failed}; spread ${JSON.stringify(counts)}; reservation writes ${writes}; conflicts ${sample(ma, 'workloadspread_status_write_conflicts_total')}+${sample(mb, 'workloadspread_status_write_conflicts_total')}`);
    } finally {
      forwarder.setBackends([]);
      await stopOnClock(env, b.manager);
      await stopOnClock(env, a.manager);
    }
  });

  test('D22: a CloneSet under 20/20/60 % scaled 10 → 50 through both replicas: every pod placed by the limits at 50', async () => {
    const [a, b] = await twoReplicas('scale-out-lease');
    try {
      const ns = await env.namespace('ha-scale-out');
      await env.cluster.client.create(
        WORKLOADSPREAD_REF,
        workloadSpreadObject(ns, 'spread', {
          targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' },
          subsets: [
            { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: '20%' },
            { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: '20%' },
            { name: 'c', requiredNodeSelectorTerm: zoneTerm('c'), maxReplicas: '60%' },
          ],
        }),
      );
      await env.clock.quiesce();
      await env.cluster.client.create(CLONESET_REF, { ...deployment(ns, 'web', 10), apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet' }, { namespace: ns });
      await env.cluster.settle();
      assert.deepEqual(countBySubset(await podsOf(env.cluster.client, ns)), { a: 2, b: 2, c: 6 });
      const before = [await scrape(a.manager), await scrape(b.manager)];
      await env.cluster.client.scale(CLONESET_REF, 'web', 50, { namespace: ns });
      await env.cluster.settle();
      const pods = (await podsOf(env.cluster.client, ns)).filter((p) => p.metadata.deletionTimestamp === undefined);
      assert.equal(pods.length, 50);
      assert.deepEqual(countBySubset(pods), { a: 10, b: 10, c: 30 });
      const unplaced = (await env.cluster.client.list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'NoSubsetAvailable');
      assert.equal(unplaced.length, 0);
      const admitted = (m: string) => sample(m, 'workloadspread_admission_duration_seconds_count', { webhook: '/mutate-pod' }) ?? 0;
      const [ma, mb] = [await scrape(a.manager), await scrape(b.manager)];
      assert.ok(admitted(ma) > admitted(before[0] ?? '') && admitted(mb) > admitted(before[1] ?? ''), 'both replicas admitted pods of the scale-out');
    } finally {
      forwarder.setBackends([]);
      await stopOnClock(env, b.manager);
      await stopOnClock(env, a.manager);
    }
  });

  test('the leader dies holding the lease: the other replica leads only after the lease expired, then reconciles', async () => {
    const [a, b] = await twoReplicas('takeover-lease', false);
    try {
      const ns = await env.namespace('takeover');
      await env.cluster.client.create(
        WORKLOADSPREAD_REF,
        workloadSpreadObject(ns, 'spread', {
          targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          subsets: [
            { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 2 },
            { name: 'b', requiredNodeSelectorTerm: zoneTerm('b') },
          ],
        }),
      );
      // Both webhooks must see the WorkloadSpread before the first pod is admitted (otherwise the pod is
      // admitted unplaced and adopted later by its node, which may be in either zone).
      await env.clock.quiesce();
      await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 3));
      await env.cluster.settle();
      assert.deepEqual((await readSpread(env.cluster.client, ns, 'spread')).status?.subsetStatuses?.map((s) => s.replicas), [2, 1]);

      // Killed: its endpoint leaves the Service, the lease stays with it.
      forwarder.setBackends([b.manager.endpoints().webhook ?? '']);
      const killedAt = env.clock.now();
      await stopOnClock(env, a.manager);
      let tookOverAt: number | undefined;
      await settleUntil(env.clock, () => {
        assert.ok(b.manager.isLeader(), 'b is not leading yet');
        tookOverAt ??= env.clock.now();
      }, { maxMs: 60_000 });
      const waited = (tookOverAt ?? 0) - killedAt;
      // b counts the 15 s from when IT last saw the lease change, and polls every 2 s plus up to 1.2× jitter
      // (client-go's): at most 4.4 s to see a's last renewal, 15 s, then at most 4.4 s to its next try.
      assert.ok(waited >= 13_000 && waited <= 24_000, `b took over ${waited} ms after the kill (lease 15 s, renewed every 2 s, tries every 2–4.4 s)`);

      await env.cluster.client.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { replicas: 5 } } }, { namespace: ns });
      await env.cluster.settle();
      const ws = await readSpread(env.cluster.client, ns, 'spread');
      assert.deepEqual(ws.status?.subsetStatuses?.map((s) => [s.name, s.replicas, s.missingReplicas]), [['a', 2, 0], ['b', 3, -1]]);
      const costs = (await podsOf(env.cluster.client, ns)).map((p) => p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost']).sort();
      assert.deepEqual(costs, ['100', '100', '100', '200', '200']);
      assert.ok((sample(await scrape(b.manager), 'controller_runtime_reconcile_total', { result: 'success' }) ?? 0) > 0, 'the new leader reconciled');
    } finally {
      forwarder.setBackends([]);
      await stopOnClock(env, b.manager);
      // Already stopped when the test got that far (stop() is idempotent); still running after a failure.
      await stopOnClock(env, a.manager);
    }
  });
});
