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
import { ApiReader } from './api-reader.ts';
import { WORKLOADSPREAD_REF } from './refs.ts';
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

  test('neither keeps nor sends back managedFields (the API server keeps them when a write leaves them out)', async () => {
    const ns = await createNamespace(bed);
    const created = await createObject<WorkloadSpread & KubeObject>(bed, workloadSpread(ns, 'mf', [{ name: 'a', maxReplicas: 3 }]));
    const entries = (obj: KubeObject): { manager?: string; subresource?: string }[] => (obj.metadata as { managedFields?: { manager?: string; subresource?: string }[] } | undefined)?.managedFields ?? [];
    assert.ok(entries(created).length > 0, 'the embedded API server records field ownership');
    const state = new WorkloadSpreadState();
    const writer = new StatusWriter({ client: bed.client, state });
    const written = await writer.writeStatus(created, status(3), 'webhook');
    assert.ok(written.ok, !written.ok ? written.message : '');
    assert.equal('managedFields' in written.ws.metadata, false);
    assert.equal('managedFields' in (state.lastWritten(ns, 'mf')?.metadata ?? {}), false);
    const fresh = await writer.getFresh(ns, 'mf');
    assert.ok(fresh.ok);
    assert.equal('managedFields' in fresh.ws.metadata, false);
    const stored = bed.server.control.get('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, 'mf');
    assert.ok(stored.ok);
    const managers = entries(stored.value as KubeObject).map((f) => `${f.manager ?? ''}/${f.subresource ?? ''}`);
    assert.ok(managers.some((m) => m.endsWith('/status')), `the status write is owned as ever: ${managers.join(', ')}`);
    assert.ok(managers.length >= 2, 'the creator\'s entry is kept');
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

describe('requests under the per-object lock skip the client-side rate limiter', () => {
  test('status writes, fresh reads and admission reads go at once with an empty bucket; other requests wait their turn', async () => {
    const ns = await createNamespace(bed);
    const created = await createObject<WorkloadSpread & KubeObject>(bed, workloadSpread(ns, 'limited', [{ name: 'a', maxReplicas: 3 }]));
    // One request a minute, a bucket of one: after the first request every throttled one waits ~60 s of clock.
    const client = await bed.newClient({ rateLimit: { qps: 1 / 60, burst: 1 } });
    const waits: number[] = [];
    const limiter = client.rateLimiter;
    assert.ok(limiter !== undefined);
    limiter.onWait = (ms) => waits.push(ms);
    await client.get(WORKLOADSPREAD_REF, 'limited', { namespace: ns });
    assert.deepEqual(waits, [0], 'the first request takes the only token');

    const started = clock.now();
    const writer = new StatusWriter({ client, state: new WorkloadSpreadState() });
    const admissionReads = new ApiReader(client, { unthrottled: true });
    let answered = false;
    const unthrottled = (async () => {
      const written = await writer.writeStatus(created, status(2), 'webhook');
      assert.ok(written.ok, !written.ok ? written.message : '');
      assert.ok((await writer.getFresh(ns, 'limited')).ok);
      assert.ok('notFound' in (await admissionReads.pod(ns, 'not-yet-cached')));
      answered = true;
    })();
    await clock.quiesce();
    assert.equal(answered, true, 'answered without the clock moving: nothing waited for a token');
    await unthrottled;
    assert.equal(clock.now(), started);
    assert.deepEqual(waits, [0], 'none of them took a token');

    // A controller's reader takes its turn: it waits for the next token (a minute of clock).
    const controllerReads = new ApiReader(client);
    const read = controllerReads.pod(ns, 'not-yet-cached');
    let done = false;
    void read.then(() => (done = true));
    await clock.quiesce();
    assert.equal(done, false, 'the throttled read waits');
    await clock.advance(60_000);
    await read;
    assert.equal(waits.length, 2);
    assert.ok((waits[1] ?? 0) > 50_000, `waited ${waits[1]} ms`);
  });
});
