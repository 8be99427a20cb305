/**
 * Conformance: custom resources with their schema enforced, over HTTPS with
 * @kubernetes/client-node (CustomObjectsApi) and raw requests — the project's
 * real WorkloadSpread CRD plus a small CRD with defaults: structural
 * validation (422 texts), pruning, defaulting (also on read), int-or-string,
 * status/spec isolation, scale, strategic merge → 415, merge and JSON patch,
 * invalid CRDs → 422, and deleting a CRD removes its objects.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { expectStatus, rawRequest, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);
const strategic = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

const wsCrd = parseYaml(readFileSync(new URL('../../../deploy/crds/apps.kruise.io_workloadspreads.yaml', import.meta.url), 'utf8')) as KubeObject;

const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget', shortNames: ['wdg'], categories: ['all'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer', minimum: 0, default: 1 },
                  color: { type: 'string', enum: ['red', 'blue'], default: 'red' },
                  limits: { type: 'object', properties: { cpu: { type: 'string', default: '100m' } } },
                },
              },
              status: { type: 'object', properties: { replicas: { type: 'integer' } } },
            },
          },
        },
      },
    ],
  },
};

let c: TestCluster;
let custom: k8s.CustomObjectsApi;
const ws = { group: 'apps.kruise.io', version: 'v1alpha1', namespace: 'default', plural: 'workloadspreads' };
const widgets = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' };

async function createCrd(body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await rawRequest(c.server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: JSON.stringify(body), contentType: 'application/json' });
  await c.server.core.idle();
  return res;
}

function workloadSpread(name: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: 3 }], ...spec },
  };
}

before(async () => {
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
  custom = c.kc.makeApiClient(k8s.CustomObjectsApi);
  assert.equal((await createCrd(wsCrd)).status, 201);
  assert.equal((await createCrd(widgetCrd)).status, 201);
});
after(async () => {
  await c.close();
});

describe('the WorkloadSpread CRD', () => {
  test('is established with stored versions, and discoverable with its short name', async () => {
    const crd = (await rawRequest(c.server, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workloadspreads.apps.kruise.io')).json as { status: { conditions: { type: string; status: string }[]; storedVersions: string[] } };
    assert.deepEqual(crd.status.conditions.filter((x) => ['NamesAccepted', 'Established'].includes(x.type)).map((x) => `${x.type}=${x.status}`), ['NamesAccepted=True', 'Established=True']);
    assert.deepEqual(crd.status.storedVersions, ['v1alpha1']);
    const disco = (await rawRequest(c.server, 'GET', '/apis/apps.kruise.io/v1alpha1')).json as { resources: { name: string; shortNames?: string[] }[] };
    assert.deepEqual(disco.resources.find((r) => r.name === 'workloadspreads')?.shortNames, ['ws']);
  });

  test('a valid object is created; unknown fields are pruned, preserved ones kept; int-or-string takes both', async () => {
    const body = workloadSpread('ws-a', { bogus: 1, subsets: [{ name: 'a', maxReplicas: '50%', patch: { metadata: { labels: { x: 'y' } } }, extra: true }, { name: 'b', maxReplicas: 2 }] });
    const created = (await custom.createNamespacedCustomObject({ ...ws, body })) as { spec: Record<string, unknown> };
    assert.equal(created.spec['bogus'], undefined);
    assert.deepEqual(created.spec['subsets'], [{ name: 'a', maxReplicas: '50%', patch: { metadata: { labels: { x: 'y' } } } }, { name: 'b', maxReplicas: 2 }]);
  });

  test('a field of the wrong type is a 422 with the upstream texts', async () => {
    const s = await expectStatus(() => custom.createNamespacedCustomObject({ ...ws, body: workloadSpread('ws-bad', { subsets: [{ name: 'a', minReplicas: 'two' }] }) }));
    assert.equal(s.code, 422);
    assert.equal(s.reason, 'Invalid');
    assert.equal(
      s.message,
      'WorkloadSpread.apps.kruise.io "ws-bad" is invalid: spec.subsets[0].minReplicas: Invalid value: "string": spec.subsets[0].minReplicas in body must be of type integer: "string"',
    );
    assert.deepEqual(s.details?.causes, [{ reason: 'FieldValueTypeInvalid', message: 'Invalid value: "string": spec.subsets[0].minReplicas in body must be of type integer: "string"', field: 'spec.subsets[0].minReplicas' }]);
  });

  test('enum, required and minimum violations are each reported', async () => {
    const s = await expectStatus(() => custom.createNamespacedCustomObject({ ...ws, body: workloadSpread('ws-bad2', { scheduleStrategy: { type: 'Sometimes' }, subsets: [{ minReplicas: -1 }] }) }));
    assert.equal(s.code, 422);
    const fields = (s.details?.causes ?? []).map((x) => `${x.field}: ${x.message}`).sort();
    assert.ok(fields.includes('spec.scheduleStrategy.type: Unsupported value: "Sometimes": supported values: "Adaptive", "Fixed", ""'), fields.join('\n'));
    assert.ok(fields.includes('spec.subsets[0].name: Required value'), fields.join('\n'));
    assert.ok(fields.includes('spec.subsets[0].minReplicas: Invalid value: -1: spec.subsets[0].minReplicas in body should be greater than or equal to 0'), fields.join('\n'));
  });

  test('strategic merge patch is 415 with the upstream message; merge and JSON patch work', async () => {
    const s = await expectStatus(() => custom.patchNamespacedCustomObject({ ...ws, name: 'ws-a', body: { spec: { subsets: [] } } }, strategic));
    assert.equal(s.code, 415);
    assert.equal(s.message, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    const merged = (await custom.patchNamespacedCustomObject({ ...ws, name: 'ws-a', body: { spec: { scheduleStrategy: { type: 'Adaptive' }, junk: 1 } } }, merge)) as { spec: Record<string, unknown> };
    assert.deepEqual(merged.spec['scheduleStrategy'], { type: 'Adaptive' });
    assert.equal(merged.spec['junk'], undefined, 'a patch is pruned too');
    const patched = (await custom.patchNamespacedCustomObject({ ...ws, name: 'ws-a', body: [{ op: 'replace', path: '/spec/subsets/1/maxReplicas', value: 5 }] }, jsonPatch)) as { spec: { subsets: { maxReplicas: unknown }[] } };
    assert.equal(patched.spec.subsets[1]?.maxReplicas, 5);
    const bad = await expectStatus(() => custom.patchNamespacedCustomObject({ ...ws, name: 'ws-a', body: [{ op: 'replace', path: '/spec/subsets/1/maxReplicas', value: true }] }, jsonPatch));
    assert.equal(bad.code, 422);
    assert.match(bad.message ?? '', /spec\.subsets\[1\]\.maxReplicas in body must be of type integer,string: "boolean"/);
  });

  test('malformed bodies are 400s, as for any resource', async () => {
    const res = await rawRequest(c.server, 'POST', '/apis/apps.kruise.io/v1alpha1/namespaces/default/workloadspreads', { body: '{"apiVersion":', contentType: 'application/json' });
    assert.equal(res.status, 400);
    const noKind = await rawRequest(c.server, 'POST', '/apis/apps.kruise.io/v1alpha1/namespaces/default/workloadspreads', { body: '{"apiVersion":"apps.kruise.io/v1alpha1","metadata":{"name":"x"}}', contentType: 'application/json' });
    assert.equal(noKind.status, 400);
    assert.match((noKind.json as { message: string }).message, /Object 'Kind' is missing/);
  });
});

describe('defaults, status and scale', () => {
  test('defaults fill absent fields on create; a nested default needs its parent', async () => {
    const created = (await custom.createNamespacedCustomObject({ ...widgets, body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: {} } })) as { spec: Record<string, unknown> };
    assert.deepEqual(created.spec, { replicas: 1, color: 'red' });
    const withParent = (await custom.createNamespacedCustomObject({ ...widgets, body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w2' }, spec: { limits: {} } } })) as { spec: Record<string, unknown> };
    assert.deepEqual(withParent.spec['limits'], { cpu: '100m' });
  });

  test('status writes do not touch spec nor bump generation; spec writes do', async () => {
    const st = (await custom.patchNamespacedCustomObjectStatus({ ...widgets, name: 'w1', body: { status: { replicas: 1 }, spec: { replicas: 9 } } }, merge)) as { spec: { replicas: number }; metadata: { generation: number } };
    assert.equal(st.spec.replicas, 1);
    assert.equal(st.metadata.generation, 1);
    const badStatus = await expectStatus(() => custom.patchNamespacedCustomObjectStatus({ ...widgets, name: 'w1', body: { status: { replicas: 'one' } } }, merge));
    assert.equal(badStatus.code, 422, 'status writes are validated against the schema');
    const scaled = (await custom.patchNamespacedCustomObjectScale({ ...widgets, name: 'w1', body: { spec: { replicas: 3 } } }, merge)) as k8s.V1Scale;
    assert.deepEqual([scaled.spec?.replicas, scaled.status?.replicas], [3, 1]);
    const after = (await custom.getNamespacedCustomObject({ ...widgets, name: 'w1' })) as { metadata: { generation: number } };
    assert.equal(after.metadata.generation, 2);
  });

  test('a default added to the CRD later shows on objects read back', async () => {
    const current = (await rawRequest(c.server, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com')).json as typeof widgetCrd;
    (current.spec.versions[0]?.schema.openAPIV3Schema.properties.spec.properties as Record<string, unknown>)['size'] = { type: 'string', default: 'M' };
    const res = await rawRequest(c.server, 'PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com', { body: JSON.stringify(current), contentType: 'application/json' });
    assert.equal(res.status, 200, res.text);
    await c.server.core.idle();
    const got = (await custom.getNamespacedCustomObject({ ...widgets, name: 'w2' })) as { spec: Record<string, unknown> };
    assert.equal(got.spec['size'], 'M');
    const listed = (await custom.listNamespacedCustomObject({ ...widgets })) as { items: { spec: Record<string, unknown> }[] };
    assert.ok(listed.items.every((i) => i.spec['size'] === 'M'));
  });
});

// `any` below: the cases edit arbitrary corners of a CRD literal; typing every path would drown the table.
describe('CRDs that are not valid', () => {
  const cases: [string, (crd: any) => void, string][] = [
    ['a schema field without a type', (crd) => (crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.color = { enum: ['x'] }), 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[color].type: Required value: must not be empty for specified object fields'],
    ['no storage version', (crd) => (crd.spec.versions[0].storage = false), 'must have exactly one version marked as storage version'],
    ['a group without a dot', (crd) => (crd.spec.group = 'gizmos'), 'spec.group: Invalid value: "gizmos": should be a domain with at least one dot'],
  ];
  for (const [name, mutate, want] of cases) {
    test(name, async () => {
      const crd = structuredClone(widgetCrd) as any;
      crd.metadata.name = 'gizmos.example.com';
      crd.spec.names = { plural: 'gizmos', kind: 'Gizmo' };
      mutate(crd);
      const res = await createCrd(crd);
      assert.equal(res.status, 422);
      const status = res.json as { reason: string; message: string };
      assert.equal(status.reason, 'Invalid');
      assert.ok(status.message.includes(want), status.message);
    });
  }
});

describe('deprecated versions', () => {
  test('every request to a deprecated version carries a warning (the default text, or the CRD\'s own)', async () => {
    const crd = structuredClone(widgetCrd) as any;
    crd.metadata.name = 'oldies.example.com';
    crd.spec.names = { plural: 'oldies', kind: 'Oldie' };
    crd.spec.versions[0].deprecated = true;
    crd.spec.versions.push({ ...structuredClone(crd.spec.versions[0]), name: 'v2', storage: false, deprecationWarning: 'v2 goes away, use v3' });
    assert.equal((await createCrd(crd)).status, 201);
    const v1 = await rawRequest(c.server, 'GET', '/apis/example.com/v1/namespaces/default/oldies');
    assert.equal(v1.status, 200);
    assert.equal(v1.headers['warning'], '299 - "example.com/v1 Oldie is deprecated"');
    const v2 = await rawRequest(c.server, 'GET', '/apis/example.com/v2/namespaces/default/oldies');
    assert.equal(v2.headers['warning'], '299 - "v2 goes away, use v3"');
    assert.equal((await rawRequest(c.server, 'GET', '/apis/example.com/v1/namespaces/default/widgets')).headers['warning'], undefined);
  });
});

describe('name conflicts within a group', () => {
  test('a CRD asking for a short name another CRD holds is not established nor served', async () => {
    const gadgets = structuredClone(widgetCrd) as any;
    gadgets.metadata.name = 'gadgets.example.com';
    gadgets.spec.names = { plural: 'gadgets', kind: 'Gadget', shortNames: ['wdg'] };
    assert.equal((await createCrd(gadgets)).status, 201);
    const crd = (await rawRequest(c.server, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com')).json as { status: { conditions: Record<string, string>[]; acceptedNames: Record<string, unknown> } };
    const cond = (type: string) => crd.status.conditions.find((x) => x['type'] === type);
    assert.deepEqual([cond('NamesAccepted')?.['status'], cond('NamesAccepted')?.['reason'], cond('NamesAccepted')?.['message']], ['False', 'ShortNamesConflict', '"wdg" is already in use']);
    assert.deepEqual([cond('Established')?.['status'], cond('Established')?.['reason']], ['False', 'NotAccepted']);
    assert.equal(crd.status.acceptedNames['shortNames'], undefined);
    assert.equal((await rawRequest(c.server, 'GET', '/apis/example.com/v1/namespaces/default/gadgets')).status, 404);
  });
});

describe('deleting a CRD', () => {
  test('deletes its objects and stops serving it; a CRD that wanted its names gets them', async () => {
    assert.ok(((await custom.listNamespacedCustomObject({ ...widgets })) as { items: unknown[] }).items.length > 0);
    const res = await rawRequest(c.server, 'DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com');
    assert.equal(res.status, 200);
    await c.server.core.idle();
    assert.equal(c.server.core.store.count('example.com/widgets'), 0);
    assert.equal((await rawRequest(c.server, 'GET', '/apis/example.com/v1/namespaces/default/widgets')).status, 404);
    const gadgets = (await rawRequest(c.server, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com')).json as { status: { conditions: Record<string, string>[] } };
    assert.equal(gadgets.status.conditions.find((x) => x['type'] === 'Established')?.['status'], 'True');
    assert.equal((await rawRequest(c.server, 'GET', '/apis/example.com/v1/namespaces/default/gadgets')).status, 200);
  });
});
