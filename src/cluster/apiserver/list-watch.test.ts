/**
 * Conformance: list (label selectors with every operator, field selectors,
 * pagination with continue tokens, resourceVersion semantics) and watch
 * (initial state, resume from a version, 410 after compaction, bookmarks and
 * timeouts on the virtual clock, selector transitions, cut watches, activity
 * accounting, client-node's Watch).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { ServingCertificate } from '../../client/loopback-certificates.ts';
import { expectStatus, pod, rawRequest, rawWatch, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

let cert: ServingCertificate;
let c: TestCluster;
let clock: VirtualClock;

before(async () => {
  cert = testCertificate();
  clock = new VirtualClock(Date.UTC(2026, 0, 1));
  c = await startTestCluster(clock, cert);
  await c.core.createNamespace({ body: { metadata: { name: 'sel' } } });
  const pods: [string, Record<string, string>, string | undefined][] = [
    ['p-web-prod', { app: 'web', env: 'prod' }, 'node-a'],
    ['p-web-dev', { app: 'web', env: 'dev' }, 'node-b'],
    ['p-db-prod', { app: 'db', env: 'prod' }, 'node-a'],
    ['p-nolabel', {}, undefined],
  ];
  for (const [name, labels, nodeName] of pods) {
    await c.core.createNamespacedPod({ namespace: 'sel', body: pod(name, { labels, ...(nodeName !== undefined ? { nodeName } : {}) }) });
  }
  await c.core.patchNamespacedPodStatus({ name: 'p-web-prod', namespace: 'sel', body: { status: { phase: 'Running' } } }, merge);
});
after(async () => {
  await c.close();
});

const names = (list: { items: { metadata?: { name?: string } }[] }) => list.items.map((i) => i.metadata?.name ?? '');

describe('label selectors', () => {
  const cases: [string, string[]][] = [
    ['app=web', ['p-web-dev', 'p-web-prod']],
    ['app==web', ['p-web-dev', 'p-web-prod']],
    ['app!=web', ['p-db-prod', 'p-nolabel']],
    ['env in (prod,qa)', ['p-db-prod', 'p-web-prod']],
    ['env notin (prod)', ['p-nolabel', 'p-web-dev']],
    ['env', ['p-db-prod', 'p-web-dev', 'p-web-prod']],
    ['!env', ['p-nolabel']],
    ['app=web,env=prod', ['p-web-prod']],
  ];
  for (const [selector, expected] of cases) {
    test(selector, async () => {
      assert.deepEqual(names(await c.core.listNamespacedPod({ namespace: 'sel', labelSelector: selector })), expected);
    });
  }
  test('a malformed selector is a 400', async () => {
    const s = await expectStatus(() => c.core.listNamespacedPod({ namespace: 'sel', labelSelector: 'env in prod' }));
    assert.equal(s.code, 400);
    assert.equal(s.reason, 'BadRequest');
  });
});

describe('field selectors', () => {
  const cases: [string, string[]][] = [
    ['metadata.name=p-db-prod', ['p-db-prod']],
    ['metadata.namespace=sel,spec.nodeName=node-a', ['p-db-prod', 'p-web-prod']],
    ['spec.nodeName=', ['p-nolabel']],
    ['spec.nodeName!=node-a', ['p-nolabel', 'p-web-dev']],
    ['status.phase=Running', ['p-web-prod']],
    ['status.phase==Pending', ['p-db-prod', 'p-nolabel', 'p-web-dev']],
  ];
  for (const [selector, expected] of cases) {
    test(selector, async () => {
      assert.deepEqual(names(await c.core.listNamespacedPod({ namespace: 'sel', fieldSelector: selector })), expected);
    });
  }
  test('an unsupported field is a 400 naming it', async () => {
    const s = await expectStatus(() => c.core.listNamespacedPod({ namespace: 'sel', fieldSelector: 'spec.priority=1' }));
    assert.equal(s.code, 400);
    assert.equal(s.message, 'field label not supported: spec.priority');
  });
  test('kind-specific fields: events by involvedObject, secrets by type', async () => {
    await c.core.createNamespacedEvent({ namespace: 'sel', body: { metadata: { name: 'e1' }, involvedObject: { kind: 'Pod', name: 'p-web-prod', namespace: 'sel' }, reason: 'Test' } });
    await c.core.createNamespacedEvent({ namespace: 'sel', body: { metadata: { name: 'e2' }, involvedObject: { kind: 'Pod', name: 'p-db-prod', namespace: 'sel' }, reason: 'Test' } });
    assert.deepEqual(names(await c.core.listNamespacedEvent({ namespace: 'sel', fieldSelector: 'involvedObject.name=p-db-prod,involvedObject.kind=Pod' })), ['e2']);
    await c.core.createNamespacedSecret({ namespace: 'sel', body: { metadata: { name: 's1' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'eA==', 'tls.key': 'eA==' } } });
    await c.core.createNamespacedSecret({ namespace: 'sel', body: { metadata: { name: 's2' }, stringData: { a: 'b' } } });
    assert.deepEqual(names(await c.core.listNamespacedSecret({ namespace: 'sel', fieldSelector: 'type=Opaque' })), ['s2']);
  });
  test('events.k8s.io/v1 sees core/v1 events with renamed fields', async () => {
    const res = await rawRequest(c.server, 'GET', '/apis/events.k8s.io/v1/namespaces/sel/events?fieldSelector=regarding.name%3Dp-db-prod');
    assert.equal(res.status, 200);
    const list = res.json as { items: { regarding?: { name?: string }; involvedObject?: unknown }[] };
    assert.equal(list.items.length, 1);
    assert.equal(list.items[0]?.regarding?.name, 'p-db-prod');
    assert.equal(list.items[0]?.involvedObject, undefined);
  });
});

describe('pagination', () => {
  before(async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'page' } } });
    for (let i = 1; i <= 7; i++) await c.core.createNamespacedConfigMap({ namespace: 'page', body: { metadata: { name: `cm-${i}` } } });
  });

  test('limit + continue walk a consistent snapshot', async () => {
    const first = await c.core.listNamespacedConfigMap({ namespace: 'page', limit: 3 });
    assert.deepEqual(names(first), ['cm-1', 'cm-2', 'cm-3']);
    // Every namespace also holds the kube-root-ca.crt ConfigMap, which sorts last.
    assert.equal(first.metadata?.remainingItemCount, 5);
    assert.ok(first.metadata?._continue);
    // Changes after the first page do not show in later pages.
    await c.core.deleteNamespacedConfigMap({ name: 'cm-5', namespace: 'page' });
    await c.core.createNamespacedConfigMap({ namespace: 'page', body: { metadata: { name: 'cm-8' } } });
    const second = await c.core.listNamespacedConfigMap({ namespace: 'page', limit: 3, _continue: first.metadata?._continue ?? '' });
    assert.deepEqual(names(second), ['cm-4', 'cm-5', 'cm-6']);
    assert.equal(second.metadata?.resourceVersion, first.metadata?.resourceVersion);
    const third = await c.core.listNamespacedConfigMap({ namespace: 'page', limit: 3, _continue: second.metadata?._continue ?? '' });
    assert.deepEqual(names(third), ['cm-7', 'kube-root-ca.crt']);
    assert.equal(third.metadata?._continue, undefined);
    const now = await c.core.listNamespacedConfigMap({ namespace: 'page' });
    assert.deepEqual(names(now), ['cm-1', 'cm-2', 'cm-3', 'cm-4', 'cm-6', 'cm-7', 'cm-8', 'kube-root-ca.crt']);
  });

  test('a continue token older than the history is a 410 Expired carrying a token to go on inconsistently', async () => {
    const first = await c.core.listNamespacedConfigMap({ namespace: 'page', limit: 2 });
    await c.core.createNamespacedConfigMap({ namespace: 'page', body: { metadata: { name: 'cm-9' } } });
    c.server.control.compact();
    const res = await rawRequest(c.server, 'GET', `/api/v1/namespaces/page/configmaps?limit=2&continue=${encodeURIComponent(first.metadata?._continue ?? '')}`);
    assert.equal(res.status, 410);
    const status = res.json as { reason: string; message: string; metadata: { continue?: string } };
    assert.equal(status.reason, 'Expired');
    assert.match(status.message, /^The provided continue parameter is too old to display a consistent list result/);
    assert.ok(status.metadata.continue);
    const rest = await rawRequest(c.server, 'GET', `/api/v1/namespaces/page/configmaps?continue=${encodeURIComponent(status.metadata.continue ?? '')}`);
    assert.equal(rest.status, 200);
    assert.deepEqual(names(rest.json as { items: { metadata: { name: string } }[] }), ['cm-3', 'cm-4', 'cm-6', 'cm-7', 'cm-8', 'cm-9', 'kube-root-ca.crt']);
  });

  test('a garbled continue token is a 400', async () => {
    const res = await rawRequest(c.server, 'GET', '/api/v1/namespaces/page/configmaps?continue=not-a-token');
    assert.equal(res.status, 400);
  });

  test('list carries the current resourceVersion; Exact reads an older state', async () => {
    const before = await c.core.listNamespacedConfigMap({ namespace: 'page' });
    assert.equal(before.metadata?.resourceVersion, c.server.control.resourceVersion);
    await c.core.createNamespacedConfigMap({ namespace: 'page', body: { metadata: { name: 'cm-10' } } });
    const exact = await rawRequest(c.server, 'GET', `/api/v1/namespaces/page/configmaps?resourceVersion=${before.metadata?.resourceVersion ?? ''}&resourceVersionMatch=Exact`);
    assert.equal(exact.status, 200);
    assert.deepEqual(names(exact.json as { items: { metadata: { name: string } }[] }), names(before));
    const future = await rawRequest(c.server, 'GET', '/api/v1/namespaces/page/configmaps?resourceVersion=999999');
    assert.equal(future.status, 504);
  });
});

describe('watch', () => {
  before(async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'w' } } });
  });

  test('without resourceVersion: ADDED for what exists, then live events', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'pre' } } });
    const w = rawWatch(c.server, '/api/v1/namespaces/w/configmaps?watch=true');
    await w.next(2);
    await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'live' } } });
    await w.next(3);
    w.stop();
    assert.deepEqual(w.events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`), ['ADDED kube-root-ca.crt', 'ADDED pre', 'ADDED live']);
    assert.equal(w.events[0]?.object.kind, 'ConfigMap');
  });

  test('from a resourceVersion: the events after it, in order, then live', async () => {
    const a = await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'hist' } } });
    await c.core.patchNamespacedConfigMap({ name: 'hist', namespace: 'w', body: { data: { a: '1' } } }, merge);
    await c.core.deleteNamespacedConfigMap({ name: 'hist', namespace: 'w' });
    const w = rawWatch(c.server, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${a.metadata?.resourceVersion ?? ''}`);
    await w.next(2);
    w.stop();
    assert.deepEqual(w.events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`), ['MODIFIED hist', 'DELETED hist']);
    const rvs = w.events.map((e) => Number(e.object.metadata?.resourceVersion));
    assert.ok((rvs[0] ?? 0) > Number(a.metadata?.resourceVersion) && (rvs[1] ?? 0) > (rvs[0] ?? 0));
  });

  test('resume after a cut: nothing twice, nothing lost', async () => {
    const w1 = rawWatch(c.server, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${c.server.control.resourceVersion}`);
    await w1.status;
    await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'r1' } } });
    await w1.next(1);
    assert.equal(c.server.control.cutWatches() >= 1, true);
    await w1.ended;
    const last = w1.events.at(-1)?.object.metadata?.resourceVersion ?? '';
    await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'r2' } } });
    const w2 = rawWatch(c.server, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${last}`);
    await w2.next(1);
    w2.stop();
    assert.deepEqual([...w1.events, ...w2.events].map((e) => e.object.metadata?.name), ['r1', 'r2']);
  });

  test('a version older than the history: HTTP 200, one in-stream 410 Expired, end of stream', async () => {
    const old = c.server.control.resourceVersion;
    await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'after-old' } } });
    c.server.control.compact();
    const w = rawWatch(c.server, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${old}`);
    assert.equal(await w.status, 200);
    await w.ended;
    assert.equal(w.events.length, 1);
    assert.equal(w.events[0]?.type, 'ERROR');
    const status = w.events[0]?.object as unknown as { code: number; reason: string; message: string };
    assert.equal(status.code, 410);
    assert.equal(status.reason, 'Expired');
    assert.equal(status.message, `too old resource version: ${old} (${c.server.control.resourceVersion})`);
  });

  test('bookmarks every minute of clock time, only when asked for', async () => {
    const withBookmarks = rawWatch(c.server, `/api/v1/namespaces/w/configmaps?watch=true&allowWatchBookmarks=true&resourceVersion=${c.server.control.resourceVersion}`);
    const without = rawWatch(c.server, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${c.server.control.resourceVersion}`);
    await Promise.all([withBookmarks.status, without.status]);
    await clock.advance(60_000);
    await withBookmarks.next(1);
    const bookmark = withBookmarks.events[0];
    assert.equal(bookmark?.type, 'BOOKMARK');
    assert.deepEqual(bookmark?.object, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: c.server.control.resourceVersion } });
    withBookmarks.stop();
    without.stop();
    await without.ended;
    assert.equal(without.events.length, 0);
  });

  test('timeoutSeconds ends the stream cleanly at that clock time; no timeout means 30 minutes', async () => {
    const short = rawWatch(c.server, '/api/v1/namespaces/w/configmaps?watch=true&timeoutSeconds=5&resourceVersion=' + c.server.control.resourceVersion);
    const long = rawWatch(c.server, '/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=' + c.server.control.resourceVersion);
    await Promise.all([short.status, long.status]);
    let shortEnded = false;
    let longEnded = false;
    void short.ended.then(() => (shortEnded = true));
    void long.ended.then(() => (longEnded = true));
    await clock.advance(4_000);
    await clock.quiesce();
    assert.equal(shortEnded, false);
    await clock.advance(1_000);
    await short.ended;
    assert.equal(longEnded, false);
    await clock.advance(30 * 60_000);
    await long.ended;
    assert.equal(longEnded, true);
  });

  test('selectors per event: starting to match is ADDED, stopping is DELETED with the old state', async () => {
    const w = rawWatch(c.server, `/api/v1/namespaces/w/configmaps?watch=true&labelSelector=tier%3Dfront&resourceVersion=${c.server.control.resourceVersion}`);
    await w.status;
    await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'moving', labels: { tier: 'back' } } } });
    const toFront = await c.core.patchNamespacedConfigMap({ name: 'moving', namespace: 'w', body: { metadata: { labels: { tier: 'front' } }, data: { v: '1' } } }, merge);
    await c.core.patchNamespacedConfigMap({ name: 'moving', namespace: 'w', body: { data: { v: '2' } } }, merge);
    const away = await c.core.patchNamespacedConfigMap({ name: 'moving', namespace: 'w', body: { metadata: { labels: { tier: 'back' } } } }, merge);
    await c.core.deleteNamespacedConfigMap({ name: 'moving', namespace: 'w' });
    await w.next(3);
    w.stop();
    assert.deepEqual(w.events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
    assert.equal(w.events[0]?.object.metadata?.resourceVersion, toFront.metadata?.resourceVersion);
    const gone = w.events[2]?.object;
    assert.equal(gone?.metadata?.labels?.['tier'], 'front', 'the DELETED object is the last state that matched');
    assert.equal(gone?.metadata?.resourceVersion, away.metadata?.resourceVersion);
  });

  test('watching one object by name (fieldSelector) sees only it', async () => {
    const w = rawWatch(c.server, `/api/v1/namespaces/w/configmaps?watch=true&fieldSelector=metadata.name%3Done&resourceVersion=${c.server.control.resourceVersion}`);
    await w.status;
    await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'other' } } });
    await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'one' } } });
    await w.next(1);
    w.stop();
    assert.deepEqual(w.events.map((e) => e.object.metadata?.name), ['one']);
  });

  test('activity accounting: events written to a stream of this clock keep it busy until received', async () => {
    const header = { 'x-workloadspread-activity': `${clock.activity.id}:stream-1` };
    const tracked = rawWatch(c.server, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${c.server.control.resourceVersion}`, header);
    const foreign = rawWatch(c.server, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${c.server.control.resourceVersion}`, { 'x-workloadspread-activity': 'vclock-other:stream-2' });
    await Promise.all([tracked.status, foreign.status]);
    await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'counted' } } });
    await Promise.all([tracked.next(1), foreign.next(1)]);
    assert.equal(clock.busy, 1, 'one unread event on the tracked stream');
    clock.activity.received('stream-1');
    assert.equal(clock.busy, 0);
    tracked.stop();
    foreign.stop();
  });

  test('client-node Watch receives events and sees the stream end on a cut', async () => {
    const seen: string[] = [];
    let done: (err: unknown) => void = () => {};
    const ended = new Promise<unknown>((resolve) => (done = resolve));
    let gotOne: () => void = () => {};
    const one = new Promise<void>((resolve) => (gotOne = resolve));
    await new k8s.Watch(c.kc).watch(
      '/api/v1/namespaces/w/configmaps',
      { resourceVersion: c.server.control.resourceVersion, allowWatchBookmarks: true },
      (type: string, obj: k8s.V1ConfigMap) => {
        seen.push(`${type} ${obj.metadata?.name ?? ''}`);
        gotOne();
      },
      (err: unknown) => done(err),
    );
    await c.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'via-client' } } });
    await one;
    c.server.control.cutWatches();
    assert.equal(await ended, null);
    assert.deepEqual(seen, ['ADDED via-client']);
  });
});
