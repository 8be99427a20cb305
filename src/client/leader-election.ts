/**
 * Leader election on a `coordination.k8s.io/v1` Lease, with client-go's
 * rules (tools/leaderelection) and controller-runtime's defaults (lease
 * 15 s, renew deadline 10 s, retry 2 s):
 *
 * - a candidate tries every retry period (+ up to 1.2× jitter) to take the
 *   lease; it may when the lease does not exist, has no holder (released),
 *   or has not changed for its `leaseDurationSeconds` *as observed locally*
 *   (the holder's clock is never trusted, as upstream);
 * - every write is a PUT carrying the resourceVersion it read (optimistic
 *   concurrency): of two candidates racing, one gets a 409 and stays follower;
 * - the leader renews every retry period; if no renewal succeeds within the
 *   renew deadline it has lost: the `signal` given to `onStartedLeading` is
 *   aborted, the work it started is awaited, `onStoppedLeading` runs, and the
 *   elector goes back to trying to acquire;
 * - `stop()` ends leadership the same way and then releases the lease (no
 *   holder, 1 s duration) so a successor need not wait for expiry;
 * - `renewTime`/`acquireTime` are MicroTime; `leaseTransitions` counts
 *   changes of holder.
 * All waits are background timers on the clock; each attempt is one tracked
 * activity. Start reading at `#loop`.
 */
import type { Clock } from '../clock/clock.ts';
import { formatMicroTime } from '../k8s/time.ts';
import type { KubeObject } from '../k8s/types.ts';
import { describeError, isConflict, isNotFound } from './errors.ts';
import type { KubeClient } from './http-client.ts';
import { silentLogger, type Logger } from './logger.ts';
import { BUILTIN } from './resources.ts';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  [key: string]: unknown;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  /** The Lease's name (one per elected component). */
  name: string;
  /** This candidate (pod name + a random suffix, usually). */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Called when this candidate becomes leader; stop the work when `signal` aborts. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called after leadership ended (lost or stopped), once the leader's work has settled. */
  onStoppedLeading?(): void;
  /** Called when the observed holder changes (including to this candidate). */
  onNewLeader?(identity: string): void;
  /** Give the lease up on `stop()` (default true). */
  releaseOnStop?: boolean;
  random?: () => number;
  log?: Logger;
}

export const LEADER_ELECTION_DEFAULTS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 } as const;

/** client-go's JitterFactor for acquire attempts. */
const ACQUIRE_JITTER = 1.2;

export class LeaderElector {
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #opts: LeaderElectionOptions;
  readonly #leaseMs: number;
  readonly #deadlineMs: number;
  readonly #retryMs: number;
  readonly #random: () => number;
  readonly #log: Logger;
  readonly #stop = new AbortController();
  #loopDone: Promise<void> | undefined;
  #observed: LeaseSpec | undefined;
  #observedAt = 0;
  /** The lease as last written or read, for its resourceVersion. */
  #lease: Lease | undefined;
  #leading = false;

  constructor(options: LeaderElectionOptions) {
    this.#client = options.client;
    this.#clock = options.client.clock;
    this.#opts = options;
    this.#leaseMs = options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs;
    this.#deadlineMs = options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs;
    this.#retryMs = options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs;
    this.#random = options.random ?? Math.random;
    this.#log = options.log ?? silentLogger;
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /** The holder last observed on the lease ('' when released or unknown). */
  get leader(): string {
    return this.#observed?.holderIdentity ?? '';
  }

  start(): void {
    if (this.#loopDone !== undefined || this.#stop.signal.aborted) return;
    this.#loopDone = this.#loop().catch((err: unknown) => {
      this.#log.error({ namespace: this.#opts.namespace, name: this.#opts.name, err: describeError(err) }, 'leader election loop failed');
    });
  }

  /** Ends leadership (if held), releases the lease, stops trying. */
  async stop(): Promise<void> {
    if (!this.#stop.signal.aborted) this.#stop.abort(new Error('leader election stopped'));
    await this.#loopDone;
  }

  async #loop(): Promise<void> {
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      if (!(await this.#acquire())) return;
      this.#leading = true;
      this.#log.info({ namespace: this.#opts.namespace, name: this.#opts.name, identity: this.#opts.identity }, 'became leader');
      const leading = new AbortController();
      const work = Promise.resolve()
        .then(() => this.#opts.onStartedLeading(leading.signal))
        .catch((err: unknown) => this.#log.error({ namespace: this.#opts.namespace, name: this.#opts.name, err: describeError(err) }, 'leader work failed'));
      await this.#renewUntilLost();
      this.#leading = false;
      leading.abort(new Error(stop.aborted ? 'leader election stopped' : 'leadership lost'));
      await work;
      if (!stop.aborted) this.#log.warn({ namespace: this.#opts.namespace, name: this.#opts.name, identity: this.#opts.identity }, 'leadership lost');
      try {
        this.#opts.onStoppedLeading?.();
      } catch (err) {
        this.#log.error({ namespace: this.#opts.namespace, name: this.#opts.name, err: describeError(err) }, 'onStoppedLeading failed');
      }
      if (stop.aborted && (this.#opts.releaseOnStop ?? true)) await this.#release();
    }
  }

  /** Sleeps on the clock (background); false when stopped meanwhile. */
  async #wait(ms: number): Promise<boolean> {
    try {
      await this.#clock.sleep(ms, this.#stop.signal, { background: true, name: `leader election ${this.#opts.name}` });
      return true;
    } catch {
      return false;
    }
  }

  /** Tries until the lease is ours (true) or the elector stops (false). */
  async #acquire(): Promise<boolean> {
    for (;;) {
      if (this.#stop.signal.aborted) return false;
      if (await this.#attempt(this.#deadlineMs)) return true;
      if (!(await this.#wait(this.#retryMs * (1 + ACQUIRE_JITTER * this.#random())))) return false;
    }
  }

  /** Renews every retry period; returns when a renewal round misses the deadline, or on stop. */
  async #renewUntilLost(): Promise<void> {
    for (;;) {
      if (!(await this.#wait(this.#retryMs))) return;
      const roundStart = this.#clock.now();
      for (;;) {
        const left = this.#deadlineMs - (this.#clock.now() - roundStart);
        if (left <= 0) return;
        if (await this.#attempt(left)) break;
        if (this.#stop.signal.aborted) return;
        if (!(await this.#wait(Math.min(this.#retryMs, this.#deadlineMs - (this.#clock.now() - roundStart))))) return;
      }
    }
  }

  #attempt(timeoutMs: number): Promise<boolean> {
    return this.#clock.activity.run(`leader election ${this.#opts.name}`, () => this.#tryAcquireOrRenew(timeoutMs));
  }

  #observe(spec: LeaseSpec, now: number): void {
    const prev = this.#observed;
    const same =
      prev !== undefined &&
      prev.holderIdentity === spec.holderIdentity &&
      prev.renewTime === spec.renewTime &&
      prev.acquireTime === spec.acquireTime &&
      prev.leaseTransitions === spec.leaseTransitions &&
      prev.leaseDurationSeconds === spec.leaseDurationSeconds;
    if (same) return;
    this.#observed = { ...spec };
    this.#observedAt = now;
    const holder = spec.holderIdentity ?? '';
    if (holder !== '' && holder !== (prev?.holderIdentity ?? '')) {
      try {
        this.#opts.onNewLeader?.(holder);
      } catch (err) {
        this.#log.error({ namespace: this.#opts.namespace, name: this.#opts.name, err: describeError(err) }, 'onNewLeader failed');
      }
    }
  }

  async #tryAcquireOrRenew(timeoutMs: number): Promise<boolean> {
    const client = this.#client;
    const { namespace, name, identity } = this.#opts;
    const call = { namespace, timeoutMs: Math.max(1, timeoutMs), signal: this.#stop.signal };
    const now = this.#clock.now();
    const seconds = Math.max(1, Math.ceil(this.#leaseMs / 1000));
    let current: Lease;
    try {
      current = await client.get<Lease>(BUILTIN.leases, name, call);
    } catch (err) {
      if (!isNotFound(err)) {
        if (!this.#stop.signal.aborted) this.#log.warn({ namespace: this.#opts.namespace, name, err: describeError(err) }, 'cannot read the lease');
        return false;
      }
      const spec: LeaseSpec = { holderIdentity: identity, leaseDurationSeconds: seconds, acquireTime: formatMicroTime(now), renewTime: formatMicroTime(now), leaseTransitions: 0 };
      try {
        this.#lease = await client.create<Lease>(BUILTIN.leases, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec }, call);
      } catch (createErr) {
        this.#log.debug({ namespace: this.#opts.namespace, name, err: describeError(createErr) }, 'lost the race to create the lease');
        return false;
      }
      this.#observe(spec, now);
      return true;
    }
    const old: LeaseSpec = typeof current.spec === 'object' && current.spec !== null ? current.spec : {};
    this.#observe(old, now);
    const holder = typeof old.holderIdentity === 'string' ? old.holderIdentity : '';
    const durationMs = (typeof old.leaseDurationSeconds === 'number' ? old.leaseDurationSeconds : seconds) * 1000;
    if (holder !== '' && holder !== identity && this.#observedAt + durationMs > now) return false;
    const mine = holder === identity;
    const spec: LeaseSpec = {
      ...old,
      holderIdentity: identity,
      leaseDurationSeconds: seconds,
      acquireTime: mine && typeof old.acquireTime === 'string' ? old.acquireTime : formatMicroTime(now),
      renewTime: formatMicroTime(now),
      leaseTransitions: (typeof old.leaseTransitions === 'number' ? old.leaseTransitions : 0) + (mine ? 0 : 1),
    };
    try {
      this.#lease = await client.update<Lease>(BUILTIN.leases, { ...current, spec }, call);
    } catch (err) {
      // A conflict is the normal outcome of a race with another candidate.
      this.#log[isConflict(err) ? 'debug' : 'warn']({ namespace: this.#opts.namespace, name, err: describeError(err) }, mine ? 'cannot renew the lease' : 'cannot take the lease');
      return false;
    }
    this.#observe(spec, now);
    return true;
  }

  async #release(): Promise<void> {
    const lease = this.#lease;
    if (lease === undefined || this.#observed?.holderIdentity !== this.#opts.identity) return;
    const now = this.#clock.now();
    const spec: LeaseSpec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: formatMicroTime(now), acquireTime: formatMicroTime(now) };
    try {
      await this.#clock.activity.run(`leader election ${this.#opts.name} release`, () =>
        this.#client.update<Lease>(BUILTIN.leases, { ...lease, spec }, { timeoutMs: this.#deadlineMs }),
      );
      this.#observed = spec;
      this.#log.info({ namespace: this.#opts.namespace, name: this.#opts.name, identity: this.#opts.identity }, 'released the lease');
    } catch (err) {
      this.#log.warn({ namespace: this.#opts.namespace, name: this.#opts.name, err: describeError(err) }, 'cannot release the lease');
    }
  }
}
