/**
 * Resource-version expectations (kruise pkg/util/expectations
 * `ResourceVersionExpectation`): after a controller patches an object, its
 * next decisions must wait until its cache holds that write, or it would
 * decide twice on the same stale view (e.g. mark more pods for recreation
 * than maxUnavailable allows).
 *
 * `expect(key, uid, rv)` records the resourceVersion a write returned;
 * `satisfied(key, observed)` drops every record whose object the cache now
 * holds at that version or later, or no longer holds at all, and answers
 * whether none is left — or whether the oldest left is older than the
 * timeout (5 minutes), so a lost watch event cannot wedge the controller.
 * Versions are compared as decimal integers (what etcd and the embedded API
 * server write); anything else must match exactly. Time comes from `now`.
 */
import type { KubeObject } from '../../k8s/types.ts';
import { EXPECTATIONS_TIMEOUT_MS } from './expectations.ts';

interface Expected {
  rv: string;
  at: number;
}

/** Whether `seen` is `wanted` or a later version. */
export function isAtLeastVersion(seen: string, wanted: string): boolean {
  if (/^\d+$/.test(seen) && /^\d+$/.test(wanted)) return BigInt(seen) >= BigInt(wanted);
  return seen === wanted;
}

export class ResourceVersionExpectations {
  readonly #now: () => number;
  readonly #timeoutMs: number;
  readonly #records = new Map<string, Map<string, Expected>>();

  constructor(now: () => number, timeoutMs = EXPECTATIONS_TIMEOUT_MS) {
    this.#now = now;
    this.#timeoutMs = timeoutMs;
  }

  expect(key: string, obj: KubeObject): void {
    const uid = obj.metadata?.uid ?? '';
    const rv = obj.metadata?.resourceVersion ?? '';
    if (uid === '' || rv === '') return;
    const records = this.#records.get(key) ?? new Map<string, Expected>();
    records.set(uid, { rv, at: this.#now() });
    this.#records.set(key, records);
  }

  /** `observed`: the objects of `key` the cache holds now. */
  satisfied(key: string, observed: readonly KubeObject[]): boolean {
    const records = this.#records.get(key);
    if (records === undefined) return true;
    const byUid = new Map(observed.map((o) => [o.metadata?.uid ?? '', o]));
    for (const [uid, e] of records) {
      const seen = byUid.get(uid);
      if (seen === undefined || isAtLeastVersion(seen.metadata?.resourceVersion ?? '', e.rv)) records.delete(uid);
    }
    if (records.size === 0) {
      this.#records.delete(key);
      return true;
    }
    const oldest = Math.min(...[...records.values()].map((e) => e.at));
    return this.#now() - oldest > this.#timeoutMs;
  }

  delete(key: string): void {
    this.#records.delete(key);
  }
}
