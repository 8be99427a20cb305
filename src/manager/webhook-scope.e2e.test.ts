/**
 * The pod webhooks' reach (issue 21, "pod webhooks only where a
 * WorkloadSpread lives"), with the real manager on the embedded cluster:
 *
 * - with the manager stopped, a pod in a namespace without a WorkloadSpread
 *   is created; in a namespace with one, creation follows the failure policy
 *   (Fail: refused);
 * - the leader keeps the selectors equal to the namespaces holding a
 *   WorkloadSpread (all three pod webhooks) or a DomainDisruptionBudget
 *   (evictions only, without --guard-pod-deletion), never the manager's own
 *   namespace or kube-system, and follows creations and deletions;
 * - a selector reset (as `helm upgrade` or a hand edit would) and a removed
 *   caBundle are repaired from the watch;
 * - pods created before the namespace was reached are adopted;
 * - `--webhook-scope=cluster` keeps the reference's reach.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeError } from '../client/errors.ts';
import { BUILTIN } from '../client/resources.ts';
import { DDB_REF } from '../kube/budget-cache.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { MUTATING_CONFIGURATION_NAME, VALIDATING_CONFIGURATION_NAME, WEBHOOK_NAMES } from '../webhook/registration.ts';
import { countBySubset, deployment, podsOf, readSpread, workloadSpreadObject, zoneTerm } from '../testing/webhook-bed.ts';
import { MANAGER_NAMESPACE, onClock, startManagerCluster, startTestManager, stopOnClock, type ManagerCluster, type TestManager } from '../testing/manager-bed.ts';

type Webhook = { name: string; namespaceSelector?: { matchExpressions?: { key: string; operator: string; values?: string[] }[] }; clientConfig: { caBundle?: string } };

async function webhooks(env: ManagerCluster): Promise<Map<string, Webhook>> {
  const out = new Map<string, Webhook>();
  for (const [ref, name] of [[BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME], [BUILTIN.validatingwebhookconfigurations, VALIDATING_CONFIGURATION_NAME]] as const) {
    const config = await env.cluster.client.get<KubeObject & { webhooks: Webhook[] }>(ref, name);
    for (const w of config.webhooks) out.set(w.name, w);
  }
  return out;
}

/** The managed requirement of a pod webhook: the namespaces it reaches ([] for DoesNotExist). */
async function reach(env: ManagerCluster, webhook: string): Promise<string[] | 'all'> {
  const w = (await webhooks(env)).get(webhook);
  const managed = w?.namespaceSelector?.matchExpressions?.find((e) => e.key === 'kubernetes.io/metadata.name' && (e.operator === 'In' || e.operator === 'DoesNotExist'));
  if (managed === undefined) return 'all';
  return managed.operator === 'In' ? (managed.values ?? []) : [];
}

const plainPod = (namespace: string, name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });

function spreadObject(ns: string, target = 'web'): KubeObject {
  return workloadSpreadObject(ns, 'spread', {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target },
    subsets: [
      { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 2 },
      { name: 'b', requiredNodeSelectorTerm: zoneTerm('b') },
    ],
  });
}

const budget = (ns: string): KubeObject => ({ apiVersion: 'policy.workloadspread.io/v1alpha1', kind: 'DomainDisruptionBudget', metadata: { name: 'budget', namespace: ns }, spec: { selector: { matchLabels: { app: 'x' } }, maxUnavailable: 1 } });

describe('the pod webhooks reach only namespaces holding a WorkloadSpread or budget', () => {
  let env: ManagerCluster;
  let m: TestManager;
  before(async () => {
    env = await startManagerCluster({ budgetCrd: true });
    m = await startTestManager(env, { name: 'scope', leaderElection: false });
  });
  after(async () => {
    if (m !== undefined) await stopOnClock(env, m.manager);
    await env?.stop();
  });

  test('installed with no WorkloadSpread: the pod webhooks reach no namespace', async () => {
    await env.cluster.settle();
    for (const name of [WEBHOOK_NAMES.mutatePod, WEBHOOK_NAMES.validatePod, WEBHOOK_NAMES.validatePodEviction]) assert.deepEqual(await reach(env, name), [], name);
  });

  test('the selectors follow WorkloadSpreads and budgets; the excluded namespaces never join', async () => {
    const withSpread = await env.namespace('spread');
    const withBudget = await env.namespace('budget');
    await env.cluster.client.create(WORKLOADSPREAD_REF, spreadObject(withSpread));
    await env.cluster.client.create(DDB_REF, budget(withBudget));
    await env.cluster.client.create(WORKLOADSPREAD_REF, spreadObject(MANAGER_NAMESPACE));
    await env.cluster.settle();
    assert.deepEqual(await reach(env, WEBHOOK_NAMES.mutatePod), [withSpread]);
    assert.deepEqual(await reach(env, WEBHOOK_NAMES.validatePod), [withSpread], 'deletions: budgets only with --guard-pod-deletion');
    assert.deepEqual(await reach(env, WEBHOOK_NAMES.validatePodEviction), [withBudget, withSpread].sort());
    const hooks = await webhooks(env);
    assert.deepEqual(hooks.get(WEBHOOK_NAMES.mutatePod)?.namespaceSelector?.matchExpressions?.[0], { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [MANAGER_NAMESPACE, 'kube-system'] });
    assert.deepEqual(hooks.get(WEBHOOK_NAMES.validateWorkloadSpread)?.namespaceSelector, {}, 'the WorkloadSpread webhook reaches every namespace');

    await env.cluster.client.delete(WORKLOADSPREAD_REF, 'spread', { namespace: withSpread });
    await env.cluster.client.delete(DDB_REF, 'budget', { namespace: withBudget });
    await env.cluster.client.delete(WORKLOADSPREAD_REF, 'spread', { namespace: MANAGER_NAMESPACE });
    await env.cluster.settle();
    for (const name of [WEBHOOK_NAMES.mutatePod, WEBHOOK_NAMES.validatePod, WEBHOOK_NAMES.validatePodEviction]) assert.deepEqual(await reach(env, name), [], name);
  });

  test('the pod DELETE webhook skips pods already terminating (the kubelet\'s final DELETE): one review per deleted pod', async () => {
    const hooks = await webhooks(env);
    assert.deepEqual((hooks.get(WEBHOOK_NAMES.validatePod) as { matchConditions?: unknown }).matchConditions, [{ name: 'skip-terminating-pods', expression: '!has(oldObject.metadata.deletionTimestamp)' }]);
    const ns = await env.namespace('deletes');
    await env.cluster.client.create(WORKLOADSPREAD_REF, spreadObject(ns));
    await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 5));
    await env.cluster.settle();
    let reviews = 0;
    const stop = env.cluster.apiServer.control.onWebhookCall((call) => {
      if (call.namespace === ns && call.resource === 'pods' && call.operation === 'DELETE') reviews++;
    });
    try {
      await env.cluster.client.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { replicas: 2 } } }, { namespace: ns });
      await env.cluster.settle();
    } finally {
      stop();
    }
    assert.equal((await podsOf(env.cluster.client, ns)).length, 2, 'the three pods are gone (graceful, then final delete)');
    assert.equal(reviews, 3);
    await env.cluster.client.delete(WORKLOADSPREAD_REF, 'spread', { namespace: ns });
    await env.cluster.settle();
  });

  test('a reset selector and a removed caBundle are repaired from the watch', async () => {
    const ns = await env.namespace('repair');
    await env.cluster.client.create(WORKLOADSPREAD_REF, spreadObject(ns));
    await env.cluster.settle();
    assert.deepEqual(await reach(env, WEBHOOK_NAMES.mutatePod), [ns]);
    const config = await env.cluster.client.get<KubeObject & { webhooks: Record<string, unknown>[] }>(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME);
    const caBundle = (config.webhooks[0]?.['clientConfig'] as { caBundle?: string }).caBundle;
    assert.ok(caBundle !== undefined && caBundle !== '');
    // What `helm upgrade` of the installed chart would write back: no caBundle, the installed selector.
    const reset = config.webhooks.map((w) => ({
      ...w,
      clientConfig: { ...(w['clientConfig'] as Record<string, unknown>), caBundle: undefined },
      namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [MANAGER_NAMESPACE, 'kube-system'] }, { key: 'kubernetes.io/metadata.name', operator: 'DoesNotExist' }] },
    }));
    await env.cluster.client.update(BUILTIN.mutatingwebhookconfigurations, { ...config, webhooks: reset });
    await env.cluster.settle();
    assert.deepEqual(await reach(env, WEBHOOK_NAMES.mutatePod), [ns]);
    assert.equal((await webhooks(env)).get(WEBHOOK_NAMES.mutatePod)?.clientConfig.caBundle, caBundle);
    await env.cluster.client.delete(WORKLOADSPREAD_REF, 'spread', { namespace: ns });
    await env.cluster.settle();
  });

  test('pods created before the namespace was reached are adopted; later pods are placed', async () => {
    const ns = await env.namespace('adopt');
    await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 3));
    await env.cluster.settle();
    assert.deepEqual(countBySubset(await podsOf(env.cluster.client, ns)), { '': 3 }, 'no WorkloadSpread yet: pods created without the manager');
    await env.cluster.client.create(WORKLOADSPREAD_REF, spreadObject(ns));
    await env.cluster.settle();
    const ws = await readSpread(env.cluster.client, ns, 'spread');
    const counted = (ws.status?.subsetStatuses ?? []).reduce((n, s) => n + s.replicas, 0);
    const onZonesAB = (await podsOf(env.cluster.client, ns)).filter((p) => /^[ab]/.test(p.spec.nodeName ?? '')).length;
    assert.equal(counted, onZonesAB, 'the pods already there count in the subsets of their nodes');
    await env.cluster.client.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { replicas: 8 } } }, { namespace: ns });
    await env.cluster.settle();
    const placed = (await podsOf(env.cluster.client, ns)).filter((p) => p.metadata.labels?.['workloadspread.io/managed'] === 'true' && p.metadata.deletionTimestamp === undefined);
    assert.ok(placed.length >= 5, `the new pods are placed by the webhook: ${placed.length}`);
  });

  test('with the manager stopped: pods elsewhere are created; in a namespace with a WorkloadSpread, the failure policy refuses them', async () => {
    const plain = await env.namespace('plain');
    const guarded = await env.namespace('guarded');
    await env.cluster.client.create(WORKLOADSPREAD_REF, spreadObject(guarded));
    await env.cluster.settle();
    const reached = await reach(env, WEBHOOK_NAMES.mutatePod);
    assert.ok(reached !== 'all' && reached.includes(guarded) && !reached.includes(plain), JSON.stringify(reached));
    await stopOnClock(env, m.manager);
    try {
      const created = await env.cluster.client.create<Pod>(BUILTIN.pods, plainPod(plain, 'free'));
      assert.equal(created.metadata.name, 'free');
      let refused: string | undefined;
      try {
        await onClock(env, env.cluster.client.create(BUILTIN.pods, plainPod(guarded, 'blocked')));
      } catch (err) {
        refused = describeError(err);
      }
      assert.match(refused ?? 'created', /failed calling webhook "mpod\.workloadspread\.io"/);
    } finally {
      m = await startTestManager(env, { name: 'scope-2', leaderElection: false });
    }
  });
});

describe('--webhook-scope=cluster keeps the reference\'s reach', () => {
  test('every namespace but the excluded ones; pod CREATEs of plain namespaces reach the manager', async () => {
    const env = await startManagerCluster({ budgetCrd: true });
    const m = await startTestManager(env, { name: 'cluster-scope', leaderElection: false, webhook: { scope: 'cluster' } });
    try {
      await env.cluster.settle();
      for (const name of [WEBHOOK_NAMES.mutatePod, WEBHOOK_NAMES.validatePod, WEBHOOK_NAMES.validatePodEviction]) assert.equal(await reach(env, name), 'all', name);
      const plain = await env.namespace('plain');
      await stopOnClock(env, m.manager);
      let refused: string | undefined;
      try {
        await onClock(env, env.cluster.client.create(BUILTIN.pods, plainPod(plain, 'blocked')));
      } catch (err) {
        refused = describeError(err);
      }
      assert.match(refused ?? 'created', /failed calling webhook "mpod\.workloadspread\.io"/, 'with the manager down, no pod is created anywhere');
    } finally {
      await env.stop();
    }
  });
});
