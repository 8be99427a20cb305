/**
 * The generated JSON copy of the WorkloadSpread schema (what decode.ts validates against) is the
 * TypeBox schema, keyword for keyword; `npx tsx scripts/gen-crds.ts` rewrites it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { renderJsonSchemaModule, workloadSpreadJsonSchema } from './json-schema-module.ts';
import { WORKLOADSPREAD_JSON_SCHEMA } from './workloadspread-json-schema.ts';
import { decodeWorkloadSpread } from './decode.ts';

test('the checked-in module is what the generator writes from the TypeBox schema', () => {
  assert.deepEqual(WORKLOADSPREAD_JSON_SCHEMA, workloadSpreadJsonSchema());
  assert.equal(readFileSync(new URL('./workloadspread-json-schema.ts', import.meta.url), 'utf8'), renderJsonSchemaModule(), 'run `npx tsx scripts/gen-crds.ts`');
});

test('decoding validates against it: a wrong field type is refused and named', () => {
  const ws = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'w', namespace: 'ns' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, subsets: [{ name: 'a', maxReplicas: 2 }] } };
  assert.equal(decodeWorkloadSpread(ws).ok, true);
  const bad = decodeWorkloadSpread({ ...ws, spec: { ...ws.spec, subsets: { name: 'a' } } });
  assert.equal(bad.ok, false);
  assert.match((bad as { error: string }).error, /spec\.subsets/);
});
