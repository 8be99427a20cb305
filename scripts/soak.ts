/**
 * `npm run soak [-- --minutes N] [--seed S]`: the fault soak of src/testing/soak.ts — two manager
 * replicas on the embedded cluster under a random schedule of faults for N minutes of wall-clock time
 * (default 10), then the convergence checks. Prints what it injected and the invariant results; exits 1
 * when an invariant was violated, 2 on bad arguments.
 */
import { writeFileSync } from 'node:fs';
import { formatSoakReport, runSoak } from '../src/testing/soak.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

const minutesText = arg('minutes') ?? '10';
const minutes = Number(minutesText);
const seedText = arg('seed');
const seed = seedText === undefined ? undefined : Number(seedText);
if (!(minutes > 0 && minutes <= 24 * 60) || (seed !== undefined && !Number.isInteger(seed))) {
  process.stderr.write(`usage: npm run soak [-- --minutes N (0 < N <= 1440, default 10)] [--seed INTEGER]; got --minutes ${JSON.stringify(minutesText)}${seedText === undefined ? '' : ` --seed ${JSON.stringify(seedText)}`}\n`);
  process.exit(2);
}
const report = await runSoak({ faultPhaseMs: minutes * 60_000, ...(seed === undefined ? {} : { seed }), print: (line) => process.stdout.write(`${line}\n`) });
for (const line of formatSoakReport(report)) process.stdout.write(`${line}\n`);
if (report.diagnostics.length > 0) {
  writeFileSync('soak-diagnostics.log', `${report.diagnostics.join('\n\n')}\n`);
  process.stdout.write('diagnostics of the violations: soak-diagnostics.log\n');
}
process.exit(report.violations.length === 0 ? 0 : 1);
