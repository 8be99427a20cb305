/**
 * `simulate --races N`: one scenario played under several race seeds
 * (race mode of the embedded cluster: src/clock/races.ts), and what changed
 * between them. `runRaces` plays the seeds one after the other;
 * `compareRaceRuns` (pure) lines up the expectations of every run — by step,
 * path and occurrence of the path in the step — and reports
 *
 * - every expectation whose outcome (pass or fail) differs between seeds, or
 *   that some seeds never reached (`varying`): which seeds passed and failed
 *   it and the different values observed, with the seeds that observed each
 *   (values that differ while the expectation holds everywhere are no race:
 *   an `expectFailure` message naming other pods, say);
 * - every expectation that failed under every seed alike (`failing`): not a
 *   race, but it fails the run all the same;
 * - per seed: passed and failed expectations, how far the clock went, which
 *   steps did not settle, and an error when the run ended early.
 *
 * Nothing in the report depends on the wall clock or on pod names, and a
 * seed replays its run (generated names and uids come from the seed too), so
 * the same seeds give the same report (a test compares the JSON byte for byte).
 */
import type { ExpectationResult } from './evaluate.ts';
import { runScenario, type RunOptions, type ScenarioRunResult } from './runner.ts';
import type { Scenario } from './scenario.ts';

/** One seed's run, in short. */
export interface RaceRun {
  seed: number;
  ok: boolean;
  passed: number;
  failed: number;
  /** Clock milliseconds from the start to the last step. */
  elapsedMs: number;
  /** Steps after which the cluster did not settle (the step's warning names what it waited for). */
  unsettledSteps: number[];
  /** Why the run ended early. */
  error?: string;
}

/** Seeds that saw the same outcome of one expectation. */
export interface RaceOutcome {
  ok: boolean;
  actual: unknown;
  /** The hint of a failed check, when it had one. */
  message?: string;
  seeds: number[];
}

/** One expectation across the seeds. */
export interface RaceExpectation {
  step: number;
  path: string;
  expected: unknown;
  /** The seeds it held under, and those it failed under. */
  passed: number[];
  failed: number[];
  /** Seeds whose run ended before this step (an error). */
  notRun: number[];
  /** Every different outcome, most seeds first. */
  outcomes: RaceOutcome[];
}

export interface RaceReport {
  name: string;
  seeds: number[];
  runs: RaceRun[];
  /** How many distinct expectations the runs checked. */
  expectations: number;
  /** Expectations whose outcome depends on the seed. */
  varying: RaceExpectation[];
  /** Expectations that failed under every seed, with the same value. */
  failing: RaceExpectation[];
  /** True when every run completed and every expectation held under every seed. */
  ok: boolean;
  /** The run was interrupted (Ctrl-C) before every seed was played. */
  interrupted?: boolean;
}

/** The outcome of a step's `error` check for a run whose step had none: the action went through. */
const NO_ERROR: Pick<RaceOutcome, 'ok' | 'actual'> = { ok: true, actual: null };

interface Entry {
  step: number;
  path: string;
  expected: unknown;
  bySeed: Map<number, ExpectationResult | undefined>;
}

/** Lines up the expectations of the runs (the same scenario under different seeds) and finds what differs. */
export function compareRaceRuns(name: string, results: readonly ScenarioRunResult[]): RaceReport {
  const seeds = results.map((r) => r.raceSeed ?? 0);
  const entries = new Map<string, Entry>();
  const order: string[] = [];
  results.forEach((r) => {
    const seed = r.raceSeed ?? 0;
    for (const step of r.steps) {
      const seen = new Map<string, number>();
      for (const e of step.expectations) {
        const n = seen.get(e.path) ?? 0;
        seen.set(e.path, n + 1);
        const key = `${step.step}\u0000${e.path}\u0000${n}`;
        let entry = entries.get(key);
        if (entry === undefined) {
          entry = { step: step.step, path: e.path, expected: e.expected, bySeed: new Map() };
          entries.set(key, entry);
          order.push(key);
        }
        entry.bySeed.set(seed, e);
      }
    }
  });
  // Expectations in step order, then in the order the scenario (or the first run that had them) wrote them.
  const sorted = order.map((k) => entries.get(k)!).sort((a, b) => a.step - b.step);
  const varying: RaceExpectation[] = [];
  const failing: RaceExpectation[] = [];
  for (const entry of sorted) {
    const line = lineUp(entry, results);
    const failedEverywhere = line.passed.length === 0 && line.notRun.length === 0;
    // The outcome is pass or fail: values that differ while passing (a message naming other pods) are no race.
    const reachedBySome = line.passed.length + line.failed.length > 0;
    if ((line.passed.length > 0 && line.failed.length > 0) || (line.notRun.length > 0 && reachedBySome)) varying.push(line);
    else if (failedEverywhere && line.failed.length > 0) failing.push(line);
  }
  const runs = results.map(summarizeRun);
  // A run with a failed expectation, or one that ended early, is not ok: that covers `varying` and `failing`.
  const ok = results.length > 0 && runs.every((r) => r.ok);
  return { name, seeds, runs, expectations: sorted.length, varying, failing, ok, ...(results.some((r) => r.interrupted === true) ? { interrupted: true } : {}) };
}

function lineUp(entry: Entry, results: readonly ScenarioRunResult[]): RaceExpectation {
  const groups = new Map<string, RaceOutcome>();
  const passed: number[] = [];
  const failed: number[] = [];
  const notRun: number[] = [];
  for (const r of results) {
    const seed = r.raceSeed ?? 0;
    const reached = r.steps.some((s) => s.step === entry.step);
    if (!reached) {
      notRun.push(seed);
      continue;
    }
    const e = entry.bySeed.get(seed);
    // Only a step's `error` check comes and goes (a step refused under some seeds); any other check is there whenever its step ran.
    const outcome = e === undefined ? (entry.path === 'error' ? NO_ERROR : { ok: false, actual: null, message: 'not checked' }) : { ok: e.ok, actual: e.actual ?? null, ...(e.message === undefined ? {} : { message: e.message }) };
    (outcome.ok ? passed : failed).push(seed);
    const key = JSON.stringify([outcome.ok, outcome.actual]);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { ...outcome, seeds: [seed] });
    else group.seeds.push(seed);
  }
  const outcomes = [...groups.values()].sort((a, b) => b.seeds.length - a.seeds.length || (a.seeds[0] ?? 0) - (b.seeds[0] ?? 0));
  return { step: entry.step, path: entry.path, expected: entry.expected ?? null, passed, failed, notRun, outcomes };
}

function summarizeRun(r: ScenarioRunResult): RaceRun {
  const last = r.steps.at(-1) ?? r.setup;
  return {
    seed: r.raceSeed ?? 0,
    ok: r.ok,
    passed: r.passed,
    failed: r.failed,
    elapsedMs: last?.elapsedMs ?? 0,
    unsettledSteps: r.steps.filter((s) => s.settled !== undefined && !s.settled.quiescent).map((s) => s.step),
    ...(r.error === undefined ? {} : { error: r.error }),
    ...(r.interrupted === true ? { error: 'interrupted' } : {}),
  };
}

export interface RaceRunOptions extends Omit<RunOptions, 'raceSeed' | 'kubeconfig' | 'context' | 'onStep' | 'onSetup'> {
  /** Called after each seed's run, in order (the CLI prints a line per seed as it goes). */
  onRun?: (run: RaceRun, result: ScenarioRunResult) => void;
}

/** What `compareRaceRuns` reads of a run: every step's expectations and settle outcome, the run's verdict and error. */
function expectationsOnly(r: ScenarioRunResult): ScenarioRunResult {
  const { setup, steps, ...rest } = r;
  const empty = { pods: [], workloadSpreads: [], events: [], budgets: [] };
  return {
    ...rest,
    ...(setup === undefined ? {} : { setup: { ...setup, ...empty } }),
    steps: steps.map((s) => ({ ...s, ...empty, ...(s.evictions === undefined ? {} : { evictions: [] }) })),
  };
}

/** Plays `scenario` once per seed, in order, and compares the runs; stops early (interrupted) when the signal is aborted. */
export async function runRaces(scenario: Scenario, seeds: readonly number[], options: RaceRunOptions = {}): Promise<RaceReport> {
  const { onRun, ...run } = options;
  const results: ScenarioRunResult[] = [];
  for (const seed of seeds) {
    if (run.signal?.aborted === true) break;
    const result = await runScenario(scenario, { ...run, raceSeed: seed });
    onRun?.(summarizeRun(result), result);
    // Only the expectations are compared: a thousand seeds need not keep a thousand runs' pods and events.
    results.push(expectationsOnly(result));
    if (result.interrupted === true) break;
  }
  const report = compareRaceRuns(scenario.name, results);
  return results.length < seeds.length ? { ...report, seeds: [...seeds], ok: false, interrupted: true } : report;
}
