/**
 * Every verb the chart grants the manager is needed: for each rule of the chart's ClusterRole
 * and Role (src/cli/install-rbac.ts, the rules the chart renders) and each of its verbs (and
 * each resource of a rule naming several), a manager runs a small story as a ServiceAccount
 * holding the chart's rules minus that one verb, and the story must break — the API server
 * refuses the manager something (403), or the story's own expectation fails. A verb whose
 * removal breaks nothing would be a grant no code path uses. The test also checks that the story broke
 * for that grant: the API server refused the manager a request the removed verb (or resource) allows.
 *
 * One cluster; each run a fresh manager (leader election on, generated certificates, the
 * `namespaces` webhook scope: the chart's defaults), a fresh namespace, and no Lease, so
 * leader election starts from nothing. A run stops at the first refused request. The stories:
 * - `main`: a pod running before its WorkloadSpread (adopted: the controller reads the whole
 *   pod), a DomainDisruptionBudget per zone, a WorkloadSpread (a max 2, b the rest, rebalancing
 *   on) whose first status write and the budget's meet a conflict (the writers re-read), scale
 *   1 → 3 → 5 → 2 (placement, deletion costs), a's limit lowered to 1 (the manager moves a pod
 *   by eviction, the budget approves), an eviction as `kubectl drain` sends it;
 * - `adaptive`: a pod Pending in a cordoned Adaptive subset is deleted and replaced elsewhere;
 * - `events`: pods admitted without room, the same Warning twice (an Event, then its series);
 * - `renewal` / `fresh certificates`: the certificate Secret empty (renewed) or absent (created);
 * - `kruise`: OpenKruise's CRDs installed after the manager started — a WorkloadSpread over a
 *   CloneSet the caches do not watch yet (read directly), then watched; one over an Advanced
 *   StatefulSet (read, never watched).
 * Set WS_RBAC_TRACE=1 to print what each story asks of the API server with every rule.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DDB_API_VERSION, DDB_KIND } from '../api/disruption-budget.ts';
import { isNotFound } from '../client/errors.ts';
import { BUILTIN, type ResourceRef } from '../client/resources.ts';
import type { ForbiddenRequest, RequestCount } from '../cluster/index.ts';
import type { PolicyRule } from '../cli/install-rbac.ts';
import { DEFAULT_SECRET_NAME } from '../webhook/certs.ts';
import { DDB_REF } from '../kube/budget-cache.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { chartRules, type ChartRules } from '../testing/chart-identity.ts';
import { settleUntil } from '../testing/eventually.ts';
import { customWorkloadCrd } from '../testing/kube-bed.ts';
import { chartSettings, MANAGER_NAMESPACE, onClock, startManagerCluster, startTestManager, stopOnClock, type ManagerCluster, type TestManager, type TestManagerOptions } from '../testing/manager-bed.ts';
import { countBySubset, deployment, podsOf, readSpread, subsetOf, workloadSpreadObject, ZONE_LABEL, zoneTerm } from '../testing/webhook-bed.ts';

const REBALANCE = 'workloadspread.io/rebalance';
const MANAGER: TestManagerOptions = {};
const FULL = chartRules(chartSettings(MANAGER));
const TRACE = process.env['WS_RBAC_TRACE'] === '1';

/** The manager was refused a request: the run ends there. */
class Refused extends Error {}

interface Run {
  env: ManagerCluster;
  ns: string;
  manager: TestManager;
  /** Runs the clock until `check` passes; throws Refused as soon as the manager was refused anything. */
  until(check: () => void | Promise<void>, maxMs?: number): Promise<void>;
}

interface Story {
  name: string;
  /** Before the manager starts. */
  prepare?(env: ManagerCluster): Promise<void>;
  run(run: Run): Promise<void>;
  /** After the manager stopped, whatever happened. */
  cleanUp?(env: ManagerCluster): Promise<void>;
}

interface Outcome {
  refused: ForbiddenRequest[];
  /** The story's own failure (not a refusal). */
  failure?: string;
  requests: RequestCount[];
}

let env: ManagerCluster;
let runs = 0;

const isReady = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
const active = async (ns: string) => (await podsOf(env.cluster.client, ns)).filter((p) => p.metadata.deletionTimestamp === undefined);

async function ignoreNotFound(work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

async function runStory(rules: ChartRules, story: Story): Promise<Outcome> {
  const control = env.cluster.apiServer.control;
  await ignoreNotFound(env.cluster.client.delete(BUILTIN.leases, 'workloadspread-manager', { namespace: MANAGER_NAMESPACE }));
  await story.prepare?.(env);
  await env.clock.quiesce();
  control.resetCounters();
  const name = `ablation-${++runs}`;
  const refused = () => env.identities.forbidden(MANAGER_NAMESPACE);
  const until = async (check: () => void | Promise<void>, maxMs = 10 * 60_000) => {
    const done = await settleUntil(
      env.clock,
      async () => {
        if (refused().length > 0) return 'refused';
        await check();
        return 'passed';
      },
      { maxMs },
    );
    if (done === 'refused') throw new Refused();
  };
  let manager: TestManager | undefined;
  let failure: string | undefined;
  let ns: string | undefined;
  try {
    manager = await startTestManager(env, { ...MANAGER, name, waitReady: false, rbac: { rules } });
    const m = manager.manager;
    await until(() => assert.ok(m.isReady(), 'the manager is not ready'), 5 * 60_000);
    await until(() => assert.ok(m.isLeader(), 'the manager does not lead yet'));
    ns = await env.namespace(story.name.replace(/\W+/g, '-'));
    await story.run({ env, ns, manager, until });
  } catch (err) {
    if (!(err instanceof Refused)) failure = err instanceof Error ? err.message : String(err);
  } finally {
    if (manager !== undefined) await stopOnClock(env, manager.manager, { allowForbidden: true });
    control.clearFaults();
    await story.cleanUp?.(env);
    // The next manager starts with nothing of this run to reconcile.
    if (ns !== undefined) {
      await env.cluster.client.delete(BUILTIN.namespaces, ns);
      await env.cluster.settle(60_000);
    }
  }
  const outcome: Outcome = { refused: refused(), requests: control.requestCounts({ userAgent: `workloadspread-manager/${name}` }) };
  if (failure !== undefined) outcome.failure = failure;
  // The refusals this run meant to cause are read: the cluster's final check must not see them.
  control.resetCounters();
  return outcome;
}

const budget = (ns: string): KubeObject => ({ apiVersion: DDB_API_VERSION, kind: DDB_KIND, metadata: { name: 'per-zone', namespace: ns }, spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1, topologyKey: ZONE_LABEL } });

const main: Story = {
  name: 'main',
  async run({ env, ns, until }) {
    const admin = env.cluster.client;
    // Every pod in zone a: the first one, running before the WorkloadSpread, is adopted into a.
    await admin.create(BUILTIN.deployments, deployment(ns, 'web', 1, { nodeSelector: { [ZONE_LABEL]: 'a' } }), { namespace: ns });
    await until(async () => assert.equal((await active(ns)).filter(isReady).length, 1));
    const control = env.cluster.apiServer.control;
    // The budget controller's first status write meets a conflict: it re-reads the budget.
    const conflicts = [control.injectFault({ resource: 'domaindisruptionbudgets', subresource: 'status', verb: 'update', status: 409, times: 1 })];
    await admin.create(DDB_REF, budget(ns));
    const ws = workloadSpreadObject(ns, 'spread', {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      subsets: [{ name: 'a', maxReplicas: 2, requiredNodeSelectorTerm: zoneTerm('a') }, { name: 'b' }],
    });
    (ws['metadata'] as { annotations?: Record<string, string> }).annotations = { [REBALANCE]: 'true' };
    await admin.create(WORKLOADSPREAD_REF, ws);
    const placed = (want: Record<string, number>) =>
      until(async () => {
        const pods = await active(ns);
        assert.deepEqual(countBySubset(pods), want);
        assert.equal(pods.filter(isReady).length, pods.length);
      });
    await placed({ a: 1 });
    const scale = (replicas: number) => admin.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { replicas } } }, { namespace: ns });
    // The scale-out's status writes meet conflicts until the admissions' group commit has met one and re-read the
    // WorkloadSpread with a GET. The controller writes first (the Ready condition turns False at once when the
    // workload scales) and meets the first two; its retries read the cache, so the third is the admissions'.
    await env.cluster.settle();
    conflicts.push(control.injectFault({ resource: 'workloadspreads', subresource: 'status', verb: 'update', status: 409, times: 3 }));
    await scale(3);
    await placed({ a: 2, b: 1 });
    await scale(5);
    await placed({ a: 2, b: 3 });
    await scale(2);
    await placed({ a: 2 });
    await admin.patch(WORKLOADSPREAD_REF, 'spread', { type: 'json', ops: [{ op: 'replace', path: '/spec/subsets/0/maxReplicas', value: 1 }] }, { namespace: ns });
    await placed({ a: 1, b: 1 });
    const inB = (await active(ns)).find((p) => subsetOf(p) === 'b');
    assert.ok(inB !== undefined);
    await onClock(env, admin.evict(ns, inB.metadata.name ?? ''));
    await placed({ a: 1, b: 1 });
    assert.deepEqual(conflicts.map((c) => c.hits), [1, 3], 'both status writers met their conflicts');
  },
};

const adaptive: Story = {
  name: 'adaptive',
  async prepare(env) {
    await env.cluster.cordon('a1');
    await env.cluster.cordon('a2');
  },
  async run({ env, ns, until }) {
    const admin = env.cluster.client;
    await admin.create(
      WORKLOADSPREAD_REF,
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [{ name: 'a', maxReplicas: 1, requiredNodeSelectorTerm: zoneTerm('a') }, { name: 'b', requiredNodeSelectorTerm: zoneTerm('b') }],
        scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30, disableSimulationSchedule: true } },
      }),
    );
    await env.clock.quiesce();
    await admin.create(BUILTIN.deployments, deployment(ns, 'web', 2), { namespace: ns });
    await until(async () => {
      const pods = await active(ns);
      assert.deepEqual(countBySubset(pods), { b: 2 }, 'the pod stuck in a was deleted and replaced in b');
      assert.equal(pods.filter(isReady).length, 2);
    });
  },
  async cleanUp(env) {
    await env.cluster.uncordon('a1');
    await env.cluster.uncordon('a2');
  },
};

const events: Story = {
  name: 'events',
  async run({ env, ns, until }) {
    const admin = env.cluster.client;
    await admin.create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, 'spread', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: 1, requiredNodeSelectorTerm: zoneTerm('a') }] }));
    await env.clock.quiesce();
    await admin.create(BUILTIN.deployments, deployment(ns, 'web', 3), { namespace: ns });
    await until(async () => {
      const warnings = (await admin.list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'NoSubsetAvailable');
      assert.equal(warnings.length, 1);
      assert.equal((warnings[0]?.['series'] as { count?: number } | undefined)?.count, 2, 'the second occurrence is counted in the series');
    });
  },
};

async function certificateSecret(env: ManagerCluster): Promise<KubeObject | undefined> {
  try {
    return await env.cluster.client.get<KubeObject>(BUILTIN.secrets, DEFAULT_SECRET_NAME, { namespace: MANAGER_NAMESPACE });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

const certificatesServed = async ({ env, manager, until }: Run) => {
  await until(async () => {
    const secret = await certificateSecret(env);
    assert.ok(secret !== undefined && Object.keys((secret['data'] as Record<string, string> | undefined) ?? {}).length > 0, 'certificates stored');
  });
  assert.ok(manager.manager.isReady());
};

const renewal: Story = {
  name: 'renewal',
  async prepare(env) {
    const secret = await certificateSecret(env);
    if (secret === undefined) await env.cluster.client.create(BUILTIN.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: DEFAULT_SECRET_NAME, namespace: MANAGER_NAMESPACE }, type: 'kubernetes.io/tls' }, { namespace: MANAGER_NAMESPACE });
    else await env.cluster.client.update(BUILTIN.secrets, { ...secret, data: {} });
  },
  run: certificatesServed,
};

const freshCertificates: Story = {
  name: 'fresh certificates',
  async prepare(env) {
    await ignoreNotFound(env.cluster.client.delete(BUILTIN.secrets, DEFAULT_SECRET_NAME, { namespace: MANAGER_NAMESPACE }));
  },
  run: certificatesServed,
};

const KRUISE_CRDS = [customWorkloadCrd('apps.kruise.io', 'CloneSet', 'clonesets', ['v1alpha1']), customWorkloadCrd('apps.kruise.io', 'StatefulSet', 'statefulsets', ['v1beta1'])];
const CLONESETS: ResourceRef = { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'clonesets', kind: 'CloneSet', namespaced: true };
const ADVANCED_STATEFULSETS: ResourceRef = { group: 'apps.kruise.io', version: 'v1beta1', resource: 'statefulsets', kind: 'StatefulSet', namespaced: true };

async function removeKruiseCrds(env: ManagerCluster): Promise<void> {
  for (const crd of KRUISE_CRDS) await ignoreNotFound(env.cluster.client.delete(BUILTIN.customresourcedefinitions, crd.metadata?.name ?? ''));
  await env.cluster.settle(60_000);
}

const kruise: Story = {
  name: 'kruise',
  prepare: removeKruiseCrds,
  async run({ env, ns, until }) {
    const admin = env.cluster.client;
    for (const crd of KRUISE_CRDS) await admin.create(BUILTIN.customresourcedefinitions, crd);
    await env.clock.quiesce();
    const spec = { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } } };
    // Their controllers (not running here) would have observed them.
    for (const [ref, apiVersion, kind, name] of [[CLONESETS, 'apps.kruise.io/v1alpha1', 'CloneSet', 'cs'], [ADVANCED_STATEFULSETS, 'apps.kruise.io/v1beta1', 'StatefulSet', 'asts']] as const) {
      const created = await admin.create<KubeObject>(ref, { apiVersion, kind, metadata: { name, namespace: ns }, spec }, { namespace: ns });
      const observed = await env.cluster.apiServer.control.update({ ...created, status: { observedGeneration: 1, replicas: 0, updateRevision: `${name}-1`, currentRevision: `${name}-1` } }, { subresource: 'status' });
      assert.ok(observed.ok, JSON.stringify(!observed.ok && observed.status));
    }
    const subsets = [{ name: 'a', maxReplicas: 1, requiredNodeSelectorTerm: zoneTerm('a') }, { name: 'b' }];
    // Created at once: the caches do not watch CloneSets yet (their next discovery check is a minute away).
    await admin.create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, 'cs-spread', { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cs' }, subsets }));
    await admin.create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, 'sts-spread', { targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'asts' }, subsets }));
    await until(async () => {
      for (const name of ['cs-spread', 'sts-spread']) {
        const ws = await readSpread(admin, ns, name);
        assert.equal(ws.status?.observedGeneration, ws.metadata.generation, `${name} reconciled`);
      }
      // The manager's watches only: the embedded cluster's own CloneSet controller watches them too.
      const watched = env.cluster.apiServer.control.requestCounts({ resource: 'clonesets', verb: 'watch' }).filter((c) => c.userAgent.startsWith('workloadspread-manager/')).length;
      assert.ok(watched > 0, 'the caches watch CloneSets');
    });
  },
  cleanUp: removeKruiseCrds,
};

const STORIES = [main, adaptive, events, renewal, freshCertificates, kruise];

/** The story that shows a grant is needed: `group/resource:verb` → story (default `main`). */
const REPRESENTATIVE: Record<string, Story> = {
  '/pods:delete': adaptive,
  'events.k8s.io/events:patch': events,
  '/secrets:update': renewal,
  '/secrets:create': freshCertificates,
  'apps.kruise.io/clonesets:get': kruise,
  'apps.kruise.io/clonesets:list': kruise,
  'apps.kruise.io/clonesets:watch': kruise,
  'apps.kruise.io/statefulsets:get': kruise,
};

interface Ablation {
  /** What was taken away, for the test's name. */
  label: string;
  rules: ChartRules;
  story: Story;
  /** The refusal expected: a request of these groups and resources (`pods/eviction`), with this verb when one was taken. */
  expect: { groups: readonly string[]; resources: readonly string[]; verb?: string };
}

function describeRule(rule: PolicyRule): string {
  const names = rule.resourceNames === undefined ? '' : ` (${rule.resourceNames.join(', ')})`;
  return `${rule.resources.map((r) => (rule.apiGroups[0] === '' ? r : `${r}.${rule.apiGroups.join(',')}`)).join(', ')}${names}`;
}

/** Each rule without one of its verbs (a rule left with none is dropped), and a rule of several resources without one of them. */
function ablations(): Ablation[] {
  const out: Ablation[] = [];
  for (const scope of ['cluster', 'namespace'] as const) {
    FULL[scope].forEach((rule, i) => {
      const replace = (next: PolicyRule | undefined): ChartRules => {
        const edited = FULL[scope].flatMap((r, j) => (j !== i ? [r] : next === undefined ? [] : [next]));
        return { ...FULL, [scope]: edited };
      };
      const storyFor = (resources: readonly string[], verbs: readonly string[]) => {
        for (const group of rule.apiGroups) for (const resource of resources) for (const verb of verbs) {
          const story = REPRESENTATIVE[`${group}/${resource}:${verb}`];
          if (story !== undefined) return story;
        }
        return main;
      };
      for (const verb of rule.verbs) {
        const verbs = rule.verbs.filter((v) => v !== verb);
        out.push({
          label: `${scope === 'cluster' ? 'ClusterRole' : 'Role'}: ${describeRule(rule)} without ${verb}`,
          rules: replace(verbs.length === 0 ? undefined : { ...rule, verbs }),
          story: storyFor(rule.resources, [verb]),
          expect: { groups: rule.apiGroups, resources: rule.resources, verb },
        });
      }
      if (rule.resources.length > 1) {
        for (const resource of rule.resources) {
          out.push({
            label: `${scope === 'cluster' ? 'ClusterRole' : 'Role'}: ${describeRule(rule)} without ${resource}`,
            rules: replace({ ...rule, resources: rule.resources.filter((r) => r !== resource) }),
            story: storyFor([resource], rule.verbs),
            expect: { groups: rule.apiGroups, resources: [resource] },
          });
        }
      }
    });
  }
  return out;
}

describe('the chart grants the manager nothing it does not need', () => {
  before(async () => {
    env = await startManagerCluster({ budgetCrd: true });
  });
  after(async () => {
    await env?.stop();
  });

  test('with every rule, every story passes and nothing is refused', async () => {
    for (const story of STORIES) {
      const outcome = await runStory(FULL, story);
      if (TRACE) console.log(story.name, JSON.stringify(outcome.requests.map((r) => `${r.verb} ${r.group}/${r.resource}${r.subresource === '' ? '' : `/${r.subresource}`} ×${r.count}`)));
      assert.deepEqual(outcome.refused, [], story.name);
      assert.equal(outcome.failure, undefined, story.name);
    }
  });

  for (const ablation of ablations()) {
    test(`${ablation.label}: the ${ablation.story.name} story breaks`, async (t) => {
      const outcome = await runStory(ablation.rules, ablation.story);
      assert.ok(outcome.refused.length > 0 || outcome.failure !== undefined, `nothing broke: the grant is not needed by the ${ablation.story.name} story`);
      // It broke for the grant taken away, not for something else.
      const { groups, resources, verb } = ablation.expect;
      const cause = outcome.refused.find((r) => groups.includes(r.group) && resources.includes(r.subresource === '' ? r.resource : `${r.resource}/${r.subresource}`) && (verb === undefined || r.verb === verb));
      assert.ok(cause !== undefined, `the story broke, but not for lack of this grant: ${outcome.refused[0]?.message ?? outcome.failure ?? ''}`);
      t.diagnostic(cause.message);
    });
  }
});
