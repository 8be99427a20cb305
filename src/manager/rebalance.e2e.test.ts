/**
 * Rebalancing (D18) with the whole manager on the embedded cluster, on the
 * virtual clock — the parts the example scenarios cannot show as plainly:
 *
 * - a WorkloadSpread without the annotation never gets an eviction: a limit
 *   lowered below its pods changes costs only (as the reference), no pod is
 *   replaced, no status.rebalance, no event; the same WorkloadSpread with the
 *   annotation moves its surplus; switched off again, status.rebalance goes;
 * - a PodDisruptionBudget that refuses (429) stops the move: the pods stay,
 *   status.rebalance says EvictionRefused with the budget's message, one
 *   RebalanceBlocked Warning however many attempts back off; once the budget
 *   allows, the move resumes and completes.
 * Zones a, b, c have two nodes each (testing/webhook-bed.ts).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RebalanceStatus, Subset } from '../api/workloadspread.ts';
import { BUILTIN } from '../client/resources.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { settleUntil } from '../testing/eventually.ts';
import { sample, scrape, startManagerCluster, startTestManager, stopOnClock, type ManagerCluster, type TestManager } from '../testing/manager-bed.ts';
import { countBySubset, deployment, podsOf, readSpread, workloadSpreadObject, zoneTerm } from '../testing/webhook-bed.ts';

const REBALANCE = 'workloadspread.io/rebalance';

describe('rebalancing with the whole manager', () => {
  let env: ManagerCluster;
  let m: TestManager;
  before(async () => {
    env = await startManagerCluster({ budgetCrd: true });
    m = await startTestManager(env, { name: 'rebalance', leaderElection: false });
  });
  after(async () => {
    if (m !== undefined) await stopOnClock(env, m.manager);
    await env?.stop();
  });

  const client = () => env.cluster.client;
  const subsets = (aLimit: number): Subset[] => [
    { name: 'a', maxReplicas: aLimit, requiredNodeSelectorTerm: zoneTerm('a') },
    { name: 'b', maxReplicas: 4, requiredNodeSelectorTerm: zoneTerm('b') },
    { name: 'c', requiredNodeSelectorTerm: zoneTerm('c') },
  ];

  /** A Deployment of 8 spread a 4 / b 4 / c 0, every pod Ready; `annotations` on the WorkloadSpread. */
  async function setUp(prefix: string, annotations: Record<string, string> = {}): Promise<string> {
    const ns = await env.namespace(prefix);
    const ws = workloadSpreadObject(ns, 'spread', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: subsets(4) });
    (ws['metadata'] as { annotations?: Record<string, string> }).annotations = annotations;
    await client().create(WORKLOADSPREAD_REF, ws);
    await env.clock.quiesce();
    await client().create(BUILTIN.deployments, deployment(ns, 'web', 8), { namespace: ns });
    await settleUntil(env.clock, async () => {
      const pods = await podsOf(client(), ns);
      assert.deepEqual(countBySubset(pods), { a: 4, b: 4 });
      assert.equal(pods.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length, 8);
    });
    return ns;
  }

  const lowerA = (ns: string, limit: number) => client().patch(WORKLOADSPREAD_REF, 'spread', { type: 'json', ops: [{ op: 'replace', path: '/spec/subsets/0/maxReplicas', value: limit }] }, { namespace: ns });
  const annotate = (ns: string, value: string | null) => client().patch(WORKLOADSPREAD_REF, 'spread', { type: 'merge', body: { metadata: { annotations: { [REBALANCE]: value } } } }, { namespace: ns });
  const uids = async (ns: string) => (await podsOf(client(), ns)).map((p) => p.metadata.uid).sort();
  const rebalanceOf = async (ns: string): Promise<RebalanceStatus | undefined> => (await readSpread(client(), ns, 'spread')).status?.rebalance;
  const events = async (ns: string, reason: string) => (await client().list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === reason);
  const seriesCount = (e: KubeObject) => ((e['series'] as { count?: number } | undefined)?.count ?? 1);

  test('without the annotation a lowered limit never evicts a pod; with it the surplus moves; switched off, its status goes', async () => {
    const ns = await setUp('rb-off');
    const before = await uids(ns);
    await lowerA(ns, 2);
    await settleUntil(env.clock, async () => {
      const ws = await readSpread(client(), ns, 'spread');
      assert.equal(ws.status?.observedGeneration, ws.metadata.generation, 'the controller saw the new limit');
      assert.equal(ws.status?.subsetStatuses?.[0]?.missingReplicas, 0);
    });
    await env.clock.advance(10 * 60_000);
    await env.clock.quiesce();
    assert.deepEqual(await uids(ns), before, 'no pod was evicted or replaced');
    assert.deepEqual(countBySubset(await podsOf(client(), ns)), { a: 4, b: 4 });
    assert.equal(await rebalanceOf(ns), undefined, 'no status.rebalance');
    assert.deepEqual([...(await events(ns, 'Rebalancing')), ...(await events(ns, 'RebalanceBlocked'))], []);
    assert.equal(sample(await scrape(m.manager), 'workloadspread_rebalance_evictions_total', { namespace: ns, workloadspread: 'spread', result: 'evicted' }), undefined);

    await annotate(ns, 'true');
    await settleUntil(env.clock, async () => {
      assert.deepEqual(countBySubset(await podsOf(client(), ns)), { a: 2, b: 4, c: 2 });
      assert.equal((await rebalanceOf(ns))?.reason, 'Balanced');
    });
    assert.equal((await events(ns, 'Rebalancing')).length, 2);
    const text = await scrape(m.manager);
    assert.equal(sample(text, 'workloadspread_rebalance_evictions_total', { namespace: ns, workloadspread: 'spread', result: 'evicted' }), 2);
    assert.equal(sample(text, 'workloadspread_rebalance_pending_pods', { namespace: ns, workloadspread: 'spread' }), 0);

    await annotate(ns, 'false');
    await settleUntil(env.clock, async () => assert.equal(await rebalanceOf(ns), undefined, 'status.rebalance removed'));
    assert.equal(sample(await scrape(m.manager), 'workloadspread_rebalance_pending_pods', { namespace: ns, workloadspread: 'spread' }), undefined, 'its series dropped');
  });

  test('a PodDisruptionBudget refusing (429) stops the move — one Warning, whatever the retries — and it resumes once the budget allows', async () => {
    const ns = await setUp('rb-pdb', { [REBALANCE]: 'true' });
    await client().create(BUILTIN.poddisruptionbudgets, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web-pdb', namespace: ns },
      spec: { minAvailable: 8, selector: { matchLabels: { app: 'web' } } },
    }, { namespace: ns });
    await settleUntil(env.clock, async () => {
      const pdb = await client().get<KubeObject>(BUILTIN.poddisruptionbudgets, 'web-pdb', { namespace: ns });
      assert.equal((pdb['status'] as { expectedPods?: number } | undefined)?.expectedPods, 8);
    });
    const before = await uids(ns);

    await lowerA(ns, 2);
    await settleUntil(env.clock, async () => assert.equal((await rebalanceOf(ns))?.reason, 'EvictionRefused'), { maxMs: 60_000 });
    const refused = await rebalanceOf(ns);
    assert.equal(refused?.pending, 2);
    assert.deepEqual(refused?.moves, undefined, 'nothing in flight');
    assert.match(refused?.message ?? '', /^the eviction of pod rb-pdb-\d+\/web-[a-z0-9-]+ \(subset a → subset c\) was refused: .*disruption budget/);

    // Minutes of refusals, backing off: the pods stay, the Warning is recorded once.
    await env.clock.advance(5 * 60_000);
    await env.clock.quiesce();
    assert.deepEqual(await uids(ns), before, 'a refused eviction evicts nothing');
    const text = await scrape(m.manager);
    const refusals = sample(text, 'workloadspread_rebalance_evictions_total', { namespace: ns, workloadspread: 'spread', result: 'refused' }) ?? 0;
    assert.ok(refusals >= 3 && refusals <= 8, `retried with back-off (5 s doubling to 2 min): ${refusals} attempts in ~5 minutes`);
    const blocked = await events(ns, 'RebalanceBlocked');
    assert.equal(blocked.length, 1);
    assert.equal(seriesCount(blocked[0] as KubeObject), 1, 'recorded once, not once per attempt');
    assert.match(String((blocked[0] as KubeObject)['note']), /is blocked \(EvictionRefused\): the eviction of pod .* was refused/);
    assert.deepEqual(await events(ns, 'Rebalancing'), []);

    // The budget allows one disruption: the moves go through, one at a time.
    await client().patch(BUILTIN.poddisruptionbudgets, 'web-pdb', { type: 'merge', body: { spec: { minAvailable: 7 } } }, { namespace: ns });
    await settleUntil(env.clock, async () => {
      assert.deepEqual(countBySubset(await podsOf(client(), ns)), { a: 2, b: 4, c: 2 });
      assert.equal((await rebalanceOf(ns))?.reason, 'Balanced');
    });
    assert.equal((await events(ns, 'Rebalancing')).length, 2);
    const after = await scrape(m.manager);
    assert.equal(sample(after, 'workloadspread_rebalance_evictions_total', { namespace: ns, workloadspread: 'spread', result: 'evicted' }), 2);
    const pods: Pod[] = await podsOf(client(), ns);
    assert.equal(pods.filter((p) => p.metadata.deletionTimestamp === undefined).length, 8);
  });
});
