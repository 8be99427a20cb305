/**
 * Clients that misbehave on purpose, for the hardening tests (issue 14): an
 * endless chunked upload, a huge announced Content-Length, and a TLS
 * handshake offering only the suites or versions a test names. Each resolves
 * with what the server did, never hangs past its own cap. Not used by
 * production code.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect, connect as tlsConnect, type SecureVersion } from 'node:tls';

export interface UploadOutcome {
  /** HTTP status of the answer, 0 when none came. */
  status: number;
  body: string;
  /** Body bytes written before the server closed the connection (or the upload stopped). */
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

interface ParsedAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  complete: boolean;
}

/** The first HTTP response in `data`, as far as it arrived. */
function parseAnswer(data: Buffer): ParsedAnswer | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = data.subarray(end + 4);
  const length = headers['content-length'];
  if (length !== undefined) return { status: Number(statusLine.split(' ')[1]), headers, body: rest.subarray(0, Number(length)).toString('utf8'), complete: rest.length >= Number(length) };
  if (headers['transfer-encoding'] === 'chunked') {
    let body = '';
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at);
      if (lineEnd < 0) return { status: Number(statusLine.split(' ')[1]), headers, body, complete: false };
      const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) return { status: Number(statusLine.split(' ')[1]), headers, body, complete: true };
      if (rest.length < lineEnd + 2 + size) return { status: Number(statusLine.split(' ')[1]), headers, body, complete: false };
      body += rest.subarray(lineEnd + 2, lineEnd + 2 + size).toString('utf8');
      at = lineEnd + 2 + size + 2;
    }
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.toString('utf8'), complete: false };
}

/**
 * Sends a body (chunked unless `contentLength`) as fast as the socket takes it
 * on a raw connection, reading the answer as it comes, until the server
 * closes the connection, or — without `keepSending` — the answer is complete,
 * or the cap is reached. A raw socket, because an HTTP client closes its own
 * connection once the answer is in, which would pass for the server's doing.
 */
export function uploadUntilStopped(baseUrl: string, options: UploadOptions): Promise<UploadOutcome> {
  const url = new URL(options.path, baseUrl);
  const chunkSize = options.chunkBytes ?? 64 * 1024;
  const payload = Buffer.alloc(chunkSize, 0x20);
  const chunked = options.contentLength === undefined;
  const frame = chunked ? Buffer.concat([Buffer.from(`${chunkSize.toString(16)}\r\n`), payload, Buffer.from('\r\n')]) : payload;
  const cap = Math.min(options.capBytes ?? 256 * 1024 * 1024, options.contentLength ?? Infinity);
  const head = [
    `${options.method ?? 'POST'} ${url.pathname}${url.search} HTTP/1.1`,
    `host: ${url.host}`,
    `content-type: ${options.contentType ?? 'application/json'}`,
    chunked ? 'transfer-encoding: chunked' : `content-length: ${options.contentLength}`,
    ...(options.token === undefined ? [] : [`authorization: Bearer ${options.token}`]),
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve) => {
    let bytesSent = 0;
    let done = false;
    let received = Buffer.alloc(0);
    const answer = (): ParsedAnswer | undefined => parseAnswer(received);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const socket: Socket =
      url.protocol === 'https:'
        ? tlsConnect({ host: url.hostname, port, servername: 'localhost', ...(options.ca === undefined ? {} : { ca: options.ca }), ...(options.cert === undefined ? {} : { cert: options.cert, key: options.key }) })
        : netConnect({ host: url.hostname, port });
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      const a = answer();
      socket.destroy();
      resolve({ status: a?.status ?? 0, body: a?.body ?? '', bytesSent, closedByServer, connection: a?.headers['connection'] });
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (answer()?.complete === true && (options.keepSending !== true || bytesSent >= cap)) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    const pump = () => {
      while (!done && bytesSent < cap) {
        bytesSent += payload.length;
        if (!socket.write(frame)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (done || bytesSent < cap) return;
      // The cap reached: a server still reading has not closed; end the body and wait for its answer.
      if (answer()?.complete === true) finish(false);
      else if (chunked) socket.write('0\r\n\r\n');
    };
    socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      socket.write(head);
      pump();
    });
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
