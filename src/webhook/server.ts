/**
 * The HTTPS admission server (TLS ≥ 1.2): AdmissionReview v1 on the
 * reference's paths, a `/healthz`, metrics hooks and certificate reload.
 *
 * Routes: `POST /mutate-pod` (pod CREATE), `POST /validate-pod` (pod DELETE
 * and pods/eviction CREATE), `POST /validate-apps-kruise-io-workloadspread`
 * (WorkloadSpread CREATE/UPDATE), `GET /healthz`.
 *
 * Invariants:
 * - a readable review is always answered 200 with an AdmissionReview that
 *   echoes its uid; a handler that throws becomes a 500 *inside* the review
 *   (never a crash, never a dropped connection);
 * - an unreadable one is answered with the HTTP code of the problem (400, or
 *   413 above 3 MiB) and a JSON body saying what was wrong; the server keeps
 *   serving. A body is bounded however it arrives: a Content-Length above the
 *   limit is refused unread, a chunked body is cut at the limit, and a
 *   connection whose body was not read to its end is closed after the answer
 *   (which says `Connection: close` on the routes that read none: health,
 *   unknown paths, other methods, refused callers; src/client/request-body.ts);
 *   a request must arrive whole within 60 s;
 * - TLS: 1.2 with ECDHE + AEAD suites only, 1.3 preferred (src/client/tls-policy.ts);
 * - with `clientAuth`, only callers presenting a certificate the client CA
 *   signed complete the handshake (and, with allowed names, only those
 *   names are served; others get 403) — see client-auth.ts;
 * - every request runs inside `clock.activity.run`, so a virtual clock waits
 *   for it, and ends the handoff mark an API server on the same virtual
 *   clock sent with it (clock/handoff.ts): time never moves while a review
 *   or its answer is on its way;
 * - the serving certificate follows its `CertificateSource` (cert-dir files
 *   or the Secret), swapped in without a restart.
 * Start at `startWebhookServer`.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Clock } from '../clock/clock.ts';
import { acceptHandoff } from '../clock/handoff.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { guardRequestBody, ignoreBody, lastOnConnection, readBodyWithin } from '../client/request-body.ts';
import { SERVER_TLS_POLICY } from '../client/tls-policy.ts';
import {
  errored,
  MAX_ADMISSION_BODY_BYTES,
  parseAdmissionReview,
  responseResult,
  reviewResponse,
  type AdmissionRequest,
  type AdmissionResponse,
} from './admission-review.ts';
import type { CertificateSource, KeyPair } from './certs.ts';
import { CpuTurns, ReviewSlots, type AdmissionContext, type CallerGone } from './cpu-turns.ts';
import { peerAllowed, type ClientAuth, type ClientAuthSource } from './client-auth.ts';
import type { WebhookMetrics } from './metrics.ts';

export { MUTATE_POD_PATH, VALIDATE_POD_PATH, VALIDATE_WORKLOADSPREAD_PATH } from './names.ts';
export const HEALTHZ_PATH = '/healthz';

export type AdmissionHandler = (request: AdmissionRequest, context: AdmissionContext) => Promise<AdmissionResponse>;

/**
 * Reviews larger than this take turns on the event loop for their heavy
 * steps (cpu-turns.ts); smaller ones — every ordinary pod — are cheap enough
 * to run at once.
 */
export const LARGE_REVIEW_BYTES = 64 * 1024;

/** How many large reviews are worked on at once (the rest wait with their body only; cpu-turns.ts). */
export const CONCURRENT_LARGE_REVIEWS = 4;

export interface WebhookServerOptions {
  clock: Clock;
  certificates: CertificateSource;
  /** Handlers by path (usually the three paths above). */
  handlers: Readonly<Record<string, AdmissionHandler>>;
  /** Default 0.0.0.0; tests use 127.0.0.1. */
  host?: string;
  /** Default 9443; 0 picks a free port. */
  port?: number;
  metrics?: WebhookMetrics;
  log?: Logger;
  /** Client-certificate authentication of callers (`--client-ca-file`); omitted: anyone may call. */
  clientAuth?: ClientAuthSource;
}

/** How long a request may take to arrive whole (headers and body). */
export const REQUEST_TIMEOUT_MS = 60_000;

export interface WebhookServer {
  readonly port: number;
  /** `https://<host>:<port>` (127.0.0.1 when listening on every address). */
  readonly url: string;
  /** Requests being served now. */
  inFlight(): number;
  /** Stops accepting, lets requests in flight finish (up to `graceMs` on the clock), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

function tlsOptions(pair: KeyPair, auth: ClientAuth | undefined) {
  const base = { ...SERVER_TLS_POLICY, key: pair.keyPem, cert: pair.certPem };
  return auth === undefined ? base : { ...base, ca: auth.caPem, requestCert: true, rejectUnauthorized: true };
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const { clock, certificates, handlers } = options;
  const log = options.log ?? silentLogger;
  const metrics = options.metrics ?? {};
  const initial = certificates.current();
  if (initial === undefined) throw new Error('the webhook server has no serving certificate yet');
  let inFlight = 0;
  const drained: (() => void)[] = [];
  const sockets = new Set<Socket>();

  let auth = options.clientAuth?.current();
  const turns = new CpuTurns();
  const slots = new ReviewSlots(CONCURRENT_LARGE_REVIEWS);
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const tooLargeMessage = `request entity is too large; limit is ${MAX_ADMISSION_BODY_BYTES} bytes`;
    if (guardRequestBody(req, res, MAX_ADMISSION_BODY_BYTES, () => {
      metrics.badRequest?.(path, 413);
      sendJson(res, 413, reviewResponse(errored('', 413, new Error(tooLargeMessage))));
    })) return;
    if (auth !== undefined) {
      const allowedPeer = peerAllowed(req.socket as TLSSocket, auth.allowedNames);
      if (allowedPeer !== true) {
        log.warn({ webhook: path, err: allowedPeer }, 'webhook caller refused');
        ignoreBody(req, res);
        sendJson(res, 403, { message: allowedPeer });
        return;
      }
    }
    if (path === HEALTHZ_PATH) {
      ignoreBody(req, res);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    const handler = Object.hasOwn(handlers, path) ? handlers[path] : undefined;
    if (handler === undefined) {
      ignoreBody(req, res);
      sendJson(res, 404, { message: `no admission webhook is served at ${path}` });
      return;
    }
    if (req.method !== 'POST') {
      ignoreBody(req, res);
      res.setHeader('allow', 'POST');
      sendJson(res, 405, { message: `admission reviews are POSTed; got ${req.method ?? ''}` });
      return;
    }
    const read = await readBodyWithin(req, MAX_ADMISSION_BODY_BYTES);
    const refuse = (code: 400 | 413, message: string, uid = ''): void => {
      metrics.badRequest?.(path, code);
      log.warn({ webhook: path, code, err: message }, 'unreadable admission review');
      sendJson(res, code, reviewResponse(errored(uid, code, new Error(message))));
    };
    if (!read.ok) {
      if (!read.tooLarge) return refuse(400, read.error);
      lastOnConnection(res);
      return refuse(413, tooLargeMessage);
    }
    const body = read.body;
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (contentType !== 'application/json') return refuse(400, `contentType=${contentType}, expected application/json`);
    // A flag, not an AbortController: admission only asks whether the caller is gone, and a signal costs every review.
    const gone = { aborted: false };
    res.once('close', () => {
      if (!res.writableFinished) gone.aborted = true;
    });
    const large = body.byteLength > LARGE_REVIEW_BYTES;
    const release = large ? await slots.acquire() : undefined;
    try {
      // A caller that gave up while the review waited for its slot gets no answer and costs no work.
      if (!gone.aborted) await answerReview(path, handler, body, large, gone, res, refuse);
    } finally {
      release?.();
    }
  };

  const answerReview = async (path: string, handler: AdmissionHandler, body: Buffer, large: boolean, signal: CallerGone, res: ServerResponse, refuse: (code: 400 | 413, message: string, uid?: string) => void): Promise<void> => {
    const context: AdmissionContext = { signal, turn: large ? () => turns.take() : () => Promise.resolve() };
    await context.turn();
    const parsed = parseAdmissionReview(body);
    if (!parsed.ok) return refuse(parsed.code, parsed.message, parsed.uid);
    const request = parsed.request;
    const started = clock.now();
    let response: AdmissionResponse;
    try {
      await context.turn();
      response = await handler(request, context);
      if (response.uid !== request.uid) response = { ...response, uid: request.uid };
    } catch (err) {
      log.error({ webhook: path, requestID: request.uid, err: err instanceof Error ? err.message : String(err) }, 'admission handler failed');
      response = errored(request.uid, 500, err);
    }
    const result = responseResult(response);
    metrics.admission?.(path, request.operation, result, Math.max(0, clock.now() - started) / 1000);
    await context.turn();
    sendJson(res, 200, reviewResponse(response));
  };

  const server: Server = createServer(tlsOptions(initial, auth), (req, res) => {
    inFlight++;
    const handedOver = acceptHandoff(req.headers, res, clock);
    const work = clock.activity.run(`admission ${req.url ?? ''}`, () => serve(req, res));
    // The request's own tracked activity is running now: the API server's in-flight mark can go.
    handedOver();
    void work
      .catch((err: unknown) => {
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'admission request failed');
        if (!res.headersSent) sendJson(res, 500, { message: 'internal error' });
        else res.destroy();
      })
      .finally(() => {
        inFlight--;
        if (inFlight === 0) for (const d of drained.splice(0)) d();
      });
  });
  // The API server keeps webhook connections alive; never close one it may be about to reuse.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 70_000;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', (err) => log.debug({ err: err.message }, 'TLS handshake failed'));
  let pair = initial;
  const unsubscribe = certificates.onChange((next) => {
    try {
      server.setSecureContext(tlsOptions(next, auth));
      pair = next;
      log.info({}, 'webhook serving certificate reloaded');
    } catch (err) {
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'the new serving certificate cannot be used; keeping the previous one');
    }
  });
  const unsubscribeAuth = options.clientAuth?.onChange((next) => {
    try {
      server.setSecureContext(tlsOptions(pair, next));
      auth = next;
      log.info({}, 'webhook client CA reloaded');
    } catch (err) {
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'the new client CA cannot be used; keeping the previous one');
    }
  });

  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 9443, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  return {
    port,
    url: `https://${urlHost}:${port}`,
    inFlight: () => inFlight,
    async close(graceMs = 10_000) {
      unsubscribe();
      unsubscribeAuth?.();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        const abort = new AbortController();
        await Promise.race([
          new Promise<void>((resolve) => drained.push(resolve)),
          clock.sleep(graceMs, abort.signal, { name: 'webhook server drain' }).catch(() => {}),
        ]);
        abort.abort();
      }
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
