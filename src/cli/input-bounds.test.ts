/**
 * Issue 14, finding 5 (the command line's part): every input a command reads
 * is bounded (`--max-input-size`, default 10 MiB) and refused before it is
 * parsed, `-f -` reads stdin with the same bound, and `simulate` refuses
 * virtual durations, replica counts and node counts beyond its documented
 * bounds when it parses the scenario; the first SIGTERM stops a running
 * simulation after cleaning up (exit 130).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { captureIo } from '../testing/cli-io.ts';
import { main } from './main.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/workloadspread.js');
const ELASTIC = readFileSync(join(ROOT, 'examples/elastic.yaml'), 'utf8');

async function run(args: string[], files: Record<string, string> = {}, stdin?: string) {
  const io = captureIo(files, stdin);
  const code = await main(args, io);
  assert.doesNotMatch(io.stderr, /\n\s+at /, 'no stack trace');
  return { code, out: io.stdout, err: io.stderr };
}

describe('issue 14 finding 5: inputs over the size limit are refused up front', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'ws-bounds-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('finding 5: validate refuses a 100 MB file by its size, before reading it', async () => {
    const big = join(dir, 'big.yaml');
    writeFileSync(big, '');
    truncateSync(big, 100 * 1024 * 1024); // sparse: 100 MB that cost nothing to make
    const r = await run(['validate', '-f', big]);
    assert.equal(r.code, 2);
    assert.equal(r.out, '');
    assert.equal(r.err, `error: ${big} is too large (100 MiB; the limit is 10 MiB): refused before parsing; raise the limit with --max-input-size if this input is meant\n`);
  });

  test('finding 5: --max-input-size sets the limit (bytes or a quantity)', async () => {
    const file = join(dir, 'elastic.yaml');
    writeFileSync(file, ELASTIC);
    const size = Buffer.byteLength(ELASTIC);
    const refused = await run(['validate', '-f', file, '--max-input-size', String(size - 1)]);
    assert.equal(refused.code, 2);
    assert.match(refused.err, /is too large .*the limit is \d+ bytes/);
    const accepted = await run(['validate', '-f', file, '--max-input-size', String(size)]);
    assert.equal(accepted.code, 0, accepted.err);
    assert.match(accepted.out, /WorkloadSpread default\/web-spread: valid/);
    assert.equal((await run(['validate', '-f', file, '--max-input-size', '1Mi'])).code, 0);
  });

  test('finding 5: --max-input-size must be a whole number of bytes', async () => {
    for (const bad of ['lots', '0', '-5', '1.5', '']) {
      const r = await run(['validate', '-f', 'x.yaml', '--max-input-size', bad], { 'x.yaml': ELASTIC });
      assert.equal(r.code, 2, bad);
      assert.match(r.err, /^error: --max-input-size must be a whole number of bytes or a quantity such as 10Mi or 500k, got /, bad);
    }
  });

  test('finding 5: a stream without an end (/dev/zero) is cut off at the limit', async () => {
    const r = await run(['validate', '-f', '/dev/zero', '--max-input-size', '1Mi']);
    assert.equal(r.code, 2);
    assert.equal(r.err, 'error: /dev/zero is too large (more than 1 MiB; the limit is 1 MiB): refused before parsing; raise the limit with --max-input-size if this input is meant\n');
  });

  test('finding 5: -f - reads stdin, bounded the same way', async () => {
    const ok = await run(['validate', '-f', '-'], {}, ELASTIC);
    assert.equal(ok.code, 0, ok.err);
    assert.equal(ok.out, '<stdin>: WorkloadSpread default/web-spread: valid\n');
    const big = await run(['validate', '-f', '-', '--max-input-size', '1Ki'], {}, ELASTIC);
    assert.equal(big.code, 2);
    assert.match(big.err, /^error: <stdin> is too large \(more than 1 KiB; the limit is 1 KiB\)/);
    const twice = await run(['validate', '-f', '-', '-'], {}, ELASTIC);
    assert.equal(twice.code, 2);
    assert.match(twice.err, /-f - \(stdin\) can be given only once/);
    const plan = await run(['plan', '-f', '-', '--replicas', '12', '-o', 'json'], {}, ELASTIC);
    assert.equal(plan.code, 0, plan.err);
    assert.equal((JSON.parse(plan.out) as { steps: unknown[] }).steps.length, 1);
  });

  test('finding 5: plan, simulate and --whitelist are bounded too', async () => {
    const files = { 'ws.yaml': ELASTIC, 'wl.json': '[]' };
    assert.equal((await run(['plan', '-f', 'ws.yaml', '--replicas', '3', '--max-input-size', '100'], files)).code, 2);
    assert.equal((await run(['simulate', 'ws.yaml', '--max-input-size', '100'], files)).code, 2);
    const whitelist = await run(['validate', '-f', 'ws.yaml', '--whitelist', 'wl.json', '--max-input-size', '1'], files);
    assert.equal(whitelist.code, 2);
    assert.match(whitelist.err, /wl\.json is too large/);
  });

  test('finding 5: the installed command reads a real pipe with -f -, and refuses one over the limit', () => {
    const ok = spawnSync(process.execPath, [BIN, 'validate', '-f', '-'], { input: ELASTIC, encoding: 'utf8', cwd: ROOT });
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(ok.stdout, '<stdin>: WorkloadSpread default/web-spread: valid\n');
    const big = spawnSync(process.execPath, [BIN, 'validate', '-f', '-', '--max-input-size', '64Ki'], { input: Buffer.alloc(1024 * 1024, 0x20), encoding: 'utf8', cwd: ROOT });
    assert.equal(big.status, 2);
    assert.match(big.stderr, /^error: <stdin> is too large \(more than 64 KiB; the limit is 64 KiB\)/);
  });
});

const SCENARIO_HEAD = `
name: bounds
nodes:
  - {namePrefix: n-, count: 2}
objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: main, image: nginx}]}}}
`;

describe('issue 14 finding 5: simulate refuses durations and counts beyond its bounds when it parses the scenario', () => {
  async function refused(scenario: string): Promise<string> {
    const r = await run(['simulate', 's.yaml'], { 's.yaml': scenario });
    assert.equal(r.code, 2, r.out + r.err);
    assert.equal(r.out, '', 'nothing ran');
    return r.err;
  }

  test('finding 5: simulate refuses advance: 1000000h, naming the step and field', async () => {
    const err = await refused(`${SCENARIO_HEAD}steps:\n  - scale: {kind: Deployment, name: web, replicas: 3}\n  - advance: 1000000h\n`);
    assert.equal(err, 's.yaml: the scenario is not valid:\n  steps[1].advance: must be at most 24h of virtual time, not 1000000h (the simulator replays every timer on the way; split a longer wait into several steps)\n');
    assert.match(await refused(`${SCENARIO_HEAD}steps:\n  - settle: {timeout: 25h}\n`), /steps\[0\]\.settle\.timeout: must be at most 24h of virtual time, not 25h/);
    assert.match(await refused(`${SCENARIO_HEAD}steps:\n  - scale: {kind: Deployment, name: web, replicas: 3}\n    settle: {timeout: 48h}\n`), /steps\[0\]\.settle\.timeout: must be at most 24h/);
  });

  test('finding 5: simulate refuses 1e9 replicas wherever a replica count is written', async () => {
    assert.match(await refused(`${SCENARIO_HEAD}steps:\n  - scale: {kind: Deployment, name: web, replicas: 1000000000}\n`), /steps\[0\]\.scale\.replicas: must be at most 1000 \(the simulator's bound on one workload's pods\), not 1000000000/);
    assert.match(await refused(SCENARIO_HEAD.replace('replicas: 2', 'replicas: 1e9')), /objects\[0\]\.spec\.replicas: must be at most 1000/);
    assert.match(await refused(`${SCENARIO_HEAD}steps:\n  - patch: {kind: Deployment, name: web, patch: {spec: {replicas: 5000}}}\n`), /steps\[0\]\.patch\.patch\.spec\.replicas: must be at most 1000/);
    assert.match(await refused(`${SCENARIO_HEAD}steps:\n  - patch: {kind: Deployment, name: web, type: json, patch: [{op: replace, path: /spec/replicas, value: 5000}]}\n`), /steps\[0\]\.patch\.patch\[0\]\.value: must be at most 1000/);
    assert.match(await refused(`${SCENARIO_HEAD}steps:\n  - apply: {apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {parallelism: 2000, template: {spec: {containers: [{name: m, image: x}], restartPolicy: Never}}}}\n`), /steps\[0\]\.apply\.spec\.parallelism: must be at most 1000/);
  });

  test('finding 5: simulate refuses more nodes than its bound', async () => {
    assert.match(await refused(SCENARIO_HEAD.replace('count: 2', 'count: 1000000000')), /nodes\[0\]\.count: must be at most 500/);
    assert.match(await refused(`${SCENARIO_HEAD}steps:\n  - addNodes: [{namePrefix: more-, count: 499}]\n`), /steps\[0\]\.addNodes\[0\]: more than 500 nodes in the scenario/);
  });
});

describe('issue 14 finding 5: the first SIGTERM stops a running simulation', () => {
  test('finding 5: simulate with advance: 24h stops at the first SIGTERM, exits 130 and leaves no temporary files', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'ws-sigterm-'));
    try {
      const scenario = join(tmp, 'long.yaml');
      writeFileSync(scenario, `${SCENARIO_HEAD}steps:\n  - advance: 24h\n  - scale: {kind: Deployment, name: web, replicas: 3}\n`);
      const work = join(tmp, 'tmp');
      mkdirSync(work);
      // TMPDIR: the run's certificate directory goes there, so what it leaves behind is visible.
      const child = spawn(process.execPath, [BIN, 'simulate', scenario, '-o', 'json'], { cwd: ROOT, env: { ...process.env, TMPDIR: work }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
      // Once the setup record is out, the run is in its steps: the 24 h advance.
      await new Promise<void>((ready, fail) => {
        const check = () => {
          if (stdout.includes('\n')) {
            child.stdout.off('data', check);
            ready();
          }
        };
        child.stdout.on('data', check);
        child.on('exit', () => fail(new Error(`the run ended before its steps: ${stderr}`)));
      });
      assert.ok(readdirSync(work).some((f) => f.startsWith('workloadspread-sim-')), 'the run keeps its certificates in TMPDIR');
      child.kill('SIGTERM');
      const code = await exited;
      assert.equal(code, 130, stderr);
      assert.match(stderr, /SIGTERM: stopping the scenario and cleaning up/);
      const records = stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { step: unknown });
      // The setup record only: the advance was stopped, not finished (the old run printed it after 24 virtual hours).
      assert.deepEqual(records.map((r) => r.step), ['setup']);
      // (tsx, which runs the source checkout, keeps its compile cache there too.)
      assert.deepEqual(readdirSync(work).filter((f) => !f.startsWith('tsx-')), [], 'temporary files removed');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
