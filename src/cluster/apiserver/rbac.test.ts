/**
 * RBAC in the embedded API server, over HTTPS with real tokens: what a ServiceAccount, a user
 * and a group may do through Roles, ClusterRoles and both kinds of binding — namespaces,
 * resourceNames (a `metadata.name` field selector on list and watch counts as the name),
 * subresources, wildcards, non-resource URLs, discovery for every authenticated user, a
 * binding to a missing role, aggregated ClusterRoles — and that a change to any RBAC object
 * takes effect at the next request. Forbidden answers are compared with kube-apiserver's words.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { rawRequest, rawWatch, startTestCluster, testCertificate, type RawResponse, type TestCluster } from '../../testing/apiserver-bed.ts';

let c: TestCluster;
let clock: VirtualClock;
/** The token of ServiceAccount `team/bot`. */
let bot: string;
const BOT = 'system:serviceaccount:team:bot';

const RBAC = 'rbac.authorization.k8s.io/v1';

async function create(obj: KubeObject): Promise<void> {
  const r = await c.server.control.create(obj);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.status));
  await clock.quiesce();
}

async function remove(apiVersion: string, kind: string, namespace: string, name: string): Promise<void> {
  const r = await c.server.control.delete(apiVersion, kind, namespace, name);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.status));
  await clock.quiesce();
}

const role = (namespace: string, name: string, rules: Record<string, unknown>[]): KubeObject =>
  namespace === '' ? { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name }, rules } : { apiVersion: RBAC, kind: 'Role', metadata: { name, namespace }, rules };

const binding = (namespace: string, name: string, roleRef: { kind: string; name: string }, subjects: Record<string, unknown>[]): KubeObject => ({
  apiVersion: RBAC,
  kind: namespace === '' ? 'ClusterRoleBinding' : 'RoleBinding',
  metadata: namespace === '' ? { name } : { name, namespace },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
  subjects,
});

const botSubject = { kind: 'ServiceAccount', name: 'bot', namespace: 'team' };

const as = (token: string, method: string, path: string, body?: unknown): Promise<RawResponse> =>
  rawRequest(c.server, method, path, { token, ...(body === undefined ? {} : { body: JSON.stringify(body), contentType: 'application/json' }) });

const message = (r: RawResponse) => (r.json as { message?: string } | undefined)?.message ?? r.text;

before(async () => {
  clock = new VirtualClock(Date.UTC(2026, 0, 1));
  c = await startTestCluster(clock, testCertificate());
  for (const ns of ['team', 'other']) await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot', namespace: 'team' } });
  for (const ns of ['team', 'other']) {
    for (const name of ['a', 'b']) await create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { k: name } });
  }
  const issued = await rawRequest(c.server, 'POST', '/api/v1/namespaces/team/serviceaccounts/bot/token', { body: JSON.stringify({ spec: {} }), contentType: 'application/json' });
  assert.equal(issued.status, 201, issued.text);
  bot = (issued.json as { status: { token: string } }).status.token;
});
after(async () => {
  await c.close();
});

describe('RBAC', () => {
  test('a ServiceAccount without bindings is refused with the real server\'s Status, but discovers the API and reads health and version', async () => {
    const list = await as(bot, 'GET', '/api/v1/namespaces/team/pods');
    assert.equal(list.status, 403);
    assert.deepEqual(list.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `pods is forbidden: User "${BOT}" cannot list resource "pods" in API group "" in the namespace "team"`,
      reason: 'Forbidden',
      details: { kind: 'pods' },
      code: 403,
    });
    const get = await as(bot, 'GET', '/apis/apps/v1/namespaces/team/deployments/web');
    assert.deepEqual(get.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `deployments.apps "web" is forbidden: User "${BOT}" cannot get resource "deployments" in API group "apps" in the namespace "team"`,
      reason: 'Forbidden',
      details: { name: 'web', group: 'apps', kind: 'deployments' },
      code: 403,
    });
    assert.equal(message(await as(bot, 'GET', '/api/v1/nodes')), `nodes is forbidden: User "${BOT}" cannot list resource "nodes" in API group "" at the cluster scope`);
    assert.equal(message(await as(bot, 'POST', '/api/v1/namespaces/team/pods/p/eviction', { metadata: { name: 'p' } })), `pods "p" is forbidden: User "${BOT}" cannot create resource "pods/eviction" in API group "" in the namespace "team"`);
    // Authorization comes before routing: a resource that does not exist is forbidden too.
    assert.equal((await as(bot, 'GET', '/apis/example.com/v1/widgets')).status, 403);
    for (const path of ['/api', '/api/v1', '/apis', '/apis/apps/v1', '/openapi/v2', '/version', '/healthz', '/readyz', '/livez']) {
      assert.equal((await as(bot, 'GET', path)).status, 200, path);
    }
    assert.equal(message(await as(bot, 'GET', '/metrics')), `forbidden: User "${BOT}" cannot get path "/metrics"`);
    const forbidden = c.server.control.forbiddenRequests({ username: BOT });
    assert.ok(forbidden.some((f) => f.verb === 'list' && f.resource === 'pods' && f.namespace === 'team'));
    assert.ok(forbidden.some((f) => f.path === '/metrics' && f.verb === 'get'));
  });

  test('a Role bound in a namespace grants there only; a ClusterRole through a RoleBinding too; through a ClusterRoleBinding everywhere', async () => {
    await create(role('team', 'reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }]));
    await create(binding('team', 'reader', { kind: 'Role', name: 'reader' }, [botSubject]));
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/team/configmaps')).status, 200);
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/team/configmaps/a')).status, 200);
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/other/configmaps')).status, 403);
    assert.equal((await as(bot, 'GET', '/api/v1/configmaps')).status, 403, 'all namespaces is cluster scope');
    assert.equal((await as(bot, 'DELETE', '/api/v1/namespaces/team/configmaps/a')).status, 403, 'no delete verb');

    await create(role('', 'pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]));
    await create(binding('other', 'pods', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'ServiceAccount', name: 'bot', namespace: 'team' }]));
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/other/pods')).status, 200);
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/team/pods')).status, 403);
    assert.equal((await as(bot, 'GET', '/api/v1/pods')).status, 403);

    await create(binding('', 'pods-everywhere', { kind: 'ClusterRole', name: 'pod-reader' }, [botSubject]));
    assert.equal((await as(bot, 'GET', '/api/v1/pods')).status, 200);
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/team/pods')).status, 200);

    // Changes take effect at once: the binding goes, the access goes.
    await remove(RBAC, 'ClusterRoleBinding', '', 'pods-everywhere');
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/team/pods')).status, 403);
    // A rule added to a bound role counts from the next request.
    const reader = c.server.control.get(RBAC, 'Role', 'team', 'reader');
    assert.ok(reader.ok);
    const updated = await c.server.control.update({ ...reader.value, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'delete'] }] });
    assert.ok(updated.ok);
    assert.equal((await as(bot, 'DELETE', '/api/v1/namespaces/team/configmaps/b')).status, 200);
  });

  test('resourceNames: get and update of the named object, list and watch only with a metadata.name field selector on it, never create', async () => {
    await create(role('other', 'one-map', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'update'], resourceNames: ['a'] }]));
    await create(binding('other', 'one-map', { kind: 'Role', name: 'one-map' }, [botSubject]));
    await create(role('other', 'create-maps', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'], resourceNames: ['c'] }]));
    await create(binding('other', 'create-maps', { kind: 'Role', name: 'create-maps' }, [botSubject]));
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/other/configmaps/a')).status, 200);
    assert.equal(message(await as(bot, 'GET', '/api/v1/namespaces/other/configmaps/b')), `configmaps "b" is forbidden: User "${BOT}" cannot get resource "configmaps" in API group "" in the namespace "other"`);
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/other/configmaps')).status, 403);
    const selected = await as(bot, 'GET', '/api/v1/namespaces/other/configmaps?fieldSelector=metadata.name%3Da');
    assert.equal(selected.status, 200);
    assert.deepEqual((selected.json as { items: KubeObject[] }).items.map((i) => i.metadata?.name), ['a']);
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/other/configmaps?fieldSelector=metadata.name%3D%3Da')).status, 200, '== is an exact match too');
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/other/configmaps?fieldSelector=metadata.name%3Db')).status, 403);
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/other/configmaps?fieldSelector=metadata.name!%3Db')).status, 403);
    const watch = rawWatch(c.server, '/api/v1/namespaces/other/configmaps?watch=true&fieldSelector=metadata.name%3Da&resourceVersion=0', { Authorization: `Bearer ${bot}` });
    await watch.next(1);
    watch.stop();
    assert.equal(await watch.status, 200);
    assert.deepEqual(watch.events.map((e) => [e.type, e.object.metadata?.name]), [['ADDED', 'a']]);
    const everything = rawWatch(c.server, '/api/v1/namespaces/other/configmaps?watch=true', { Authorization: `Bearer ${bot}` });
    await everything.ended;
    assert.equal(await everything.status, 403);
    const a = c.server.control.get('v1', 'ConfigMap', 'other', 'a');
    assert.ok(a.ok);
    assert.equal((await as(bot, 'PUT', '/api/v1/namespaces/other/configmaps/a', { ...a.value, data: { k: 'changed' } })).status, 200);
    // A create has no name to check: a rule limited by resourceNames never allows it.
    assert.equal(message(await as(bot, 'POST', '/api/v1/namespaces/other/configmaps', { metadata: { name: 'c' } })), `configmaps is forbidden: User "${BOT}" cannot create resource "configmaps" in API group "" in the namespace "other"`);
  });

  test('subresources are their own resources; */scale and the wildcards match as upstream', async () => {
    await create(role('', 'evictor', [{ apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] }, { apiGroups: ['apps'], resources: ['*/scale'], verbs: ['get'] }, { apiGroups: ['*'], resources: ['leases'], verbs: ['*'] }]));
    await create(binding('', 'evictor', { kind: 'ClusterRole', name: 'evictor' }, [botSubject]));
    const evicted = await as(bot, 'POST', '/api/v1/namespaces/team/pods/ghost/eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'ghost' } });
    assert.equal(evicted.status, 404, 'allowed, then the pod is not found');
    assert.equal((await as(bot, 'GET', '/api/v1/namespaces/team/pods/ghost')).status, 403, 'the subresource does not grant the pod');
    assert.equal((await as(bot, 'GET', '/apis/apps/v1/namespaces/team/deployments/web/scale')).status, 404, 'allowed, not found');
    assert.equal((await as(bot, 'GET', '/apis/apps/v1/namespaces/team/deployments/web')).status, 403);
    assert.equal(message(await as(bot, 'PUT', '/apis/apps/v1/namespaces/team/deployments/web/scale', { spec: { replicas: 1 } })), `deployments.apps "web" is forbidden: User "${BOT}" cannot update resource "deployments/scale" in API group "apps" in the namespace "team"`);
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'team' }, spec: {} };
    assert.equal((await as(bot, 'POST', '/apis/coordination.k8s.io/v1/namespaces/team/leases', lease)).status, 201);
    assert.equal((await as(bot, 'DELETE', '/apis/coordination.k8s.io/v1/namespaces/team/leases/l')).status, 200);
  });

  test('User and Group subjects; a binding to a missing role adds its error to the refusal', async () => {
    const jane = c.server.control.addUser({ username: 'jane', groups: ['devs'] });
    assert.equal((await as(jane, 'GET', '/api/v1/namespaces')).status, 403);
    await create(role('', 'ns-reader', [{ apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }]));
    await create(binding('', 'devs', { kind: 'ClusterRole', name: 'ns-reader' }, [{ kind: 'Group', name: 'devs', apiGroup: 'rbac.authorization.k8s.io' }]));
    assert.equal((await as(jane, 'GET', '/api/v1/namespaces')).status, 200);
    await create(binding('', 'jane-nodes', { kind: 'ClusterRole', name: 'missing' }, [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }]));
    assert.equal(
      message(await as(jane, 'GET', '/api/v1/nodes')),
      'nodes is forbidden: User "jane" cannot list resource "nodes" in API group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found',
    );
    await create(role('', 'missing', [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }]));
    assert.equal((await as(jane, 'GET', '/api/v1/nodes')).status, 200);
  });

  test('non-resource URLs: exact paths and trailing-* prefixes; anonymous requests get health and version, not discovery', async () => {
    await create(role('', 'metrics', [{ nonResourceURLs: ['/metrics', '/logs/*'], verbs: ['get'] }]));
    await create(binding('', 'metrics', { kind: 'ClusterRole', name: 'metrics' }, [botSubject]));
    assert.equal((await as(bot, 'GET', '/metrics')).status, 404, 'allowed; the embedded server has no /metrics');
    assert.equal((await as(bot, 'GET', '/logs/kube')).status, 404);
    assert.equal((await as(bot, 'GET', '/logsx')).status, 403);
    assert.equal((await as(bot, 'POST', '/metrics')).status, 403, 'the verb of a non-resource request is its method');
    const anonymous = await rawRequest(c.server, 'GET', '/apis', { token: null });
    assert.equal(anonymous.status, 403);
    assert.deepEqual(anonymous.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'forbidden: User "system:anonymous" cannot get path "/apis"', reason: 'Forbidden', details: {}, code: 403 });
    assert.equal((await rawRequest(c.server, 'GET', '/version', { token: null })).status, 200);
  });

  test('aggregated ClusterRoles take the rules of the roles their selectors match, and keep them current', async () => {
    await create({ apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: 'aggregate' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate-to-bot': 'true' } }] } });
    await create(binding('', 'aggregate', { kind: 'ClusterRole', name: 'aggregate' }, [botSubject]));
    assert.equal((await as(bot, 'GET', '/api/v1/secrets')).status, 403);
    await create({ apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: 'secret-lister', labels: { 'example.com/aggregate-to-bot': 'true' } }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }] });
    await c.server.core.idle();
    const aggregated = c.server.control.get(RBAC, 'ClusterRole', '', 'aggregate');
    assert.ok(aggregated.ok);
    assert.deepEqual(aggregated.value['rules'], [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }]);
    assert.equal((await as(bot, 'GET', '/api/v1/secrets')).status, 200);
    await remove(RBAC, 'ClusterRole', '', 'secret-lister');
    await c.server.core.idle();
    assert.equal((await as(bot, 'GET', '/api/v1/secrets')).status, 403);
  });

  test('system:masters may do everything; the bootstrap roles and bindings are there', async () => {
    assert.equal((await rawRequest(c.server, 'GET', '/api/v1/secrets')).status, 200);
    for (const name of ['cluster-admin', 'system:discovery', 'system:basic-user', 'system:public-info-viewer']) {
      assert.ok(c.server.control.get(RBAC, 'ClusterRole', '', name).ok, name);
      assert.ok(c.server.control.get(RBAC, 'ClusterRoleBinding', '', name).ok, name);
    }
    const viewer = c.server.control.get(RBAC, 'ClusterRoleBinding', '', 'system:public-info-viewer');
    assert.ok(viewer.ok);
    assert.deepEqual((viewer.value['subjects'] as { name: string }[]).map((s) => s.name), ['system:authenticated', 'system:unauthenticated']);
  });
});
