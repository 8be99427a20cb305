#!/usr/bin/env node
// Shell completion of the kubectl plugin: kubectl (1.26+) runs `kubectl_complete-workloadspread ARGS…`
// from PATH to complete `kubectl workloadspread ARGS…` (src/cli/completion.ts).
import { launch } from './launch.js';

await launch('kubectl-complete-entry');
