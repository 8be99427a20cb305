/**
 * Conformance: field ownership (`metadata.managedFields`) on every write, over
 * HTTPS with @kubernetes/client-node and raw requests — the entries a real
 * kube-apiserver writes for create, PUT, the three patch types, `/status`,
 * `/scale` and server-side apply of simple objects; the manager named by
 * `?fieldManager=` or the User-Agent; Update entries merged per manager; fields
 * that leave the object leave every entry; apply conflicts (409, one
 * FieldManagerConflict cause per field), `force`, shared ownership, pruning of
 * fields an applier stopped applying; `[{}]` clearing managedFields and
 * `before-first-apply`; list-map keys of a custom resource's schema.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { rawRequest, startTestCluster, testCertificate, type RawResponse, type TestCluster } from '../../testing/apiserver-bed.ts';

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);
const strategic = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);
const START = Date.UTC(2026, 0, 1);
const KUBECTL_UA = 'kubectl/v1.32.4 (linux/amd64) kubernetes/59526cd';

let clock: VirtualClock;
let c: TestCluster;

interface Entry {
  manager?: string;
  operation: string;
  apiVersion: string;
  time?: string;
  fieldsType: string;
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

before(async () => {
  clock = new VirtualClock(START);
  c = await startTestCluster(clock, testCertificate());
});
after(() => c.close());

async function raw(method: string, path: string, body: unknown, contentType = 'application/json', userAgent = KUBECTL_UA): Promise<RawResponse> {
  return rawRequest(c.server, method, path, { body: typeof body === 'string' ? body : JSON.stringify(body), contentType, headers: { 'User-Agent': userAgent } });
}

async function get(path: string): Promise<KubeObject> {
  const r = await rawRequest(c.server, 'GET', path);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json as KubeObject;
}

function entries(obj: unknown): Entry[] {
  return ((obj as KubeObject).metadata?.managedFields ?? []) as Entry[];
}

/** The entries as `manager/operation[/subresource]` → fieldsV1, for compact assertions. */
function owners(obj: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of entries(obj)) out[[e.manager ?? '', e.operation, ...(e.subresource !== undefined ? [e.subresource] : [])].join('/')] = e.fieldsV1;
  return out;
}

const at = (seconds: number) => new Date(START + seconds * 1000).toISOString().replace('.000Z', 'Z');

describe('managedFields of writes that are not applies', () => {
  test('create: one Update entry owning what the request set (defaults included), named by ?fieldManager=', async () => {
    const r = await raw('POST', '/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'created', labels: { app: 'web' } }, data: { a: '1' } });
    assert.equal(r.status, 201);
    assert.deepEqual(entries(r.json), [
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: at(0),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
      },
    ]);
    // Upstream's serialization: fields in order, `.` after them.
    assert.equal(r.text.includes('"fieldsV1":{"f:data":{"f:a":{},".":{}},"f:metadata":{"f:labels":{"f:app":{},".":{}}}}'), true, r.text);
  });

  test('without ?fieldManager= the manager is the User-Agent up to its first "/"', async () => {
    const byKubectl = await raw('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'ua' }, data: { a: '1' } });
    assert.equal(entries(byKubectl.json)[0]?.manager, 'kubectl');
    const byClientNode = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'ua-node' }, data: { a: '1' } } });
    assert.equal(byClientNode.metadata?.managedFields?.[0]?.manager, 'node-fetch');
  });

  test('a fieldManager longer than 128 bytes or with unprintable characters is refused (422)', async () => {
    const long = await raw('POST', `/api/v1/namespaces/default/configmaps?fieldManager=${'m'.repeat(129)}`, { metadata: { name: 'long' } });
    assert.equal(long.status, 422);
    assert.equal((long.json as { message: string }).message, 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes');
    const tab = await raw('POST', '/api/v1/namespaces/default/configmaps?fieldManager=a%09b', { metadata: { name: 'tab' } });
    assert.equal(tab.status, 422);
    assert.equal((tab.json as { message: string }).message, 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)');
  });

  test('a pod: the fields a real server records for a simple pod, defaults included, its status not', async () => {
    const r = await raw(
      'POST',
      '/api/v1/namespaces/default/pods',
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'simple', labels: { run: 'simple' } }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] }, status: { phase: 'Running' } },
      'application/json',
      'kube-controller-manager/v1.32.4 (linux/amd64) kubernetes/59526cd/system:serviceaccount:kube-system:replicaset-controller',
    );
    assert.equal(r.status, 201);
    assert.deepEqual(owners(r.json), {
      'kube-controller-manager/Update': {
        'f:metadata': { 'f:labels': { '.': {}, 'f:run': {} } },
        'f:spec': {
          'f:containers': {
            'k:{"name":"app"}': {
              '.': {},
              'f:image': {},
              'f:imagePullPolicy': {},
              'f:name': {},
              'f:resources': {},
              'f:terminationMessagePath': {},
              'f:terminationMessagePolicy': {},
            },
          },
          'f:dnsPolicy': {},
          'f:enableServiceLinks': {},
          'f:restartPolicy': {},
          'f:schedulerName': {},
          'f:securityContext': {},
          'f:terminationGracePeriodSeconds': {},
        },
      },
    });
  });

  test('a deployment: non-pointer structs are not members, the atomic selector is one field, container ports are keyed by port and protocol', async () => {
    const r = await raw('POST', '/apis/apps/v1/namespaces/default/deployments?fieldManager=kubectl-client-side-apply', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] } } },
    });
    assert.equal(r.status, 201);
    const spec = (owners(r.json)['kubectl-client-side-apply/Update'] as Record<string, Record<string, unknown>>)['f:spec'];
    assert.deepEqual(spec, {
      'f:progressDeadlineSeconds': {},
      'f:replicas': {},
      'f:revisionHistoryLimit': {},
      'f:selector': {},
      'f:strategy': { 'f:rollingUpdate': { '.': {}, 'f:maxSurge': {}, 'f:maxUnavailable': {} }, 'f:type': {} },
      'f:template': {
        'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': {
          'f:containers': {
            'k:{"name":"nginx"}': {
              '.': {},
              'f:image': {},
              'f:imagePullPolicy': {},
              'f:name': {},
              'f:ports': { '.': {}, 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } },
              'f:resources': {},
              'f:terminationMessagePath': {},
              'f:terminationMessagePolicy': {},
            },
          },
          'f:dnsPolicy': {},
          'f:restartPolicy': {},
          'f:schedulerName': {},
          'f:securityContext': {},
          'f:terminationGracePeriodSeconds': {},
        },
      },
    });
  });

  test('updates: one entry per manager, merged over time; a change moves the field; a removal leaves every entry; empty entries go', async () => {
    await raw('POST', '/api/v1/namespaces/default/configmaps?fieldManager=creator', { metadata: { name: 'upd' }, data: { a: '1', b: '2' } });
    await clock.advance(5000);
    // A merge patch by the editor: it now owns `a`; the creator keeps `b`.
    const m = await c.core.patchNamespacedConfigMap({ name: 'upd', namespace: 'default', fieldManager: 'editor', body: { data: { a: '10' } } }, merge);
    assert.deepEqual(owners(m), { 'creator/Update': { 'f:data': { '.': {}, 'f:b': {} } }, 'editor/Update': { 'f:data': { 'f:a': {} } } });
    // (client-node hands times back as Dates)
    assert.deepEqual(
      entries(m).map((e) => new Date(e.time as string).getTime()),
      [START, START + 5000],
    );
    // A JSON patch by the same editor merges into its entry.
    await clock.advance(5000);
    const j = await c.core.patchNamespacedConfigMap({ name: 'upd', namespace: 'default', fieldManager: 'editor', body: [{ op: 'add', path: '/data/c', value: '3' }] }, jsonPatch);
    assert.deepEqual(owners(j)['editor/Update'], { 'f:data': { 'f:a': {}, 'f:c': {} } });
    assert.equal(entries(j).filter((e) => e.manager === 'editor').length, 1);
    assert.equal(new Date(entries(j).find((e) => e.manager === 'editor')?.time as string).getTime(), START + 10_000);
    // A write that changes nothing changes no entry (and no resourceVersion).
    await clock.advance(5000);
    const same = await c.core.patchNamespacedConfigMap({ name: 'upd', namespace: 'default', fieldManager: 'editor', body: { data: { a: '10' } } }, merge);
    assert.equal(same.metadata?.resourceVersion, j.metadata?.resourceVersion);
    // A strategic merge patch by a third manager removes `b` and sets `a`: the creator has nothing left and is dropped.
    const s = await c.core.patchNamespacedConfigMap({ name: 'upd', namespace: 'default', fieldManager: 'third', body: { data: { b: null, a: '11' } } }, strategic);
    assert.deepEqual(owners(s), { 'creator/Update': { 'f:data': {} }, 'editor/Update': { 'f:data': { 'f:c': {} } }, 'third/Update': { 'f:data': { 'f:a': {} } } });
    // A PUT (kubectl replace) that drops `data` entirely: entries that only owned data go.
    const current = await get('/api/v1/namespaces/default/configmaps/upd');
    const { data: _dropped, ...withoutData } = current;
    const put = await raw('PUT', '/api/v1/namespaces/default/configmaps/upd?fieldManager=kubectl-replace', { ...withoutData, metadata: { ...withoutData.metadata, labels: { l: 'v' } } });
    assert.equal(put.status, 200);
    assert.deepEqual(owners(put.json), { 'kubectl-replace/Update': { 'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } } } });
  });

  test('/status writes are recorded with subresource status; status sent to the main resource is nobody\'s', async () => {
    const created = await c.apps.createNamespacedDeployment({ namespace: 'default', fieldManager: 'creator', body: { metadata: { name: 'st' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } } });
    const withStatus = { ...created, status: { replicas: 3, observedGeneration: 1 } };
    const s = await raw('PUT', '/apis/apps/v1/namespaces/default/deployments/st/status', withStatus, 'application/json', 'kube-controller-manager/v1.32.4 (linux/amd64)');
    assert.equal(s.status, 200);
    assert.deepEqual(owners(s.json)['kube-controller-manager/Update/status'], { 'f:status': { 'f:observedGeneration': {}, 'f:replicas': {} } });
    assert.equal(entries(s.json).find((e) => e.subresource === 'status')?.apiVersion, 'apps/v1');
    const main = await raw('PATCH', '/apis/apps/v1/namespaces/default/deployments/st?fieldManager=sneaky', { status: { replicas: 9 } }, 'application/merge-patch+json');
    assert.equal(main.status, 200);
    assert.equal(owners(main.json)['sneaky/Update'], undefined);
  });

  test('/scale writes are recorded on the parent with subresource scale, owning spec.replicas', async () => {
    const r = await raw('PATCH', '/apis/apps/v1/namespaces/default/deployments/st/scale', { spec: { replicas: 4 } }, 'application/merge-patch+json');
    assert.equal(r.status, 200);
    const d = await get('/apis/apps/v1/namespaces/default/deployments/st');
    assert.deepEqual(owners(d)['kubectl/Update/scale'], { 'f:spec': { 'f:replicas': {} } });
    assert.equal(JSON.stringify(owners(d)['creator/Update']).includes('"f:replicas"'), false);
  });

  test('managedFields [{}] clears them; updates of an untracked object stay untracked; its first apply gives its fields to before-first-apply', async () => {
    await raw('POST', '/api/v1/namespaces/default/configmaps?fieldManager=creator', { metadata: { name: 'reset' }, data: { a: '1' } });
    const current = await get('/api/v1/namespaces/default/configmaps/reset');
    const cleared = await raw('PUT', '/api/v1/namespaces/default/configmaps/reset', { ...current, metadata: { ...current.metadata, managedFields: [{}] } });
    assert.equal(cleared.status, 200);
    assert.equal((cleared.json as KubeObject).metadata?.managedFields, undefined);
    const patched = await c.core.patchNamespacedConfigMap({ name: 'reset', namespace: 'default', fieldManager: 'editor', body: { data: { b: '2' } } }, merge);
    assert.equal(patched.metadata?.managedFields, undefined);
    const applied = await raw('PATCH', '/api/v1/namespaces/default/configmaps/reset?fieldManager=applier', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: reset}\ndata: {c: "3"}\n', 'application/apply-patch+yaml');
    assert.equal(applied.status, 200);
    assert.deepEqual(owners(applied.json), { 'applier/Apply': { 'f:data': { 'f:c': {} } }, 'before-first-apply/Update': { 'f:data': { '.': {}, 'f:a': {}, 'f:b': {} } } });
  });
});

describe('server-side apply', () => {
  const applyCm = (manager: string, data: Record<string, string>, force = false) =>
    raw(
      'PATCH',
      `/api/v1/namespaces/default/configmaps/ssa?fieldManager=${manager}${force ? '&force=true' : ''}`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: ${JSON.stringify(data)}\n`,
      'application/apply-patch+yaml',
    );

  test('an apply owns exactly its fields, as an Apply entry', async () => {
    const r = await applyCm('first', { a: '1', b: '2' });
    assert.equal(r.status, 201);
    assert.deepEqual(entries(r.json), [{ manager: 'first', operation: 'Apply', apiVersion: 'v1', time: at((clock.now() - START) / 1000), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } } }]);
  });

  test('changing a field another manager owns is a 409 naming each field and its manager', async () => {
    const r = await applyCm('second', { a: 'changed', b: 'also' });
    assert.equal(r.status, 409);
    assert.deepEqual(r.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 2 conflicts: conflicts with "first":\n- .data.a\n- .data.b',
      reason: 'Conflict',
      details: {
        causes: [
          { reason: 'FieldManagerConflict', message: 'conflict with "first"', field: '.data.a' },
          { reason: 'FieldManagerConflict', message: 'conflict with "first"', field: '.data.b' },
        ],
      },
      code: 409,
    });
    assert.deepEqual((await get('/api/v1/namespaces/default/configmaps/ssa'))['data'], { a: '1', b: '2' });
    // An Update manager is named with its apiVersion, as upstream prints it.
    await c.core.patchNamespacedConfigMap({ name: 'ssa', namespace: 'default', fieldManager: 'editor', body: { data: { e: '5' } } }, merge);
    const one = await applyCm('second', { e: '6' });
    assert.equal(one.status, 409);
    assert.equal((one.json as { message: string }).message, 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.e');
  });

  test('applying the value a field already has shares it; force takes what differs', async () => {
    const shared = await applyCm('second', { a: '1' });
    assert.equal(shared.status, 200);
    assert.deepEqual(owners(shared.json)['first/Apply'], { 'f:data': { 'f:a': {}, 'f:b': {} } });
    assert.deepEqual(owners(shared.json)['second/Apply'], { 'f:data': { 'f:a': {} } });
    const forced = await applyCm('second', { a: '1', b: 'mine' }, true);
    assert.equal(forced.status, 200);
    assert.deepEqual((forced.json as KubeObject)['data'], { a: '1', b: 'mine', e: '5' });
    assert.deepEqual(owners(forced.json)['first/Apply'], { 'f:data': { 'f:a': {} } });
    assert.deepEqual(owners(forced.json)['second/Apply'], { 'f:data': { 'f:a': {}, 'f:b': {} } });
  });

  test('a field the applier stops applying is removed unless another manager owns it', async () => {
    // `a` is also first's: it stays; `b` is second's alone: it goes.
    const r = await applyCm('second', {});
    assert.equal(r.status, 200);
    assert.deepEqual((r.json as KubeObject)['data'], { a: '1', e: '5' });
    assert.equal(owners(r.json)['second/Apply'], undefined);
  });

  test('list-map keys of a custom resource schema: each manager owns its own elements', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'routes.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'routes', kind: 'Route' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      backends: {
                        type: 'array',
                        'x-kubernetes-list-type': 'map',
                        'x-kubernetes-list-map-keys': ['host', 'port'],
                        items: { type: 'object', required: ['host', 'port'], properties: { host: { type: 'string' }, port: { type: 'integer' }, weight: { type: 'integer' } } },
                      },
                      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    assert.equal((await raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status, 201);
    await c.server.core.idle();
    const route = (backends: unknown[], tags: string[]) => JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Route', metadata: { name: 'r' }, spec: { backends, tags } });
    const path = (manager: string) => `/apis/example.com/v1/namespaces/default/routes/r?fieldManager=${manager}`;
    const a = await raw('PATCH', path('team-a'), route([{ host: 'a', port: 80, weight: 1 }], ['x']), 'application/apply-patch+yaml');
    assert.equal(a.status, 201);
    assert.deepEqual(owners(a.json)['team-a/Apply'], { 'f:spec': { 'f:backends': { 'k:{"host":"a","port":80}': { '.': {}, 'f:host': {}, 'f:port': {}, 'f:weight': {} } }, 'f:tags': { 'v:"x"': {} } } });
    const b = await raw('PATCH', path('team-b'), route([{ host: 'b', port: 80, weight: 2 }], ['y']), 'application/apply-patch+yaml');
    assert.equal(b.status, 200);
    const spec = (b.json as KubeObject)['spec'] as Record<string, unknown>;
    assert.deepEqual(spec['backends'], [
      { host: 'a', port: 80, weight: 1 },
      { host: 'b', port: 80, weight: 2 },
    ]);
    assert.deepEqual(spec['tags'], ['x', 'y']);
    const clash = await raw('PATCH', path('team-b'), route([{ host: 'a', port: 80, weight: 5 }], []), 'application/apply-patch+yaml');
    assert.equal(clash.status, 409);
    assert.equal((clash.json as { message: string }).message, 'Apply failed with 1 conflict: conflict with "team-a": .spec.backends[host="a",port=80].weight');
    // team-b stops applying its element and tag: they go, team-a's stay.
    const gone = await raw('PATCH', path('team-b'), route([], []), 'application/apply-patch+yaml');
    assert.equal(gone.status, 200);
    assert.deepEqual(((gone.json as KubeObject)['spec'] as Record<string, unknown>)['backends'], [{ host: 'a', port: 80, weight: 1 }]);
    assert.deepEqual(((gone.json as KubeObject)['spec'] as Record<string, unknown>)['tags'], ['x']);
  });
});
