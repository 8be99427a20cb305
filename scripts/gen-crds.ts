/**
 * Rewrites deploy/crds/ from the TypeBox schemas: `npx tsx scripts/gen-crds.ts`.
 * src/api/crd.test.ts fails when the checked-in files differ from what this writes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedCrdFiles } from '../src/api/crd.ts';

const dir = new URL('../deploy/crds/', import.meta.url).pathname;
mkdirSync(dir, { recursive: true });
for (const { fileName, content } of generatedCrdFiles()) {
  writeFileSync(join(dir, fileName), content);
  console.log(`wrote deploy/crds/${fileName}`);
}
