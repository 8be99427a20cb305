/**
 * Every example scenario under race mode (the tests race-examples-*.test.ts):
 * played under a few seeds — each varying the latencies and order of the
 * embedded cluster's controllers, watch streams and webhook calls — every
 * expectation holds under every seed, so no example's outcome depends on
 * timing. (Without a seed they run in cli/simulate.test.ts.)
 *
 * Each example plays under RACE_SEEDS_PER_EXAMPLE seeds (default 2), and
 * the seeds differ from one example to the next (example i of the sorted
 * list: seeds 2i+1, 2i+2, …), so the suite covers many seeds at the cost of
 * two runs per example. The examples are dealt round-robin to RACE_EXAMPLE_PARTS
 * test files, so that no file runs long (a file has 5 minutes). A finding
 * is reported with the seed and the command that replays it. For a deeper
 * search: `RACE_SEEDS_PER_EXAMPLE=10 node scripts/run-tests.mjs race-examples`.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateServingCertificate } from '../../client/loopback-certificates.ts';
import { raceSummaryLine, renderRaceReport } from '../race-report.ts';
import { runRaces } from '../race-runs.ts';
import { parseScenario } from '../scenario.ts';

const EXAMPLES = join(import.meta.dirname, '..', '..', '..', 'examples', 'scenarios');
/** How many test files share the examples. */
export const RACE_EXAMPLE_PARTS = 3;

/** The examples of part `part` (0-based) of RACE_EXAMPLE_PARTS, each under its seeds. */
export function raceExampleTests(part: number): void {
  const seedsPerExample = Number(process.env['RACE_SEEDS_PER_EXAMPLE'] ?? 2);
  const certificate = generateServingCertificate();
  const files = readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

  describe(`example scenarios under race seeds (part ${part + 1} of ${RACE_EXAMPLE_PARTS}): no outcome depends on timing`, () => {
    after(() => {
      const open = process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap');
      assert.deepEqual(open, [], 'every cluster and manager was stopped');
    });

    test('there are examples to play', () => assert.ok(files.filter((_, i) => i % RACE_EXAMPLE_PARTS === part).length >= 6, files.join(', ')));

    files.forEach((file, i) => {
      if (i % RACE_EXAMPLE_PARTS !== part) return;
      const seeds = Array.from({ length: seedsPerExample }, (_, k) => seedsPerExample * i + k + 1);
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
}
