/** Process entry point of the `workloadspread` command (bin/workloadspread.js, dist/cli/entry.js). */
import { main } from './main.ts';

process.exitCode = await main(process.argv.slice(2));
