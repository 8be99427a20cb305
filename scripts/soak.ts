/**
 * `npm run soak [-- --minutes N] [--seed S]` (`-- --help` prints the usage): the fault soak of scripts/soak/driver.ts — two manager
 * replicas on the embedded cluster under a random schedule of faults for N minutes of wall-clock time
 * (default 10), then the convergence checks. Prints what it injected and the invariant results; exits 1
 * when an invariant was violated, 2 on bad arguments.
 */
import { writeFileSync } from 'node:fs';
import { parseSoakArgs, SOAK_USAGE } from './soak/args.ts';

const args = parseSoakArgs(process.argv.slice(2));
if (args.kind === 'help') {
  process.stdout.write(`${SOAK_USAGE}\n`);
  process.exit(0);
}
if (args.kind === 'error') {
  process.stderr.write(`soak: ${args.error}\n\n${SOAK_USAGE}\n`);
  process.exit(2);
}
const { minutes, seed } = args;
// Loaded only once the arguments are good: it pulls in the whole embedded cluster.
const { formatSoakReport, runSoak } = await import('../scripts/soak/driver.ts');
const report = await runSoak({ faultPhaseMs: minutes * 60_000, ...(seed === undefined ? {} : { seed }), print: (line) => process.stdout.write(`${line}\n`) });
for (const line of formatSoakReport(report)) process.stdout.write(`${line}\n`);
if (report.diagnostics.length > 0) {
  writeFileSync('soak-diagnostics.log', `${report.diagnostics.join('\n\n')}\n`);
  process.stdout.write('diagnostics of the violations: soak-diagnostics.log\n');
}
process.exit(report.violations.length === 0 ? 0 : 1);
