/**
 * The arguments of `npm run soak` (scripts/soak.ts): `--help` prints the usage and exits 0 instead of
 * starting a ten-minute soak; bad or unknown arguments exit 2 with the usage.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { parseSoakArgs } from './args.ts';

describe('soak arguments', () => {
  test('defaults: 10 minutes, no seed', () => {
    assert.deepEqual(parseSoakArgs([]), { kind: 'run', minutes: 10 });
  });
  test('--minutes and --seed, spaced or with =', () => {
    assert.deepEqual(parseSoakArgs(['--minutes', '3', '--seed=7']), { kind: 'run', minutes: 3, seed: 7 });
    assert.deepEqual(parseSoakArgs(['--minutes=0.5']), { kind: 'run', minutes: 0.5 });
  });
  test('-h and --help ask for the usage, wherever they are', () => {
    for (const argv of [['--help'], ['-h'], ['--minutes', '3', '--help']]) assert.equal(parseSoakArgs(argv).kind, 'help');
  });
  test('bad values and unknown arguments are errors naming them', () => {
    const cases: [string[], RegExp][] = [
      [['--minutes', '0'], /--minutes "0"/],
      [['--minutes', '2000'], /--minutes "2000"/],
      [['--minutes'], /--minutes needs a value/],
      [['--seed', '1.5'], /--seed "1.5"/],
      [['--minuts', '3'], /unknown argument "--minuts"/],
    ];
    for (const [argv, message] of cases) {
      const got = parseSoakArgs(argv);
      assert.equal(got.kind, 'error', argv.join(' '));
      assert.match(got.kind === 'error' ? got.error : '', message);
    }
  });
  test('`npm run soak -- --help` prints the usage and exits 0 without starting a soak', () => {
    const script = new URL('../../scripts/soak.ts', import.meta.url).pathname;
    const run = spawnSync(process.execPath, ['--import', 'tsx', script, '--help'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.signal, null, 'finished on its own (a soak would have run until the timeout)');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^usage: npm run soak/m);
    assert.doesNotMatch(run.stdout, /^soak: seed/m, 'no soak started');
  });
});
