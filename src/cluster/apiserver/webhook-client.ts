/**
 * Calling one admission webhook over HTTPS, as the API server's webhook
 * client does (k8s.io/apiserver/pkg/util/webhook and the dispatchers):
 *
 * - where: `clientConfig.url`, or a service reference resolved through the
 *   endpoints registered on the control API (the embedded cluster has no
 *   service network); TLS server name `<service>.<namespace>.svc` for those;
 * - trust: `caBundle` when given, otherwise the system trust store (so a
 *   self-signed webhook without caBundle fails, as it does upstream); TLS ≥ 1.2;
 * - identity: a client certificate when the API server has one for the
 *   webhook's `host:port` (webhook-client-auth.ts, as the admission
 *   kubeconfig of kube-apiserver);
 * - POST of the review with `?timeout=<n>s`, bounded by `timeoutSeconds` on
 *   the server's clock.
 *
 * Time: the wait for the answer is a sleep on the server's clock, so a
 * virtual clock may move while the webhook works — a webhook that takes
 * virtual time (or never answers) times out when the test advances the clock.
 * Only the moments the bytes are in our hands (connecting and sending, plus
 * one turn of the event loop for the server to take them; receiving the
 * answer) count as busy, and the bytes on their way: on a virtual clock the
 * request carries the handoff mark (clock/handoff.ts), which a webhook server
 * on the same clock ends when its own tracked activity for the request runs
 * (the manager's webhook server and src/testing/webhook-server.ts do), and
 * renews for its answer until the answer's head is here. A webhook server on
 * the same virtual clock that ignores the mark holds time still for a second
 * of real time per call (`HANDOFF_LOST_MS`).
 *
 * Errors are data: the texts follow what a Go client prints (`Post "<url>":
 * dial tcp ...: connect: connection refused`, `context deadline exceeded`,
 * `x509: certificate signed by unknown authority`, ...).
 */
import { Agent, request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { Clock } from '../../clock/clock.ts';
import { openHandoff } from '../../clock/handoff.ts';
import type { ServiceReference, WebhookAccessor } from './webhook-configuration.ts';
import { credentialsKey, type ClientCredentials } from './webhook-client-auth.ts';

/** Where a service reference leads: an origin (`https://127.0.0.1:PORT`) or why there is none. */
export type ServiceResolution = { ok: true; origin: string } | { ok: false; error: string };

export type ServiceResolver = (ref: ServiceReference) => ServiceResolution;

export type WebhookCallResult = { ok: true; status: number; contentType: string; body: string } | { ok: false; error: string };

const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * One keep-alive agent per server: webhook calls reuse their TLS connections.
 * Free sockets are dropped after 30 s (`timeout` only closes free sockets),
 * before servers drop idle connections (65 s here), so a reused socket is
 * never one the webhook server is closing at that moment. Every socket a
 * burst opened stays free for the next burst instead of all but 16 being
 * closed (kube-apiserver speaks HTTP/2 to webhooks and keeps its one
 * connection), so bursts do not open new TLS connections.
 */
export function webhookAgent(): Agent {
  return new Agent({ keepAlive: true, timeout: 30_000, maxSockets: 64, maxFreeSockets: 64, minVersion: 'TLSv1.2' });
}

/** The URL the request is posted to (as printed in errors) and where to connect. */
export interface WebhookTarget {
  url: URL;
  /** The URL as Go prints it in errors (the port is kept even when it is 443). */
  display: string;
  /** Host and port to connect to (differs from `url` for service references). */
  connectHost: string;
  connectPort: number;
  servername: string;
  /** The name the API server looks its client credentials up by (`host:port`, or the URL's bare host). */
  credentialsKey: string;
}

export function webhookTarget(hook: WebhookAccessor, resolve: ServiceResolver): { ok: true; target: WebhookTarget } | { ok: false; error: string; url: string } {
  const timeout = `timeout=${hook.timeoutSeconds}s`;
  const cc = hook.clientConfig;
  if (cc.url !== undefined) {
    let url: URL;
    try {
      url = new URL(cc.url);
    } catch (err) {
      return { ok: false, error: `invalid url ${JSON.stringify(cc.url)}: ${err instanceof Error ? err.message : String(err)}`, url: cc.url };
    }
    url.search = timeout;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const display = `${cc.url}?${timeout}`;
    const key = credentialsKey(host, url.port === '' ? undefined : Number(url.port));
    return { ok: true, target: { url, display, connectHost: host, connectPort: Number(url.port === '' ? 443 : url.port), servername: host, credentialsKey: key } };
  }
  const svc = cc.service;
  if (svc === undefined) return { ok: false, error: 'webhook has no clientConfig', url: '' };
  const servername = `${svc.name}.${svc.namespace}.svc`;
  const path = svc.path === undefined || svc.path === '' ? '/' : svc.path;
  const display = `https://${servername}:${svc.port}${path.startsWith('/') ? path : `/${path}`}?${timeout}`;
  let url: URL;
  try {
    url = new URL(display);
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err), url: display };
  }
  const resolved = resolve(svc);
  if (!resolved.ok) return { ok: false, error: resolved.error, url: display };
  let origin: URL;
  try {
    origin = new URL(resolved.origin);
  } catch {
    return { ok: false, error: `invalid endpoint ${JSON.stringify(resolved.origin)} registered for service ${JSON.stringify(svc.name)}`, url: display };
  }
  return {
    ok: true,
    target: {
      url,
      display,
      connectHost: origin.hostname.replace(/^\[(.*)\]$/, '$1'),
      connectPort: Number(origin.port === '' ? 443 : origin.port),
      servername,
      credentialsKey: credentialsKey(servername, svc.port),
    },
  };
}

/** Go's x509/tls wording for Node's certificate verification failures. */
export function describeTlsError(err: NodeJS.ErrnoException, servername: string): string | undefined {
  switch (err.code) {
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'CERT_SIGNATURE_FAILURE':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'CERT_HAS_EXPIRED':
    case 'CERT_NOT_YET_VALID':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: x509: certificate is not valid for ${servername}`;
    default:
      return undefined;
  }
}

function describeTransportError(err: NodeJS.ErrnoException, target: WebhookTarget): string {
  const tls = describeTlsError(err, target.servername);
  if (tls !== undefined) return tls;
  const address = `${target.connectHost.includes(':') ? `[${target.connectHost}]` : target.connectHost}:${target.connectPort}`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${address}: connect: connection refused`;
    case 'ECONNRESET':
      return `read tcp ${address}: read: connection reset by peer`;
    case 'EHOSTUNREACH':
      return `dial tcp ${address}: connect: no route to host`;
    case 'ENOTFOUND':
      return `dial tcp: lookup ${target.connectHost}: no such host`;
    default:
      return err.message;
  }
}

export interface PostOptions {
  clock: Clock;
  agent: Agent;
  /** PEM of the caBundle; undefined uses the system trust store. */
  caPem: string | undefined;
  timeoutMs: number;
  /** For diagnostics of the virtual clock. */
  label: string;
  /** Presented when the webhook server asks for a client certificate. */
  clientCertificate?: ClientCredentials;
}

/**
 * POSTs `body` to the target. Resolves with the raw answer or a transport
 * error text (without the `Post "<url>": ` prefix, which the caller adds).
 */
export function postToWebhook(target: WebhookTarget, body: string, options: PostOptions): Promise<WebhookCallResult> {
  const { clock } = options;
  return new Promise<WebhookCallResult>((resolve) => {
    let settled = false;
    const abort = new AbortController();
    let endSending: (() => void) | undefined = clock.activity.begin(`${options.label}: sending`);
    let endReceiving: (() => void) | undefined;
    const handoff = openHandoff(clock.activity, 'webhook');
    const finish = (result: WebhookCallResult) => {
      if (settled) return;
      settled = true;
      // Resume the caller's activity (cancel the timeout sleep) before letting go of the busy markers.
      abort.abort();
      handoff.close();
      endSending?.();
      endReceiving?.();
      endSending = undefined;
      endReceiving = undefined;
      resolve(result);
    };

    let req: ReturnType<typeof request>;
    try {
      req = request({
        host: target.connectHost,
        port: target.connectPort,
        // SNI carries names only; for an IP address the certificate is checked against the connect host.
        ...(isIP(target.servername) === 0 ? { servername: target.servername } : {}),
        path: `${target.url.pathname}${target.url.search}`,
        method: 'POST',
        agent: options.agent,
        ...(options.caPem !== undefined ? { ca: options.caPem } : {}),
        ...(options.clientCertificate !== undefined ? { cert: options.clientCertificate.certPem, key: options.clientCertificate.keyPem } : {}),
        rejectUnauthorized: true,
        minVersion: 'TLSv1.2',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, */*',
          'Content-Length': Buffer.byteLength(body),
          Host: target.url.host,
          ...handoff.headers,
        },
      });
    } catch (err) {
      finish({ ok: false, error: err instanceof Error ? err.message : String(err) });
      return;
    }

    clock
      .sleep(options.timeoutMs, abort.signal, { name: `${options.label}: timeout` })
      .then(() => {
        if (settled) return;
        finish({ ok: false, error: 'context deadline exceeded' });
        req.destroy();
      })
      .catch(() => {
        // Aborted: the call ended first.
      });

    req.on('finish', () => {
      // One more turn of the event loop lets an in-process webhook server pick the bytes up and start its own activity.
      setImmediate(() => {
        endSending?.();
        endSending = undefined;
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, error: describeTransportError(err, target) }));
    req.on('response', (res: IncomingMessage) => {
      endSending?.();
      endSending = undefined;
      endReceiving ??= clock.activity.begin(`${options.label}: receiving`);
      handoff.close();
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          finish({ ok: false, error: `the webhook response is larger than ${MAX_RESPONSE_BYTES} bytes` });
          res.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () =>
        finish({ ok: true, status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, error: describeTransportError(err, target) }));
      res.on('aborted', () => finish({ ok: false, error: 'unexpected EOF' }));
    });
    req.end(body);
  });
}
