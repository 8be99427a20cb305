/**
 * Benchmark: what DomainDisruptionBudgets (D14) cost an eviction. The real
 * manager (webhook + budget controller) on the embedded cluster (virtual
 * clock; wall time measured), N pods pinned round-robin to six nodes (zones a, b, c) and
 * held by a finalizer, all evicted through the Eviction API with
 * `concurrency` in flight, in three settings (a fresh namespace each, after a warm-up round):
 * - no budget: the eviction path with the webhook's WorkloadSpread
 *   bookkeeping only;
 * - a budget per zone that allows every eviction (maxUnavailable 100%):
 *   every eviction is recorded in the budget's status (group-committed);
 * - a budget that allows none (maxUnavailable 0): every eviction is refused
 *   with 429, nothing written.
 * Prints ms per eviction, the ratio to the first setting, and the budget
 * status writes the webhook made (figures only, no assertions).
 *
 * Run:  node --import tsx bench/budget-evictions.ts [pods=200] [concurrency=16]
 *       (or `npm run bench budget-evictions`)
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { domainDisruptionBudgetCrd } from '../src/api/crd.ts';
import { DDB_API_VERSION, DDB_KIND, type DomainDisruptionBudget } from '../src/api/disruption-budget.ts';
import { ApiError } from '../src/client/errors.ts';
import { BUILTIN } from '../src/client/resources.ts';
import { DDB_REF } from '../src/kube/budget-cache.ts';
import type { KubeObject, Pod } from '../src/k8s/types.ts';
import { onClock, sample, scrape, startManagerCluster, startTestManager, stopOnClock } from '../src/testing/manager-bed.ts';
import { settleUntil } from '../src/testing/eventually.ts';
import { ZONE_LABEL } from '../src/testing/webhook-bed.ts';

const PODS = Number(process.argv[2] ?? 200);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const NODES = ['a1', 'a2', 'b1', 'b2', 'c1', 'c2'];
const HOLD = 'example.com/hold';

async function main(): Promise<void> {
  const env = await startManagerCluster({ podStopDelayMs: 600_000 });
  const crd = await env.cluster.apiServer.control.create(domainDisruptionBudgetCrd() as KubeObject);
  if (!crd.ok) throw new Error(JSON.stringify(crd.status));
  const mgr = await startTestManager(env, { leaderElection: false });
  const client = env.cluster.client;
  const results: { name: string; msPer: number; allowed: number; refused: number; writes: number }[] = [];
  let writesBefore = 0;
  try {
    for (const [name, maxUnavailable] of [['warm-up', undefined], ['no budget', undefined], ['budget allows all', '100%'], ['budget allows none', 0]] as const) {
      const ns = await env.namespace('bench');
      for (let i = 0; i < PODS; i++) {
        const pod: Pod = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `p-${i}`, namespace: ns, labels: { app: 'web' }, finalizers: [HOLD] },
          spec: { nodeName: NODES[i % NODES.length] ?? 'a1', terminationGracePeriodSeconds: 600, containers: [{ name: 'main', image: 'nginx:1.27' }] },
        };
        await client.create(BUILTIN.pods, pod, { namespace: ns });
      }
      if (maxUnavailable !== undefined) {
        await client.create(DDB_REF, { apiVersion: DDB_API_VERSION, kind: DDB_KIND, metadata: { name: 'per-zone', namespace: ns }, spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable, topologyKey: ZONE_LABEL } }, { namespace: ns });
      }
      await settleUntil(env.clock, async () => {
        const pods = await client.list<Pod>(BUILTIN.pods, { namespace: ns });
        if (!pods.items.every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))) throw new Error('pods not ready');
        if (maxUnavailable === undefined) return;
        const b = await client.get<DomainDisruptionBudget>(DDB_REF, 'per-zone', { namespace: ns });
        if (b.status?.domains?.reduce((n, d) => n + d.currentHealthy, 0) !== PODS) throw new Error('budget not current');
      });
      let next = 0;
      let allowed = 0;
      let refused = 0;
      const worker = async () => {
        for (let i = next++; i < PODS; i = next++) {
          try {
            await client.evict(ns, `p-${i}`);
            allowed++;
          } catch (err) {
            if (err instanceof ApiError && err.code === 429) refused++;
            else throw err;
          }
        }
      };
      const t0 = performance.now();
      await onClock(env, Promise.all(Array.from({ length: CONCURRENCY }, worker)));
      const ms = performance.now() - t0;
      const writes = sample(await scrape(mgr.manager), 'workloadspread_budget_status_writes_total', { source: 'webhook' }) ?? 0;
      if (name !== 'warm-up') results.push({ name, msPer: ms / PODS, allowed, refused, writes: writes - writesBefore });
      writesBefore = writes;
      for (let i = 0; i < PODS; i++) await client.patch(BUILTIN.pods, `p-${i}`, { type: 'merge', body: { metadata: { finalizers: null } } }, { namespace: ns });
    }
  } finally {
    await stopOnClock(env, mgr.manager);
    await env.stop();
  }
  console.log(`${PODS} evictions, ${CONCURRENCY} in flight, one manager replica (${cpus().length} cpus, load ${loadavg()[0]?.toFixed(2)})`);
  const base = results[0]?.msPer ?? 1;
  for (const r of results) {
    console.log(`${r.name.padEnd(20)} ${r.msPer.toFixed(2).padStart(7)} ms/eviction  x${(r.msPer / base).toFixed(2)}  allowed ${r.allowed}, refused ${r.refused}, budget status writes ${r.writes}`);
  }
}

await main();
