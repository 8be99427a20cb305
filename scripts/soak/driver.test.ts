/**
 * A short fault soak (scripts/soak/driver.ts) as part of the suite: a few seconds of random faults
 * against two manager replicas, then the convergence checks. `npm run soak` runs the long one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatSoakReport, runSoak } from './driver.ts';

test('a short fault soak: no subset above its limit, every pod placed, the status converges, nothing crashes', async (t) => {
  const report = await runSoak({ faultPhaseMs: 15_000, seed: 14 });
  for (const line of formatSoakReport(report)) t.diagnostic(line);
  assert.deepEqual(report.violations, []);
  assert.ok(report.steps >= 3, `${report.steps} fault steps`);
  assert.ok(report.samples > report.steps, 'the invariants were sampled during the faults');
  assert.notEqual(report.convergedAfterMs, undefined);
});
