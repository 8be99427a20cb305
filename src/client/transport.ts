/**
 * The HTTP exchange under `KubeClient`: one request to the connection's
 * server with its agent and auth headers, a timeout on the clock, and the
 * activity accounting that keeps a virtual clock honest:
 *
 * - sending counts as busy until the request is flushed and the event loop
 *   had a turn to hand it to an in-process server;
 * - while the server works, the caller's own activity is suspended, because
 *   it waits on a clock sleep that doubles as the timeout: a server that
 *   delays an answer on the same virtual clock lets time pass, and the
 *   timeout fires at its virtual deadline;
 * - reading the answer counts as busy until it is parsed;
 * - in between, on a virtual clock, the request carries a handoff mark
 *   (clock/handoff.ts) that keeps the system busy while the
 *   bytes travel to the server and while its answer travels back, so the
 *   clock never sees an idle instant in the middle of an exchange.
 * Non-2xx answers become `ApiError`s, everything else `NetworkError`s.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Clock } from '../clock/clock.ts';
import { openHandoff } from '../clock/handoff.ts';
import type { Connection } from './config.ts';
import { ApiError, NetworkError, statusFromBody, type RequestDescription } from './errors.ts';
import type { TokenBucket } from './rate-limit.ts';

export type QueryValue = string | number | boolean | undefined;
export type Query = Record<string, QueryValue>;

export interface RequestOptions {
  method: string;
  /** Absolute path on the server, e.g. `/api/v1/namespaces/default/pods`. */
  path: string;
  query?: Query;
  /** Serialized as JSON unless it is a string or Buffer. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Overrides the default; 0 disables the timeout. */
  timeoutMs?: number;
  /** Skips the client-side rate limiter (CallOptions.unthrottled). */
  unthrottled?: boolean;
}

/**
 * Told of every exchange once its answer (headers) arrived or it failed:
 * the HTTP method, the server's `host:port`, the status code (`<error>` when
 * no answer came, as client-go counts it) and the seconds it took on the
 * transport's clock. What `rest_client_requests_total` and
 * `rest_client_request_duration_seconds` are made of.
 */
export interface RequestMetrics {
  request(method: string, host: string, code: string, seconds: number): void;
}

/**
 * Told of each exchange as it happens, for kubectl-style `-v` request logs:
 * what is sent (method, URL, headers, body), then the answer's status and
 * headers (or the failure) with the milliseconds it took on the transport's
 * clock, then, for answers read whole (not watch streams), the body.
 */
export interface RequestTrace {
  request(info: { method: string; url: string; headers: Record<string, string | string[]>; body?: Buffer }): void;
  response(info: { method: string; url: string; status?: number; statusText?: string; headers?: IncomingMessage['headers']; ms: number; error?: string }): void;
  responseBody(info: { method: string; url: string; status: number; text: string }): void;
}

export interface ResponseHandlers {
  onResponse(res: IncomingMessage): void;
  onError(err: unknown): void;
}

function queryString(query: Query | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.append(key, String(value));
  const s = params.toString();
  return s === '' ? '' : `?${s}`;
}

/** Seconds of a numeric `Retry-After` header (dates are not used by API servers). */
export function retryAfterHeader(res: IncomingMessage): number | undefined {
  const raw = res.headers['retry-after'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/**
 * Why a finished request's deadline is released. Aborting without a reason
 * builds a DOMException with a stack trace, on every request; nobody reads
 * this one (the timeout's sleep rejects with it into a no-op).
 */
const REQUEST_SETTLED = Object.freeze({ name: 'RequestSettled', message: 'the request settled before its deadline' });

export class HttpTransport {
  readonly connection: Connection;
  readonly clock: Clock;
  readonly userAgent: string;
  readonly timeoutMs: number;
  /** Whoever counts this transport's requests (KubeClient.instrument). */
  readonly metrics: RequestMetrics[] = [];
  /** Whoever logs this transport's requests (`-v`). */
  trace: RequestTrace | undefined;
  /** Client-side rate limiting (rate-limit.ts): every request and watch start takes a token first. */
  limiter: TokenBucket | undefined;

  constructor(connection: Connection, clock: Clock, userAgent: string, timeoutMs: number) {
    this.connection = connection;
    this.clock = clock;
    this.userAgent = userAgent;
    this.timeoutMs = timeoutMs;
  }

  /** Sends one request; resolves with the parsed JSON body, rejects with `ApiError` or `NetworkError`. */
  async request<T = unknown>(options: RequestOptions): Promise<T> {
    const desc: RequestDescription = { method: options.method, path: options.path };
    if (this.limiter !== undefined && options.unthrottled !== true) await this.throttle(options.signal, desc);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const deadline = new AbortController();
    let timedOut = false;
    if (timeoutMs > 0) {
      // The clock sleep is the timeout, and while it waits the caller's activity does not count as busy.
      this.clock.sleep(timeoutMs, deadline.signal, { name: `timeout ${options.method} ${options.path}` }).then(
        () => {
          timedOut = true;
          deadline.abort();
        },
        () => {},
      );
    }
    try {
      const { res, text } = await this.#exchange(options, deadline.signal, () => timedOut, desc, timeoutMs);
      const code = res.statusCode ?? 0;
      this.trace?.responseBody({ method: options.method, url: `${this.connection.server}${options.path}${queryString(options.query)}`, status: code, text });
      if (code < 200 || code >= 300) throw new ApiError(code, statusFromBody(code, text), desc, retryAfterHeader(res));
      if (text.trim() === '') return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch (err) {
        throw new NetworkError('protocol', `the ${code} answer is not JSON`, desc, err);
      }
    } finally {
      if (!deadline.signal.aborted) deadline.abort(REQUEST_SETTLED);
    }
  }

  /** Waits for the rate limiter's token (none without a limiter); an aborted wait is the caller's abort. */
  async throttle(signal: AbortSignal | undefined, desc: RequestDescription): Promise<void> {
    if (this.limiter === undefined) return;
    try {
      await this.limiter.take(signal);
    } catch (err) {
      throw new NetworkError('aborted', 'aborted by the caller while waiting for the client rate limiter', desc, err);
    }
  }

  #exchange(options: RequestOptions, deadline: AbortSignal, timedOut: () => boolean, desc: RequestDescription, timeoutMs: number): Promise<{ res: IncomingMessage; text: string }> {
    return new Promise((resolve, reject) => {
      let endReceive: (() => void) | undefined;
      const fail = (err: unknown) => {
        endReceive?.();
        reject(err);
      };
      this.open(options, deadline, {
        onResponse: (res) => {
          endReceive = this.clock.activity.begin(`http receive ${desc.method} ${desc.path}`);
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            endReceive?.();
            resolve({ res, text: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', (err) => fail(this.#networkError(err, options.signal, timedOut(), desc, timeoutMs)));
        },
        onError: (err) => fail(this.#networkError(err, options.signal, timedOut(), desc, timeoutMs)),
      });
    });
  }

  #networkError(err: unknown, signal: AbortSignal | undefined, timedOut: boolean, desc: RequestDescription, timeoutMs: number): NetworkError {
    if (err instanceof NetworkError) return err;
    if (signal?.aborted === true) return new NetworkError('aborted', 'aborted by the caller', desc, signal.reason);
    if (timedOut) return new NetworkError('timeout', `no answer within ${timeoutMs} ms`, desc, err);
    return new NetworkError('connection', err instanceof Error ? err.message : String(err), desc, err);
  }

  /**
   * Starts an HTTP exchange (for `request` and watch streams). The send phase
   * counts as busy until the request is flushed and the event loop had a turn
   * to deliver it to an in-process server. `deadline` aborts it.
   */
  open(options: RequestOptions, deadline: AbortSignal, handlers: ResponseHandlers, extraHeaders: Record<string, string> = {}): void {
    if (this.metrics.length > 0) handlers = this.#counted(options.method, handlers);
    const url = new URL(`${this.connection.server}${options.path}${queryString(options.query)}`);
    if (this.trace !== undefined) handlers = this.#traced(this.trace, options.method, url.href, handlers);
    const desc = `${options.method} ${options.path}`;
    const endSend = this.clock.activity.begin(`http send ${desc}`);
    // Handed over to an in-process server on the same clock (clock/handoff.ts).
    const handoff = openHandoff(this.clock.activity, 'request');
    const endHandoff = handoff.close;
    let body: Buffer | undefined;
    let contentType = options.contentType;
    if (options.body !== undefined) {
      if (Buffer.isBuffer(options.body)) body = options.body;
      else if (typeof options.body === 'string') body = Buffer.from(options.body, 'utf8');
      else {
        body = Buffer.from(JSON.stringify(options.body), 'utf8');
        contentType ??= 'application/json';
      }
    }
    const signals = [deadline, ...(options.signal !== undefined ? [options.signal] : [])];
    if (signals.some((s) => s.aborted)) {
      endSend();
      endHandoff();
      handlers.onError(new Error('aborted before sending'));
      return;
    }
    let req: ClientRequest | undefined;
    let settled = false;
    const onAbort = () => req?.destroy(new Error('aborted'));
    const cleanup = () => {
      for (const s of signals) s.removeEventListener('abort', onAbort);
    };
    void this.connection.headers().then(
      (auth) => {
        if (signals.some((s) => s.aborted)) {
          endSend();
          endHandoff();
          handlers.onError(new Error('aborted before sending'));
          return;
        }
        const headers: Record<string, string | string[]> = {
          Accept: 'application/json',
          'User-Agent': this.userAgent,
          ...auth,
          ...(options.headers ?? {}),
          ...extraHeaders,
          ...handoff.headers,
        };
        if (contentType !== undefined) headers['Content-Type'] = contentType;
        if (body !== undefined) headers['Content-Length'] = String(body.length);
        this.trace?.request({ method: options.method, url: url.href, headers, ...(body === undefined ? {} : { body }) });
        const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
        req = send(url, { method: options.method, headers, agent: this.connection.agent }, (res) => {
          settled = true;
          // Registered first so the signals are detached before anyone sees the end: aborting
          // afterwards must not touch a socket that went back to the agent's pool.
          res.once('end', cleanup);
          res.once('close', cleanup);
          endHandoff();
          handlers.onResponse(res);
        });
        req.on('error', (err) => {
          endSend();
          endHandoff();
          cleanup();
          if (!settled) {
            settled = true;
            handlers.onError(err);
          }
        });
        // One loop turn after the flush, so an in-process server has read the request and
        // registered its own activity before ours ends (setImmediate: a loop turn, not a delay).
        req.on('finish', () => setImmediate(endSend));
        for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
        req.end(body);
      },
      (err: unknown) => {
        endSend();
        endHandoff();
        handlers.onError(err);
      },
    );
  }

  /** The handlers, telling `trace` about the answer (or the failure) first. */
  #traced(trace: RequestTrace, method: string, url: string, handlers: ResponseHandlers): ResponseHandlers {
    const started = this.clock.now();
    const ms = () => Math.max(0, this.clock.now() - started);
    return {
      onResponse: (res) => {
        trace.response({ method, url, ms: ms(), ...(res.statusCode === undefined ? {} : { status: res.statusCode }), ...(res.statusMessage === undefined ? {} : { statusText: res.statusMessage }), headers: res.headers });
        handlers.onResponse(res);
      },
      onError: (err) => {
        trace.response({ method, url, ms: ms(), error: err instanceof Error ? err.message : String(err) });
        handlers.onError(err);
      },
    };
  }

  /** The handlers, telling `metrics` about the exchange first. */
  #counted(method: string, handlers: ResponseHandlers): ResponseHandlers {
    const started = this.clock.now();
    const host = new URL(this.connection.server).host;
    let told = false;
    const tell = (code: string) => {
      if (told) return;
      told = true;
      const seconds = Math.max(0, this.clock.now() - started) / 1000;
      for (const m of this.metrics) m.request(method, host, code, seconds);
    };
    return {
      onResponse: (res) => {
        tell(String(res.statusCode ?? 0));
        handlers.onResponse(res);
      },
      onError: (err) => {
        tell('<error>');
        handlers.onError(err);
      },
    };
  }
}
