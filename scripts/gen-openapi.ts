/**
 * Writes src/cluster/apiserver/openapi/builtin-schemas.generated.ts: a compact
 * description of the built-in kinds the embedded API server serves (every
 * field with its type, and the type graph), read from the model classes of
 * @kubernetes/client-node (generated from Kubernetes' own OpenAPI document).
 * Run with `npx tsx scripts/gen-openapi.ts`; the openapi test fails when the
 * checked-in file differs from what this writes.
 *
 * Compact type strings: `string`, `string/byte`, `string/date-time`,
 * `integer/int32`, `integer/int64`, `number/double`, `number`, `boolean`,
 * `int-or-string`, `object`, `any`, `#<definition>` (a reference),
 * `[]<type>` (a list), `{}<type>` (a map).
 */
import { writeFileSync } from 'node:fs';
import { compactSchemas } from '../src/cluster/apiserver/openapi/generate.ts';

const target = new URL('../src/cluster/apiserver/openapi/builtin-schemas.generated.ts', import.meta.url).pathname;
writeFileSync(target, await compactSchemas());
console.log('wrote src/cluster/apiserver/openapi/builtin-schemas.generated.ts');
