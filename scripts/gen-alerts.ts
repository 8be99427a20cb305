/**
 * Rewrites the chart's alerting rules from src/cli/install-alerts.ts: `npx tsx scripts/gen-alerts.ts`.
 * charts/workloadspread/files/prometheus-rules.yaml holds them with stand-in names, which
 * templates/prometheusrule.yaml replaces; src/cli/chart.test.ts fails when the file differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import { alertRulesFile } from '../src/cli/install-alerts.ts';

const path = new URL('../charts/workloadspread/files/prometheus-rules.yaml', import.meta.url).pathname;
writeFileSync(path, alertRulesFile());
console.log('wrote charts/workloadspread/files/prometheus-rules.yaml');
