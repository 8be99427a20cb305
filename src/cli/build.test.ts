/**
 * What the container image relies on, checked without Docker (there is no engine here): the
 * Dockerfile's build (`npm run build`, tsc → dist/) succeeds; the compiled `dist/cli/entry.js` runs
 * with only production dependencies and prints the same as the source; nothing reachable from it
 * imports a dev dependency or tsx; and the Dockerfile keeps its promises (multi-stage, `npm ci
 * --omit=dev`, non-root numeric user, `node dist/cli/entry.js manager` as the entrypoint).
 * The build goes to a temporary directory (not the shared dist/).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { captureIo } from '../testing/cli-io.ts';
import { main } from './main.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string> };

function exec(file: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(file, args, { cwd, maxBuffer: 64 * 1024 * 1024, timeout: 280_000 }, (err, stdout, stderr) => {
      done({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

/** Bare package names imported by the compiled files reachable from `entry` (relative imports followed). */
function reachablePackages(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const queue = [entry];
  const specifiers = /(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[;\s])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(specifiers)) {
      const spec = m[1] ?? m[2] ?? m[3] ?? '';
      if (spec.startsWith('.')) {
        queue.push(resolve(dirname(file), spec));
      } else if (!spec.startsWith('node:') && !builtinModules.includes(spec)) {
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? spec));
      }
    }
  }
  return packages;
}

describe('the compiled command (what the image runs)', () => {
  let dir: string;
  let built: { code: number; stdout: string; stderr: string };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ws-build-'));
    // `npm run build` with the output moved out of the shared dist/.
    assert.equal(pkg.scripts['build'], 'tsc -p tsconfig.build.json');
    built = await exec(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist')], ROOT);
    // As in the image: package.json next to dist/ (ESM), the dependencies beside it.
    writeFileSync(join(dir, 'package.json'), readFileSync(join(ROOT, 'package.json')));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('npm run build compiles without errors', () => {
    assert.equal(built.code, 0, built.stdout + built.stderr);
    assert.ok(existsSync(join(dir, 'dist/cli/entry.js')));
  });

  test('node dist/cli/entry.js --help runs and lists the commands', async () => {
    const r = await exec(process.execPath, ['dist/cli/entry.js', '--help'], dir);
    assert.equal(r.code, 0, r.stderr);
    for (const command of ['validate', 'manifests', 'plan', 'cluster', 'manager']) assert.match(r.stdout, new RegExp(`\\n  ${command}\\b`));
  });

  test('the image entrypoint, node dist/cli/entry.js manager, knows the flags the install passes', async () => {
    const r = await exec(process.execPath, ['dist/cli/entry.js', 'manager', '--help'], dir);
    assert.equal(r.code, 0, r.stderr);
    for (const flag of ['--namespace', '--webhook-port', '--metrics-addr', '--health-addr', '--workers', '--unschedulable-recovery-seconds', '--log-level', '--leader-elect', '--cert-dir']) assert.ok(r.stdout.includes(flag), flag);
  });

  test('the compiled command prints what the source prints (manifests)', async () => {
    const r = await exec(process.execPath, ['dist/cli/entry.js', 'manifests', '--namespace', 'built-ws'], dir);
    assert.equal(r.code, 0, r.stderr);
    const io = captureIo();
    assert.equal(await main(['manifests', '--namespace', 'built-ws'], io), 0);
    assert.equal(r.stdout, io.stdout);
  });

  test('the build holds no test code: no test files, no src/testing, no fixtures', () => {
    const files = (readdirSync(join(dir, 'dist'), { recursive: true }) as string[]).map((f) => f.split(sep).join('/'));
    assert.ok(files.includes('cli/entry.js'), `the listing found no entry point: ${files.length} files`);
    const testCode = files.filter((f) => /\.test\.js(\.map)?$/.test(f) || f === 'testing' || f.startsWith('testing/') || f.includes('fixtures/'));
    assert.deepEqual(testCode, []);
  });

  test('nothing reachable from the entry point needs a dev dependency or tsx', () => {
    const used = reachablePackages(join(dir, 'dist/cli/entry.js'));
    assert.ok(used.has('commander'), `the import scan found nothing: ${[...used].join(', ')}`);
    for (const name of used) {
      assert.ok(name !== 'tsx', 'the compiled command imports tsx');
      assert.ok(Object.hasOwn(pkg.dependencies, name), `${name} is imported at run time but is not a production dependency`);
    }
  });
});

describe('Dockerfile and .dockerignore', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const instructions = dockerfile
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))
    .map((l) => l.trim());

  test('two stages: build with npm ci + npm run build, run with production dependencies only', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    assert.equal(froms.length, 2);
    assert.match(froms[0]!, /^FROM node:20\S* AS build$/);
    const runtimeStart = instructions.indexOf(froms[1]!);
    const buildStage = instructions.slice(0, runtimeStart);
    const runtime = instructions.slice(runtimeStart);
    assert.ok(buildStage.some((l) => /^RUN npm ci\b/.test(l)));
    assert.ok(buildStage.includes('RUN npm run build'));
    assert.ok(runtime.some((l) => /^RUN npm ci --omit=dev\b/.test(l)));
    assert.ok(runtime.includes('COPY --from=build /src/dist ./dist'));
    assert.ok(!runtime.some((l) => /COPY (src|\.) /.test(l)), 'the runtime stage must not copy sources');
  });

  test('non-root numeric user (the chart runs as 65532) and `node dist/cli/entry.js manager` as the entrypoint', () => {
    const user = instructions.find((l) => l.startsWith('USER '));
    assert.equal(user, 'USER 65532:65532');
    const entry = instructions.find((l) => l.startsWith('ENTRYPOINT '));
    assert.deepEqual(JSON.parse(entry!.slice('ENTRYPOINT '.length)), ['node', 'dist/cli/entry.js', 'manager']);
  });

  test('the build stage copies everything tsconfig.build.json compiles, and .dockerignore keeps it', () => {
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { extends: string; include: string[] };
    assert.deepEqual(build.include, ['src']);
    assert.ok(instructions.includes('COPY tsconfig.json tsconfig.build.json ./'));
    assert.ok(instructions.includes('COPY src ./src'));
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const needed of ['src', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) assert.ok(!ignored.includes(needed), needed);
    for (const excluded of ['node_modules', 'dist', '.git']) assert.ok(ignored.includes(excluded), excluded);
  });
});
