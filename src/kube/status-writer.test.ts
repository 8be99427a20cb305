/**
 * StatusWriter against the embedded API server: a write carries the copy's
 * resourceVersion (a stale copy → Conflict, nothing overwritten), success
 * refreshes the process-local copy, NotFound drops it, a copy without a
 * resourceVersion is refused, and getFresh reads past the caches.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { KubeObject } from '../k8s/types.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import type { ClientTestBed } from '../testing/client-test-bed.ts';
import { createNamespace, createObject, startKubeTestBed, T0, workloadSpread } from '../testing/kube-bed.ts';
import { StatusWriter } from './status-writer.ts';
import { WorkloadSpreadState } from './ws-state.ts';

let clock: VirtualClock;
let bed: ClientTestBed;

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startKubeTestBed(clock, generateServingCertificate());
});
after(() => bed.close());

const status = (missing: number) => ({ observedGeneration: 1, subsetStatuses: [{ name: 'a', replicas: 0, missingReplicas: missing }] });

describe('StatusWriter', () => {
  test('writes the status conditionally and remembers the stored object', async () => {
    const ns = await createNamespace(bed);
    const created = await createObject<WorkloadSpread & KubeObject>(bed, workloadSpread(ns, 'w', [{ name: 'a', maxReplicas: 3 }]));
    const state = new WorkloadSpreadState();
    const writes: string[] = [];
    const writer = new StatusWriter({ client: bed.client, state, metrics: { statusWrite: (source, result) => writes.push(`${source}:${result}`) } });

    const first = await writer.writeStatus(created, status(3), 'webhook');
    assert.ok(first.ok, !first.ok ? first.message : '');
    assert.equal(first.ws.status?.subsetStatuses?.[0]?.missingReplicas, 3);
    assert.equal(state.lastWritten(ns, 'w')?.metadata.resourceVersion, first.ws.metadata.resourceVersion);

    const stale = await writer.writeStatus(created, status(1));
    assert.equal(stale.ok, false);
    assert.equal(!stale.ok && stale.reason, 'Conflict');
    const stored = bed.server.control.get('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, 'w');
    assert.ok(stored.ok);
    assert.equal((stored.value as unknown as WorkloadSpread).status?.subsetStatuses?.[0]?.missingReplicas, 3, 'the stale write changed nothing');
    assert.equal(state.lastWritten(ns, 'w')?.metadata.resourceVersion, first.ws.metadata.resourceVersion, 'a failed write does not touch the local copy');
    assert.deepEqual(writes, ['webhook:ok', 'controller:Conflict']);

    const fresh = await writer.getFresh(ns, 'w');
    assert.ok(fresh.ok);
    const again = await writer.writeStatus(fresh.ws, status(2));
    assert.ok(again.ok, 'a re-read copy writes');
    assert.equal(again.ws.spec.subsets[0]?.name, 'a', 'the spec is untouched');
  });

  test('NotFound drops the remembered copy; getFresh reports NotFound', async () => {
    const ns = await createNamespace(bed);
    const created = await createObject<WorkloadSpread & KubeObject>(bed, workloadSpread(ns, 'gone', [{ name: 'a' }]));
    const state = new WorkloadSpreadState();
    const writer = new StatusWriter({ client: bed.client, state });
    state.remember(created);
    const deleted = await bed.server.control.delete('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, 'gone');
    assert.ok(deleted.ok);
    const r = await writer.writeStatus(created, status(0));
    assert.equal(!r.ok && r.reason, 'NotFound');
    assert.equal(state.lastWritten(ns, 'gone'), undefined);
    const fresh = await writer.getFresh(ns, 'gone');
    assert.equal(!fresh.ok && fresh.reason, 'NotFound');
  });

  test('a copy without a resourceVersion is never written blindly', async () => {
    const writer = new StatusWriter({ client: bed.client, state: new WorkloadSpreadState() });
    const r = await writer.writeStatus(workloadSpread('x', 'w', [{ name: 'a' }]), status(0));
    assert.equal(!r.ok && r.reason, 'Error');
    assert.match(!r.ok ? r.message : '', /refusing an unconditional status write/);
  });
});
