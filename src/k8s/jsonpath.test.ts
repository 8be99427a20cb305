import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { findResults, parseJsonPath, printJsonPath, relaxedJsonPath, type EvalOptions } from './jsonpath.ts';

const pod = {
  kind: 'Pod',
  metadata: { name: 'web-1', labels: { app: 'web', tier: 'front' } },
  spec: {
    containers: [
      { name: 'app', image: 'nginx:1.25', ports: [{ containerPort: 80 }, { containerPort: 443 }] },
      { name: 'sidecar', image: 'envoy:1' },
    ],
    replicas: 3,
  },
  status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'PodScheduled', status: 'False' }], ratio: 0.5, ready: true },
  scheduleStrategy: { type: 'Adaptive' },
};

function print(template: string, data: unknown = pod, opts: EvalOptions = {}): string {
  const parsed = parseJsonPath(template);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  const r = printJsonPath(parsed.path, data, opts);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.text;
}

describe('printJsonPath', () => {
  const cases: [string, string][] = [
    ['{.metadata.name}', 'web-1'],
    ['{$.metadata.name}', 'web-1'],
    ['{metadata.name}', 'web-1'],
    ["{.metadata.labels['app']}", 'web'],
    ['{.spec.containers[0].image}', 'nginx:1.25'],
    ['{.spec.containers[-1].name}', 'sidecar'],
    ['{.spec.containers[*].name}', 'app sidecar'],
    ['{.spec.containers[0:1].name}', 'app'],
    ['{.spec.containers[::-1].name}', 'sidecar app'],
    ['{..containerPort}', '80 443'],
    ['{.spec.containers[0].ports[*].containerPort}', '80 443'],
    ['{.status.conditions[?(@.type=="Ready")].status}', 'True'],
    ['{.status.conditions[?(@.status != "True")].type}', 'PodScheduled'],
    ['{.spec.containers[?(@.ports)].name}', 'app'],
    ['{.spec.containers[0].ports[?(@.containerPort > 100)].containerPort}', '443'],
    ['{.scheduleStrategy.type[?(@ == "Adaptive")]}', 'Adaptive'],
    ['{.spec.replicas}', '3'],
    ['{.status.ratio}', '0.5'],
    ['{.status.ready}', 'true'],
    ['{.metadata.labels}', '{"app":"web","tier":"front"}'],
    ["{.spec.containers[0]['name','image']}", 'app nginx:1.25'],
    ['name={.metadata.name} kind={.kind}', 'name=web-1 kind=Pod'],
    ['{range .spec.containers[*]}{.name}:{.image};{end}', 'app:nginx:1.25;sidecar:envoy:1;'],
    ['{"literal"}', 'literal'],
  ];
  for (const [template, want] of cases) test(template, () => assert.equal(print(template), want));

  test('a filter that matches nothing prints nothing', () => {
    assert.equal(print('{.scheduleStrategy.type[?(@ == "Fixed")]}'), '');
  });
});

describe('missing keys', () => {
  test('are errors by default, as upstream reports them', () => {
    const parsed = parseJsonPath('{.status.missing}');
    assert.ok(parsed.ok);
    assert.deepEqual(printJsonPath(parsed.path, pod), { ok: false, error: 'missing is not found' });
  });
  test('give no value with allowMissingKeys (printer columns)', () => {
    assert.equal(print('{.status.missing.deeper}', pod, { allowMissingKeys: true }), '');
    assert.equal(print('{.spec.containers[5].name}', pod, { allowMissingKeys: true }), '');
  });
  test('an index out of range is an error without allowMissingKeys', () => {
    const parsed = parseJsonPath('{.spec.containers[5]}');
    assert.ok(parsed.ok);
    const r = printJsonPath(parsed.path, pod);
    assert.equal(r.ok, false);
  });
});

describe('findResults', () => {
  test('one result list per action, values kept typed', () => {
    const parsed = parseJsonPath('{.spec.replicas}{.status.ready}');
    assert.ok(parsed.ok);
    assert.deepEqual(findResults(parsed.path, pod), { ok: true, results: [[3], [true]] });
  });
});

describe('parse errors', () => {
  for (const bad of ['{.a', '{.a[}', '{.a[?(@.x == "y"]}', '{range .a}{.b}', '{end}', '{.a[1:2:0]}']) {
    test(bad, () => assert.equal(parseJsonPath(bad).ok, false));
  }
});

describe('relaxedJsonPath', () => {
  const cases: [string, string][] = [
    ['.a.b', '{.a.b}'],
    ['a.b', '{.a.b}'],
    ['{.a.b}', '{.a.b}'],
    ['{a.b}', '{.a.b}'],
  ];
  for (const [input, want] of cases) test(input, () => assert.deepEqual(relaxedJsonPath(input), { ok: true, template: want }));
});

test('property: a field path reads back what was put at that path', () => {
  const key = fc.stringMatching(/^[a-z][a-zA-Z0-9_-]{0,8}$/);
  fc.assert(
    fc.property(fc.array(key, { minLength: 1, maxLength: 5 }), fc.oneof(fc.string(), fc.integer(), fc.boolean()), (keys, value) => {
      let data: unknown = value;
      for (const k of [...keys].reverse()) data = { [k]: data };
      const parsed = parseJsonPath(`{.${keys.join('.')}}`);
      assert.ok(parsed.ok);
      const r = findResults(parsed.path, data);
      assert.deepEqual(r, { ok: true, results: [[value]] });
    }),
  );
});
