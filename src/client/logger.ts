/**
 * The logging surface of the client machinery: pino's call shape
 * (`log.warn({ fields }, 'message')`), so the manager passes a pino logger
 * straight in, while this layer does not depend on pino.
 * Default: `silentLogger`, nothing written.
 *
 * The keys of a line, chosen once for every component and following
 * controller-runtime's conventions (docs/operations.md "Logs"); each appears
 * at most once in a line (`withFields` merges, it never repeats a key):
 * - `logger`: the part of the manager that wrote it (`manager`, `webhook`,
 *   `controller`, `caches`, `leader-election`, `certificates`, `events`);
 * - `controller`, `controllerGroup`, `controllerKind`: on a controller's
 *   lines (`workloadspread` / `apps.kruise.io` / `WorkloadSpread`, and
 *   `domaindisruptionbudget` / `policy.workloadspread.io` / `DomainDisruptionBudget`);
 * - `namespace`, `name`: the object the line is about — the object being
 *   reconciled, the object of an admission review, the Lease;
 * - `reconcileID`: one reconcile (a UUID), on every line it writes;
 * - `webhook` (the path) and `requestID` (the review's uid) on admission lines;
 * - other objects by their name in the same namespace: `pod`,
 *   `workloadspread`, `budget`, `subset`; `kind` for a resource kind;
 * - `err`: what failed, as text.
 */

export type LogLevelName = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  /** Whether lines of this level are written at all (pino's method); absent: assume they are. */
  isLevelEnabled?(level: LogLevelName): boolean;
}

const noop = (): void => {};

/**
 * Adds fixed fields to every line (a child logger without depending on pino);
 * the line's own fields win. A level the underlying logger does not write
 * costs no merge: debug lines are on hot paths (every admission).
 */
export function withFields(log: Logger, fields: Record<string, unknown>): Logger {
  if (log === silentLogger) return silentLogger;
  const enabled = (level: LogLevelName): boolean => log.isLevelEnabled?.(level) ?? true;
  return {
    debug: (f, m) => {
      if (enabled('debug')) log.debug({ ...fields, ...f }, m);
    },
    info: (f, m) => {
      if (enabled('info')) log.info({ ...fields, ...f }, m);
    },
    warn: (f, m) => log.warn({ ...fields, ...f }, m),
    error: (f, m) => log.error({ ...fields, ...f }, m),
    isLevelEnabled: enabled,
  };
}

/** `namespace` and `name` of an object under admission — `generateName` instead while it has no name yet (as controller-runtime logs it). */
export function podLogFields(namespace: string, metadata: { name?: string; generateName?: string } | undefined): { namespace: string; name?: string; generateName?: string } {
  const name = metadata?.name ?? '';
  return name !== '' ? { namespace, name } : { namespace, generateName: metadata?.generateName ?? '' };
}

/** The `namespace`/`name` pair of an object's key (`namespace/name`, or a bare name for a cluster-scoped object). */
export function objectFields(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop, isLevelEnabled: () => false };

/** A logger that keeps every line, for tests that assert what was logged. */
export interface MemoryLogger extends Logger {
  readonly lines: { level: 'debug' | 'info' | 'warn' | 'error'; message: string; fields: Record<string, unknown> }[];
}

export function memoryLogger(): MemoryLogger {
  const lines: MemoryLogger['lines'] = [];
  const at =
    (level: MemoryLogger['lines'][number]['level']) =>
    (fields: Record<string, unknown>, message: string): void => {
      lines.push({ level, message, fields });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
