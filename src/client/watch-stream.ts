/**
 * A watch stream: `GET <path>?watch=true&...`, its newline-delimited events
 * fed in order to `onEvent` (awaited, so a slow consumer pauses the socket),
 * until the server ends the stream or the caller aborts.
 *
 * Virtual time: the request carries `x-workloadspread-activity: <clock id>:<stream>`
 * so an in-process server reports each event it writes as sent; each one is
 * reported received only after `onEvent` has finished with it, and the
 * stream's count is dropped when it ends. Stream ids must be unique per request.
 */
import type { IncomingMessage } from 'node:http';
// The next turn of the event loop, after it has polled for I/O (not a timer).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ACTIVITY_HEADER } from '../clock/clock.ts';
import { ApiError, NetworkError, statusFromBody, type RequestDescription } from './errors.ts';
import { decodeWatchLine, LineSplitter, type WatchStreamEvent } from './ndjson.ts';
import { retryAfterHeader, type HttpTransport, type Query } from './transport.ts';

export interface WatchStreamOptions {
  /** Called once per event, in order; the next event waits for a returned promise. */
  onEvent(event: WatchStreamEvent): void | Promise<void>;
  signal?: AbortSignal;
  /** Stream id for activity accounting on a virtual clock (unique per request). */
  activityStream?: string;
  /** Called when the response head arrives (the watch is established). */
  onOpen?(): void;
  /** Called for every chunk of bytes (idle watchdogs). */
  onData?(): void;
}

/**
 * How many queued events one turn of the event loop handles before the loop
 * polls for I/O again. Under load one chunk of a watch carries dozens of
 * events (a pod each, ~0.1 ms apiece); handled in one go they would hold an
 * admission review that arrived meanwhile for milliseconds. Between turns the
 * process serves the requests that came in (webhook calls, probes).
 */
const EVENTS_PER_TURN = 8;

/** How a watch stream ended without an error. */
export type WatchStreamEnd = 'closed' | 'aborted';

/**
 * Opens a watch on `path` and feeds its events to `onEvent` until the
 * server ends the stream ('closed') or `signal` aborts ('aborted').
 * Rejects with `ApiError` for a non-200 answer and `NetworkError` when the
 * connection fails; an `onEvent` that throws aborts the stream and rejects
 * with its error.
 */
export async function openWatchStream(transport: HttpTransport, path: string, query: Query, options: WatchStreamOptions): Promise<WatchStreamEnd> {
  // A watch start takes a token of the client's rate limiter too, as client-go's do.
  if (transport.limiter !== undefined) {
    try {
      await transport.throttle(options.signal, { method: 'GET', path });
    } catch (err) {
      if (options.signal?.aborted === true) return 'aborted';
      throw err;
    }
  }
  return watch(transport, path, query, options);
}

function watch(transport: HttpTransport, path: string, query: Query, options: WatchStreamOptions): Promise<WatchStreamEnd> {
  const desc: RequestDescription = { method: 'GET', path };
  const activity = transport.clock.activity;
  const stream = activity.id !== '' ? options.activityStream : undefined;
  const headers: Record<string, string> = stream !== undefined ? { [ACTIVITY_HEADER]: `${activity.id}:${stream}` } : {};
  const internal = new AbortController();
  const signal = options.signal;
  return new Promise<WatchStreamEnd>((resolve, reject) => {
    let finished = false;
    const finish = (outcome: { end: WatchStreamEnd } | { error: unknown }) => {
      if (finished) return;
      finished = true;
      signal?.removeEventListener('abort', onCallerAbort);
      if (!internal.signal.aborted) internal.abort();
      if (stream !== undefined) activity.closeStream(stream);
      if ('end' in outcome) resolve(outcome.end);
      else reject(outcome.error);
    };
    const onCallerAbort = () => finish({ end: 'aborted' });
    if (signal?.aborted === true) {
      finish({ end: 'aborted' });
      return;
    }
    signal?.addEventListener('abort', onCallerAbort, { once: true });

    const lines = new LineSplitter();
    const queue: string[] = [];
    let draining = false;
    let ended = false;
    let res: IncomingMessage | undefined;
    const drain = async () => {
      if (draining) return;
      draining = true;
      try {
        let handled = 0;
        while (queue.length > 0 && !finished) {
          // A burst of events is handled a few at a time, the loop polling for I/O between them.
          if (handled > 0 && handled % EVENTS_PER_TURN === 0) await nextTurn();
          if (finished) break;
          handled++;
          const line = queue.shift() as string;
          const result = options.onEvent(decodeWatchLine(line));
          if (result instanceof Promise) {
            res?.pause();
            await result;
            res?.resume();
          }
          if (stream !== undefined && !finished) activity.received(stream);
        }
      } catch (err) {
        finish({ error: err });
        return;
      } finally {
        draining = false;
      }
      if (ended && queue.length === 0) finish({ end: 'closed' });
    };
    const enqueue = (batch: string[]) => {
      for (const line of batch) if (line.trim() !== '') queue.push(line);
      void drain();
    };

    transport.open(
      { method: 'GET', path, query: { ...query, watch: 'true' }, timeoutMs: 0 },
      internal.signal,
      {
        onResponse: (r) => {
          res = r;
          const code = r.statusCode ?? 0;
          if (code !== 200) {
            const endReceive = activity.begin(`http receive watch ${path}`);
            const chunks: Buffer[] = [];
            r.on('data', (c: Buffer) => chunks.push(c));
            r.on('end', () => {
              endReceive();
              finish({ error: new ApiError(code, statusFromBody(code, Buffer.concat(chunks).toString('utf8')), desc, retryAfterHeader(r)) });
            });
            r.on('error', (err) => {
              endReceive();
              finish({ error: new NetworkError('connection', err.message, desc, err) });
            });
            return;
          }
          options.onOpen?.();
          r.on('data', (chunk: Buffer) => {
            options.onData?.();
            enqueue(lines.push(chunk));
          });
          r.on('end', () => {
            ended = true;
            const rest = lines.end();
            enqueue(rest !== undefined ? [rest] : []);
          });
          r.on('error', (err) => {
            if (!finished) finish({ error: new NetworkError('connection', err.message, desc, err) });
          });
          r.on('close', () => {
            // A connection that dies mid-stream closes without 'end'.
            if (!ended && !finished) finish({ error: new NetworkError('connection', 'the watch connection closed unexpectedly', desc) });
          });
        },
        onError: (err) => {
          if (signal?.aborted === true) finish({ end: 'aborted' });
          else finish({ error: err instanceof NetworkError ? err : new NetworkError('connection', err instanceof Error ? err.message : String(err), desc, err) });
        },
      },
      headers,
    );
  });
}
