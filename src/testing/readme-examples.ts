/**
 * The README's example outputs, produced by the real commands: `workloadspread
 * cluster` (default layout: three zones of two nodes, the manager inside) as a
 * child process, `kubectl apply -f examples/zone-ratio.yaml`, `kubectl wait
 * --for=condition=Ready`, then `kubectl get ws` and `workloadspread status`.
 * `scripts/readme-examples.ts` writes them into README.md; the test
 * `src/cli/readme-examples.test.ts` fails when README.md shows something else.
 *
 * A block in README.md is a fenced code block right after a marker line
 * `<!-- example: NAME -->`. The AGE column of `kubectl get ws` is the one
 * thing that differs from run to run; `sameExample` ignores it.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './eventually.ts';
import { k8sTools } from './k8s-tools.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const BIN = join(ROOT, 'bin/workloadspread.js');
export const README = join(ROOT, 'README.md');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ClusterSession {
  kubeconfig: string;
  dir: string;
  kubectl(...args: string[]): Promise<Run>;
  /** `workloadspread ARGS` against the cluster, as a child process (no terminal, so no colour). */
  workloadspread(...args: string[]): Promise<Run>;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { env, cwd: ROOT, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

/** Runs `workloadspread cluster` (default nodes, manager inside) until `fn` is done, then stops it with SIGINT. */
export async function withCluster<T>(fn: (session: ClusterSession) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'ws-readme-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const child = spawn(process.execPath, [BIN, 'cluster', '--port', '0', '--kubeconfig', kubeconfig], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const env = { ...process.env, KUBECONFIG: kubeconfig, HOME: dir, NO_COLOR: '1' };
  const kubectl = k8sTools().kubectl;
  try {
    await eventually(() => assert.ok(existsSync(kubeconfig) && stdout.includes('Press Ctrl-C'), `the cluster is not up yet; stderr: ${stderr}`), { timeoutMs: 90_000, intervalMs: 100 });
    const result = await fn({
      kubeconfig,
      dir,
      kubectl: (...args) => run(kubectl, ['--cache-dir', join(dir, 'cache'), ...args], env),
      workloadspread: (...args) => run(process.execPath, [BIN, ...args], env),
    });
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    return result;
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

function ok(r: Run, what: string): string {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}`);
  return r.stdout;
}

/**
 * The zone-ratio example, spread and Ready, as the README shows it: the
 * blocks `kubectl-wait`, `kubectl-get-ws` and `status` (each starting with
 * the command line). Waits until every pod is Ready and the status says so.
 */
export async function zoneRatioExamples(s: ClusterSession): Promise<Record<string, string>> {
  ok(await s.kubectl('apply', '-f', 'examples/zone-ratio.yaml'), 'kubectl apply');
  const waited = ok(await s.kubectl('wait', '--for=condition=Ready', 'ws/api-zones', '--timeout=120s'), 'kubectl wait');
  // Ready is about placement; the ready-pod count beside it follows the kubelet (and may be written a few seconds later).
  await eventually(async () => assert.equal(ok(await s.kubectl('get', 'ws', 'api-zones', '-o', 'jsonpath={.status.readyReplicas}'), 'kubectl get'), '10'), {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
  const table = ok(await s.kubectl('get', 'ws'), 'kubectl get ws');
  const status = ok(await s.workloadspread('status'), 'workloadspread status');
  return {
    'kubectl-wait': `$ kubectl wait --for=condition=Ready ws/api-zones\n${waited}`,
    'kubectl-get-ws': `$ kubectl get ws\n${table}`,
    status: `$ npx workloadspread status\n${status}`,
  };
}

const MARKER = /^<!-- example: ([a-z0-9-]+) -->$/;

/** The example blocks of a README: name → the text inside the fence (ending with a newline). */
export function readmeExamples(readme: string): Map<string, { text: string; start: number; end: number }> {
  const lines = readme.split('\n');
  const out = new Map<string, { text: string; start: number; end: number }>();
  for (let i = 0; i < lines.length; i++) {
    const name = MARKER.exec(lines[i] ?? '')?.[1];
    if (name === undefined) continue;
    const open = i + 1;
    if (!/^```/.test(lines[open] ?? '')) throw new Error(`README.md line ${i + 1}: the marker of ${name} is not followed by a code fence`);
    let close = open + 1;
    while (close < lines.length && lines[close] !== '```') close++;
    if (close >= lines.length) throw new Error(`README.md line ${open + 1}: the code fence of ${name} is not closed`);
    out.set(name, { text: `${lines.slice(open + 1, close).join('\n')}\n`, start: open + 1, end: close });
  }
  return out;
}

/** README with the named blocks replaced (those it has a marker for); throws when a name has no marker. */
export function withExamples(readme: string, examples: Record<string, string>): string {
  const lines = readme.split('\n');
  const found = readmeExamples(readme);
  const ordered = Object.keys(examples)
    .map((name) => {
      const block = found.get(name);
      if (block === undefined) throw new Error(`README.md has no <!-- example: ${name} --> marker`);
      return { name, block };
    })
    .sort((a, b) => b.block.start - a.block.start);
  for (const { name, block } of ordered) {
    const text = (examples[name] ?? '').replace(/\n$/, '');
    lines.splice(block.start, block.end - block.start, ...text.split('\n'));
  }
  return lines.join('\n');
}

/** The AGE column's value (the last one of each row of `kubectl get`), which no two runs share. */
function withoutAge(text: string): string {
  return text.replace(/ +\d+(?:s|m\d*s?|h\d*m?|d\d*h?)$/gm, ' <age>');
}

/** Whether an example the README shows is the real output (the AGE column apart). */
export function sameExample(name: string, shown: string, real: string): boolean {
  return name === 'kubectl-get-ws' ? withoutAge(shown) === withoutAge(real) : shown === real;
}
