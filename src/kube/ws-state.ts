/**
 * Process-local state shared by the admission webhook and the controller for
 * each WorkloadSpread (spec §2.3 C.1, §2.4; user-issues #21):
 *
 * - a per-WorkloadSpread lock, keyed by UID: every read-decide-write of a
 *   WorkloadSpread's status in this process (admission reservations, the
 *   controller's status write) runs under it, so they never race each other
 *   in-process; several replicas are reconciled only by resourceVersion
 *   conflicts;
 * - the last WorkloadSpread this process wrote (or read straight from the API
 *   server), so a decision starts from the freshest copy even when the
 *   informer has not caught up with our own write yet: `freshest()` picks the
 *   copy with the larger resourceVersion, compared as integers (as the
 *   reference does; Kubernetes documents resourceVersions as opaque, but every
 *   conformant server backs them with etcd revisions).
 *
 * Invariants: the lock is FIFO and not re-entrant (taking it twice in one
 * flow deadlocks); an unlocked key leaves no entry behind; `remember` never replaces a copy with an older one.
 * Start at `withLock` and `freshest`.
 */
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { Clock } from '../clock/clock.ts';
import type { ObjectMeta } from '../k8s/types.ts';
import { keyOf } from '../client/store.ts';

/**
 * Compares two resourceVersions as integers: negative when a is older, 0
 * when equal, positive when a is newer. A version that is not a decimal
 * integer (another server's opaque form, or absent) is older than any
 * integer one, so an integer copy always wins over it.
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number {
  const pa = parseResourceVersion(a);
  const pb = parseResourceVersion(b);
  if (pa === undefined || pb === undefined) {
    if (pa === pb) return 0;
    return pa === undefined ? -1 : 1;
  }
  return pa < pb ? -1 : pa > pb ? 1 : 0;
}

function parseResourceVersion(rv: string | undefined): bigint | undefined {
  if (typeof rv !== 'string' || !/^[0-9]{1,30}$/.test(rv)) return undefined;
  return BigInt(rv);
}

interface LockEntry {
  /** Resolvers of the flows waiting for the lock, in arrival order. */
  waiters: (() => void)[];
}

export interface WorkloadSpreadStateOptions {
  /** Remembered copies kept at most (the oldest written is dropped first; default 10,000). */
  maxEntries?: number;
  /** Whose activity accounting a lock wait uses: a flow waiting for the lock is not busy (a virtual clock may move while the holder sleeps). */
  clock?: Clock;
}

/**
 * `T` defaults to WorkloadSpread; the DomainDisruptionBudget status writer
 * keeps its budgets in an instance of its own (same lock and copy rules).
 */
export class WorkloadSpreadState<T extends { metadata?: ObjectMeta } = WorkloadSpread> {
  /** Held locks by UID; present while some flow holds the lock. */
  readonly #locks = new Map<string, LockEntry>();
  /** Last written copy by `namespace/name`. */
  readonly #written = new Map<string, T>();
  readonly #maxEntries: number;
  readonly #clock: Clock | undefined;

  constructor(options: WorkloadSpreadStateOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#clock = options.clock;
  }

  /**
   * Runs `fn` holding the lock of the WorkloadSpread with this UID; flows for
   * the same UID run one at a time in arrival order. The lock is released
   * when `fn` settles, whether it resolves or throws.
   */
  async withLock<T>(uid: string, fn: () => Promise<T>): Promise<T> {
    await this.#acquire(uid);
    try {
      return await fn();
    } finally {
      this.#release(uid);
    }
  }

  /** True while some flow holds the lock of this UID (for tests and diagnostics). */
  isLocked(uid: string): boolean {
    return this.#locks.has(uid);
  }

  /** Flows waiting for the lock of this UID, not counting the holder. */
  waiting(uid: string): number {
    return this.#locks.get(uid)?.waiters.length ?? 0;
  }

  #acquire(uid: string): Promise<void> {
    const entry = this.#locks.get(uid);
    if (entry === undefined) {
      this.#locks.set(uid, { waiters: [] });
      return Promise.resolve();
    }
    const acquired = new Promise<void>((resolve) => entry.waiters.push(resolve));
    return this.#clock === undefined ? acquired : this.#clock.activity.waitFor(acquired);
  }

  #release(uid: string): void {
    const entry = this.#locks.get(uid);
    if (entry === undefined) return;
    const next = entry.waiters.shift();
    if (next === undefined) this.#locks.delete(uid);
    else next();
  }

  /**
   * Records a copy of a WorkloadSpread this process wrote or read from the
   * API server; an older copy than the one remembered is ignored.
   */
  remember(ws: T): void {
    const key = keyOf(ws.metadata?.namespace, ws.metadata?.name ?? '');
    const known = this.#written.get(key);
    if (known !== undefined && compareResourceVersions(ws.metadata?.resourceVersion, known.metadata?.resourceVersion) < 0) return;
    // Re-insert so the map's order is "least recently written first" for trimming.
    this.#written.delete(key);
    this.#written.set(key, ws);
    while (this.#written.size > this.#maxEntries) {
      const oldest = this.#written.keys().next();
      if (oldest.done === true) break;
      this.#written.delete(oldest.value);
    }
  }

  /** The copy remembered for namespace/name, if any. */
  lastWritten(namespace: string, name: string): T | undefined {
    return this.#written.get(keyOf(namespace, name));
  }

  /** Drops the remembered copy (the WorkloadSpread is gone). */
  forget(namespace: string, name: string): void {
    this.#written.delete(keyOf(namespace, name));
  }

  /**
   * The freshest known copy of a WorkloadSpread: the remembered one or
   * `cached` (the informer's), whichever has the larger resourceVersion; the
   * cached copy wins ties (it is the same object, and the informer's copy is
   * what everyone else reads). A remembered copy of a different object (same
   * name, other UID: deleted and recreated) is only used when it is newer.
   */
  freshest(cached: T | undefined, namespace?: string, name?: string): T | undefined {
    const ns = namespace ?? cached?.metadata?.namespace ?? '';
    const n = name ?? cached?.metadata?.name ?? '';
    const local = this.#written.get(keyOf(ns, n));
    if (local === undefined) return cached;
    if (cached === undefined) return local;
    return compareResourceVersions(local.metadata?.resourceVersion, cached.metadata?.resourceVersion) > 0 ? local : cached;
  }

  /** Number of remembered copies. */
  get size(): number {
    return this.#written.size;
  }
}
