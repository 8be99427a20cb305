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
import { request } from 'node:https';
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

  test('a stale hash is redirected to the current document; only the current hash may be cached for good', async () => {
    const index = (await rawRequest(c.server, 'GET', '/openapi/v3')).json as { paths: Record<string, { serverRelativeURL: string }> };
    const current = index.paths['apis/apps/v1']?.serverRelativeURL ?? '';
    const stale = await rawRequest(c.server, 'GET', '/openapi/v3/apis/apps/v1?hash=0123');
    assert.equal(stale.status, 301);
    assert.equal(stale.headers['location'], current);
    const fresh = await rawRequest(c.server, 'GET', current);
    assert.equal(fresh.headers['cache-control'], 'public, immutable');
    assert.equal((await rawRequest(c.server, 'GET', '/openapi/v3/apis/apps/v1')).headers['cache-control'], undefined);
  });

  test('the RBAC group has its document', async () => {
    const doc = await v3('apis/rbac.authorization.k8s.io/v1');
    assert.deepEqual(doc.components.schemas['io.k8s.api.rbac.v1.RoleBinding']['x-kubernetes-group-version-kind'], [{ group: 'rbac.authorization.k8s.io', kind: 'RoleBinding', version: 'v1' }]);
    assert.ok(doc.paths['/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings/{name}'] !== undefined);
  });

  test('an unknown group-version is a 404', async () => {
    assert.equal((await rawRequest(c.server, 'GET', '/openapi/v3/apis/nothing.example.com/v1')).status, 404);
  });
});

describe('OpenAPI v2', () => {
  test('protobuf, as client-go asks for it (either spelling): gnostic\'s Document, with an ETag that revalidates', async () => {
    for (const accept of ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf']) {
      const res = await rawRequest(c.server, 'GET', '/openapi/v2', { headers: { Accept: accept } });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
      assert.match(String(res.headers['etag']), /^"[0-9A-F]{128}"$/);
      // Document.swagger (field 1) = "2.0", then Document.info (field 2).
      assert.deepEqual([...Buffer.from(res.text, 'latin1').subarray(0, 5)], [0x0a, 3, 0x32, 0x2e, 0x30]);
      const again = await rawRequest(c.server, 'GET', '/openapi/v2', { headers: { Accept: accept, 'If-None-Match': String(res.headers['etag']) } });
      assert.equal(again.status, 304);
    }
  });
  test('neither JSON nor protobuf acceptable: 406 with no body, as kube-openapi answers', async () => {
    const res = await rawRequest(c.server, 'GET', '/openapi/v2', { headers: { Accept: 'text/html' } });
    assert.equal(res.status, 406);
    assert.equal(res.text, '');
  });
  test('JSON: paths with the kind and the fieldValidation parameter, definitions with $refs in v2 style', async () => {
    const res = await rawRequest(c.server, 'GET', '/openapi/v2', { headers: { Accept: 'application/json' } });
    const doc = res.json as { swagger: string; paths: Record<string, any>; definitions: Record<string, any> };
    assert.equal(doc.swagger, '2.0');
    assert.equal(doc.definitions['io.k8s.api.core.v1.Pod'].properties.spec.$ref, '#/definitions/io.k8s.api.core.v1.PodSpec');
    assert.deepEqual(doc.definitions['io.k8s.api.apps.v1.RollingUpdateDeployment'].properties.maxSurge, { type: 'string', format: 'int-or-string' });
    const patch = doc.paths['/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}'].patch;
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', version: 'v1' });
    assert.ok(patch.parameters.some((p: any) => p.name === 'fieldValidation' && p.in === 'query' && p.type === 'string'));
    assert.deepEqual(patch.parameters.at(-1), { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } });
    assert.ok(patch.consumes.includes('application/strategic-merge-patch+json'));
    assert.deepEqual(patch.responses['200'].schema, { $ref: '#/definitions/io.k8s.api.rbac.v1.ClusterRole' });
    const noV3Keywords = (s: any, at: string): void => {
      for (const k of ['anyOf', 'oneOf', 'not', 'nullable']) assert.equal(s[k], undefined, `${at}: Swagger 2.0 has no ${k}`);
      for (const [p, sub] of Object.entries(s.properties ?? {})) noV3Keywords(sub, `${at}.${p}`);
      for (const sub of [s.items, s.additionalProperties].filter((x) => typeof x === 'object')) noV3Keywords(sub, `${at}[]`);
    };
    for (const [name, schema] of Object.entries(doc.definitions)) noV3Keywords(schema, name);
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

describe('create-only resources', () => {
  test('an access review has a POST and nothing else, in both versions; its discovery entry has no storage version', async () => {
    const doc = await v3('apis/authorization.k8s.io/v1');
    assert.deepEqual(Object.keys(doc.paths).sort(), [
      '/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    ]);
    assert.deepEqual(Object.keys(doc.paths['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'] ?? {}).sort(), ['parameters', 'post']);
    const v2 = (await rawRequest(c.server, 'GET', '/openapi/v2', { headers: { Accept: 'application/json' } })).json as { paths: Record<string, Record<string, unknown>> };
    assert.deepEqual(Object.keys(v2.paths['/apis/authentication.k8s.io/v1/selfsubjectreviews'] ?? {}).sort(), ['parameters', 'post']);
    const list = (await rawRequest(c.server, 'GET', '/apis/authorization.k8s.io/v1')).json as { resources: Record<string, unknown>[] };
    const ssar = list.resources.find((r) => r['name'] === 'selfsubjectaccessreviews');
    assert.deepEqual(ssar, { name: 'selfsubjectaccessreviews', singularName: 'selfsubjectaccessreview', namespaced: false, kind: 'SelfSubjectAccessReview', verbs: ['create'] });
  });
});

/** Minimal protobuf reader for the test: the length-delimited fields of a message, by number. */
function fields(b: Buffer): Map<number, Buffer[]> {
  const out = new Map<number, Buffer[]>();
  let p = 0;
  const varint = (): number => {
    let r = 0;
    let s = 0;
    for (;;) {
      const x = b[p++] as number;
      r += (x & 0x7f) * 2 ** s;
      if ((x & 0x80) === 0) return r;
      s += 7;
    }
  };
  while (p < b.length) {
    const tag = varint();
    const wire = tag % 8;
    if (wire === 0) varint();
    else if (wire === 1) p += 8;
    else if (wire === 2) {
      const len = varint();
      const list = out.get(Math.floor(tag / 8)) ?? [];
      list.push(b.subarray(p, p + len));
      out.set(Math.floor(tag / 8), list);
      p += len;
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}
const text = (b: Buffer | undefined) => b?.toString('utf8') ?? '';

describe('OpenAPI v2 in protobuf', () => {
  test('the paths of the JSON document, each PATCH with its kind (as YAML) and the fieldValidation query parameter', async () => {
    const json = (await rawRequest(c.server, 'GET', '/openapi/v2', { headers: { Accept: 'application/json' } })).json as { paths: Record<string, unknown>; definitions: Record<string, unknown> };
    const binary = await new Promise<Buffer>((resolve, reject) => {
      const req = request({ host: c.server.host, port: c.server.port, path: '/openapi/v2', ca: c.server.caPem, headers: { Authorization: `Bearer ${c.server.token}`, Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      });
      req.on('error', reject);
      req.end();
    });
    const doc = fields(binary);
    assert.equal(text(doc.get(1)?.[0]), '2.0');
    // Document.paths (8) → Paths.path (2) → NamedPathItem {name 1, value 2}.
    const named = fields(doc.get(8)?.[0] ?? Buffer.alloc(0)).get(2) ?? [];
    assert.deepEqual(named.map((n) => text(fields(n).get(1)?.[0])), Object.keys(json.paths));
    const item = named.map((n) => fields(n)).find((n) => text(n.get(1)?.[0]) === '/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}');
    const patch = fields(fields(item?.get(2)?.[0] ?? Buffer.alloc(0)).get(8)?.[0] ?? Buffer.alloc(0));
    // Operation.vendor_extension (13) → NamedAny {name, Any {yaml = 2}}.
    const extensions = new Map((patch.get(13) ?? []).map((e) => [text(fields(e).get(1)?.[0]), text(fields(fields(e).get(2)?.[0] ?? Buffer.alloc(0)).get(2)?.[0])]));
    assert.deepEqual(parseYaml(extensions.get('x-kubernetes-group-version-kind') ?? ''), { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', version: 'v1' });
    // Operation.parameters (8) → ParametersItem.parameter (1) → Parameter.non_body_parameter (2) → query (3) → name (4).
    const queryNames = (patch.get(8) ?? []).map((p) => fields(fields(fields(fields(p).get(1)?.[0] ?? Buffer.alloc(0)).get(2)?.[0] ?? Buffer.alloc(0)).get(3)?.[0] ?? Buffer.alloc(0)).get(4)?.[0]).map(text);
    assert.ok(queryNames.includes('fieldValidation'), queryNames.join());
    // Document.definitions (9): every definition, in the JSON document's order.
    const definitions = (fields(doc.get(9)?.[0] ?? Buffer.alloc(0)).get(1) ?? []).map((d) => text(fields(d).get(1)?.[0]));
    assert.deepEqual(definitions, Object.keys(json.definitions));
  });
});
