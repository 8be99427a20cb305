/**
 * The extension points other parts plug into, exercised the way they will be:
 * admission plug-ins (both phases, attributes per operation, warnings, a
 * throwing plug-in), the custom resource strategy hook, extra routes,
 * response formatters and replaceable subresource handlers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { AdmissionAttributes } from './admission.ts';
import { forbidden, ok } from './errors.ts';
import { sendText } from './http-util.ts';
import { deployment, expectStatus, pod, rawRequest, rawWatch, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

let c: TestCluster;
const seen: AdmissionAttributes[] = [];

before(async () => {
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate(), {
    plugins: [
      (core) => {
        core.admission.register({
          name: 'test-labeler',
          order: 500,
          mutate: (a) => {
            seen.push({ ...a, object: a.object === undefined ? undefined : structuredClone(a.object) });
            if (a.resource.plural === 'pods' && a.operation === 'CREATE' && a.subresource === '' && a.object !== undefined) {
              a.object.metadata = { ...a.object.metadata, labels: { ...a.object.metadata?.labels, mutated: 'yes' } };
              return { allowed: true, warnings: ['pods get a label here'] };
            }
            return undefined;
          },
          validate: (a) => {
            if (a.object?.metadata?.name === 'forbidden-name') {
              return { allowed: false, status: forbidden({ group: a.resource.group, resource: a.resource.plural }, 'forbidden-name', 'denied by the test plug-in') };
            }
            if (a.object?.metadata?.name === 'explode') throw new Error('plug-in bug');
            return undefined;
          },
        });
        core.customResourceStrategy = (_crd, _version, base) => ({
          ...base,
          validate: (obj) => (typeof (obj['spec'] as { size?: unknown } | undefined)?.size === 'number' ? [] : [{ type: 'FieldValueRequired', field: 'spec.size', badValue: '', detail: '' }]),
        });
        core.routes.push({ prefix: '/extension/', handle: (_req, res) => (sendText(res, 200, 'extension here'), true) });
        core.formatters.push({
          format: ({ accept, object }) => (accept.includes('as=Test') && object !== undefined ? { contentType: 'text/plain', body: `name=${object.metadata?.name ?? ''}` } : undefined),
          formatWatchObject: ({ accept, type, object }) => (accept.includes('as=Test') ? { row: `${type} ${object.metadata?.name ?? ''}` } : undefined),
        });
      },
    ],
  });
});
after(async () => {
  await c.close();
});

describe('admission plug-ins', () => {
  test('mutating changes are stored; warnings come back as Warning headers', async () => {
    seen.length = 0;
    const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify({ metadata: { generateName: 'adm-' }, spec: { containers: [{ name: 'c', image: 'x' }] } }), contentType: 'application/json' });
    assert.equal(res.status, 201);
    assert.equal((res.json as KubeObject).metadata?.labels?.['mutated'], 'yes');
    assert.equal(res.headers['warning'], '299 - "pods get a label here"');
    const create = seen.find((a) => a.operation === 'CREATE');
    assert.equal(create?.name, '', 'generateName is resolved after mutating admission');
    assert.equal(create?.object?.metadata?.uid, undefined);
    assert.equal(create?.object?.spec !== undefined && (create.object.spec as { restartPolicy?: string }).restartPolicy, 'Always', 'admission sees defaulted objects');
  });

  test('a validating rejection is returned as is; a throwing plug-in is a 500, not a crash', async () => {
    const s = await expectStatus(() => c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'forbidden-name' } } }));
    assert.equal(s.code, 403);
    assert.equal(s.message, 'configmaps "forbidden-name" is forbidden: denied by the test plug-in');
    const e = await expectStatus(() => c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'explode' } } }));
    assert.equal(e.code, 500);
    assert.match(e.message ?? '', /admission plugin "test-labeler" failed: plug-in bug/);
    assert.equal((await rawRequest(c.server, 'GET', '/healthz')).status, 200);
  });

  test('UPDATE carries the old object; DELETE has only the old one; scale is seen as a Scale', async () => {
    await c.apps.createNamespacedDeployment({ namespace: 'default', body: deployment('adm') });
    seen.length = 0;
    await c.apps.patchNamespacedDeployment({ name: 'adm', namespace: 'default', body: { spec: { replicas: 2 } } }, merge);
    await c.apps.patchNamespacedDeploymentScale({ name: 'adm', namespace: 'default', body: { spec: { replicas: 3 } } }, merge);
    await c.apps.deleteNamespacedDeployment({ name: 'adm', namespace: 'default' });
    const [update, scale, del] = seen;
    assert.equal(update?.operation, 'UPDATE');
    assert.equal((update?.oldObject?.['spec'] as { replicas: number }).replicas, 1);
    assert.equal((update?.object?.['spec'] as { replicas: number }).replicas, 2);
    assert.deepEqual([scale?.operation, scale?.subresource, scale?.kind.kind, scale?.object?.kind], ['UPDATE', 'scale', 'Scale', 'Scale']);
    assert.equal(del?.operation, 'DELETE');
    assert.equal(del?.object, undefined);
    assert.equal(del?.oldObject?.metadata?.name, 'adm');
  });

  test('dryRun is visible to plug-ins', async () => {
    seen.length = 0;
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('dry-adm'), dryRun: 'All' });
    assert.equal(seen[0]?.dryRun, true);
  });
});

describe('other hooks', () => {
  test('customResourceStrategy wraps the strategy of served CRD versions', async () => {
    const ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'sized.example.com' },
        spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'sized', kind: 'Sized' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } }] },
      },
    });
    const custom = c.kc.makeApiClient(k8s.CustomObjectsApi);
    const s = await expectStatus(() => custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'sized', body: { apiVersion: 'example.com/v1', kind: 'Sized', metadata: { name: 'a' }, spec: {} } }));
    assert.equal(s.code, 422);
    assert.equal(s.message, 'Sized.example.com "a" is invalid: spec.size: Required value');
    await custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'sized', body: { apiVersion: 'example.com/v1', kind: 'Sized', metadata: { name: 'a' }, spec: { size: 1 } } });
  });

  test('routes serve extra paths; formatters re-encode answers', async () => {
    assert.equal((await rawRequest(c.server, 'GET', '/extension/x')).text, 'extension here');
    assert.equal((await rawRequest(c.server, 'GET', '/extension/x', { token: null })).status, 403, 'routes are authorized (as non-resource paths) unless marked anonymous');
    assert.equal((await rawRequest(c.server, 'GET', '/extension/x', { token: 'wrong' })).status, 401);
    const res = await rawRequest(c.server, 'GET', '/api/v1/namespaces/default', { headers: { Accept: 'application/json;as=Test' } });
    assert.equal(res.text, 'name=default');
    const w = rawWatch(c.server, '/api/v1/namespaces?watch=true&fieldSelector=metadata.name%3Ddefault', { Accept: 'application/json;as=Test' });
    await w.next(1);
    w.stop();
    assert.deepEqual(w.events[0], { type: 'ADDED', object: { row: 'ADDED default' } });
  });

  test('subresource handlers can be replaced', async () => {
    c.server.core.registry.setSubresourceHandler('', 'v1', 'pods', 'eviction', {
      verbs: ['create'],
      kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
      handle: async () => ok({ code: 429, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'TooManyRequests', message: 'budget', code: 429 } }),
    });
    const res = await rawRequest(c.server, 'POST', '/api/v1/namespaces/default/pods/x/eviction', { body: '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"x"}}', contentType: 'application/json' });
    assert.equal(res.status, 429);
  });
});
