/**
 * Helpers for the API server's conformance tests (not used by production
 * code): start a server with the real `@kubernetes/client-node` pointed at it,
 * read `ApiException`s as Status objects, and make raw HTTPS requests for the
 * cases a typed client cannot express (bad bodies, odd content types).
 */
import { request } from 'node:https';
import * as k8s from '@kubernetes/client-node';
import type { Clock } from '../clock/clock.ts';
import type { KubeObject } from '../k8s/types.ts';
import { generateServingCertificate, type ServingCertificate } from '../client/loopback-certificates.ts';
import type { Status } from '../client/errors.ts';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../cluster/index.ts';

export interface TestCluster {
  server: ApiServer;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  apps: k8s.AppsV1Api;
  objects: k8s.KubernetesObjectApi;
  close(): Promise<void>;
}

/** One certificate per test file keeps server start-up fast. */
export function testCertificate(): ServingCertificate {
  return generateServingCertificate();
}

export async function startTestCluster(clock: Clock, certificate: ServingCertificate, options: Partial<ApiServerOptions> = {}): Promise<TestCluster> {
  const server = await startApiServer({ clock, certificate, ...options });
  const kc = new k8s.KubeConfig();
  kc.loadFromString(server.kubeconfig());
  return {
    server,
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
    close: () => server.close(),
  };
}

/** The Status carried by a client-node ApiException (or by anything thrown with code/body). */
export function statusOf(err: unknown): Status & { code: number } {
  const e = err as { code?: number; body?: unknown };
  let body = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body) as unknown;
    } catch {
      body = { message: body };
    }
  }
  return { ...(body as Status), code: e.code ?? (body as Status | undefined)?.code ?? 0 };
}

/** Runs `fn`, expecting it to fail; answers the Status. */
export async function expectStatus(fn: () => Promise<unknown>): Promise<Status & { code: number }> {
  try {
    await fn();
  } catch (err) {
    return statusOf(err);
  }
  throw new Error('expected the request to fail');
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/** A raw HTTPS request to the server with its CA and token (default the admin's; null: none). A header given as a list is sent once per value. */
export function rawRequest(server: ApiServer, method: string, path: string, options: { body?: string | Buffer; contentType?: string; headers?: Record<string, string | string[]>; token?: string | null } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { ...(options.headers ?? {}) };
    if (options.token !== null) headers['Authorization'] = `Bearer ${options.token ?? server.token}`;
    if (options.contentType !== undefined) headers['Content-Type'] = options.contentType;
    // Node does not chunk DELETE bodies by default: frame them explicitly.
    if (options.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(options.body));
    const req = request({ host: server.host, port: server.port, method, path, ca: server.caPem, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text) as unknown;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** Opens a raw watch stream and collects its events until it ends or `stop()` is called. */
export function rawWatch(server: ApiServer, path: string, headers: Record<string, string> = {}): { events: { type: string; object: KubeObject }[]; ended: Promise<void>; status: Promise<number>; stop(): void; next(n: number): Promise<void> } {
  const events: { type: string; object: KubeObject }[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let stop = () => {};
  let resolveStatus: (n: number) => void = () => {};
  const status = new Promise<number>((r) => (resolveStatus = r));
  const ended = new Promise<void>((resolve) => {
    const req = request({ host: server.host, port: server.port, method: 'GET', path, ca: server.caPem, headers: { Authorization: `Bearer ${server.token}`, ...headers } }, (res) => {
      resolveStatus(res.statusCode ?? 0);
      let buf = '';
      res.on('data', (c: Buffer) => {
        buf += c.toString('utf8');
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (line.trim() === '') continue;
          events.push(JSON.parse(line) as { type: string; object: KubeObject });
          for (const w of [...waiters]) {
            if (events.length >= w.n) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve();
            }
          }
        }
      });
      res.on('end', () => resolve());
      res.on('close', () => resolve());
      res.on('error', () => resolve());
    });
    req.on('error', () => resolve());
    req.end();
    stop = () => req.destroy();
  });
  void ended.then(() => {
    for (const w of waiters.splice(0)) w.resolve();
  });
  return {
    events,
    ended,
    status,
    stop: () => stop(),
    next: (n: number) => (events.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
  };
}

export function pod(name: string, extra: { labels?: Record<string, string>; nodeName?: string; namespace?: string } = {}): k8s.V1Pod {
  const spec: k8s.V1PodSpec = { containers: [{ name: 'app', image: 'nginx:1.25' }] };
  if (extra.nodeName !== undefined) spec.nodeName = extra.nodeName;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(extra.namespace !== undefined ? { namespace: extra.namespace } : {}), ...(extra.labels !== undefined ? { labels: extra.labels } : {}) },
    spec,
  };
}

export function deployment(name: string, replicas = 1): k8s.V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } },
    },
  };
}
