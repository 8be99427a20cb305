/**
 * DomainDisruptionBudgets end to end (D14, issue 7): the real manager (its
 * webhook on every replica, the budget controller on the leader) against the
 * embedded cluster on a virtual clock, evictions through the Eviction API as
 * `kubectl drain` sends them. Pods are bare and pinned to nodes (two per zone
 * a, b, c) so the domains are known; a readiness gate keeps a pod Running
 * but not Ready; a finalizer keeps an evicted pod Terminating (so expected
 * counts do not drop while a test counts what was allowed). The manager of
 * the first suite runs with `--guard-pod-deletion`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { domainDisruptionBudgetCrd } from '../api/crd.ts';
import { DDB_API_VERSION, DDB_KIND, type DomainDisruptionBudget, type DomainDisruptionBudgetSpec, type DomainStatus } from '../api/disruption-budget.ts';
import { ApiError } from '../client/errors.ts';
import { BUILTIN } from '../client/resources.ts';
import { DDB_REF } from '../kube/budget-cache.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { settleUntil } from '../testing/eventually.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { workloadSpreadObject, ZONE_LABEL, zoneTerm } from '../testing/webhook-bed.ts';
import { onClock, sample, scrape, startForwarder, startManagerCluster, startTestManager, stopOnClock, type ManagerCluster, type TestManager } from '../testing/manager-bed.ts';

const GATE = 'example.com/serving';
const HOLD = 'example.com/hold';
/**
 * Containers of a deleted pod take this long to stop: an evicted pod stays
 * Terminating (expected in its domain, not healthy) long enough that no test
 * step races its finishing, which would shrink the domain.
 */
const STOP_SECONDS = 120;

interface PodOptions {
  notReady?: boolean;
  hold?: boolean;
  labels?: Record<string, string>;
  marker?: { name: string; subset: string };
}

function pinnedPod(namespace: string, name: string, node: string, options: PodOptions = {}): Pod {
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: options.labels ?? { app: 'web' } },
    spec: { nodeName: node, terminationGracePeriodSeconds: STOP_SECONDS, containers: [{ name: 'main', image: 'nginx:1.27' }] },
  };
  if (options.notReady === true) pod.spec.readinessGates = [{ conditionType: GATE }];
  if (options.hold === true) pod.metadata.finalizers = [HOLD];
  if (options.marker !== undefined) pod.metadata.annotations = { 'apps.kruise.io/matched-workloadspread': JSON.stringify(options.marker) };
  return pod;
}

function budgetObject(namespace: string, name: string, spec: Partial<DomainDisruptionBudgetSpec>): KubeObject {
  return { apiVersion: DDB_API_VERSION, kind: DDB_KIND, metadata: { name, namespace }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } };
}

type EvictOutcome = { ok: true } | { ok: false; code: number; message: string };

describe('DomainDisruptionBudgets with the manager (end to end)', () => {
  let env: ManagerCluster;
  let mgr: TestManager;

  before(async () => {
    env = await startManagerCluster({ podStopDelayMs: STOP_SECONDS * 1000 });
    const crd = await env.cluster.apiServer.control.create(domainDisruptionBudgetCrd() as KubeObject);
    assert.ok(crd.ok, JSON.stringify(!crd.ok && crd.status));
    await env.clock.quiesce();
    mgr = await startTestManager(env, { leaderElection: false, budgets: { guardPodDeletion: true } });
  });
  after(async () => {
    if (mgr !== undefined) await stopOnClock(env, mgr.manager);
    await env?.stop();
  });

  const client = () => env.cluster.client;

  async function evict(namespace: string, name: string, dryRun = false): Promise<EvictOutcome> {
    try {
      await onClock(env, client().evict(namespace, name, dryRun ? { dryRun: true } : {}));
      return { ok: true };
    } catch (err) {
      if (err instanceof ApiError) return { ok: false, code: err.code, message: err.status.message ?? '' };
      throw err;
    }
  }

  async function readBudget(namespace: string, name: string): Promise<DomainDisruptionBudget> {
    return client().get<DomainDisruptionBudget>(DDB_REF, name, { namespace });
  }

  function domain(b: DomainDisruptionBudget, name: string): DomainStatus {
    const d = b.status?.domains?.find((x) => x.name === name);
    assert.ok(d !== undefined, `no domain ${name} in ${JSON.stringify(b.status)}`);
    return d;
  }

  /** Creates the pods and the budget, and waits until every pod runs and the budget's status is current. */
  async function setUp(prefix: string, pods: Pod[], budgets: KubeObject[]): Promise<string> {
    const ns = await env.namespace(prefix);
    for (const p of pods) await client().create(BUILTIN.pods, { ...p, metadata: { ...p.metadata, namespace: ns } }, { namespace: ns });
    for (const b of budgets) await client().create(DDB_REF, { ...b, metadata: { ...(b['metadata'] as object), namespace: ns } }, { namespace: ns });
    await settleUntil(env.clock, async () => {
      const list = await client().list<Pod>(BUILTIN.pods, { namespace: ns });
      assert.ok(list.items.every((p) => p.status?.phase === 'Running'), 'pods not running yet');
      for (const b of budgets) {
        const stored = await readBudget(ns, String((b['metadata'] as { name: string }).name));
        assert.equal(stored.status?.observedGeneration, stored.metadata.generation, 'budget status not current yet');
        assert.equal(stored.status?.domains?.reduce((n, d) => n + d.expectedPods, 0), pods.length, 'budget status does not count every pod yet');
      }
    });
    return ns;
  }

  async function releaseHolds(ns: string): Promise<void> {
    const list = await client().list<Pod>(BUILTIN.pods, { namespace: ns });
    for (const p of list.items) {
      if ((p.metadata.finalizers ?? []).includes(HOLD)) await client().patch(BUILTIN.pods, p.metadata.name ?? '', { type: 'merge', body: { metadata: { finalizers: null } } }, { namespace: ns });
    }
  }

  const SIX = (options: (zone: string, i: number) => PodOptions = () => ({})) =>
    ['a', 'b', 'c'].flatMap((z) => [1, 2].map((i) => pinnedPod('', `${z}-${i}`, `${z}${i}`, options(z, i))));

  test('story 2 (maxUnavailable 1 per zone): one eviction per zone passes and is recorded, the next is refused with 429 naming the budget and the domain; dry runs are not recorded', async () => {
    const ns = await setUp('ddb-story2', SIX(() => ({ hold: true })), [budgetObject('', 'per-zone', { maxUnavailable: 1, topologyKey: ZONE_LABEL })]);
    let b = await readBudget(ns, 'per-zone');
    assert.deepEqual(
      b.status?.domains?.map((d) => [d.name, d.expectedPods, d.currentHealthy, d.desiredHealthy, d.disruptionsAllowed]),
      [['a', 2, 2, 1, 1], ['b', 2, 2, 1, 1], ['c', 2, 2, 1, 1]],
    );

    assert.deepEqual(await evict(ns, 'b-1', true), { ok: true }, 'a dry run is checked and passes');
    b = await readBudget(ns, 'per-zone');
    assert.equal(domain(b, 'b').disruptedPods, undefined, 'a dry run is not recorded');
    assert.equal(domain(b, 'b').disruptionsAllowed, 1);

    assert.deepEqual(await evict(ns, 'a-1'), { ok: true });
    const pod = await client().get<Pod>(BUILTIN.pods, 'a-1', { namespace: ns });
    assert.ok(pod.metadata.deletionTimestamp !== undefined, 'the evicted pod is being deleted');
    b = await readBudget(ns, 'per-zone');
    assert.equal(domain(b, 'a').disruptionsAllowed, 0);

    const refused = await evict(ns, 'a-2');
    assert.equal(refused.ok, false);
    assert.ok(!refused.ok);
    assert.equal(refused.code, 429, refused.message);
    assert.match(refused.message, new RegExp(`DomainDisruptionBudget ${ns}/per-zone`));
    assert.match(refused.message, /domain "a"/);
    assert.equal((await client().get<Pod>(BUILTIN.pods, 'a-2', { namespace: ns })).metadata.deletionTimestamp, undefined, 'the refused pod stays');

    assert.deepEqual(await evict(ns, 'a-1'), { ok: true }, 'a pod already terminating may be evicted again');
    assert.deepEqual(await evict(ns, 'b-2'), { ok: true }, 'zone b still had its disruption (the dry run spent nothing)');

    const text = await scrape(mgr.manager);
    assert.equal(sample(text, 'workloadspread_budget_evictions_total', { namespace: ns, budget: 'per-zone', result: 'denied' }), 1);
    assert.equal(sample(text, 'workloadspread_budget_evictions_total', { namespace: ns, budget: 'per-zone', result: 'allowed' }), 2);
    await releaseHolds(ns);
  });

  test('a pod that is not Ready is evicted without spending the domain\'s disruption (IfHealthyBudget)', async () => {
    const ns = await setUp(
      'ddb-notready',
      [pinnedPod('', 'a-1', 'a1', { hold: true }), pinnedPod('', 'a-2', 'a2', { hold: true }), pinnedPod('', 'a-3', 'a2', { hold: true, notReady: true })],
      [budgetObject('', 'per-zone', { maxUnavailable: 1, topologyKey: ZONE_LABEL })],
    );
    let b = await readBudget(ns, 'per-zone');
    assert.deepEqual([domain(b, 'a').expectedPods, domain(b, 'a').currentHealthy, domain(b, 'a').desiredHealthy, domain(b, 'a').disruptionsAllowed], [3, 2, 2, 0]);
    assert.deepEqual(await evict(ns, 'a-3'), { ok: true }, 'the unready pod goes while the domain keeps its desired healthy pods');
    b = await readBudget(ns, 'per-zone');
    assert.equal(domain(b, 'a').disruptedPods, undefined, 'nothing recorded for it');
    const refused = await evict(ns, 'a-1');
    assert.ok(!refused.ok && refused.code === 429, 'the healthy pods are still protected');
    await releaseHolds(ns);
  });

  test('a PodDisruptionBudget and a DomainDisruptionBudget together: both must allow', async () => {
    const ns = await setUp('ddb-pdb', SIX(() => ({ hold: true })), [budgetObject('', 'per-zone', { maxUnavailable: 1, topologyKey: ZONE_LABEL })]);
    await client().create(BUILTIN.poddisruptionbudgets, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'overall', namespace: ns },
      spec: { minAvailable: 5, selector: { matchLabels: { app: 'web' } } },
    }, { namespace: ns });
    await settleUntil(env.clock, async () => {
      const pdb = await client().get<KubeObject>(BUILTIN.poddisruptionbudgets, 'overall', { namespace: ns });
      assert.equal((pdb['status'] as { disruptionsAllowed?: number } | undefined)?.disruptionsAllowed, 1);
    });
    assert.deepEqual(await evict(ns, 'a-1'), { ok: true }, 'both allow');
    const byPdb = await evict(ns, 'b-1');
    assert.ok(!byPdb.ok && byPdb.code === 429, 'zone b allows one, the PodDisruptionBudget does not');
    assert.match(byPdb.message, /the pod's disruption budget/);
    const byDdb = await evict(ns, 'a-2');
    assert.ok(!byDdb.ok && byDdb.code === 429);
    assert.match(byDdb.message, /DomainDisruptionBudget .*per-zone.* domain "a"/, 'the webhook refuses first');
    // The webhook approved b-1 before the API server's PodDisruptionBudget refused it: the record holds
    // zone b's disruption until it expires (2 minutes, as a PDB's disruptedPods), then the controller frees it.
    const records = domain(await readBudget(ns, 'per-zone'), 'b').disruptedPods ?? {};
    assert.deepEqual(Object.keys(records), ['b-1']);
    // Measured from the approval's own time (the record's), which the calls above may have left behind.
    const approvedAt = Date.parse(records['b-1'] ?? '');
    assert.ok(Number.isFinite(approvedAt), `the record holds its approval time: ${JSON.stringify(records)}`);
    await settleUntil(env.clock, async () => {
      const d = domain(await readBudget(ns, 'per-zone'), 'b');
      assert.equal(d.disruptedPods, undefined);
      assert.equal(d.disruptionsAllowed, 1);
    }, { maxMs: 5 * 60_000 });
    assert.ok(env.clock.now() - approvedAt >= 2 * 60_000, 'not before the record expired');
    await releaseHolds(ns);
  });

  test('workloadSpreadRef: one domain per subset named by the pods\' markers (the WorkloadSpread missing is only a condition)', async () => {
    const ns = await setUp(
      'ddb-wsref',
      [
        pinnedPod('', 'p-1', 'a1', { hold: true, marker: { name: 'spread', subset: 'on-demand' } }),
        pinnedPod('', 'p-2', 'b1', { hold: true, marker: { name: 'spread', subset: 'on-demand' } }),
        pinnedPod('', 'p-3', 'c1', { hold: true, marker: { name: 'spread', subset: 'spot' } }),
        pinnedPod('', 'p-4', 'c2', { hold: true, marker: { name: 'spread', subset: 'spot' } }),
      ],
      [budgetObject('', 'per-subset', { maxUnavailable: 1, workloadSpreadRef: { name: 'spread' } })],
    );
    const b = await readBudget(ns, 'per-subset');
    assert.deepEqual(b.status?.domains?.map((d) => [d.name, d.expectedPods, d.disruptionsAllowed]), [['on-demand', 2, 1], ['spot', 2, 1]]);
    assert.deepEqual(b.status?.conditions?.find((c) => c.type === 'WorkloadSpreadFound')?.status, 'False');
    assert.deepEqual(await evict(ns, 'p-1'), { ok: true });
    const refused = await evict(ns, 'p-2');
    assert.ok(!refused.ok && refused.code === 429);
    assert.match(refused.message, /domain "on-demand"/);
    assert.deepEqual(await evict(ns, 'p-3'), { ok: true }, 'the other subset has its own budget');
    await client().create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, 'spread', {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      subsets: [
        { name: 'on-demand', requiredNodeSelectorTerm: zoneTerm('a') },
        { name: 'reserve', requiredNodeSelectorTerm: zoneTerm('b') },
        { name: 'spot', requiredNodeSelectorTerm: zoneTerm('c') },
      ],
    }), { namespace: ns });
    await settleUntil(env.clock, async () => {
      const found = await readBudget(ns, 'per-subset');
      assert.equal(found.status?.conditions?.find((c) => c.type === 'WorkloadSpreadFound')?.status, 'True');
      // (the evicted p-1 and p-3 may have finished by now: only the domains and the empty one are certain)
      assert.deepEqual(found.status?.domains?.map((d) => d.name), ['on-demand', 'reserve', 'spot'], 'a subset without pods is a domain too, in subset order');
      assert.equal(domain(found, 'reserve').expectedPods, 0);
    });
    await releaseHolds(ns);
  });

  test('fail closed: an approval whose record cannot be stored is refused, never waved through', async () => {
    const ns = await setUp('ddb-faults', SIX(() => ({ hold: true })), [budgetObject('', 'per-zone', { maxUnavailable: 1, topologyKey: ZONE_LABEL })]);
    const conflicts = env.cluster.apiServer.control.injectFault({ resource: 'domaindisruptionbudgets', verb: 'update', subresource: 'status', namespace: ns, status: 409 });
    try {
      const refused = await evict(ns, 'a-1');
      assert.ok(!refused.ok, 'refused');
      assert.equal(refused.code, 429);
      assert.match(refused.message, /could not be recorded/);
      assert.ok(conflicts.hits >= 4, `the write was retried (${conflicts.hits} attempts)`);
    } finally {
      conflicts.clear();
    }
    const errors = env.cluster.apiServer.control.injectFault({ resource: 'domaindisruptionbudgets', verb: 'update', subresource: 'status', namespace: ns, status: 500 });
    try {
      const refused = await evict(ns, 'b-1');
      assert.ok(!refused.ok);
      assert.equal(refused.code, 500);
      assert.match(refused.message, /DomainDisruptionBudget .*per-zone/);
    } finally {
      errors.clear();
    }
    for (const name of ['a-1', 'b-1']) assert.equal((await client().get<Pod>(BUILTIN.pods, name, { namespace: ns })).metadata.deletionTimestamp, undefined, `${name} stays`);
    assert.deepEqual(await evict(ns, 'a-1'), { ok: true }, 'once the writes succeed again, the eviction passes');
    const text = await scrape(mgr.manager);
    assert.equal(sample(text, 'workloadspread_budget_evictions_total', { namespace: ns, budget: 'per-zone', result: 'failed' }), 2);
    await releaseHolds(ns);
  });

  test('--guard-pod-deletion: a plain DELETE of a protected pod is refused with 429 like an eviction; a pod already approved by an eviction may be deleted', async () => {
    const ns = await setUp('ddb-guard', SIX(() => ({ hold: true })), [budgetObject('', 'per-zone', { maxUnavailable: 1, topologyKey: ZONE_LABEL })]);
    await client().delete(BUILTIN.pods, 'a-1', { namespace: ns });
    const refused = await client().delete(BUILTIN.pods, 'a-2', { namespace: ns }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(refused instanceof ApiError, 'the second delete in zone a is refused');
    assert.equal(refused.code, 429);
    assert.match(refused.status.message ?? '', new RegExp(`DomainDisruptionBudget ${ns}/per-zone in domain "a"`));
    assert.deepEqual(await evict(ns, 'b-1', false), { ok: true });
    await client().delete(BUILTIN.pods, 'b-1', { namespace: ns });
    await releaseHolds(ns);
  });

  test('a node without the topology label: its pods form the domain <none>; labelling the node moves them into their zone', async () => {
    const added = await env.cluster.addNodes([{ name: 'nozone1', labels: {} }]);
    assert.ok(added.ok, JSON.stringify(added));
    const ns = await setUp(
      'ddb-nozone',
      [pinnedPod('', 'c-1', 'c1', { hold: true }), pinnedPod('', 'c-2', 'c2', { hold: true }), pinnedPod('', 'n-1', 'nozone1', { hold: true }), pinnedPod('', 'n-2', 'nozone1', { hold: true })],
      [budgetObject('', 'per-zone', { maxUnavailable: 1, topologyKey: ZONE_LABEL })],
    );
    let b = await readBudget(ns, 'per-zone');
    assert.deepEqual(b.status?.domains?.map((d) => [d.name, d.expectedPods, d.disruptionsAllowed]), [['<none>', 2, 1], ['c', 2, 1]]);
    assert.deepEqual(await evict(ns, 'n-1'), { ok: true });
    const refused = await evict(ns, 'n-2');
    assert.ok(!refused.ok && refused.code === 429);
    assert.match(refused.message, /domain <none>/);
    await client().patch(BUILTIN.nodes, 'nozone1', { type: 'merge', body: { metadata: { labels: { [ZONE_LABEL]: 'c' } } } });
    await settleUntil(env.clock, async () => {
      b = await readBudget(ns, 'per-zone');
      assert.deepEqual(b.status?.domains?.map((d) => [d.name, d.expectedPods]), [['c', 4]]);
    });
    await releaseHolds(ns);
  });

  test('a domain blocked for longer than the threshold gets a DisruptionBlocked Warning, and DisruptionUnblocked once it recovers', async () => {
    const ns = await setUp(
      'ddb-events',
      [pinnedPod('', 'a-1', 'a1'), pinnedPod('', 'a-2', 'a2', { notReady: true })],
      [budgetObject('', 'per-zone', { maxUnavailable: 1, topologyKey: ZONE_LABEL })],
    );
    assert.equal(domain(await readBudget(ns, 'per-zone'), 'a').disruptionsAllowed, 0);
    const settled = await env.cluster.settle();
    assert.ok(settled.elapsedMs < 5 * 60_000, `settle() does not wait for a Warning that may become due (it ran ${settled.elapsedMs} virtual ms)`);
    const events = async () => (await client().list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items;
    const reasons = async () => (await events()).map((e) => `${String(e['type'])}/${String(e['reason'])}`);
    await env.clock.advance(5 * 60_000);
    assert.ok(!(await reasons()).includes('Warning/DisruptionBlocked'), 'not before the threshold');
    await settleUntil(env.clock, async () => assert.ok((await reasons()).includes('Warning/DisruptionBlocked')), { maxMs: 10 * 60_000 });
    const warning = (await events()).find((e) => e['reason'] === 'DisruptionBlocked');
    assert.match(String(warning?.['note']), /domain "a"/);
    assert.equal((warning?.['regarding'] as { kind?: string } | undefined)?.kind, DDB_KIND);
    await client().delete(BUILTIN.pods, 'a-2', { namespace: ns });
    await settleUntil(env.clock, async () => assert.ok((await reasons()).includes('Normal/DisruptionUnblocked')), { maxMs: 5 * 60_000 });
  });
});

describe('DomainDisruptionBudgets with two manager replicas behind one webhook URL', () => {
  test('50 concurrent evictions against a budget allowing 1 per zone: exactly one per zone passes', async (t) => {
    const env = await startManagerCluster({ podStopDelayMs: STOP_SECONDS * 1000 });
    const forwarder = await startForwarder();
    const managers: TestManager[] = [];
    try {
      const crd = await env.cluster.apiServer.control.create(domainDisruptionBudgetCrd() as KubeObject);
      assert.ok(crd.ok);
      for (const name of ['manager-0', 'manager-1']) managers.push(await startTestManager(env, { name, url: forwarder.url, waitReady: true }));
      forwarder.setBackends(managers.map((m) => m.manager.endpoints().webhook ?? ''));
      const client = env.cluster.client;
      const ns = await env.namespace('ddb-ha');
      const nodes = ['a1', 'a2', 'b1', 'b2', 'c1', 'c2'];
      const names: string[] = [];
      for (let i = 0; i < 50; i++) {
        const node = nodes[i % nodes.length] ?? 'a1';
        const name = `w-${i}`;
        names.push(name);
        await client.create(BUILTIN.pods, pinnedPod(ns, name, node, { hold: true }), { namespace: ns });
      }
      await client.create(DDB_REF, budgetObject(ns, 'per-zone', { maxUnavailable: 1, topologyKey: ZONE_LABEL }), { namespace: ns });
      await settleUntil(env.clock, async () => {
        const b = await client.get<DomainDisruptionBudget>(DDB_REF, 'per-zone', { namespace: ns });
        assert.deepEqual(b.status?.domains?.map((d) => [d.name, d.currentHealthy, d.disruptionsAllowed]), [['a', 18, 1], ['b', 16, 1], ['c', 16, 1]]);
      });

      const outcomes = await onClock(
        env,
        Promise.all(
          names.map((name) =>
            client.evict(ns, name).then(
              () => ({ name, ok: true as const }),
              (err: unknown) => ({ name, ok: false as const, code: err instanceof ApiError ? err.code : 0 }),
            ),
          ),
        ),
      );
      const passed = outcomes.filter((o) => o.ok).map((o) => o.name);
      const zoneOf = (name: string) => (nodes[Number(name.slice(2)) % nodes.length] ?? '').slice(0, 1);
      assert.deepEqual(passed.map(zoneOf).sort(), ['a', 'b', 'c'], `passed: ${passed.join(', ')}`);
      assert.ok(outcomes.filter((o) => !o.ok).every((o) => !o.ok && o.code === 429), 'every other one was refused with 429');
      const both = managers.every((m) => (forwarder.connections.get(m.manager.endpoints().webhook ?? '') ?? 0) > 0);
      assert.ok(both, 'both replicas answered admissions');
      const b = await client.get<DomainDisruptionBudget>(DDB_REF, 'per-zone', { namespace: ns });
      assert.deepEqual(b.status?.domains?.map((d) => d.disruptionsAllowed), [0, 0, 0]);
      let writes = 0;
      let conflicts = 0;
      for (const m of managers) {
        const text = await scrape(m.manager);
        writes += sample(text, 'workloadspread_budget_status_writes_total', { source: 'webhook' }) ?? 0;
        conflicts += sample(text, 'workloadspread_budget_status_writes_total', { source: 'webhook', result: 'Conflict' }) ?? 0;
      }
      t.diagnostic(`budget status writes by the webhooks: ${writes} (${conflicts} conflicts) for 50 evictions, 3 allowed`);
      const list = await client.list<Pod>(BUILTIN.pods, { namespace: ns });
      assert.equal(list.items.filter((p) => p.metadata.deletionTimestamp !== undefined).length, 3, 'three pods are going, no more');
      for (const p of list.items) await client.patch(BUILTIN.pods, p.metadata.name ?? '', { type: 'merge', body: { metadata: { finalizers: null } } }, { namespace: ns });
    } finally {
      for (const m of managers) await stopOnClock(env, m.manager);
      await forwarder.close();
      await env.stop();
    }
  });
});
