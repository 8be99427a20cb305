/**
 * Who a request is: ServiceAccount tokens from TokenRequest (the answer's shape, validation,
 * the identity they carry, and that they stop working when they expire or their ServiceAccount
 * or bound Pod goes), anonymous requests, and impersonation (`Impersonate-User`/`-Group`/
 * `-Uid`/`-Extra-*`), itself authorized with the `impersonate` verb — with the real kubectl's
 * `auth can-i`, `auth whoami`, `create token`, `--as` and `--as-group`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { rawRequest, startTestCluster, testCertificate, type RawResponse, type TestCluster } from '../../testing/apiserver-bed.ts';
import { kubectl } from '../../testing/helm.ts';

let c: TestCluster;
let clock: VirtualClock;
let dir: string;
const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const RBAC = 'rbac.authorization.k8s.io/v1';

async function create(obj: KubeObject): Promise<KubeObject> {
  const r = await c.server.control.create(obj);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.status));
  await clock.quiesce();
  return r.value;
}

const tokenRequest = (namespace: string, name: string, spec: Record<string, unknown> = {}, token?: string) =>
  rawRequest(c.server, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, { body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec }), contentType: 'application/json', ...(token === undefined ? {} : { token }) });

const tokenOf = (r: RawResponse) => (r.json as { status: { token: string } }).status.token;

async function whoami(options: { token?: string | null; headers?: Record<string, string | string[]> } = {}): Promise<RawResponse> {
  return rawRequest(c.server, 'POST', WHOAMI, { body: '{}', contentType: 'application/json', ...options });
}

const userInfo = (r: RawResponse) => (r.json as { status: { userInfo: unknown } }).status.userInfo;

const run = (...args: string[]) => kubectl(args, { kubeconfig: join(dir, 'kubeconfig'), home: dir });

before(async () => {
  clock = new VirtualClock(Date.UTC(2026, 0, 1));
  c = await startTestCluster(clock, testCertificate());
  dir = mkdtempSync(join(tmpdir(), 'ws-authn-'));
  await c.server.writeKubeconfig(join(dir, 'kubeconfig'));
  await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
  await create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot', namespace: 'team' } });
});
after(async () => {
  await c.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ServiceAccount tokens', () => {
  test('TokenRequest answers 201 with the request back, defaulted, and a token that authenticates as the ServiceAccount', async () => {
    const res = await tokenRequest('team', 'bot');
    assert.equal(res.status, 201);
    const body = res.json as { kind: string; apiVersion: string; metadata: Record<string, unknown>; spec: Record<string, unknown>; status: { token: string; expirationTimestamp: string } };
    assert.equal(body.kind, 'TokenRequest');
    assert.equal(body.apiVersion, 'authentication.k8s.io/v1');
    assert.deepEqual(body.metadata, { name: 'bot', namespace: 'team', creationTimestamp: '2026-01-01T00:00:00Z' });
    assert.deepEqual(body.spec, { expirationSeconds: 3600, audiences: ['https://kubernetes.default.svc.cluster.local'], boundObjectRef: null });
    assert.equal(body.status.expirationTimestamp, '2026-01-01T01:00:00Z');
    const [, payload] = body.status.token.split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    assert.equal(claims['sub'], 'system:serviceaccount:team:bot');
    const sa = c.server.control.get('v1', 'ServiceAccount', 'team', 'bot');
    assert.ok(sa.ok);
    assert.deepEqual(userInfo(await whoami({ token: body.status.token })), {
      username: 'system:serviceaccount:team:bot',
      uid: sa.value.metadata?.uid,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'],
    });
    // The admin may ask; the ServiceAccount itself may not (no rule grants serviceaccounts/token).
    const self = await tokenRequest('team', 'bot', {}, body.status.token);
    assert.equal(self.status, 403);
    assert.equal((self.json as { message: string }).message, 'serviceaccounts "bot" is forbidden: User "system:serviceaccount:team:bot" cannot create resource "serviceaccounts/token" in API group "" in the namespace "team"');
  });

  test('TokenRequest refuses a duration under 10 minutes and unknown ServiceAccounts; discovery lists the subresource', async () => {
    const short = await tokenRequest('team', 'bot', { expirationSeconds: 60 });
    assert.equal(short.status, 422);
    assert.equal((short.json as { message: string }).message, 'TokenRequest.authentication.k8s.io "bot" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes');
    const missing = await tokenRequest('team', 'ghost');
    assert.equal(missing.status, 404);
    assert.equal((missing.json as { message: string }).message, 'serviceaccounts "ghost" not found');
    const discovery = await rawRequest(c.server, 'GET', '/api/v1');
    const entry = (discovery.json as { resources: { name: string; kind: string; group?: string; version?: string; verbs: string[] }[] }).resources.find((r) => r.name === 'serviceaccounts/token');
    assert.deepEqual(entry && { kind: entry.kind, group: entry.group, version: entry.version, verbs: entry.verbs }, { kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] });
  });

  test('a token stops working when it expires, when its ServiceAccount is deleted, or its bound Pod; a token for another audience never works', async () => {
    const expiring = tokenOf(await tokenRequest('team', 'bot', { expirationSeconds: 600 }));
    assert.equal((await whoami({ token: expiring })).status, 201);
    await clock.advance(600_000);
    assert.equal((await whoami({ token: expiring })).status, 401);

    const elsewhere = tokenOf(await tokenRequest('team', 'bot', { audiences: ['vault'] }));
    assert.equal((await whoami({ token: elsewhere })).status, 401);

    const pod = await create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'team' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const bound = await tokenRequest('team', 'bot', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p', uid: pod.metadata?.uid } });
    assert.equal(bound.status, 201, bound.text);
    const boundToken = tokenOf(bound);
    assert.equal((await whoami({ token: boundToken })).status, 201);
    const wrongUid = await tokenRequest('team', 'bot', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p', uid: 'not-it' } });
    assert.equal(wrongUid.status, 409);
    const deleted = await c.server.control.delete('v1', 'Pod', 'team', 'p', { gracePeriodSeconds: 0 });
    assert.ok(deleted.ok);
    assert.equal((await whoami({ token: boundToken })).status, 401);

    const plain = tokenOf(await tokenRequest('team', 'bot'));
    assert.equal((await whoami({ token: plain })).status, 201);
    assert.ok((await c.server.control.delete('v1', 'ServiceAccount', 'team', 'bot')).ok);
    assert.equal((await whoami({ token: plain })).status, 401);
    // Recreated, it is another ServiceAccount (another uid): the old token stays dead.
    await create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot', namespace: 'team' } });
    assert.equal((await whoami({ token: plain })).status, 401);
    assert.equal((await whoami({ token: tokenOf(await tokenRequest('team', 'bot')) })).status, 201);
  });
});

describe('anonymous requests and impersonation', () => {
  test('no token is system:anonymous in system:unauthenticated, who may not even ask who it is', async () => {
    const res = await whoami({ token: null });
    assert.equal(res.status, 403);
    assert.equal((res.json as { message: string }).message, 'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope');
  });

  test('Impersonate-User, -Group, -Uid and -Extra switch the user; groups default as kube-apiserver defaults them', async () => {
    assert.deepEqual(userInfo(await whoami({ headers: { 'Impersonate-User': 'jane' } })), { username: 'jane', groups: ['system:authenticated'] });
    assert.deepEqual(userInfo(await whoami({ headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': ['devs', 'ops'], 'Impersonate-Uid': 'u-1', 'Impersonate-Extra-Scopes': ['a', 'b'] } })), {
      username: 'jane',
      uid: 'u-1',
      groups: ['devs', 'ops', 'system:authenticated'],
      extra: { scopes: ['a', 'b'] },
    });
    assert.deepEqual(userInfo(await whoami({ headers: { 'Impersonate-User': 'system:serviceaccount:team:bot' } })), {
      username: 'system:serviceaccount:team:bot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'],
    });
    // As anonymous, whoami itself is forbidden — the check ran as the impersonated user.
    assert.equal((await whoami({ headers: { 'Impersonate-User': 'system:anonymous' } })).status, 403);
    assert.deepEqual(userInfo(await whoami({ headers: { 'Impersonate-User': 'system:anonymous', 'Impersonate-Group': 'system:authenticated' } })), { username: 'system:anonymous', groups: ['system:authenticated', 'system:unauthenticated'] });
    const groupsOnly = await whoami({ headers: { 'Impersonate-Group': 'devs' } });
    assert.equal(groupsOnly.status, 500);
  });

  test('impersonation is itself authorized: the impersonate verb on users (by name), groups, serviceaccounts', async () => {
    const token = c.server.control.addUser({ username: 'helpdesk', groups: [] });
    const denied = await whoami({ token, headers: { 'Impersonate-User': 'jane' } });
    assert.equal(denied.status, 403);
    assert.equal((denied.json as { message: string }).message, 'users "jane" is forbidden: User "helpdesk" cannot impersonate resource "users" in API group "" at the cluster scope');
    await create({ apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: 'impersonate-jane' }, rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['jane'] }] });
    await create({ apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name: 'helpdesk' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonate-jane' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'helpdesk' }] });
    assert.deepEqual(userInfo(await whoami({ token, headers: { 'Impersonate-User': 'jane' } })), { username: 'jane', groups: ['system:authenticated'] });
    assert.equal((await whoami({ token, headers: { 'Impersonate-User': 'john' } })).status, 403);
    const group = await whoami({ token, headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': 'system:masters' } });
    assert.equal((group.json as { message: string }).message, 'groups "system:masters" is forbidden: User "helpdesk" cannot impersonate resource "groups" in API group "" at the cluster scope');
    const sa = await whoami({ token, headers: { 'Impersonate-User': 'system:serviceaccount:team:bot' } });
    assert.equal((sa.json as { message: string }).message, 'serviceaccounts "bot" is forbidden: User "helpdesk" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team"');
  });

  test('the real kubectl: auth can-i as the anonymous user, a ServiceAccount and the admin; whoami; create token', async () => {
    const anonymous = await run('auth', 'can-i', 'create', 'pods', '--as', 'system:anonymous');
    assert.notEqual(anonymous.code, 0, anonymous.stdout);
    assert.doesNotMatch(anonymous.stdout, /yes/);
    assert.match(anonymous.stderr, /forbidden: User "system:anonymous" cannot/);
    const account = await run('auth', 'can-i', 'create', 'pods', '--as', 'system:serviceaccount:team:bot');
    assert.equal(account.code, 1);
    assert.equal(account.stdout, 'no\n');
    const admin = await run('auth', 'can-i', 'create', 'pods');
    assert.equal(admin.code, 0);
    assert.equal(admin.stdout, 'yes\n');
    const asGroup = await run('auth', 'can-i', 'get', 'nodes', '--as', 'someone', '--as-group', 'system:masters');
    assert.equal(asGroup.stdout, 'yes\n');
    const whoamiOut = await run('auth', 'whoami', '--as', 'system:serviceaccount:team:bot', '-o', 'json');
    assert.equal(whoamiOut.code, 0, whoamiOut.stderr);
    assert.equal((JSON.parse(whoamiOut.stdout) as { status: { userInfo: { username: string } } }).status.userInfo.username, 'system:serviceaccount:team:bot');
    const created = await run('create', 'token', 'bot', '-n', 'team', '--duration', '20m');
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual((userInfo(await whoami({ token: created.stdout.trim() })) as { username: string }).username, 'system:serviceaccount:team:bot');
    const list = await run('auth', 'can-i', '--list', '-n', 'team', '--as', 'system:serviceaccount:team:bot');
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);
    assert.doesNotMatch(list.stdout, /^\*\.\*/m);
  });
});
