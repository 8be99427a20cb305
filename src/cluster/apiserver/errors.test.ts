/**
 * Conformance: bad input and the HTTP edges — authentication, open health
 * paths, 413 for bodies over 3 MiB, malformed JSON/YAML, wrong kind or
 * apiVersion in the body, unknown resources and paths, wrong methods,
 * unsupported content types, invalid options — each answered with upstream's
 * Status and never a crash; plus the control API (faults, counts, helpers).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { ServingCertificate } from '../../client/loopback-certificates.ts';
import { MAX_REQUEST_BODY_BYTES } from './body.ts';
import { expectStatus, rawRequest, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';
import { uploadUntilStopped } from '../../testing/hostile-client.ts';

let cert: ServingCertificate;
let c: TestCluster;
let clock: VirtualClock;

before(async () => {
  cert = testCertificate();
  clock = new VirtualClock(Date.UTC(2026, 0, 1));
  c = await startTestCluster(clock, cert);
});
after(async () => {
  await c.close();
});

const status = (json: unknown) => json as { kind: string; code: number; reason: string; message: string; details?: unknown };

describe('authentication', () => {
  test('a wrong token is a 401 Status; no token is the anonymous user, who may read health and version only', async () => {
    const wrong = await rawRequest(c.server, 'GET', '/api/v1/namespaces', { token: 'wrong' });
    assert.equal(wrong.status, 401);
    assert.deepEqual(wrong.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    const anonymous = await rawRequest(c.server, 'GET', '/api/v1/namespaces', { token: null });
    assert.equal(anonymous.status, 403);
    assert.deepEqual(anonymous.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
      reason: 'Forbidden',
      details: { kind: 'namespaces' },
      code: 403,
    });
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const res = await rawRequest(c.server, 'GET', path, { token: null });
      assert.equal(res.status, 200);
      assert.equal(res.text, 'ok');
    }
    // The public-info role names the health paths themselves, not what lies under them.
    assert.equal((await rawRequest(c.server, 'GET', '/readyz/ping', { token: null })).status, 403);
    assert.equal((await rawRequest(c.server, 'GET', '/readyz/ping')).text, 'ok');
    const version = await rawRequest(c.server, 'GET', '/version', { token: null });
    assert.equal((version.json as { gitVersion: string }).gitVersion, 'v1.32.4-workloadspread');
  });
});

describe('bodies', () => {
  test('a body over 3 MiB is refused with 413 and the server keeps serving', async () => {
    const big = JSON.stringify({ metadata: { name: 'big' }, data: { blob: 'x'.repeat(MAX_REQUEST_BODY_BYTES) } });
    const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/configmaps', { body: big, contentType: 'application/json' });
    assert.equal(res.status, 413);
    assert.equal(status(res.json).reason, 'RequestEntityTooLarge');
    assert.equal(status(res.json).message, `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}`);
    const ok = await rawRequest(c.server, 'GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(ok.status, 200);
  });

  const bad: [string, string, string, RegExp][] = [
    ['truncated JSON', '{"metadata": {"name": "x"', 'application/json', /^the object provided is unrecognized \(must be of type ConfigMap\): couldn't get version\/kind; json parse error: /],
    ['an empty body', '', 'application/json', /json parse error: unexpected end of JSON input/],
    ['a JSON array', '[1,2]', 'application/json', /must be of type ConfigMap.*cannot unmarshal array/],
    ['malformed YAML', 'metadata: [unclosed', 'application/yaml', /^error decoding YAML: /],
    ['labels of the wrong type', '{"metadata":{"name":"x","labels":{"a":1}}}', 'application/json', /^ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta\.metadata\.labels of type string$/],
    ['a wrong kind', '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}', 'application/json', /^Secret in version "v1" cannot be handled as a ConfigMap: /],
    ['a wrong group', '{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}}', 'application/json', /^the API version in the data \(apps\/v1\) does not match the expected API version \(v1\)$/],
    ['an unknown version', '{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"x"}}', 'application/json', /^ConfigMap in version "v2" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "v2"/],
  ];
  for (const [what, body, type, message] of bad) {
    test(`${what} is a 400 naming the problem`, async () => {
      const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/configmaps', { body, contentType: type });
      assert.equal(res.status, 400, res.text);
      assert.equal(status(res.json).reason, 'BadRequest');
      assert.match(status(res.json).message, message);
    });
  }

  test('a YAML body is accepted, read with YAML 1.1 rules as the API server reads it', async () => {
    const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/configmaps', { body: 'metadata:\n  name: from-yaml\ndata:\n  key: "yes"\n  on: "x"\n', contentType: 'application/yaml' });
    assert.equal(res.status, 201, res.text);
    // go-yaml v2 reads the key `on` as the boolean true, which becomes the string "true".
    assert.deepEqual((res.json as { data: unknown }).data, { key: 'yes', true: 'x' });
  });

  test('CBOR is not spoken: 415 listing JSON, YAML and protobuf', async () => {
    const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/configmaps', { body: Buffer.from([0xd9, 0xd9, 0xf7]), contentType: 'application/cbor' });
    assert.equal(res.status, 415);
    assert.equal(status(res.json).message, 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf');
  });

  test('an unknown patch type is a 415 listing what the resource accepts', async () => {
    const res = await rawRequest(c.server, 'PATCH', '/api/v1/namespaces/default/configmaps/from-yaml', { body: '{}', contentType: 'text/plain' });
    assert.equal(res.status, 415);
    assert.equal(
      status(res.json).message,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
    );
  });
});

describe('a body no route reads', () => {
  // GETs, unknown paths, health checks, a caller refused before its body matters: answered, then the
  // connection is closed instead of reading (and discarding) an endless body until the request timeout.
  for (const r of [
    { method: 'GET', path: '/api/v1/namespaces', status: 200, token: true },
    { method: 'GET', path: '/healthz', status: 200, token: false },
    { method: 'GET', path: '/nothing/here', status: 404, token: true },
    // Anonymous (no token): refused by RBAC (403), as kube-apiserver with anonymous requests on.
    { method: 'POST', path: '/api/v1/namespaces/default/configmaps', status: 403, token: false },
  ]) {
    test(`${r.method} ${r.path} with an endless chunked body: ${r.status}, and the connection is closed`, async () => {
      const out = await uploadUntilStopped(c.server.url, { method: r.method, path: r.path, ca: c.server.caPem, keepSending: true, ...(r.token ? { token: c.server.token } : {}) });
      assert.equal(out.status, r.status);
      if (r.method === 'GET') assert.equal(out.connection, 'close', 'a read says it ends the connection');
      assert.ok(out.closedByServer, 'the server closed the connection');
      assert.ok(out.bytesSent < 64 * 1024 * 1024, `${out.bytesSent} bytes sent`);
    });
  }
});

describe('routing', () => {
  test('unknown resources, groups and versions are a 404 "could not find the requested resource"', async () => {
    for (const path of ['/api/v1/namespaces/default/widgets', '/apis/nope.example.com/v1/things', '/apis/apps/v9/deployments', '/api/v1/namespaces/default/pods/x/nosuchsub', '/nothing/here']) {
      const res = await rawRequest(c.server, 'GET', path);
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 });
    }
  });

  test('a cluster-scoped resource under a namespace is a 404; POST to a named object is a 405', async () => {
    assert.equal((await rawRequest(c.server, 'GET', '/api/v1/namespaces/default/nodes')).status, 404);
    const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/configmaps/from-yaml', { body: '{}', contentType: 'application/json' });
    assert.equal(res.status, 405);
    assert.equal(status(res.json).reason, 'MethodNotAllowed');
    assert.equal((await rawRequest(c.server, 'POST', '/api/v1/configmaps', { body: '{}', contentType: 'application/json' })).status, 405);
  });

  test('an unsupported dryRun value is a 422 on the options', async () => {
    const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=Some', { body: '{"metadata":{"name":"d"}}', contentType: 'application/json' });
    assert.equal(res.status, 422);
    assert.match(status(res.json).message, /^CreateOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: "Some": supported values: "All"$/);
  });

  test('listing across namespaces works for namespaced resources', async () => {
    const res = await rawRequest(c.server, 'GET', '/api/v1/configmaps');
    assert.equal(res.status, 200);
    const list = res.json as { kind: string; apiVersion: string; items: { kind?: string }[] };
    assert.equal(list.kind, 'ConfigMapList');
    assert.ok(list.items.length > 0);
    assert.equal(list.items[0]?.kind, undefined, 'typed list items carry no kind');
  });
});

describe('control API', () => {
  test('injected faults answer matching requests, `times` limits them, latency runs on the clock', async () => {
    const fault = c.server.control.injectFault({ resource: 'configmaps', verb: 'create', status: 500, message: 'disk on fire', times: 1 });
    const s = await expectStatus(() => c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'f1' } } }));
    assert.equal(s.code, 500);
    assert.equal(s.message, 'Internal error occurred: disk on fire');
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'f1' } } });
    assert.equal(fault.hits, 1);
    const conflict = c.server.control.injectFault({ resource: 'configmaps', verb: 'update', status: 409 });
    const cs = await expectStatus(() => c.core.replaceNamespacedConfigMap({ name: 'f1', namespace: 'default', body: { metadata: { name: 'f1' } } }));
    assert.equal(cs.message, 'Operation cannot be fulfilled on configmaps "f1": the object has been modified; please apply your changes to the latest version and try again');
    conflict.clear();
    const throttled = c.server.control.injectFault({ resource: 'configmaps', verb: 'get', status: 429, retryAfterSeconds: 3, times: 1 });
    const tr = await rawRequest(c.server, 'GET', '/api/v1/namespaces/default/configmaps/f1');
    assert.equal(tr.status, 429);
    assert.equal(tr.headers['retry-after'], '3');
    assert.equal(throttled.hits, 1);
    c.server.control.injectFault({ resource: 'configmaps', verb: 'get', delayMs: 5_000, times: 1 });
    const start = clock.now();
    let answered = false;
    const slow = c.core.readNamespacedConfigMap({ name: 'f1', namespace: 'default' }).then(() => (answered = true));
    // The request reaches the server over real I/O; once it waits on the clock, virtual time can move.
    while (!clock.pendingTimers().some((t) => t.name === 'apiserver injected latency')) await new Promise((r) => setImmediate(r));
    await clock.advance(4_999);
    assert.equal(answered, false);
    assert.ok(clock.pendingTimers().some((t) => t.name === 'apiserver injected latency'), 'still waiting at 4.999 s');
    await clock.advance(1);
    await slow;
    assert.equal(clock.now() - start, 5_000);
  });

  test('request counts by resource and verb', async () => {
    c.server.control.resetCounters();
    await c.core.listNamespacedConfigMap({ namespace: 'default' });
    await c.core.listNamespacedConfigMap({ namespace: 'default' });
    await c.core.readNamespacedConfigMap({ name: 'f1', namespace: 'default' });
    assert.equal(c.server.control.requestCount({ resource: 'configmaps', verb: 'list' }), 2);
    assert.equal(c.server.control.requestCount({ resource: 'configmaps' }), 3);
    assert.equal(c.server.control.requestCount({ verb: 'create' }), 0);
  });

  test('in-process helpers go through the same pipeline and return errors as data', async () => {
    const created = await c.server.control.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'helper', namespace: 'default' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } });
    assert.ok(created.ok);
    assert.equal((created.value['spec'] as { replicas: number }).replicas, 1);
    const dup = await c.server.control.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'helper', namespace: 'default' }, spec: {} });
    assert.ok(!dup.ok);
    const got = c.server.control.get('apps/v1', 'Deployment', 'default', 'helper');
    assert.ok(got.ok && got.value.metadata?.name === 'helper');
    const patched = await c.server.control.patch('apps/v1', 'Deployment', 'default', 'helper', 'application/merge-patch+json', { spec: { replicas: 2 } }, { subresource: 'scale' });
    assert.ok(patched.ok);
    const deleted = await c.server.control.delete('apps/v1', 'Deployment', 'default', 'helper');
    assert.ok(deleted.ok && deleted.value.deleted);
    assert.deepEqual(c.server.control.extensions().subresources.sort(), ['namespaces/finalize', 'pods/binding', 'pods/eviction', 'serviceaccounts/token']);
    assert.deepEqual(c.server.control.extensions().admission, ['NamespaceLifecycle', 'ServiceAccount', 'Priority', 'DefaultTolerationSeconds', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook']);
  });
});
