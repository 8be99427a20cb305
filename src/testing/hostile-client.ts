/**
 * Clients that misbehave on purpose, for the hardening tests (issue 14): an
 * endless chunked upload, a huge announced Content-Length, and a TLS
 * handshake offering only the suites or versions a test names. Each resolves
 * with what the server did, never hangs past its own cap. Not used by
 * production code.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type SecureVersion } from 'node:tls';

export interface UploadOutcome {
  /** HTTP status of the answer, 0 when none came. */
  status: number;
  body: string;
  /** Body bytes written before the server answered or closed. */
  bytesSent: number;
  /** The server closed the connection (before we stopped sending). */
  closedByServer: boolean;
  /** The `connection` header of the answer. */
  connection: string | undefined;
}

export interface UploadOptions {
  method?: string;
  path: string;
  /** CA of an https:// server (and a client certificate, when it asks for one). */
  ca?: string;
  cert?: string;
  key?: string;
  /** Announce this Content-Length instead of sending chunked. */
  contentLength?: number;
  /** End the body after this many bytes (default 256 MiB, the test's own safety cap for an "endless" one). */
  capBytes?: number;
  chunkBytes?: number;
  contentType?: string;
  /** Keep sending after the answer arrived, as a hostile client would, until the server closes (or the cap). */
  keepSending?: boolean;
  /** A bearer token (an authenticated client). */
  token?: string;
}

/** Sends a body (chunked unless `contentLength`) as fast as the socket takes it until the server answers or closes. */
export function uploadUntilStopped(baseUrl: string, options: UploadOptions): Promise<UploadOutcome> {
  const url = new URL(options.path, baseUrl);
  const chunk = Buffer.alloc(options.chunkBytes ?? 64 * 1024, 0x20);
  const cap = options.capBytes ?? 256 * 1024 * 1024;
  const headers: Record<string, string | number> = { 'content-type': options.contentType ?? 'application/json' };
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  // Node frames a GET body as chunked only when asked to.
  if (options.contentLength !== undefined) headers['content-length'] = options.contentLength;
  else headers['transfer-encoding'] = 'chunked';
  return new Promise((resolve) => {
    let bytesSent = 0;
    let done = false;
    let answered: { status: number; body: string; connection: string | undefined } | undefined;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      resolve({ status: answered?.status ?? 0, body: answered?.body ?? '', bytesSent, closedByServer, connection: answered?.connection });
    };
    let responding = false;
    const onResponse = (res: IncomingMessage) => {
      responding = true;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('close', () => {
        if (answered === undefined) {
          const conn = res.headers['connection'];
          answered = { status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8'), connection: Array.isArray(conn) ? conn[0] : conn };
        }
        finish(true);
      });
      res.on('end', () => {
        const conn = res.headers['connection'];
        answered = { status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8'), connection: Array.isArray(conn) ? conn[0] : conn };
        if (options.keepSending === true) return;
        req.destroy();
        finish(false);
      });
      res.on('error', () => finish(true));
    };
    const common = { method: options.method ?? 'POST', headers, agent: false as const };
    const req =
      url.protocol === 'https:'
        ? httpsRequest(url, { ...common, ...(options.ca === undefined ? {} : { ca: options.ca }), ...(options.cert === undefined ? {} : { cert: options.cert, key: options.key }) }, onResponse)
        : httpRequest(url, common, onResponse);
    req.on('error', () => finish(true));
    req.on('close', () => {
      // A response being read finishes through its own close.
      if (!responding) finish(true);
    });
    const pump = () => {
      while (!done && bytesSent < cap) {
        bytesSent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      // The cap reached: end the body and wait for the answer (a server that reads everything answers now).
      if (!done && bytesSent >= cap) {
        if (answered !== undefined) {
          req.destroy();
          finish(false);
        } else req.end();
      }
    };
    req.flushHeaders();
    pump();
  });
}

export interface HandshakeOutcome {
  ok: boolean;
  /** Negotiated protocol and cipher on success. */
  protocol?: string;
  cipher?: string;
  error?: string;
}

/** A TLS handshake offering only `ciphers` (OpenSSL names) between the given versions. */
export function tlsHandshake(port: number, options: { ca: string; ciphers?: string; minVersion?: SecureVersion; maxVersion?: SecureVersion; cert?: string; key?: string; servername?: string }): Promise<HandshakeOutcome> {
  return new Promise((resolve) => {
    const socket = connect(
      {
        host: '127.0.0.1',
        port,
        ca: options.ca,
        servername: options.servername ?? 'localhost',
        ...(options.ciphers === undefined ? {} : { ciphers: options.ciphers }),
        ...(options.minVersion === undefined ? {} : { minVersion: options.minVersion }),
        ...(options.maxVersion === undefined ? {} : { maxVersion: options.maxVersion }),
        ...(options.cert === undefined ? {} : { cert: options.cert, key: options.key }),
      },
      () => {
        const out = { ok: true, protocol: socket.getProtocol() ?? '', cipher: socket.getCipher().name };
        socket.end();
        resolve(out);
      },
    );
    socket.on('error', (err) => resolve({ ok: false, error: err.message }));
  });
}
