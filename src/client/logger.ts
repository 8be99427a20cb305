/**
 * The logging surface of the client machinery: pino's call shape
 * (`log.warn({ fields }, 'message')`), so the manager passes a pino child
 * logger straight in, while this layer does not depend on pino.
 * Default: `silentLogger`, nothing written.
 */

export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

const noop = (): void => {};

export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/** Adds fixed fields to every line (a child logger without depending on pino). */
export function withFields(log: Logger, fields: Record<string, unknown>): Logger {
  return {
    debug: (f, m) => log.debug({ ...fields, ...f }, m),
    info: (f, m) => log.info({ ...fields, ...f }, m),
    warn: (f, m) => log.warn({ ...fields, ...f }, m),
    error: (f, m) => log.error({ ...fields, ...f }, m),
  };
}

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
