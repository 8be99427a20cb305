import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { crdSchemaViolations, crdViolations } from './crd-safety.ts';
import { crdFromSchema, generatedCrdFiles, toOpenApiSchema, workloadSpreadCrd } from './crd.ts';
import { parse } from 'yaml';

/** Wraps a property schema into a root schema, as a CRD's openAPIV3Schema. */
const root = (property: unknown) => ({ type: 'object', properties: { spec: property } });
const violations = (property: unknown) => crdSchemaViolations(toOpenApiSchema(root(property)));

describe('every generated CRD is safe', () => {
  test('the WorkloadSpread CRD has no violation', () => assert.deepEqual(crdViolations(workloadSpreadCrd()), []));
  for (const { fileName, content } of generatedCrdFiles()) {
    test(`deploy/crds/${fileName} (as rendered) has no violation`, () => assert.deepEqual(crdViolations(parse(content)), []));
  }
});

describe('the walker catches each construct Kubernetes rejects', () => {
  const cases: [string, unknown, RegExp][] = [
    ['const (TypeBox Literal)', Type.Literal('a'), /"const" is not allowed/],
    ['anyOf of literals (TypeBox Union of Literals)', Type.Union([Type.Literal('a'), Type.Literal('b')]), /"type" must not be set inside anyOf/],
    ['patternProperties (TypeBox Record)', Type.Record(Type.String(), Type.String()), /"patternProperties" is not allowed/],
    ['$ref', Type.Ref('Other'), /"\$ref" is not allowed/],
    ['definitions', { type: 'object', definitions: {} }, /"definitions" is not allowed/],
    ['additionalProperties: false', Type.Object({ a: Type.String() }, { additionalProperties: false }), /additionalProperties cannot be set to false/],
    ['additionalProperties: true', { type: 'object', additionalProperties: true }, /additionalProperties: true is not structural/],
    ['additionalProperties next to properties', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }, /mutually exclusive/],
    ['nullable by union (TypeBox Union with Null)', Type.Union([Type.String(), Type.Null()]), /single non-null type/],
    ['a list of types', { type: ['string', 'null'] }, /single non-null type/],
    ['missing type on a property', { type: 'object', properties: { a: { description: 'untyped' } } }, /spec\.properties\.a: type is required/],
    ['missing type on array items', { type: 'array', items: { description: 'x' } }, /items: type is required/],
    ['missing type on map values', { type: 'object', additionalProperties: { description: 'x' } }, /additionalProperties: type is required/],
    ['an array without items', { type: 'array' }, /must declare items/],
    ['tuple items', { type: 'array', items: [{ type: 'string' }] }, /not a tuple/],
    ['description inside a junctor', { type: 'string', anyOf: [{ description: 'x' }] }, /"description" must not be set inside/],
    ['a property only inside a junctor', { type: 'object', anyOf: [{ properties: { a: { type: 'string' } } }] }, /must also be declared outside/],
    ['int-or-string with a type', { type: 'string', 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }, /must not be combined with type/],
    ['int-or-string with wrong branches', { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'boolean' }] }, /"type" must not be set inside/],
    ['preserve-unknown-fields: false', { type: 'object', 'x-kubernetes-preserve-unknown-fields': false }, /must be true or absent/],
    ['uniqueItems', { type: 'array', items: { type: 'string' }, uniqueItems: true }, /uniqueItems/],
    ['enum values of the wrong type', { type: 'string', enum: ['a', 1] }, /enum values must be of type string/],
    ['unknown type', { type: 'date' }, /unknown type/],
  ];
  for (const [name, schema, pattern] of cases) {
    test(name, () => {
      const found = violations(schema);
      assert.ok(found.some((v) => pattern.test(v)), `expected a violation matching ${pattern}, got ${JSON.stringify(found)}`);
    });
  }

  test('the allowed int-or-string forms pass', () => {
    assert.deepEqual(violations({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }), []);
    assert.deepEqual(violations({ 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^x' }] }), []);
  });
  test('preserve-unknown-fields nodes need no properties', () => assert.deepEqual(violations({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }), []));

  test('root: type object, metadata only {type: object}', () => {
    assert.match(crdSchemaViolations({ type: 'string' }).join('\n'), /root type must be object/);
    assert.match(crdSchemaViolations({ type: 'object', properties: { metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }).join('\n'), /must not set x-kubernetes-preserve-unknown-fields/);
    assert.match(crdSchemaViolations({ type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }).join('\n'), /only name and generateName/);
    assert.deepEqual(crdSchemaViolations({ type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 63 } } } } }), []);
  });

  test('printer columns and storage versions', () => {
    const crd = crdFromSchema({
      group: 'g.io', kind: 'K', plural: 'ks', singular: 'k', scope: 'Namespaced',
      versions: [
        { name: 'v1', served: true, storage: false, schema: Type.Object({}), printerColumns: [{ name: 'A', type: 'string', jsonPath: 'spec.a' }, { name: 'A', type: 'date', jsonPath: '.b' }] },
      ],
    });
    const found = crdViolations(crd).join('\n');
    assert.match(found, /jsonPath: must start with "\."/);
    assert.match(found, /duplicate column A/);
    assert.match(found, /exactly one version must be the storage version/);
  });
});
