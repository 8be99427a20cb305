#!/usr/bin/env node
// The kubectl plugin: kubectl runs `kubectl-workloadspread` from PATH for `kubectl workloadspread …`.
import { launch } from './launch.js';

await launch('kubectl-entry');
