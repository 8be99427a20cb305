/**
 * The command line of `npm run soak` (scripts/soak.ts), parsed without side effects so it can be
 * tested: `--minutes N` (0 < N <= 1440, default 10), `--seed INTEGER`, `-h`/`--help`. Anything else
 * is an error naming the argument. Not used by production code.
 */

export const SOAK_USAGE = [
  'usage: npm run soak [-- [--minutes N] [--seed INTEGER]]',
  '',
  'Runs two manager replicas on the embedded cluster under a random schedule of faults for N minutes',
  'of wall-clock time, then checks that everything converged. Prints what it injected and the',
  'invariant results; exits 0 when every invariant held, 1 when one was violated, 2 on bad arguments.',
  '',
  '  --minutes N      length of the fault phase in minutes (0 < N <= 1440, default 10)',
  '  --seed INTEGER   seed of the fault schedule (default: random, printed at the start)',
  '  -h, --help       print this help and exit',
].join('\n');

export type SoakArgs = { kind: 'run'; minutes: number; seed?: number } | { kind: 'help' } | { kind: 'error'; error: string };

const MAX_MINUTES = 24 * 60;

export function parseSoakArgs(argv: readonly string[]): SoakArgs {
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  const values: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const match = /^--(minutes|seed)(?:=(.*))?$/.exec(arg);
    if (match === null) return { kind: 'error', error: `unknown argument ${JSON.stringify(arg)}` };
    const name = match[1] ?? '';
    const inline = match[2];
    const value = inline ?? argv[++i];
    if (value === undefined) return { kind: 'error', error: `--${name} needs a value` };
    values[name] = value;
  }
  const minutesText = values['minutes'] ?? '10';
  const minutes = Number(minutesText);
  if (!(minutes > 0 && minutes <= MAX_MINUTES)) return { kind: 'error', error: `--minutes ${JSON.stringify(minutesText)}: must be a number of minutes above 0 and at most ${MAX_MINUTES}` };
  const seedText = values['seed'];
  if (seedText === undefined) return { kind: 'run', minutes };
  const seed = Number(seedText);
  if (seedText.trim() === '' || !Number.isSafeInteger(seed)) return { kind: 'error', error: `--seed ${JSON.stringify(seedText)}: must be an integer` };
  return { kind: 'run', minutes, seed };
}
