#!/usr/bin/env node
// The `workloadspread` command (bin/launch.js explains source checkout vs. published package).
import { launch } from './launch.js';

await launch('entry');
