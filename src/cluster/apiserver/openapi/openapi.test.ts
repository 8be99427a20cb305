/**
 * The OpenAPI documents: the v3 index and group-version documents as kubectl
 * reads them (operations with group-version-kind, the fieldValidation
 * parameter and patch content types; schemas with the strategic-merge
 * extensions and CRD schemas), the v2 negotiation (406 for protobuf-only
 * requests), and the generated built-in description staying in step with
 * its generator.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { VirtualClock } from '../../../clock/virtual-clock.ts';
import { rawRequest, startTestCluster, testCertificate, type TestCluster } from '../../../testing/apiserver-bed.ts';
import { compactSchemas } from './generate.ts';
import { SchemaCatalog } from './schemas.ts';

// `any`: OpenAPI documents are read as free JSON; the assertions name the exact paths they check.
type Doc = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };

let c: TestCluster;
before(async () => {
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
});
after(async () => {
  await c.close();
});

async function v3(path: string): Promise<Doc> {
  const index = (await rawRequest(c.server, 'GET', '/openapi/v3')).json as { paths: Record<string, { serverRelativeURL: string }> };
  const url = index.paths[path]?.serverRelativeURL;
  assert.ok(url !== undefined, `${path} is listed in the index`);
  const res = await rawRequest(c.server, 'GET', url);
  assert.equal(res.status, 200);
  return res.json as Doc;
}

describe('OpenAPI v3', () => {
  test('the index lists every served group-version with a hash', async () => {
    const index = (await rawRequest(c.server, 'GET', '/openapi/v3')).json as { paths: Record<string, { serverRelativeURL: string }> };
    for (const gv of ['api/v1', 'apis/apps/v1', 'apis/batch/v1', 'apis/apiextensions.k8s.io/v1', 'apis/coordination.k8s.io/v1']) {
      assert.match(index.paths[gv]?.serverRelativeURL ?? '', new RegExp(`^/openapi/v3/${gv.replace(/\./g, '\\.')}\\?hash=[0-9A-F]{128}$`));
    }
  });

  test('a PATCH operation carries the kind, the fieldValidation parameter and the strategic merge type', async () => {
    const doc = await v3('apis/apps/v1');
    const patch = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']?.['patch'];
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: 'apps', kind: 'Deployment', version: 'v1' });
    assert.equal(patch['x-kubernetes-action'], 'patch');
    assert.ok(patch.parameters.some((p: { name: string; in: string }) => p.name === 'fieldValidation' && p.in === 'query'));
    assert.deepEqual(Object.keys(patch.requestBody.content), ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']);
    assert.ok(doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale']?.['patch'] !== undefined);
  });

  test('schemas carry the kind and the merge keys kubectl computes strategic patches with', async () => {
    const doc = await v3('apis/apps/v1');
    const s = doc.components.schemas;
    assert.deepEqual(s['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind'], [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
    assert.deepEqual(s['io.k8s.api.apps.v1.Deployment'].properties.spec.allOf, [{ $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec' }]);
    const podSpec = s['io.k8s.api.core.v1.PodSpec'];
    assert.equal(podSpec.properties.containers['x-kubernetes-patch-merge-key'], 'name');
    assert.equal(podSpec.properties.containers['x-kubernetes-patch-strategy'], 'merge');
    assert.equal(podSpec.properties.volumes['x-kubernetes-patch-strategy'], 'merge,retainKeys');
    assert.equal(s['io.k8s.api.core.v1.Container'].properties.ports['x-kubernetes-patch-merge-key'], 'containerPort');
    assert.equal(s['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties.finalizers['x-kubernetes-patch-strategy'], 'merge');
    assert.deepEqual(s['io.k8s.api.core.v1.PodSpec'].required, ['containers']);
    for (const [name, schema] of Object.entries(s)) {
      for (const [field, prop] of Object.entries((schema as { properties?: Record<string, any> }).properties ?? {})) {
        const target = prop.allOf?.[0]?.$ref ?? prop.items?.allOf?.[0]?.$ref ?? prop.additionalProperties?.allOf?.[0]?.$ref;
        if (target !== undefined) assert.ok(s[target.replace('#/components/schemas/', '')] !== undefined, `${name}.${field} refers to a schema in the document`);
      }
    }
  });

  test('a CRD gets its own document: its schema, its kind, no strategic merge patch', async () => {
    const crd = readFileSync(new URL('../../../../deploy/crds/apps.kruise.io_workloadspreads.yaml', import.meta.url), 'utf8');
    const res = await rawRequest(c.server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: JSON.stringify(parseYaml(crd)), contentType: 'application/json' });
    assert.equal(res.status, 201);
    await c.server.core.idle();
    const doc = await v3('apis/apps.kruise.io/v1alpha1');
    const schema = doc.components.schemas['io.kruise.apps.v1alpha1.WorkloadSpread'];
    assert.deepEqual(schema['x-kubernetes-group-version-kind'], [{ group: 'apps.kruise.io', kind: 'WorkloadSpread', version: 'v1alpha1' }]);
    assert.equal(schema.properties.spec.properties.subsets.type, 'array');
    assert.ok(doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'] !== undefined);
    const patch = doc.paths['/apis/apps.kruise.io/v1alpha1/namespaces/{namespace}/workloadspreads/{name}']?.['patch'];
    assert.deepEqual(Object.keys(patch.requestBody.content), ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
  });

  test('an unknown group-version is a 404', async () => {
    assert.equal((await rawRequest(c.server, 'GET', '/openapi/v3/apis/nothing.example.com/v1')).status, 404);
  });
});

describe('OpenAPI v2', () => {
  test('protobuf only: 406, so client-go moves on', async () => {
    const res = await rawRequest(c.server, 'GET', '/openapi/v2', { headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    assert.equal(res.status, 406);
    assert.equal((res.json as { reason: string }).reason, 'NotAcceptable');
  });
  test('JSON: the definitions with $refs in v2 style', async () => {
    const res = await rawRequest(c.server, 'GET', '/openapi/v2', { headers: { Accept: 'application/json' } });
    const doc = res.json as { swagger: string; definitions: Record<string, any> };
    assert.equal(doc.swagger, '2.0');
    assert.equal(doc.definitions['io.k8s.api.core.v1.Pod'].properties.spec.$ref, '#/definitions/io.k8s.api.core.v1.PodSpec');
  });
});

describe('field validation', () => {
  const body = (extra: Record<string, unknown>) =>
    JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'fv', bogus: 1 }, spec: { replica: 2, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x', imagePullPolcy: 'Always' }] } }, ...extra } });
  const post = (query: string, text: string) => rawRequest(c.server, 'POST', `/apis/apps/v1/namespaces/default/deployments${query}`, { body: text, contentType: 'application/json' });

  test('Strict: 400 with the strict decoding text naming every unknown field', async () => {
    const res = await post('?fieldValidation=Strict', body({}));
    assert.equal(res.status, 400);
    assert.equal(
      (res.json as { message: string }).message,
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "metadata.bogus", unknown field "spec.replica", unknown field "spec.template.spec.containers[0].imagePullPolcy"',
    );
  });
  test('Warn (the default): created, one warning per unknown field', async () => {
    const res = await post('', body({}));
    assert.equal(res.status, 201);
    const created = res.json as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    assert.equal(created.spec['replica'], undefined, 'unknown fields are dropped, as the typed decoder drops them');
    assert.equal(created.metadata['bogus'], undefined);
    assert.deepEqual(res.headers['warning'], '299 - "unknown field \\"metadata.bogus\\"", 299 - "unknown field \\"spec.replica\\"", 299 - "unknown field \\"spec.template.spec.containers[0].imagePullPolcy\\""');
  });
  test('Ignore: nothing said; an unsupported directive is a 400', async () => {
    const res = await rawRequest(c.server, 'PUT', '/apis/apps/v1/namespaces/default/deployments/fv?fieldValidation=Ignore', { body: body({}).replace('"name":"fv"', '"name":"fv","resourceVersion":""'), contentType: 'application/json' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['warning'], undefined);
    assert.equal((await post('?fieldValidation=Loud', body({}))).status, 400);
  });
  test('patches and server-side apply are checked too', async () => {
    const patch = await rawRequest(c.server, 'PATCH', '/apis/apps/v1/namespaces/default/deployments/fv?fieldValidation=Strict', { body: '{"spec":{"paused":true,"pasued":true}}', contentType: 'application/merge-patch+json' });
    assert.equal(patch.status, 400);
    assert.equal((patch.json as { message: string }).message, 'strict decoding error: unknown field "spec.pasued"');
    const apply = await rawRequest(c.server, 'PATCH', '/apis/apps/v1/namespaces/default/deployments/fv?fieldManager=t&fieldValidation=Strict', { body: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: fv}\nspec: {replicaz: 1}\n', contentType: 'application/apply-patch+yaml' });
    assert.equal(apply.status, 400);
    assert.equal((apply.json as { message: string }).message, 'failed to create typed patch object (default/fv; apps/v1, Kind=Deployment): .spec.replicaz: field not declared in schema');
  });
  test('custom resources: what pruning would drop is unknown', async () => {
    const ws = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'fv' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'x' }, subsets: [{ name: 'a', patch: { free: 1 }, typo: 1 }] } };
    const res = await rawRequest(c.server, 'POST', '/apis/apps.kruise.io/v1alpha1/namespaces/default/workloadspreads?fieldValidation=Strict', { body: JSON.stringify(ws), contentType: 'application/json' });
    assert.equal(res.status, 400);
    assert.equal((res.json as { message: string }).message, 'WorkloadSpread in version "v1alpha1" cannot be handled as a WorkloadSpread: strict decoding error: unknown field "spec.subsets[0].typo"');
  });
});

describe('the built-in description', () => {
  test('matches what scripts/gen-openapi.ts generates', async () => {
    const checkedIn = readFileSync(new URL('./builtin-schemas.generated.ts', import.meta.url), 'utf8');
    assert.equal(checkedIn, await compactSchemas(), 'run `npx tsx scripts/gen-openapi.ts`');
  });
  test('every kind the server serves has a schema', () => {
    const catalog = new SchemaCatalog();
    for (const def of c.server.core.registry.all().filter((d) => d.builtin)) {
      assert.ok(catalog.definitionOf(def) !== undefined, `${def.group}/${def.version} ${def.kind}`);
    }
  });
});
