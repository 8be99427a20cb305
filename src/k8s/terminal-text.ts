/**
 * Text from the cluster or a scenario on its way to a terminal: control
 * characters are shown, never obeyed. A name is data, but a terminal reads an
 * escape sequence in it as a command (an OSC sequence in a subset name set the
 * window title; CSI sequences move the cursor, clear the screen, hide text).
 * kubectl escapes ESC and CR in its printers for the same reason; this
 * escapes every C0 control character, DEL and the C1 controls: tab, newline
 * and carriage return as `\t`, `\n`, `\r`, the other C0 ones and DEL as
 * `\xNN`, C1 as `\u00NN` — visible, and a row stays one line.
 *
 * Every table and report for humans runs its data through these before adding
 * its own colours: `escapeTerminal` per cell, `escapeTerminalDeep` on the
 * model it renders (status, the simulator's tables, the demo, plain tables).
 * Machine output (JSON, YAML) is not touched: its encoders escape on their own.
 * Pure.
 */

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex
const HAS_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const NAMED: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function visible(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with its control characters (C0, DEL, C1) written visibly. */
export function escapeTerminal(text: string): string {
  return HAS_CONTROL.test(text) ? text.replace(CONTROL, visible) : text;
}

/** A copy of `value` with every string in it (object keys too) passed through `escapeTerminal`. */
export function escapeTerminalDeep<T>(value: T): T {
  return deep(value) as T;
}

function deep(value: unknown): unknown {
  if (typeof value === 'string') return escapeTerminal(value);
  if (Array.isArray(value)) return value.map(deep);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[escapeTerminal(k)] = deep(v);
    return out;
  }
  return value;
}
