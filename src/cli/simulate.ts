/**
 * `workloadspread simulate FILE.yaml|- [--output table|json|html] [--out PATH] [--kubeconfig FILE [--context NAME]] [--max-input-size SIZE]`:
 * replays a scenario (docs/scenarios.md) on the embedded cluster with the
 * real manager and a virtual clock — or, with `--kubeconfig`, against an
 * existing cluster where the manager runs — and checks its expectations.
 *
 * Output: `table` (default) prints a block per step as it completes;
 * `json` prints JSON Lines: a setup record (what the objects did while they
 * were applied), then one object per step (the failures also go to stderr); `html` writes one self-contained report to `--out` (default
 * `workloadspread-report.html`) and prints the verdict.
 * Exit codes: 0 every expectation held; 1 one failed (each named, expected
 * vs actual) or the run could not complete; 2 a malformed scenario (each
 * problem named by its field, bounds included: docs/scenarios.md), an
 * unreadable or oversized file, or bad flags; 130 interrupted (the first
 * SIGINT or SIGTERM, after the cluster, the manager and the temporary files
 * are gone; signals.ts). Never a stack trace.
 */
import { basename, extname, resolve } from 'node:path';
import type { Logger } from '../client/logger.ts';
import type { ServingCertificate } from '../client/loopback-certificates.ts';
import { jsonLine, setupJsonLine } from '../sim/index.ts';
import { renderHtmlReport } from '../sim/index.ts';
import { renderHeader, renderSetup, renderStep, renderSummary } from '../sim/index.ts';
import { runScenario, type RunOptions, type ScenarioRunResult } from '../sim/index.ts';
import { formatProblems, parseScenario } from '../sim/index.ts';
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
}

export interface SimulateHooks {
  /** Default: SIGINT / SIGTERM abort the run (after cleaning up). */
  signal?: AbortSignal;
  log?: Logger;
  /** Called with the result before the exit code is decided (tests, the demo). */
  onResult?: (result: ScenarioRunResult) => void;
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

  const text = await readInput(io, options.file, maxBytes);
  const source = inputName(options.file);
  const parsed = parseScenario(text, { source, defaultName: options.file === STDIN ? 'scenario' : basename(options.file, extname(options.file)) });
  if (!parsed.ok) {
    io.err(`${source}: the scenario is not valid:\n${formatProblems(parsed.problems).replace(/^/gm, '  ')}\n`);
    return 2;
  }
  const scenario = parsed.scenario;
  const style = { color: io.color };
  const warn = (m: string) => io.err(`warning: ${m}\n`);
  const run: RunOptions = { warn };
  if (options.kubeconfig !== undefined) run.kubeconfig = options.kubeconfig;
  if (options.context !== undefined) run.context = options.context;
  if (hooks.log !== undefined) run.log = hooks.log;
  if (hooks.certificate !== undefined) run.certificate = hooks.certificate;
  if (output === 'table') {
    io.out(renderHeader({ name: scenario.name, ...(scenario.description === undefined ? {} : { description: scenario.description }), mode: options.kubeconfig === undefined ? 'embedded' : 'kubeconfig' }));
    run.onSetup = (setup) => io.out(renderSetup(setup, style));
    run.onStep = (step) => io.out(renderStep(step, style));
  } else if (output === 'json') {
    run.onSetup = (setup) => io.out(setupJsonLine(setup, scenario.objects.length));
    run.onStep = (step) => io.out(jsonLine(step));
  }

  const signals =
    hooks.signal === undefined
      ? stopOnSignals(io, { forcedExitCode: INTERRUPTED_EXIT_CODE, firstMessage: (sig) => `\n${sig}: stopping the scenario and cleaning up…\n` })
      : undefined;
  run.signal = hooks.signal ?? (signals as { signal: AbortSignal }).signal;
  let result: ScenarioRunResult;
  try {
    result = await runScenario(scenario, run);
  } finally {
    signals?.dispose();
  }
  hooks.onResult?.(result);

  if (output === 'table') io.out(renderSummary(result, style));
  else if (output === 'json') {
    if (!result.ok) io.err(renderSummary(result, { color: false }));
  } else {
    const path = resolve(options.out ?? DEFAULT_REPORT_PATH);
    try {
      io.writeFile(path, renderHtmlReport(result));
    } catch (err) {
      io.err(`error: cannot write the report ${path}: ${(err as Error).message}\n`);
      return 1;
    }
    io.out(`${renderSummary(result, style)}report: ${path}\n`);
  }
  return exitCode(result);
}
