/** Process entry point of the kubectl plugin (bin/kubectl-workloadspread.js): the same command, named as kubectl users call it. */
import { main, PLUGIN_NAME } from './main.ts';
import { processIo } from './io.ts';

process.exitCode = await main(process.argv.slice(2), processIo(), { name: PLUGIN_NAME });
