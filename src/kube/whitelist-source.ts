/**
 * The custom-workload whitelist as a live value (DECISIONS D6; spec §5.4):
 * the config map (name configurable, default `workloadspread-configuration`,
 * in the manager's namespace), data key
 * `WorkloadSpread_Watch_Custom_Workload_WhiteList`, is watched, so edits
 * apply without a restart (the reference reads it once per process).
 *
 * Rules:
 * - no config map, or no such key → the empty whitelist (custom kinds off);
 * - a value that does not parse → logged, a Warning Event `InvalidWhitelist`
 *   on the config map says so, and the PREVIOUS whitelist stays in force
 *   (a typo must not silently switch custom workloads off);
 * - listeners run only when the effective whitelist changed.
 * Start at `WhitelistSource.current`.
 */
import { parseWhitelist, EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import { DEFAULT_CONFIGMAP_NAME, WHITELIST_CONFIGMAP_KEY } from '../api/keys.ts';
import { deepEqual, isPlainObject } from '../k8s/json.ts';
import type { KubeObject } from '../k8s/types.ts';
import type { EventRecorder } from '../client/event-recorder.ts';
import type { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import { Informer } from '../client/store.ts';
import type { WatcherOptions } from '../client/watcher.ts';

export const EVENT_INVALID_WHITELIST = 'InvalidWhitelist';

export interface WhitelistSourceOptions {
  client: KubeClient;
  /** The manager's namespace. */
  namespace: string;
  configMapName?: string;
  recorder?: EventRecorder;
  log?: Logger;
  /** Watcher tuning (tests). */
  watcher?: Partial<Pick<WatcherOptions, 'resyncMs' | 'backoff' | 'random' | 'watchTimeoutSeconds'>>;
}

/** Reads the whitelist out of the config map's data: the parsed value, or why it is rejected. */
export function whitelistFromConfigMap(cm: KubeObject | undefined): { ok: true; whitelist: Whitelist } | { ok: false; error: string } {
  if (cm === undefined) return { ok: true, whitelist: EMPTY_WHITELIST };
  const data = cm['data'];
  const raw = isPlainObject(data) ? data[WHITELIST_CONFIGMAP_KEY] : undefined;
  if (raw === undefined || raw === null) return { ok: true, whitelist: EMPTY_WHITELIST };
  if (typeof raw !== 'string') return { ok: false, error: `${WHITELIST_CONFIGMAP_KEY} is not a string` };
  return parseWhitelist(raw);
}

export class WhitelistSource {
  readonly configMapName: string;
  readonly #informer: Informer;
  readonly #opts: WhitelistSourceOptions;
  readonly #log: Logger;
  #current: Whitelist = EMPTY_WHITELIST;
  /** The last rejected value, so one bad edit is reported once, not on every resync. */
  #lastRejected: string | undefined;
  #listeners: ((whitelist: Whitelist, previous: Whitelist) => void)[] = [];

  constructor(options: WhitelistSourceOptions) {
    this.#opts = options;
    this.#log = options.log ?? silentLogger;
    this.configMapName = options.configMapName ?? DEFAULT_CONFIGMAP_NAME;
    this.#informer = new Informer({
      client: options.client,
      ref: BUILTIN.configmaps,
      namespace: options.namespace,
      fieldSelector: `metadata.name=${this.configMapName}`,
      name: `whitelist ${options.namespace}/${this.configMapName}`,
      log: this.#log,
      ...options.watcher,
    });
    const store = this.#informer.store;
    store.onAdd((cm) => this.#apply(cm));
    store.onUpdate((_old, cm) => this.#apply(cm));
    store.onDelete(() => this.#apply(undefined));
  }

  /** The whitelist in force now. */
  current(): Whitelist {
    return this.#current;
  }

  /** Calls `fn` after every change of the effective whitelist; returns an unsubscribe function. */
  onChange(fn: (whitelist: Whitelist, previous: Whitelist) => void): () => void {
    this.#listeners.push(fn);
    return () => {
      this.#listeners = this.#listeners.filter((f) => f !== fn);
    };
  }

  start(): void {
    this.#informer.start();
  }

  stop(): Promise<void> {
    return this.#informer.stop();
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.#informer.waitForSync(signal);
  }

  hasSynced(): boolean {
    return this.#informer.store.hasSynced();
  }

  #apply(cm: KubeObject | undefined): void {
    const parsed = whitelistFromConfigMap(cm);
    if (!parsed.ok) {
      const data = cm?.['data'];
      const raw = isPlainObject(data) ? String(data[WHITELIST_CONFIGMAP_KEY]) : '';
      if (raw !== this.#lastRejected) {
        this.#lastRejected = raw;
        const note = `invalid ${WHITELIST_CONFIGMAP_KEY} in ConfigMap ${this.#opts.namespace}/${this.configMapName}: ${parsed.error}; keeping the previous whitelist (${this.#current.workloads.length} workload kinds)`;
        this.#log.warn({ namespace: this.#opts.namespace, name: this.configMapName, err: parsed.error }, 'invalid custom workload whitelist, keeping the previous one');
        if (cm !== undefined) this.#opts.recorder?.record(cm, { type: 'Warning', reason: EVENT_INVALID_WHITELIST, note, action: 'LoadWhitelist' });
      }
      return;
    }
    this.#lastRejected = undefined;
    const previous = this.#current;
    if (deepEqual(previous, parsed.whitelist)) return;
    this.#current = parsed.whitelist;
    this.#log.info({ namespace: this.#opts.namespace, name: this.configMapName, workloads: parsed.whitelist.workloads.map((w) => `${w.group}/${w.version}/${w.kind}`) }, 'custom workload whitelist changed');
    for (const fn of this.#listeners) {
      try {
        fn(parsed.whitelist, previous);
      } catch (err) {
        this.#log.error({ err: err instanceof Error ? err.message : String(err) }, 'whitelist listener failed');
      }
    }
  }
}
