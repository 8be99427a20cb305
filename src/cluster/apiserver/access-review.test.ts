/**
 * The access reviews on the wire: what SelfSubjectAccessReview, SubjectAccessReview,
 * LocalSubjectAccessReview, SelfSubjectRulesReview and SelfSubjectReview answer (201, the
 * request back with its status, nothing stored) — from the server's RBAC, for the admin and for
 * a ServiceAccount with one Role — and the requests upstream refuses (neither or both attribute
 * kinds, metadata set, no user or group, a namespace that does not match, no namespace for a
 * rules review, other verbs).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { rawRequest, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

let c: TestCluster;
/** ServiceAccount `team/bot`, allowed to get ConfigMaps in `team` by the Role `reader`. */
let bot: string;
before(async () => {
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
  for (const obj of [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot', namespace: 'team' } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'reader', namespace: 'team' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['settings'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'reader', namespace: 'team' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' }, subjects: [{ kind: 'ServiceAccount', name: 'bot' }] },
  ]) {
    const r = await c.server.control.create(obj);
    assert.ok(r.ok, JSON.stringify(!r.ok && r.status));
  }
  const issued = await post('/api/v1/namespaces/team/serviceaccounts/bot/token', { spec: {} });
  bot = (issued.json as { status: { token: string } }).status.token;
});
after(async () => {
  await c.close();
});

const post = (path: string, body: unknown, token?: string) => rawRequest(c.server, 'POST', path, { body: JSON.stringify(body), contentType: 'application/json', ...(token === undefined ? {} : { token }) });
const BOT = 'system:serviceaccount:team:bot';
const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';

describe('access reviews', () => {
  test('SelfSubjectAccessReview: allowed, with the spec echoed and nothing stored', async () => {
    const spec = { resourceAttributes: { namespace: 'default', verb: 'create', group: 'apps', resource: 'deployments' } };
    const res = await post(SSAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec });
    assert.equal(res.status, 201);
    // The admin is in system:masters, allowed before RBAC is asked, with no reason.
    assert.deepEqual(res.json, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: { creationTimestamp: null }, spec, status: { allowed: true } });
    const nonResource = await post(SSAR, { spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' } } });
    assert.equal(nonResource.status, 201);
    assert.deepEqual((nonResource.json as { status: unknown }).status, { allowed: true });
    assert.equal((await rawRequest(c.server, 'GET', SSAR)).status, 405);
  });

  test('SelfSubjectAccessReview: exactly one of resourceAttributes and nonResourceAttributes, and no metadata', async () => {
    const neither = await post(SSAR, { spec: {} });
    assert.equal(neither.status, 422);
    assert.match((neither.json as { message: string }).message, /^SelfSubjectAccessReview\.authorization\.k8s\.io "" is invalid: spec\.resourceAttributes: Invalid value: .*exactly one of nonResourceAttributes or resourceAttributes must be specified/);
    const both = await post(SSAR, { spec: { resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/x', verb: 'get' } } });
    assert.match((both.json as { message: string }).message, /spec\.nonResourceAttributes: Invalid value: .*cannot be specified in combination with resourceAttributes/);
    const named = await post(SSAR, { metadata: { name: 'x' }, spec: { resourceAttributes: { verb: 'get' } } });
    assert.match((named.json as { message: string }).message, /metadata: Invalid value: .*must be empty/);
  });

  test('SelfSubjectAccessReview for a ServiceAccount: allowed with the binding as the reason, or not allowed (never "denied": RBAC only allows)', async () => {
    const ask = (resourceAttributes: Record<string, string>) => post(SSAR, { spec: { resourceAttributes } }, bot);
    const allowed = await ask({ namespace: 'team', verb: 'get', resource: 'configmaps', name: 'settings' });
    assert.equal(allowed.status, 201);
    assert.deepEqual((allowed.json as { status: unknown }).status, { allowed: true, reason: `RBAC: allowed by RoleBinding "reader/team" of Role "reader" to ServiceAccount "bot/team"` });
    for (const attrs of [{ namespace: 'team', verb: 'get', resource: 'configmaps', name: 'other' }, { namespace: 'team', verb: 'list', resource: 'configmaps' }, { namespace: 'default', verb: 'get', resource: 'configmaps', name: 'settings' }]) {
      assert.deepEqual(((await ask(attrs)).json as { status: unknown }).status, { allowed: false }, JSON.stringify(attrs));
    }
    const discovery = await post(SSAR, { spec: { nonResourceAttributes: { path: '/apis/apps', verb: 'get' } } }, bot);
    assert.deepEqual((discovery.json as { status: unknown }).status, { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"' });
  });

  test('SubjectAccessReview and LocalSubjectAccessReview: about the user and groups of the spec, as given', async () => {
    const SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
    const attrs = { namespace: 'team', verb: 'get', resource: 'configmaps', name: 'settings' };
    const res = await post(SAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: BOT, resourceAttributes: attrs } });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: { creationTimestamp: null },
      spec: { user: BOT, resourceAttributes: attrs },
      status: { allowed: true, reason: `RBAC: allowed by RoleBinding "reader/team" of Role "reader" to ServiceAccount "bot/team"` },
    });
    // Groups are taken as given: without system:authenticated, no discovery.
    const noGroups = await post(SAR, { spec: { user: BOT, nonResourceAttributes: { path: '/apis', verb: 'get' } } });
    assert.deepEqual((noGroups.json as { status: unknown }).status, { allowed: false });
    const withGroup = await post(SAR, { spec: { user: 'someone', groups: ['system:authenticated'], nonResourceAttributes: { path: '/apis', verb: 'get' } } });
    assert.equal((withGroup.json as { status: { allowed: boolean } }).status.allowed, true);
    const masters = await post(SAR, { spec: { user: 'root', groups: ['system:masters'], resourceAttributes: { verb: 'delete', resource: 'nodes' } } });
    assert.deepEqual((masters.json as { status: unknown }).status, { allowed: true });
    const nobody = await post(SAR, { spec: { resourceAttributes: attrs } });
    assert.equal(nobody.status, 422);
    assert.match((nobody.json as { message: string }).message, /spec\.user: Invalid value: "": at least one of user or group must be specified/);
    // A ServiceAccount may not ask about others (system:basic-user covers only the self reviews).
    const asBot = await post(SAR, { spec: { user: BOT, resourceAttributes: attrs } }, bot);
    assert.equal(asBot.status, 403);

    const LSAR = '/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews';
    const local = await post(LSAR, { spec: { user: BOT, resourceAttributes: attrs } });
    assert.equal(local.status, 201);
    assert.deepEqual(local.json, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'LocalSubjectAccessReview',
      metadata: { namespace: 'team', creationTimestamp: null },
      spec: { user: BOT, resourceAttributes: attrs },
      status: { allowed: true, reason: `RBAC: allowed by RoleBinding "reader/team" of Role "reader" to ServiceAccount "bot/team"` },
    });
    const elsewhere = await post(LSAR, { spec: { user: BOT, resourceAttributes: { ...attrs, namespace: 'default' } } });
    assert.equal(elsewhere.status, 422);
    assert.match((elsewhere.json as { message: string }).message, /spec\.resourceAttributes\.namespace: Invalid value: "default": must match metadata\.namespace/);
  });

  test('SelfSubjectRulesReview: the RBAC rules that apply, for the admin and for a ServiceAccount; a namespace is required', async () => {
    const discoveryUrls = ['/livez', '/readyz', '/healthz', '/version', '/version/', '/openapi', '/openapi/*', '/api', '/api/*', '/apis', '/apis/*'];
    const basicUser = [
      { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
    ];
    const publicInfo = { verbs: ['get'], nonResourceURLs: ['/livez', '/readyz', '/healthz', '/version', '/version/'] };
    const res = await post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: { namespace: 'default' } });
    assert.equal(res.status, 201);
    assert.deepEqual((res.json as { status: unknown }).status, {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, ...basicUser],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }, { verbs: ['get'], nonResourceURLs: discoveryUrls }, publicInfo],
      incomplete: false,
    });
    const mine = await post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: { namespace: 'team' } }, bot);
    assert.deepEqual((mine.json as { status: unknown }).status, {
      resourceRules: [...basicUser, { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'] }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: discoveryUrls }, publicInfo],
      incomplete: false,
    });
    const noNamespace = await post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: {} });
    assert.equal(noNamespace.status, 400);
    assert.equal((noNamespace.json as { message: string }).message, 'no namespace on request');
  });

  test('SelfSubjectReview: who the token authenticates as', async () => {
    const res = await post('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    assert.equal(res.status, 201);
    assert.deepEqual((res.json as { status: unknown }).status, { userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] } });
    const sa = c.server.control.get('v1', 'ServiceAccount', 'team', 'bot');
    assert.ok(sa.ok);
    const mine = await post('/apis/authentication.k8s.io/v1/selfsubjectreviews', {}, bot);
    assert.deepEqual((mine.json as { status: unknown }).status, { userInfo: { username: BOT, uid: sa.value.metadata?.uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'] } });
  });
});
