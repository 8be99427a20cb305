/**
 * Rewrites the README's example outputs from the real commands:
 * `npx tsx scripts/readme-examples.ts`. It runs `workloadspread cluster` (the
 * manager inside), applies examples/zone-ratio.yaml, waits for the Ready
 * condition with kubectl, and puts what `kubectl wait`, `kubectl get ws` and
 * `workloadspread status` print into the blocks after the
 * `<!-- example: NAME -->` markers of README.md. src/cli/readme-examples.test.ts
 * fails when the README shows anything else (the AGE column apart).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { README, withCluster, withExamples, zoneRatioExamples } from '../src/testing/readme-examples.ts';

const examples = await withCluster(zoneRatioExamples);
const before = readFileSync(README, 'utf8');
const after = withExamples(before, examples);
writeFileSync(README, after);
console.log(before === after ? 'README.md: the examples were already current' : `README.md: rewrote ${Object.keys(examples).join(', ')}`);
