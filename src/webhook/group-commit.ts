/**
 * Group commit of WorkloadSpread status reservations (DECISIONS D13; spec
 * §2.3 C, §2.4, §3.4): admissions for one WorkloadSpread queue up; one
 * "committer" per WorkloadSpread takes every admission waiting, decides them
 * in arrival order on the evolving status, and writes ONE status update
 * carrying all their reservations. A burst of pod creations therefore costs a
 * handful of API round trips instead of one (or more, with conflicts) per pod.
 *
 * Invariants:
 * - an admission whose decision changed the status is answered only after the
 *   write carrying it succeeded (never "admitted, reservation lost");
 * - no wait without a reason (issue 13): a decision that changed nothing and
 *   says it holds alone (`Decision.alone`) is answered at once — decided on
 *   the stored state, on the round's state with reservations not yet written,
 *   or, while a round's write is in flight, on that round's state in a side
 *   lane (serialized per WorkloadSpread; the committer waits for the lane
 *   before its next round). Pod admission marks alone the decisions that take
 *   no quota: a pod placed in a subset that keeps no bookkeeping (unlimited,
 *   no minReplicas) or in no subset (core `holdsWithoutWrite`). Why that is
 *   safe whatever happens to the write, with any number of manager replicas:
 *   such a pod is counted against no limit, so it cannot put a subset over
 *   one — no limit's arithmetic reads it; the reservations it saw only steered
 *   it away from subsets those reservations filled, and if their write fails
 *   the pod merely sits in a later subset than it might have (the reference
 *   gives the same answer when reservations are written one by one and a
 *   later status write fails). Every other replica decides on the stored
 *   status, which these answers never change. A decision that rests on the
 *   batch's reservations (a retried admission of a pod whose reservation is
 *   in the batch) is not alone and waits for the write as before;
 * - an admission whose decision needs no write and is not alone (deletion
 *   bookkeeping, budgets) is answered at once when it was decided on the
 *   stored state, or with the batch's write when it saw reservations of that
 *   batch; during a write in flight it waits for the next round;
 * - each round runs under the per-WorkloadSpread lock shared with the
 *   controller's status writes (`WorkloadSpreadState.withLock`), starting from
 *   the freshest copy in-process (local copy vs informer, by resourceVersion),
 *   or after a conflict from a direct GET;
 * - on 409 every admission of the round is decided again on the fresh copy;
 *   each admission survives at most `STATUS_UPDATE_ATTEMPTS` (4) conflicting
 *   writes, with client-go DefaultBackoff-like sleeps (10, 50, 250 ms, 10 %
 *   jitter) on the clock and outside the lock, then fails with a clear message;
 * - a WorkloadSpread that vanished (NotFound on the re-read) is decided as
 *   `undefined`: the caller admits without a subset, as the reference does.
 *
 * On a virtual clock the committer and the side lane are tracked activities,
 * and a waiting admission parks on a clock sleep, so back-off sleeps let
 * virtual time pass. Start at `GroupCommit.submit`.
 */
import type { Clock, Timer } from '../clock/clock.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { STATUS_UPDATE_ATTEMPTS } from '../api/keys.ts';
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import type { ObjectMeta } from '../k8s/types.ts';

/**
 * What can be group-committed: an object with metadata and a status. The
 * defaults are the WorkloadSpread's; the DomainDisruptionBudget webhook
 * (budget-eviction.ts) commits its records through the same machinery.
 */
export interface StatusObject<S> {
  metadata?: ObjectMeta;
  status?: S;
}

/** The object (WorkloadSpread, or a budget) a batch is about. */
export interface WorkloadSpreadKey {
  uid: string;
  namespace: string;
  name: string;
}

/**
 * What one admission decided: its answer and, when it reserved or released
 * quota, the whole new status. `alone`: without a status, the answer holds
 * whatever becomes of other admissions' unwritten changes it saw, so it is
 * given at once (see the header).
 */
export interface Decision<T, S = WorkloadSpreadStatus> {
  value: T;
  status?: S;
  alone?: boolean;
}

/** Decides one admission on a copy of the WorkloadSpread (undefined: it no longer exists). */
export type Decide<T, O = WorkloadSpread, S = WorkloadSpreadStatus> = (ws: O | undefined) => Decision<T, S> | Promise<Decision<T, S>>;

export type CommitOutcome<T, O = WorkloadSpread> =
  | { ok: true; value: T; ws: O | undefined }
  | { ok: false; error: string; conflict: boolean };

/** A read straight from the API server (`StatusWriter.getFresh` for WorkloadSpreads). */
export type StoreRead<O> = { ok: true; ws: O } | { ok: false; reason: 'NotFound' | 'Error'; message: string; error: unknown };

/** A conditional status write (`StatusWriter.writeStatus` for WorkloadSpreads). */
export type StoreWrite<O> = { ok: true; ws: O } | { ok: false; reason: 'Conflict' | 'NotFound' | 'Error'; message: string; error: unknown };

/** What the committer needs from src/kube (a `WorkloadSpreadState` and a `StatusWriter` fit). */
export interface GroupCommitStore<O = WorkloadSpread, S = WorkloadSpreadStatus> {
  withLock<R>(uid: string, fn: () => Promise<R>): Promise<R>;
  /** The freshest in-process copy: the informer's or the one this process last wrote. */
  freshest(namespace: string, name: string): O | undefined;
  /** Straight from the API server. */
  getFresh(namespace: string, name: string): Promise<StoreRead<O>>;
  /** PUT status with the copy's resourceVersion. */
  writeStatus(ws: O, status: S): Promise<StoreWrite<O>>;
}

export interface GroupCommitMetrics {
  /** A status write carried this many admissions' status changes (reservations or deletion records). */
  batchSize?(size: number): void;
  /** A status write of the webhook hit 409. */
  conflict?(): void;
}

export interface GroupCommitOptions<O = WorkloadSpread, S = WorkloadSpreadStatus> {
  clock: Clock;
  store: GroupCommitStore<O, S>;
  /** The kind named in messages (default WorkloadSpread). */
  kind?: string;
  metrics?: GroupCommitMetrics;
  log?: Logger;
  /** Conflicting writes an admission survives (default 4, the reference's). */
  attempts?: number;
  /** For back-off jitter (tests pass a fixed one). */
  random?: () => number;
  /** Longest a queued admission waits for its answer before failing (default 60 s, a safety net). */
  waitTimeoutMs?: number;
  /**
   * Called once per round that changed the status, with the values its
   * admissions decided: may add to the status the round writes (places
   * reserved ahead, reservation-pool.ts); `written` gets the stored copy once
   * the write succeeded. Nothing else sees the addition before then.
   */
  extend?: (key: WorkloadSpreadKey, current: O, values: readonly unknown[]) => { status: S; written: (ws: O) => void } | undefined;
}

/** client-go's retry.DefaultBackoff: 10 ms, factor 5, jitter 0.1. */
const BACKOFF_INITIAL_MS = 10;
const BACKOFF_FACTOR = 5;
const BACKOFF_JITTER = 0.1;

interface Waiter<O, S> {
  decide: Decide<unknown, O, S>;
  resolve: (outcome: CommitOutcome<unknown, O>) => void;
  conflicts: number;
  /** Gives room back only (`submit`'s `frees`). */
  frees: boolean;
}

interface Queue<O, S> {
  key: WorkloadSpreadKey;
  waiting: Waiter<O, S>[];
  running: boolean;
  /** The last write conflicted: read from the API server, not the caches. */
  refresh: boolean;
  /** Consecutive conflicting rounds (for the back-off). */
  streak: number;
  /** While a round's write is in flight: the state it wrote, reservations included (the side lane decides on it). */
  writing: { ws: O | undefined } | undefined;
  /** The side lane: decisions taken during the write, one after another. */
  side: Promise<void>;
}

export class GroupCommit<O extends StatusObject<unknown> = WorkloadSpread, S = WorkloadSpreadStatus> {
  readonly #clock: Clock;
  readonly #store: GroupCommitStore<O, S>;
  readonly #kind: string;
  readonly #metrics: GroupCommitMetrics;
  readonly #log: Logger;
  readonly #attempts: number;
  readonly #random: () => number;
  readonly #waitTimeoutMs: number;
  /** Admissions waiting for their outcome, oldest first, with their deadlines (`#park`). */
  readonly #waits = new Set<{ deadline: number; expire: () => void }>();
  #waitTimer: Timer | undefined;
  readonly #extend: GroupCommitOptions<O, S>['extend'];
  readonly #queues = new Map<string, Queue<O, S>>();

  constructor(options: GroupCommitOptions<O, S>) {
    this.#clock = options.clock;
    this.#store = options.store;
    this.#kind = options.kind ?? 'WorkloadSpread';
    this.#metrics = options.metrics ?? {};
    this.#log = options.log ?? silentLogger;
    this.#attempts = Math.max(1, options.attempts ?? STATUS_UPDATE_ATTEMPTS);
    this.#random = options.random ?? Math.random;
    this.#waitTimeoutMs = options.waitTimeoutMs ?? 60_000;
    this.#extend = options.extend;
  }

  /** Admissions queued or being decided, per WorkloadSpread UID (diagnostics). */
  pending(uid: string): number {
    return this.#queues.get(uid)?.waiting.length ?? 0;
  }

  /**
   * Queues one admission for the WorkloadSpread `key` and resolves with its
   * decided value once any status change it made is stored.
   *
   * `frees`: the change only gives room back (places reserved ahead that no
   * pod will take). It is never decided aside, and while it waits, no
   * admission is either: the state of the round in flight still holds that
   * room, and a pod decided on it would go past it for good (to an
   * unlimited subset, answered at once).
   */
  submit<T>(key: WorkloadSpreadKey, decide: Decide<T, O, S>, options: { frees?: boolean } = {}): Promise<CommitOutcome<T, O>> {
    let queue = this.#queues.get(key.uid);
    if (queue === undefined) {
      queue = { key, waiting: [], running: false, refresh: false, streak: 0, writing: undefined, side: Promise.resolve() };
      this.#queues.set(key.uid, queue);
    }
    const q0 = queue;
    const outcome = new Promise<CommitOutcome<T, O>>((resolve) => {
      const frees = options.frees === true;
      const waiter: Waiter<O, S> = { decide: decide as Decide<unknown, O, S>, resolve: resolve as (o: CommitOutcome<unknown, O>) => void, conflicts: 0, frees };
      if (q0.writing !== undefined && !frees && !q0.waiting.some((w) => w.frees)) this.#decideAside(q0, waiter, q0.writing.ws);
      else q0.waiting.push(waiter);
    });
    if (!queue.running) {
      queue.running = true;
      const q = queue;
      void this.#clock.activity.run(`group-commit ${key.namespace}/${key.name}`, () => this.#drain(q));
    }
    return this.#park(outcome);
  }

  /**
   * Waits for the outcome, at most `waitTimeoutMs`. The deadlines share one
   * clock timer (every wait is as long, so the oldest deadline is the first
   * in line), not a timer and an abort signal each; a waiting admission does
   * not count as busy on a virtual clock (the committer does, while it
   * works), and no timer is left once nothing waits.
   */
  async #park<T>(outcome: Promise<CommitOutcome<T, O>>): Promise<CommitOutcome<T, O>> {
    let expire = (): void => {};
    const timeout = new Promise<CommitOutcome<T, O>>((resolve) => {
      expire = () => resolve({ ok: false, conflict: false, error: `no answer from the ${this.#kind} status writer within ${this.#waitTimeoutMs} ms` });
    });
    const wait = { deadline: this.#clock.now() + this.#waitTimeoutMs, expire };
    this.#waits.add(wait);
    this.#armWaitTimer();
    try {
      return await this.#clock.activity.waitFor(Promise.race([outcome, timeout]));
    } finally {
      this.#waits.delete(wait);
      if (this.#waits.size === 0) {
        this.#waitTimer?.cancel();
        this.#waitTimer = undefined;
      }
    }
  }

  /** Arms the one wait timer for the oldest deadline, if something waits and it is not armed. */
  #armWaitTimer(): void {
    if (this.#waitTimer !== undefined) return;
    const first = this.#waits.values().next();
    if (first.done === true) return;
    this.#waitTimer = this.#clock.setTimeout(
      () => {
        this.#waitTimer = undefined;
        const now = this.#clock.now();
        for (const wait of this.#waits) {
          if (wait.deadline > now) break;
          this.#waits.delete(wait);
          wait.expire();
        }
        this.#armWaitTimer();
      },
      Math.max(0, first.value.deadline - this.#clock.now()),
      { name: 'group-commit wait' },
    );
  }

  /**
   * Decides an admission that arrived while the round's write is in flight,
   * on that round's state, in the side lane: answered at once when it changed
   * nothing and holds alone, otherwise queued for the next round (decided
   * again there on the stored state).
   */
  #decideAside(queue: Queue<O, S>, waiter: Waiter<O, S>, ws: O | undefined): void {
    const { key } = queue;
    queue.side = queue.side.then(() =>
      this.#clock.activity.run(`group-commit side lane ${key.namespace}/${key.name}`, async () => {
        let decision: Decision<unknown, S>;
        try {
          decision = await waiter.decide(ws);
        } catch (err) {
          waiter.resolve({ ok: false, conflict: false, error: err instanceof Error ? err.message : String(err) });
          return;
        }
        if (decision.status === undefined && decision.alone === true) waiter.resolve({ ok: true, value: decision.value, ws });
        else queue.waiting.push(waiter);
      }),
    );
  }

  async #drain(queue: Queue<O, S>): Promise<void> {
    try {
      while (queue.waiting.length > 0) {
        const batch = queue.waiting.splice(0);
        const retry = await this.#round(queue, batch);
        // What arrived during the write was decided in the side lane; those that must wait are queued by now.
        await queue.side;
        if (retry.length > 0) {
          queue.streak++;
          await this.#clock.sleep(this.#backoffMs(queue.streak), undefined, { name: 'group-commit backoff' });
          queue.waiting.unshift(...retry);
        } else {
          queue.streak = 0;
        }
      }
    } catch (err) {
      // #round never throws by design; this keeps a bug from stranding the waiters.
      const message = `group commit failed: ${err instanceof Error ? err.message : String(err)}`;
      this.#log.error({ namespace: queue.key.namespace, name: queue.key.name, err: message }, 'group commit failed');
      for (const w of queue.waiting.splice(0)) w.resolve({ ok: false, conflict: false, error: message });
    } finally {
      queue.running = false;
      if (queue.waiting.length === 0) this.#queues.delete(queue.key.uid);
      else {
        // Someone queued between the last check and now: keep going.
        queue.running = true;
        void this.#clock.activity.run(`group-commit ${queue.key.namespace}/${queue.key.name}`, () => this.#drain(queue));
      }
    }
  }

  /** DefaultBackoff: 10 ms × 5^(n−1), at most three steps, plus up to 10 % jitter. */
  #backoffMs(streak: number): number {
    const base = BACKOFF_INITIAL_MS * BACKOFF_FACTOR ** Math.min(Math.max(streak - 1, 0), STATUS_UPDATE_ATTEMPTS - 2);
    const r = Math.min(1, Math.max(0, this.#random()));
    return Math.round(base * (1 + BACKOFF_JITTER * r));
  }

  /** One read-decide-write under the lock; returns the admissions to try again after a conflict. */
  async #round(queue: Queue<O, S>, batch: Waiter<O, S>[]): Promise<Waiter<O, S>[]> {
    const { key } = queue;
    return this.#store.withLock(key.uid, async () => {
      let ws: O | undefined;
      if (queue.refresh) {
        const fresh = await this.#store.getFresh(key.namespace, key.name);
        if (fresh.ok) ws = fresh.ws;
        else if (fresh.reason !== 'NotFound') {
          for (const w of batch) w.resolve({ ok: false, conflict: false, error: `cannot read ${this.#kind} ${key.namespace}/${key.name}: ${fresh.message}` });
          return [];
        }
        queue.refresh = false;
      } else {
        ws = this.#store.freshest(key.namespace, key.name);
      }
      // A copy of another object with the same name (deleted and recreated) is not this WorkloadSpread.
      if (ws !== undefined && ws.metadata?.uid !== undefined && ws.metadata.uid !== key.uid) ws = undefined;

      let current = ws;
      let changed = false;
      let reservations = 0;
      const carried: { waiter: Waiter<O, S>; value: unknown }[] = [];
      for (const waiter of batch) {
        let decision: Decision<unknown, S>;
        try {
          decision = await waiter.decide(current);
        } catch (err) {
          waiter.resolve({ ok: false, conflict: false, error: err instanceof Error ? err.message : String(err) });
          continue;
        }
        if (decision.status !== undefined && current !== undefined) {
          current = { ...current, status: decision.status };
          changed = true;
          reservations++;
          carried.push({ waiter, value: decision.value });
        } else if (changed && decision.alone !== true) {
          carried.push({ waiter, value: decision.value });
        } else {
          waiter.resolve({ ok: true, value: decision.value, ws: current });
        }
      }
      if (!changed || current === undefined || ws === undefined) return [];

      this.#metrics.batchSize?.(reservations);
      let extension: ReturnType<NonNullable<GroupCommitOptions<O, S>['extend']>>;
      try {
        extension = this.#extend?.(key, current, carried.map((c) => c.value));
      } catch (err) {
        // An extension is an optimization: the round's own changes are written without it.
        this.#log.warn({ namespace: key.namespace, name: key.name, err: err instanceof Error ? err.message : String(err) }, 'group commit extension failed');
        extension = undefined;
      }
      queue.writing = { ws: current };
      let written: StoreWrite<O>;
      try {
        written = await this.#store.writeStatus(ws, (extension?.status ?? current.status ?? {}) as S);
      } finally {
        queue.writing = undefined;
      }
      if (written.ok) {
        for (const c of carried) c.waiter.resolve({ ok: true, value: c.value, ws: written.ws });
        extension?.written(written.ws);
        return [];
      }
      if (written.reason === 'Conflict') {
        this.#metrics.conflict?.();
        queue.refresh = true;
        const retry: Waiter<O, S>[] = [];
        for (const { waiter } of carried) {
          waiter.conflicts++;
          if (waiter.conflicts >= this.#attempts) {
            waiter.resolve({
              ok: false,
              conflict: true,
              error: `the status of ${this.#kind} ${key.namespace}/${key.name} could not be updated: ${waiter.conflicts} conflicting writes in a row (${written.message})`,
            });
          } else {
            retry.push(waiter);
          }
        }
        this.#log.debug({ namespace: key.namespace, name: key.name, batch: carried.length, retrying: retry.length }, 'status write conflict, re-deciding');
        return retry;
      }
      if (written.reason === 'NotFound') {
        // Gone between the read and the write: decide again on "no WorkloadSpread".
        queue.refresh = true;
        return carried.map((c) => c.waiter);
      }
      for (const c of carried) {
        c.waiter.resolve({ ok: false, conflict: false, error: `cannot update the status of ${this.#kind} ${key.namespace}/${key.name}: ${written.message}` });
      }
      return [];
    });
  }
}
