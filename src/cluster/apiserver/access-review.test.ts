/**
 * The access reviews on the wire: what SelfSubjectAccessReview, SelfSubjectRulesReview and
 * SelfSubjectReview answer (201, the request back with its status, nothing stored), and the
 * requests upstream refuses (neither or both attribute kinds, metadata set, no namespace for a
 * rules review, other verbs).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { rawRequest, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

let c: TestCluster;
before(async () => {
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
});
after(async () => {
  await c.close();
});

const post = (path: string, body: unknown) => rawRequest(c.server, 'POST', path, { body: JSON.stringify(body), contentType: 'application/json' });
const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';

describe('access reviews', () => {
  test('SelfSubjectAccessReview: allowed, with the spec echoed and nothing stored', async () => {
    const spec = { resourceAttributes: { namespace: 'default', verb: 'create', group: 'apps', resource: 'deployments' } };
    const res = await post(SSAR, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec });
    assert.equal(res.status, 201);
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

  test('SelfSubjectRulesReview: every resource and URL for the admin; a namespace is required', async () => {
    const res = await post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: { namespace: 'default' } });
    assert.equal(res.status, 201);
    assert.deepEqual((res.json as { status: unknown }).status, {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
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
  });
});
