/**
 * Terminal styling for human output (`demo`, `status`): a few ANSI SGR
 * colours behind one switch, so every caller colours the same way and a
 * non-colour run prints exactly the same characters minus the escapes.
 *
 * Whether to colour is decided once per run by `wantsColor`: the `--no-color`
 * flag, else `CliIo.color` (FORCE_COLOR, NO_COLOR, whether stdout is a TTY;
 * see io.ts). Machine output (JSON) is never styled.
 */

export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) => (text === '' ? '' : `\u001b[${open}m${text}\u001b[${close}m`);
const plain = (text: string) => text;

export function createStyle(enabled: boolean): Style {
  if (!enabled) {
    return { enabled, bold: plain, dim: plain, red: plain, green: plain, yellow: plain, blue: plain, cyan: plain, magenta: plain };
  }
  return {
    enabled,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    cyan: sgr(36, 39),
    magenta: sgr(35, 39),
  };
}

/** The colour decision: `--no-color` wins, else the environment's answer (`CliIo.color`: FORCE_COLOR, NO_COLOR, a TTY). */
export function wantsColor(flag: boolean | undefined, ioColor: boolean): boolean {
  return flag !== false && ioColor;
}

// CSI sequences (colours, cursor moves, erase) as this module and `clearScreen` write them.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Printable width of a string with escapes removed (every other code point counts as one column). */
export function visibleWidth(text: string): number {
  return [...stripAnsi(text)].length;
}

/** `padEnd` by visible width. */
export function padVisible(text: string, width: number): string {
  const pad = width - visibleWidth(text);
  return pad > 0 ? text + ' '.repeat(pad) : text;
}

/** Moves the cursor home and clears the screen (only ever written to a TTY). */
export const CLEAR_SCREEN = '\u001b[H\u001b[2J';

/**
 * Aligns cells by visible width, two spaces apart; the last column is not
 * padded. Cells may carry this module's colours, so data must already be
 * escaped (k8s/terminal-text.ts) before it is coloured and handed here.
 */
export function alignColumns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleWidth(cell))));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : padVisible(cell, widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}
