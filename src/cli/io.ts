/**
 * What a command needs from the outside world, passed in so commands can be
 * run in-process by tests: output streams, files, terminal capabilities.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  readFile(path: string): string;
  writeFile(path: string, content: string): void;
  /** Colour output (a TTY without NO_COLOR, or FORCE_COLOR). */
  color: boolean;
  env: Record<string, string | undefined>;
}

/** A usage error: bad flags or arguments. Exit code 2, one line, no stack trace. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** A failure the user can act on (unreadable file, invalid manifest). One line, no stack trace. */
export class CommandError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

export function processIo(): CliIo {
  const env = process.env;
  const color = env.FORCE_COLOR !== undefined ? env.FORCE_COLOR !== '0' : process.stdout.isTTY === true && env.NO_COLOR === undefined;
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    readFile: (path) => readFileSync(path, 'utf8'),
    writeFile: (path, content) => writeFileSync(path, content),
    color,
    env,
  };
}

/** Reads a file for a command, turning I/O errors into a one-line message. */
export function readInput(io: CliIo, path: string): string {
  try {
    return io.readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new CommandError(`cannot read ${path}: ${reason}`, 2);
  }
}
