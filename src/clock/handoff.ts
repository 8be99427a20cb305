/**
 * The handoff mark of an HTTP exchange between a client and an in-process
 * server on the same virtual clock (clock.ts REQUEST_ACTIVITY_HEADER).
 *
 * Bytes on a loopback socket reach the other end after some turns of the
 * event loop, and after some real time when the kernel defers the delivery
 * (a loaded machine). Neither side is busy meanwhile, so without the mark a
 * virtual clock can see an idle instant in the middle of an exchange and jump
 * to its next timer: to the caller's timeout, for instance, while the request
 * is still on its way. The mark counts as one unsent event of a stream named
 * after the exchange: from before the client sends until the server runs its
 * own tracked activity for the request, and again from the server's answer
 * head until the client has it.
 *
 * Only clients and servers on the same clock take part: the header carries
 * the clock's id, a server on another clock ignores it, and on the real clock
 * (no id) no mark is made.
 *
 * Bytes still on their way after `HANDOFF_LOST_MS` of real time are taken as
 * lost in a network that hangs (a test's stalled connection): the mark goes,
 * so the caller's timeout can fall due as it would on a real network. A
 * loopback delivery takes microseconds, and milliseconds on a loaded machine.
 * Only the two legs on the wire are timed, each from its send to its arrival;
 * the server's work in between is its own tracked activity, however long.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { REQUEST_ACTIVITY_HEADER, type Activity, type Clock } from './clock.ts';

/** Exchange ids; unique per process, which is all a clock needs. */
let exchangeSeq = 0;

/** Real milliseconds after which an exchange's bytes count as lost (see above). */
export const HANDOFF_LOST_MS = 1_000;

/** The client's side of one exchange. */
export interface ClientHandoff {
  /** The header to send with the request (none on the real clock). */
  readonly headers: Record<string, string>;
  /** The answer's head arrived, or the exchange failed: the mark goes (idempotent). */
  close(): void;
}

const NO_HANDOFF: ClientHandoff = { headers: {}, close: () => {} };

/** The leg of each exchange now on the wire (both ends are in this process), and when it counts as lost. */
const onTheWire = new Map<string, ReturnType<typeof setTimeout>>();

/** A leg of `stream` leaves: marked in flight until it arrives, or until it counts as lost. */
function depart(activity: Activity, stream: string): void {
  activity.sent(stream);
  // Real time on purpose: it bounds how long virtual time may stand still for bytes that never arrive.
  const lost = setTimeout(() => {
    onTheWire.delete(stream);
    activity.closeStream(stream);
  }, HANDOFF_LOST_MS);
  lost.unref();
  onTheWire.set(stream, lost);
}

/** The leg on the wire arrived (or the exchange ended): it is no longer timed. */
function arrive(stream: string): void {
  clearTimeout(onTheWire.get(stream));
  onTheWire.delete(stream);
}

/** Opens the mark of a request about to be sent (`prefix` names it in the clock's diagnostics). */
export function openHandoff(activity: Activity, prefix: string): ClientHandoff {
  if (activity.id === '') return NO_HANDOFF;
  const stream = `${prefix}-${++exchangeSeq}`;
  depart(activity, stream);
  return {
    headers: { [REQUEST_ACTIVITY_HEADER]: `${activity.id}:${stream}` },
    close: () => {
      arrive(stream);
      activity.closeStream(stream);
    },
  };
}

/**
 * The server's side: when the request carries a mark of this server's clock,
 * the answer's head is marked in flight when it is written, and the returned
 * function ends the request's own mark. Call it once the request's tracked
 * activity is running.
 */
export function acceptHandoff(headers: IncomingHttpHeaders, res: ServerResponse, clock: Clock): () => void {
  const stream = handoffStream(headers, clock);
  if (stream === undefined) return () => {};
  onFirstWriteHead(res, () => depart(clock.activity, stream));
  return () => {
    arrive(stream);
    clock.activity.received(stream);
  };
}

function handoffStream(headers: IncomingHttpHeaders, clock: Clock): string | undefined {
  const mark = headers[REQUEST_ACTIVITY_HEADER];
  const value = Array.isArray(mark) ? mark[0] : mark;
  const colon = value?.lastIndexOf(':') ?? -1;
  if (value === undefined || colon <= 0 || value.slice(0, colon) !== clock.activity.id) return undefined;
  return value.slice(colon + 1);
}

/** Runs `fn` once, when the response head is about to be written (explicitly or by the first write). */
function onFirstWriteHead(res: ServerResponse, fn: () => void): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  let done = false;
  // Patched on this response object only; Node calls writeHead for implicit heads too.
  (res as { writeHead: (...args: unknown[]) => ServerResponse }).writeHead = (...args: unknown[]) => {
    if (!done) {
      done = true;
      fn();
    }
    return writeHead(...args);
  };
}
