/**
 * The manager's plain-HTTP endpoints: the health probes (`/healthz`,
 * `/readyz`, on `--health-addr`) and the Prometheus scrape (`/metrics`, on
 * `--metrics-addr`), and the bind-address syntax of their flags.
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
 * must arrive whole within 60 s.
 * Start at `startHttpEndpoint`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Clock } from '../clock/clock.ts';
import { describeError } from '../client/errors.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { guardRequestBody, ignoreBody } from '../client/request-body.ts';

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
  /** `http://<host>:<port>`. */
  readonly url: string;
  close(): Promise<void>;
}

export interface HttpEndpointOptions {
  address: BindAddress;
  clock: Clock;
  /** Handlers by path (GET and HEAD only). */
  routes: Readonly<Record<string, RouteHandler>>;
  /** For logs and activity labels. */
  name: string;
  log?: Logger;
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
    if (route === undefined) return sendText(res, 404, `404 page not found\n`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return sendText(res, 405, `method ${req.method ?? ''} not allowed\n`);
    }
    await route(req, res);
  };
  const server = createServer((req, res) => {
    void clock.activity.run(`${name} ${req.url ?? ''}`, () => serve(req, res)).catch((err: unknown) => {
      log.error({ endpoint: name, err: describeError(err) }, 'endpoint handler failed');
      if (!res.headersSent) sendText(res, 500, 'internal error\n');
      else res.destroy();
    });
  });
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.address.port, options.address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : options.address.port;
  return {
    port,
    url: `http://${urlHost(options.address.host)}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
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
