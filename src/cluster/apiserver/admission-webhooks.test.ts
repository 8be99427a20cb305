/**
 * Conformance: admission webhooks called over HTTPS by the embedded API
 * server, with client-node as the client and a test webhook server on the
 * same virtual clock. Every test scopes its configurations to a namespace of
 * its own (through namespaceSelector on kubernetes.io/metadata.name), so
 * they do not see each other's requests.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import type { Operation } from 'rfc6902';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { eventually } from '../../testing/eventually.ts';
import { allow, deny, patch, startWebhookServer, type AdmissionRequest, type TestWebhookServer, type WebhookHandler } from '../../testing/webhook-server.ts';
import { createCertificateAuthority } from '../../client/loopback-certificates.ts';
import { renderKubeconfig } from '../../client/kubeconfig.ts';
import { expectStatus, pod, rawRequest, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

let c: TestCluster;
let clock: VirtualClock;
let hooks: TestWebhookServer;
let counter = 0;
const ca = createCertificateAuthority('webhook-test-ca');

before(async () => {
  clock = new VirtualClock(Date.UTC(2026, 0, 1));
  c = await startTestCluster(clock, testCertificate());
  hooks = await startWebhookServer({ clock, dnsNames: ['hooks.webhooks.svc'], ca });
});
after(async () => {
  await c.close();
  await hooks.close();
});

/** A fresh namespace and a path prefix for one test. */
async function scope(): Promise<{ ns: string; path: (p: string) => string }> {
  const ns = `adm-${++counter}`;
  await c.core.createNamespace({ body: { metadata: { name: ns } } });
  return { ns, path: (p) => `/${ns}/${p}` };
}

type Hook = Record<string, unknown>;

function webhook(ns: string, name: string, path: string, extra: Hook = {}): Hook {
  return {
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    clientConfig: { url: hooks.urlFor(path), caBundle: hooks.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
    ...extra,
  };
}

async function configure(kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration', name: string, webhooks: Hook[]): Promise<void> {
  const r = await c.server.control.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks });
  assert.ok(r.ok, r.ok ? '' : r.status.message);
}

function handle(path: string, handler: WebhookHandler): void {
  hooks.handle(path, handler);
}

const podIn = (ns: string, name: string, labels?: Record<string, string>): k8s.V1Pod => pod(name, { namespace: ns, ...(labels !== undefined ? { labels } : {}) });

/** A TCP relay to `port` on 127.0.0.1 that holds every chunk, both ways, for `delayMs` of real time. */
async function startSlowRelay(port: number, delayMs: number): Promise<{ port: number; chunks: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let chunks = 0;
  const slowly = (from: Socket, to: Socket) => {
    from.on('data', (chunk: Buffer) => {
      chunks++;
      setTimeout(() => to.write(chunk), delayMs);
    });
    from.on('end', () => setTimeout(() => to.end(), delayMs));
  };
  const server = createNetServer((inbound) => {
    const outbound = connect(port, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    slowly(inbound, outbound);
    slowly(outbound, inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    chunks: () => chunks,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function waitForRequests(path: string, n: number): Promise<void> {
  await eventually(() => assert.ok(hooks.requestsTo(path).length >= n, `${hooks.requestsTo(path).length} requests to ${path}`), { timeoutMs: 10_000 });
}

describe('mutating webhooks', () => {
  test('the review carries the request; the patch is applied and stored; warnings reach the client', async () => {
    const { ns, path } = await scope();
    handle(path('add-label'), () => patch([{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }], { warnings: ['pods get a label here'] }));
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [webhook(ns, 'label.hooks.example.com', path('add-label'))]);
    const res = await rawRequest(c.server, 'POST', `/api/v1/namespaces/${ns}/pods`, {
      body: JSON.stringify({ metadata: { generateName: 'web-', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
      contentType: 'application/json',
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers['warning'], '299 - "pods get a label here"');
    const created = res.json as KubeObject;
    assert.equal(created.metadata?.labels?.['mutated'], 'yes');
    const stored = await c.core.readNamespacedPod({ name: created.metadata?.name ?? '', namespace: ns });
    assert.equal(stored.metadata?.labels?.['mutated'], 'yes');

    const [call] = hooks.requestsTo(path('add-label'));
    assert.equal(call?.query.get('timeout'), '10s');
    assert.equal(call?.review?.apiVersion, 'admission.k8s.io/v1');
    assert.equal(call?.review?.kind, 'AdmissionReview');
    const r = call?.request as AdmissionRequest;
    assert.match(r.uid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(r.kind, { group: '', version: 'v1', kind: 'Pod' });
    assert.deepEqual(r.resource, { group: '', version: 'v1', resource: 'pods' });
    assert.deepEqual(r.requestKind, { group: '', version: 'v1', kind: 'Pod' });
    assert.deepEqual(r.requestResource, { group: '', version: 'v1', resource: 'pods' });
    assert.equal(r.subResource, undefined);
    assert.equal(r.name, undefined, 'generateName is resolved after admission');
    assert.equal(r.namespace, ns);
    assert.equal(r.operation, 'CREATE');
    assert.deepEqual(r.userInfo, { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] });
    assert.equal(r.object?.['metadata'] !== undefined && (r.object['metadata'] as { generateName?: string }).generateName, 'web-');
    assert.equal((r.object?.['metadata'] as { uid?: string }).uid, undefined);
    assert.equal(r.oldObject, null);
    assert.equal(r.dryRun, false);
    assert.deepEqual(r.options, { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' });
    assert.equal((r.object?.['spec'] as { serviceAccountName?: string }).serviceAccountName, 'default', 'built-in plug-ins ran before the webhooks');
  });

  test('a webhook that speaks only v1beta1 gets a v1beta1 review, and its answer is checked leniently', async () => {
    const { ns, path } = await scope();
    handle(path('beta'), (req) => ({ review: { response: { uid: `not-${req.uid}`, allowed: true, patch: Buffer.from('[{"op":"add","path":"/metadata/labels/beta","value":"yes"}]').toString('base64'), patchType: 'JSONPatch' } } }));
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [webhook(ns, 'beta.hooks.example.com', path('beta'), { admissionReviewVersions: ['v1beta1'] })]);
    const created = await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'p', { app: 'x' }) });
    assert.equal(hooks.requestsTo(path('beta'))[0]?.review?.apiVersion, 'admission.k8s.io/v1beta1');
    assert.equal(created.metadata?.labels?.['beta'], 'yes');
  });

  test('webhooks run in configuration-name order, each seeing the previous patches', async () => {
    const { ns, path } = await scope();
    const seen: string[] = [];
    handle(path('first'), (req) => {
      seen.push(`first:${JSON.stringify((req.object?.['metadata'] as KubeObject['metadata'])?.labels ?? {})}`);
      return patch([{ op: 'add', path: '/metadata/labels/first', value: '1' }]);
    });
    handle(path('second'), (req) => {
      seen.push(`second:${JSON.stringify((req.object?.['metadata'] as KubeObject['metadata'])?.labels ?? {})}`);
      return patch([{ op: 'add', path: '/metadata/labels/second', value: '2' }]);
    });
    await configure('MutatingWebhookConfiguration', `${ns}-b`, [webhook(ns, 'second.hooks.example.com', path('second'))]);
    await configure('MutatingWebhookConfiguration', `${ns}-a`, [webhook(ns, 'first.hooks.example.com', path('first'))]);
    const created = await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'p', { app: 'x' }) });
    assert.deepEqual(seen, ['first:{"app":"x"}', 'second:{"app":"x","first":"1"}']);
    assert.deepEqual(created.metadata?.labels, { app: 'x', first: '1', second: '2' });
  });

  test('reinvocationPolicy IfNeeded calls a webhook again after a later one changed the object; Never does not', async () => {
    for (const policy of ['IfNeeded', 'Never'] as const) {
      const { ns, path } = await scope();
      const firstSaw: string[][] = [];
      handle(path('first'), (req) => {
        firstSaw.push(Object.keys((req.object?.['metadata'] as KubeObject['metadata'])?.labels ?? {}).sort());
        return allow();
      });
      handle(path('second'), () => patch([{ op: 'add', path: '/metadata/labels/second', value: '2' }]));
      await configure('MutatingWebhookConfiguration', `${ns}-a`, [webhook(ns, 'first.hooks.example.com', path('first'), { reinvocationPolicy: policy })]);
      await configure('MutatingWebhookConfiguration', `${ns}-b`, [webhook(ns, 'second.hooks.example.com', path('second'))]);
      await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'p', { app: 'x' }) });
      assert.equal(hooks.requestsTo(path('second')).length, 1, 'a webhook that changed the object is not called again for its own change');
      if (policy === 'IfNeeded') assert.deepEqual(firstSaw, [['app'], ['app', 'second']]);
      else assert.deepEqual(firstSaw, [['app']]);
    }
  });

  test('a patch that does not apply fails the request; an empty patch changes nothing', async () => {
    const { ns, path } = await scope();
    handle(path('bad'), (req) => (req.object?.['metadata'] as { name?: string }).name === 'bad' ? patch([{ op: 'replace', path: '/spec/nothing', value: 1 }]) : patch([]));
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [webhook(ns, 'bad.hooks.example.com', path('bad'), { failurePolicy: 'Ignore' })]);
    const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'bad') }));
    assert.equal(s.code, 500, 'even with failurePolicy Ignore');
    assert.equal(s.message, 'Internal error occurred: replace operation does not apply: doc is missing key: /spec/nothing: missing value');
    const ok = await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'good', { a: 'b' }) });
    assert.deepEqual(ok.metadata?.labels, { a: 'b' });
  });

  test('a patch on DELETE is refused; an unsupported patchType is a call failure', async () => {
    const { ns, path } = await scope();
    handle(path('del'), () => patch([{ op: 'add', path: '/metadata/labels', value: {} }]));
    handle(path('type'), () => patch([{ op: 'add', path: '/metadata/labels', value: {} }], { patchType: 'MergePatch' }));
    await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'victim') });
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [
      webhook(ns, 'del.hooks.example.com', path('del'), { rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }),
      webhook(ns, 'type.hooks.example.com', path('type')),
    ]);
    const d = await expectStatus(() => c.core.deleteNamespacedPod({ name: 'victim', namespace: ns }));
    assert.equal(d.code, 500);
    assert.equal(d.message, 'Internal error occurred: admission webhook "del.hooks.example.com" attempted to modify the object, which is not supported for this operation');
    const t = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'typed') }));
    assert.equal(t.message, 'Internal error occurred: failed calling webhook "type.hooks.example.com": unsupported patch type "MergePatch"');
  });
});

describe('validating webhooks', () => {
  test('a denial becomes the request error; codes ≥ 400 pass through, lower ones become 400', async () => {
    const { ns, path } = await scope();
    const answers: Record<string, ReturnType<typeof deny>> = {
      plain: deny('not on my watch'),
      throttled: deny('slow down', 429),
      broken: deny('upstream broke', 500),
      low: deny('odd code', 200),
      reasoned: { allowed: false, status: { reason: 'Forbidden', code: 403 } },
      silent: { allowed: false },
    };
    handle(path('v'), (req) => answers[(req.object?.['metadata'] as { name: string }).name] ?? allow());
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [webhook(ns, 'deny.hooks.example.com', path('v'))]);
    const cases: [string, number, string, string | undefined][] = [
      ['plain', 400, 'admission webhook "deny.hooks.example.com" denied the request: not on my watch', undefined],
      ['throttled', 429, 'admission webhook "deny.hooks.example.com" denied the request: slow down', undefined],
      ['broken', 500, 'admission webhook "deny.hooks.example.com" denied the request: upstream broke', undefined],
      ['low', 400, 'admission webhook "deny.hooks.example.com" denied the request: odd code', undefined],
      ['reasoned', 403, 'admission webhook "deny.hooks.example.com" denied the request: Forbidden', 'Forbidden'],
      ['silent', 400, 'admission webhook "deny.hooks.example.com" denied the request without explanation', undefined],
    ];
    for (const [name, code, message, reason] of cases) {
      const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, name) }));
      assert.deepEqual([s.code, s.message, s.reason, s.status], [code, message, reason, 'Failure'], name);
    }
    assert.equal((await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'fine') })).metadata?.name, 'fine');
  });

  test('validating webhooks see the final object (uid, creationTimestamp) and are all called; the first failure in order is reported', async () => {
    const { ns, path } = await scope();
    handle(path('a'), (req) => ((req.object?.['metadata'] as { uid?: string }).uid === undefined ? deny('no uid yet') : allow()));
    handle(path('b'), () => deny('b says no'));
    handle(path('c'), () => deny('c says no'));
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [webhook(ns, 'a.hooks.example.com', path('a')), webhook(ns, 'b.hooks.example.com', path('b')), webhook(ns, 'c.hooks.example.com', path('c'))]);
    const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'p') }));
    assert.equal(s.message, 'admission webhook "b.hooks.example.com" denied the request: b says no');
    assert.deepEqual([path('a'), path('b'), path('c')].map((p) => hooks.requestsTo(p).length), [1, 1, 1]);
    const a = hooks.requestsTo(path('a'))[0]?.request;
    assert.equal((a?.object?.['metadata'] as { creationTimestamp?: string }).creationTimestamp, '2026-01-01T00:00:00Z');
  });

  test('a patch from a validating webhook is an invalid answer', async () => {
    const { ns, path } = await scope();
    handle(path('v'), () => patch([{ op: 'add', path: '/metadata/labels/x', value: 'y' }]));
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [webhook(ns, 'patchy.hooks.example.com', path('v'))]);
    const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'p') }));
    assert.equal(s.code, 500);
    assert.equal(s.message, 'Internal error occurred: failed calling webhook "patchy.hooks.example.com": received invalid webhook response: validating webhook may not return response.patch');
  });
});

describe('matching', () => {
  test('subresource rules: pods/status and */scale are matched, plain pods is not matched by a status write', async () => {
    const { ns, path } = await scope();
    handle(path('seen'), () => allow());
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [
      webhook(ns, 'status.hooks.example.com', path('seen'), { rules: [{ operations: ['UPDATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['pods/status', '*/scale'] }] }),
    ]);
    await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'p') });
    await c.core.patchNamespacedPod({ name: 'p', namespace: ns, body: { metadata: { labels: { x: 'y' } } } }, merge);
    assert.equal(hooks.requestsTo(path('seen')).length, 0, 'UPDATE of pods is not pods/status');
    await c.core.patchNamespacedPodStatus({ name: 'p', namespace: ns, body: { status: { message: 'hi' } } }, merge);
    await c.apps.createNamespacedDeployment({ namespace: ns, body: { metadata: { name: 'd' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } } });
    await c.apps.patchNamespacedDeploymentScale({ name: 'd', namespace: ns, body: { spec: { replicas: 3 } } }, merge);
    const [status, scale] = hooks.requestsTo(path('seen')).map((r) => r.request);
    assert.deepEqual([status?.subResource, status?.kind.kind, status?.operation], ['status', 'Pod', 'UPDATE']);
    assert.deepEqual([scale?.subResource, scale?.kind, scale?.resource], ['scale', { group: 'autoscaling', version: 'v1', kind: 'Scale' }, { group: 'apps', version: 'v1', resource: 'deployments' }]);
    assert.equal((scale?.object?.['spec'] as { replicas: number }).replicas, 3);
    assert.equal((scale?.oldObject?.['spec'] as { replicas: number }).replicas, 1);
  });

  test('objectSelector matches the new or the old object', async () => {
    const { ns, path } = await scope();
    handle(path('sel'), () => allow());
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [
      webhook(ns, 'sel.hooks.example.com', path('sel'), { objectSelector: { matchLabels: { watched: 'yes' } }, rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] }),
    ]);
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'quiet' } } });
    await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'loud', labels: { watched: 'yes' } } } });
    await c.core.patchNamespacedConfigMap({ name: 'loud', namespace: ns, body: { metadata: { labels: { watched: null } } } }, merge);
    await c.core.patchNamespacedConfigMap({ name: 'loud', namespace: ns, body: { metadata: { labels: { other: 'x' } } } }, merge);
    await c.core.deleteNamespacedConfigMap({ name: 'quiet', namespace: ns });
    const ops = hooks.requestsTo(path('sel')).map((r) => `${r.request?.operation} ${r.request?.name}`);
    assert.deepEqual(ops, ['CREATE loud', 'UPDATE loud'], 'the label removal matches through the old object; later updates do not');
  });

  test('namespaceSelector: namespaces carry kubernetes.io/metadata.name; other namespaces are not intercepted', async () => {
    const { ns, path } = await scope();
    const other = await scope();
    handle(path('ns'), () => deny('caught'));
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [webhook(ns, 'ns.hooks.example.com', path('ns'))]);
    const nsObj = await c.core.readNamespace({ name: ns });
    assert.equal(nsObj.metadata?.labels?.['kubernetes.io/metadata.name'], ns);
    await c.core.createNamespacedPod({ namespace: other.ns, body: podIn(other.ns, 'free') });
    const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'caught') }));
    assert.equal(s.message, 'admission webhook "ns.hooks.example.com" denied the request: caught');
  });

  test('webhook configurations themselves are never sent to webhooks', async () => {
    const { ns, path } = await scope();
    handle(path('all'), () => deny('everything'));
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [
      webhook(ns, 'all.hooks.example.com', path('all'), { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: '*' }], namespaceSelector: {} }),
    ]);
    // Deleting the configuration must not be blocked by the webhook it configures.
    const r = await c.server.control.delete('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', '', `${ns}-v`);
    assert.ok(r.ok);
    assert.equal(hooks.requestsTo(path('all')).length, 0);
  });

  test('matchPolicy Equivalent calls a webhook registered for another version of a custom resource, with the object in that version', async () => {
    const { ns, path } = await scope();
    const ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
    const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'gizmos.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'gizmos', kind: 'Gizmo' },
          versions: [
            { name: 'v1', served: true, storage: true, schema },
            { name: 'v2', served: true, storage: false, schema },
          ],
        },
      },
    });
    await c.server.core.idle();
    handle(path('eq'), () => allow());
    handle(path('exact'), () => allow());
    const rules = [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['gizmos'] }];
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [
      webhook(ns, 'eq.hooks.example.com', path('eq'), { rules }),
      webhook(ns, 'exact.hooks.example.com', path('exact'), { rules, matchPolicy: 'Exact' }),
    ]);
    const custom = c.kc.makeApiClient(k8s.CustomObjectsApi);
    await custom.createNamespacedCustomObject({ group: 'example.com', version: 'v2', namespace: ns, plural: 'gizmos', body: { apiVersion: 'example.com/v2', kind: 'Gizmo', metadata: { name: 'g' } } });
    assert.equal(hooks.requestsTo(path('exact')).length, 0);
    const r = hooks.requestsTo(path('eq'))[0]?.request;
    assert.deepEqual(r?.kind, { group: 'example.com', version: 'v1', kind: 'Gizmo' });
    assert.deepEqual(r?.resource, { group: 'example.com', version: 'v1', resource: 'gizmos' });
    assert.deepEqual(r?.requestKind, { group: 'example.com', version: 'v2', kind: 'Gizmo' });
    assert.equal(r?.object?.['apiVersion'], 'example.com/v1');
  });
});

describe('failures and failurePolicy', () => {
  test('connection refused: Fail is a 500 naming the webhook, Ignore lets the request through', async () => {
    const { ns, path } = await scope();
    const gone = await startWebhookServer({ ca });
    const url = gone.urlFor(path('nobody'));
    const port = gone.port;
    await gone.close();
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [
      webhook(ns, 'down.hooks.example.com', path('nobody'), { clientConfig: { url, caBundle: hooks.caBundle }, objectSelector: { matchLabels: { policy: 'fail' } } }),
      webhook(ns, 'down-ignored.hooks.example.com', path('nobody'), { clientConfig: { url, caBundle: hooks.caBundle }, failurePolicy: 'Ignore' }),
    ]);
    const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'a', { policy: 'fail' }) }));
    assert.equal(s.code, 500);
    assert.equal(s.reason, 'InternalError');
    assert.equal(
      s.message,
      `Internal error occurred: failed calling webhook "down.hooks.example.com": failed to call webhook: Post "${url}?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
    const created = await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'b') });
    assert.equal(created.metadata?.name, 'b');
  });

  test('a webhook slower than timeoutSeconds (on the virtual clock) times out; Ignore goes on without it', async () => {
    const { ns, path } = await scope();
    handle(path('slow'), async () => {
      await clock.sleep(20_000);
      return patch([{ op: 'add', path: '/metadata/labels/late', value: 'yes' }]);
    });
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [webhook(ns, 'slow.hooks.example.com', path('slow'), { timeoutSeconds: 3 })]);
    let settled = false;
    const pending = expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'a') })).finally(() => (settled = true));
    await waitForRequests(path('slow'), 1);
    assert.equal(hooks.requestsTo(path('slow'))[0]?.query.get('timeout'), '3s');
    await clock.advance(2_000);
    assert.equal(settled, false, 'still waiting after 2 s of a 3 s timeout');
    await clock.advance(1_000);
    const s = await pending;
    assert.equal(s.code, 500);
    assert.match(s.message ?? '', /^Internal error occurred: failed calling webhook "slow\.hooks\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/adm-\d+\/slow\?timeout=3s": context deadline exceeded$/);
    await clock.settle();

    const second = await scope();
    handle(second.path('slow'), async () => {
      await clock.sleep(20_000);
      return allow();
    });
    await configure('MutatingWebhookConfiguration', `${second.ns}-m`, [webhook(second.ns, 'slow-ignored.hooks.example.com', second.path('slow'), { failurePolicy: 'Ignore' })]);
    const ignored = c.core.createNamespacedPod({ namespace: second.ns, body: podIn(second.ns, 'b') });
    await waitForRequests(second.path('slow'), 1);
    await clock.advance(10_000);
    assert.equal((await ignored).metadata?.name, 'b', 'default timeout of 10 s, then ignored');
    await clock.settle();
  });

  test('a review slow to reach its webhook (a loaded network) does not time out on the virtual clock: time stands still while it is on its way', async () => {
    const { ns, path } = await scope();
    handle(path('far'), () => patch([{ op: 'add', path: '/metadata/labels/reached', value: 'yes' }]));
    // Every chunk, both ways, waits 100 ms of real time in the relay: longer than any count of event-loop turns.
    const relay = await startSlowRelay(hooks.port, 100);
    try {
      await configure('MutatingWebhookConfiguration', `${ns}-m`, [webhook(ns, 'far.hooks.example.com', path('far'), { clientConfig: { url: `https://127.0.0.1:${relay.port}${path('far')}`, caBundle: hooks.caBundle }, timeoutSeconds: 1 })]);
      const creating = c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'a', { app: 'far' }) });
      await eventually(() => assert.ok(relay.chunks() > 0, 'the API server is calling the webhook'), { timeoutMs: 10_000 });
      // Someone drives the clock meanwhile: it would jump to the 1 s timeout at the first idle instant.
      const advancing = clock.advance(5_000);
      const created = await creating;
      await advancing;
      assert.equal(created.metadata?.labels?.['reached'], 'yes');
    } finally {
      await relay.close();
    }
  });

  test('bad answers are call failures, with the Go client texts', async () => {
    const { ns, path } = await scope();
    const replies: Record<string, Parameters<typeof handle>[1]> = {
      text: () => ({ raw: { body: 'garbage', contentType: 'text/plain' } }),
      notjson: () => ({ raw: { body: '{garbage' } }),
      absent: () => ({ raw: { body: '{"foo":1}' } }),
      uid: () => ({ review: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'other', allowed: true } } }),
      gvk: (req) => ({ review: { response: { uid: req.uid, allowed: true } } }),
      server: () => ({ raw: { status: 500, body: 'boom', contentType: 'text/plain' } }),
      status: () => ({ raw: { status: 403, body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'who are you', code: 403 }) } }),
      nopatchtype: (req) => ({ review: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: req.uid, allowed: true, patch: Buffer.from('[]').toString('base64') } } }),
      allowedtype: (req) => ({ review: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: req.uid, allowed: 'yes' } } }),
    };
    const expected: Record<string, RegExp> = {
      text: /: failed to call webhook: serializer for text\/plain doesn't exist$/,
      notjson: /: failed to call webhook: couldn't get version\/kind; json parse error: /,
      absent: /: received invalid webhook response: webhook response was absent$/,
      uid: /: received invalid webhook response: expected response\.uid="[0-9a-f-]{36}", got "other"$/,
      gvk: /: received invalid webhook response: expected webhook response of admission\.k8s\.io\/v1, Kind=AdmissionReview, got \/, Kind=$/,
      server: /: failed to call webhook: an error on the server \("boom"\) has prevented the request from succeeding$/,
      status: /: failed to call webhook: who are you$/,
      nopatchtype: /: received invalid webhook response: webhook returned response\.patch but not response\.patchType$/,
      allowedtype: /: failed to call webhook: json: cannot unmarshal string into Go struct field AdmissionResponse\.response\.allowed of type bool$/,
    };
    handle(path('bad'), (req, rec) => (replies[(req.object?.['metadata'] as { name: string }).name] ?? (() => allow()))(req, rec));
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [webhook(ns, 'bad.hooks.example.com', path('bad'))]);
    for (const [name, want] of Object.entries(expected)) {
      const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, name) }));
      assert.equal(s.code, 500, name);
      assert.ok((s.message ?? '').startsWith('Internal error occurred: failed calling webhook "bad.hooks.example.com"'), s.message);
      assert.match(s.message ?? '', want, name);
    }
  });
});

describe('dry run and side effects', () => {
  test('None and NoneOnDryRun webhooks get dry runs (dryRun: true) and nothing is stored; Unknown/Some refuse them with 400', async () => {
    const { ns, path } = await scope();
    handle(path('dry'), () => patch([{ op: 'add', path: '/metadata/labels/dry', value: 'run' }]));
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [
      webhook(ns, 'none.hooks.example.com', path('dry')),
      webhook(ns, 'noneondryrun.hooks.example.com', path('dry'), { sideEffects: 'NoneOnDryRun' }),
    ]);
    const answer = await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'dry', { app: 'x' }), dryRun: 'All' });
    assert.equal(answer.metadata?.labels?.['dry'], 'run');
    const calls = hooks.requestsTo(path('dry'));
    assert.equal(calls.length, 2);
    assert.ok(calls.every((r) => r.request?.dryRun === true));
    assert.deepEqual(calls[0]?.request?.options, { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', dryRun: ['All'] });
    assert.equal((await expectStatus(() => c.core.readNamespacedPod({ name: 'dry', namespace: ns }))).code, 404);

    // v1 no longer accepts Unknown/Some: store such a configuration the way an older API version left it.
    for (const sideEffects of ['Unknown', 'Some']) {
      const name = `${ns}-${sideEffects.toLowerCase()}`;
      const config = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name, uid: name, generation: 1 }, webhooks: [webhook(ns, `${sideEffects.toLowerCase()}.hooks.example.com`, path('dry'), { sideEffects, failurePolicy: 'Ignore' })] };
      assert.ok(c.server.core.store.create('admissionregistration.k8s.io/mutatingwebhookconfigurations', config).ok);
      const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'dry2', { app: 'x' }), dryRun: 'All' }));
      assert.deepEqual([s.code, s.reason, s.message], [400, 'BadRequest', `admission webhook "${sideEffects.toLowerCase()}.hooks.example.com" does not support dry run`]);
      assert.ok(c.server.core.store.delete('admissionregistration.k8s.io/mutatingwebhookconfigurations', '', name).ok);
    }
    const v = await expectStatus(() =>
      c.server.control
        .create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: `${ns}-bad` }, webhooks: [webhook(ns, 'x.hooks.example.com', path('dry'), { sideEffects: 'Unknown' })] })
        .then((r) => (r.ok ? r.value : Promise.reject({ code: r.status.code, body: r.status }))),
    );
    assert.equal(v.message, 'MutatingWebhookConfiguration.admissionregistration.k8s.io "adm-' + ns.slice(4) + '-bad" is invalid: webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"');
  });
});

describe('other operations', () => {
  test('DELETE reviews carry the stored object as oldObject, no object, and DeleteOptions', async () => {
    const { ns, path } = await scope();
    handle(path('del'), () => allow());
    await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'victim', { keep: 'me' }) });
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [
      webhook(ns, 'del.hooks.example.com', path('del'), { rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }),
    ]);
    await c.core.deleteNamespacedPod({ name: 'victim', namespace: ns, gracePeriodSeconds: 5 });
    const r = hooks.requestsTo(path('del'))[0]?.request;
    assert.equal(r?.operation, 'DELETE');
    assert.equal(r?.name, 'victim');
    assert.equal(r?.object, null);
    assert.deepEqual((r?.oldObject?.['metadata'] as KubeObject['metadata'])?.labels, { keep: 'me' });
    assert.deepEqual(r?.options, { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', gracePeriodSeconds: 5 });
  });

  test('service references resolve through the control API, verify caBundle against <service>.<namespace>.svc', async () => {
    const { ns, path } = await scope();
    handle(path('svc'), () => patch([{ op: 'add', path: '/metadata/labels/via', value: 'service' }]));
    const service = { namespace: 'webhooks', name: 'hooks', path: path('svc'), port: 8443 };
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [
      webhook(ns, 'svc.hooks.example.com', path('svc'), { clientConfig: { service, caBundle: hooks.caBundle }, objectSelector: { matchLabels: { trust: 'ca' } } }),
      webhook(ns, 'nobundle.hooks.example.com', path('svc'), { clientConfig: { service }, objectSelector: { matchLabels: { trust: 'system' } } }),
    ]);
    const missing = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'a', { trust: 'ca' }) }));
    assert.equal(missing.message, `Internal error occurred: failed calling webhook "svc.hooks.example.com": failed to call webhook: Post "https://hooks.webhooks.svc:8443${path('svc')}?timeout=10s": service "hooks" not found`);
    const unregister = c.server.control.registerServiceEndpoint({ namespace: 'webhooks', name: 'hooks', port: 8443 }, hooks.origin);
    try {
      const created = await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'b', { trust: 'ca' }) });
      assert.equal(created.metadata?.labels?.['via'], 'service');
      assert.equal(hooks.requestsTo(path('svc'))[0]?.headers.host, 'hooks.webhooks.svc:8443');
      const untrusted = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'c', { trust: 'system' }) }));
      assert.equal(
        untrusted.message,
        `Internal error occurred: failed calling webhook "nobundle.hooks.example.com": failed to call webhook: Post "https://hooks.webhooks.svc:8443${path('svc')}?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
      );
    } finally {
      unregister();
    }
  });

  test('userInfo is the authenticated user of the request', async () => {
    const { ns, path } = await scope();
    handle(path('who'), () => allow());
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [webhook(ns, 'who.hooks.example.com', path('who'))]);
    const token = c.server.control.addUser({ username: 'system:serviceaccount:kube-system:replicaset-controller', uid: 'u-1', groups: ['system:serviceaccounts', 'system:authenticated'] });
    // RBAC lets it create pods here, as upstream's bootstrap role lets the ReplicaSet controller.
    const granted = await c.server.control.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'replicaset-controller', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'replicaset-controller', namespace: 'kube-system' }],
    });
    assert.ok(granted.ok);
    const kc = new k8s.KubeConfig();
    kc.loadFromString(renderKubeconfig({ server: c.server.url, caPem: c.server.caPem, token, name: 'other' }));
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedPod({ namespace: ns, body: podIn(ns, 'p') });
    assert.deepEqual(hooks.requestsTo(path('who'))[0]?.request?.userInfo, {
      username: 'system:serviceaccount:kube-system:replicaset-controller',
      uid: 'u-1',
      groups: ['system:serviceaccounts', 'system:authenticated'],
    });
  });
});

describe('matchConditions', () => {
  const deletes = { rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] };
  const conditions = (...list: [string, string][]) => ({ matchConditions: list.map(([name, expression]) => ({ name, expression })) });

  test('a webhook is called when every condition is true and skipped when one is false', async () => {
    const { ns, path } = await scope();
    handle(path('all-true'), () => allow());
    handle(path('one-false'), () => deny('must not be called'));
    handle(path('mutate'), () => patch([{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }]));
    handle(path('mutate-skipped'), () => patch([{ op: 'add', path: '/metadata/labels/skipped', value: 'no' }]));
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [
      webhook(ns, 'true.hooks.example.com', path('all-true'), conditions(['web', "object.metadata.labels.app == 'web'"], ['create', "request.operation == 'CREATE'"])),
      webhook(ns, 'false.hooks.example.com', path('one-false'), conditions(['web', "object.metadata.labels.app == 'web'"], ['db', "object.metadata.labels.app == 'db'"])),
    ]);
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [
      webhook(ns, 'mutate.hooks.example.com', path('mutate'), conditions(['no-uid-yet', '!has(object.metadata.uid)'])),
      webhook(ns, 'mutate-skipped.hooks.example.com', path('mutate-skipped'), conditions(['never', 'oldObject != null'])),
    ]);
    const created = await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'p', { app: 'web' }) });
    assert.equal(hooks.requestsTo(path('all-true')).length, 1);
    assert.equal(hooks.requestsTo(path('one-false')).length, 0, 'a false condition skips the webhook: its denial never happens');
    assert.deepEqual(created.metadata?.labels, { app: 'web', mutated: 'yes' });
    assert.equal(hooks.requestsTo(path('mutate-skipped')).length, 0);
  });

  test('a pod DELETE webhook with !has(oldObject.metadata.deletionTimestamp) sees the graceful delete of a running pod, not the final one', async () => {
    const { ns, path } = await scope();
    handle(path('guarded'), () => allow());
    handle(path('plain'), () => allow());
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [
      webhook(ns, 'guarded.hooks.example.com', path('guarded'), { ...deletes, ...conditions(['not-terminating', '!has(oldObject.metadata.deletionTimestamp)']) }),
      webhook(ns, 'plain.hooks.example.com', path('plain'), deletes),
    ]);
    await c.core.createNamespacedPod({ namespace: ns, body: pod('running', { namespace: ns, nodeName: 'node-1' }) });
    await c.core.deleteNamespacedPod({ name: 'running', namespace: ns });
    const terminating = await c.core.readNamespacedPod({ name: 'running', namespace: ns });
    assert.ok(terminating.metadata?.deletionTimestamp !== undefined, 'a pod on a node is deleted gracefully');
    assert.equal(hooks.requestsTo(path('guarded')).length, 1, 'the graceful delete is reviewed');
    // The kubelet's final delete of the terminating pod.
    await c.core.deleteNamespacedPod({ name: 'running', namespace: ns, gracePeriodSeconds: 0 });
    assert.equal((await expectStatus(() => c.core.readNamespacedPod({ name: 'running', namespace: ns }))).code, 404, 'the final delete removed it');
    assert.equal(hooks.requestsTo(path('plain')).length, 2, 'without the condition, both deletes reach the webhook');
    assert.equal(hooks.requestsTo(path('guarded')).length, 1, 'the final delete of a terminating pod does not');
    assert.ok(hooks.requestsTo(path('plain'))[1]?.request?.oldObject?.['metadata'] !== undefined);
  });

  test('request.operation and request.userInfo.username select who and what reaches the webhook', async () => {
    const { ns, path } = await scope();
    handle(path('robots'), () => allow());
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [
      webhook(ns, 'robots.hooks.example.com', path('robots'), {
        rules: [{ operations: ['CREATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        ...conditions(['deletes', "request.operation == 'DELETE'"], ['robots-only', "request.userInfo.username.startsWith('system:serviceaccount:')"]),
      }),
    ]);
    const robotName = 'system:serviceaccount:kube-system:replicaset-controller';
    const token = c.server.control.addUser({ username: robotName, groups: ['system:serviceaccounts', 'system:authenticated'] });
    // RBAC is enforced: the robot may create and delete pods in this namespace, as its role would let it.
    const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'pods' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create', 'delete'] }] } });
    await rbac.createNamespacedRoleBinding({ namespace: ns, body: { metadata: { name: 'robot-pods' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pods' }, subjects: [{ kind: 'User', name: robotName }] } });
    const kc = new k8s.KubeConfig();
    kc.loadFromString(renderKubeconfig({ server: c.server.url, caPem: c.server.caPem, token, name: 'robot' }));
    const robot = kc.makeApiClient(k8s.CoreV1Api);
    await robot.createNamespacedPod({ namespace: ns, body: podIn(ns, 'by-robot') });
    await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'by-admin') });
    assert.equal(hooks.requestsTo(path('robots')).length, 0, 'creates are not deletes');
    await c.core.deleteNamespacedPod({ name: 'by-admin', namespace: ns });
    assert.equal(hooks.requestsTo(path('robots')).length, 0, 'the admin is not a service account');
    await robot.deleteNamespacedPod({ name: 'by-robot', namespace: ns });
    const calls = hooks.requestsTo(path('robots'));
    assert.deepEqual(
      calls.map((r) => [r.request?.operation, r.request?.name, r.request?.userInfo.username]),
      [['DELETE', 'by-robot', 'system:serviceaccount:kube-system:replicaset-controller']],
    );
  });

  test('an evaluation error: failurePolicy Fail refuses the request (403), Ignore skips the webhook', async () => {
    const { ns, path } = await scope();
    handle(path('fail'), () => allow());
    handle(path('ignore'), () => allow());
    const broken = "object.metadata.annotations['team'] == 'a'";
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [
      webhook(ns, 'ignore.hooks.example.com', path('ignore'), { failurePolicy: 'Ignore', ...conditions(['team', broken]) }),
      webhook(ns, 'fail.hooks.example.com', path('fail'), { failurePolicy: 'Fail', objectSelector: { matchLabels: { policy: 'fail' } }, ...conditions(['ok', 'true'], ['team', broken]) }),
    ]);
    const created = await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'ignored', { policy: 'ignore' }) });
    assert.equal(created.metadata?.name, 'ignored', 'Ignore: the request goes on without the webhook');
    const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'refused', { policy: 'fail' }) }));
    assert.equal(s.code, 403);
    assert.equal(s.reason, 'Forbidden');
    assert.equal(s.message, `pods "refused" is forbidden: expression '${broken}' resulted in error: no such key: annotations`);
    assert.equal(hooks.requestsTo(path('ignore')).length, 0);
    assert.equal(hooks.requestsTo(path('fail')).length, 0);
    // A false condition wins over an error: the webhook is skipped, the request goes through.
    await configure('ValidatingWebhookConfiguration', `${ns}-v2`, [
      webhook(ns, 'false-first.hooks.example.com', path('fail'), { objectSelector: { matchLabels: { policy: 'mixed' } }, ...conditions(['team', broken], ['never', 'false']) }),
    ]);
    await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'mixed', { policy: 'mixed' }) });
    assert.equal(hooks.requestsTo(path('fail')).length, 0);
  });

  test('mutating webhooks are matched one at a time: a condition sees what an earlier webhook added', async () => {
    const { ns, path } = await scope();
    handle(path('tag'), () => patch([{ op: 'add', path: '/metadata/labels/tagged', value: 'yes' }]));
    handle(path('after-tag'), () => patch([{ op: 'add', path: '/metadata/labels/seen-tag', value: 'yes' }]));
    await configure('MutatingWebhookConfiguration', `${ns}-a`, [webhook(ns, 'tag.hooks.example.com', path('tag'))]);
    await configure('MutatingWebhookConfiguration', `${ns}-b`, [webhook(ns, 'after.hooks.example.com', path('after-tag'), conditions(['tagged', "has(object.metadata.labels.tagged) && object.metadata.labels.tagged == 'yes'"]))]);
    const created = await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'p', { app: 'x' }) });
    assert.deepEqual(created.metadata?.labels, { app: 'x', tagged: 'yes', 'seen-tag': 'yes' });
  });

  test('values: object fields as JSON with integers as int; the authorizer is this server\'s', async () => {
    const { ns, path } = await scope();
    handle(path('typed'), () => allow());
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [
      webhook(ns, 'typed.hooks.example.com', path('typed'), {
        ...conditions(
          ['int', 'type(object.spec.terminationGracePeriodSeconds) == int && object.spec.terminationGracePeriodSeconds + 1 == 31'],
          ['containers', "object.spec.containers.exists(c, c.image.startsWith('nginx'))"],
          ['no-old', 'oldObject == null'],
          ['authz', "authorizer.requestResource.check('create').allowed() && authorizer.group('').resource('pods').namespace(request.namespace).check('delete').allowed()"],
          ['options', "request.options.kind == 'CreateOptions' && !request.dryRun && request.kind.kind == 'Pod' && request.resource.resource == 'pods'"],
        ),
      }),
    ]);
    await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, 'p') });
    assert.equal(hooks.requestsTo(path('typed')).length, 1);
  });

  test('each expression is compiled once per configuration version, not per request', async () => {
    const { ns, path } = await scope();
    handle(path('counted'), () => allow());
    const compilations = () => c.server.core.webhooks.matchConditionCompilations;
    const hook = (expression: string) => webhook(ns, 'counted.hooks.example.com', path('counted'), conditions(['a', "object.metadata.labels.app == 'web'"], ['b', expression]));
    await configure('ValidatingWebhookConfiguration', `${ns}-v`, [hook('true')]);
    const before = compilations();
    for (let i = 0; i < 3; i++) await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, `p${i}`, { app: 'web' }) });
    assert.equal(hooks.requestsTo(path('counted')).length, 3);
    assert.equal(compilations() - before, 2, 'two expressions, compiled on first use');
    const admission = c.kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    await admission.patchValidatingWebhookConfiguration(
      { name: `${ns}-v`, body: [{ op: 'replace', path: '/webhooks/0/matchConditions/1/expression', value: "request.operation == 'CREATE'" }] },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
    );
    for (let i = 3; i < 6; i++) await c.core.createNamespacedPod({ namespace: ns, body: podIn(ns, `p${i}`, { app: 'web' }) });
    assert.equal(hooks.requestsTo(path('counted')).length, 6);
    assert.equal(compilations() - before, 4, 'the new version compiled once more');
  });
});

describe('Priority admission after mutating webhooks (OpenKruise #1607)', () => {
  test('a webhook that switches priorityClassName and drops spec.priority gets the new class priority', async () => {
    const { ns, path } = await scope();
    for (const [name, value] of [[`${ns}-low`, 100], [`${ns}-high`, 1000]] as const) {
      assert.ok((await c.server.control.create({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value })).ok);
    }
    const switchClass = (drop: boolean): Operation[] => [
      { op: 'replace', path: '/spec/priorityClassName', value: `${ns}-high` },
      ...(drop ? [{ op: 'remove', path: '/spec/priority' } as Operation] : []),
    ];
    handle(path('switch'), (req) => patch(switchClass((req.object?.['metadata'] as { name: string }).name === 'dropped')));
    await configure('MutatingWebhookConfiguration', `${ns}-m`, [webhook(ns, 'switch.hooks.example.com', path('switch'))]);
    const body = (name: string): k8s.V1Pod => ({ ...podIn(ns, name), spec: { priorityClassName: `${ns}-low`, containers: [{ name: 'c', image: 'x' }] } });
    const created = await c.core.createNamespacedPod({ namespace: ns, body: body('dropped') });
    const seen = hooks.requestsTo(path('switch'));
    assert.equal((seen[0]?.request?.object?.['spec'] as { priority: number }).priority, 100, 'the webhook sees the priority of the original class');
    assert.deepEqual([created.spec?.priorityClassName, created.spec?.priority], [`${ns}-high`, 1000]);
    const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: body('kept') }));
    assert.equal(s.code, 403);
    assert.equal(s.message, `pods "kept" is forbidden: the integer value of priority (100) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name`);
  });
});
