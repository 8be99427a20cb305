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
import { rawRequest, startTestCluster, testCertificate, type TestCluster } from '../test-support.ts';
import { compactSchemas } from './generate.ts';
import { SchemaCatalog } from './schemas.ts';

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
