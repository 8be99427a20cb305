import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import Type from 'typebox';
import { CRD_GENERATOR_COMMAND, crdFromSchema, generatedCrdFiles, renderYaml, rootOpenApiSchema, workloadSpreadCrd } from './crd.ts';

const crdDir = new URL('../../deploy/crds/', import.meta.url);

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test navigation of generated JSON

describe('checked-in CRDs', () => {
  for (const { fileName, content } of generatedCrdFiles()) {
    test(`deploy/crds/${fileName} is what the schema generates`, () => {
      let onDisk: string;
      try {
        onDisk = readFileSync(new URL(fileName, crdDir), 'utf8');
      } catch {
        assert.fail(`deploy/crds/${fileName} is missing: run \`${CRD_GENERATOR_COMMAND}\``);
      }
      assert.ok(onDisk === content, `deploy/crds/${fileName} is out of date with the TypeBox schema: run \`${CRD_GENERATOR_COMMAND}\` and commit the result`);
    });
  }
});

describe('the WorkloadSpread CRD (spec §1, D1)', () => {
  const crd = workloadSpreadCrd() as Obj;
  const version = crd.spec.versions[0] as Obj;
  const schema = version.schema.openAPIV3Schema as Obj;
  const subset = schema.properties.spec.properties.subsets.items as Obj;

  test('names, scope and version', () => {
    assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(crd.kind, 'CustomResourceDefinition');
    assert.equal(crd.metadata.name, 'workloadspreads.apps.kruise.io');
    assert.deepEqual(crd.spec.names, { kind: 'WorkloadSpread', listKind: 'WorkloadSpreadList', plural: 'workloadspreads', singular: 'workloadspread', shortNames: ['ws'] });
    assert.equal(crd.spec.group, 'apps.kruise.io');
    assert.equal(crd.spec.scope, 'Namespaced');
    assert.equal(crd.spec.versions.length, 1);
    assert.deepEqual([version.name, version.served, version.storage], ['v1alpha1', true, true]);
    assert.deepEqual(version.subresources, { status: {} });
  });
  test('printer columns of the reference plus Subsets, Ready and Reason from the Ready condition, and integer counts', () => {
    assert.deepEqual(
      version.additionalPrinterColumns.map((c: Obj) => [c.name, c.type, c.jsonPath]),
      [
        ['WorkloadName', 'string', '.spec.targetRef.name'],
        ['WorkloadKind', 'string', '.spec.targetRef.kind'],
        ['Adaptive', 'boolean', '.spec.scheduleStrategy.type[?(@ == "Adaptive")]'],
        ['Subsets', 'integer', '.status.subsetCount'],
        ['Ready', 'string', '.status.conditions[?(@.type=="Ready")].status'],
        ['Reason', 'string', '.status.conditions[?(@.type=="Ready")].reason'],
        ['Desired', 'integer', '.status.workloadReplicas'],
        ['Placed', 'integer', '.status.placedReplicas'],
        ['Ready-Pods', 'integer', '.status.readyReplicas'],
        ['Age', 'date', '.metadata.creationTimestamp'],
      ],
    );
  });
  test('every integer column reads an integer field of the status schema', () => {
    const statusProps = schema.properties.status.properties;
    for (const c of version.additionalPrinterColumns as Obj[]) {
      if (c.type !== 'integer') continue;
      const field = String(c.jsonPath).replace(/^\.status\./, '');
      assert.equal(statusProps[field]?.type, 'integer', c.name);
    }
  });
  test('root: metadata is just {type: object}, spec is not required', () => {
    assert.deepEqual(schema.properties.metadata, { type: 'object' });
    assert.equal(schema.required, undefined);
    assert.equal(schema.type, 'object');
  });
  test('the schema carries the API: targetRef required fields, subsets, int-or-string, preserved patch, enum', () => {
    assert.deepEqual(schema.properties.spec.required, ['targetRef', 'subsets']);
    assert.deepEqual(schema.properties.spec.properties.targetRef.required, ['apiVersion', 'kind', 'name']);
    assert.deepEqual(subset.required, ['name']);
    assert.deepEqual(subset.properties.maxReplicas.anyOf, [{ type: 'integer' }, { type: 'string' }]);
    assert.equal(subset.properties.maxReplicas['x-kubernetes-int-or-string'], true);
    assert.deepEqual({ ...subset.properties.patch, description: undefined }, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description: undefined });
    assert.equal(subset.properties.minReplicas.minimum, 0);
    assert.deepEqual(schema.properties.spec.properties.scheduleStrategy.properties.type.enum, ['Adaptive', 'Fixed', '']);
  });
  test('no TypeBox bookkeeping leaks into the schema', () => {
    assert.equal(JSON.stringify(schema).includes('~'), false);
  });
});

describe('crdFromSchema and renderYaml', () => {
  const Thing = Type.Object({ metadata: Type.Optional(Type.Object({ name: Type.String() })), spec: Type.Object({ size: Type.Integer() }) });
  test('a generic CRD: list kind defaults, no subresources unless asked, root requirements kept', () => {
    const crd = crdFromSchema({ group: 'example.io', kind: 'Thing', plural: 'things', singular: 'thing', scope: 'Cluster', versions: [{ name: 'v1', served: true, storage: true, schema: Thing }] }) as Obj;
    assert.equal(crd.metadata.name, 'things.example.io');
    assert.equal(crd.spec.names.listKind, 'ThingList');
    assert.equal(crd.spec.versions[0].subresources, undefined);
    assert.deepEqual(crd.spec.versions[0].schema.openAPIV3Schema.required, ['spec']);
    assert.deepEqual(crd.spec.versions[0].schema.openAPIV3Schema.properties.metadata, { type: 'object' });
  });
  test('optional root properties are dropped from required', () => {
    assert.equal(rootOpenApiSchema(Thing, ['spec'])['required'], undefined);
  });
  test('YAML is stable: keys sorted whatever the construction order, with the generated header', () => {
    const a = renderYaml({ b: 1, a: { d: 2, c: 3 } });
    const b = renderYaml({ a: { c: 3, d: 2 }, b: 1 });
    assert.equal(a, b);
    assert.ok(a.startsWith(`# Generated by \`${CRD_GENERATOR_COMMAND}\``));
    assert.deepEqual(parse(a), { a: { c: 3, d: 2 }, b: 1 });
  });
  test('the rendered WorkloadSpread CRD parses back to the generated object', () => {
    const file = generatedCrdFiles()[0];
    assert.ok(file);
    assert.deepEqual(parse(file.content), workloadSpreadCrd());
  });
});
