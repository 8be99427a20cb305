/**
 * bin/launch.js in a source checkout (a copy of this one, so the real .cache/ is untouched): the
 * first run compiles the sources into .cache/launch/, the next runs reuse the copy, a changed
 * source is compiled again before it runs (never a stale copy), and what cannot be compiled runs
 * through tsx instead, which reports it; WORKLOADSPREAD_LAUNCH=tsx always uses tsx.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

function run(root: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [join(root, 'bin/workloadspread.js'), ...args], { cwd: root, env: { ...process.env, ...env }, timeout: 240_000 }, (err, stdout, stderr) => {
      done({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

describe('bin/launch.js in a source checkout', () => {
  let root: string;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'ws-launch-'));
    for (const f of ['package.json', 'tsconfig.json', 'bin', 'src', 'examples']) cpSync(join(ROOT, f), join(root, f), { recursive: true, filter: (p) => !p.endsWith('.test.ts') });
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const pointer = () => JSON.parse(readFileSync(join(root, '.cache/launch/current.json'), 'utf8')) as { dir: string; inputs: Record<string, unknown> };
  const defaults = () => join(root, 'src/manager/defaults.ts');

  test('the first run compiles the commands into .cache/launch; the copy is reused while the sources stay the same', async () => {
    const first = await run(root, ['--version']);
    assert.deepEqual([first.code, first.stdout], [0, `${JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version}\n`], first.stderr);
    const compiled = pointer();
    assert.ok(existsSync(join(root, '.cache/launch', compiled.dir, 'entry.js')));
    assert.ok(existsSync(join(root, '.cache/launch', compiled.dir, 'kubectl-entry.js')));
    assert.ok('src/cli/main.ts' in compiled.inputs && 'src/manager/defaults.ts' in compiled.inputs, 'the sources it was compiled from are recorded');
    assert.ok(!Object.keys(compiled.inputs).some((f) => f.endsWith('.test.ts')), 'no tests');
    const again = await run(root, ['--version']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(pointer().dir, compiled.dir, 'reused');
  });

  test('a changed source is compiled again before it runs', async () => {
    const before = pointer().dir;
    writeFileSync(defaults(), readFileSync(defaults(), 'utf8').replace(/export const VERSION = '[^']*';/, "export const VERSION = '9.9.9-changed';"));
    const r = await run(root, ['--version']);
    assert.deepEqual([r.code, r.stdout], [0, '9.9.9-changed\n'], r.stderr);
    assert.notEqual(pointer().dir, before);
    assert.ok(readdirSync(join(root, '.cache/launch')).includes(before), 'the previous copy is kept a while for processes still running it');
  });

  test('WORKLOADSPREAD_LAUNCH=tsx runs the sources through tsx; a source that does not compile runs through tsx, which reports it', async () => {
    const tsx = await run(root, ['--version'], { WORKLOADSPREAD_LAUNCH: 'tsx' });
    assert.deepEqual([tsx.code, tsx.stdout], [0, '9.9.9-changed\n'], tsx.stderr);
    writeFileSync(defaults(), `${readFileSync(defaults(), 'utf8')}\nexport const BROKEN = ;\n`);
    const broken = await run(root, ['--version'], { WORKLOADSPREAD_DEBUG: '1' });
    assert.notEqual(broken.code, 0);
    assert.match(broken.stderr, /launch: running through tsx/);
    assert.match(broken.stderr, /defaults\.ts/);
  });
});
