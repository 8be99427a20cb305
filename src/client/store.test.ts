/**
 * The store fed watcher events directly: keys, relist swaps (deletes,
 * updates by resourceVersion, adds, handlers seeing the complete new state),
 * indexes through changes, transform, freezing, handler failures, sync.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeObject } from '../k8s/types.ts';
import { memoryLogger } from './logger.ts';
import { keyOf, NAMESPACE_INDEX, objectKey, Store } from './store.ts';

const obj = (name: string, rv: string, extra: { ns?: string; node?: string; labels?: Record<string, string> } = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: extra.ns ?? 'default', resourceVersion: rv, ...(extra.labels !== undefined ? { labels: extra.labels } : {}) },
  spec: { nodeName: extra.node ?? '' },
  status: { big: 'x'.repeat(100) },
});

function recording(store: Store): string[] {
  const log: string[] = [];
  store.onAdd((o) => log.push(`add ${objectKey(o)}`));
  store.onUpdate((old, o) => log.push(`update ${objectKey(o)} ${old.metadata?.resourceVersion}->${o.metadata?.resourceVersion}`));
  store.onDelete((o) => log.push(`delete ${objectKey(o)}`));
  return log;
}

function relist(store: Store, items: KubeObject[], rv = '100'): void {
  store.handle({ type: 'init' });
  for (const i of items) store.handle({ type: 'initApply', object: i });
  store.handle({ type: 'initDone', resourceVersion: rv });
}

describe('Store', () => {
  test('keys: namespace/name, or name for cluster-scoped', () => {
    assert.equal(objectKey(obj('a', '1', { ns: 'x' })), 'x/a');
    assert.equal(objectKey({ metadata: { name: 'node-1' } }), 'node-1');
    assert.equal(keyOf('', 'n'), 'n');
    assert.equal(keyOf(undefined, 'n'), 'n');
  });

  test('a relist is swapped in at once: deletes, updates by version, adds; unchanged objects are silent', () => {
    const store = new Store();
    relist(store, [obj('keep', '1'), obj('change', '1'), obj('drop', '1')]);
    const log = recording(store);
    let sizeSeenByHandlers = -1;
    store.onDelete(() => (sizeSeenByHandlers = store.size));
    store.handle({ type: 'init' });
    store.handle({ type: 'initApply', object: obj('keep', '1') });
    store.handle({ type: 'initApply', object: obj('change', '2') });
    assert.equal(store.size, 3, 'nothing changes before initDone');
    store.handle({ type: 'initApply', object: obj('new', '3') });
    store.handle({ type: 'initDone', resourceVersion: '9' });
    assert.deepEqual(log, ['delete default/drop', 'update default/change 1->2', 'add default/new']);
    assert.equal(sizeSeenByHandlers, 3, 'handlers see the complete new state');
    assert.deepEqual(store.keys().sort(), ['default/change', 'default/keep', 'default/new']);
    assert.equal(store.resourceVersion, '9');
  });

  test('an interrupted relist (init again) discards the partial buffer', () => {
    const store = new Store();
    relist(store, [obj('a', '1')]);
    store.handle({ type: 'init' });
    store.handle({ type: 'initApply', object: obj('half', '2') });
    relist(store, [obj('a', '1'), obj('b', '3')]);
    assert.deepEqual(store.keys().sort(), ['default/a', 'default/b']);
  });

  test('watch events: apply adds or updates, same version is ignored, delete of the unknown is silent', () => {
    const store = new Store();
    relist(store, []);
    const log = recording(store);
    store.handle({ type: 'apply', object: obj('a', '1') });
    store.handle({ type: 'apply', object: obj('a', '1') });
    store.handle({ type: 'apply', object: obj('a', '2') });
    store.handle({ type: 'delete', object: obj('ghost', '3') });
    store.handle({ type: 'delete', object: obj('a', '4') });
    store.handle({ type: 'bookmark', resourceVersion: '10' });
    assert.deepEqual(log, ['add default/a', 'update default/a 1->2', 'delete default/a']);
    assert.equal(store.size, 0);
    assert.equal(store.resourceVersion, '10');
  });

  test('indexes follow adds, updates and deletes; an index added later covers existing objects', () => {
    const store = new Store();
    relist(store, [obj('a', '1', { node: 'n1' }), obj('b', '1', { node: 'n1', ns: 'other' })]);
    store.addIndex('node', (o) => [String((o['spec'] as { nodeName: string }).nodeName)]);
    assert.deepEqual(store.byIndex('node', 'n1').map(objectKey).sort(), ['default/a', 'other/b']);
    store.handle({ type: 'apply', object: obj('a', '2', { node: 'n2' }) });
    assert.deepEqual(store.byIndex('node', 'n1').map(objectKey), ['other/b']);
    assert.deepEqual(store.byIndex('node', 'n2').map(objectKey), ['default/a']);
    store.handle({ type: 'delete', object: obj('b', '3', { ns: 'other' }) });
    assert.deepEqual(store.byIndex('node', 'n1'), []);
    assert.deepEqual(store.indexValues('node'), ['n2']);
    assert.deepEqual(store.list('default').map(objectKey), ['default/a']);
    assert.deepEqual(store.byIndex(NAMESPACE_INDEX, 'other'), []);
    assert.deepEqual(store.byIndex('no-such-index', 'x'), []);
  });

  test('property: indexes always equal a recomputation over the contents', () => {
    const label = fc.constantFrom('x', 'y', 'z');
    const event = fc.oneof(
      fc.record({ t: fc.constant('apply' as const), name: fc.constantFrom('a', 'b', 'c'), ns: fc.constantFrom('n1', 'n2'), l: label }),
      fc.record({ t: fc.constant('delete' as const), name: fc.constantFrom('a', 'b', 'c'), ns: fc.constantFrom('n1', 'n2'), l: label }),
      fc.record({ t: fc.constant('relist' as const), names: fc.subarray(['a', 'b', 'c']), l: label }),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const store = new Store();
        store.addIndex('label', (o) => [o.metadata?.labels?.['l'] ?? '']);
        let rv = 0;
        for (const e of events) {
          if (e.t === 'relist') relist(store, e.names.map((n) => obj(n, String(++rv), { ns: 'n1', labels: { l: e.l } })));
          else store.handle({ type: e.t, object: obj(e.name, String(++rv), { ns: e.ns, labels: { l: e.l } }) });
        }
        for (const value of ['x', 'y', 'z']) {
          const expected = store.list().filter((o) => o.metadata?.labels?.['l'] === value).map(objectKey).sort();
          assert.deepEqual(store.byIndex('label', value).map(objectKey).sort(), expected);
        }
        for (const ns of ['n1', 'n2']) assert.deepEqual(store.list(ns).map(objectKey).sort(), store.list().filter((o) => o.metadata?.namespace === ns).map(objectKey).sort());
      }),
    );
  });

  test('property: sums always equal a recomputation over the contents (per key; a key nothing adds to is gone)', () => {
    const event = fc.oneof(
      fc.record({ t: fc.constant('apply' as const), name: fc.constantFrom('a', 'b', 'c', 'd'), node: fc.constantFrom('', 'n1', 'n2'), w: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ t: fc.constant('delete' as const), name: fc.constantFrom('a', 'b', 'c', 'd'), node: fc.constantFrom('', 'n1', 'n2'), w: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ t: fc.constant('relist' as const), names: fc.subarray(['a', 'b', 'c', 'd']), node: fc.constantFrom('n1', 'n2'), w: fc.integer({ min: 0, max: 9 }) }),
    );
    const weight = (o: KubeObject): number => Number(o.metadata?.labels?.['w'] ?? 0);
    const nodeOf = (o: KubeObject): string => (o['spec'] as { nodeName: string }).nodeName;
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), fc.boolean(), (events, early) => {
        const store = new Store();
        const part = (o: KubeObject) => (nodeOf(o) === '' || weight(o) === 0 ? undefined : { key: nodeOf(o), values: [weight(o), 1] });
        if (early) store.addSum('w', part);
        let rv = 0;
        for (const e of events) {
          if (e.t === 'relist') relist(store, e.names.map((n) => obj(n, String(++rv), { node: e.node, labels: { w: String(e.w) } })));
          else store.handle({ type: e.t, object: obj(e.name, String(++rv), { node: e.node, labels: { w: String(e.w) } }) });
        }
        if (!early) store.addSum('w', part);
        for (const node of ['n1', 'n2', '']) {
          const mine = store.list().filter((o) => part(o)?.key === node);
          const expected = mine.length === 0 ? undefined : [mine.reduce((s, o) => s + weight(o), 0), mine.length];
          assert.deepEqual(store.sumOf('w', node), expected, node);
        }
      }),
    );
  });

  test('property: counts always equal a recomputation over the contents (an object may count under several values or none)', () => {
    const event = fc.oneof(
      fc.record({ t: fc.constant('apply' as const), name: fc.constantFrom('a', 'b', 'c', 'd'), tags: fc.subarray(['x', 'y', 'z']) }),
      fc.record({ t: fc.constant('delete' as const), name: fc.constantFrom('a', 'b', 'c', 'd'), tags: fc.subarray(['x', 'y', 'z']) }),
      fc.record({ t: fc.constant('relist' as const), names: fc.subarray(['a', 'b', 'c', 'd']), tags: fc.subarray(['x', 'y', 'z']) }),
    );
    const tagsOf = (o: KubeObject): string[] => (o.metadata?.labels?.['tags'] ?? '').split(',').filter((t) => t !== '');
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), fc.boolean(), (events, early) => {
        const store = new Store();
        if (early) store.addCount('tags', tagsOf);
        let rv = 0;
        for (const e of events) {
          const labels = { tags: e.tags.join(',') };
          if (e.t === 'relist') relist(store, e.names.map((n) => obj(n, String(++rv), { labels })));
          else store.handle({ type: e.t, object: obj(e.name, String(++rv), { labels }) });
        }
        if (!early) store.addCount('tags', tagsOf);
        for (const tag of ['x', 'y', 'z', '']) assert.equal(store.countOf('tags', tag), store.list().filter((o) => tagsOf(o).includes(tag)).length, tag);
        assert.equal(store.countOf('no such count', 'x'), 0);
      }),
    );
  });

  test('transform runs before caching; freeze makes cached objects immutable', () => {
    const store = new Store<KubeObject>({
      freeze: true,
      transform: (o) => ({ apiVersion: o.apiVersion ?? 'v1', kind: o.kind ?? 'Pod', metadata: { name: o.metadata?.name ?? '', namespace: o.metadata?.namespace ?? '', resourceVersion: o.metadata?.resourceVersion ?? '' } }),
    });
    relist(store, [obj('a', '1')]);
    const cached = store.get('default', 'a');
    assert.ok(cached);
    assert.equal(cached['status'], undefined, 'the transform dropped status');
    assert.throws(() => {
      (cached.metadata as { name: string }).name = 'mutated';
    }, TypeError);
  });

  test('a throwing handler is logged and the others still run', () => {
    const log = memoryLogger();
    const store = new Store({ log });
    const seen: string[] = [];
    store.onAdd(() => {
      throw new Error('handler bug');
    });
    store.onAdd((o) => seen.push(objectKey(o)));
    const throwingIndex = () => {
      throw new Error('index bug');
    };
    store.addIndex('bad', throwingIndex);
    relist(store, [obj('a', '1')]);
    assert.deepEqual(seen, ['default/a']);
    assert.deepEqual(log.lines.map((l) => l.message).sort(), ['event handler failed', 'index function failed']);
    assert.equal(store.size, 1);
  });

  test('unsubscribing a handler', () => {
    const store = new Store();
    let n = 0;
    const off = store.onAdd(() => n++);
    store.handle({ type: 'apply', object: obj('a', '1') });
    off();
    store.handle({ type: 'apply', object: obj('b', '1') });
    assert.equal(n, 1);
  });

  test('hasSynced / waitForSync: resolves at the first complete list; an abort rejects', async () => {
    const store = new Store();
    const ac = new AbortController();
    const aborted = store.waitForSync(ac.signal);
    ac.abort(new Error('gave up'));
    await assert.rejects(aborted, /gave up/);
    const waiting = store.waitForSync();
    store.handle({ type: 'init' });
    store.handle({ type: 'apply', object: obj('a', '1') });
    assert.equal(store.hasSynced(), false);
    store.handle({ type: 'initDone', resourceVersion: '5' });
    await waiting;
    assert.equal(store.hasSynced(), true);
    await store.waitForSync(AbortSignal.abort());
  });
});

describe('Store fed by one watcher per namespace (sinkFor)', () => {
  test('a relist replaces its own namespace only; synced once every namespace has listed', () => {
    const store = new Store<KubeObject>();
    const a = store.sinkFor('a');
    const b = store.sinkFor('b');
    const events: string[] = [];
    store.onAdd((o) => events.push(`add ${objectKey(o)}`));
    store.onDelete((o) => events.push(`delete ${objectKey(o)}`));
    a({ type: 'init' });
    a({ type: 'initApply', object: obj('x', '1', { ns: 'a' }) });
    a({ type: 'initDone', resourceVersion: '1' });
    assert.equal(store.hasSynced(), false, 'namespace b has not listed yet');
    b({ type: 'init' });
    b({ type: 'initApply', object: obj('y', '2', { ns: 'b' }) });
    b({ type: 'initDone', resourceVersion: '2' });
    assert.equal(store.hasSynced(), true);
    // b relists (a 410, say) and finds nothing: a's object stays.
    b({ type: 'init' });
    b({ type: 'initDone', resourceVersion: '3' });
    assert.deepEqual(store.keys(), ['a/x']);
    assert.deepEqual(events, ['add a/x', 'add b/y', 'delete b/y']);
    // Watch events of either namespace apply as usual.
    a({ type: 'apply', object: obj('z', '4', { ns: 'a' }) });
    assert.deepEqual(store.keys().sort(), ['a/x', 'a/z']);
  });

  test('the same sink is handed out for the same namespace (a relist spans calls)', () => {
    const store = new Store<KubeObject>();
    store.sinkFor('a')({ type: 'init' });
    store.sinkFor('a')({ type: 'initApply', object: obj('x', '1', { ns: 'a' }) });
    store.sinkFor('a')({ type: 'initDone', resourceVersion: '1' });
    assert.deepEqual(store.keys(), ['a/x']);
    assert.equal(store.hasSynced(), true);
  });
});
