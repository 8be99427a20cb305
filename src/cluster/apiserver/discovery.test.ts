/**
 * Conformance: the discovery documents clients build their REST mappings
 * from — legacy (/api, /api/v1, /apis, /apis/<g>, /apis/<g>/<v>) and the
 * aggregated apidiscovery.k8s.io/v2 form kubectl 1.32 asks for first.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { storageVersionHash } from './discovery.ts';
import { rawRequest, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

let c: TestCluster;

before(async () => {
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
});
after(async () => {
  await c.close();
});

interface ApiResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  group?: string;
  version?: string;
  storageVersionHash?: string;
}

describe('legacy discovery', () => {
  test('/api lists v1 and the address clients reach', async () => {
    const res = await rawRequest(c.server, 'GET', '/api');
    assert.deepEqual(res.json, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${c.server.port}` }] });
  });

  test('/api/v1 describes pods with their subresources, as upstream does', async () => {
    const res = await rawRequest(c.server, 'GET', '/api/v1');
    const doc = res.json as { kind: string; apiVersion?: string; groupVersion: string; resources: ApiResource[] };
    assert.equal(doc.kind, 'APIResourceList');
    assert.equal(doc.apiVersion, undefined);
    assert.equal(doc.groupVersion, 'v1');
    const byName = new Map(doc.resources.map((r) => [r.name, r]));
    assert.deepEqual(byName.get('pods'), {
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'],
      categories: ['all'],
      storageVersionHash: storageVersionHash('', 'v1', 'Pod'),
    });
    assert.deepEqual(byName.get('pods/status'), { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] });
    assert.deepEqual(byName.get('pods/eviction'), { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
    assert.deepEqual(byName.get('pods/binding'), { name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] });
    assert.equal(byName.get('namespaces')?.namespaced, false);
    assert.ok(!byName.get('namespaces')?.verbs.includes('deletecollection'));
  });

  test('/apis lists groups with preferred versions; /apis/apps/v1 has scale subresources', async () => {
    const groups = (await rawRequest(c.server, 'GET', '/apis')).json as { kind: string; groups: { name: string; preferredVersion: { groupVersion: string } }[] };
    assert.equal(groups.kind, 'APIGroupList');
    assert.deepEqual(groups.groups.map((g) => g.name), [
      'apps',
      'events.k8s.io',
      'authentication.k8s.io',
      'authorization.k8s.io',
      'batch',
      'policy',
      'rbac.authorization.k8s.io',
      'admissionregistration.k8s.io',
      'apiextensions.k8s.io',
      'scheduling.k8s.io',
      'coordination.k8s.io',
    ]);
    assert.equal(groups.groups[0]?.preferredVersion.groupVersion, 'apps/v1');
    const apps = (await rawRequest(c.server, 'GET', '/apis/apps')).json as { kind: string; name: string };
    assert.deepEqual([apps.kind, apps.name], ['APIGroup', 'apps']);
    const v1 = (await rawRequest(c.server, 'GET', '/apis/apps/v1')).json as { apiVersion: string; resources: ApiResource[] };
    assert.equal(v1.apiVersion, 'v1');
    const scale = v1.resources.find((r) => r.name === 'deployments/scale');
    assert.deepEqual(scale, { name: 'deployments/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
    assert.deepEqual(v1.resources.find((r) => r.name === 'deployments')?.shortNames, ['deploy']);
  });

  test('client-node reads the server version', async () => {
    const info = await c.kc.makeApiClient(k8s.VersionApi).getCode();
    assert.equal(info.major, '1');
    assert.equal(info.minor, '32');
  });
});

describe('aggregated discovery', () => {
  const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

  test('served with its content type when asked for; groups, scopes and subresources included', async () => {
    const res = await rawRequest(c.server, 'GET', '/apis', { headers: { Accept: accept } });
    assert.equal(res.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const doc = res.json as { kind: string; apiVersion: string; items: { metadata: { name: string }; versions: { version: string; freshness: string; resources: Record<string, unknown>[] }[] }[] };
    assert.equal(doc.kind, 'APIGroupDiscoveryList');
    assert.equal(doc.apiVersion, 'apidiscovery.k8s.io/v2');
    const apps = doc.items.find((i) => i.metadata.name === 'apps');
    const deployments = apps?.versions[0]?.resources.find((r) => r['resource'] === 'deployments');
    assert.deepEqual(deployments, {
      resource: 'deployments',
      responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      scope: 'Namespaced',
      singularResource: 'deployment',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['deploy'],
      categories: ['all'],
      subresources: [
        { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
        { subresource: 'status', responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' }, verbs: ['get', 'patch', 'update'] },
      ],
    });
    assert.equal(apps?.versions[0]?.freshness, 'Current');
    const core = (await rawRequest(c.server, 'GET', '/api', { headers: { Accept: accept } })).json as { items: { versions: { version: string }[] }[] };
    assert.equal(core.items.length, 1);
    assert.equal(core.items[0]?.versions[0]?.version, 'v1');
  });

  test('plain JSON when not asked for', async () => {
    const res = await rawRequest(c.server, 'GET', '/apis', { headers: { Accept: 'application/json' } });
    assert.equal((res.json as { kind: string }).kind, 'APIGroupList');
  });
});
