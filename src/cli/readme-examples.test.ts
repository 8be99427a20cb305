/**
 * What README.md shows is what the commands print, and `kubectl wait
 * --for=condition=Ready` works: the real `workloadspread cluster` (the manager
 * inside) as a child process, the real kubectl 1.32 (src/testing/k8s-tools.ts).
 * examples/zone-ratio.yaml turns Ready; a WorkloadSpread whose workload does
 * not exist is not Ready, and kubectl wait times out on it; the printer
 * columns read the condition and the counts. The README blocks are rewritten by
 * `npx tsx scripts/readme-examples.ts`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { README, readmeExamples, sameExample, withCluster, zoneRatioExamples } from '../testing/readme-examples.ts';

const ORPHAN = `apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: orphan, namespace: default}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: not-there}
  subsets: [{name: a}]
`;

describe('kubectl wait and the README examples, on workloadspread cluster', () => {
  test('kubectl wait --for=condition=Ready returns for a healthy WorkloadSpread, times out for one without its workload; README shows the real output', async () => {
    await withCluster(async (s) => {
      const real = await zoneRatioExamples(s);
      assert.match(real['kubectl-wait'] ?? '', /^workloadspread\.apps\.kruise\.io\/api-zones condition met$/m);
      const rows = (real['kubectl-get-ws'] ?? '').split('\n').slice(1, 3);
      assert.match(rows[0] ?? '', /^NAME +WORKLOADNAME +WORKLOADKIND +ADAPTIVE +SUBSETS +READY +REASON +DESIRED +PLACED +READY-PODS +AGE$/);
      assert.match(rows[1] ?? '', /^api-zones +api +Deployment +3 +True +Spread +10 +10 +10 +\d+s$/);

      // Not Ready: kubectl wait gives up (exit 1), and the columns say why.
      const file = `${s.dir}/orphan.yaml`;
      writeFileSync(file, ORPHAN);
      assert.equal((await s.kubectl('apply', '-f', file)).code, 0);
      const waited = await s.kubectl('wait', '--for=condition=Ready', 'ws/orphan', '--timeout=3s');
      assert.equal(waited.code, 1, waited.stdout);
      assert.match(waited.stderr, /timed out waiting for the condition on workloadspreads\/orphan/);
      const row = await s.kubectl('get', 'ws', 'orphan', '--no-headers');
      assert.match(row.stdout, /^orphan +not-there +Deployment +1 +False +WorkloadNotFound +0 +0 +0 +\d+s\n$/);
      const reconciling = await s.kubectl('wait', '--for=condition=Reconciling', 'ws/orphan', '--timeout=10s');
      assert.equal(reconciling.code, 0, reconciling.stderr);

      const shown = readmeExamples(readFileSync(README, 'utf8'));
      for (const [name, text] of Object.entries(real)) {
        const block = shown.get(name);
        assert.ok(block !== undefined, `README.md has no <!-- example: ${name} --> block`);
        assert.ok(sameExample(name, block.text, text), `README.md's ${name} example is not what the command prints (run npx tsx scripts/readme-examples.ts):\n--- README\n${block.text}--- real\n${text}`);
      }
    });
  });
});
