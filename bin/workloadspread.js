#!/usr/bin/env node
// Launcher for the `workloadspread` command from a source checkout: runs the
// TypeScript directly through tsx, so a fresh clone needs no build step.
// The container image runs the compiled `dist/cli/entry.js` instead (see Dockerfile).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/entry.ts');
