/**
 * The object store: resourceVersions, optimistic concurrency, the history
 * window (watch replay, "too old", compaction), snapshots at older versions,
 * and synchronous in-order dispatch even when a listener writes.
 * Property: for random write sequences, a snapshot at any retained version
 * equals the state recorded at that version, and a watch from it replays
 * exactly the later writes.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeObject } from '../../k8s/types.ts';
import { ObjectStore, type StoreEvent } from './storage.ts';

const cm = (name: string, ns = 'default', data: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });
const R = '/configmaps';

describe('ObjectStore writes', () => {
  test('one global, strictly increasing resourceVersion across resources', () => {
    const s = new ObjectStore();
    const a = s.create(R, cm('a'));
    const b = s.create('/secrets', cm('b'));
    assert.ok(a.ok && b.ok);
    assert.equal(a.object.metadata?.resourceVersion, '1');
    assert.equal(b.object.metadata?.resourceVersion, '2');
    const u = s.update(R, { ...cm('a'), data: { x: 'y' } }, '1');
    assert.ok(u.ok);
    assert.equal(u.object.metadata?.resourceVersion, '3');
    assert.equal(s.resourceVersion, 3);
  });

  test('create of an existing key, update of a stale or missing one, delete of a missing one', () => {
    const s = new ObjectStore();
    s.create(R, cm('a'));
    assert.deepEqual(s.create(R, cm('a')), { ok: false, reason: 'exists' });
    assert.deepEqual(s.update(R, cm('a'), '0'), { ok: false, reason: 'conflict' });
    assert.deepEqual(s.update(R, cm('zz'), '1'), { ok: false, reason: 'notFound' });
    assert.deepEqual(s.delete(R, 'default', 'zz'), { ok: false, reason: 'notFound' });
    assert.deepEqual(s.delete(R, 'default', 'a', '7'), { ok: false, reason: 'conflict' });
  });

  test('delete answers the last state stamped with the deletion resourceVersion', () => {
    const s = new ObjectStore();
    s.create(R, cm('a', 'default', { k: 'v' }));
    const d = s.delete(R, 'default', 'a');
    assert.ok(d.ok);
    assert.equal(d.object.metadata?.resourceVersion, '2');
    assert.deepEqual(d.object['data'], { k: 'v' });
    assert.equal(s.get(R, 'default', 'a'), undefined);
  });

  test('list is in key order, per namespace or across all', () => {
    const s = new ObjectStore();
    for (const [n, ns] of [['b', 'x'], ['a', 'y'], ['c', 'x'], ['a', 'x']] as const) s.create(R, cm(n, ns));
    assert.deepEqual(s.list(R).map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`), ['x/a', 'x/b', 'x/c', 'y/a']);
    assert.deepEqual(s.list(R, 'y').map((o) => o.metadata?.name), ['a']);
  });
});

describe('ObjectStore history and watches', () => {
  test('a watch from a version replays later events of its resource and namespace, then follows live', () => {
    const s = new ObjectStore();
    s.create(R, cm('a'));
    s.create(R, cm('b', 'other'));
    s.create('/secrets', cm('s'));
    s.update(R, { ...cm('a'), data: { v: '1' } }, '1');
    const seen: string[] = [];
    const w = s.watch(R, 'default', 1, (e) => seen.push(`${e.type} ${e.key} ${e.rv}`));
    assert.ok(w.ok);
    s.delete(R, 'default', 'a');
    assert.deepEqual(seen, ['MODIFIED default/a 4', 'DELETED default/a 5']);
    if (w.ok) w.cancel();
    s.create(R, cm('c'));
    assert.equal(seen.length, 2);
  });

  test('the history is bounded: older versions are too old, with the horizon to report', () => {
    const s = new ObjectStore({ historyLimit: 3 });
    for (let i = 0; i < 5; i++) s.create(R, cm(`n${i}`));
    assert.equal(s.horizon, 2);
    assert.deepEqual(s.watch(R, undefined, 1, () => {}), { ok: false, reason: 'tooOld', oldest: 2 });
    const ok = s.watch(R, undefined, 2, () => {});
    assert.ok(ok.ok);
    assert.deepEqual(s.watch(R, undefined, 9, () => {}), { ok: false, reason: 'future', current: 5 });
  });

  test('compact drops everything before now', () => {
    const s = new ObjectStore();
    s.create(R, cm('a'));
    s.create(R, cm('b'));
    s.compact();
    assert.equal(s.watch(R, undefined, 1, () => {}).ok, false);
    assert.equal(s.watch(R, undefined, 2, () => {}).ok, true);
    assert.equal(s.listAt(R, undefined, 1).ok, false);
  });

  test('a listener that writes while notified: every listener still sees events in order, once', () => {
    const s = new ObjectStore();
    const first: number[] = [];
    const second: number[] = [];
    s.watch(undefined, undefined, undefined, (e) => {
      first.push(e.rv);
      if (e.key === 'default/trigger') s.create(R, cm('echo'));
    });
    s.watch(undefined, undefined, undefined, (e) => second.push(e.rv));
    s.create(R, cm('trigger'));
    assert.deepEqual(first, [1, 2]);
    assert.deepEqual(second, [1, 2]);
  });

  test('a throwing listener does not break the write or the others', () => {
    const s = new ObjectStore();
    const seen: number[] = [];
    s.watch(R, undefined, undefined, () => {
      throw new Error('boom');
    });
    s.watch(R, undefined, undefined, (e) => seen.push(e.rv));
    assert.ok(s.create(R, cm('a')).ok);
    assert.deepEqual(seen, [1]);
  });

  test('property: snapshots and replays agree with what was written', () => {
    const op = fc.record({ kind: fc.constantFrom('create', 'update', 'delete'), name: fc.constantFrom('a', 'b', 'c', 'd'), ns: fc.constantFrom('x', 'y'), value: fc.string({ maxLength: 3 }) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.integer({ min: 1, max: 50 }), (ops, limit) => {
        const s = new ObjectStore({ historyLimit: limit });
        const states = new Map<number, string[]>([[0, []]]);
        const events: StoreEvent[] = [];
        s.watch(R, undefined, undefined, (e) => events.push(e));
        for (const o of ops) {
          const current = s.get(R, o.ns, o.name);
          if (o.kind === 'create' && current === undefined) s.create(R, cm(o.name, o.ns, { v: o.value }));
          else if (o.kind === 'update' && current !== undefined) s.update(R, cm(o.name, o.ns, { v: o.value }), current.metadata?.resourceVersion ?? '');
          else if (o.kind === 'delete' && current !== undefined) s.delete(R, o.ns, o.name);
          states.set(s.resourceVersion, s.list(R).map((x) => `${x.metadata?.namespace}/${x.metadata?.name}=${String((x['data'] as Record<string, string>)['v'])}`));
        }
        for (const [rv, expected] of states) {
          const snap = s.listAt(R, undefined, rv);
          if (rv < s.horizon) {
            assert.equal(snap.ok, false);
            continue;
          }
          assert.ok(snap.ok);
          assert.deepEqual(snap.items.map((x) => `${x.metadata?.namespace}/${x.metadata?.name}=${String((x['data'] as Record<string, string>)['v'])}`), expected);
          const replayed: number[] = [];
          const w = s.watch(R, undefined, rv, (e) => replayed.push(e.rv));
          assert.ok(w.ok);
          if (w.ok) w.cancel();
          assert.deepEqual(replayed, events.filter((e) => e.rv > rv).map((e) => e.rv));
        }
      }),
    );
  });
});
