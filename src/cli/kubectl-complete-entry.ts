/**
 * Process entry point of `kubectl_complete-workloadspread` (bin/), which kubectl runs with the words
 * after `kubectl workloadspread` to complete them: cobra's `__complete` protocol (completion.ts).
 */
import { main, PLUGIN_NAME } from './main.ts';
import { processIo } from './io.ts';

process.exitCode = await main(['__complete', ...process.argv.slice(2)], processIo(), { name: PLUGIN_NAME });
