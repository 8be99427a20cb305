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
 *    it; a body that ends sooner leaves the connection reusable). Node would
 *    otherwise read and discard the rest of the body to reuse the connection,
 *    which for an endless chunked upload never ends (issue 14 found 8.8 GB
 *    read in 15 s). It takes the body over when the answer is
 *    ended ('prefinish'), before Node's own end-of-response handling: that
 *    one "dumps" an unread body — drops its bytes without emitting them — so
 *    a listener added later never sees a byte and the connection was read
 *    until its timeout (tens of GB per connection).
 * A route that will not use the body says so with `ignoreBody` before it
 * answers: the answer then carries `Connection: close` (rule 3 still closes
 * the connection). `lastOnConnection` does the same for an answer sent before
 * the body was read (413). Start at `guardRequestBody`, which a server calls
 * first for every request.
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

/** Whether the request says a body follows: a Content-Length above 0, or a Transfer-Encoding (chunked). */
export function announcesBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? 0);
  return !(length === 0);
}

/** Closes the connection once the answer has been handed to the socket (at once when it already was). */
function closeAfterAnswer(res: ServerResponse, close: () => void): void {
  if (res.writableFinished) close();
  else res.once('finish', close);
}

/** After the response is sent, closes the connection if the request body was not read to its end (rule 3). */
export function closeUnreadBodies(req: IncomingMessage, res: ServerResponse): void {
  if (!announcesBody(req)) return;
  // 'prefinish' (the answer is ended), not 'finish' (it is flushed): by 'finish' Node has dumped the unread body.
  res.once('prefinish', () => {
    if (req.complete) return;
    const socket = req.socket;
    let discarded = 0;
    req.removeAllListeners('data');
    req.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded <= LINGER_BYTES) return;
      // Enough lingering: stop reading, and reset once the answer is out.
      req.pause();
      req.removeAllListeners('data');
      closeAfterAnswer(res, () => socket.destroy());
    });
    // A body that ends within the allowance leaves the connection as Node leaves it: reusable (the client was
    // not told otherwise, and may be sending its next request on it already); a route that wants it closed
    // says so in its answer (`ignoreBody`, `lastOnConnection`).
    req.resume();
  });
}

/** Marks the response as the last one on its connection (for answers sent before the body was read). */
export function lastOnConnection(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
}

/**
 * For a route that answers without reading the request's body: when one was
 * announced, the answer is the last on its connection (`Connection: close`),
 * and `closeUnreadBodies` closes the connection once it is out. A request
 * without a body keeps its connection.
 */
export function ignoreBody(req: IncomingMessage, res: ServerResponse): void {
  if (announcesBody(req)) lastOnConnection(res);
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
