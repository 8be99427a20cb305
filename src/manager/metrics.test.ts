/**
 * `ManagerMetrics`: each hook feeds the series named in the README (one case
 * per hook, read back from the exposition text), series of a deleted
 * WorkloadSpread disappear, two instances never share series; and a real
 * manager's `/metrics` after a Deployment is spread, with values that follow
 * from what happened (5 admissions, 2 reservations, per subset 2/3 pods, all
 * ready, a's limit and quota, a NoSubsetAvailable, the leader, the
 * certificate's expiry, the manager's API requests, process metrics).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUILTIN } from '../client/resources.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { deployment, workloadSpreadObject, zoneTerm } from '../testing/webhook-bed.ts';
import type { SubsetReading } from '../controller/subset-readings.ts';
import { VERSION } from './defaults.ts';
import { ManagerMetrics } from './metrics.ts';
import { sample, scrape, startManagerCluster, startTestManager, stopOnClock, type ManagerCluster } from '../testing/manager-bed.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** The metric families of an exposition (`# TYPE name type`). */
function families(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

const PROMQL_WORDS = new Set(['sum', 'max', 'min', 'count', 'avg', 'rate', 'increase', 'histogram_quantile', 'time', 'by', 'without', 'and', 'or', 'unless', 'bool', 'offset']);

/** The series an expression selects; every selector is written `name{…}` in the dashboard, and anything else must be PromQL's own. */
function selectedSeries(expr: string): string[] {
  const text = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const names = [...text.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{/g)].map((m) => m[1] ?? '');
  const rest = text.replace(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{[^}]*\}/g, ' ').replace(/\b(by|without)\s*\([^)]*\)/g, ' ').replace(/\[[^\]]*\]/g, ' ');
  for (const word of rest.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? []) assert.ok(PROMQL_WORDS.has(word), `${JSON.stringify(word)} in ${expr} is neither a selector written name{…} nor a PromQL function`);
  assert.ok(names.length > 0, `no series in ${expr}`);
  return names;
}

/** Whether the exposition has the series `name` (a histogram's _bucket, _sum and _count included). */
function exposes(fams: Map<string, string>, name: string): boolean {
  if (fams.has(name)) return true;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return base !== name && fams.get(base) === 'histogram';
}

const READING: SubsetReading = { subset: 'a', limit: 10, pods: 4, ready: 3, missing: 6, creating: 2, deleting: 1, schedulable: false };

describe('ManagerMetrics hooks', () => {
  const cases: { hook: string; feed: (m: ManagerMetrics) => void; series: string; labels?: Record<string, string>; value: number }[] = [
    { hook: 'controller.reconcile', feed: (m) => m.controller.reconcile?.('requeue_after'), series: 'controller_runtime_reconcile_total', labels: { controller: 'workloadspread', result: 'requeue_after' }, value: 1 },
    { hook: 'controller.reconcileError', feed: (m) => m.controller.reconcileError?.(false), series: 'controller_runtime_reconcile_errors_total', value: 1 },
    { hook: 'controller.reconcileError (terminal)', feed: (m) => m.controller.reconcileError?.(true), series: 'controller_runtime_terminal_reconcile_errors_total', value: 1 },
    { hook: 'controller.reconcileTime', feed: (m) => m.controller.reconcileTime?.(0.2), series: 'controller_runtime_reconcile_time_seconds_sum', value: 0.2 },
    { hook: 'controller.activeWorkers', feed: (m) => m.controller.activeWorkers?.(2), series: 'controller_runtime_active_workers', value: 2 },
    { hook: 'maxConcurrentReconciles', feed: (m) => m.maxConcurrentReconciles(3), series: 'controller_runtime_max_concurrent_reconciles', value: 3 },
    { hook: 'queue.depth', feed: (m) => m.controller.queue?.depth?.(7), series: 'workqueue_depth', labels: { name: 'workloadspread' }, value: 7 },
    { hook: 'queue.adds', feed: (m) => m.controller.queue?.adds?.(), series: 'workqueue_adds_total', value: 1 },
    { hook: 'queue.retries', feed: (m) => m.controller.queue?.retries?.(), series: 'workqueue_retries_total', value: 1 },
    { hook: 'queue.latency (ms in, seconds out)', feed: (m) => m.controller.queue?.latency?.(250), series: 'workqueue_queue_duration_seconds_sum', value: 0.25 },
    { hook: 'queue.workDuration', feed: (m) => m.controller.queue?.workDuration?.(1500), series: 'workqueue_work_duration_seconds_sum', value: 1.5 },
    ...(
      [
        ['workloadspread_spec_subsets_max_replicas', 10],
        ['workloadspread_status_subset_replicas', 4],
        ['workloadspread_status_subset_replicas_ready', 3],
        ['workloadspread_status_subset_replicas_missing', 6],
        ['workloadspread_status_subset_creating_pods', 2],
        ['workloadspread_status_subset_deleting_pods', 1],
        ['workloadspread_status_subset_schedulable', 0],
      ] as const
    ).map(([series, value]) => ({ hook: `subsets → ${series}`, feed: (m: ManagerMetrics) => m.controller.subsets?.('ns', 'ws', [{ ...READING, subset: 'a' }]), series, labels: { namespace: 'ns', workloadspread: 'ws', subset: 'a' }, value })),
    { hook: 'restClient.request → rest_client_requests_total', feed: (m) => m.restClient.request('PUT', '10.0.0.1:443', '409', 0.02), series: 'rest_client_requests_total', labels: { code: '409', method: 'PUT', host: '10.0.0.1:443' }, value: 1 },
    { hook: 'restClient.request → rest_client_request_duration_seconds', feed: (m) => m.restClient.request('GET', '10.0.0.1:443', '200', 0.03), series: 'rest_client_request_duration_seconds_sum', labels: { verb: 'GET', host: '10.0.0.1:443' }, value: 0.03 },
    { hook: 'webhook.admission', feed: (m) => m.webhook.admission?.('/mutate-pod', 'CREATE', 'patched', 0.003), series: 'workloadspread_admission_duration_seconds_count', labels: { webhook: '/mutate-pod', operation: 'CREATE', result: 'patched' }, value: 1 },
    { hook: 'webhook.admission (controller-runtime count)', feed: (m) => m.webhook.admission?.('/validate-pod', 'DELETE', 'allowed', 0.001), series: 'controller_runtime_webhook_requests_total', labels: { webhook: '/validate-pod', code: '200' }, value: 1 },
    { hook: 'webhook.admission (controller-runtime latency)', feed: (m) => m.webhook.admission?.('/validate-pod', 'DELETE', 'allowed', 0.004), series: 'controller_runtime_webhook_latency_seconds_sum', labels: { webhook: '/validate-pod' }, value: 0.004 },
    { hook: 'webhook.badRequest', feed: (m) => m.webhook.badRequest?.('/mutate-pod', 413), series: 'controller_runtime_webhook_requests_total', labels: { code: '413' }, value: 1 },
    { hook: 'webhook.noSubsetAvailable', feed: (m) => m.webhook.noSubsetAvailable?.('ns', 'ws'), series: 'workloadspread_no_subset_available_total', labels: { namespace: 'ns', workloadspread: 'ws' }, value: 1 },
    { hook: 'webhook.certificateLoaded', feed: (m) => m.webhook.certificateLoaded?.(1_800_000_000_500), series: 'workloadspread_webhook_certificate_not_after_timestamp_seconds', value: 1_800_000_000 },
    { hook: 'webhook.batchSize', feed: (m) => m.webhook.batchSize?.(12), series: 'workloadspread_group_commit_batch_size_sum', value: 12 },
    { hook: 'webhook.conflict', feed: (m) => m.webhook.conflict?.(), series: 'workloadspread_status_write_conflicts_total', labels: { source: 'webhook' }, value: 1 },
    { hook: 'statusWriter.statusWrite', feed: (m) => m.statusWriter.statusWrite?.('webhook', 'ok'), series: 'workloadspread_status_writes_total', labels: { source: 'webhook', result: 'ok' }, value: 1 },
    { hook: 'statusWriter.statusWrite (controller conflict)', feed: (m) => m.statusWriter.statusWrite?.('controller', 'Conflict'), series: 'workloadspread_status_write_conflicts_total', labels: { source: 'controller' }, value: 1 },
    { hook: 'watcher.request', feed: (m) => m.watcher.request?.('list'), series: 'workloadspread_watcher_requests_total', labels: { verb: 'list' }, value: 1 },
    { hook: 'watcher.event', feed: (m) => m.watcher.event?.('BOOKMARK'), series: 'workloadspread_watcher_events_total', labels: { type: 'BOOKMARK' }, value: 1 },
    { hook: 'watcher.transition', feed: (m) => m.watcher.transition?.('watching', 'listing', 'gone'), series: 'workloadspread_watcher_transitions_total', labels: { from: 'watching', to: 'listing', cause: 'gone' }, value: 1 },
    { hook: 'leading', feed: (m) => m.leading('lease', true), series: 'leader_election_master_status', labels: { name: 'lease' }, value: 1 },
  ];
  for (const c of cases) {
    test(c.hook, async () => {
      const m = new ManagerMetrics({ processMetrics: false });
      c.feed(m);
      assert.equal(sample(await m.text(), c.series, c.labels), c.value);
    });
  }

  test('counters start at 0 so dashboards see them before the first event', async () => {
    const text = await new ManagerMetrics({ processMetrics: false }).text();
    for (const series of ['controller_runtime_reconcile_total', 'controller_runtime_reconcile_errors_total', 'workqueue_adds_total', 'workqueue_retries_total', 'workloadspread_status_write_conflicts_total']) {
      assert.equal(sample(text, series), 0, series);
    }
  });

  test('a deleted WorkloadSpread takes its series with it; so does a subset taken out of the spec, and the limit of one made unlimited', async () => {
    const m = new ManagerMetrics({ processMetrics: false });
    m.controller.subsets?.('ns', 'gone', [READING, { ...READING, subset: 'b', pods: 2 }]);
    m.controller.subsets?.('ns', 'kept', [{ ...READING, pods: 3 }, { ...READING, subset: 'b' }]);
    m.webhook.noSubsetAvailable?.('ns', 'gone');
    m.controller.forgetWorkloadSpread?.('ns', 'gone');
    m.controller.subsets?.('ns', 'kept', [{ ...READING, pods: 3, limit: null, missing: null }]);
    const text = await m.text();
    for (const series of ['workloadspread_status_subset_replicas', 'workloadspread_status_subset_replicas_ready', 'workloadspread_spec_subsets_max_replicas', 'workloadspread_status_subset_schedulable']) {
      assert.equal(sample(text, series, { workloadspread: 'gone' }), undefined, series);
      assert.equal(sample(text, series, { workloadspread: 'kept', subset: 'b' }), undefined, `${series}: subset b left the spec`);
    }
    assert.equal(sample(text, 'workloadspread_no_subset_available_total', { workloadspread: 'gone' }), undefined);
    assert.equal(sample(text, 'workloadspread_status_subset_replicas', { workloadspread: 'kept', subset: 'a' }), 3);
    assert.equal(sample(text, 'workloadspread_spec_subsets_max_replicas', { workloadspread: 'kept', subset: 'a' }), undefined, 'unlimited: no limit series');
    assert.equal(sample(text, 'workloadspread_status_subset_replicas_missing', { workloadspread: 'kept', subset: 'a' }), undefined, 'unlimited: no missing series');
  });

  test('workloadspread_build_info says which release and which Node.js run', async () => {
    const text = await new ManagerMetrics({ processMetrics: false }).text();
    assert.equal(sample(text, 'workloadspread_build_info', { version: VERSION, nodejs_version: process.version }), 1);
  });

  test('two instances keep separate series; process metrics are included by default', async () => {
    const a = new ManagerMetrics();
    const b = new ManagerMetrics();
    a.controller.queue?.adds?.();
    assert.equal(sample(await a.text(), 'workqueue_adds_total'), 1);
    assert.equal(sample(await b.text(), 'workqueue_adds_total'), 0);
    assert.ok((sample(await a.text(), 'process_cpu_user_seconds_total') ?? 0) > 0);
    assert.ok((sample(await b.text(), 'nodejs_heap_size_used_bytes') ?? 0) > 0);
  });
});

describe('a manager’s /metrics', () => {
  let env: ManagerCluster;
  before(async () => {
    env = await startManagerCluster({ budgetCrd: true });
  });
  after(async () => {
    await env?.stop();
  });

  test('after spreading a Deployment of 5 over a (max 2) and b (unlimited), then 3 more with only a (max 1) left', async () => {
    const { manager } = await startTestManager(env, { name: 'scraped', leaderElection: { leaseName: 'scraped' } });
    try {
      const ns = await env.namespace('metrics');
      await env.cluster.client.create(
        WORKLOADSPREAD_REF,
        workloadSpreadObject(ns, 'spread', {
          targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          subsets: [{ name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 2 }, { name: 'b', requiredNodeSelectorTerm: zoneTerm('b') }],
        }),
      );
      await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 5));
      await env.cluster.settle();
      let text = await scrape(manager);
      assert.equal(sample(text, 'workloadspread_admission_duration_seconds_count', { webhook: '/mutate-pod', operation: 'CREATE', result: 'patched' }), 5);
      assert.equal(sample(text, 'controller_runtime_webhook_requests_total', { webhook: '/mutate-pod', code: '200' }), 5);
      // Two places in a: one reserved by an admission's round, the other reserved ahead in the same write or claimed by a later round; b is unlimited and needs none.
      const reserved = sample(text, 'workloadspread_group_commit_batch_size_sum') ?? 0;
      assert.ok(reserved >= 1 && reserved <= 2, `${reserved} reservations decided in rounds`);
      const subset = (series: string, name: string) => sample(text, series, { namespace: ns, workloadspread: 'spread', subset: name });
      assert.equal(subset('workloadspread_status_subset_replicas', 'a'), 2);
      assert.equal(subset('workloadspread_status_subset_replicas', 'b'), 3);
      assert.equal(subset('workloadspread_status_subset_replicas_ready', 'a'), 2);
      assert.equal(subset('workloadspread_status_subset_replicas_ready', 'b'), 3);
      assert.equal(subset('workloadspread_spec_subsets_max_replicas', 'a'), 2);
      assert.equal(subset('workloadspread_spec_subsets_max_replicas', 'b'), undefined, 'b is unlimited');
      assert.equal(subset('workloadspread_status_subset_replicas_missing', 'a'), 0);
      assert.equal(subset('workloadspread_status_subset_creating_pods', 'a'), 0);
      assert.equal(subset('workloadspread_status_subset_deleting_pods', 'a'), 0);
      assert.equal(subset('workloadspread_status_subset_schedulable', 'a'), 1);
      // The manager's own API requests, by client-go's names and labels.
      const host = new URL(env.cluster.apiServer.url).host;
      assert.ok((sample(text, 'rest_client_requests_total', { code: '200', method: 'GET', host }) ?? 0) > 0, 'GETs (lists, watches) counted');
      assert.ok((sample(text, 'rest_client_requests_total', { code: '200', method: 'PUT', host }) ?? 0) > 0, 'status writes counted');
      assert.ok((sample(text, 'rest_client_request_duration_seconds_count', { verb: 'GET', host }) ?? 0) > 0);
      assert.equal(sample(text, 'workloadspread_build_info', { version: VERSION }), 1);

      // docs/grafana/workloadspread.json queries only series this manager exposes …
      const fams = families(text);
      const dashboard = JSON.parse(readFileSync(join(ROOT, 'docs/grafana/workloadspread.json'), 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[]; templating: { list: { query?: { query?: string } }[] } };
      const queried = new Set<string>();
      for (const panel of dashboard.panels) for (const t of panel.targets ?? []) for (const s of selectedSeries(t.expr)) queried.add(s);
      for (const v of dashboard.templating.list) {
        const m = /label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(v.query?.query ?? '');
        if (m?.[1] !== undefined) queried.add(m[1]);
      }
      assert.ok(queried.size >= 30, `the dashboard queries ${queried.size} series`);
      assert.deepEqual([...queried].filter((s) => !exposes(fams, s)), [], 'series the dashboard queries that the manager does not expose');
      // … and docs/operations.md lists every family the manager exposes, and nothing else.
      const ops = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
      const section = ops.slice(ops.indexOf('## Metrics and alerts'), ops.indexOf('Alerts worth having'));
      const documented = new Set([...section.matchAll(/^\| (`[^|]+`) \|/gm)].flatMap((m) => [...(m[1] ?? '').matchAll(/`([a-z_:*]+)`/g)].map((n) => n[1] ?? '')));
      const covered = (name: string) => documented.has(name) || [...documented].some((d) => d.endsWith('*') && name.startsWith(d.slice(0, -1)));
      assert.deepEqual([...fams.keys()].filter((f) => !covered(f)), [], 'exposed but not in docs/operations.md');
      assert.deepEqual([...documented].filter((d) => !d.endsWith('*') && !fams.has(d)), [], 'in docs/operations.md but not exposed');
      assert.ok((sample(text, 'controller_runtime_reconcile_total', { result: 'success' }) ?? 0) + (sample(text, 'controller_runtime_reconcile_total', { result: 'requeue_after' }) ?? 0) > 0);
      assert.equal(sample(text, 'controller_runtime_reconcile_errors_total'), sample(text, 'controller_runtime_reconcile_total', { result: 'error' }));
      assert.ok((sample(text, 'controller_runtime_reconcile_time_seconds_count') ?? 0) > 0);
      assert.ok((sample(text, 'workqueue_adds_total') ?? 0) > 0);
      assert.equal(sample(text, 'workqueue_depth'), 0, 'nothing waits once settled');
      assert.equal(sample(text, 'controller_runtime_max_concurrent_reconciles'), 3);
      assert.equal(sample(text, 'leader_election_master_status', { name: 'scraped' }), 1);
      assert.ok((sample(text, 'workloadspread_watcher_requests_total', { verb: 'list' }) ?? 0) >= 7, 'every informer listed');
      assert.ok((sample(text, 'workloadspread_watcher_events_total', { type: 'ADDED' }) ?? 0) >= 5);
      assert.ok((sample(text, 'workloadspread_webhook_certificate_not_after_timestamp_seconds') ?? 0) > Date.now() / 1000 + 300 * 86_400, 'a serving certificate valid for about a year');
      assert.ok((sample(text, 'process_resident_memory_bytes') ?? sample(text, 'nodejs_heap_size_used_bytes') ?? 0) > 0);

      // Only a (max 1) this time: three pods, one placed, two admitted without a subset (D11).
      await env.cluster.client.create(
        WORKLOADSPREAD_REF,
        workloadSpreadObject(ns, 'narrow', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' }, subsets: [{ name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 1 }] }),
      );
      await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'api', 3));
      await env.cluster.settle();
      text = await scrape(manager);
      assert.equal(sample(text, 'workloadspread_no_subset_available_total', { namespace: ns, workloadspread: 'narrow' }), 2);

      await env.cluster.client.delete(WORKLOADSPREAD_REF, 'spread', { namespace: ns });
      await env.cluster.settle();
      text = await scrape(manager);
      assert.equal(sample(text, 'workloadspread_status_subset_replicas', { namespace: ns, workloadspread: 'spread' }), undefined, 'the deleted WorkloadSpread has no series left');
      assert.equal(sample(text, 'workloadspread_spec_subsets_max_replicas', { namespace: ns, workloadspread: 'spread' }), undefined);
    } finally {
      await stopOnClock(env, manager);
    }
  });
});
