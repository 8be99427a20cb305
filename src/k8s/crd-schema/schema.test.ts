/**
 * Unit tests of custom-resource schema handling: pruning, defaulting,
 * validation messages (one case per schema keyword → upstream text), list
 * types, structural-schema rules and CRD validation — table-driven, with a
 * property test that pruning leaves nothing the schema does not declare.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { formatFieldError, root } from '../field-errors.ts';
import type { KubeObject } from '../types.ts';
import { validateCustomResourceDefinition, validateCustomResourceDefinitionUpdate } from './crd-validation.ts';
import { defaultResource, hasDefaults, needsDefaults } from './defaults.ts';
import { validateEmbeddedResources } from './embedded.ts';
import { validateListTypes } from './list-type.ts';
import { pruneResource } from './prune.ts';
import { validateStructuralSchema } from './structural-validation.ts';
import type { Schema } from './structural.ts';
import { compileSchema } from './validator.ts';
import { validateResource } from './resource-validation.ts';

const schema: Schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', minimum: 1, maximum: 10 },
        mode: { type: 'string', enum: ['Fast', 'Slow'], default: 'Fast' },
        name: { type: 'string', maxLength: 3, minLength: 2, pattern: '^[a-z]+$' },
        when: { type: 'string', format: 'date-time' },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        ratio: { type: 'number', minimum: 0, exclusiveMinimum: true },
        note: { type: 'string', nullable: true },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 2, 'x-kubernetes-list-type': 'set' },
        ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { x: { type: 'string' } } } } },
        limits: { type: 'object', properties: { cpu: { type: 'string', default: '1' }, memory: { type: 'string' } }, default: { memory: '1Gi' } },
        nested: { type: 'object', properties: { inner: { type: 'integer', default: 7 } } },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'integer' } } },
  },
};

const validator = compileSchema(schema);
const messages = (obj: unknown) => validator.validate(obj).map(formatFieldError);
const withSpec = (spec: Record<string, unknown>) => ({ apiVersion: 'x.io/v1', kind: 'T', metadata: { name: 'a' }, spec: { size: 1, ...spec } });

describe('validation messages (kube-openapi texts)', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['type', { size: 'string' }, 'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"'],
    ['enum', { mode: 'Medium' }, 'spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"'],
    ['minimum', { size: 0 }, 'spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1'],
    ['maximum', { size: 11 }, 'spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10'],
    ['exclusive minimum', { ratio: 0 }, 'spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0'],
    ['maxLength', { name: 'abcd' }, 'spec.name: Too long: may not be more than 3 bytes'],
    ['minLength', { name: 'a' }, 'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long'],
    ['pattern', { name: 'AB' }, "spec.name: Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'"],
    ['format', { when: 'yesterday' }, 'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"'],
    ['int-or-string', { port: true }, 'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'],
    ['maxItems', { tags: ['a', 'b', 'c'] }, 'spec.tags: Too many: 3: must have at most 2 items'],
    ['nested path with index', { ports: [{ name: 'a', port: 'x' }] }, 'spec.ports[0].port: Invalid value: "string": spec.ports[0].port in body must be of type integer: "string"'],
    ['null where not nullable', { name: null }, 'spec.name: Invalid value: "null": spec.name in body must be of type string: "null"'],
  ];
  for (const [name, spec, want] of cases) test(name, () => assert.deepEqual(messages(withSpec(spec)), [want]));

  test('required', () => assert.deepEqual(messages({ spec: {} }), ['spec.size: Required value']));
  test('valid values pass: int-or-string both ways, nullable null', () => {
    assert.deepEqual(messages(withSpec({ port: 80, note: null })), []);
    assert.deepEqual(messages(withSpec({ port: '50%' })), []);
  });
});

describe('validation: the other keywords, the combinators and integer formats', () => {
  const check = (node: Schema, value: unknown) => compileSchema({ type: 'object', properties: { v: node } }).validate({ v: value }).map(formatFieldError);
  const cases: [string, Schema, unknown, string[]][] = [
    ['minItems', { type: 'array', items: { type: 'string' }, minItems: 2 }, ['a'], ['v: Invalid value: ["a"]: v in body should have at least 2 items']],
    ['uniqueItems (deep equality)', { type: 'array', items: { type: 'object' }, uniqueItems: true }, [{ a: 1 }, { a: 1 }], ['v: Invalid value: [{"a":1},{"a":1}]: v in body shouldn\'t contain duplicates']],
    ['multipleOf', { type: 'number', multipleOf: 0.5 }, 1.25, ['v: Invalid value: 1.25: v in body should be a multiple of 0.5']],
    ['multipleOf holds for decimals', { type: 'number', multipleOf: 0.1 }, 0.3, []],
    ['maxProperties', { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 }, { a: 'x', b: 'y' }, ['v: Too many: 2: must have at most 1 item']],
    ['minProperties', { type: 'object', additionalProperties: { type: 'string' }, minProperties: 2 }, { a: 'x' }, ['v: Invalid value: {"a":"x"}: v in body should have at least 2 properties']],
    ['exclusive maximum', { type: 'integer', maximum: 5, exclusiveMaximum: true }, 5, ['v: Invalid value: 5: v in body should be less than 5']],
    ['int32 bound', { type: 'integer', format: 'int32' }, 2147483648, ['v: Invalid value: 2147483648: v in body should be less than or equal to 2147483647 (int32)']],
    ['int-or-string holds an int32', { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }, -2147483649, ['v: Invalid value: -2147483649: v in body should be greater than or equal to -2147483648 (int32)']],
    ['anyOf: no branch', { type: 'string', anyOf: [{ pattern: '^a' }, { pattern: '^b' }] }, 'c', ['v: Invalid value: "c": v in body must validate at least one schema (anyOf)']],
    ['anyOf: one branch is enough', { type: 'string', anyOf: [{ pattern: '^a' }, { pattern: '^b' }] }, 'b', []],
    ['oneOf: two branches', { type: 'string', oneOf: [{ pattern: '^a' }, { maxLength: 5 }] }, 'ab', ['v: Invalid value: "ab": v in body must validate one and only one schema (oneOf)']],
    ['not', { type: 'string', not: { enum: ['x'] } }, 'x', ['v: Invalid value: "x": v in body must not validate the schema (not)']],
    ['allOf branches report their own errors', { type: 'string', allOf: [{ minLength: 2 }, { pattern: '^[a-z]+$' }] }, 'A', ['v: Invalid value: "A": v in body should be at least 2 chars long', "v: Invalid value: \"A\": v in body should match '^[a-z]+$'"]],
    ['a nullable enum takes null', { type: 'string', enum: ['a'], nullable: true }, null, []],
    ['an unknown format is not checked', { type: 'string', format: 'color' }, 'anything', []],
  ];
  for (const [name, node, value, want] of cases) test(name, () => assert.deepEqual(check(node, value), want));

  test('a pattern that does not compile is reported on every validation', () => {
    const errs = compileSchema({ type: 'object', properties: { v: { type: 'string', pattern: '(' } } }).validate({ v: 'x' }).map(formatFieldError);
    assert.equal(errs.length, 1);
    assert.match(errs[0] ?? '', /the schema of this resource cannot be compiled: pattern "\("/);
  });
});

describe('validateResource: what the API server reports for a decoded object', () => {
  const obj = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ apiVersion: 'x.io/v1', kind: 'T', metadata: { name: 'a' }, spec, ...extra });
  test('nulls of non-nullable fields are pruned first (a required one is then missing); the object is not changed', () => {
    const o = obj({ size: null, note: null, mode: null });
    assert.deepEqual(validateResource(o, schema).map(formatFieldError), ['spec.size: Required value']);
    assert.equal(o.spec['size'], null);
  });
  test('unknown fields are dropped silently, or reported first under unknownFields: error (metadata keeps ObjectMeta\'s)', () => {
    const o = obj({ size: 'x', bogus: 1 }, { extra: true, metadata: { name: 'a', labels: {}, owner: 'me' } });
    assert.deepEqual(validateResource(o, schema).map(formatFieldError), ['spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"']);
    assert.deepEqual(validateResource(o, schema, { unknownFields: 'error' }).map(formatFieldError), [
      'unknown field "metadata.owner"',
      'unknown field "spec.bogus"',
      'unknown field "extra"',
      'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
    ]);
  });
  test('skipRequired leaves the named missing fields to the caller', () => {
    assert.deepEqual(validateResource(obj({}), schema, { skipRequired: new Set(['spec.size']) }), []);
  });
});

describe('list types', () => {
  test('a set may not repeat a value; a map may not repeat its keys', () => {
    const errs = validateListTypes({ spec: { tags: ['a', 'a'], ports: [{ name: 'x', port: 1 }, { name: 'x', port: 2 }] } }, schema).map(formatFieldError);
    assert.deepEqual(errs, ['spec.tags[1]: Duplicate value: "a"', 'spec.ports[1]: Duplicate value: {"name":"x"}']);
  });
});

describe('embedded resources', () => {
  test('need apiVersion and kind, well formed, and valid metadata', () => {
    const errs = validateEmbeddedResources({ spec: { size: 1, template: { kind: 'my_pod', metadata: { name: 'UPPER', labels: { 'a b': 'x' } } } } }, schema).map(formatFieldError);
    assert.deepEqual(errs.slice(0, 2), ['spec.template.apiVersion: Required value: must not be empty', 'spec.template.kind: Invalid value: "my_pod": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')']);
    assert.ok(errs.some((e) => e.startsWith('spec.template.metadata.name: Invalid value: "UPPER"')));
    assert.ok(errs.some((e) => e.startsWith('spec.template.metadata.labels: Invalid value: "a b"')));
    assert.deepEqual(validateEmbeddedResources({ spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } } } }, schema), []);
  });
});

describe('pruning', () => {
  test('drops undeclared fields, keeps preserved ones, maps and the resource root', () => {
    const obj = {
      apiVersion: 'x.io/v1',
      kind: 'T',
      metadata: { name: 'a', labels: { k: 'v' }, bogus: 1 },
      spec: { size: 1, extra: true, labels: { any: 'thing' }, free: { anything: [1], known: { a: 'x', b: 'y' } }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 'a', y: 'b' }, other: 1 } },
      top: 1,
    };
    const removed = pruneResource(obj, schema);
    assert.deepEqual(removed.sort(), ['metadata.bogus', 'spec.extra', 'spec.free.known.b', 'spec.template.other', 'spec.template.spec.y', 'top']);
    assert.deepEqual(obj, {
      apiVersion: 'x.io/v1',
      kind: 'T',
      metadata: { name: 'a', labels: { k: 'v' } },
      spec: { size: 1, labels: { any: 'thing' }, free: { anything: [1], known: { a: 'x' } }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 'a' } } },
    });
  });

  test('null in a non-nullable field is dropped; in a nullable one it stays', () => {
    const obj = { spec: { size: 1, name: null, note: null } };
    pruneResource(obj, schema);
    assert.deepEqual(obj.spec, { size: 1, note: null });
  });

  test('property: nothing outside the declared properties survives', () => {
    const flat: Schema = { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } } } } };
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.oneof(fc.string(), fc.integer())), (extra) => {
        const obj: Record<string, unknown> = { spec: { ...extra } };
        pruneResource(obj, flat);
        for (const k of Object.keys(obj['spec'] as object)) assert.ok(k === 'a' || k === 'b');
      }),
    );
  });
});

describe('defaulting', () => {
  test('absent fields get defaults, top-down; a nested default needs its parent', () => {
    const obj = { spec: { size: 1 } } as Record<string, unknown>;
    assert.equal(defaultResource(obj, schema), true);
    assert.deepEqual(obj['spec'], { size: 1, mode: 'Fast', limits: { memory: '1Gi', cpu: '1' } });
    const withParent = { spec: { size: 1, nested: {} } } as Record<string, unknown>;
    defaultResource(withParent, schema);
    assert.deepEqual((withParent['spec'] as Record<string, unknown>)['nested'], { inner: 7 });
  });
  test('needsDefaults and hasDefaults answer without writing', () => {
    const obj = { spec: { size: 1 } };
    assert.equal(needsDefaults(obj, schema), true);
    assert.deepEqual(obj, { spec: { size: 1 } });
    assert.equal(needsDefaults({ spec: { size: 1, mode: 'Slow', limits: { cpu: '2' } } }, schema), false);
    assert.equal(hasDefaults(schema), true);
    assert.equal(hasDefaults({ type: 'object', properties: { a: { type: 'string' } } }), false);
  });
  test('set values are kept; nothing to do answers false', () => {
    const obj = { spec: { size: 1, mode: 'Slow', limits: { cpu: '2' }, nested: { inner: 1 } } };
    assert.equal(defaultResource(obj, schema), false);
    assert.equal(obj.spec.mode, 'Slow');
  });
});

describe('structural schema rules', () => {
  const base = root('spec', 'versions').index(0).child('schema', 'openAPIV3Schema');
  const cases: [string, unknown, string[]][] = [
    ['the root must be an object', { type: 'array', items: { type: 'string' } }, ['spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "array": must be object at the root']],
    ['fields need a type', { type: 'object', properties: { spec: { properties: {} } } }, ['spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields']],
    ['items need a type', { type: 'object', properties: { l: { type: 'array', items: {} } } }, ['spec.versions[0].schema.openAPIV3Schema.properties[l].items.type: Required value: must not be empty for specified array items']],
    ['unknown type', { type: 'object', properties: { a: { type: 'float' } } }, ['spec.versions[0].schema.openAPIV3Schema.properties[a].type: Unsupported value: "float": supported values: "array", "boolean", "integer", "number", "object", "string"']],
    ['$ref', { type: 'object', properties: { a: { type: 'object', $ref: '#/x' } } }, ['spec.versions[0].schema.openAPIV3Schema.properties[a].$ref: Forbidden: $ref is not supported']],
    [
      'properties with additionalProperties',
      { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'string' } }, additionalProperties: { type: 'string' } } } },
      ['spec.versions[0].schema.openAPIV3Schema.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive'],
    ],
    ['preserve-unknown-fields false', { type: 'object', 'x-kubernetes-preserve-unknown-fields': false }, ['spec.versions[0].schema.openAPIV3Schema.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined']],
    ['int-or-string with a type', { type: 'object', properties: { p: { type: 'string', 'x-kubernetes-int-or-string': true } } }, ['spec.versions[0].schema.openAPIV3Schema.properties[p].type: Invalid value: "string": must be empty if x-kubernetes-int-or-string is true']],
    ['metadata beyond name', { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }, ['spec.versions[0].schema.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified']],
    ['types inside value validations', { type: 'object', properties: { a: { type: 'string', anyOf: [{ type: 'string' }] } } }, ['spec.versions[0].schema.openAPIV3Schema.properties[a].anyOf[0].type: Forbidden: must be empty to be structural']],
    ['array without items', { type: 'object', properties: { a: { type: 'array' } } }, ['spec.versions[0].schema.openAPIV3Schema.properties[a].items: Required value: must be specified']],
    ['map list without keys', { type: 'object', properties: { a: { type: 'array', items: { type: 'object' }, 'x-kubernetes-list-type': 'map' } } }, ['spec.versions[0].schema.openAPIV3Schema.properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map']],
    ['a default of the wrong type', { type: 'object', properties: { n: { type: 'integer', default: 'x' } } }, ['spec.versions[0].schema.openAPIV3Schema.properties[n].default: Invalid value: "string": spec.versions[0].schema.openAPIV3Schema.properties[n].default in body must be of type integer: "string"']],
    ['int-or-string in its allowed anyOf form', { type: 'object', properties: { p: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } }, []],
    ['preserved fields without a type', { type: 'object', properties: { p: { 'x-kubernetes-preserve-unknown-fields': true } } }, []],
  ];
  for (const [name, s, want] of cases) test(name, () => assert.deepEqual(validateStructuralSchema(s, base).map(formatFieldError), want));
});

const crdYaml = readFileSync(new URL('../../../deploy/crds/apps.kruise.io_workloadspreads.yaml', import.meta.url), 'utf8');
const wsCrd = (): KubeObject => parseYaml(crdYaml) as KubeObject;

describe('CRD validation', () => {
  test('the project CRD is valid', () => assert.deepEqual(validateCustomResourceDefinition(wsCrd()).map(formatFieldError), []));

  // `any`: each case edits a different corner of a parsed YAML document; typing every path would drown the table.
  const mutate = (fn: (crd: { spec: Record<string, any> }) => void): string[] => {
    const crd = wsCrd() as unknown as { spec: Record<string, any> };
    fn(crd);
    return validateCustomResourceDefinition(crd as unknown as KubeObject).map(formatFieldError);
  };
  const cases: [string, (crd: { spec: Record<string, any> }) => void, string][] = [
    ['group without a dot', (c) => (c.spec['group'] = 'kruise'), 'spec.group: Invalid value: "kruise": should be a domain with at least one dot'],
    ['bad scope', (c) => (c.spec['scope'] = 'Global'), 'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
    ['upper-case plural', (c) => (c.spec['names'].plural = 'WorkloadSpreads'), 'spec.names.plural: Invalid value: "WorkloadSpreads"'],
    ['kind equals listKind', (c) => (c.spec['names'].listKind = 'WorkloadSpread'), 'spec.names.listKind: Invalid value: "WorkloadSpread": kind and listKind may not be the same'],
    ['two storage versions', (c) => c.spec['versions'].push({ ...c.spec['versions'][0], name: 'v1beta1' }), 'spec.versions: Invalid value: '],
    ['no schema', (c) => delete c.spec['versions'][0].schema, 'spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'],
    ['scale path outside spec', (c) => (c.spec['versions'][0].subresources.scale = { specReplicasPath: '.status.x', statusReplicasPath: '.status.y' }), 'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".status.x": should be a json path under .spec'],
    ['printer column type', (c) => (c.spec['versions'][0].additionalPrinterColumns[0].type = 'text'), 'spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "text"'],
    ['printer column path', (c) => (c.spec['versions'][0].additionalPrinterColumns[0].jsonPath = 'spec.x'), 'spec.versions[0].additionalPrinterColumns[0].jsonPath: Invalid value: "spec.x": must be a simple json path starting with .'],
    ['preserveUnknownFields', (c) => (c.spec['preserveUnknownFields'] = true), 'spec.preserveUnknownFields: Invalid value: true: cannot set to true'],
  ];
  for (const [name, fn, want] of cases) test(name, () => assert.ok(mutate(fn).some((m) => m.startsWith(want)), `${mutate(fn).join('\n')}\nshould include ${want}`));

  test('metadata.name must be plural.group', () => {
    const crd = wsCrd();
    crd.metadata = { name: 'spreads.apps.kruise.io' };
    assert.ok(validateCustomResourceDefinition(crd).map(formatFieldError).includes('metadata.name: Invalid value: "spreads.apps.kruise.io": must be spec.names.plural+"."+spec.group'));
  });

  test('update: scope is immutable; stored versions must stay listed', () => {
    const old = wsCrd();
    old.status = { storedVersions: ['v1alpha1'] };
    // `any`: as above, free edits of a parsed document.
    const next = structuredClone(old) as KubeObject & { spec: Record<string, any> };
    next.spec['scope'] = 'Cluster';
    next.spec['versions'][0].name = 'v1';
    const errs = validateCustomResourceDefinitionUpdate(next, old).map(formatFieldError);
    assert.ok(errs.includes('spec.scope: Invalid value: "Cluster": field is immutable'));
    assert.ok(errs.includes('status.storedVersions[0]: Invalid value: "v1alpha1": must appear in spec.versions'));
  });
});
