/**
 * Would kube-apiserver accept the CRDs this project generates? Asked of the
 * one CRD-schema engine (src/k8s/crd-schema/, the checks apiextensions-apiserver
 * runs on a CustomResourceDefinition); crd-apply.test.ts applies them to the
 * embedded API server over HTTPS as `kubectl apply` would. The constructs a TypeBox
 * schema can produce and a CRD may not hold are each shown to be refused, so a
 * schema that starts using one fails here rather than at install time.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { parse } from 'yaml';
import { validateCustomResourceDefinition } from '../k8s/crd-schema/crd-validation.ts';
import { validateStructuralSchema } from '../k8s/crd-schema/structural-validation.ts';
import { formatFieldError, root } from '../k8s/field-errors.ts';
import type { KubeObject } from '../k8s/types.ts';
import { crdFromSchema, domainDisruptionBudgetCrd, generatedCrdFiles, toOpenApiSchema, workloadSpreadCrd } from './crd.ts';

const messages = (crd: unknown): string[] => validateCustomResourceDefinition(crd as KubeObject).map(formatFieldError);
/** The engine's findings on a property schema placed as `spec` of a root schema, as the CRD generator converts it. */
const schemaFindings = (property: unknown): string[] =>
  validateStructuralSchema(toOpenApiSchema({ type: 'object', properties: { spec: property } }), root('openAPIV3Schema')).map(formatFieldError);

describe('every generated CRD passes the CRD validation', () => {
  test('the WorkloadSpread CRD', () => assert.deepEqual(messages(workloadSpreadCrd()), []));
  test('the DomainDisruptionBudget CRD', () => assert.deepEqual(messages(domainDisruptionBudgetCrd()), []));
  for (const { fileName, content } of generatedCrdFiles()) {
    test(`deploy/crds/${fileName} (as rendered)`, () => assert.deepEqual(messages(parse(content)), []));
  }
});

describe('the engine refuses each construct kube-apiserver rejects in a CRD schema', () => {
  const at = 'openAPIV3Schema.properties[spec]';
  const cases: [string, unknown, string][] = [
    ['anyOf of literals (TypeBox Union of Literals)', Type.Union([Type.Literal('a'), Type.Literal('b')]), `${at}.anyOf[0].type: Forbidden: must be empty to be structural`],
    ['patternProperties (TypeBox Record)', Type.Record(Type.String(), Type.String()), `${at}.patternProperties: Forbidden: patternProperties is not supported`],
    ['$ref', Type.Ref('Other'), `${at}.$ref: Forbidden: $ref is not supported`],
    ['definitions', { type: 'object', definitions: {} }, `${at}.definitions: Forbidden: definitions is not supported`],
    ['additionalProperties: false next to properties', Type.Object({ a: Type.String() }, { additionalProperties: false }), `${at}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`],
    ['additionalProperties next to properties', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }, `${at}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`],
    ['nullable by union (TypeBox Union with Null)', Type.Union([Type.String(), Type.Null()]), `${at}.type: Required value: must not be empty for specified object fields`],
    ['type null', { type: 'null' }, `${at}.type: Forbidden: type cannot be set to null, use nullable as an alternative`],
    ['a list of types', { type: ['string', 'null'] }, `${at}.type: Unsupported value: ["string","null"]`],
    ['missing type on a property', { type: 'object', properties: { a: { description: 'untyped' } } }, `${at}.properties[a].type: Required value: must not be empty for specified object fields`],
    ['missing type on array items', { type: 'array', items: { description: 'x' } }, `${at}.items.type: Required value: must not be empty for specified array items`],
    ['missing type on map values', { type: 'object', additionalProperties: { description: 'x' } }, `${at}.additionalProperties.type: Required value: must not be empty for specified object fields`],
    ['an array without items', { type: 'array' }, `${at}.items: Required value: must be specified`],
    ['tuple items', { type: 'array', items: [{ type: 'string' }] }, `${at}.items: Forbidden: items must be a schema object and not an array`],
    ['description inside a junctor', { type: 'string', anyOf: [{ description: 'x' }] }, `${at}.anyOf[0].description: Forbidden: must be empty to be structural`],
    ['a typed property only inside a junctor', { type: 'object', anyOf: [{ properties: { a: { type: 'string' } } }] }, `${at}.anyOf[0].properties[a].type: Forbidden: must be empty to be structural`],
    ['int-or-string with a type', { type: 'string', 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }, `${at}.type: Invalid value: "string": must be empty if x-kubernetes-int-or-string is true`],
    ['int-or-string with wrong branches', { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'boolean' }] }, `${at}.anyOf[0].type: Forbidden: must be empty to be structural`],
    ['preserve-unknown-fields: false', { type: 'object', 'x-kubernetes-preserve-unknown-fields': false }, `${at}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`],
    ['uniqueItems', { type: 'array', items: { type: 'string' }, uniqueItems: true }, `${at}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`],
    ['unknown type', { type: 'date' }, `${at}.type: Unsupported value: "date"`],
  ];
  for (const [name, schema, want] of cases) {
    test(name, () => {
      const found = schemaFindings(schema);
      assert.ok(found.some((m) => m.startsWith(want)), `expected a finding starting with ${want}, got ${JSON.stringify(found)}`);
    });
  }

  test('the allowed int-or-string forms and preserved objects pass', () => {
    assert.deepEqual(schemaFindings({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }), []);
    assert.deepEqual(schemaFindings({ 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^x' }] }), []);
    assert.deepEqual(schemaFindings({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }), []);
  });

  test('root: type object; metadata restricts at most name and generateName', () => {
    const rootFindings = (schema: unknown) => validateStructuralSchema(schema, root('openAPIV3Schema')).map(formatFieldError).join('\n');
    assert.match(rootFindings({ type: 'string' }), /openAPIV3Schema\.type: Invalid value: "string": must be object at the root/);
    assert.match(rootFindings({ type: 'object', properties: { metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }), /properties\[metadata\]: Forbidden: must not specify anything other than name and generateName/);
    assert.match(rootFindings({ type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }), /properties\[metadata\]: Forbidden: must not specify anything other than name and generateName/);
    assert.equal(rootFindings({ type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 63 } } } } }), '');
  });

  test('printer columns and storage versions', () => {
    const crd = crdFromSchema({
      group: 'g.io', kind: 'K', plural: 'ks', singular: 'k', scope: 'Namespaced',
      versions: [
        { name: 'v1', served: true, storage: false, schema: Type.Object({}), printerColumns: [{ name: 'A', type: 'string', jsonPath: 'spec.a' }, { name: 'B', type: 'date', jsonPath: '.b' }] },
      ],
    });
    const found = messages(crd).join('\n');
    assert.match(found, /additionalPrinterColumns\[0\]\.jsonPath: Invalid value: "spec\.a": must be a simple json path starting with \./);
    assert.match(found, /spec\.versions: Invalid value: .*must have exactly one version marked as storage version/);
  });
});
