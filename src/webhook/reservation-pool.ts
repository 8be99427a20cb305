/**
 * Places reserved ahead (issue 13): the reservations a round of the group
 * commit wrote for pods not created yet (core `reserveAhead`), handed out in
 * order to the next pods without a name of the same WorkloadSpread and
 * version, each answered at once with no status write of its own.
 *
 * - Filled by the group commit's `extend` hook: a round that reserves for
 *   pods without a name also reserves ahead, twice the demand seen since the
 *   last fill (that round's reservations plus the places claimed meanwhile),
 *   at most `AHEAD_MAX`, at most what the workload still lacks. A burst of
 *   N pods therefore costs about log2(N) writes instead of one per round.
 * - Refilled before it runs dry: once a claim leaves half or less of the
 *   last fill, a round of its own (no pod waits on it) reserves
 *   `REFILL_FACTOR` (4) times the last fill ahead. A ReplicaSet's batches
 *   double (1, 2, 4, …) and the next one comes as soon as this one is
 *   answered, before the refill it started is stored: the places must cover
 *   two batches ahead, not one (figures: docs/operations.md, "Places
 *   reserved ahead"). A pod that finds the line empty while a refill is
 *   being written waits for it (`claimOrAwait`). A refill that finds
 *   nothing to reserve is tried again at the next claim (cheap: one lock
 *   and one `reserveAhead`; ending the refills there showed no gain).
 * - Claimed first-in first-out, before the pod queues for a round and again
 *   inside a round, so pods fill the subsets in the spec's order. In
 *   Adaptive mode (the simulation schedule, D3) the places are tried with a
 *   pod of the version (the request pod of the round that filled them), and
 *   a claim with the claiming pod: a place whose subset can no longer host
 *   it is refused, and the whole line goes back at once (`refused`).
 * - Never claimed once older than `PLACE_MAX_AGE_MS` (20 s): the controller
 *   drops a reservation whose pod it has not seen 30 s after its stamp, and
 *   its room is free again, so a later claim could give that room twice.
 *   Such places leave the head of the line and are given back in one write.
 *   The pool's writes that go out anyway (refills, rounds reserving for
 *   their own pods) stamp the line's places `RENEW_AGE_MS` old or older
 *   again, so a line claimed steadily keeps them. A refill is also held to
 *   what the line's claims since its last fill would take within that age,
 *   so a trickle of pods is not reserved far ahead (a burst claims fast,
 *   which does not bound it).
 * - Given back once no pod claimed one for `AHEAD_IDLE_MS` (the burst is
 *   over, or the workload scaled down): one status write drops the unclaimed
 *   entries (core `releaseAhead`). A manager that stops gives every unclaimed
 *   place back the same way before it lets go (`stop`), so its successor
 *   finds the subsets as the pods left them. Places a process never gives
 *   back (it crashed, or the write failed) are ordinary creatingPods entries:
 *   the controller drops them after 30 s, like any reservation whose pod
 *   never came, without a CreatePodFailed event (their uid starts with
 *   RESERVED_AHEAD_PREFIX).
 *
 * Limits hold whatever happens: a place is claimed only after the write that
 * stored it succeeded, so every pod answered from the pool has its stored
 * reservation — exactly as if its own admission had written it. Another
 * manager replica sees the places as taken. Start at `ReservationPool.claim`.
 */
import { CREATE_POD_TIMEOUT_MS, RESERVED_AHEAD_PREFIX } from '../api/keys.ts';
import type { Clock, Timer } from '../clock/clock.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { releaseAhead, renewAhead, reserveAhead, type ClaimedPlace, type PodCreateDecision } from '../core/admission.ts';
import type { ClusterView } from '../core/cluster-view.ts';
import type { Pod } from '../k8s/types.ts';
import type { GroupCommit, WorkloadSpreadKey } from './group-commit.ts';

/** Most places reserved ahead by one write. */
export const AHEAD_MAX = 256;
/** A refill reserves this many times the last fill (see the module comment: two of a ReplicaSet's doubling batches ahead). */
export const REFILL_FACTOR = 4;
/** Unclaimed places are given back after this long without a claim. */
export const AHEAD_IDLE_MS = 2_000;
/**
 * The oldest place a pod may claim (20 s). A place is a creatingPods entry
 * stamped when it was reserved; the controller drops an entry whose pod it
 * has not seen CREATE_POD_TIMEOUT_MS after that stamp, and the room it held
 * is free again for anyone. A place claimed later would put its pod in room
 * that may be given twice. The 10 s margin: the stamp is whole seconds (up
 * to 1 s early), and the pod must still be created and seen.
 */
export const PLACE_MAX_AGE_MS = CREATE_POD_TIMEOUT_MS - 10_000;
/**
 * A write of the pool's that goes out anyway (a refill, or a round that
 * reserves for its own pods) stamps again the places of the line this old
 * or older, so a line claimed for longer than PLACE_MAX_AGE_MS keeps its
 * places without a write of its own.
 */
export const RENEW_AGE_MS = 5_000;
interface Entry {
  key: WorkloadSpreadKey;
  version: string;
  /** Unclaimed, oldest first; `at`: when the fill that reserved it decided (its creatingPods stamp, to the second). */
  places: Place[];
  /** The copy the last fill wrote (claims decide on it). */
  ws: WorkloadSpread;
  /** Places claimed since the last fill. */
  claims: number;
  /** Places the last fill added. */
  lastFill: number;
  /** When the last fill was stored (the claims since then give the rate the line is claimed at). */
  filledAt: number;
  /** A pod of the version, which refills try places with (the simulation schedule, D3). */
  template: Pod | undefined;
  /** The refill round under way, until its places joined the line (`claimOrAwait` waits for it). */
  refill: Promise<void> | undefined;
  timer: Timer | undefined;
}

/** Places a write stamped again, and of those the ones whose entry it found. */
interface Renewed {
  uids: Set<string>;
  kept: Set<string>;
}

interface Place {
  subset: string;
  uid: string;
  at: number;
}

export interface ReservationPoolOptions {
  clock: Clock;
  /** The caches, as core's view (the workload's replicas, the pods placed). */
  view: ClusterView;
  /** Draws the pool's name once (randomUUID): its places are named `ahead-<name>-<n>`, so which are its own needs no memory. */
  newUid: () => string;
  log?: Logger;
}

/** A claimed place with the stored copy it was written in. */
export type Claim = ClaimedPlace & { ws: WorkloadSpread };

/** Pools made by this process (each names its places apart). */
let poolsMade = 0;

export class ReservationPool {
  readonly #o: ReservationPoolOptions;
  readonly #log: Logger;
  readonly #entries = new Map<string, Entry>();
  /** The pool's name, which every place it reserves carries after RESERVED_AHEAD_PREFIX: unique to the pool (another replica's, or this process's before a restart, differ). */
  readonly #name: string;
  #named = 0;
  #commit: GroupCommit | undefined;
  #stopped = false;
  /** Refill rounds and early give-backs under way (stop waits for them, then gives their places back). */
  readonly #pending = new Set<Promise<void>>();

  constructor(options: ReservationPoolOptions) {
    this.#o = options;
    this.#log = options.log ?? silentLogger;
    // 48 bits of a UUID (short: every pod placed from the pool carries its place's uid in its marker), and
    // the pool's serial in this process, so pools drawing from one source of uids still differ.
    this.#name = `${options.newUid().replace(/-/g, '').slice(0, 12)}.${(poolsMade++).toString(36)}-`;
  }

  /** The next place's name (core adds RESERVED_AHEAD_PREFIX). */
  readonly #placeName = (): string => `${this.#name}${(++this.#named).toString(36)}`;

  /** The group commit that gives places back (it calls `extend`, so it is built after the pool). */
  attach(commit: GroupCommit): void {
    this.#commit = commit;
  }

  /** Unclaimed places, over every WorkloadSpread (diagnostics, tests). */
  size(): number {
    let n = 0;
    for (const e of this.#entries.values()) n += e.places.length;
    return n;
  }

  /**
   * Whether this pool reserved the place `uid` (claimed or not), told by its
   * name: a place in the status that it did not reserve is another
   * replica's (or a stopped process's, until the controller drops it).
   */
  reserved(uid: string): boolean {
    return uid.startsWith(RESERVED_AHEAD_PREFIX) && uid.startsWith(this.#name, RESERVED_AHEAD_PREFIX.length);
  }

  /** The next place reserved ahead for a pod without a name of this WorkloadSpread and version, if any. */
  claim(wsUid: string, version: string): Claim | undefined {
    const entry = this.#entries.get(entryKey(wsUid, version));
    if (entry === undefined) return undefined;
    this.#dropStale(entry);
    const place = entry.places.shift();
    if (place === undefined) return undefined;
    entry.claims++;
    this.#arm(entry);
    const want = entry.refill === undefined && entry.places.length * 2 <= entry.lastFill ? this.#refillWant(entry) : 0;
    if (want > 0) {
      const refill = this.#refill(entry, want)
        .catch((err: unknown) => this.#log.warn({ err: err instanceof Error ? err.message : String(err) }, 'refilling the places reserved ahead failed'))
        .finally(() => {
          this.#pending.delete(refill);
          if (entry.refill === refill) entry.refill = undefined;
        });
      this.#pending.add(refill);
      entry.refill = refill;
    }
    const unclaimed: Record<string, number> = {};
    for (const p of entry.places) unclaimed[p.subset] = (unclaimed[p.subset] ?? 0) + 1;
    return { subset: place.subset, uid: place.uid, version, unclaimed, ws: entry.ws };
  }

  /**
   * `claim` for a pod not queued for a round yet: while the line is empty
   * and a refill is being written, waits for that refill and claims from it.
   * Its places are for this pod. Decided on a status that holds them
   * instead, the pod would find their room taken and go past them — to an
   * unlimited subset, or to none — and they would be given back unclaimed,
   * leaving their subset short of its pods. Not for a pod inside a round:
   * the refill may be queued behind it. `gone`: the caller gave up while
   * the pod waited; it takes no place then.
   */
  async claimOrAwait(wsUid: string, version: string, gone: () => boolean = () => false): Promise<Claim | undefined> {
    for (;;) {
      const claim = this.claim(wsUid, version);
      if (claim !== undefined) return claim;
      const refill = this.#entries.get(entryKey(wsUid, version))?.refill;
      if (refill === undefined) return undefined;
      await refill;
      if (gone()) return undefined;
    }
  }

  /**
   * A claimed place the pod did not take after all: core decided otherwise
   * (the spec changed, or in Adaptive mode no node of the place's subset can
   * host the pod any more). The places were reserved on a state that no
   * longer holds: that one and every unclaimed place of its line go back at
   * once, in one write, and the next pods are decided afresh.
   */
  refused(wsUid: string, claim: Claim): void {
    const entry = this.#entries.get(entryKey(wsUid, claim.version));
    if (entry === undefined) return;
    entry.places.unshift({ subset: claim.subset, uid: claim.uid, at: Number.NEGATIVE_INFINITY });
    entry.timer?.cancel();
    const release = this.#release(entry).finally(() => this.#pending.delete(release));
    this.#pending.add(release);
  }

  /**
   * The group commit's hook: after a round decided reservations for pods
   * without a name, reserve ahead for their successors in the same write.
   */
  extend(key: WorkloadSpreadKey, current: WorkloadSpread, values: readonly unknown[]): { status: WorkloadSpreadStatus; written: (ws: WorkloadSpread) => void } | undefined {
    if (this.#stopped) return undefined;
    let version: string | undefined;
    let template: Pod | undefined;
    let reserved = 0;
    for (const v of values) {
      const d = v as PodCreateDecision;
      if (d !== null && typeof d === 'object' && d.kind === 'placed' && d.reservedFor !== undefined) {
        version = d.reservedFor;
        template = d.template;
        reserved++;
      }
    }
    if (version === undefined) return undefined;
    const existing = this.#entries.get(entryKey(key.uid, version));
    const demand = reserved + (existing?.claims ?? 0);
    const now = this.#o.clock.now();
    const want = Math.min(AHEAD_MAX, 2 * demand, existing === undefined ? AHEAD_MAX : this.#claimable(existing, now));
    const ahead = reserveAhead({ view: this.#o.view, namespace: key.namespace, ws: current, version, ...(template === undefined ? {} : { pod: template }), want, now, newUid: this.#placeName });
    // The round writes anyway: it also stamps the line's older places again.
    const base = ahead?.status ?? current.status;
    if (base === undefined) return undefined;
    const renewal = this.#renewal(existing, current, base, version, now);
    if (ahead === undefined) {
      if (renewal.renewed === undefined || existing === undefined) return undefined;
      const renewed = renewal.renewed;
      return { status: renewal.status, written: () => this.#restamped(existing, renewed, now) };
    }
    const v = version;
    return {
      status: renewal.status,
      written: (ws) => {
        if (this.#stopped) {
          // Stored while stopping: nobody will claim them.
          void this.#giveBackUnused(key, v, ahead.uids.map((p) => p.uid));
          return;
        }
        if (existing !== undefined) this.#restamped(existing, renewal.renewed, now);
        let entry = this.#entries.get(entryKey(key.uid, v));
        if (entry === undefined) {
          entry = { key, version: v, places: [], ws, claims: 0, lastFill: 0, filledAt: now, template, refill: undefined, timer: undefined };
          this.#entries.set(entryKey(key.uid, v), entry);
        }
        entry.template = template ?? entry.template;
        this.#filled(entry, ahead.uids, ws, now);
        this.#log.debug({ namespace: key.namespace, name: key.name, version: v, places: ahead.uids.length }, 'places reserved ahead');
      },
    };
  }

  #filled(entry: Entry, uids: readonly { subset: string; uid: string }[], ws: WorkloadSpread, at: number): void {
    for (const { subset, uid } of uids) entry.places.push({ subset, uid, at });
    entry.ws = ws;
    entry.claims = 0;
    entry.lastFill = uids.length;
    entry.filledAt = this.#o.clock.now();
    this.#arm(entry);
  }

  /** A refill's size: REFILL_FACTOR times the last fill, at most AHEAD_MAX and what the line can take (`#claimable`); 0: none. */
  #refillWant(entry: Entry): number {
    return Math.min(AHEAD_MAX, REFILL_FACTOR * Math.max(1, entry.lastFill), this.#claimable(entry, this.#o.clock.now()));
  }

  /**
   * How many more places the line can take and still see each claimed
   * within PLACE_MAX_AGE_MS, at the rate it was claimed since its last fill
   * (after the places already in it). A burst claims fast, so this does not
   * bound it; a trickle of pods is not reserved for far ahead.
   */
  #claimable(entry: Entry, now: number): number {
    const perMs = entry.claims / Math.max(1, now - entry.filledAt);
    return Math.floor(perMs * PLACE_MAX_AGE_MS) - entry.places.length;
  }

  /** The status a write going out anyway carries: with the line's places RENEW_AGE_MS old or older stamped again. */
  #renewal(entry: Entry | undefined, ws: WorkloadSpread, status: WorkloadSpreadStatus, version: string, now: number): { status: WorkloadSpreadStatus; renewed?: Renewed } {
    if (entry === undefined) return { status };
    const uids: string[] = [];
    for (const p of entry.places) if (now - p.at >= RENEW_AGE_MS) uids.push(p.uid);
    const renewed = renewAhead({ ...ws, status }, version, uids, now);
    return renewed === undefined ? { status } : { status: renewed.status, renewed: { uids: new Set(uids), kept: renewed.kept } };
  }

  /** After the write that stamped them: the places still in the line carry the new stamp; one whose entry was gone (the controller dropped it) leaves the line. Nothing for a line given back meanwhile. */
  #restamped(entry: Entry, renewed: Renewed | undefined, at: number): void {
    if (renewed === undefined || this.#entries.get(entryKey(entry.key.uid, entry.version)) !== entry) return;
    entry.places = entry.places.filter((p) => !renewed.uids.has(p.uid) || renewed.kept.has(p.uid));
    for (const p of entry.places) if (renewed.uids.has(p.uid)) p.at = at;
  }

  /** Places at the head of the line older than PLACE_MAX_AGE_MS leave it and are given back (one write). */
  #dropStale(entry: Entry): void {
    const oldest = this.#o.clock.now() - PLACE_MAX_AGE_MS;
    let n = 0;
    while (n < entry.places.length && (entry.places[n]?.at ?? oldest) < oldest) n++;
    if (n === 0) return;
    const stale = entry.places.splice(0, n).map((p) => p.uid);
    const back = this.#giveBackUnused(entry.key, entry.version, stale).finally(() => this.#pending.delete(back));
    this.#pending.add(back);
  }

  /**
   * Reserves ahead again, in a round of its own, before the places run out:
   * `want` places (`#refillWant`), at most what the workload still lacks.
   * The same write stamps the line's older places again. Nothing waits on it; a failed write only means the next pods
   * queue for a round as without the pool.
   */
  async #refill(entry: Entry, want: number): Promise<void> {
    const commit = this.#commit;
    if (commit === undefined || this.#stopped) return;
    const { key, version } = entry;
    let at = Number.NEGATIVE_INFINITY;
    let renewed: Renewed | undefined;
    const outcome = await commit.submit(key, (current) => {
      at = this.#o.clock.now();
      const ahead = current === undefined ? undefined : reserveAhead({ view: this.#o.view, namespace: key.namespace, ws: current, version, ...(entry.template === undefined ? {} : { pod: entry.template }), want, now: at, newUid: this.#placeName });
      if (ahead === undefined || current === undefined) return { value: undefined };
      const renewal = this.#renewal(entry, current, ahead.status, version, at);
      renewed = renewal.renewed;
      return { value: ahead.uids, status: renewal.status };
    });
    if (!outcome.ok || outcome.value === undefined || outcome.ws === undefined) return;
    // Still the same entry (not given back meanwhile, not stopping): the new places join the line.
    if (!this.#stopped && this.#entries.get(entryKey(key.uid, version)) === entry) {
      this.#restamped(entry, renewed, at);
      this.#filled(entry, outcome.value, outcome.ws, at);
    }
    else await this.#giveBackUnused(key, version, outcome.value.map((p) => p.uid));
    this.#log.debug({ namespace: key.namespace, name: key.name, version, places: outcome.value.length }, 'places reserved ahead (refill)');
  }

  /**
   * No more claims or fills; every unclaimed place is given back (one status
   * write per WorkloadSpread and version), refills under way included. A
   * write that fails leaves its places to the controller (30 s).
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const e of entries) e.timer?.cancel();
    await Promise.all([
      ...entries.map((e) => this.#giveBackUnused(e.key, e.version, e.places.splice(0).map((p) => p.uid))),
      ...this.#pending,
    ]);
  }

  /** (Re)starts the idle countdown of an entry. */
  #arm(entry: Entry): void {
    entry.timer?.cancel();
    entry.timer = this.#o.clock.setTimeout(() => this.#release(entry), AHEAD_IDLE_MS, { name: 'reservation pool release' });
  }

  async #release(entry: Entry): Promise<void> {
    entry.timer = undefined;
    const uids = entry.places.splice(0).map((p) => p.uid);
    this.#entries.delete(entryKey(entry.key.uid, entry.version));
    await this.#giveBackUnused(entry.key, entry.version, uids);
  }

  /** One status write drops unclaimed places (core `releaseAhead`). */
  async #giveBackUnused(key: WorkloadSpreadKey, version: string, uids: string[]): Promise<void> {
    if (uids.length === 0 || this.#commit === undefined) return;
    const outcome = await this.#commit.submit(
      key,
      (ws) => {
        const status = ws === undefined ? undefined : releaseAhead(ws, version, uids);
        return status === undefined ? { value: null } : { value: null, status };
      },
      { frees: true },
    );
    const fields = { namespace: key.namespace, name: key.name, version, places: uids.length };
    if (outcome.ok) this.#log.debug(fields, 'unclaimed places given back');
    else this.#log.info({ ...fields, err: outcome.error }, 'unclaimed places could not be given back; the controller drops them after 30 s');
  }
}

function entryKey(wsUid: string, version: string): string {
  return `${wsUid}\u0000${version}`;
}
