/**
 * `startApiServer`: the embedded API server on HTTPS (TLS 1.2 with ECDHE +
 * AEAD suites only, 1.3 preferred — src/client/tls-policy.ts; a fresh
 * self-signed CA unless certificates are given), running on the given clock.
 * Authentication: the admin bearer token (a user in `system:masters`, which
 * the kubeconfig carries), the `users` tokens, ServiceAccount tokens from
 * TokenRequest, anonymous requests, impersonation (authentication.ts);
 * authorization: `system:masters`, then RBAC (authorization.ts). `close()` ends every watch and connection.
 * Request bodies are bounded however they arrive (body.ts): a Content-Length
 * above 3 MiB is answered 413 unread, and a connection whose body was not
 * read to its end is closed after the answer.
 * With `webhookClientCredentials`, it presents a client certificate to the
 * admission webhooks it calls, chosen as kube-apiserver chooses it from its
 * admission kubeconfig (webhook-client-auth.ts).
 *
 * Usage:
 *   const server = await startApiServer({ clock });
 *   kc.loadFromString(server.kubeconfig());
 *   ... server.control.compact(); server.core.admission.register(...)
 *   await server.close();
 * Plug-ins (`options.plugins`) get the core before the first request and
 * before the bootstrap objects are created.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock/clock.ts';
import { acceptHandoff } from '../../clock/handoff.ts';
import type { Races } from '../../clock/races.ts';
import { guardRequestBody, ignoreBody } from '../../client/request-body.ts';
import { SERVER_TLS_POLICY } from '../../client/tls-policy.ts';
import { MAX_REQUEST_BODY_BYTES } from './body.ts';
import { requestEntityTooLarge } from './errors.ts';
import { sendStatus } from './http-util.ts';
import { generateServingCertificate, type ServingCertificate } from '../../client/loopback-certificates.ts';
import { ApiServerControl } from './control.ts';
import { ApiServerCore } from './core.ts';
import { HttpHandler } from './handler.ts';
import { DEFAULT_KUBECONFIG_NAME, renderKubeconfig } from '../../client/kubeconfig.ts';
import type { UserInfo } from './resource-def.ts';

export type ApiServerPlugin = (core: ApiServerCore) => void | Promise<void>;

export interface ApiServerOptions {
  clock: Clock;
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** The admin bearer token (default: random). */
  token?: string;
  /** More tokens and the users they authenticate as (RBAC decides what they may do, unless they are in `system:masters`). */
  users?: Record<string, UserInfo>;
  /** Watch history length (default 10,000 events). */
  historyLimit?: number;
  /** Serving certificate (default: generated; pass one to save ~0.2 s per server in tests). */
  certificate?: ServingCertificate;
  plugins?: ApiServerPlugin[];
  /** Cluster/context name in the kubeconfig. */
  name?: string;
  /** Race mode: watch events and admission webhook calls take random clock time (watch.ts, admission-webhooks.ts). */
  races?: Races;
  /** Admission webhooks are called, and timed, from a worker thread of their own (webhook-thread.ts); for servers on the real clock. */
  webhookThread?: boolean;
}

export interface ApiServer {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly caPem: string;
  readonly token: string;
  readonly core: ApiServerCore;
  readonly control: ApiServerControl;
  kubeconfig(namespace?: string): string;
  writeKubeconfig(path: string, namespace?: string): Promise<void>;
  /** Race mode: every watch stream writes the events it is holding back now, as if their delays had passed. */
  deliverWatchEvents(): void;
  close(): Promise<void>;
}

export const ADMIN_USER: UserInfo = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };

export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(24).toString('hex');
  const certificate = options.certificate ?? generateServingCertificate();
  const core = new ApiServerCore({
    clock: options.clock,
    caPem: certificate.caPem,
    ...(options.historyLimit === undefined ? {} : { historyLimit: options.historyLimit }),
    ...(options.races === undefined ? {} : { races: options.races }),
    ...(options.webhookThread === true ? { webhookThread: true } : {}),
  });
  for (const plugin of options.plugins ?? []) await plugin(core);
  await core.bootstrap();

  const users = core.staticTokens;
  for (const [t, user] of Object.entries(options.users ?? {})) users.set(t, user);
  users.set(token, ADMIN_USER);
  let port = 0;
  let handler: HttpHandler | undefined;
  const control = new ApiServerControl(core, () => handler?.cutWatches() ?? 0, users);
  handler = new HttpHandler(core, control, { authenticator: core.authenticator, hostPort: () => `${host}:${port}` });
  const server: Server = createServer({ ...SERVER_TLS_POLICY, key: certificate.keyPem, cert: certificate.certPem }, (req, res) => {
    if (guardRequestBody(req, res, MAX_REQUEST_BODY_BYTES, () => sendStatus(req, res, requestEntityTooLarge(MAX_REQUEST_BODY_BYTES)))) return;
    // Reads (get, list, watch, health) take no body: one that was sent ends the connection after the answer.
    if (req.method === 'GET' || req.method === 'HEAD') ignoreBody(req, res);
    const handedOver = acceptHandoff(req.headers, res, options.clock);
    handler?.handle(req, res);
    // The request's own tracked activity is running now: the client's in-flight mark can go.
    handedOver();
  });
  // Idle keep-alive connections stay open longer than clients keep free sockets (client agents drop them
  // after 30 s), so a client never reuses a socket the server is closing at that instant (ECONNRESET).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 70_000;
  server.requestTimeout = 60_000;
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('tlsClientError', () => {
    // A client that gives up during the handshake is not the server's problem.
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const name = options.name ?? DEFAULT_KUBECONFIG_NAME;
  let closed: Promise<void> | undefined;

  return {
    url,
    host,
    port,
    caPem: certificate.caPem,
    token,
    core,
    control,
    kubeconfig: (namespace?: string) => renderKubeconfig({ server: url, caPem: certificate.caPem, token, name, ...(namespace !== undefined ? { namespace } : {}) }),
    writeKubeconfig: (path: string, namespace?: string) =>
      writeFile(path, renderKubeconfig({ server: url, caPem: certificate.caPem, token, name, ...(namespace !== undefined ? { namespace } : {}) }), { mode: 0o600 }),
    deliverWatchEvents: () => handler?.flushWatches(),
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        handler?.cutWatches();
        const webhooksClosed = core.webhooks.close();
        server.close(() => void webhooksClosed.then(resolve));
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      });
      return closed;
    },
  };
}
