import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parse } from 'yaml';
import { coalesceValues, renderChart, renderedObjects, type Chart, type RenderOptions } from './helm-template.ts';
import { formatGoFloat, goQuote, toJson, toYaml } from './go-template-funcs.ts';

function chartOf(templates: Record<string, string>, values: Record<string, unknown> = {}, schema?: object): Chart {
  return {
    dir: '<memory>',
    metadata: { apiVersion: 'v2', name: 'demo', version: '1.2.3', appVersion: '4.5.6' },
    values,
    schema,
    templates: Object.entries(templates).map(([path, content]) => ({ path, content })),
    crds: [],
  };
}

/** Renders one template with values; returns the output or the error text. */
function render(src: string, values: Record<string, unknown> = {}, options: RenderOptions = {}, partials: Record<string, string> = {}): { ok: true; out: string } | { ok: false; error: string } {
  const result = renderChart(chartOf({ 'templates/t.yaml': src, ...partials }, values), options);
  if (!result.ok) return result;
  return { ok: true, out: result.manifests.get('templates/t.yaml') ?? '' };
}

function out(src: string, values: Record<string, unknown> = {}, options: RenderOptions = {}, partials: Record<string, string> = {}): string {
  const r = render(src, values, options, partials);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.out;
}

function err(src: string, values: Record<string, unknown> = {}): string {
  const r = render(src, values);
  assert.ok(!r.ok, `expected an error, got ${r.ok ? JSON.stringify(r.out) : ''}`);
  return r.error;
}

describe('Go template syntax', () => {
  const cases: [string, string, string, Record<string, unknown>?][] = [
    ['text passes through', 'a: b\n', 'a: b\n'],
    ['{{- trims white space before, -}} after', 'a  \n {{- "x" -}} \n  b', 'axb'],
    ['{{-3}} is the number -3, not a trim marker', 'a {{-3}}', 'a -3'],
    ['comments print nothing', 'x{{/* note */}}y', 'xy'],
    ['trimmed comments trim', 'x  {{- /* note */ -}}  y', 'xy'],
    ['a pipeline passes its value as the last argument', '{{ "a" | printf "%s-%s" "b" }}', 'b-a'],
    ['field chains', '{{ .Values.a.b }}', 'c', { a: { b: 'c' } }],
    ['a missing map key prints nothing', '[{{ .Values.nope }}]', '[]'],
    ['a field of a parenthesized pipeline', '{{ (dict "a" "b").a }}', 'b'],
    ['variables: declare, assign in a block, read after', '{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}', '2'],
    ['$ is the root inside with', '{{ with .Values.a }}{{ $.Values.top }}{{ . }}{{ end }}', 'T1', { a: 1, top: 'T' }],
    ['if / else if / else', '{{ if .Values.a }}A{{ else if .Values.b }}B{{ else }}C{{ end }}', 'B', { a: false, b: 'yes' }],
    ['with binds dot; else runs on empty', '{{ with .Values.m }}{{ .k }}{{ else }}none{{ end }}|{{ with .Values.e }}x{{ else }}none{{ end }}', 'v|none', { m: { k: 'v' }, e: {} }],
    ['range over a list with index and element', '{{ range $i, $v := .Values.l }}{{ $i }}={{ $v }};{{ end }}', '0=a;1=b;', { l: ['a', 'b'] }],
    ['range over a map goes in key order', '{{ range $k, $v := .Values.m }}{{ $k }}{{ $v }},{{ end }}', 'a1,b2,', { m: { b: 2, a: 1 } }],
    ['range else on an empty list', '{{ range .Values.l }}x{{ else }}empty{{ end }}', 'empty', { l: [] }],
    ['break and continue', '{{ range .Values.l }}{{ if eq . "skip" }}{{ continue }}{{ end }}{{ if eq . "stop" }}{{ break }}{{ end }}{{ . }}{{ end }}', 'ac', { l: ['a', 'skip', 'c', 'stop', 'e'] }],
    ['range over an int', '{{ range $i := 3 }}{{ $i }}{{ end }}', '012'],
    ['define + include with nindent', 'x:{{ include "lbl" . | nindent 2 }}', 'x:\n  a: 1\n  b: demo', {}],
    ['template action with a pipeline as dot', '{{ template "echo" "hi" }}', '<hi>'],
    ['and/or return the deciding operand', '{{ or .Values.e "fallback" }}|{{ and "x" "" "y" }}|{{ and "x" "y" }}', 'fallback||y', { e: '' }],
    ['or short-circuits', '{{ or true (fail "not evaluated") }}', 'true'],
    ['not', '{{ not .Values.e }}{{ not "x" }}', 'truefalse', { e: '' }],
    ['default replaces empty values (nil, "", 0, false, [])', '{{ .Values.n | default "d" }}{{ .Values.z | default "d" }}{{ .Values.f | default "d" }}{{ .Values.s | default "d" }}', 'dddkeep', { z: 0, f: false, s: 'keep' }],
    ['eq with several operands', '{{ eq "b" "a" "b" }}{{ ne "a" "b" }}', 'truetrue'],
    ['eq of nil and a string is false (no error)', '{{ eq .Values.nope "x" }}', 'false'],
    ['a values number is float64: equal to 1.0, printed without decimals', '{{ eq .Values.n 1.0 }} {{ .Values.n }}', 'true 1', { n: 1 }],
    ['int converts a float64', '{{ eq (int .Values.n) 3 }}', 'true', { n: 3 }],
    ['len is an int', '{{ eq (len .Values.l) 2 }}{{ len "héllo" }}', 'true6', { l: [1, 2] }],
    ['lt/gt on ints and strings', '{{ lt 1 2 }}{{ gt "b" "a" }}{{ le 2 2 }}{{ ge 1 2 }}', 'truetruetruefalse'],
    ['index into maps and lists', '{{ index .Values.m "k" }}{{ index .Values.l 1 }}{{ index .Values.m "nope" }}', 'vb', { m: { k: 'v' }, l: ['a', 'b'] }],
    ['printf verbs and Go error forms', '{{ printf "%s %d %v %q %t %%" "s" 3 1.5 "q" true }}|{{ printf "%d" .Values.n }}|{{ printf "%s %s" "a" }}|{{ printf "%s" "a" "b" }}', 's 3 1.5 "q" true %|%!d(float64=3)|a %!s(MISSING)|a%!(EXTRA string=b)', { n: 3 }],
    ['print adds spaces only between non-strings', '{{ print 1 2 "a" "b" 3 }}', '1 2ab3'],
    ['quote / squote', '{{ quote "a\\"b" 3 .Values.nope }}|{{ squote "x" }}', '"a\\"b" "3"|\'x\''],
    ['indent pads every line, nindent starts a new line', '{{ "a\\nb" | indent 2 }}|{{ "a" | nindent 4 }}', '  a\n  b|\n    a'],
    ['trunc, trimSuffix, trimPrefix, trim', '{{ "abcdef" | trunc 3 }} {{ "abcdef" | trunc -2 }} {{ "name-" | trimSuffix "-" }} {{ "v1.2" | trimPrefix "v" }} [{{ "  x " | trim }}]', 'abc ef name 1.2 [x]'],
    ['b64enc', '{{ "hello" | b64enc }}', 'aGVsbG8='],
    ['strings helpers', '{{ upper "a" }}{{ lower "B" }}{{ replace "-" "_" "a-b" }}{{ contains "b" "abc" }}{{ hasPrefix "a" "abc" }}{{ join "," .Values.l }}', 'Ab' + 'a_btruetruex,y', { l: ['x', 'y'] }],
    ['ternary, hasKey, kindIs, empty', '{{ ternary "y" "n" true }}{{ hasKey .Values.m "k" }}{{ kindIs "map" .Values.m }}{{ kindIs "slice" .Values.l }}{{ empty .Values.l }}', 'ytruetruetruetrue', { m: { k: 1 }, l: [] }],
    ['toYaml sorts keys, quotes YAML 1.1 booleans (y, yes) and trims the final newline', '{{ toYaml .Values.m }}', 'a: 1\nb:\n- x\n- "y"\nc: "yes"', { m: { c: 'yes', a: 1, b: ['x', 'y'] } }],
    ['toJson sorts keys and escapes HTML characters', '{{ toJson .Values.m }}', '{"a":"\\u003cb\\u003e \\u0026","b":[1,2.5]}', { m: { b: [1, 2.5], a: '<b> &' } }],
    ['maps and lists print as Go prints them', '{{ .Values.m }} {{ .Values.l }}', 'map[a:1 b:x] [1 true]', { m: { b: 'x', a: 1 }, l: [1, true] }],
    ['.Release, .Chart, .Capabilities, .Template', '{{ .Release.Name }}/{{ .Release.Namespace }}/{{ .Release.Service }} {{ .Chart.Name }}-{{ .Chart.AppVersion }} {{ .Capabilities.KubeVersion.Minor }} {{ .Capabilities.APIVersions.Has "policy/v1" }}{{ .Capabilities.APIVersions.Has "cert-manager.io/v1" }} {{ .Template.Name }}', 'rel/ns/Helm demo-4.5.6 31 truefalse demo/templates/t.yaml'],
  ];
  const partials = { 'templates/_helpers.tpl': '{{- define "lbl" -}}\na: 1\nb: {{ .Chart.Name }}\n{{- end }}\n{{ define "echo" }}<{{ . }}>{{ end }}' };
  for (const [name, src, want, values] of cases) {
    test(name, () => {
      assert.equal(out(src, values ?? {}, { release: { name: 'rel', namespace: 'ns' } }, partials), want);
    });
  }
});

describe('Go template errors (loud, like Go and Helm)', () => {
  const cases: [string, string, RegExp, Record<string, unknown>?][] = [
    ['a field of a missing value', '{{ .Values.nope.deeper }}', /t\.yaml:1: .*nil pointer evaluating interface \{\}\.deeper/],
    ['an unknown struct field', '{{ .Release.Nope }}', /can't evaluate field Nope/],
    ['a field of a string', '{{ .Values.s.x }}', /can't evaluate field x in type string/, { s: 'a' }],
    ['an unknown function (at parse time)', '{{ nope 1 }}', /function "nope" not defined/],
    ['Files are not supported', '{{ .Files.Get "x" }}', /can't evaluate field Files/],
    ['comparing a float64 with an int', '{{ eq .Values.n 1 }}', /incompatible types for comparison/, { n: 1 }],
    ['lt on nil', '{{ lt .Values.nope 1 }}', /invalid type for comparison/],
    ['an int parameter given a float64', '{{ "a" | indent .Values.n }}', /wrong type for value; expected int; got float64/, { n: 2 }],
    ['a string parameter given a number', '{{ 3 | trimSuffix "x" }}', /expected string; got int/],
    ['wrong number of arguments', '{{ trunc 3 }}', /wrong number of args for trunc: want 2 got 1/],
    ['required', '{{ required "image.tag is required" .Values.tag }}', /image\.tag is required/],
    ['fail', '{{ fail "stop here" }}', /stop here/],
    ['an unclosed if', '{{ if true }}x', /unclosed \{\{if\}\}/],
    ['an unexpected end', '{{ end }}', /unexpected \{\{end\}\}/],
    ['a variable used outside its block', '{{ if true }}{{ $y := 1 }}{{ end }}{{ $y }}', /undefined variable: \$y/],
    ['break outside range', '{{ break }}', /outside \{\{range\}\}/],
    ['an unknown template', '{{ include "nope" . }}', /no template "nope"/],
    ['arguments to a non-function', '{{ .Values.a "x" }}', /is not a method but has arguments/, { a: {} }],
    ['block is not supported', '{{ block "x" . }}{{ end }}', /not supported/],
    ['ranging over a string', '{{ range "abc" }}{{ end }}', /range can't iterate over abc/],
    ['index out of range', '{{ index .Values.l 5 }}', /index out of range: 5/, { l: [] }],
    ['an unterminated string', '{{ "abc }}', /unterminated quoted string/],
    ['a declaration inside parentheses', '{{ ($x := 1) }}', /unexpected declare/],
    ['a field name with a dash (use index)', '{{ .Values.foo-bar }}', /bad character|bad number/],
    ['unbounded include recursion', '{{ define "loop" }}{{ include "loop" . }}{{ end }}{{ include "loop" . }}', /nested reference/],
  ];
  for (const [name, src, pattern, values] of cases) {
    test(name, () => {
      assert.match(err(src, values ?? {}), pattern);
    });
  }
});

describe('Go value formatting', () => {
  test('float64 prints as strconv.FormatFloat(f, g, -1): exponent from 1e+06 and below 1e-04', () => {
    const table: [number, string][] = [[1, '1'], [123456, '123456'], [1000000, '1e+06'], [1234567, '1.234567e+06'], [0.5, '0.5'], [0.0001, '0.0001'], [0.00001, '1e-05'], [-2.5, '-2.5'], [1e21, '1e+21'], [-0, '-0']];
    for (const [v, want] of table) assert.equal(formatGoFloat(v), want, String(v));
    assert.equal(out('{{ .Values.big }}', { big: 1000000 }), '1e+06');
  });

  test('goQuote escapes as strconv.Quote', () => {
    assert.equal(goQuote('a"b\\c\n\t\x01\x7fé'), '"a\\"b\\\\c\\n\\t\\x01\\x7fé"');
    assert.equal(goQuote('\u2028'), '"\\u2028"');
  });

  test("toYaml quotes YAML 1.1's merge key '<<' as Go's encoder does (read back, it is a key, not a merge)", () => {
    assert.equal(toYaml({ '<<': { a: 1 }, b: '<<' }), "'<<':\n  a: 1\nb: '<<'");
    assert.deepEqual(parse(toYaml({ x: { '<<': {} } }), { version: '1.1' }), { x: { '<<': {} } });
  });

  test('property: toYaml output reads back (YAML 1.1, as kubectl and Helm read it) to the same value', () => {
    const key = fc.string({ minLength: 1, maxLength: 8 });
    const scalar = fc.oneof(fc.string(), fc.constantFrom('yes', 'on', 'off', 'no', 'y', 'n', '0755', '1e3', '~', 'null', 'true', '', ' x', '- a', 'a: b', '#c', '3.0', '0x1F', '1_000'), fc.integer(), fc.boolean(), fc.constant(null));
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(key, tie('node'), { maxKeys: 3, noNullPrototype: true })),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 4, noNullPrototype: true }), (v) => {
        assert.deepEqual(parse(toYaml(v), { version: '1.1' }) ?? {}, v);
      }),
      { numRuns: 300 },
    );
  });

  test('property: toJson output parses back to the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        assert.deepEqual(JSON.parse(toJson(v)), JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: 300 },
    );
  });

  test('property: indent n pads every line with n spaces', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 8 }), fc.array(fc.string({ unit: fc.constantFrom('a', 'b', ' ') }), { minLength: 1, maxLength: 5 }), (n, lines) => {
        const rendered = out(`{{ indent ${n} .Values.s }}`, { s: lines.join('\n') });
        for (const line of rendered.split('\n')) assert.ok(line.startsWith(' '.repeat(n)));
        assert.equal(rendered.split('\n').length, lines.length);
      }),
      { numRuns: 50 },
    );
  });
});

describe('Helm chart mechanics', () => {
  test('values: maps merge per key, other values are replaced, a null removes the default', () => {
    const merged = coalesceValues({ a: { x: 1, y: 2 }, b: [1, 2], c: 'keep', d: 'drop' }, { a: { y: 3 }, b: [9], d: null });
    assert.deepEqual(merged, { a: { x: 1, y: 3 }, b: [9], c: 'keep' });
  });

  test('the schema is checked against the merged values', () => {
    const schema = { type: 'object', properties: { replicas: { type: 'integer', minimum: 1 } } };
    const chart = chartOf({ 'templates/t.yaml': 'r: {{ .Values.replicas }}' }, { replicas: 2 }, schema);
    const good = renderChart(chart);
    assert.ok(good.ok);
    const bad = renderChart(chart, { values: { replicas: 0 } });
    assert.ok(!bad.ok);
    assert.match(bad.error, /values don't meet the specifications[\s\S]*replicas: must be >= 1/);
  });

  test('partials render nothing, NOTES.txt is apart, documents are split and parsed', () => {
    const chart = chartOf({
      'templates/_h.tpl': '{{ define "n" }}cm{{ end }}junk that is never output',
      'templates/a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ include "n" . }}}\n---\n# only a comment\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n',
      'templates/NOTES.txt': 'Installed {{ .Release.Name }}.',
    });
    const r = renderChart(chart, { release: { name: 'r1' } });
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.deepEqual([...r.manifests.keys()], ['templates/a.yaml']);
    assert.equal(r.notes, 'Installed r1.');
    const objects = renderedObjects(r.manifests);
    assert.ok(objects.ok);
    assert.deepEqual(objects.objects.map((o) => `${o.object.kind}/${o.object.metadata?.name ?? ''}`), ['ConfigMap/cm', 'Secret/s']);
  });

  test('a template error names the file and the line', () => {
    const e = err('a: 1\nb: {{ .Values.x.y }}\n');
    assert.match(e, /^template: demo\/templates\/t\.yaml:2: /);
  });
});
