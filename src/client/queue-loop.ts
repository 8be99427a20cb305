/**
 * `QueueLoop`: the life of a level-triggered controller around its work
 * queue, shared by the WorkloadSpread and the DomainDisruptionBudget
 * controllers (each brings its keys, its event subscriptions and its sync).
 *
 * - `start()` waits for the caches, subscribes to their events, enqueues
 *   every key once, arms a background resync (every key again every
 *   `resyncMs`; 0 disables; the safety net against a missed event) and runs
 *   `workers` loops; it resolves once they run, not when they end;
 * - the queue de-duplicates keys, never runs one key twice at once, retries
 *   failures with per-key back-off and honours a sync's requeue-after;
 * - `stop()` unsubscribes, cancels the resync and lets the workers finish
 *   what they hold; each sync gets the queue's signal, which aborts on
 *   stop, so a sync under way writes nothing more once its loop is stopping
 *   (a replica that lost its lease). A stopped loop does not start again.
 */
import type { Clock, Timer } from '../clock/clock.ts';
import type { Logger } from './logger.ts';
import { WorkQueue, type RateLimit, type WorkContext, type WorkQueueMetrics, type WorkResult } from './workqueue.ts';

export interface QueueLoopOptions {
  /** The queue's name (metrics label `name`, logs). */
  name: string;
  clock: Clock;
  log: Logger;
  workers: number;
  resyncMs: number;
  rateLimit?: RateLimit;
  queueMetrics?: WorkQueueMetrics;
  /** Resolves once the caches the controller reads are synced. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  /** Subscribes to the events that enqueue keys; returns the unsubscribers. */
  subscribe(add: (keys: Iterable<string>) => void): (() => void)[];
  /** Every key there is (for the first pass and the resync). */
  keys(): Iterable<string>;
  /** One sync of one key; `context.signal` aborts when the loop stops. */
  handle(key: string, context: WorkContext): Promise<WorkResult | void>;
}

export class QueueLoop {
  readonly queue: WorkQueue<string>;
  readonly #o: QueueLoopOptions;
  #unsubscribe: (() => void)[] = [];
  #resync: Timer | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(options: QueueLoopOptions) {
    this.#o = options;
    this.queue = new WorkQueue<string>({
      clock: options.clock,
      name: options.name,
      log: options.log,
      ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
      ...(options.queueMetrics === undefined ? {} : { metrics: options.queueMetrics }),
    });
  }

  add(keys: Iterable<string>): void {
    for (const key of keys) this.queue.add(key);
  }

  enqueueAll(): void {
    this.add(this.#o.keys());
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.#running !== undefined || this.#stopped) return;
    await this.#o.waitForSync(signal);
    if (this.#stopped || this.#running !== undefined) return;
    this.#unsubscribe = this.#o.subscribe((keys) => this.add(keys));
    this.enqueueAll();
    if (this.#o.resyncMs > 0) this.#resync = this.#o.clock.setInterval(() => this.enqueueAll(), this.#o.resyncMs, { background: true, name: `${this.#o.name} resync` });
    this.#running = this.queue.run(this.#o.workers, (key, context) => this.#o.handle(key, context));
    this.#o.log.info({ workers: this.#o.workers }, `${this.#o.name} controller started`);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const u of this.#unsubscribe) u();
    this.#unsubscribe = [];
    this.#resync?.cancel();
    await this.queue.shutdown({ drain: false });
    await this.#running;
  }
}
