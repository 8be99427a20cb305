/**
 * The manager's DomainDisruptionBudget informer (D14), beside `ManagerCaches`
 * rather than inside it: budgets are optional. A cluster without the budget
 * CRD must still get a ready manager (the WorkloadSpread half does not need
 * budgets), so the manager does not wait for this cache to sync; instead the
 * webhook asks `budgetsIn(namespace)`, which answers:
 * - the cached budgets once the informer has listed them;
 * - none when discovery says the CRD is not served (nothing to enforce);
 * - an error while the CRD is served (or discovery cannot tell) but the
 *   budgets have not been listed yet — the webhook then fails closed, since
 *   an empty cache would let every eviction through.
 * Discovery is asked at start and again every `discoveryRecheckMs` (a
 * background timer) until the informer has synced. The informer is started
 * only once discovery says the CRD is served (or cannot tell): without the
 * CRD the manager stays quiet — no list retries, no warnings, nothing that
 * keeps a virtual clock busy — and picks the CRD up within one recheck of
 * its installation.
 * Cached objects are shared: never mutate them. Start at `budgetsIn`.
 */
import type { Clock, Timer } from '../clock/clock.ts';
import { DDB_API_VERSION, DDB_GROUP, DDB_KIND, DDB_PLURAL, DDB_VERSION, type DomainDisruptionBudget } from '../api/disruption-budget.ts';
import { describeError } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import type { ResourceRef } from '../client/resources.ts';
import { Informer, type InformerOptions, type Store } from '../client/store.ts';
import type { WatcherOptions } from '../client/watcher.ts';
import { byName } from '../k8s/by-name.ts';
import type { KubeObject } from '../k8s/types.ts';
import { withoutManagedFields } from './pod-transform.ts';

export const DDB_REF: ResourceRef = Object.freeze({ group: DDB_GROUP, version: DDB_VERSION, resource: DDB_PLURAL, kind: DDB_KIND, namespaced: true });

export const DEFAULT_BUDGET_DISCOVERY_RECHECK_MS = 30_000;

/** A budget as the store holds it. */
export type CachedBudget = DomainDisruptionBudget & KubeObject;

export type BudgetsLookup = { ok: true; budgets: DomainDisruptionBudget[] } | { ok: false; error: string };

export interface BudgetCacheOptions {
  client: KubeClient;
  log?: Logger;
  discoveryRecheckMs?: number;
  watcher?: Partial<Pick<WatcherOptions, 'resyncMs' | 'backoff' | 'random' | 'watchTimeoutSeconds' | 'pageSize' | 'metrics'>>;
  freeze?: boolean;
  /** Cache only these namespaces' budgets (`--watch-namespaces`); undefined: every namespace. */
  namespaces?: readonly string[];
}

export class BudgetCache {
  readonly store: Store<CachedBudget>;
  readonly #informer: Informer<CachedBudget>;
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #recheckMs: number;
  /** What discovery last said: undefined until asked (or when it could not tell). */
  #served: boolean | undefined;
  #timer: Timer | undefined;
  #started = false;
  #informerStarted = false;
  #stopped = false;

  constructor(options: BudgetCacheOptions) {
    this.#client = options.client;
    this.#clock = options.client.clock;
    this.#log = options.log ?? silentLogger;
    this.#recheckMs = options.discoveryRecheckMs ?? DEFAULT_BUDGET_DISCOVERY_RECHECK_MS;
    const informerOptions: InformerOptions<CachedBudget> = {
      client: options.client,
      ref: DDB_REF,
      name: DDB_PLURAL,
      log: this.#log,
      transform: (obj) => withoutManagedFields<CachedBudget>(obj),
      ...options.watcher,
    };
    if (options.freeze === true) informerOptions.freeze = true;
    if (options.namespaces !== undefined) informerOptions.namespaces = options.namespaces;
    this.#informer = new Informer<CachedBudget>(informerOptions);
    this.store = this.#informer.store;
  }

  /** Starts the discovery checks, and the informer once the CRD is served (idempotent). */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    void this.checkDiscovery();
    if (this.#recheckMs > 0) {
      this.#timer = this.#clock.setInterval(
        () => {
          if (this.store.hasSynced()) this.#timer?.cancel();
          else void this.checkDiscovery();
        },
        this.#recheckMs,
        { background: true, name: 'budget discovery' },
      );
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    await this.#informer.stop();
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.#informer.waitForSync(signal);
  }

  hasSynced(): boolean {
    return this.store.hasSynced();
  }

  /** Whether discovery says the budget CRD is served (undefined: not known yet). */
  served(): boolean | undefined {
    return this.#served;
  }

  /** Asks discovery whether the budget resource is served; resolves with the answer (undefined: could not tell). */
  async checkDiscovery(): Promise<boolean | undefined> {
    if (this.#stopped) return this.#served;
    return this.#clock.activity.run('budget discovery', async () => {
      this.#client.resources.invalidate(DDB_API_VERSION);
      const resolved = await this.#client.resources.resolve(DDB_API_VERSION, DDB_KIND);
      if (resolved.ok) this.#served = true;
      else if (resolved.notFound) this.#served = false;
      else {
        this.#log.warn({ err: describeError(resolved.error) }, 'cannot tell whether DomainDisruptionBudgets are served');
        this.#served = undefined;
      }
      if (this.#served !== false && this.#started && !this.#informerStarted && !this.#stopped) {
        this.#informerStarted = true;
        this.#informer.start();
      }
      return this.#served;
    });
  }

  /** The budgets of a namespace, in name order, or why they cannot be known now (see the module comment). */
  budgetsIn(namespace: string): BudgetsLookup {
    if (this.store.hasSynced()) return { ok: true, budgets: this.store.list(namespace).sort(byName) };
    if (this.#served === false) return { ok: true, budgets: [] };
    return { ok: false, error: 'the DomainDisruptionBudgets have not been listed yet' };
  }

  get(namespace: string, name: string): DomainDisruptionBudget | undefined {
    return this.store.get(namespace, name);
  }

  keys(): string[] {
    return this.store.keys();
  }
}
