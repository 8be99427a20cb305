#!/usr/bin/env node
// Runs the test suite with Node's built-in runner (node:test) through tsx.
// Node 20 cannot glob `**/*.test.ts` itself, so the files are collected here
// (src/ and scripts/).
//
// Usage: node scripts/run-tests.mjs [--tier unit|integration] [path-substring ...]
//   no argument: every test file (`npm test`);
//   --tier unit: the test files that cannot open a socket or start a process
//     (`npm run test:unit`): nothing they import, directly or through other
//     modules of src/, imports node:http, https, net, tls, http2, dgram,
//     child_process or worker_threads. The pure layers and every in-process
//     test (virtual clock, fake views) — seconds, not minutes;
//   --tier integration: the others (the embedded cluster over HTTPS, the real
//     manager, kubectl and helm, child processes).
// The tier is read from the imports each time, so a test moves to the
// integration tier the moment it (or a module it uses) starts using the network.
//
// Files run two at a time at least (node's default is one fewer than the CPUs,
// i.e. one on a 2-core machine): many of them wait on child processes, sockets
// and real-clock timers, so two overlap well. WS_TEST_CONCURRENCY overrides it.
import { availableParallelism } from 'node:os';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
let tier = 'all';
const filters = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i] ?? '';
  if (a === '--tier') tier = args[++i] ?? '';
  else if (a.startsWith('--tier=')) tier = a.slice('--tier='.length);
  else filters.push(a);
}
if (!['all', 'unit', 'integration'].includes(tier)) {
  console.error(`--tier must be unit or integration, got ${JSON.stringify(tier)}`);
  process.exit(2);
}

function collect(dir, out) {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (entry.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

// ---- tiers: does a file reach network or process I/O through its (value) imports? ----

const IO_MODULE = /^(node:)?(http|https|http2|net|tls|dgram|child_process|worker_threads)$/;
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)[^'";]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
const parsed = new Map();

function importsOf(file) {
  let known = parsed.get(file);
  if (known !== undefined) return known;
  const source = readFileSync(file, 'utf8');
  known = { local: [], io: false };
  for (const m of source.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? '';
    if (spec.startsWith('.')) {
      const target = resolve(dirname(file), spec);
      if (existsSync(target)) known.local.push(target);
    } else if (IO_MODULE.test(spec)) known.io = true;
  }
  parsed.set(file, known);
  return known;
}

/** Whether `file` imports I/O modules itself or through any local module it imports. */
function reachesIo(file) {
  const seen = new Set();
  const stack = [resolve(root, file)];
  while (stack.length > 0) {
    const current = stack.pop();
    if (seen.has(current)) continue;
    seen.add(current);
    const { local, io } = importsOf(current);
    if (io) return true;
    stack.push(...local);
  }
  return false;
}

// The tests of the tools in scripts/ (the fault soak) run with the rest.
const files = [...collect(join(root, 'src'), []), ...collect(join(root, 'scripts'), [])]
  .sort()
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .filter((f) => tier === 'all' || (tier === 'unit') === !reachesIo(f));
if (files.length === 0) {
  console.error(`no test files match ${[tier === 'all' ? '' : `--tier ${tier}`, ...filters].join(' ').trim()}`);
  process.exit(1);
}
const concurrency = Number(process.env.WS_TEST_CONCURRENCY) || Math.max(2, availableParallelism() - 1);
const result = spawnSync(process.execPath,
  ['--import', 'tsx', '--test', '--test-timeout=300000', `--test-concurrency=${concurrency}`, ...files],
  { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
