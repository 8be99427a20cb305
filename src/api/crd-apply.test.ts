/**
 * The generated CRDs applied to the embedded API server over HTTPS, as
 * `kubectl apply` (strict field validation) would: created and Established;
 * a schema the CRD-schema engine refuses is a 422 with its message, and a
 * keyword JSONSchemaProps does not have (TypeBox's `const`) an unknown field.
 * crd-acceptance.test.ts asks the engine directly, case by case.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { parse } from 'yaml';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { KubeObject } from '../k8s/types.ts';
import { rawRequest, startTestCluster, testCertificate, type TestCluster } from '../testing/apiserver-bed.ts';
import { crdFromSchema, generatedCrdFiles } from './crd.ts';

describe('the embedded API server accepts the generated CRDs and refuses the forbidden constructs', () => {
  let c: TestCluster;
  before(async () => {
    c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
  });
  after(async () => {
    await c.close();
  });
  const post = async (crd: unknown, query = '') => {
    const res = await rawRequest(c.server, 'POST', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions${query}`, { body: JSON.stringify(crd), contentType: 'application/json' });
    await c.server.core.idle();
    return res;
  };

  for (const { fileName, content } of generatedCrdFiles()) {
    test(`deploy/crds/${fileName} is created under strict field validation and becomes Established`, async () => {
      const crd = parse(content) as KubeObject;
      const res = await post(crd, '?fieldValidation=Strict');
      assert.equal(res.status, 201, JSON.stringify(res.json));
      const got = await rawRequest(c.server, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata?.name ?? ''}`);
      const conditions = ((got.json as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? []);
      assert.ok(conditions.some((cond) => cond.type === 'Established' && cond.status === 'True'), JSON.stringify(conditions));
    });
  }

  const gadgets = (spec: unknown) => crdFromSchema({
    group: 'example.com', kind: 'Gadget', plural: 'gadgets', singular: 'gadget', scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { type: 'object', properties: { spec } } }],
  });

  test('a schema the engine refuses is a 422 with the engine\'s message', async () => {
    const res = await post(gadgets(Type.Record(Type.String(), Type.String())));
    assert.equal(res.status, 422);
    const message = (res.json as { message: string }).message;
    assert.ok(message.includes('spec.versions[0].schema.openAPIV3Schema.properties[spec].patternProperties: Forbidden: patternProperties is not supported'), message);
  });

  test('const (TypeBox Literal) is not a CRD schema keyword: strict field validation refuses it', async () => {
    const res = await post(gadgets(Type.Object({ mode: Type.Literal('a') })), '?fieldValidation=Strict');
    assert.equal(res.status, 400, JSON.stringify(res.json));
    const message = (res.json as { message: string }).message;
    assert.match(message, /unknown field "spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\.spec\.properties\.mode\.const"/);
  });
});
