/**
 * Rewrites the generated CRDs from the TypeBox schemas: `npx tsx scripts/gen-crds.ts`.
 * They live in deploy/crds/ (plain manifests) and charts/workloadspread/files/crds/ (the Helm chart renders them from there, templates/crds.yaml);
 * src/api/crd.test.ts and src/cli/chart.test.ts fail when either copy differs from what this writes.
 * It also writes src/api/workloadspread-json-schema.ts, the WorkloadSpread schema as plain JSON for
 * decoding without loading TypeBox (src/api/workloadspread-json-schema.test.ts checks it).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedCrdFiles } from '../src/api/crd.ts';
import { renderJsonSchemaModule } from '../src/api/json-schema-module.ts';

for (const folder of ['deploy/crds', 'charts/workloadspread/files/crds']) {
  const dir = new URL(`../${folder}/`, import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  for (const { fileName, content } of generatedCrdFiles()) {
    writeFileSync(join(dir, fileName), content);
    console.log(`wrote ${folder}/${fileName}`);
  }
}

const schemaModule = new URL('../src/api/workloadspread-json-schema.ts', import.meta.url).pathname;
writeFileSync(schemaModule, renderJsonSchemaModule());
console.log('wrote src/api/workloadspread-json-schema.ts');
