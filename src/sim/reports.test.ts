/**
 * The three outputs of a run, from one hand-made result: the JSON Lines keys
 * of issue 6 in their order, the table blocks and summary, and the HTML
 * report (self-contained, escaped, a chart line per subset).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { renderHtmlReport } from './html-report.ts';
import { jsonLine, stepJson } from './output-json.ts';
import { renderStep, renderSummary, renderTableReport } from './report-table.ts';
import type { ScenarioRunResult, Snapshot, StepResult } from './runner.ts';
import { escapeXml, renderTimelineChart } from './timeline-chart.ts';

const HOSTILE = '<script>alert("x")</script>&';

function snapshot(t: number, pods: [string, string | null, number | null][], extra: Partial<Snapshot> = {}): Snapshot {
  return {
    time: `2026-01-01T00:00:${String(t).padStart(2, '0')}Z`,
    elapsedMs: t * 1000,
    pods: pods.map(([name, subset, cost]) => ({ name, subset, node: subset === null ? null : `node-${subset}`, phase: 'Running', ready: true, deletionCost: cost, namespace: 'default', workloadSpread: 'default/ws' })),
    workloadSpreads: [
      {
        namespace: 'default',
        name: 'ws',
        status: { subsetStatuses: [{ name: 'a', replicas: 2, missingReplicas: 0 }] },
        target: 'Deployment/web',
        replicas: pods.length,
        subsets: [
          { name: 'a', maxReplicas: 2, limit: 2 },
          { name: HOSTILE, maxReplicas: null, limit: null },
        ],
      },
    ],
    events: [],
    budgets: [],
    ...extra,
  };
}

function step(n: number, action: StepResult['action'], snap: Snapshot, more: Partial<StepResult> = {}): StepResult {
  return { step: n, action, summary: action === 'scale' ? 'scale Deployment web to 3' : action, expectations: [], ...snap, ...more };
}

const SETUP = snapshot(2, [['web-1', 'a', 200]]);
const STEPS: StepResult[] = [
  step(0, 'scale', snapshot(5, [['web-1', 'a', 200], ['web-2', 'a', 200], ['web-3', HOSTILE, 100]], { events: [{ reason: 'NoSubsetAvailable', type: 'Warning', message: HOSTILE, namespace: 'default', object: 'WorkloadSpread/ws', reportingController: 'workloadspread-webhook', count: 2 }] }), {
    settled: { quiescent: true, elapsedMs: 3000 },
    notes: ['a note'],
  }),
  step(1, 'expect', snapshot(5, [['web-1', 'a', 200], ['web-2', 'a', 200], ['web-3', HOSTILE, 100]]), {
    description: HOSTILE,
    expectations: [
      { ok: true, path: 'subsets.a', expected: 2, actual: 2 },
      { ok: false, path: `subsets.${HOSTILE}`, expected: 2, actual: 1, message: 'a hint' },
    ],
  }),
];

const RESULT: ScenarioRunResult = { name: HOSTILE, description: 'what it shows', mode: 'embedded', ok: false, passed: 1, failed: 1, setup: SETUP, steps: STEPS };

describe('--output json: JSON Lines with the keys of issue 6, in order', () => {
  test('one line per step; the documented keys come first, in the documented order', () => {
    const lines = STEPS.map(jsonLine);
    for (const line of lines) assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'));
    const first = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(first).slice(0, 7), ['step', 'action', 'time', 'pods', 'workloadSpreads', 'events', 'expectations']);
    assert.equal(first['step'], 0);
    assert.equal(first['action'], 'scale');
    assert.equal(first['time'], '2026-01-01T00:00:05Z');
    const pods = first['pods'] as Record<string, unknown>[];
    assert.deepEqual(Object.keys(pods[0] ?? {}).slice(0, 6), ['name', 'subset', 'node', 'phase', 'ready', 'deletionCost']);
    assert.deepEqual(pods[0], { name: 'web-1', subset: 'a', node: 'node-a', phase: 'Running', ready: true, deletionCost: 200, namespace: 'default', workloadSpread: 'default/ws' });
    const ws = (first['workloadSpreads'] as Record<string, unknown>[])[0] ?? {};
    assert.deepEqual(Object.keys(ws).slice(0, 3), ['namespace', 'name', 'status']);
    assert.deepEqual(ws['status'], { subsetStatuses: [{ name: 'a', replicas: 2, missingReplicas: 0 }] });
    const event = (first['events'] as Record<string, unknown>[])[0] ?? {};
    assert.deepEqual(Object.keys(event).slice(0, 3), ['reason', 'type', 'message']);
    const second = JSON.parse(lines[1] ?? '') as Record<string, unknown>;
    const exp = (second['expectations'] as Record<string, unknown>[])[0] ?? {};
    assert.deepEqual(Object.keys(exp).slice(0, 4), ['ok', 'path', 'expected', 'actual']);
    assert.deepEqual(exp, { ok: true, path: 'subsets.a', expected: 2, actual: 2 });
  });

  test('null and missing values are explicit nulls, never dropped', () => {
    const j = stepJson(step(0, 'expect', snapshot(1, [['p', null, null]]), { expectations: [{ ok: false, path: 'status.x.replicas', expected: 1, actual: undefined }] }));
    assert.deepEqual((j['pods'] as unknown[])[0], { name: 'p', subset: null, node: null, phase: 'Running', ready: true, deletionCost: null, namespace: 'default', workloadSpread: 'default/ws' });
    assert.deepEqual((j['expectations'] as unknown[])[0], { ok: false, path: 'status.x.replicas', expected: 1, actual: null });
  });
});

describe('--output table', () => {
  test('a step block: what it did, the time, per subset pods / ready / limit / costs, notable events, notes', () => {
    const text = renderStep(STEPS[0] as StepResult, { color: false });
    assert.match(text, /^step 0 {2}scale Deployment web to 3 {2}2026-01-01T00:00:05Z \(\+5s\)\n/);
    assert.match(text, /note: a note/);
    assert.match(text, /default\/ws → Deployment\/web \(3 replicas\)/);
    assert.match(text, /SUBSET +PODS +READY +LIMIT +DELETION COSTS/);
    assert.match(text, /\n {4}a +2 +2 +2 +200\n/);
    assert.match(text, /unlimited +100/);
    assert.match(text, /event Warning NoSubsetAvailable WorkloadSpread\/ws: .* \(x2\)/);
  });

  test('control characters from the scenario or the cluster are shown escaped, never written raw', () => {
    const bad = 'z\u001b]0;pwned\u0007\u009b';
    const hostile = step(1, 'scale', snapshot(6, [['web-1', bad, 100]], { events: [{ reason: 'Odd', type: 'Warning', message: `m${bad}`, namespace: 'default', object: `WorkloadSpread/ws${bad}`, reportingController: 'x', count: 1 }] }), { notes: [`note${bad}`], error: `error${bad}` });
    hostile.description = `described${bad}`;
    const snap = hostile.workloadSpreads[0];
    if (snap !== undefined) snap.subsets = [{ name: bad, maxReplicas: null, limit: null }];
    for (const color of [false, true]) {
      // eslint-disable-next-line no-control-regex
      const text = renderStep(hostile, { color }).replace(/\u001b\[[0-9;]*m/g, '');
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      for (const what of ['', 'm', 'ws', 'note', 'error', 'described']) assert.ok(text.includes(`${what}z\\x1b]0;pwned\\x07\\u009b`), what);
    }
  });

  test('a settle that did not end quiescent: the timeout, or the busy timer that ended it', () => {
    const at = (settled: NonNullable<StepResult['settled']>) => renderStep(step(0, 'scale', SETUP, { settled }), { color: false });
    assert.doesNotMatch(at({ quiescent: true, elapsedMs: 1000 }), /warning/);
    assert.match(at({ quiescent: false, elapsedMs: 1_800_000 }), /warning: the cluster did not settle within the timeout \(30m\)/);
    assert.match(at({ quiescent: false, elapsedMs: 595_994, spinning: 'deployment-controller requeue' }), /warning: the settle stopped after 9m56s: only "deployment-controller requeue" kept firing/);
    // What it still waited for, named; nothing left to run (embedded) said as such; notes of workloads that do not move on.
    const waiting = ['Deployment default/web: 3 of 6 pods available (Ready for minReadySeconds: 120)', 'WorkloadSpread default/ws: subset a: status replicas 1 to become 2, the active pods marked in it'];
    assert.match(at({ quiescent: false, elapsedMs: 600_000, waitingFor: waiting }), /warning: the cluster did not settle within the timeout \(10m\); still waiting for: Deployment default\/web: 3 of 6 pods available \(Ready for minReadySeconds: 120\); WorkloadSpread default\/ws: subset a: status replicas 1 to become 2/);
    assert.match(at({ quiescent: false, elapsedMs: 60_000, idle: true, waitingFor: waiting }), /warning: nothing was left to run after 1m, but the cluster did not settle; still waiting for: Deployment/);
    assert.match(at({ quiescent: true, elapsedMs: 1000, notes: ['Deployment default/web: paused: its rollout does not move on'] }), /\n {2}note: Deployment default\/web: paused: its rollout does not move on\n/);
    const html = renderHtmlReport({ ...RESULT, steps: [step(0, 'scale', SETUP, { settled: { quiescent: false, elapsedMs: 1000, spinning: HOSTILE } })] });
    assert.match(html, /class="bad">the settle stopped after 1s: only &quot;&lt;script&gt;/);
  });

  test('expectations: ✓ with the value, ✗ with expected vs actual and the hint', () => {
    const text = renderStep(STEPS[1] as StepResult, { color: false });
    assert.match(text, /✓ subsets\.a = 2/);
    assert.match(text, /✗ subsets\.<script>.*: expected 2, got 1 \(a hint\)/);
    assert.doesNotMatch(text, /SUBSET/, 'an expect step does not repeat the table');
  });

  test('summary: PASS, FAIL naming each failed expectation by step, ERROR, INTERRUPTED', () => {
    assert.match(renderSummary(RESULT, { color: false }), /^FAIL: 1 of 2 expectations failed\n {2}steps\[1\] subsets\..*: expected 2, got 1/);
    assert.match(renderSummary({ ...RESULT, failed: 0, passed: 3, ok: true }, { color: false }), /^PASS: 3 expectations held over 2 steps/);
    assert.match(renderSummary({ ...RESULT, error: 'the manager is missing' }, { color: false }), /^ERROR: the manager is missing/);
    assert.match(renderSummary({ ...RESULT, interrupted: true }, { color: false }), /^INTERRUPTED/);
  });

  test('colour only when asked', () => {
    assert.doesNotMatch(renderTableReport(RESULT, { color: false }), /\u001b\[/);
    assert.match(renderTableReport(RESULT, { color: true }), /\u001b\[31m✗/);
  });
});

describe('--output html: one self-contained file', () => {
  const html = renderHtmlReport(RESULT);

  test('no script, no stylesheet or image links, no network reference of any kind', () => {
    assert.match(html, /^<!doctype html>/);
    assert.doesNotMatch(html, /<script/i);
    assert.doesNotMatch(html, /<link|<img|@import|url\(/i);
    assert.doesNotMatch(html, /https?:\/\//i);
    assert.doesNotMatch(html, /\son[a-z]+=/i, 'no event-handler attributes');
  });

  test('everything user-provided is escaped (scenario name, subset names, messages, descriptions)', () => {
    assert.ok(!html.includes(HOSTILE));
    assert.ok(html.includes(escapeXml(HOSTILE)));
  });

  test('the timeline chart: inline SVG, a line per subset with a point per step (setup included), the limit dashed, tooltips', () => {
    const svg = /<svg class="timeline"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? '';
    assert.ok(svg !== '');
    assert.equal((svg.match(/<polyline /g) ?? []).length, 2);
    assert.equal((svg.match(/<circle /g) ?? []).length, 6);
    assert.match(svg, /stroke-dasharray/);
    assert.match(svg, /<title>step 0: scale Deployment web to 3 \(2026-01-01T00:00:05Z\)\na: 2 pods \(limit 2\)<\/title>/);
  });

  test('the steps with their expectations, and the deletion costs at the end', () => {
    assert.match(html, /<tr id="step-1">/);
    assert.match(html, /✓ subsets\.a = 2/);
    assert.match(html, /class="bad">✗ subsets\./);
    assert.match(html, /<h2>Deletion costs at the end<\/h2>/);
    assert.match(html, /<td>a<\/td><td class="num">2<\/td><td class="num">2<\/td><td>200<\/td><td>200 ×2<\/td>/);
    assert.match(html, /FAIL: 1 of 2 expectations failed/);
  });

  test('a run that never started still renders', () => {
    const failed = renderHtmlReport({ name: 'x', mode: 'kubeconfig', ok: false, passed: 0, failed: 0, steps: [], error: 'no manager' });
    assert.match(failed, /ERROR: no manager/);
    assert.match(failed, /ended before anything was observed/);
  });
});

describe('renderTimelineChart', () => {
  test('any labels and values: well-formed SVG, escaped, points only where there are values', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ label: fc.string(), values: fc.array(fc.option(fc.nat(500), { nil: null }), { minLength: 3, maxLength: 3 }) }), { maxLength: 5 }), (series) => {
        const svg = renderTimelineChart({ title: '<t>', xLabels: ['setup', '0', '1'], xTitles: ['a', 'b', 'c'], series });
        assert.ok(svg.startsWith('<svg') && svg.endsWith('</svg>'));
        assert.equal((svg.match(/<circle /g) ?? []).length, series.flatMap((s) => s.values).filter((v) => v !== null).length);
        assert.doesNotMatch(svg.replace(/<\/?(svg|title|line|text|path|polyline|circle|rect)\b[^<>]*>/g, ''), /[<>]/);
        assert.doesNotMatch(svg, /NaN|Infinity/);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the rebalancer in the reports (D18)', () => {
  const rebalancing = (): Snapshot => {
    const snap = snapshot(7, [['web-1', 'a', 200], ['web-4', null, null]]);
    const ws = snap.workloadSpreads[0];
    assert.ok(ws !== undefined);
    ws.status = { ...ws.status, rebalance: { pending: 1, moves: [{ pod: 'web-3', from: 'b', to: HOSTILE, evictedAt: '2026-01-01T00:00:06Z' }], reason: 'Moving', message: 'waiting', lastTransitionTime: '2026-01-01T00:00:06Z' } };
    return snap;
  };

  test('table: a line under the subsets; nothing without status.rebalance', () => {
    const out = renderStep(step(2, 'uncordon', rebalancing()), { color: false });
    assert.match(out, /\n {4}rebalance: Moving · 1 pending · in flight web-3: b → <script>alert\("x"\)<\/script>&\n/);
    assert.doesNotMatch(renderStep(STEPS[0] as StepResult, { color: false }), /rebalance:/);
  });

  test('blocked: the reason and its message', () => {
    const snap = rebalancing();
    const ws = snap.workloadSpreads[0];
    assert.ok(ws !== undefined && 'subsetStatuses' in ws.status);
    ws.status = { ...ws.status, rebalance: { pending: 2, reason: 'NoRoom', message: 'subset a wants more pods but none of its nodes can host one' } };
    assert.match(renderStep(step(2, 'settle', snap), { color: false }), /rebalance: NoRoom · 2 pending · subset a wants more pods but none of its nodes can host one\n/);
  });

  test('HTML: the same line in the step\'s pods cell, escaped', () => {
    const html = renderHtmlReport({ ...RESULT, steps: [step(0, 'uncordon', rebalancing())] });
    assert.match(html, /<span class="meta">rebalance: Moving · 1 pending · in flight web-3: b → &lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;&amp;<\/span>/);
    assert.doesNotMatch(html, /<script>/);
  });
});
