#!/usr/bin/env node
// Runs the whole test suite with Node's built-in runner (node:test) through tsx.
// Node 20 cannot glob `**/*.test.ts` itself, so the files are collected here.
// Usage: node scripts/run-tests.mjs [path-substring ...]   (no argument: every test file)
// Files run two at a time at least (node's default is one fewer than the CPUs,
// i.e. one on a 2-core machine): many of them wait on child processes, sockets
// and real-clock timers, so two overlap well. WS_TEST_CONCURRENCY overrides it.
import { availableParallelism } from 'node:os';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

function collect(dir, out) {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (entry.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

const files = collect(join(root, 'src'), []).sort()
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
const concurrency = Number(process.env.WS_TEST_CONCURRENCY) || Math.max(2, availableParallelism() - 1);
const result = spawnSync(process.execPath,
  ['--import', 'tsx', '--test', '--test-timeout=300000', `--test-concurrency=${concurrency}`, ...files],
  { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
