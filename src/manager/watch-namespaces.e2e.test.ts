/**
 * `--watch-namespaces`: a manager that caches and acts on some namespaces
 * only, on the embedded cluster (virtual clock):
 *
 * - in a watched namespace pods are placed as ever;
 * - a WorkloadSpread in another namespace is admitted with a warning that
 *   nothing acts on it, the pod webhooks never reach that namespace, and its
 *   pods are created untouched — the caches never saw it (were the other
 *   WorkloadSpread cached, the leader would have added its namespace to the
 *   pod webhooks' reach).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN } from '../client/resources.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import type { KubeObject } from '../k8s/types.ts';
import { MUTATING_CONFIGURATION_NAME, WEBHOOK_NAMES } from '../webhook/registration.ts';
import { rawRequest } from '../testing/apiserver-bed.ts';
import { countBySubset, deployment, podsOf, workloadSpreadObject, zoneTerm } from '../testing/webhook-bed.ts';
import { startManagerCluster, startTestManager, stopOnClock, type ManagerCluster, type TestManager } from '../testing/manager-bed.ts';

const MARKER = 'apps.kruise.io/matched-workloadspread';

function spreadObject(ns: string): KubeObject {
  return workloadSpreadObject(ns, 'spread', {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    subsets: [
      { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 1 },
      { name: 'b', requiredNodeSelectorTerm: zoneTerm('b') },
    ],
  });
}

describe('--watch-namespaces: a manager for some namespaces only', () => {
  let env: ManagerCluster;
  let m: TestManager | undefined;
  let watched: string;
  let other: string;
  before(async () => {
    env = await startManagerCluster();
    watched = await env.namespace('watched');
    other = await env.namespace('other');
    m = await startTestManager(env, { name: 'watch-ns', leaderElection: false, watchNamespaces: [watched] });
  });
  after(async () => {
    if (m !== undefined) await stopOnClock(env, m.manager);
    await env?.stop();
  });

  test('a watched namespace is spread; another gets a warning, no webhook reach, untouched pods', async () => {
    await env.cluster.client.create(WORKLOADSPREAD_REF, spreadObject(watched));
    await env.cluster.client.create(BUILTIN.deployments, deployment(watched, 'web', 3));

    const res = await rawRequest(env.cluster.apiServer, 'POST', `/apis/apps.kruise.io/v1alpha1/namespaces/${other}/workloadspreads`, { body: JSON.stringify(spreadObject(other)), contentType: 'application/json' });
    assert.equal(res.status, 201, JSON.stringify(res.json));
    assert.match(String(res.headers['warning']), new RegExp(`watches only the namespaces ${watched} \\(--watch-namespaces\\): this WorkloadSpread in namespace ${other} is stored, and nothing acts on it`));
    await env.cluster.client.create(BUILTIN.deployments, deployment(other, 'web', 3));
    await env.cluster.settle();

    assert.deepEqual(countBySubset(await podsOf(env.cluster.client, watched)), { a: 1, b: 2 });
    const untouched = await podsOf(env.cluster.client, other);
    assert.equal(untouched.length, 3);
    assert.deepEqual(untouched.filter((p) => p.metadata.annotations?.[MARKER] !== undefined).map((p) => p.metadata.name), [], 'no pod of the other namespace was placed');

    const config = await env.cluster.client.get<KubeObject & { webhooks: { name: string; namespaceSelector?: { matchExpressions?: { key: string; operator: string; values?: string[] }[] } }[] }>(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME);
    const mutatePod = config.webhooks.find((w) => w.name === WEBHOOK_NAMES.mutatePod);
    const managed = mutatePod?.namespaceSelector?.matchExpressions?.find((e) => e.key === 'kubernetes.io/metadata.name' && e.operator === 'In');
    assert.deepEqual(managed?.values, [watched], 'the pod webhooks reach the watched namespace only');
  });
});
