import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { chooseSubset } from '../core/subset-choice.ts';
import { VERSION_IGNORED } from '../api/keys.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { createNamespace, createObject, startKubeTestBed, workloadSpread } from '../testing/kube-bed.ts';
import { StatusWriter } from '../kube/status-writer.ts';
import { WorkloadSpreadState } from '../kube/ws-state.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { testBedCertificate, type ClientTestBed } from '../testing/client-test-bed.ts';
import { GroupCommit, type CommitOutcome, type Decide, type Decision, type GroupCommitStore } from './group-commit.ts';

const pod = (name: string): Pod => ({ metadata: { name, namespace: 'x' }, spec: { containers: [{ name: 'c' }] } });

/** A decide that reserves a subset for `name` with core's chooseSubset. */
const reserve =
  (clock: VirtualClock, name: string): Decide<string> =>
  (ws) => {
    if (ws === undefined) return { value: 'gone' };
    const choice = chooseSubset({ ws, pod: pod(name), version: VERSION_IGNORED, workloadReplicas: () => ({ ok: true, replicas: 0 }), now: clock.now(), newUid: () => 'u' });
    if (choice.kind !== 'chosen') return { value: choice.kind };
    return choice.status === undefined ? { value: choice.subset } : { value: choice.subset, status: choice.status };
  };

describe('group commit against the API server', () => {
  const clock = new VirtualClock();
  let bed: ClientTestBed;
  let ns: string;
  before(async () => {
    bed = await startKubeTestBed(clock, testBedCertificate());
  });
  after(async () => bed.close());
  beforeEach(async () => {
    ns = await createNamespace(bed, 'gc');
    bed.server.control.clearFaults();
    bed.server.control.resetCounters();
  });

  /** A replica's group commit; `informer` plays the (possibly stale) informer copy. */
  const replica = async (client = bed.client, random = () => 0): Promise<{ commit: GroupCommit; state: WorkloadSpreadState; informer: Map<string, WorkloadSpread>; conflicts: number[]; batches: number[] }> => {
    const state = new WorkloadSpreadState();
    const writer = new StatusWriter({ client, state });
    const informer = new Map<string, WorkloadSpread>();
    const store: GroupCommitStore = {
      withLock: (uid, fn) => state.withLock(uid, fn),
      freshest: (namespace, name) => state.freshest(informer.get(`${namespace}/${name}`), namespace, name),
      getFresh: (namespace, name) => writer.getFresh(namespace, name),
      writeStatus: (ws, status) => writer.writeStatus(ws, status, 'webhook'),
    };
    const conflicts: number[] = [];
    const batches: number[] = [];
    const commit = new GroupCommit({ clock, store, random, metrics: { conflict: () => conflicts.push(1), batchSize: (n) => batches.push(n) } });
    return { commit, state, informer, conflicts, batches };
  };

  const spread = async (subsets: WorkloadSpread['spec']['subsets']): Promise<WorkloadSpread> => createObject<WorkloadSpread & KubeObject>(bed, workloadSpread(ns, 'ws', subsets));
  const stored = async (): Promise<WorkloadSpread> => bed.client.get<WorkloadSpread>(WORKLOADSPREAD_REF, 'ws', { namespace: ns });
  const statusWrites = (): number => bed.server.control.requestCount({ resource: 'workloadspreads', subresource: 'status', verb: 'update' });
  const run = async <T>(promises: Promise<T>[]): Promise<T[]> => {
    const all = Promise.all(promises);
    await clock.settle();
    return all;
  };

  test('200 concurrent admissions: far fewer writes than admissions, no subset above its limit, every reservation stored', async () => {
    const ws = await spread([
      { name: 'a', maxReplicas: 30 },
      { name: 'b', maxReplicas: 50 },
      { name: 'c', maxReplicas: 100 },
    ]);
    const r = await replica();
    r.informer.set(`${ns}/ws`, ws);
    const key = { uid: ws.metadata.uid ?? '', namespace: ns, name: 'ws' };
    const outcomes = await run(Array.from({ length: 200 }, (_, i) => r.commit.submit(key, reserve(clock, `p${i}`))));
    const chosen = outcomes.map((o) => (o.ok ? o.value : `error: ${o.error}`));
    const count = (s: string): number => chosen.filter((c) => c === s).length;
    assert.deepEqual([count('a'), count('b'), count('c'), count('none')], [30, 50, 100, 20]);
    // Arrival order decides: the first 30 admissions fill a.
    assert.deepEqual(chosen.slice(0, 30), Array(30).fill('a'));
    assert.ok(statusWrites() <= 5, `status writes: ${statusWrites()}`);
    assert.equal(r.batches.reduce((s, n) => s + n, 0), 180, 'every reserving admission rode exactly one successful write');
    const statuses = (await stored()).status?.versionedSubsetStatuses?.[VERSION_IGNORED] ?? [];
    assert.deepEqual(
      statuses.map((s) => [s.name, s.missingReplicas, Object.keys(s.creatingPods ?? {}).length]),
      [
        ['a', 0, 30],
        ['b', 0, 50],
        ['c', 0, 100],
      ],
    );
  });

  test('an admission that needs no write is answered without a write', async () => {
    const ws = await spread([{ name: 'a', maxReplicas: 5 }, { name: 'b' }]);
    const r = await replica();
    r.informer.set(`${ns}/ws`, ws);
    const key = { uid: ws.metadata.uid ?? '', namespace: ns, name: 'ws' };
    // Fill a, then b (unlimited) takes the rest without bookkeeping.
    await run(Array.from({ length: 5 }, (_, i) => r.commit.submit(key, reserve(clock, `p${i}`))));
    const before = statusWrites();
    const [o] = await run([r.commit.submit(key, reserve(clock, 'late'))]);
    assert.deepEqual(o && o.ok && o.value, 'b');
    // A retried admission of an already recorded pod: same subset, no write.
    const [retry] = await run([r.commit.submit(key, reserve(clock, 'p3'))]);
    assert.deepEqual(retry && retry.ok && retry.value, 'a');
    assert.equal(statusWrites(), before);
  });

  test('a stale informer copy loses to the copy this process wrote', async () => {
    const ws = await spread([{ name: 'a', maxReplicas: 2 }, { name: 'b', maxReplicas: 2 }]);
    const r = await replica();
    r.informer.set(`${ns}/ws`, ws); // never updated: stale after the first write
    const key = { uid: ws.metadata.uid ?? '', namespace: ns, name: 'ws' };
    const values: string[] = [];
    for (let i = 0; i < 4; i++) {
      const [o] = await run([r.commit.submit(key, reserve(clock, `p${i}`))]);
      values.push(o?.ok ? String(o.value) : 'error');
    }
    assert.deepEqual(values, ['a', 'a', 'b', 'b']);
    assert.equal(r.conflicts.length, 0, 'no conflict: the local copy was used');
  });

  test('injected conflicts are retried (re-read from the API, back-off on the clock) and succeed', async () => {
    const ws = await spread([{ name: 'a', maxReplicas: 3 }, { name: 'b', maxReplicas: 3 }]);
    const r = await replica();
    r.informer.set(`${ns}/ws`, ws);
    const key = { uid: ws.metadata.uid ?? '', namespace: ns, name: 'ws' };
    const fault = bed.server.control.injectFault({ resource: 'workloadspreads', subresource: 'status', verb: 'update', status: 409, times: 3, message: 'injected conflict' });
    const t0 = clock.now();
    const [o] = await run([r.commit.submit(key, reserve(clock, 'p0'))]);
    assert.ok(o?.ok, JSON.stringify(o));
    assert.equal(o.value, 'a');
    assert.equal(fault.hits, 3);
    assert.equal(r.conflicts.length, 3);
    assert.equal(clock.now() - t0 >= 10 + 50 + 250, true, `back-off of 10, 50, 250 ms on the clock (${clock.now() - t0} ms passed)`);
    assert.equal(bed.server.control.requestCount({ resource: 'workloadspreads', verb: 'get' }) >= 3, true, 're-read from the API server after each conflict');
  });

  test('a fourth conflict fails the admissions with a clear message, and nothing is stored', async () => {
    const ws = await spread([{ name: 'a', maxReplicas: 3 }, { name: 'b', maxReplicas: 3 }]);
    const r = await replica();
    r.informer.set(`${ns}/ws`, ws);
    const key = { uid: ws.metadata.uid ?? '', namespace: ns, name: 'ws' };
    // p0 alone meets conflicts 1–4; p1 joins at the second round and meets its fourth at the fifth.
    bed.server.control.injectFault({ resource: 'workloadspreads', subresource: 'status', verb: 'update', status: 409, times: 5 });
    const outcomes = await run([r.commit.submit(key, reserve(clock, 'p0')), r.commit.submit(key, reserve(clock, 'p1'))]);
    for (const o of outcomes) {
      assert.equal(o.ok, false);
      if (o.ok) continue;
      assert.equal(o.conflict, true);
      assert.match(o.error, new RegExp(`status of WorkloadSpread ${ns}/ws could not be updated: 4 conflicting writes`));
    }
    assert.equal((await stored()).status?.versionedSubsetStatuses, undefined);
    // The next admission goes through once the conflicts stop.
    const [next] = await run([r.commit.submit(key, reserve(clock, 'p2'))]);
    assert.ok(next?.ok);
  });

  test('a non-conflict write error fails the batch at once (no retry)', async () => {
    const ws = await spread([{ name: 'a', maxReplicas: 3 }, { name: 'b', maxReplicas: 3 }]);
    const r = await replica();
    r.informer.set(`${ns}/ws`, ws);
    const key = { uid: ws.metadata.uid ?? '', namespace: ns, name: 'ws' };
    const fault = bed.server.control.injectFault({ resource: 'workloadspreads', subresource: 'status', verb: 'update', status: 500, times: 1, message: 'etcd down' });
    const [o] = await run([r.commit.submit(key, reserve(clock, 'p0'))]);
    assert.equal(o?.ok, false);
    assert.match((o as { error: string }).error, /cannot update the status of WorkloadSpread .*etcd down/);
    assert.equal(fault.hits, 1);
  });

  test('two replicas over one WorkloadSpread: conflicts resolve by re-deciding, no subset above its limit', async () => {
    const ws = await spread([
      { name: 'a', maxReplicas: 7 },
      { name: 'b', maxReplicas: 11 },
      { name: 'c', maxReplicas: 13 },
    ]);
    const r1 = await replica(bed.client, Math.random);
    const r2 = await replica(await bed.newClient(), Math.random);
    r1.informer.set(`${ns}/ws`, ws);
    r2.informer.set(`${ns}/ws`, ws);
    const key = { uid: ws.metadata.uid ?? '', namespace: ns, name: 'ws' };
    const submits: Promise<CommitOutcome<string>>[] = [];
    for (let i = 0; i < 40; i++) submits.push((i % 2 === 0 ? r1 : r2).commit.submit(key, reserve(clock, `p${i}`)));
    const outcomes = await run(submits);
    const placed = outcomes.filter((o) => o.ok).map((o) => (o as { value: string }).value);
    const count = (s: string): number => placed.filter((c) => c === s).length;
    assert.ok(count('a') <= 7 && count('b') <= 11 && count('c') <= 13, JSON.stringify(placed));
    assert.ok(r1.conflicts.length + r2.conflicts.length > 0, 'the replicas did collide');
    const statuses = (await stored()).status?.versionedSubsetStatuses?.[VERSION_IGNORED] ?? [];
    for (const s of statuses) {
      assert.equal(Object.keys(s.creatingPods ?? {}).length, count(s.name), `stored reservations of ${s.name} match the answers`);
    }
  });

  test('a WorkloadSpread deleted meanwhile is decided as gone', async () => {
    const ws = await spread([{ name: 'a', maxReplicas: 3 }, { name: 'b', maxReplicas: 3 }]);
    const r = await replica();
    const key = { uid: ws.metadata.uid ?? '', namespace: ns, name: 'ws' };
    // The informer no longer has it and nothing was written locally.
    const [o] = await run([r.commit.submit(key, reserve(clock, 'p0'))]);
    assert.deepEqual(o?.ok && o.value, 'gone');
  });
});

describe('group commit: no wait without a reason (issue 13)', () => {
  /** One WorkloadSpread in memory whose status writes wait until released. */
  const gatedStore = (clock: VirtualClock, subsets: WorkloadSpread['spec']['subsets'] = [{ name: 'a', maxReplicas: 2 }, { name: 'rest' }]) => {
    let ws: WorkloadSpread = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'ws', namespace: 'x', uid: 'ws-uid', resourceVersion: '1' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets } };
    const gates: (() => void)[] = [];
    let writes = 0;
    let fail = false;
    const store: GroupCommitStore = {
      withLock: (_uid, fn) => fn(),
      freshest: () => ws,
      getFresh: async () => ({ ok: true, ws }),
      writeStatus: async (base, status) => {
        writes++;
        await clock.activity.waitFor(new Promise<void>((release) => gates.push(release)));
        if (fail) return { ok: false, reason: 'Error', message: 'injected', error: new Error('injected') };
        if (base.metadata.resourceVersion !== ws.metadata.resourceVersion) return { ok: false, reason: 'Conflict', message: 'conflict', error: new Error('conflict') };
        ws = { ...ws, metadata: { ...ws.metadata, resourceVersion: String(Number(ws.metadata.resourceVersion) + 1) }, status };
        return { ok: true, ws };
      },
    };
    return {
      store,
      key: { uid: 'ws-uid', namespace: 'x', name: 'ws' },
      release: () => gates.splice(0).forEach((g) => g()),
      pendingWrites: () => gates.length,
      writes: () => writes,
      failWrites: () => void (fail = true),
    };
  };

  /** Like `reserve`, marking alone what takes no quota (the unlimited subset `rest`, no subset), as pod admission does. */
  const admit =
    (clock: VirtualClock, name: string): Decide<string> =>
    (ws) => {
      const d = reserve(clock, name)(ws) as Decision<string>;
      return d.status !== undefined ? d : { ...d, alone: d.value === 'rest' || d.value === 'none' };
    };

  /** Runs what can run without moving virtual time (the gated writes stay pending), then lets answers propagate. */
  const idle = async (clock: VirtualClock): Promise<void> => {
    await clock.quiesce();
    await new Promise((r) => setImmediate(r));
  };

  const answered = (p: Promise<unknown>): { done: boolean } => {
    const state = { done: false };
    void p.then(() => (state.done = true));
    return state;
  };

  test('an unlimited placement decided after a reservation of its batch is answered before that write lands', async () => {
    const clock = new VirtualClock();
    const g = gatedStore(clock, [{ name: 'a', maxReplicas: 2 }, { name: 'rest' }]);
    const commit = new GroupCommit({ clock, store: g.store, random: () => 0 });
    const first = commit.submit(g.key, admit(clock, 'p1'));
    await idle(clock);
    // Both see a with one place left while p1 is written: both would reserve, so both wait for the next round.
    const second = commit.submit(g.key, admit(clock, 'p2'));
    const third = commit.submit(g.key, admit(clock, 'p3'));
    const s3 = answered(third);
    await idle(clock);
    assert.equal(s3.done, false);
    g.release();
    await idle(clock);
    // Round two: p2 takes a's last place (written now), p3 then finds a full → rest, answered without waiting for that write.
    assert.equal(g.pendingWrites(), 1, "round two's write is in flight");
    assert.equal(s3.done, true, 'p3 (rest) did not wait for the write of p2');
    g.release();
    await idle(clock);
    assert.deepEqual([await first, await second, await third].map((o) => (o.ok ? o.value : o.error)), ['a', 'a', 'rest']);
    assert.equal(g.writes(), 2);
  });

  test('during a write, arrivals that take no quota are answered at once (side lane); those that reserve wait for the next round', async () => {
    const clock = new VirtualClock();
    const g = gatedStore(clock, [{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 1 }, { name: 'rest' }]);
    const commit = new GroupCommit({ clock, store: g.store, random: () => 0 });
    const first = commit.submit(g.key, admit(clock, 'p1'));
    await idle(clock);
    assert.equal(g.pendingWrites(), 1);
    // During p1's write p2 would reserve b: it waits for a write.
    const second = commit.submit(g.key, admit(clock, 'p2'));
    const s2 = answered(second);
    await idle(clock);
    assert.equal(s2.done, false, 'p2 reserves: it waits for a write');
    assert.equal(g.pendingWrites(), 1, 'no second write while the first is in flight');
    g.release();
    await idle(clock);
    assert.equal(g.pendingWrites(), 1, "p2 is decided again in the next round, which writes its reservation");
    // During p2's write, p3 finds a and b full on that round's state → rest, answered at once.
    const third = commit.submit(g.key, admit(clock, 'p3'));
    const s3 = answered(third);
    await idle(clock);
    assert.equal(s3.done, true, 'p3 answered while p2 is being written');
    assert.equal(s2.done, false);
    g.release();
    await idle(clock);
    assert.deepEqual([await first, await second, await third].map((o) => (o.ok ? o.value : o.error)), ['a', 'b', 'rest']);
    assert.equal(g.writes(), 2);
    const final = await g.store.getFresh('x', 'ws');
    assert.ok(final.ok);
    const creating = (name: string) => Object.keys(final.ws.status?.versionedSubsetStatuses?.[VERSION_IGNORED]?.find((s) => s.name === name)?.creatingPods ?? {}).length;
    assert.deepEqual([creating('a'), creating('b')], [1, 1], 'nothing above its limit');
  });

  test('a decision without a status that is not alone still waits for the write it saw', async () => {
    const clock = new VirtualClock();
    const g = gatedStore(clock);
    const commit = new GroupCommit({ clock, store: g.store, random: () => 0 });
    const reserveThenPlain: Decide<string>[] = [admit(clock, 'p1'), () => ({ value: 'bookkeeping' })];
    const outcomes = reserveThenPlain.map((d) => commit.submit(g.key, d));
    const plain = answered(outcomes[1] as Promise<unknown>);
    await idle(clock);
    assert.equal(plain.done, false);
    // Arriving during the write: not alone, so it goes to the next round (which writes nothing and answers it).
    const late = commit.submit(g.key, () => ({ value: 'late' }));
    const lateState = answered(late);
    await idle(clock);
    assert.equal(lateState.done, false);
    g.release();
    await idle(clock);
    assert.deepEqual((await Promise.all([...outcomes, late])).map((o) => (o.ok ? o.value : o.error)), ['a', 'bookkeeping', 'late']);
    assert.equal(g.writes(), 1);
  });

  test('a failed write fails the reservations it carried, not the answers given alone', async () => {
    const clock = new VirtualClock();
    const g = gatedStore(clock, [{ name: 'a', maxReplicas: 1 }, { name: 'rest' }]);
    const commit = new GroupCommit({ clock, store: g.store, random: () => 0 });
    const first = commit.submit(g.key, admit(clock, 'p1'));
    await idle(clock);
    const second = commit.submit(g.key, admit(clock, 'p2'));
    await idle(clock);
    g.failWrites();
    g.release();
    await idle(clock);
    assert.deepEqual([await first, await second].map((o) => (o.ok ? o.value : 'failed')), ['failed', 'rest']);
  });
});

describe('an admission waits at most waitTimeoutMs', () => {
  test('a status writer that never answers: each waiting admission fails at its own deadline, and no wait timer is left behind', async () => {
    const clock = new VirtualClock();
    const ws: WorkloadSpread = { ...workloadSpread('x', 'ws', [{ name: 'a', maxReplicas: 5 }]), metadata: { name: 'ws', namespace: 'x', uid: 'u1', resourceVersion: '1' } } as WorkloadSpread;
    const store: GroupCommitStore = {
      withLock: (_uid, fn) => fn(),
      freshest: () => ws,
      getFresh: async () => ({ ok: true, ws }),
      // The write hangs for ten minutes (an API server that accepted the connection and went silent).
      writeStatus: () => clock.sleep(600_000).then(() => ({ ok: false, reason: 'Error', message: 'late', error: undefined })),
    };
    const commit = new GroupCommit({ clock, store, random: () => 0, waitTimeoutMs: 60_000 });
    const key = { uid: 'u1', namespace: 'x', name: 'ws' };
    const waits = () => clock.pendingTimers().filter((t) => t.name === 'group-commit wait').length;
    const first = commit.submit(key, reserve(clock, 'p1'));
    await clock.advance(10_000);
    const second = commit.submit(key, reserve(clock, 'p2'));
    assert.equal(waits(), 1, 'one timer for every waiting admission');
    await clock.advance(50_000);
    const one = await first;
    assert.deepEqual(one, { ok: false, conflict: false, error: 'no answer from the WorkloadSpread status writer within 60000 ms' });
    let settledSecond = false;
    void second.then(() => (settledSecond = true));
    await clock.advance(9_999);
    assert.equal(settledSecond, false, 'the second waits its own 60 s');
    await clock.advance(1);
    const two = await second;
    assert.equal(two.ok, false);
    assert.equal(waits(), 0, 'nothing waits: no timer left');
  });
});
