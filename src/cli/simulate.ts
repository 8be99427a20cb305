/**
 * `workloadspread simulate FILE.yaml|- [--output table|json|html] [--out PATH] [--kubeconfig FILE [--context NAME]] [--race-seed S] [--races N] [--max-input-size SIZE]`:
 * replays a scenario (docs/scenarios.md) on the embedded cluster with the
 * real manager and a virtual clock — or, with `--kubeconfig`, against an
 * existing cluster where the manager runs — and checks its expectations.
 *
 * Output: `table` (default) prints a block per step as it completes;
 * `json` prints JSON Lines: a setup record (what the objects did while they
 * were applied), then one object per step (the failures also go to stderr); `html` writes one self-contained report to `--out` (default
 * `workloadspread-report.html`) and prints the verdict.
 * Race mode (embedded cluster only): `--race-seed S` plays the scenario once
 * with the latencies of seed S (the same reports, the seed in the header);
 * `--races N` plays it under seeds 1..N (or S..S+N-1) and reports, as a table,
 * one JSON document or an HTML file, every expectation whose outcome changed
 * between the seeds (sim/race-runs.ts, sim/race-report.ts, sim/race-html.ts).
 * Exit codes: 0 every expectation held (under every seed); 1 one failed
 * (each named, expected vs actual; under `--races`, under any seed) or a run
 * could not complete; 2 a malformed scenario (each
 * problem named by its field, bounds included: docs/scenarios.md), an
 * unreadable or oversized file, or bad flags; 130 interrupted (the first
 * SIGINT or SIGTERM, after the cluster, the manager and the temporary files
 * are gone; signals.ts). Never a stack trace.
 */
import { basename, extname, resolve } from 'node:path';
import type { Logger } from '../client/logger.ts';
import type { ServingCertificate } from '../client/loopback-certificates.ts';
import { MAX_RACE_SEED } from '../clock/races.ts';
import { jsonLine, setupJsonLine } from '../sim/index.ts';
import { renderHtmlReport } from '../sim/index.ts';
import { renderHeader, renderSetup, renderStep, renderSummary } from '../sim/index.ts';
import { raceReportJson, raceSummaryLine, renderRaceHeader, renderRaceHtmlReport, renderRaceReport, renderRaceRun, runRaces, type RaceReport, type RaceRunOptions } from '../sim/index.ts';
import { runScenario, type RunOptions, type ScenarioRunResult } from '../sim/index.ts';
import { formatProblems, parseScenario, type Scenario } from '../sim/index.ts';
import { INTERRUPTED_EXIT_CODE, SIMULATE_OUTPUTS } from './defaults.ts';
import { inputName, parseMaxInputSize, readInput, STDIN, UsageError, type CliIo } from './io.ts';
import { stopOnSignals } from './signals.ts';

export { INTERRUPTED_EXIT_CODE, SIMULATE_OUTPUTS } from './defaults.ts';
export type SimulateOutput = (typeof SIMULATE_OUTPUTS)[number];
export const DEFAULT_REPORT_PATH = 'workloadspread-report.html';

export interface SimulateOptions {
  /** The scenario file; `-` reads stdin. */
  file: string;
  output?: string;
  out?: string;
  kubeconfig?: string;
  /** With `kubeconfig`: a context of that file other than its current-context. */
  context?: string;
  /** `--max-input-size` (default 10Mi). */
  maxInputSize?: string;
  /** `--races N`: play the scenario under N race seeds and report what changed between them. */
  races?: string;
  /** `--race-seed S`: race mode under seed S (with `--races`, the first of the seeds). */
  raceSeed?: string;
}

/** At most this many seeds per `--races` (each is a whole run of the scenario). */
export const MAX_RACES = 1000;

export interface SimulateHooks {
  /** Default: SIGINT / SIGTERM abort the run (after cleaning up). */
  signal?: AbortSignal;
  log?: Logger;
  /** Called with the result before the exit code is decided (tests, the demo); under `--races`, once per seed. */
  onResult?: (result: ScenarioRunResult) => void;
  /** `--races`: called with the report before the exit code is decided. */
  onRaceReport?: (report: RaceReport) => void;
  /** A serving certificate to reuse (tests running many scenarios). */
  certificate?: ServingCertificate;
}

function exitCode(result: ScenarioRunResult): number {
  if (result.interrupted === true) return INTERRUPTED_EXIT_CODE;
  return result.ok ? 0 : 1;
}

export async function runSimulate(options: SimulateOptions, io: CliIo, hooks: SimulateHooks = {}): Promise<number> {
  const output = (options.output ?? 'table') as SimulateOutput;
  if (!(SIMULATE_OUTPUTS as readonly string[]).includes(output)) throw new UsageError(`--output must be one of ${SIMULATE_OUTPUTS.join(', ')}, not ${JSON.stringify(options.output)}`);
  if (options.out !== undefined && output !== 'html') throw new UsageError('--out is where --output html writes its report; add --output html');
  if (options.out === '') throw new UsageError('--out needs a file path');
  if (options.kubeconfig === '') throw new UsageError('--kubeconfig needs a file path');
  if (options.context !== undefined && options.kubeconfig === undefined) throw new UsageError('--context picks a context of --kubeconfig; give --kubeconfig too (without it the scenario runs on the embedded cluster)');
  const maxBytes = parseMaxInputSize(options.maxInputSize);
  const raceSeed = options.raceSeed === undefined ? undefined : parseCount('--race-seed', options.raceSeed, 0, MAX_RACE_SEED);
  const races = options.races === undefined ? undefined : parseCount('--races', options.races, 1, MAX_RACES);
  if ((races !== undefined || raceSeed !== undefined) && options.kubeconfig !== undefined) {
    throw new UsageError(`${races !== undefined ? '--races' : '--race-seed'} plays the scenario on the embedded cluster; a real cluster (--kubeconfig) has timing of its own`);
  }
  if (races !== undefined && (raceSeed ?? 1) + races - 1 > MAX_RACE_SEED) throw new UsageError(`--race-seed ${raceSeed ?? 1} with --races ${races} goes past the largest seed, ${MAX_RACE_SEED}`);

  const text = await readInput(io, options.file, maxBytes);
  const source = inputName(options.file);
  const parsed = parseScenario(text, { source, defaultName: options.file === STDIN ? 'scenario' : basename(options.file, extname(options.file)) });
  if (!parsed.ok) {
    io.err(`${source}: the scenario is not valid:\n${formatProblems(parsed.problems).replace(/^/gm, '  ')}\n`);
    return 2;
  }
  const scenario = parsed.scenario;
  if (races !== undefined) {
    const seeds = Array.from({ length: races }, (_, i) => (raceSeed ?? 1) + i);
    return runRaceSeeds(scenario, seeds, { output, file: options.file === STDIN ? 'SCENARIO.yaml' : options.file, ...(options.out === undefined ? {} : { out: options.out }) }, io, hooks);
  }
  const style = { color: io.color };
  const warn = (m: string) => io.err(`warning: ${m}\n`);
  const run: RunOptions = { warn };
  if (raceSeed !== undefined) run.raceSeed = raceSeed;
  if (options.kubeconfig !== undefined) run.kubeconfig = options.kubeconfig;
  if (options.context !== undefined) run.context = options.context;
  if (hooks.log !== undefined) run.log = hooks.log;
  if (hooks.certificate !== undefined) run.certificate = hooks.certificate;
  if (output === 'table') {
    io.out(renderHeader({ name: scenario.name, ...(scenario.description === undefined ? {} : { description: scenario.description }), mode: options.kubeconfig === undefined ? 'embedded' : 'kubeconfig', ...(raceSeed === undefined ? {} : { raceSeed }) }));
    run.onSetup = (setup) => io.out(renderSetup(setup, style));
    run.onStep = (step) => io.out(renderStep(step, style));
  } else if (output === 'json') {
    run.onSetup = (setup) => io.out(setupJsonLine(setup, scenario.objects.length, raceSeed));
    run.onStep = (step) => io.out(jsonLine(step));
  }

  const result = await withStopSignal(io, hooks, (signal) => runScenario(scenario, { ...run, signal }));
  hooks.onResult?.(result);

  if (output === 'table') io.out(renderSummary(result, style));
  else if (output === 'json') {
    if (!result.ok) io.err(renderSummary(result, { color: false }));
  } else {
    const path = writeReport(io, options.out, renderHtmlReport(result));
    if (path === undefined) return 1;
    io.out(`${renderSummary(result, style)}report: ${path}\n`);
  }
  return exitCode(result);
}

/** A whole number of `flag` within [min, max], or a usage error naming the flag. */
function parseCount(flag: string, text: string, min: number, max: number): number {
  const n = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not ${JSON.stringify(text)}`);
  return n;
}

/** `--races`: the scenario under each seed in turn, a line per seed as it ends (table), then what changed between them. */
async function runRaceSeeds(scenario: Scenario, seeds: number[], how: { output: SimulateOutput; file: string; out?: string }, io: CliIo, hooks: SimulateHooks): Promise<number> {
  const { output } = how;
  const style = { color: io.color };
  const warnings = new Set<string>();
  const options: RaceRunOptions = {
    // One warning per distinct text, not one per seed.
    warn: (m) => {
      if (warnings.has(m)) return;
      warnings.add(m);
      io.err(`warning: ${m}\n`);
    },
    onRun: (run, result) => {
      hooks.onResult?.(result);
      if (output === 'table') io.out(renderRaceRun(run, style));
    },
  };
  if (hooks.log !== undefined) options.log = hooks.log;
  if (hooks.certificate !== undefined) options.certificate = hooks.certificate;
  if (output === 'table') io.out(renderRaceHeader({ name: scenario.name, description: scenario.description, seeds }));
  const report = await withStopSignal(io, hooks, (signal) => runRaces(scenario, seeds, { ...options, signal }));
  hooks.onRaceReport?.(report);
  if (output === 'table') io.out(renderRaceReport(report, style));
  else if (output === 'json') {
    io.out(raceReportJson(report));
    if (!report.ok) io.err(`${raceSummaryLine(report)}\n`);
  } else {
    const path = writeReport(io, how.out, renderRaceHtmlReport(report, { description: scenario.description, file: how.file }));
    if (path === undefined) return 1;
    io.out(`${raceSummaryLine(report)}\nreport: ${path}\n`);
  }
  if (report.interrupted === true) return INTERRUPTED_EXIT_CODE;
  return report.ok ? 0 : 1;
}

/**
 * Runs `work` with the hooks' signal, or (from a terminal) with one that the
 * first SIGINT/SIGTERM aborts — the run then stops its cluster and cleans up;
 * a second signal exits at once. The handlers go when the work ends.
 */
async function withStopSignal<T>(io: CliIo, hooks: SimulateHooks, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  if (hooks.signal !== undefined) return work(hooks.signal);
  const signals = stopOnSignals(io, { forcedExitCode: INTERRUPTED_EXIT_CODE, firstMessage: (sig) => `\n${sig}: stopping the scenario and cleaning up…\n` });
  try {
    return await work(signals.signal);
  } finally {
    signals.dispose();
  }
}

/** Writes an HTML report to `out` (default DEFAULT_REPORT_PATH); its path, or undefined after saying why it could not. */
function writeReport(io: CliIo, out: string | undefined, html: string): string | undefined {
  const path = resolve(out ?? DEFAULT_REPORT_PATH);
  try {
    io.writeFile(path, html);
    return path;
  } catch (err) {
    io.err(`error: cannot write the report ${path}: ${(err as Error).message}\n`);
    return undefined;
  }
}
