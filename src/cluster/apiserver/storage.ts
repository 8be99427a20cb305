/**
 * The object store: what etcd plus the watch cache are to the real API server.
 *
 * Objects are kept per storage key (group/plural, see `storageKey`) and
 * `namespace/name` (cluster-scoped: `name`). One global counter gives every
 * write a new, strictly increasing resourceVersion (decimal string), as etcd's
 * revision does. Every write is recorded in a bounded history (a ring buffer)
 * so that watches can resume from a resourceVersion and lists can be served
 * as of an older one; versions older than the retained window answer "too old"
 * (the API layer turns that into 410 Gone). `compact()` drops the history.
 *
 * Invariants:
 * - stored objects are immutable: a write takes ownership of the object it is
 *   given (and stamps its resourceVersion); readers must copy before editing;
 * - events are dispatched synchronously inside the write, in resourceVersion
 *   order, also when a listener writes while being notified (queued);
 * - a listener never sees an event twice, nor one at or below the version it
 *   subscribed from.
 * Start with `create` / `update` / `delete` and `watch`.
 */
import type { KubeObject } from '../../k8s/types.ts';

/** What a stored change is (a bookmark is not one). */
import type { ChangeEventType as WatchEventType } from '../../k8s/wire.ts';
export type { WatchEventType };

export interface StoreEvent {
  type: WatchEventType;
  /** Storage key of the resource (`group/plural`). */
  resource: string;
  /** `namespace/name`, or `name` for cluster-scoped objects. */
  key: string;
  namespace: string;
  rv: number;
  /** The new state; for DELETED, the last state stamped with the deletion's resourceVersion. */
  object: KubeObject;
  /** The state before the write (absent for ADDED). */
  prev?: KubeObject;
}

export type StoreListener = (event: StoreEvent) => void;

export type WriteResult = { ok: true; object: KubeObject } | { ok: false; reason: 'exists' | 'notFound' | 'conflict' };

export type WatchStart = { ok: true; cancel: () => void } | { ok: false; reason: 'tooOld'; oldest: number } | { ok: false; reason: 'future'; current: number };

export type SnapshotResult = { ok: true; items: KubeObject[] } | { ok: false; reason: 'tooOld'; oldest: number } | { ok: false; reason: 'future'; current: number };

interface Subscription {
  resource: string | undefined;
  namespace: string | undefined;
  listener: StoreListener;
  deliveredThrough: number;
  cancelled: boolean;
}

interface ResourceTable {
  objects: Map<string, KubeObject>;
  sortedKeys: string[] | undefined;
}

export const DEFAULT_HISTORY_LIMIT = 10_000;

export function objectKey(namespace: string, name: string): string {
  return namespace === '' ? name : `${namespace}/${name}`;
}

export class ObjectStore {
  #rv = 0;
  #tables = new Map<string, ResourceTable>();
  #subs: Subscription[] = [];
  #pending: StoreEvent[] = [];
  #dispatching = false;
  // History ring buffer, oldest first.
  #ring: (StoreEvent | undefined)[];
  #head = 0;
  #size = 0;
  /** Every event with rv > horizon is in the history. */
  #horizon = 0;

  constructor(options: { historyLimit?: number } = {}) {
    const limit = Math.max(1, Math.floor(options.historyLimit ?? DEFAULT_HISTORY_LIMIT));
    this.#ring = new Array<StoreEvent | undefined>(limit);
  }

  /** The resourceVersion of the latest write (0 before any). */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** The oldest resourceVersion a watch or snapshot can start from. */
  get horizon(): number {
    return this.#horizon;
  }

  get(resource: string, namespace: string, name: string): KubeObject | undefined {
    return this.#tables.get(resource)?.objects.get(objectKey(namespace, name));
  }

  /** Current objects of a resource, in key order; `namespace` undefined means all namespaces. */
  list(resource: string, namespace?: string): KubeObject[] {
    const table = this.#tables.get(resource);
    if (table === undefined) return [];
    const keys = this.#sortedKeys(table);
    const out: KubeObject[] = [];
    const prefix = namespace === undefined || namespace === '' ? undefined : `${namespace}/`;
    for (const key of keys) {
      if (prefix !== undefined && !key.startsWith(prefix)) continue;
      const obj = table.objects.get(key);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  count(resource: string): number {
    return this.#tables.get(resource)?.objects.size ?? 0;
  }

  /** Storage keys that hold at least one object. */
  resources(): string[] {
    return [...this.#tables].filter(([, t]) => t.objects.size > 0).map(([r]) => r);
  }

  /** Stores a new object (which must carry metadata.name). */
  create(resource: string, obj: KubeObject): WriteResult {
    const { namespace, name } = identity(obj);
    const table = this.#table(resource);
    const key = objectKey(namespace, name);
    if (table.objects.has(key)) return { ok: false, reason: 'exists' };
    const rv = ++this.#rv;
    stamp(obj, rv);
    table.objects.set(key, obj);
    table.sortedKeys = undefined;
    this.#emit({ type: 'ADDED', resource, key, namespace, rv, object: obj });
    return { ok: true, object: obj };
  }

  /** Replaces an object when its stored resourceVersion still equals `expectedRv`. */
  update(resource: string, obj: KubeObject, expectedRv: string): WriteResult {
    const { namespace, name } = identity(obj);
    const table = this.#table(resource);
    const key = objectKey(namespace, name);
    const prev = table.objects.get(key);
    if (prev === undefined) return { ok: false, reason: 'notFound' };
    if (prev.metadata?.resourceVersion !== expectedRv) return { ok: false, reason: 'conflict' };
    const rv = ++this.#rv;
    stamp(obj, rv);
    table.objects.set(key, obj);
    this.#emit({ type: 'MODIFIED', resource, key, namespace, rv, object: obj, prev });
    return { ok: true, object: obj };
  }

  /** Removes an object (optionally only at `expectedRv`); returns its last state with the deletion's resourceVersion. */
  delete(resource: string, namespace: string, name: string, expectedRv?: string): WriteResult {
    const table = this.#table(resource);
    const key = objectKey(namespace, name);
    const prev = table.objects.get(key);
    if (prev === undefined) return { ok: false, reason: 'notFound' };
    if (expectedRv !== undefined && prev.metadata?.resourceVersion !== expectedRv) return { ok: false, reason: 'conflict' };
    const rv = ++this.#rv;
    const last: KubeObject = { ...prev, metadata: { ...prev.metadata, resourceVersion: String(rv) } };
    table.objects.delete(key);
    table.sortedKeys = undefined;
    this.#emit({ type: 'DELETED', resource, key, namespace, rv, object: last, prev });
    return { ok: true, object: last };
  }

  /**
   * Subscribes to the events of one resource (or all, with `resource`
   * undefined), optionally of one namespace. With `from` set, the events after
   * that resourceVersion are replayed first, synchronously.
   */
  watch(resource: string | undefined, namespace: string | undefined, from: number | undefined, listener: StoreListener): WatchStart {
    const start = from ?? this.#rv;
    if (start < this.#horizon) return { ok: false, reason: 'tooOld', oldest: this.#horizon };
    if (start > this.#rv) return { ok: false, reason: 'future', current: this.#rv };
    const sub: Subscription = { resource, namespace: namespace === '' ? undefined : namespace, listener, deliveredThrough: start, cancelled: false };
    for (let i = this.#firstAfter(start); i < this.#size; i++) {
      const e = this.#at(i);
      if (sub.cancelled) break;
      if (!matches(sub, e)) continue;
      sub.deliveredThrough = e.rv;
      safeCall(listener, e);
    }
    // Events already replayed but still queued for dispatch must not arrive twice.
    sub.deliveredThrough = Math.max(sub.deliveredThrough, this.#rv);
    this.#subs.push(sub);
    return {
      ok: true,
      cancel: () => {
        sub.cancelled = true;
        this.#subs = this.#subs.filter((s) => s !== sub);
      },
    };
  }

  /** The objects of a resource as they were at resourceVersion `rv` (for continue tokens and exact reads). */
  listAt(resource: string, namespace: string | undefined, rv: number): SnapshotResult {
    if (rv < this.#horizon) return { ok: false, reason: 'tooOld', oldest: this.#horizon };
    if (rv > this.#rv) return { ok: false, reason: 'future', current: this.#rv };
    if (rv === this.#rv) return { ok: true, items: this.list(resource, namespace) };
    const state = new Map<string, KubeObject | undefined>();
    for (const obj of this.list(resource, namespace)) {
      const { namespace: ns, name } = identity(obj);
      state.set(objectKey(ns, name), obj);
    }
    const ns = namespace === '' ? undefined : namespace;
    for (let i = this.#size - 1; i >= 0; i--) {
      const e = this.#at(i);
      if (e.rv <= rv) break;
      if (e.resource !== resource || (ns !== undefined && e.namespace !== ns)) continue;
      state.set(e.key, e.prev);
    }
    const keys = [...state.keys()].sort(compareKeys);
    const items: KubeObject[] = [];
    for (const k of keys) {
      const obj = state.get(k);
      if (obj !== undefined) items.push(obj);
    }
    return { ok: true, items };
  }

  /** Drops the event history: watches and snapshots from any older version now answer "too old". */
  compact(): void {
    this.#ring.fill(undefined);
    this.#head = 0;
    this.#size = 0;
    this.#horizon = this.#rv;
  }

  // ---- internals ----

  #table(resource: string): ResourceTable {
    let t = this.#tables.get(resource);
    if (t === undefined) {
      t = { objects: new Map(), sortedKeys: undefined };
      this.#tables.set(resource, t);
    }
    return t;
  }

  #sortedKeys(table: ResourceTable): string[] {
    if (table.sortedKeys === undefined) table.sortedKeys = [...table.objects.keys()].sort(compareKeys);
    return table.sortedKeys;
  }

  #at(i: number): StoreEvent {
    return this.#ring[(this.#head + i) % this.#ring.length] as StoreEvent;
  }

  /** Index of the first retained event with rv > `rv`. */
  #firstAfter(rv: number): number {
    let lo = 0;
    let hi = this.#size;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#at(mid).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #record(e: StoreEvent): void {
    const cap = this.#ring.length;
    if (this.#size === cap) {
      const oldest = this.#at(0);
      this.#horizon = oldest.rv;
      this.#ring[this.#head] = e;
      this.#head = (this.#head + 1) % cap;
    } else {
      this.#ring[(this.#head + this.#size) % cap] = e;
      this.#size++;
    }
  }

  #emit(e: StoreEvent): void {
    this.#record(e);
    this.#pending.push(e);
    if (this.#dispatching) return;
    this.#dispatching = true;
    try {
      for (let next = this.#pending.shift(); next !== undefined; next = this.#pending.shift()) {
        for (const sub of [...this.#subs]) {
          if (sub.cancelled || next.rv <= sub.deliveredThrough || !matches(sub, next)) continue;
          sub.deliveredThrough = next.rv;
          safeCall(sub.listener, next);
        }
      }
    } finally {
      this.#dispatching = false;
    }
  }
}

function matches(sub: Subscription, e: StoreEvent): boolean {
  if (sub.resource !== undefined && sub.resource !== e.resource) return false;
  return sub.namespace === undefined || sub.namespace === e.namespace;
}

function safeCall(listener: StoreListener, e: StoreEvent): void {
  try {
    listener(e);
  } catch {
    // A failing listener must not break the write that notified it, nor the other listeners.
  }
}

function identity(obj: KubeObject): { namespace: string; name: string } {
  const meta = obj.metadata ?? {};
  return { namespace: typeof meta.namespace === 'string' ? meta.namespace : '', name: typeof meta.name === 'string' ? meta.name : '' };
}

function stamp(obj: KubeObject, rv: number): void {
  if (obj.metadata === undefined) obj.metadata = {};
  obj.metadata.resourceVersion = String(rv);
}

/** etcd orders keys bytewise; `/` sorts before letters and digits, which plain string order also gives. */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
