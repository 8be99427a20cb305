/**
 * Durations in scenario files and the manager's flags, written the way Go's
 * `time.ParseDuration` and kubectl flags write them: a sequence of decimal numbers, each with a
 * unit — `500ms`, `2s`, `5m`, `1h30m`, `1.5h`. No sign, no bare numbers (is
 * `30` seconds or minutes?), units `ms`, `s`, `m`, `h` (`d` is not Go's and
 * would surprise someone reading a scenario next to a manifest).
 *
 * `formatDuration` prints milliseconds back in the same notation, shortest
 * form first (`90000` → `1m30s`). Pure.
 */

export type DurationResult = { ok: true; ms: number } | { ok: false; error: string };

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Parses `2s`, `5m`, `1h30m`, `250ms`, `1.5h` into whole milliseconds (rounded). */
export function parseDuration(value: unknown): DurationResult {
  if (typeof value !== 'string') {
    const hint = typeof value === 'number' ? ` (write ${value}s or ${value}m)` : '';
    return { ok: false, error: `must be a duration like 30s, 5m or 1h30m${hint}` };
  }
  const text = value.trim();
  if (text === '') return { ok: false, error: 'must be a duration like 30s, 5m or 1h30m, not empty' };
  if (text === '0') return { ok: true, ms: 0 };
  const part = /(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const m = part.exec(text);
    if (m === null) return { ok: false, error: `must be a duration like 30s, 5m or 1h30m, not ${JSON.stringify(value)}` };
    total += Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? 0);
    at = part.lastIndex;
  }
  if (!Number.isFinite(total) || total > Number.MAX_SAFE_INTEGER) return { ok: false, error: `${JSON.stringify(value)} is too long` };
  return { ok: true, ms: Math.round(total) };
}

/** Milliseconds as `1h30m`, `2s`, `250ms`, `1m0.5s`; `0s` for zero. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return '0s';
  let rest = Math.round(ms);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  let out = '';
  if (h > 0) out += `${h}h`;
  if (m > 0) out += `${m}m`;
  if (rest > 0) out += h === 0 && m === 0 && rest < 1000 ? `${rest}ms` : `${rest / 1000}s`;
  return out;
}
