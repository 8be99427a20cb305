/**
 * `Store<T>`: the local cache a `Watcher` fills, keyed `namespace/name`
 * (`name` for cluster-scoped objects), with secondary indexes, sums and counts, and change
 * handlers; `Informer` bundles the two.
 *
 * Invariants:
 * - `transform` runs once per object before it is cached (the manager keeps
 *   a few hundred bytes per pod this way); it must keep `metadata.name`,
 *   `namespace` and `resourceVersion`, which the store reads;
 * - a relist (init … initDone) is buffered and swapped in at once: handlers
 *   then see deletes for vanished objects, updates for changed ones (by
 *   resourceVersion), adds for new ones, and the store already holds the
 *   complete new state when they run;
 * - a store fed by one watcher per namespace (`sinkFor`, as controller-runtime's
 *   multi-namespace cache) relists each namespace on its own: a relist swaps
 *   in that namespace's objects only, and the store is synced once every
 *   namespace has listed once;
 * - an object whose resourceVersion did not change raises no event;
 * - handlers run synchronously, in registration order; one that throws is
 *   logged and does not stop the others or the store;
 * - objects handed out ARE the cached ones: callers must never mutate them
 *   (index values would go stale). `freeze: true` deep-freezes them so a
 *   mutation throws in tests and development.
 * Start at `handle`.
 */
import type { KubeObject } from '../k8s/types.ts';
import { describeError } from './errors.ts';
import { objectFields, silentLogger, type Logger } from './logger.ts';
import { Watcher, type WatcherEvent, type WatcherOptions } from './watcher.ts';

export type IndexFunc<T> = (obj: T) => string[];

export interface StoreOptions<T extends KubeObject> {
  /** Shrinks or reshapes objects before caching (keep name, namespace, resourceVersion). */
  transform?: (obj: KubeObject) => T;
  /** Deep-freeze cached objects (tests, development). */
  freeze?: boolean;
  log?: Logger;
  /** Shown in logs. */
  name?: string;
}

/** The cache key: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns === undefined || ns === '' ? name : `${ns}/${name}`;
}

/** The key of `name` in `namespace` ('' or omitted for cluster-scoped). */
export function keyOf(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export const NAMESPACE_INDEX = 'namespace';

interface Index<T> {
  fn: IndexFunc<T>;
  entries: Map<string, Set<string>>;
}

/** A count kept per value: how many cached objects the function returned the value for (no keys kept). */
interface Count<T> {
  fn: IndexFunc<T>;
  counts: Map<string, number>;
}

/** A sum kept per key: `fn` says which key an object adds to and what (a fixed-length vector), or undefined for nothing. */
export type SumFunc<T> = (obj: T) => { key: string; values: readonly number[] } | undefined;

interface Sum<T> {
  fn: SumFunc<T>;
  totals: Map<string, { values: number[]; objects: number }>;
}

type Change<T> = { type: 'add'; obj: T } | { type: 'update'; old: T; obj: T } | { type: 'delete'; obj: T };

export class Store<T extends KubeObject = KubeObject> {
  readonly #items = new Map<string, T>();
  readonly #indexes = new Map<string, Index<T>>();
  readonly #sums = new Map<string, Sum<T>>();
  readonly #counts = new Map<string, Count<T>>();
  readonly #transform: (obj: KubeObject) => T;
  readonly #freeze: boolean;
  readonly #log: Logger;
  readonly #name: string;
  /** The default sink (`handle`) or the namespaces' sinks (`sinkFor`) and whether each has listed. */
  readonly #sinks = new Map<string | undefined, { synced: boolean; sink: (event: WatcherEvent) => void }>();
  #synced = false;
  #syncWaiters: (() => void)[] = [];
  #resourceVersion = '';
  #onAdd: ((obj: T) => void)[] = [];
  #onUpdate: ((old: T, obj: T) => void)[] = [];
  #onDelete: ((obj: T) => void)[] = [];
  #changes = 0;

  constructor(options: StoreOptions<T> = {}) {
    this.#transform = options.transform ?? ((obj) => obj as T);
    this.#freeze = options.freeze ?? false;
    this.#log = options.log ?? silentLogger;
    this.#name = options.name ?? 'store';
    this.addIndex(NAMESPACE_INDEX, (obj) => [obj.metadata?.namespace ?? '']);
  }

  /** The watcher sink of a store fed by one watcher: apply one watcher event. */
  get handle(): (event: WatcherEvent) => void {
    return this.#sink(undefined);
  }

  /**
   * The sink of the watcher of one namespace, when one watcher per namespace
   * feeds this store: its relists replace that namespace's objects only.
   */
  sinkFor(namespace: string): (event: WatcherEvent) => void {
    return this.#sink(namespace);
  }

  #sink(scope: string | undefined): (event: WatcherEvent) => void {
    const known = this.#sinks.get(scope);
    if (known !== undefined) return known.sink;
    const state: { synced: boolean; sink: (event: WatcherEvent) => void } = { synced: false, sink: () => {} };
    this.#sinks.set(scope, state);
    let buffer: Map<string, T> | undefined;
    state.sink = (event) => {
      switch (event.type) {
        case 'init':
          buffer = new Map();
          return;
        case 'initApply': {
          const obj = this.#prepare(event.object);
          (buffer ??= new Map()).set(objectKey(obj), obj);
          return;
        }
        case 'initDone':
          this.#swap(buffer ?? new Map(), scope);
          buffer = undefined;
          this.#resourceVersion = event.resourceVersion;
          state.synced = true;
          if ([...this.#sinks.values()].every((s) => s.synced)) this.#markSynced();
          return;
        default:
          this.#apply(event);
      }
    };
    return state.sink;
  }

  /** One change of a watch (not part of a relist). */
  #apply(event: WatcherEvent): void {
    switch (event.type) {
      case 'init':
      case 'initApply':
      case 'initDone':
        return;
      case 'apply': {
        const obj = this.#prepare(event.object);
        const key = objectKey(obj);
        const old = this.#items.get(key);
        this.#resourceVersion = obj.metadata?.resourceVersion ?? this.#resourceVersion;
        if (old !== undefined && old.metadata?.resourceVersion === obj.metadata?.resourceVersion) return;
        this.#put(key, obj, old);
        this.#emit(old === undefined ? [{ type: 'add', obj }] : [{ type: 'update', old, obj }]);
        return;
      }
      case 'delete': {
        const obj = this.#prepare(event.object);
        const key = objectKey(obj);
        this.#resourceVersion = obj.metadata?.resourceVersion ?? this.#resourceVersion;
        const old = this.#items.get(key);
        if (old === undefined) return;
        this.#remove(key, old);
        this.#emit([{ type: 'delete', obj }]);
        return;
      }
      case 'bookmark':
        this.#resourceVersion = event.resourceVersion;
        return;
    }
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.#items.get(keyOf(namespace, name));
  }

  getByKey(key: string): T | undefined {
    return this.#items.get(key);
  }

  /** Every cached object, or those of one namespace. */
  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.#items.values()];
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  keys(): string[] {
    return [...this.#items.keys()];
  }

  get size(): number {
    return this.#items.size;
  }

  /**
   * How many times an object was put or removed so far: a reader that keeps
   * something derived from `list()` knows it is still true while this is
   * unchanged (it moves before any handler runs).
   */
  get changes(): number {
    return this.#changes;
  }

  /** The objects whose index function returned `value`. */
  byIndex(index: string, value: string): T[] {
    const keys = this.#indexes.get(index)?.entries.get(value);
    if (keys === undefined) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.#items.get(key);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  /** How many objects the index function returned `value` for. */
  countByIndex(index: string, value: string): number {
    return this.#indexes.get(index)?.entries.get(value)?.size ?? 0;
  }

  /**
   * Adds (or replaces) a count: per value, how many cached objects `fn`
   * returns it for, kept as objects come, change and go. Where only the
   * number is read, it costs one number per value instead of an index's set
   * of keys (one entry per object).
   */
  addCount(name: string, fn: IndexFunc<T>): void {
    const count: Count<T> = { fn, counts: new Map() };
    this.#counts.set(name, count);
    for (const obj of this.#items.values()) this.#countOne(count, obj, 1);
  }

  /** How many cached objects a count's function returned `value` for. */
  countOf(name: string, value: string): number {
    return this.#counts.get(name)?.counts.get(value) ?? 0;
  }

  /** The values of an index that have at least one object. */
  indexValues(index: string): string[] {
    return [...(this.#indexes.get(index)?.entries.keys() ?? [])];
  }

  /** Adds (or replaces) an index; existing objects are indexed at once. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    const index: Index<T> = { fn, entries: new Map() };
    this.#indexes.set(name, index);
    for (const [key, obj] of this.#items) this.#indexOne(index, key, obj);
  }

  /**
   * Adds (or replaces) a sum: per key, the element-wise total of what `fn`
   * returns for every cached object, kept as objects come, change and go
   * (existing objects are added at once). Reading one is O(1), where summing
   * the objects of an index would be O(objects).
   */
  addSum(name: string, fn: SumFunc<T>): void {
    const sum: Sum<T> = { fn, totals: new Map() };
    this.#sums.set(name, sum);
    for (const [key, obj] of this.#items) this.#sumOne(sum, key, obj, 1);
  }

  /** The totals of a sum for one key (undefined when no object adds to it). */
  sumOf(name: string, key: string): readonly number[] | undefined {
    return this.#sums.get(name)?.totals.get(key)?.values;
  }

  onAdd(fn: (obj: T) => void): () => void {
    this.#onAdd.push(fn);
    return () => (this.#onAdd = this.#onAdd.filter((f) => f !== fn));
  }

  onUpdate(fn: (old: T, obj: T) => void): () => void {
    this.#onUpdate.push(fn);
    return () => (this.#onUpdate = this.#onUpdate.filter((f) => f !== fn));
  }

  onDelete(fn: (obj: T) => void): () => void {
    this.#onDelete.push(fn);
    return () => (this.#onDelete = this.#onDelete.filter((f) => f !== fn));
  }

  /** True once a first complete list has been swapped in. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** The last resourceVersion seen (list, event or bookmark). */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /** Resolves at the first complete list; rejects with the signal's reason when aborted first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(signal.reason);
        return;
      }
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#syncWaiters = this.#syncWaiters.filter((w) => w !== done);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#syncWaiters.push(done);
    });
  }

  // ---- internals ----

  #prepare(raw: KubeObject): T {
    const obj = this.#transform(raw);
    return this.#freeze ? deepFreeze(obj) : obj;
  }

  #markSynced(): void {
    if (this.#synced) return;
    this.#synced = true;
    const waiters = this.#syncWaiters;
    this.#syncWaiters = [];
    for (const w of waiters) w();
  }

  /** Swaps in a relist: of every object, or (`namespace`) of that namespace's. */
  #swap(next: Map<string, T>, namespace?: string): void {
    const changes: Change<T>[] = [];
    const before = namespace === undefined ? [...this.#items] : this.byIndex(NAMESPACE_INDEX, namespace).map((o) => [objectKey(o), o] as const);
    for (const [key, old] of before) {
      if (next.has(key)) continue;
      this.#remove(key, old);
      changes.push({ type: 'delete', obj: old });
    }
    for (const [key, obj] of next) {
      const old = this.#items.get(key);
      if (old === undefined) {
        this.#put(key, obj, undefined);
        changes.push({ type: 'add', obj });
      } else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
        this.#put(key, obj, old);
        changes.push({ type: 'update', old, obj });
      }
    }
    this.#emit(changes);
  }

  #put(key: string, obj: T, old: T | undefined): void {
    this.#changes++;
    if (old !== undefined) {
      for (const index of this.#indexes.values()) this.#unindexOne(index, key, old);
      for (const sum of this.#sums.values()) this.#sumOne(sum, key, old, -1);
      for (const count of this.#counts.values()) this.#countOne(count, old, -1);
    }
    this.#items.set(key, obj);
    for (const index of this.#indexes.values()) this.#indexOne(index, key, obj);
    for (const sum of this.#sums.values()) this.#sumOne(sum, key, obj, 1);
    for (const count of this.#counts.values()) this.#countOne(count, obj, 1);
  }

  #remove(key: string, old: T): void {
    this.#changes++;
    for (const index of this.#indexes.values()) this.#unindexOne(index, key, old);
    for (const sum of this.#sums.values()) this.#sumOne(sum, key, old, -1);
    for (const count of this.#counts.values()) this.#countOne(count, old, -1);
    this.#items.delete(key);
  }

  /** Adds (`sign` 1) or takes away (-1) one object from the values a count's function returns for it; a value at 0 is dropped. */
  #countOne(count: Count<T>, obj: T, sign: 1 | -1): void {
    for (const value of this.#values(count.fn, obj)) {
      const n = (count.counts.get(value) ?? 0) + sign;
      if (n > 0) count.counts.set(value, n);
      else count.counts.delete(value);
    }
  }

  #values(fn: IndexFunc<T>, obj: T): string[] {
    try {
      return fn(obj);
    } catch (err) {
      this.#log.error({ store: this.#name, ...objectFields(objectKey(obj)), err: describeError(err) }, 'index function failed');
      return [];
    }
  }

  #indexOne(index: Index<T>, key: string, obj: T): void {
    for (const value of this.#values(index.fn, obj)) {
      let keys = index.entries.get(value);
      if (keys === undefined) index.entries.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  /** Adds (`sign` 1) or takes away (-1) what one object contributes to a sum; a key no object adds to is dropped. */
  #sumOne(sum: Sum<T>, key: string, obj: T, sign: 1 | -1): void {
    let part: ReturnType<SumFunc<T>>;
    try {
      part = sum.fn(obj);
    } catch (err) {
      this.#log.error({ store: this.#name, ...objectFields(key), err: describeError(err) }, 'sum function failed');
      return;
    }
    if (part === undefined) return;
    let total = sum.totals.get(part.key);
    if (total === undefined) {
      if (sign < 0) return;
      total = { values: part.values.map(() => 0), objects: 0 };
      sum.totals.set(part.key, total);
    }
    part.values.forEach((v, i) => {
      total.values[i] = (total.values[i] ?? 0) + sign * v;
    });
    total.objects += sign;
    if (total.objects <= 0) sum.totals.delete(part.key);
  }

  #unindexOne(index: Index<T>, key: string, obj: T): void {
    for (const value of this.#values(index.fn, obj)) {
      const keys = index.entries.get(value);
      if (keys === undefined) continue;
      keys.delete(key);
      if (keys.size === 0) index.entries.delete(value);
    }
  }

  #emit(changes: Change<T>[]): void {
    for (const change of changes) {
      const handlers: ((...args: T[]) => void)[] = change.type === 'add' ? this.#onAdd : change.type === 'update' ? this.#onUpdate : this.#onDelete;
      for (const handler of handlers) {
        try {
          if (change.type === 'update') handler(change.old, change.obj);
          else handler(change.obj);
        } catch (err) {
          this.#log.error({ store: this.#name, ...objectFields(objectKey(change.obj)), event: change.type, err: describeError(err) }, 'event handler failed');
        }
      }
    }
  }
}

export type InformerOptions<T extends KubeObject> = WatcherOptions &
  StoreOptions<T> & {
    indexes?: Record<string, IndexFunc<T>>;
    /** Watch only these namespaces, one watcher each (a namespaced ref; overrides `namespace`). */
    namespaces?: readonly string[];
  };

/** A watcher feeding a store: `start()`, `waitForSync()`, read `store`, `stop()`. */
export class Informer<T extends KubeObject = KubeObject> {
  readonly store: Store<T>;
  /** The first (with `namespaces`, the first namespace's) watcher. */
  readonly watcher: Watcher;
  readonly #watchers: Watcher[];

  constructor(options: InformerOptions<T>) {
    const storeOptions: StoreOptions<T> = {};
    if (options.transform !== undefined) storeOptions.transform = options.transform;
    if (options.freeze !== undefined) storeOptions.freeze = options.freeze;
    if (options.log !== undefined) storeOptions.log = options.log;
    storeOptions.name = options.name ?? options.ref.resource;
    this.store = new Store<T>(storeOptions);
    for (const [name, fn] of Object.entries(options.indexes ?? {})) this.store.addIndex(name, fn);
    const namespaces = options.namespaces !== undefined && options.ref.namespaced ? [...new Set(options.namespaces)] : undefined;
    if (namespaces !== undefined && namespaces.length === 0) throw new Error(`informer ${storeOptions.name}: namespaces must name at least one namespace`);
    this.#watchers =
      namespaces === undefined
        ? [new Watcher(options, this.store.handle)]
        : namespaces.map((namespace) => new Watcher({ ...options, namespace, name: `${storeOptions.name}/${namespace}` }, this.store.sinkFor(namespace)));
    this.watcher = this.#watchers[0] as Watcher;
  }

  start(): void {
    for (const w of this.#watchers) w.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.#watchers.map((w) => w.stop()));
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.store.waitForSync(signal);
  }
}
