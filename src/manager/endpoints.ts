/**
 * The manager's HTTP endpoints: the health probes (`/healthz`, `/readyz`, on
 * `--health-addr`) and the Prometheus scrape (`/metrics`, on
 * `--metrics-addr`; with `--metrics-secure` over HTTPS behind a request
 * filter — metrics-auth.ts — and with the profiles of profiling.ts), and the
 * bind-address syntax of their flags.
 *
 * Addresses follow controller-runtime's flags: `host:port`, `:port` (every
 * interface), `[::1]:port`; port 0 picks a free one (tests); the bare value
 * `0` switches the endpoint off. Probe answers follow the Kubernetes API
 * server's verbose health output: one `[+]name ok` / `[-]name failed: why`
 * line per check, then a verdict line; 200 when every check passes, else
 * 503. Requests run inside `clock.activity.run`, so a virtual clock never
 * jumps while one is being answered. `close()` drops keep-alive connections:
 * nothing is left open afterwards. Requests carry no body here: one
 * announced above 64 KiB is refused with 413 unread, and any other is not
 * read: the answer says `Connection: close` and the connection is closed once
 * it is out, however the body arrives (src/client/request-body.ts); a request
 * must arrive whole within 60 s. With `tls`, the server speaks HTTPS only,
 * with the webhook server's TLS policy (src/client/tls-policy.ts), and takes
 * up a new certificate when its source has one. With `filter`, every request
 * is checked before it is routed: a refusal is answered as the filter says.
 * Start at `startHttpEndpoint`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Clock } from '../clock/clock.ts';
import { describeError } from '../client/errors.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { guardRequestBody, ignoreBody } from '../client/request-body.ts';
import { SERVER_TLS_POLICY } from '../client/tls-policy.ts';
import type { CertificateSource, KeyPair } from '../webhook/certs.ts';

/** The endpoints serve GET and HEAD only; a body larger than this is refused unread. */
export const MAX_ENDPOINT_BODY_BYTES = 64 * 1024;

export interface BindAddress {
  host: string;
  port: number;
}

/** A parsed address; `address` undefined means the endpoint is switched off (`0`). */
export type BindAddressResult = { ok: true; address: BindAddress | undefined } | { ok: false; error: string };

/** Parses `host:port`, `:port`, `[v6]:port` or `0` (off) for the flag named `flag`. */
export function parseBindAddress(text: string, flag: string): BindAddressResult {
  const value = text.trim();
  if (value === '0') return { ok: true, address: undefined };
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):([0-9]{1,5})$/.exec(value);
  if (match === null) return { ok: false, error: `${flag} must be host:port, :port or 0 (off), got ${JSON.stringify(text)}` };
  const port = Number(match[3]);
  if (port > 65535) return { ok: false, error: `${flag}: port ${port} is out of range (0-65535)` };
  const host = match[1] ?? match[2] ?? '';
  return { ok: true, address: { host: host === '' ? '0.0.0.0' : host, port } };
}

/** How a URL names a listening host (every-interface binds are reached on loopback). */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface HttpEndpoint {
  readonly port: number;
  /** `http://<host>:<port>` (`https://` with TLS). */
  readonly url: string;
  close(): Promise<void>;
}

/** A filter's answer: go on, or refuse with this code and message. */
export type FilterVerdict = { allowed: true } | { allowed: false; code: number; message: string };

/** Checks each request before routing; `routed` says whether a route serves its path. */
export interface RequestFilter {
  check(req: IncomingMessage, path: string, routed: boolean): Promise<FilterVerdict>;
}

export interface HttpEndpointOptions {
  address: BindAddress;
  clock: Clock;
  /** Handlers by path (GET and HEAD only). */
  routes: Readonly<Record<string, RouteHandler>>;
  /** For logs and activity labels. */
  name: string;
  log?: Logger;
  /** Serve HTTPS with these certificates (which must have one when the endpoint starts). */
  tls?: CertificateSource;
  filter?: RequestFilter;
}

export function sendText(res: ServerResponse, code: number, text: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(code, { 'content-type': contentType, 'content-length': Buffer.byteLength(text), 'x-content-type-options': 'nosniff' });
  res.end(text);
}

/** An HTTP server on `address` serving `routes`; rejects when the address cannot be bound. */
export async function startHttpEndpoint(options: HttpEndpointOptions): Promise<HttpEndpoint> {
  const { clock, routes, name } = options;
  const log = options.log ?? silentLogger;
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (guardRequestBody(req, res, MAX_ENDPOINT_BODY_BYTES, () => sendText(res, 413, `request entity is too large; limit is ${MAX_ENDPOINT_BODY_BYTES} bytes\n`))) return;
    // No route here reads a body: one that was sent ends the connection after the answer.
    ignoreBody(req, res);
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (options.filter !== undefined) {
      const verdict = await options.filter.check(req, path, route !== undefined);
      if (!verdict.allowed) return sendText(res, verdict.code, `${verdict.message}\n`);
    }
    if (route === undefined) return sendText(res, 404, `404 page not found\n`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return sendText(res, 405, `method ${req.method ?? ''} not allowed\n`);
    }
    await route(req, res);
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    void clock.activity.run(`${name} ${req.url ?? ''}`, () => serve(req, res)).catch((err: unknown) => {
      log.error({ endpoint: name, err: describeError(err) }, 'endpoint handler failed');
      if (!res.headersSent) sendText(res, 500, 'internal error\n');
      else res.destroy();
    });
  };
  let server: Server;
  let stopWatching = () => {};
  if (options.tls !== undefined) {
    const source = options.tls;
    const pair = source.current();
    if (pair === undefined) throw new Error(`the ${name} endpoint has no certificate to serve`);
    const context = (p: KeyPair) => ({ ...SERVER_TLS_POLICY, key: p.keyPem, cert: p.certPem });
    const https = createHttpsServer(context(pair), handle);
    https.on('tlsClientError', (err) => log.debug({ endpoint: name, err: err.message }, 'TLS handshake failed'));
    stopWatching = source.onChange((next) => https.setSecureContext(context(next)));
    server = https;
  } else {
    server = createServer(handle);
  }
  server.requestTimeout = 60_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.address.port, options.address.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    stopWatching();
    throw err;
  }
  const bound = server.address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : options.address.port;
  return {
    port,
    url: `${options.tls === undefined ? 'http' : 'https'}://${urlHost(options.address.host)}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        stopWatching();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One named readiness or liveness check: true, or why it fails. */
export interface ProbeCheck {
  name: string;
  check(): true | string;
}

/** The route answering a probe from its checks (200 when all pass, else 503), in the API server's verbose format. */
export function probeRoute(probe: 'healthz' | 'readyz', checks: readonly ProbeCheck[]): RouteHandler {
  return (_req, res) => {
    const lines: string[] = [];
    let failed = false;
    for (const c of checks) {
      let result: true | string;
      try {
        result = c.check();
      } catch (err) {
        result = describeError(err);
      }
      if (result === true) lines.push(`[+]${c.name} ok`);
      else {
        failed = true;
        lines.push(`[-]${c.name} failed: ${result}`);
      }
    }
    lines.push(failed ? `${probe} check failed` : `${probe} check passed`);
    sendText(res, failed ? 503 : 200, `${lines.join('\n')}\n`);
  };
}
