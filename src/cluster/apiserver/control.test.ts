/**
 * The control API's counters: `requestCounts()` (resource requests by group,
 * resource, subresource, verb and user agent), `requestCount(filter)` as its
 * sum, `webhookCallCounts()` / `onWebhookCall()` (the admission webhook
 * calls the server sent) and `resetCounters()`. Requests go over HTTPS from
 * two clients with different user agents; webhooks go to a test server.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { BUILTIN } from '../../client/resources.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { startClientTestBed, testBedCertificate, type ClientTestBed } from '../../testing/client-test-bed.ts';
import { allow, startWebhookServer, type TestWebhookServer } from '../../testing/webhook-server.ts';
import type { WebhookCall } from './admission-webhooks.ts';
import type { RequestCount } from './control.ts';

let clock: VirtualClock;
let bed: ClientTestBed;
let hooks: TestWebhookServer;
let alice: KubeClient;
let bob: KubeClient;

before(async () => {
  clock = new VirtualClock(Date.UTC(2026, 0, 1));
  bed = await startClientTestBed(clock, testBedCertificate());
  hooks = await startWebhookServer({ clock, handlers: { '/mutate': () => allow(), '/validate': () => allow() } });
  alice = await bed.newClient({ userAgent: 'alice/1.0' });
  bob = await bed.newClient({ userAgent: 'bob/2.0' });
});
after(async () => {
  await hooks.close();
  await bed.close();
});

const pod = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});

/** The lines without zero-count noise, in a stable order for comparison. */
const sorted = (lines: RequestCount[]): RequestCount[] =>
  [...lines].sort((x, y) => `${x.userAgent}/${x.resource}/${x.subresource}/${x.verb}`.localeCompare(`${y.userAgent}/${y.resource}/${y.subresource}/${y.verb}`));

describe('requestCounts', () => {
  test('one line per group, resource, subresource, verb and user agent; requestCount is its sum', async () => {
    const control = bed.server.control;
    control.resetCounters();
    await alice.create(BUILTIN.pods, pod('p1'));
    await alice.create(BUILTIN.pods, pod('p2'));
    await alice.patch(BUILTIN.pods, 'p1', { type: 'merge', body: { metadata: { annotations: { a: '1' } } } }, { namespace: 'default' });
    const p2 = await bob.get<KubeObject>(BUILTIN.pods, 'p2', { namespace: 'default' });
    await bob.updateStatus(BUILTIN.pods, { ...p2, status: { phase: 'Running' } });
    await bob.list(BUILTIN.deployments, { namespace: 'default' });
    await bob.delete(BUILTIN.pods, 'p2', { namespace: 'default' });

    assert.deepEqual(sorted(control.requestCounts()), [
      { group: '', resource: 'pods', subresource: '', verb: 'create', userAgent: 'alice/1.0', count: 2 },
      { group: '', resource: 'pods', subresource: '', verb: 'patch', userAgent: 'alice/1.0', count: 1 },
      { group: 'apps', resource: 'deployments', subresource: '', verb: 'list', userAgent: 'bob/2.0', count: 1 },
      { group: '', resource: 'pods', subresource: '', verb: 'delete', userAgent: 'bob/2.0', count: 1 },
      { group: '', resource: 'pods', subresource: '', verb: 'get', userAgent: 'bob/2.0', count: 1 },
      { group: '', resource: 'pods', subresource: 'status', verb: 'update', userAgent: 'bob/2.0', count: 1 },
    ]);
    assert.equal(control.requestCounts()[0]?.count, 2, 'most first');
    assert.equal(control.requestCount(), 7);
    assert.equal(control.requestCount({ resource: 'pods' }), 6);
    assert.equal(control.requestCount({ userAgent: 'bob/2.0' }), 4);
    assert.equal(control.requestCount({ resource: 'pods', subresource: 'status', verb: 'update' }), 1);
    assert.equal(control.requestCount({ group: 'apps' }), 1);
    assert.deepEqual(control.requestCounts({ userAgent: 'alice/1.0', verb: 'patch' }), [{ group: '', resource: 'pods', subresource: '', verb: 'patch', userAgent: 'alice/1.0', count: 1 }]);
  });

  test('the lines are copies; resetCounters zeroes them', async () => {
    const control = bed.server.control;
    control.resetCounters();
    assert.deepEqual(control.requestCounts(), []);
    await alice.get(BUILTIN.pods, 'p1', { namespace: 'default' });
    const [line] = control.requestCounts();
    assert.ok(line !== undefined);
    line.count = 100;
    assert.equal(control.requestCount(), 1, 'editing a returned line changes nothing');
    control.resetCounters();
    assert.equal(control.requestCount(), 0);
  });

  test('in-process writes through the control API are not HTTP requests and are not counted', async () => {
    const control = bed.server.control;
    control.resetCounters();
    const r = await control.create(pod('in-process'));
    assert.ok(r.ok);
    assert.equal(control.requestCount(), 0);
  });
});

describe('webhookCallCounts', () => {
  test('counts the calls sent, by webhook, path, operation and resource; objectSelector misses are not calls', async () => {
    const control = bed.server.control;
    const webhook = (name: string, path: string, operations: string[], resources: string[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
      name,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      clientConfig: { url: hooks.urlFor(path), caBundle: hooks.caBundle },
      rules: [{ operations, apiGroups: [''], apiVersions: ['v1'], resources }],
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'counted' } },
      ...extra,
    });
    assert.ok((await control.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'counted' } })).ok);
    assert.ok((await control.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'count-m' }, webhooks: [webhook('m.example.com', '/mutate', ['CREATE'], ['pods'])] })).ok);
    assert.ok(
      (
        await control.create({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingWebhookConfiguration',
          metadata: { name: 'count-v' },
          webhooks: [
            webhook('delete.example.com', '/validate', ['DELETE'], ['pods'], { objectSelector: { matchLabels: { managed: 'true' } } }),
            webhook('evict.example.com', '/validate', ['CREATE'], ['pods/eviction']),
          ],
        })
      ).ok,
    );
    const seen: WebhookCall[] = [];
    const stop = control.onWebhookCall((call) => {
      seen.push(call);
    });
    control.resetCounters();
    const inNs = (name: string, labels: Record<string, string> = {}): KubeObject => ({ ...pod(name, labels), metadata: { name, namespace: 'counted', labels } });
    await alice.create(BUILTIN.pods, inNs('managed', { managed: 'true' }));
    await alice.create(BUILTIN.pods, inNs('other'));
    await alice.create(BUILTIN.pods, inNs('evicted'));
    await alice.delete(BUILTIN.pods, 'managed', { namespace: 'counted' });
    await alice.delete(BUILTIN.pods, 'other', { namespace: 'counted' });
    await alice.subresource('POST', BUILTIN.pods, 'evicted', 'eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'evicted', namespace: 'counted' } }, { namespace: 'counted' });
    stop();
    await alice.create(BUILTIN.pods, inNs('unobserved'));

    const counts = control.webhookCallCounts();
    const line = (webhook: string) => counts.find((c) => c.webhook === webhook);
    assert.deepEqual(line('m.example.com'), { webhook: 'm.example.com', mutating: true, path: '/mutate', operation: 'CREATE', group: '', resource: 'pods', subresource: '', count: 4 });
    assert.deepEqual(line('delete.example.com'), { webhook: 'delete.example.com', mutating: false, path: '/validate', operation: 'DELETE', group: '', resource: 'pods', subresource: '', count: 1 }, 'only the labelled pod');
    assert.deepEqual(line('evict.example.com'), { webhook: 'evict.example.com', mutating: false, path: '/validate', operation: 'CREATE', group: '', resource: 'pods', subresource: 'eviction', count: 1 });
    assert.equal(counts.length, 3);
    assert.equal(hooks.requestsTo('/validate').length, 2, 'the server received what was counted');

    assert.equal(seen.length, 5, 'the observer saw every call until it stopped (3 creates, 1 delete, 1 eviction)');
    const del = seen.find((c) => c.operation === 'DELETE');
    assert.equal(del?.name, 'managed');
    assert.equal(del?.namespace, 'counted');
    assert.equal(del?.object, undefined);
    assert.equal((del?.oldObject?.metadata?.labels as Record<string, string> | undefined)?.['managed'], 'true', 'a DELETE call carries the pod as oldObject');
    const evict = seen.find((c) => c.subresource === 'eviction');
    assert.equal(evict?.name, 'evicted');
    assert.equal(evict?.object?.kind, 'Eviction');

    control.resetCounters();
    assert.deepEqual(control.webhookCallCounts(), []);
  });
});
