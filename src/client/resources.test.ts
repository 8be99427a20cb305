/** REST paths from refs, the built-in table, and discovery resolution with its cache. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiVersionOf, BUILTIN, evictionFor, parseApiVersion, pathFor, refForKind, ResourceResolver, type ResourceRef } from './resources.ts';

describe('pathFor', () => {
  const widget: ResourceRef = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
  const cases: [string, ResourceRef, Parameters<typeof pathFor>[1], string][] = [
    ['core collection, all namespaces', BUILTIN.pods, {}, '/api/v1/pods'],
    ['core collection in a namespace', BUILTIN.pods, { namespace: 'ns' }, '/api/v1/namespaces/ns/pods'],
    ['core object', BUILTIN.pods, { namespace: 'ns', name: 'p' }, '/api/v1/namespaces/ns/pods/p'],
    ['core subresource', BUILTIN.pods, { namespace: 'ns', name: 'p', subresource: 'eviction' }, '/api/v1/namespaces/ns/pods/p/eviction'],
    ['cluster-scoped ignores the namespace', BUILTIN.nodes, { namespace: 'ns', name: 'n1', subresource: 'status' }, '/api/v1/nodes/n1/status'],
    ['group resource', BUILTIN.deployments, { namespace: 'ns', name: 'd', subresource: 'scale' }, '/apis/apps/v1/namespaces/ns/deployments/d/scale'],
    ['custom resource', widget, { namespace: 'ns', name: 'w' }, '/apis/example.com/v1/namespaces/ns/widgets/w'],
    ['a subresource without a name is ignored', BUILTIN.pods, { namespace: 'ns', subresource: 'status' }, '/api/v1/namespaces/ns/pods'],
    ['names are escaped', BUILTIN.configmaps, { namespace: 'a/b', name: '../x?y' }, '/api/v1/namespaces/a%2Fb/configmaps/..%2Fx%3Fy'],
  ];
  for (const [name, ref, opts, expected] of cases) test(name, () => assert.equal(pathFor(ref, opts), expected));
});

describe('the built-in table', () => {
  test('apiVersion/kind finds the ref; unknown kinds are undefined', () => {
    assert.equal(refForKind('v1', 'Pod'), BUILTIN.pods);
    assert.equal(refForKind('apps/v1', 'Deployment'), BUILTIN.deployments);
    assert.equal(refForKind('events.k8s.io/v1', 'Event'), BUILTIN.eventsV1);
    assert.equal(refForKind('v1', 'Event'), BUILTIN.events);
    assert.equal(refForKind('coordination.k8s.io/v1', 'Lease'), BUILTIN.leases);
    assert.equal(refForKind('apps/v1beta1', 'Deployment'), undefined);
    assert.equal(refForKind('apps.kruise.io/v1alpha1', 'CloneSet'), undefined);
  });

  test('every entry round-trips through apiVersionOf and refForKind', () => {
    for (const ref of Object.values(BUILTIN)) assert.equal(refForKind(apiVersionOf(ref), ref.kind), ref);
  });

  test('parseApiVersion', () => {
    assert.deepEqual(parseApiVersion('v1'), { group: '', version: 'v1' });
    assert.deepEqual(parseApiVersion('apps.kruise.io/v1alpha1'), { group: 'apps.kruise.io', version: 'v1alpha1' });
  });

  test('the eviction body', () => {
    assert.deepEqual(evictionFor('ns', 'p', { gracePeriodSeconds: 0 }), { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p', namespace: 'ns' }, deleteOptions: { gracePeriodSeconds: 0 } });
  });
});

describe('ResourceResolver', () => {
  const list = (resources: unknown[]) => ({ kind: 'APIResourceList', groupVersion: 'apps.kruise.io/v1alpha1', resources });
  const cloneSets = { name: 'clonesets', kind: 'CloneSet', namespaced: true };

  test('resolves through discovery once per group-version, skipping subresources and bad entries', async () => {
    const asked: string[] = [];
    const r = new ResourceResolver({
      getJson: async (path) => {
        asked.push(path);
        return list([{ name: 'clonesets/scale', kind: 'Scale', namespaced: true }, { name: 42 }, null, cloneSets, { name: 'broadcastjobs', kind: 'BroadcastJob' }]);
      },
    });
    const a = await r.resolve('apps.kruise.io/v1alpha1', 'CloneSet');
    assert.deepEqual(a, { ok: true, ref: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'clonesets', kind: 'CloneSet', namespaced: true } });
    const b = await r.resolve('apps.kruise.io/v1alpha1', 'BroadcastJob');
    assert.equal(b.ok && b.ref.namespaced, false, 'namespaced defaults to false');
    assert.deepEqual(asked, ['/apis/apps.kruise.io/v1alpha1']);
    assert.equal((await r.resolve('v1', 'Pod')).ok, true);
    assert.deepEqual(asked, ['/apis/apps.kruise.io/v1alpha1'], 'built-ins need no request');
  });

  test('a kind missing from the cached list refetches once (a CRD may be new)', async () => {
    let calls = 0;
    const r = new ResourceResolver({ getJson: async () => (++calls === 1 ? list([]) : list([cloneSets])) });
    assert.equal((await r.resolve('apps.kruise.io/v1alpha1', 'CloneSet')).ok, true);
    assert.equal(calls, 2);
    const missing = await r.resolve('apps.kruise.io/v1alpha1', 'Nope');
    assert.equal(missing.ok, false);
    assert.equal(!missing.ok && missing.notFound, true);
  });

  test('a failed fetch is reported and not cached; a 404 group is notFound', async () => {
    let calls = 0;
    const r = new ResourceResolver({
      getJson: async () => {
        calls++;
        if (calls === 1) throw Object.assign(new Error('boom'), { code: 500 });
        if (calls === 2) throw Object.assign(new Error('gone'), { code: 404 });
        return list([cloneSets]);
      },
    });
    const first = await r.resolve('apps.kruise.io/v1alpha1', 'CloneSet');
    assert.equal(first.ok, false);
    assert.equal(!first.ok && first.notFound, false);
    const second = await r.resolve('apps.kruise.io/v1alpha1', 'CloneSet');
    assert.equal(!second.ok && second.notFound, true);
    assert.equal((await r.resolve('apps.kruise.io/v1alpha1', 'CloneSet')).ok, true);
    r.invalidate();
    assert.equal((await r.resolve('apps.kruise.io/v1alpha1', 'CloneSet')).ok, true);
    assert.equal(calls, 4);
  });

  test('malformed input resolves to an error, never a throw', async () => {
    const r = new ResourceResolver({ getJson: async () => 'not a list' });
    assert.equal((await r.resolve('', '')).ok, false);
    assert.equal((await r.resolve('x/v1', 'Thing')).ok, false);
  });
});
