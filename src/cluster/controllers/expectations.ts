/**
 * Controller expectations (k8s.io/kubernetes pkg/controller
 * ControllerExpectations + UIDTrackingControllerExpectations): what a
 * controller has asked the API server to create or delete and not yet seen
 * come back through its watch. While a controller's expectations are
 * outstanding it must not act on its cache again, or a slow watch would make
 * it create (or delete) the same replicas twice.
 *
 * Rules reproduced from upstream:
 * - a key with no record is satisfied (a controller that never acted);
 * - a record is satisfied when both counts are ≤ 0, or when it is older than
 *   the timeout (5 minutes): a lost watch event must not wedge the controller;
 * - `expectCreations` / `expectDeletions` replace the record and restart its clock;
 * - deletions are tracked by pod key, so only the deletion of a pod the
 *   controller chose lowers the count, and each pod only once.
 * Time comes from the `now` function (the controller's clock). No I/O.
 */

export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Record {
  add: number;
  del: number;
  timestamp: number;
}

export interface ExpectationsSnapshot {
  add: number;
  del: number;
  timestamp: number;
  /** Pod keys whose deletion is still expected. */
  deleteKeys: string[];
}

export class ControllerExpectations {
  readonly #now: () => number;
  readonly #timeoutMs: number;
  readonly #records = new Map<string, Record>();
  readonly #deleteKeys = new Map<string, Set<string>>();

  constructor(now: () => number, timeoutMs = EXPECTATIONS_TIMEOUT_MS) {
    this.#now = now;
    this.#timeoutMs = timeoutMs;
  }

  /** True when the controller may act on its cache for `key` again. */
  satisfied(key: string): boolean {
    const r = this.#records.get(key);
    if (r === undefined) return true;
    if (r.add <= 0 && r.del <= 0) return true;
    return this.#now() - r.timestamp > this.#timeoutMs;
  }

  /** Expects `count` creations (replacing any previous record). */
  expectCreations(key: string, count: number): void {
    this.#set(key, count, 0);
  }

  /** Expects the deletion of exactly these pods (keys `namespace/name`). */
  expectDeletions(key: string, podKeys: readonly string[]): void {
    this.#deleteKeys.set(key, new Set(podKeys));
    this.#set(key, 0, podKeys.length);
  }

  /** One expected creation was observed (or will never happen). */
  creationObserved(key: string): void {
    this.lower(key, 1, 0);
  }

  /** The pod `podKey` was seen deleted (or being deleted); counts only for pods this controller chose. */
  deletionObserved(key: string, podKey: string): void {
    const keys = this.#deleteKeys.get(key);
    if (keys === undefined || !keys.delete(podKey)) return;
    this.lower(key, 0, 1);
  }

  lower(key: string, add: number, del: number): void {
    const r = this.#records.get(key);
    if (r === undefined) return;
    r.add -= add;
    r.del -= del;
  }

  /** Forgets everything about `key` (the controller object is gone). */
  delete(key: string): void {
    this.#records.delete(key);
    this.#deleteKeys.delete(key);
  }

  /** The record of `key`, for tests and diagnostics. */
  get(key: string): ExpectationsSnapshot | undefined {
    const r = this.#records.get(key);
    if (r === undefined) return undefined;
    return { ...r, deleteKeys: [...(this.#deleteKeys.get(key) ?? [])].sort() };
  }

  #set(key: string, add: number, del: number): void {
    this.#records.set(key, { add, del, timestamp: this.#now() });
  }
}
