/**
 * Bounded request bodies for every HTTP server of the project (the webhook
 * server, the manager's metrics and health endpoints, the embedded API
 * server), however the body arrives: with a Content-Length, chunked, or
 * trickling in.
 *
 * Three rules, applied together:
 * 1. `declaredTooLarge`: a Content-Length above the limit is refused before a
 *    byte of the body is read;
 * 2. `readBodyWithin`: reading stops as soon as the running total passes the
 *    limit (a chunked body has no length to check up front) — nothing beyond
 *    the limit is kept or waited for;
 * 3. `closeUnreadBodies`: once a response is sent, a connection whose request
 *    body was not read to its end is closed after at most 4 MiB more have been
 *    read and discarded (a lingering close: a client that is still sending
 *    gets the time to read the answer before the reset, which would discard
 *    it). Node would otherwise read and discard the rest of the body to reuse
 *    the connection, which for an endless chunked upload never ends (issue 14
 *    found 8.8 GB read in 15 s).
 * `refuseTooLarge` answers 413 with `Connection: close`. Start at
 * `guardRequestBody`, which a server calls first for every request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type BodyResult = { ok: true; body: Buffer } | { ok: false; tooLarge: true } | { ok: false; tooLarge: false; error: string };

/** Whether the request announces (Content-Length) a body larger than `limit` bytes. */
export function declaredTooLarge(req: IncomingMessage, limit: number): boolean {
  const header = req.headers['content-length'];
  if (header === undefined) return false;
  const length = Number(header);
  return Number.isFinite(length) && length > limit;
}

/** Reads the body, giving up (and pausing the stream) as soon as it exceeds `limit` bytes. */
export function readBodyWithin(req: IncomingMessage, limit: number): Promise<BodyResult> {
  if (declaredTooLarge(req, limit)) return Promise.resolve({ ok: false, tooLarge: true });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyResult) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        req.pause();
        settle({ ok: false, tooLarge: true });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => settle({ ok: true, body: Buffer.concat(chunks) });
    const onError = (err: Error) => settle({ ok: false, tooLarge: false, error: `error reading the request body: ${err.message}` });
    const onClose = () => settle(req.complete ? { ok: true, body: Buffer.concat(chunks) } : { ok: false, tooLarge: false, error: 'the client closed the connection before the request body was complete' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** How much of an unread body is still read (and discarded) after the answer, before the connection is closed. */
export const LINGER_BYTES = 4 * 1024 * 1024;

/** After the response is sent, closes the connection if the request body was not read to its end (rule 3). */
export function closeUnreadBodies(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    if (req.complete) return;
    const socket = req.socket;
    let discarded = 0;
    req.removeAllListeners('data');
    req.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > LINGER_BYTES) socket.destroy();
    });
    // A body that does end within the allowance leaves a connection Node would reuse: close it anyway.
    req.once('end', () => socket.destroySoon());
    req.resume();
  });
}

/** Marks the response as the last one on its connection (for answers sent before the body was read). */
export function lastOnConnection(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
}

/**
 * Installs rule 3 for this request and applies rule 1: true when the request
 * was already answered with `refuse` (a declared body above `limit`).
 */
export function guardRequestBody(req: IncomingMessage, res: ServerResponse, limit: number, refuse: () => void): boolean {
  closeUnreadBodies(req, res);
  if (!declaredTooLarge(req, limit)) return false;
  lastOnConnection(res);
  refuse();
  return true;
}
