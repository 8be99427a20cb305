/**
 * `QueueLoop`: the one life of a level-triggered controller around its work
 * queue — the manager's controllers (WorkloadSpread, DomainDisruptionBudget,
 * rebalancer, webhook configurations) and every control loop of the embedded
 * cluster (scheduler, kubelet, workload controllers, garbage collector). Each
 * brings its keys, its event handlers and its sync; the loop is a `Runnable`
 * (runnable.ts) and keeps that contract for them.
 *
 * - `start(signal)` starts the informers the loop owns, waits for them and
 *   for whatever else must come first (`waitForSync`: shared caches, a CRD to
 *   install, discovery), then subscribes to events, enqueues every key once,
 *   arms a background resync (every key again every `resyncMs`; 0 or none
 *   disables; the safety net against a missed event) and runs `workers`
 *   loops; it resolves once they run, not when they end;
 * - the queue de-duplicates keys, never runs one key twice at once, retries
 *   failures with per-key back-off and honours a sync's requeue-after; in
 *   race mode (`races`) it waits a drawn delay before each sync, and with
 *   `turnPerSync` (the manager's loops) each sync starts on an event-loop
 *   turn of its own;
 * - `stop()` unsubscribes, cancels the resync, lets the controller cancel
 *   its own timers (`onStopping`), shuts the queue down without draining,
 *   stops the owned informers and waits for the workers, then `onStopped`.
 *   Each sync gets the queue's signal (`WorkContext.signal`), which aborts on
 *   stop, so a sync under way writes nothing more once its loop is stopping
 *   (a replica that lost its lease). A stopped loop does not start again.
 *
 * A controller that wires its informers' handlers to `queue` itself passes
 * neither `subscribe` nor `keys`; events during the first list then queue
 * keys that the workers take once everything has synced.
 */
import type { Clock, Timer } from '../clock/clock.ts';
import type { Races } from '../clock/races.ts';
import type { Logger } from './logger.ts';
import { Lifecycle, type Runnable } from './runnable.ts';
import { WorkQueue, type RateLimit, type WorkContext, type WorkQueueMetrics, type WorkResult } from './workqueue.ts';

/** What the loop needs of an informer it owns (client/store.ts's `Informer`). */
export interface LoopInformer {
  start(): void;
  stop(): Promise<void>;
  waitForSync(signal?: AbortSignal): Promise<void>;
}

export interface QueueLoopOptions {
  /** The queue's name (metrics label `name`, logs, the race-mode channel). */
  name: string;
  clock: Clock;
  log: Logger;
  workers: number;
  rateLimit?: RateLimit;
  queueMetrics?: WorkQueueMetrics;
  /** Race mode: a random delay before each sync (the embedded cluster's `races`). */
  races?: Races | undefined;
  /** Each sync on an event-loop turn of its own (the manager's loops; workqueue.ts, "Turns"). */
  turnPerSync?: boolean;
  /** Informers the loop owns: started by `start`, waited for, stopped by `stop` once the queue is shut down. */
  informers?: readonly LoopInformer[];
  /** Resolves once everything else the workers need is there (shared caches, a CRD installed, discovery). */
  waitForSync?(signal: AbortSignal): Promise<void>;
  /** Subscribes to the events that enqueue keys; returns the unsubscribers. */
  subscribe?(add: (keys: Iterable<string>) => void): (() => void)[];
  /** Every key there is (for the first pass and the resync). */
  keys?(): Iterable<string>;
  /** Enqueue every key this often (ms; 0 or undefined: never). */
  resyncMs?: number;
  /** One sync of one key; `context.signal` aborts when the loop stops. */
  handle(key: string, context: WorkContext): Promise<WorkResult | void> | WorkResult | void;
  /** Once the workers run (a controller's own periodic timers). */
  onRunning?(): void;
  /** The first step of `stop`, before the queue shuts down: cancel the controller's own timers, wait for its own work. */
  onStopping?(): Promise<void> | void;
  /** The last step of `stop`, after the workers and the owned informers: what the controller still holds (requests in flight, buffered events). */
  onStopped?(): Promise<void> | void;
}

export class QueueLoop implements Runnable {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  readonly #o: QueueLoopOptions;
  readonly #life = new Lifecycle();
  #unsubscribe: (() => void)[] = [];
  #resync: Timer | undefined;
  #running: Promise<void> | undefined;

  constructor(options: QueueLoopOptions) {
    this.#o = options;
    this.name = options.name;
    this.queue = new WorkQueue<string>({
      clock: options.clock,
      name: options.name,
      log: options.log,
      races: options.races,
      turnPerSync: options.turnPerSync === true,
      ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
      ...(options.queueMetrics === undefined ? {} : { metrics: options.queueMetrics }),
    });
  }

  /** True once `stop` was called: a controller's own work in flight arms nothing new. */
  get stopping(): boolean {
    return this.#life.stopping;
  }

  /** Aborts when `stop` is called. */
  get signal(): AbortSignal {
    return this.#life.signal;
  }

  add(keys: Iterable<string>): void {
    for (const key of keys) this.queue.add(key);
  }

  enqueueAll(): void {
    if (this.#o.keys !== undefined) this.add(this.#o.keys());
  }

  start(signal?: AbortSignal): Promise<void> {
    return this.#life.start(signal, async (s) => {
      const informers = this.#o.informers ?? [];
      for (const informer of informers) informer.start();
      await Promise.all([...informers.map((i) => i.waitForSync(s)), this.#o.waitForSync?.(s)]);
      if (this.#life.stopping) return;
      this.#unsubscribe = this.#o.subscribe?.((keys) => this.add(keys)) ?? [];
      this.enqueueAll();
      const resyncMs = this.#o.resyncMs ?? 0;
      if (resyncMs > 0) this.#resync = this.#o.clock.setInterval(() => this.enqueueAll(), resyncMs, { background: true, name: `${this.#o.name} resync` });
      this.#running = this.queue.run(this.#o.workers, (key, context) => this.#o.handle(key, context));
      this.#o.onRunning?.();
      this.#o.log.info({ workers: this.#o.workers }, `${this.#o.name} controller started`);
    });
  }

  stop(): Promise<void> {
    return this.#life.stop(async () => {
      for (const u of this.#unsubscribe) u();
      this.#unsubscribe = [];
      this.#resync?.cancel();
      await this.#o.onStopping?.();
      await this.queue.shutdown({ drain: false });
      await Promise.all((this.#o.informers ?? []).map((i) => i.stop()));
      await this.#running;
      await this.#o.onStopped?.();
    });
  }
}
