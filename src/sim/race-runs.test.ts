/**
 * `compareRaceRuns` and the race reports, on hand-made runs: an expectation
 * whose value differs between seeds is reported with every value and its
 * seeds, one that failed the same way under every seed separately, a run
 * that ended early leaves its later steps "not reached", a step refused
 * under some seeds only shows its `error` check, values that differ while
 * passing are no race; the verdict, the table, the JSON and the HTML (the
 * same input, the same bytes).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ExpectationResult } from './evaluate.ts';
import { renderRaceHtmlReport } from './race-html.ts';
import { raceReportJson, raceSummaryLine, renderRaceReport, renderRaceRun, showSeeds } from './race-report.ts';
import { compareRaceRuns } from './race-runs.ts';
import type { ScenarioRunResult, StepResult } from './runner.ts';

const pass = (path: string, value: unknown): ExpectationResult => ({ ok: true, path, expected: value, actual: value });
const fail = (path: string, expected: unknown, actual: unknown, message?: string): ExpectationResult => ({ ok: false, path, expected, actual, ...(message === undefined ? {} : { message }) });

function step(index: number, expectations: ExpectationResult[], extra: Partial<StepResult> = {}): StepResult {
  return { step: index, action: 'expect', summary: 'expect', time: '2026-01-01T00:00:00Z', elapsedMs: index * 1000, pods: [], workloadSpreads: [], events: [], budgets: [], expectations, ...extra };
}

function run(seed: number, steps: StepResult[], extra: Partial<ScenarioRunResult> = {}): ScenarioRunResult {
  const all = steps.flatMap((s) => s.expectations);
  const failed = all.filter((e) => !e.ok).length;
  return { name: 'demo', mode: 'embedded', raceSeed: seed, ok: failed === 0 && extra.error === undefined, passed: all.length - failed, failed, steps, ...extra };
}

describe('compareRaceRuns', () => {
  test('the same outcome under every seed: nothing varies, the verdict passes', () => {
    const runs = [1, 2, 3].map((seed) => run(seed, [step(0, [pass('subsets.a', 2), pass('subsets.b', 4)])]));
    const report = compareRaceRuns('demo', runs);
    assert.deepEqual([report.ok, report.expectations, report.varying, report.failing], [true, 2, [], []]);
    assert.equal(raceSummaryLine(report), 'RACES PASS: every one of 2 expectations held under 3 seeds (1-3); no outcome depends on timing');
  });

  test('a value that depends on the seed: each value with its seeds, most seeds first', () => {
    const runs = [
      run(1, [step(0, [pass('subsets.a', 2)]), step(1, [pass('costs.a', [100])])]),
      run(2, [step(0, [fail('subsets.a', 2, 3)]), step(1, [pass('costs.a', [100])])]),
      run(3, [step(0, [pass('subsets.a', 2)]), step(1, [pass('costs.a', [100])])]),
      run(4, [step(0, [fail('subsets.a', 2, 1, 'hint')]), step(1, [pass('costs.a', [100])])]),
    ];
    const report = compareRaceRuns('demo', runs);
    assert.equal(report.ok, false);
    assert.equal(report.expectations, 2);
    assert.deepEqual(report.varying, [
      {
        step: 0,
        path: 'subsets.a',
        expected: 2,
        passed: [1, 3],
        failed: [2, 4],
        notRun: [],
        outcomes: [
          { ok: true, actual: 2, seeds: [1, 3] },
          { ok: false, actual: 3, seeds: [2] },
          { ok: false, actual: 1, message: 'hint', seeds: [4] },
        ],
      },
    ]);
    assert.deepEqual(report.failing, []);
    assert.equal(raceSummaryLine(report), 'RACES FAIL: 1 of 2 expectations depends on timing — 4 seeds (1-4); failed under seeds 2, 4 (replay one with --race-seed 2)');
  });

  test('values that differ while the expectation holds under every seed are no race', () => {
    const refused = (seed: number, pod: string) => run(seed, [step(0, [pass('expectFailure', `drain did not complete within 1m: default/${pod}: refused 12 time(s)`), pass('pods', 6)])]);
    const report = compareRaceRuns('demo', [refused(1, 'web-abcde'), refused(2, 'web-fghij')]);
    assert.deepEqual([report.ok, report.expectations, report.varying, report.failing], [true, 2, [], []]);
  });

  test('a failure under every seed alike is not a race, but fails the verdict', () => {
    const runs = [5, 6].map((seed) => run(seed, [step(0, [fail('pods', 6, 5), pass('ready', 5)])]));
    const report = compareRaceRuns('demo', runs);
    assert.deepEqual(report.varying, []);
    assert.deepEqual(
      report.failing.map((f) => [f.step, f.path, f.failed]),
      [[0, 'pods', [5, 6]]],
    );
    assert.equal(report.ok, false);
    assert.match(raceSummaryLine(report), /^RACES FAIL: 1 failed under every seed — 2 seeds \(5, 6\)/);
  });

  test('the same path twice in a step (events[0] of two checks) is two expectations; a step refused under one seed shows its error check', () => {
    const ok = run(1, [step(0, [pass('events[0]', 1), pass('events[0]', 2)])]);
    const refused = run(2, [step(0, [fail('error', null, 'the scale step failed: 409'), pass('events[0]', 1), fail('events[0]', 2, 0)])]);
    const report = compareRaceRuns('demo', [ok, refused]);
    assert.equal(report.expectations, 3);
    assert.deepEqual(
      report.varying.map((v) => [v.path, v.outcomes.map((o) => [o.ok, o.actual, o.seeds])]),
      [
        ['events[0]', [[true, 2, [1]], [false, 0, [2]]]],
        ['error', [[true, null, [1]], [false, 'the scale step failed: 409', [2]]]],
      ],
    );
  });

  test('a run that ended early: its error, and the steps it never reached', () => {
    const runs = [run(1, [step(0, [pass('pods', 3)]), step(1, [pass('pods', 4)])]), run(2, [step(0, [pass('pods', 3)])], { error: 'the WorkloadSpread manager did not start' })];
    const report = compareRaceRuns('demo', runs);
    assert.equal(report.ok, false);
    assert.deepEqual(report.runs[1], { seed: 2, ok: false, passed: 1, failed: 0, elapsedMs: 0, unsettledSteps: [], error: 'the WorkloadSpread manager did not start' });
    assert.deepEqual(
      report.varying.map((v) => [v.step, v.notRun, v.passed]),
      [[1, [2], [1]]],
    );
    assert.match(raceSummaryLine(report), /the run ended early under seed 2/);
  });
});

describe('race reports', () => {
  const runs = [
    run(1, [step(0, [pass('subsets.a', 2)], { settled: { quiescent: false, elapsedMs: 60_000 } })]),
    run(2, [step(0, [fail('subsets.a', 2, 3)])]),
    run(3, [step(0, [pass('subsets.a', 2)])]),
  ];
  const report = compareRaceRuns('demo', runs);

  test('seeds are shown as ranges', () => {
    assert.equal(showSeeds([3, 1, 2, 7, 9, 10, 11, 12]), '1-3, 7, 9-12');
    assert.equal(showSeeds([4, 5]), '4, 5');
  });

  test('the table: a line per seed, the expectations that depend on timing with their values and seeds, the verdict', () => {
    const lines = report.runs.map((r) => renderRaceRun(r, { color: false })).join('');
    assert.equal(
      lines,
      ['seed 1  PASS   1 expectation held  (+0s; did not settle after step 0)', 'seed 2  FAIL   1 of 1 expectation failed  (+0s)', 'seed 3  PASS   1 expectation held  (+0s)', ''].join('\n'),
    );
    assert.equal(
      renderRaceReport(report, { color: false }),
      [
        '',
        'Depends on timing (1 of 1 expectation):',
        '  steps[0] subsets.a  expected 2',
        '    ✓ 2  seeds 1, 3',
        '    ✗ 3  seed 2',
        '',
        'RACES FAIL: 1 of 1 expectation depends on timing — 3 seeds (1-3); failed under seed 2 (replay one with --race-seed 2)',
        '',
      ].join('\n'),
    );
  });

  test('the HTML: the verdict, each value that depends on the seed with its seeds, a row per seed with its replay command; escaped', () => {
    const html = renderRaceHtmlReport(report, { description: 'a <b>demo</b>', file: 'my scenario.yaml' });
    assert.equal(html, renderRaceHtmlReport(compareRaceRuns('demo', runs), { description: 'a <b>demo</b>', file: 'my scenario.yaml' }), 'the same report, the same bytes');
    assert.match(html, /<p class="verdict fail">RACES FAIL: 1 of 1 expectation depends on timing — 3 seeds \(1-3\); failed under seed 2 \(replay one with --race-seed 2\)<\/p>/);
    assert.match(html, /<p class="desc">a &lt;b&gt;demo&lt;\/b&gt;<\/p>/);
    assert.match(html, /<h3><code>steps\[0\] subsets\.a<\/code> expected <code>2<\/code><\/h3>\n<p class="meta">held under seeds 1, 3; failed under seed 2<\/p>/);
    assert.match(html, /<tr><td class="ok">✓ held<\/td><td>2<\/td><td>1, 3<\/td><\/tr><tr><td class="bad">✗ failed<\/td><td>3<\/td><td>2<\/td><\/tr>/);
    assert.match(html, /<tr><td class="num">1<\/td><td><span class="ok">PASS<\/span> 1 expectation held<div class="bad">did not settle after step 0<\/div><\/td>/);
    assert.ok(html.includes('<code>workloadspread simulate &#39;my scenario.yaml&#39; --race-seed 2 -o html --out race-seed-2.html</code>'), 'the replay command, its file name quoted for the shell');
    assert.doesNotMatch(html, /<script|https?:\/\//);
    const clean = renderRaceHtmlReport(compareRaceRuns('demo', [runs[0]!, runs[2]!]));
    assert.match(clean, /<p class="verdict pass">RACES PASS: every one of 1 expectation held under 2 seeds \(1, 3\); no outcome depends on timing<\/p>/);
    assert.match(clean, /No expectation changed its outcome between the seeds\./);
  });

  test('the JSON: one document with the report and its verdict; the same runs give the same bytes', () => {
    const json = raceReportJson(report);
    assert.equal(json, raceReportJson(compareRaceRuns('demo', runs)));
    const doc = JSON.parse(json) as Record<string, unknown>;
    assert.deepEqual(Object.keys(doc), ['scenario', 'seeds', 'ok', 'expectations', 'runs', 'varying', 'failing', 'summary']);
    assert.deepEqual(doc['seeds'], [1, 2, 3]);
    assert.equal(doc['ok'], false);
    assert.equal((doc['varying'] as unknown[]).length, 1);
  });
});
