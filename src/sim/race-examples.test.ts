/**
 * Every example scenario under race mode: played under a few seeds — each
 * varying the latencies and order of the embedded cluster's controllers,
 * watch streams and webhook calls — every expectation holds under every
 * seed, so no example's outcome depends on timing. (Without a seed they
 * run in cli/simulate.test.ts.)
 *
 * Each example plays under RACE_SEEDS_PER_EXAMPLE seeds (default 2), and
 * the seeds differ from one example to the next (example i: seeds
 * 2i+1, 2i+2, …), so a full run covers many seeds at the cost of two runs
 * per example. A finding is reported with the seed and the command that
 * replays it. The figure can be raised for a deeper search:
 * `RACE_SEEDS_PER_EXAMPLE=10 node --import tsx --test src/sim/race-examples.test.ts`.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { raceSummaryLine, renderRaceReport } from './race-report.ts';
import { runRaces } from './race-runs.ts';
import { parseScenario } from './scenario.ts';

const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples', 'scenarios');
const SEEDS_PER_EXAMPLE = Number(process.env['RACE_SEEDS_PER_EXAMPLE'] ?? 2);
const certificate = generateServingCertificate();

describe('every example scenario under race seeds: no outcome depends on timing', () => {
  after(() => {
    const open = process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap');
    assert.deepEqual(open, [], 'every cluster and manager was stopped');
  });

  const files = readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
  test('there are examples to play', () => assert.ok(files.length >= 19, files.join(', ')));

  files.forEach((file, i) => {
    const seeds = Array.from({ length: SEEDS_PER_EXAMPLE }, (_, k) => SEEDS_PER_EXAMPLE * i + k + 1);
    test(`${file} (seeds ${seeds.join(', ')})`, async () => {
      const parsed = parseScenario(readFileSync(join(EXAMPLES, file), 'utf8'), { source: file });
      assert.ok(parsed.ok, file);
      const warnings: string[] = [];
      const report = await runRaces(parsed.scenario, seeds, { certificate, warn: (m) => warnings.push(m) });
      const replay = `workloadspread simulate examples/scenarios/${file} --race-seed ${report.runs.find((r) => !r.ok)?.seed ?? seeds[0]}`;
      assert.ok(report.ok, `${raceSummaryLine(report)}\n${renderRaceReport(report, { color: false })}\nreplay: ${replay}`);
      assert.deepEqual(
        report.runs.map((r) => [r.seed, r.failed, r.error ?? null, r.unsettledSteps]),
        seeds.map((s) => [s, 0, null, []]),
      );
      assert.ok(report.expectations > 0 && report.runs.every((r) => r.passed === report.expectations), 'every seed checked every expectation');
      assert.deepEqual(warnings, []);
    });
  });
});
