#!/usr/bin/env node
// Runs the benchmarks under bench/ (all, or those whose path contains an argument), one process each,
// with --expose-gc so they can measure heap. Benchmarks print figures and ratios; they assert nothing.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
const files = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error(`no benchmark matches ${filters.join(' ')}`);
  process.exit(1);
}
let failed = 0;
for (const file of files) {
  console.log(`\n## ${file}`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join('bench', file)], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
