/**
 * `EventRecorder`: writes `events.k8s.io/v1` Events (what `kubectl describe`
 * and `kubectl events` show) with client-side aggregation in the manner of
 * client-go's tools/events: the first occurrence creates an Event; the same
 * regarding object + type + reason + action + note again within the series
 * window (6 minutes after the last occurrence, as upstream) PATCHes that
 * Event's `series.count` / `series.lastObservedTime` instead of creating
 * another object.
 *
 * Invariants:
 * - `record()` never throws and never blocks: writes run in the background,
 *   one at a time per series (occurrences during a write are folded into the
 *   next patch), each as a tracked activity on the clock; failures are logged;
 * - a series whose Event disappeared (404 on patch, e.g. expired by the
 *   server's TTL) starts again with a new Event carrying the count so far;
 * - `note` is cut to 1 KiB, the API's limit.
 * `flush()` waits for the writes in flight (tests, shutdown).
 */
import type { Clock } from '../clock/clock.ts';
import { formatMicroTime } from '../k8s/time.ts';
import type { KubeObject } from '../k8s/types.ts';
import { describeError, isNotFound, isRetryable } from './errors.ts';
import type { KubeClient } from './http-client.ts';
import { silentLogger, type Logger } from './logger.ts';
import { BUILTIN } from './resources.ts';

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EventInput {
  type: 'Normal' | 'Warning';
  /** Machine-readable, CamelCase (`SubsetFull`). */
  reason: string;
  /** Human-readable, ≤ 1 KiB. */
  note: string;
  /** What was done or failed (`Schedule`, `Reconcile`, `Admit`). */
  action: string;
  related?: ObjectReference;
}

export interface EventRecorderOptions {
  client: KubeClient;
  /** The controller's name, e.g. `workloadspread.io/manager`. */
  reportingController: string;
  /** This replica, e.g. the pod name. */
  reportingInstance: string;
  /** How long after its last occurrence a series stays open (default 6 minutes). */
  seriesWindowMs?: number;
  /** Series remembered at most (oldest dropped first; default 4096). */
  maxSeries?: number;
  log?: Logger;
}

export const SERIES_WINDOW_MS = 6 * 60_000;
const NOTE_LIMIT_BYTES = 1024;
const WRITE_ATTEMPTS = 3;

/** A reference to `obj` for `regarding`/`related`. */
export function referenceTo(obj: KubeObject): ObjectReference {
  const ref: ObjectReference = {};
  const m = obj.metadata ?? {};
  if (typeof obj.apiVersion === 'string') ref.apiVersion = obj.apiVersion;
  if (typeof obj.kind === 'string') ref.kind = obj.kind;
  if (typeof m.name === 'string') ref.name = m.name;
  if (typeof m.namespace === 'string' && m.namespace !== '') ref.namespace = m.namespace;
  if (typeof m.uid === 'string') ref.uid = m.uid;
  if (typeof m.resourceVersion === 'string') ref.resourceVersion = m.resourceVersion;
  return ref;
}

function truncateNote(note: string): string {
  if (Buffer.byteLength(note, 'utf8') <= NOTE_LIMIT_BYTES) return note;
  let cut = note.slice(0, NOTE_LIMIT_BYTES);
  while (Buffer.byteLength(cut, 'utf8') > NOTE_LIMIT_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}

interface Series {
  key: string;
  namespace: string;
  regarding: ObjectReference;
  input: EventInput;
  /** Name of the Event object holding this series ('' before it is created). */
  eventName: string;
  firstTime: number;
  lastTime: number;
  count: number;
  /** Occurrences not written yet. */
  dirty: boolean;
  writing: boolean;
}

export class EventRecorder {
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #opts: EventRecorderOptions;
  readonly #log: Logger;
  readonly #series = new Map<string, Series>();
  readonly #inFlight = new Set<Promise<void>>();
  #nameSeq = 0;

  constructor(options: EventRecorderOptions) {
    this.#client = options.client;
    this.#clock = options.client.clock;
    this.#opts = options;
    this.#log = options.log ?? silentLogger;
  }

  /** Records one occurrence about `regarding` (an object or a reference). Never throws. */
  record(regarding: KubeObject | ObjectReference, event: EventInput): void {
    try {
      this.#record(regarding, event);
    } catch (err) {
      this.#log.error({ reason: event.reason, err: describeError(err) }, 'cannot record an event');
    }
  }

  /** Resolves when every write started so far has finished. */
  async flush(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  #record(target: KubeObject | ObjectReference, event: EventInput): void {
    const regarding = 'metadata' in target && typeof target.metadata === 'object' ? referenceTo(target as KubeObject) : { ...(target as ObjectReference) };
    const input: EventInput = { ...event, note: truncateNote(event.note) };
    const now = this.#clock.now();
    const key = JSON.stringify([regarding.apiVersion, regarding.kind, regarding.namespace, regarding.name, regarding.uid, input.type, input.reason, input.action, input.note, input.related ?? null]);
    const window = this.#opts.seriesWindowMs ?? SERIES_WINDOW_MS;
    let series = this.#series.get(key);
    if (series !== undefined && series.lastTime + window < now && !series.writing) {
      this.#series.delete(key);
      series = undefined;
    }
    if (series === undefined) {
      series = { key, namespace: regarding.namespace ?? 'default', regarding, input, eventName: '', firstTime: now, lastTime: now, count: 0, dirty: false, writing: false };
      this.#series.set(key, series);
      this.#trim();
    } else {
      // Keep recently used series at the end, so trimming drops the stale ones.
      this.#series.delete(key);
      this.#series.set(key, series);
    }
    series.count++;
    series.lastTime = now;
    series.dirty = true;
    this.#write(series);
  }

  #trim(): void {
    const max = this.#opts.maxSeries ?? 4096;
    for (const [key, s] of this.#series) {
      if (this.#series.size <= max) return;
      if (!s.writing) this.#series.delete(key);
    }
  }

  #write(series: Series): void {
    if (series.writing) return;
    series.writing = true;
    const job = this.#clock.activity
      .run(`event ${series.input.reason}`, async () => {
        while (series.dirty) {
          series.dirty = false;
          await this.#writeOnce(series);
        }
      })
      .catch((err: unknown) => this.#log.error({ reason: series.input.reason, err: describeError(err) }, 'event write failed'))
      .finally(() => {
        series.writing = false;
        this.#inFlight.delete(job);
      });
    this.#inFlight.add(job);
  }

  /** Creates the Event, or patches its series; retries transient failures a few times. */
  async #writeOnce(series: Series): Promise<void> {
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      try {
        if (series.eventName === '') await this.#create(series);
        else await this.#patch(series);
        return;
      } catch (err) {
        if (isNotFound(err) && series.eventName !== '') {
          series.eventName = '';
          continue;
        }
        if (!isRetryable(err) || attempt === WRITE_ATTEMPTS) {
          this.#log.warn({ reason: series.input.reason, regarding: `${series.regarding.kind ?? ''}/${series.regarding.name ?? ''}`, err: describeError(err) }, 'cannot write an event');
          return;
        }
        await this.#clock.sleep(1000 * attempt);
      }
    }
  }

  #eventName(series: Series): string {
    // client-go: <regarding name>.<event time in nanoseconds, hex>; the sequence keeps names unique on a virtual clock.
    const nanos = BigInt(Math.max(0, Math.floor(this.#clock.now()))) * 1_000_000n + BigInt(++this.#nameSeq % 1_000_000);
    return `${series.regarding.name ?? 'event'}.${nanos.toString(16)}`;
  }

  async #create(series: Series): Promise<void> {
    const { input, regarding } = series;
    const name = this.#eventName(series);
    const event: Record<string, unknown> = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace: series.namespace },
      eventTime: formatMicroTime(series.firstTime),
      reportingController: this.#opts.reportingController,
      reportingInstance: this.#opts.reportingInstance,
      action: input.action,
      reason: input.reason,
      regarding,
      note: input.note,
      type: input.type,
    };
    if (input.related !== undefined) event['related'] = input.related;
    const count = series.count;
    if (count > 1) event['series'] = { count, lastObservedTime: formatMicroTime(series.lastTime) };
    await this.#client.create(BUILTIN.eventsV1, event, { namespace: series.namespace });
    series.eventName = name;
  }

  async #patch(series: Series): Promise<void> {
    const body = { series: { count: series.count, lastObservedTime: formatMicroTime(series.lastTime) } };
    await this.#client.patch(BUILTIN.eventsV1, series.eventName, { type: 'merge', body }, { namespace: series.namespace });
  }
}
