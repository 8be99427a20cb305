/**
 * A small HTTPS admission webhook server for tests: one handler per path, a
 * serving certificate from its own test CA (hand `caBundle` to the webhook
 * configuration), and a record of every AdmissionReview it received.
 *
 * Handlers answer with a decision (`allow()`, `deny(...)`, `patch(...)`),
 * which the server turns into an AdmissionReview response with the request's
 * uid and apiVersion, or with `{ raw }` / `{ review }` to send something
 * malformed on purpose. Given a clock, each request runs as a tracked
 * activity on it, so a handler that sleeps on a virtual clock lets the
 * caller's timeout fire when the test advances time.
 * Not used by production code.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Operation } from 'rfc6902';
import type { Clock } from '../clock/clock.ts';
import { acceptHandoff } from '../clock/handoff.ts';
import { createCertificateAuthority, issueServingCertificate, type CertificateAuthority } from '../client/loopback-certificates.ts';

/** The `request` of an AdmissionReview, loosely typed: tests look at whatever they need. */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: string;
  userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object: Record<string, unknown> | null;
  oldObject: Record<string, unknown> | null;
  dryRun?: boolean;
  options: Record<string, unknown> | null;
}

export interface RecordedReview {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The parsed body (undefined when it was not JSON). */
  review: { apiVersion?: string; kind?: string; request?: AdmissionRequest } | undefined;
  request: AdmissionRequest | undefined;
}

export interface WebhookDecision {
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string; details?: Record<string, unknown> };
  /** JSON patch operations (sent base64-encoded with patchType JSONPatch). */
  patch?: Operation[];
  /** Overrides the patchType (tests of unsupported types). */
  patchType?: string;
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export type WebhookReply =
  | WebhookDecision
  /** Sent as is: status (default 200), body, content type (default application/json). */
  | { raw: { status?: number; body: string; contentType?: string } }
  /** A whole AdmissionReview of the test's making. */
  | { review: unknown };

export type WebhookHandler = (request: AdmissionRequest, recorded: RecordedReview) => WebhookReply | Promise<WebhookReply>;

export const allow = (extra: Omit<WebhookDecision, 'allowed'> = {}): WebhookDecision => ({ allowed: true, ...extra });
export const deny = (message: string, code?: number, extra: Omit<WebhookDecision, 'allowed' | 'status'> = {}): WebhookDecision => ({
  allowed: false,
  status: { message, ...(code !== undefined ? { code } : {}) },
  ...extra,
});
export const patch = (ops: Operation[], extra: Omit<WebhookDecision, 'allowed' | 'patch'> = {}): WebhookDecision => ({ allowed: true, patch: ops, ...extra });

export interface TestWebhookServer {
  /** `https://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  readonly caPem: string;
  /** The CA as a webhook configuration's `caBundle` (base64 PEM). */
  readonly caBundle: string;
  /** Every review received, oldest first. */
  readonly requests: RecordedReview[];
  handle(path: string, handler: WebhookHandler): void;
  /** `clientConfig.url` of a path. */
  urlFor(path: string): string;
  requestsTo(path: string): RecordedReview[];
  clear(): void;
  close(): Promise<void>;
}

export interface WebhookServerOptions {
  /** Runs each request as a tracked activity on this clock. */
  clock?: Clock;
  /** Names the certificate is valid for besides localhost/127.0.0.1 (e.g. `svc.ns.svc`). */
  dnsNames?: string[];
  /** Reuse a CA (saves a key generation per server). */
  ca?: CertificateAuthority;
  handlers?: Record<string, WebhookHandler>;
}

function responseFor(review: RecordedReview['review'], decision: WebhookDecision): unknown {
  const response: Record<string, unknown> = { uid: review?.request?.uid ?? '', allowed: decision.allowed };
  if (decision.status !== undefined) response['status'] = decision.status;
  if (decision.patch !== undefined) {
    response['patch'] = Buffer.from(JSON.stringify(decision.patch)).toString('base64');
    response['patchType'] = decision.patchType ?? 'JSONPatch';
  } else if (decision.patchType !== undefined) response['patchType'] = decision.patchType;
  if (decision.warnings !== undefined) response['warnings'] = decision.warnings;
  if (decision.auditAnnotations !== undefined) response['auditAnnotations'] = decision.auditAnnotations;
  return { apiVersion: review?.apiVersion ?? 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string, contentType: string): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export async function startWebhookServer(options: WebhookServerOptions = {}): Promise<TestWebhookServer> {
  const ca = options.ca ?? createCertificateAuthority('webhook-test-ca');
  const cert = issueServingCertificate(ca, { dnsNames: ['localhost', ...(options.dnsNames ?? [])], ipAddresses: ['127.0.0.1', '::1'] });
  const handlers = new Map<string, WebhookHandler>(Object.entries(options.handlers ?? {}));
  const requests: RecordedReview[] = [];

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const text = await readAll(req);
    let parsed: RecordedReview['review'];
    try {
      parsed = JSON.parse(text) as RecordedReview['review'];
    } catch {
      parsed = undefined;
    }
    const recorded: RecordedReview = { path: url.pathname, query: url.searchParams, headers: req.headers, review: parsed, request: parsed?.request };
    requests.push(recorded);
    const handler = handlers.get(url.pathname);
    if (handler === undefined || recorded.request === undefined) {
      send(res, 404, `no webhook handler for ${url.pathname}`, 'text/plain');
      return;
    }
    let reply: WebhookReply;
    try {
      reply = await handler(recorded.request, recorded);
    } catch (err) {
      send(res, 500, `handler failed: ${err instanceof Error ? err.message : String(err)}`, 'text/plain');
      return;
    }
    if ('raw' in reply) send(res, reply.raw.status ?? 200, reply.raw.body, reply.raw.contentType ?? 'application/json');
    else if ('review' in reply) send(res, 200, JSON.stringify(reply.review), 'application/json');
    else send(res, 200, JSON.stringify(responseFor(parsed, reply)), 'application/json');
  };

  const server: Server = createServer({ key: cert.keyPem, cert: cert.certPem, minVersion: 'TLSv1.2' }, (req, res) => {
    const clock = options.clock;
    let work: Promise<void>;
    if (clock === undefined) work = serve(req, res);
    else {
      const handedOver = acceptHandoff(req.headers, res, clock);
      work = clock.activity.run(`test webhook ${req.url ?? ''}`, () => serve(req, res));
      handedOver();
    }
    work.catch((err: unknown) => send(res, 500, String(err), 'text/plain'));
  });
  // The API server keeps webhook connections alive (its agent drops free sockets after 30 s): never close one it may reuse.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 70_000;
  server.on('tlsClientError', () => {
    // Clients that refuse our certificate are part of the tests.
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `https://127.0.0.1:${port}`;
  let closed: Promise<void> | undefined;
  return {
    origin,
    port,
    caPem: ca.certPem,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    requests,
    handle: (path, handler) => void handlers.set(path, handler),
    urlFor: (path) => `${origin}${path.startsWith('/') ? path : `/${path}`}`,
    requestsTo: (path) => requests.filter((r) => r.path === path),
    clear: () => void requests.splice(0),
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
