/**
 * Framing of a watch response: newline-delimited JSON, one
 * `{"type": ..., "object": {...}}` per line (k8s.io/apimachinery's
 * watch/json framing). Network chunks split lines anywhere, even inside a
 * multi-byte UTF-8 character, so bytes are buffered and only complete lines
 * are decoded (a newline byte never occurs inside a UTF-8 sequence).
 *
 * A line that is not JSON, or not an event of a known type with an object,
 * is reported as `MALFORMED` with the raw text: the caller decides; nothing is
 * silently dropped (client-node 1.4 swallows such lines). Blank lines are
 * ignored (they carry no event).
 */
import type { KubeObject } from '../k8s/types.ts';
import type { Status } from './errors.ts';

/** The types of the events that carry an object. */
import type { ObjectWatchEventType as WatchEventType } from '../k8s/wire.ts';
export type { WatchEventType };

export type WatchStreamEvent =
  | { type: WatchEventType; object: KubeObject }
  | { type: 'ERROR'; object: Status }
  | { type: 'MALFORMED'; line: string; error: string };

const TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/** Decodes one line of a watch stream. */
export function decodeWatchLine(line: string): WatchStreamEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    return { type: 'MALFORMED', line, error: `not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { type: 'MALFORMED', line, error: 'not a JSON object' };
  const { type, object } = parsed as { type?: unknown; object?: unknown };
  if (typeof type !== 'string' || !TYPES.has(type)) return { type: 'MALFORMED', line, error: `unknown event type ${JSON.stringify(type)}` };
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return { type: 'MALFORMED', line, error: 'the event has no object' };
  if (type === 'ERROR') return { type: 'ERROR', object: object as Status };
  return { type: type as WatchEventType, object: object as KubeObject };
}

/** Splits a byte stream into complete lines. */
export class LineSplitter {
  #pending: Buffer[] = [];

  /** Feeds a chunk; returns the lines it completed (without the newline, `\r` trimmed). */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      const bytes = this.#pending.length === 0 ? piece : Buffer.concat([...this.#pending, piece]);
      this.#pending = [];
      lines.push(trimCr(bytes.toString('utf8')));
      start = nl + 1;
    }
    if (start < chunk.length) this.#pending.push(chunk.subarray(start));
    return lines;
  }

  /** At end of stream: the unterminated rest, if any. */
  end(): string | undefined {
    if (this.#pending.length === 0) return undefined;
    const rest = trimCr(Buffer.concat(this.#pending).toString('utf8'));
    this.#pending = [];
    return rest;
  }
}

function trimCr(s: string): string {
  return s.endsWith('\r') ? s.slice(0, -1) : s;
}
