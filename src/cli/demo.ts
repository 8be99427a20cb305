/**
 * `workloadspread demo` (`npm start`): the demo scenario (src/sim/demo.ts)
 * played by the simulator's runner on the embedded cluster with the real
 * manager, on the virtual clock, narrated chapter by chapter with a bar per
 * subset; then the HTML report, and how to keep a cluster for kubectl.
 *
 *   workloadspread demo [--cloneset] [--report PATH] [--no-color] [--fast | --step]
 *
 * `--cloneset` plays the second demo (src/sim/cloneset-demo.ts): an
 * OpenKruise CloneSet instead of the Deployment, with a partitioned rollout.
 *
 * On a terminal the chapters come a short moment apart so they can be read
 * (`--fast` drops the pauses, `--step` waits for Enter instead); piped, the
 * output comes at once, without colour. Ctrl-C (or SIGTERM) stops the run and
 * everything it started, then exits 130. Exit code 0 when every check of the
 * demo held, 1 otherwise.
 */
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { realClock } from '../clock/clock.ts';
import { CLONESET_DEMO, DEMO_NODES, DEPLOYMENT_DEMO, demoFrame, demoScenario, failedChecks, type DemoChapter, type DemoFrame, describeExpectation, renderHtmlReport, runScenario, type ScenarioRunResult, type Snapshot, type StepResult } from '../sim/index.ts';
import { showCosts } from '../k8s/deletion-cost-text.ts';
import { escapeTerminalDeep } from '../k8s/terminal-text.ts';
import { alignColumns } from './style.ts';
import { barScale, podsOverLimit, renderBar } from './bars.ts';
import { INTERRUPTED_EXIT_CODE } from './defaults.ts';
import { CommandError, parseMaxInputSize, readInput, type CliIo } from './io.ts';
import { stopOnSignals } from './signals.ts';
import { createStyle, wantsColor, type Style } from './style.ts';

export interface DemoOptions {
  /** Where the HTML report goes (default: the system's temporary directory). */
  report?: string;
  /** false for `--no-color`. */
  color?: boolean;
  /** No pauses between chapters. */
  fast?: boolean;
  /** Wait for Enter between chapters (a terminal only). */
  step?: boolean;
  /** The second demo: an OpenKruise CloneSet instead of a Deployment (`--cloneset`). */
  cloneset?: boolean;
}

export interface DemoHooks {
  /** Whether stdout is a terminal (pauses only then); default process.stdout.isTTY. */
  isTTY?: boolean;
  /** Waits between chapters (default: the real clock's sleep). */
  pause?: (ms: number) => Promise<void>;
  /** Waits for Enter (`--step`; default: a line on stdin). */
  waitForEnter?: () => Promise<void>;
  /** Aborting stops the demo (default: SIGINT). */
  signal?: AbortSignal;
  /** Where `examples/demo/` is (default: the package root). */
  root?: string;
  /** Real milliseconds since the start, for the closing line (default: the real clock). */
  now?: () => number;
}

/** How long a chapter stays on screen before the next one, on a terminal. */
export const CHAPTER_PAUSE_MS = 700;
export const DEFAULT_REPORT = join(tmpdir(), 'workloadspread-demo-report.html');
const WIDTH = 78;
const BAR_CELLS = 12;

/**
 * The package's root (where examples/ is): the nearest directory above this module holding the
 * package.json, whether the module runs from src/cli, dist/cli or a launch bundle (bin/launch.js).
 */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'examples'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return fileURLToPath(new URL('../../', import.meta.url));
    dir = parent;
  }
}

/** m:ss of clock time since the run started. */
export function clockTime(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** Wraps `text` to `width` columns, each line starting with `indent`. */
export function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(indent + line);
  return lines;
}

function costsText(costs: readonly (number | null)[]): string {
  const known = costs.filter((c): c is number => c !== null);
  return known.length === 0 ? '' : `cost ${showCosts(known).replaceAll(',', ', ')}`;
}

/** The bar view of a frame: one row per subset (pods against the limit), then pods in no subset. */
export function renderFrame(raw: DemoFrame, style: Style): string[] {
  const frame = escapeTerminalDeep(raw);
  const counts = frame.subsets.map((s) => ({ ready: s.ready, notReady: s.notReady, limit: s.limit }));
  const scale = barScale(counts, 24);
  scale.cells = Math.max(scale.cells, Math.min(BAR_CELLS, 24));
  const rows = frame.subsets.map((s, i) => {
    const flags: string[] = [];
    if (s.pending > 0) flags.push(style.yellow(`${s.pending} Pending`));
    if (s.schedulable === 'False') flags.push(style.red('unschedulable'));
    return [`    ${style.bold(s.name)}`, renderBar(counts[i] ?? { ready: 0, notReady: 0, limit: null }, scale, style), podsOverLimit(s.ready + s.notReady, s.limit), costsText(s.costs), flags.join(', ')];
  });
  if (frame.unassigned > 0) rows.push(['    (no subset)', '', String(frame.unassigned), '', '']);
  return alignColumns(rows);
}

function chapterHeading(n: number, total: number, chapter: DemoChapter, elapsedMs: number, style: Style): string {
  const title = ` ${n}/${total}  ${chapter.title} `;
  const right = ` at ${clockTime(elapsedMs)}`;
  const fill = Math.max(3, WIDTH - 2 - [...title].length - right.length);
  return `${style.cyan('──')}${style.bold(title)}${style.cyan('─'.repeat(fill))}${style.dim(right)}`;
}

/** Waits for a line on stdin; Ctrl-C while waiting (readline takes it from the terminal) aborts the demo. */
function waitForEnterOn(abort: () => void, signal: AbortSignal): Promise<void> {
  return new Promise((resolveEnter) => {
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY === true });
    const done = () => {
      signal.removeEventListener('abort', done);
      rl.close();
      resolveEnter();
    };
    rl.once('line', done);
    rl.once('SIGINT', () => {
      abort();
      done();
    });
    signal.addEventListener('abort', done, { once: true });
  });
}

export async function runDemo(options: DemoOptions, io: CliIo, hooks: DemoHooks = {}): Promise<number> {
  const style = createStyle(wantsColor(options.color, io.color));
  const tty = hooks.isTTY ?? process.stdout.isTTY === true;
  const clock = realClock();
  const now = hooks.now ?? (() => clock.now());
  const started = now();
  const pause = hooks.pause ?? ((ms: number) => clock.sleep(ms));
  const root = hooks.root ?? packageRoot();
  const reportPath = resolve(options.report ?? DEFAULT_REPORT);

  const demo = options.cloneset === true ? CLONESET_DEMO : DEPLOYMENT_DEMO;
  const files = await Promise.all(demo.files.map(async (path) => ({ path, text: await readInput(io, join(root, path), parseMaxInputSize(undefined)) })));
  const built = demoScenario(files, demo);
  if (!built.ok) throw new CommandError(`the demo's files are broken: ${built.error}`, 1);
  const { scenario, chapters } = built.demo;
  const total = chapters.size;

  // Ctrl-C (or the caller's signal) aborts the run; the runner then stops everything it started.
  const controller = new AbortController();
  const abort = () => controller.abort(new Error('interrupted'));
  const signal = controller.signal;
  hooks.signal?.addEventListener('abort', abort, { once: true });
  if (hooks.signal?.aborted === true) abort();
  const signals = hooks.signal === undefined ? stopOnSignals(io, { forcedExitCode: INTERRUPTED_EXIT_CODE }) : undefined;
  signals?.signal.addEventListener('abort', abort, { once: true });
  const removeSigint = () => {
    signals?.dispose();
    hooks.signal?.removeEventListener('abort', abort);
  };

  const say = (lines: string[]) => io.out(`${lines.join('\n')}\n`);
  const pools = DEMO_NODES.map((g) => `${g.namePrefix}-1..${g.count}`).join(', ');
  say([
    style.bold(options.cloneset === true ? 'workloadspread demo --cloneset' : 'workloadspread demo') + style.dim(` — ${demo.headline}`),
    '',
    ...wrap(
      `Starting an embedded Kubernetes on this machine (API server, scheduler, kubelets, workload controllers) with 6 fake nodes (${pools}; the elastic nodes are tainted) and the WorkloadSpread manager inside it, on a virtual clock: minutes of cluster time pass in moments.`,
      WIDTH,
      '',
    ),
  ]);

  let before: Snapshot | undefined;
  let chapterNo = 0;
  const result: ScenarioRunResult = await runScenario(scenario, {
    signal,
    onSetup: async (setup) => {
      const replicas = setup.workloadSpreads[0]?.replicas ?? 0;
      say(['', ...wrap(demo.setupText(replicas), WIDTH, ''), ...renderFrame(demoFrame(undefined, setup), style)]);
      before = setup;
    },
    onStep: async (step: StepResult) => {
      if (step.action === 'expect') {
        const failed = failedChecks(step);
        if (failed.length === 0) say([style.green(`    ✓ ${step.expectations.length} check${step.expectations.length === 1 ? '' : 's'} passed`)]);
        else say(failed.map((e) => style.red(`    ✗ ${describeExpectation(e)}`)));
        return;
      }
      if (step.error !== undefined) say([style.red(`    ✗ step ${step.step} (${step.summary}) failed: ${step.error}`)]);
      const chapter = chapters.get(step.step);
      if (chapter === undefined) return;
      chapterNo++;
      if (chapterNo > 1 && !options.fast) {
        if (options.step === true && tty) {
          io.out(style.dim('    (Enter for the next step)'));
          await (hooks.waitForEnter ?? (() => waitForEnterOn(abort, signal)))();
        } else if (tty) await pause(CHAPTER_PAUSE_MS);
      }
      const frame = demoFrame(before, step);
      say(['', chapterHeading(chapterNo, total, chapter, step.elapsedMs, style), ...wrap(chapter.text, WIDTH, '    '), ...renderFrame(frame, style), ...frame.changes.map((c) => style.dim(`    • ${c}`))]);
      before = step;
    },
  });
  removeSigint();

  if (result.interrupted === true) {
    say(['', 'Interrupted: the cluster and the manager were stopped.']);
    return INTERRUPTED_EXIT_CODE;
  }
  if (result.error !== undefined) throw new CommandError(`the demo could not run: ${result.error}`, 1);

  let reportLine: string;
  try {
    io.writeFile(reportPath, renderHtmlReport(result));
    reportLine = `The HTML report (a timeline of pods per subset, every step and check, the deletion costs): ${reportPath}`;
  } catch (err) {
    reportLine = style.red(`Could not write the report to ${reportPath}: ${(err as Error).message}`);
  }
  const clusterTime = clockTime(result.steps.at(-1)?.elapsedMs ?? 0);
  const seconds = ((now() - started) / 1000).toFixed(1);
  const verdict = result.ok
    ? style.green(`Done: ${result.passed} checks passed, ${clusterTime} of cluster time in ${seconds} s.`)
    : style.red(`Done, but ${result.failed} of ${result.passed + result.failed} checks failed (see above).`);
  say([
    '',
    verdict,
    ...wrap(reportLine, WIDTH, ''),
    '',
    'To keep a cluster running and use kubectl (the manager runs inside it):',
    `  ${style.cyan('npx workloadspread cluster')}                                    ${style.dim('# Ctrl-C stops it')}`,
    `  ${style.cyan('export KUBECONFIG=~/.kube/workloadspread-embedded.kubeconfig')}  ${style.dim('# in another terminal')}`,
    `  ${style.cyan('kubectl apply -f examples/zone-ratio.yaml')}`,
    `  ${style.cyan('npx workloadspread status --watch')}`,
    '',
    'To check a spread policy of your own the same way, write a scenario (docs/scenarios.md):',
    `  ${style.cyan('npx workloadspread simulate examples/scenarios/adaptive.yaml')}`,
  ]);
  return result.ok ? 0 : 1;
}
