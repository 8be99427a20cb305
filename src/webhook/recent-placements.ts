/**
 * The placements this process's pod admission answered without a
 * reservation (D21): pods sent to a subset that keeps no bookkeeping in the
 * status (unlimited, no minReplicas) of a balanced spec. The birth cost of
 * the next pod in such a subset is the cost of its place, so admission
 * counts that subset's pods from the cache plus these — the cache lags the
 * answers by the API server's write and the watch event.
 *
 * An entry is dropped when the cache shows the pod (by name, or by the uid
 * in its marker for a pod created without a name) or after `ttlMs` (the pod
 * was never created: another webhook refused it, the request timed out).
 * Until then `core/placed-count.ts` counts it once, whether or not the cache
 * shows the pod. A stale entry only skews a birth cost, which the controller
 * corrects; no limit depends on it (nothing is reserved in those subsets).
 */
import type { Clock } from '../clock/clock.ts';
import type { RecentPlacement } from '../core/cluster-view.ts';
import { readMarker } from '../core/marker.ts';
import type { Pod } from '../k8s/types.ts';

/** How long an answered placement is counted without the cache showing its pod. */
export const RECENT_PLACEMENT_TTL_MS = 30_000;

interface Entry {
  placement: RecentPlacement;
  at: number;
}

export class RecentPlacements {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  /** Per WorkloadSpread uid, in admission order. */
  readonly #byWs = new Map<string, Entry[]>();
  /** key → WorkloadSpread uid, to forget a pod the cache now shows. */
  readonly #wsOf = new Map<string, string>();

  constructor(clock: Clock, ttlMs = RECENT_PLACEMENT_TTL_MS) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  /** Remembers one answered placement; a second one for the same pod (an admission decided again) replaces the first. */
  record(wsUid: string, placement: RecentPlacement): void {
    if (wsUid === '' || placement.key === '') return;
    this.#forget(placement.key);
    let entries = this.#byWs.get(wsUid);
    if (entries === undefined) {
      entries = [];
      this.#byWs.set(wsUid, entries);
    }
    this.#prune(wsUid, entries);
    entries.push({ placement, at: this.#clock.now() });
    this.#wsOf.set(placement.key, wsUid);
  }

  /** The placements of the WorkloadSpread not yet shown by the cache nor expired. */
  list(wsUid: string): readonly RecentPlacement[] {
    const entries = this.#byWs.get(wsUid);
    if (entries === undefined) return [];
    this.#prune(wsUid, entries);
    return entries.map((e) => e.placement);
  }

  /** The cache shows this pod: its placement is counted from the pod from now on. */
  seen(pod: Pod): void {
    const name = pod.metadata?.name;
    if (typeof name === 'string' && name !== '') this.#forget(name);
    const uid = readMarker(pod)?.uid;
    if (uid !== undefined) this.#forget(uid);
  }

  /** Entries held, over every WorkloadSpread (diagnostics and tests). */
  size(): number {
    let n = 0;
    for (const entries of this.#byWs.values()) n += entries.length;
    return n;
  }

  #forget(key: string): void {
    const wsUid = this.#wsOf.get(key);
    if (wsUid === undefined) return;
    this.#wsOf.delete(key);
    const entries = this.#byWs.get(wsUid);
    if (entries === undefined) return;
    const i = entries.findIndex((e) => e.placement.key === key);
    if (i >= 0) entries.splice(i, 1);
    if (entries.length === 0) this.#byWs.delete(wsUid);
  }

  #prune(wsUid: string, entries: Entry[]): void {
    const cutoff = this.#clock.now() - this.#ttlMs;
    let drop = 0;
    while (drop < entries.length && (entries[drop] as Entry).at <= cutoff) drop++;
    if (drop === 0) return;
    for (const e of entries.splice(0, drop)) if (this.#wsOf.get(e.placement.key) === wsUid) this.#wsOf.delete(e.placement.key);
    if (entries.length === 0) this.#byWs.delete(wsUid);
  }
}
