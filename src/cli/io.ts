/**
 * What a command needs from the outside world, passed in so commands can be
 * run in-process by tests: output streams, files, stdin, terminal capabilities.
 *
 * Every input a command reads goes through `readInput`, which is bounded
 * (`--max-input-size`, default 10 MiB): a regular file larger than the limit
 * is refused from its size alone, before a byte is read; stdin, pipes and
 * other streams are read in chunks and refused as soon as they pass it, so
 * memory stays bounded whatever the input is. `-` names stdin.
 */
import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { parseQuantityNanos } from '../k8s/quantity.ts';
import { DEFAULT_MAX_INPUT_SIZE } from './defaults.ts';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /**
   * Reads a file as UTF-8, failing with `InputTooLarge` once it holds more
   * than `maxBytes` (without reading what lies beyond, where it can).
   */
  readFile(path: string, maxBytes: number): string | Promise<string>;
  /** Reads stdin to its end as UTF-8, failing with `InputTooLarge` past `maxBytes`. */
  readStdin(maxBytes: number): Promise<string>;
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

/** An input over the size limit; `size` is its size when known up front (a regular file). */
export class InputTooLarge extends Error {
  constructor(readonly limit: number, readonly size?: number) {
    super(size === undefined ? `more than ${limit} bytes` : `${size} bytes, more than ${limit}`);
  }
}

const CHUNK = 64 * 1024;

/** Reads `path` in chunks, refusing a regular file over `maxBytes` by its size and a stream as soon as it passes it. */
export async function readFileBounded(path: string, maxBytes: number): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    if (info.isFile() && info.size > maxBytes) throw new InputTooLarge(maxBytes, info.size);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.allocUnsafe(CHUNK);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw new InputTooLarge(maxBytes);
      chunks.push(buffer.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Reads a stream to its end, refusing it (and no longer reading) once it passes `maxBytes`. */
export function readStreamBounded(stream: NodeJS.ReadableStream & { destroy?: () => void }, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
    };
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      total += buffer.length;
      if (total > maxBytes) {
        cleanup();
        stream.pause();
        reject(new InputTooLarge(maxBytes));
        return;
      }
      chunks.push(buffer);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, total).toString('utf8'));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}

/** A reader that went away (`… | head`) ends the command quietly, as kubectl does, instead of an EPIPE stack trace. */
function quietOnClosedStdout(): void {
  if (process.stdout.listenerCount('error') > 0) return;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

export function processIo(): CliIo {
  quietOnClosedStdout();
  const env = process.env;
  const color = env.FORCE_COLOR !== undefined ? env.FORCE_COLOR !== '0' : process.stdout.isTTY === true && env.NO_COLOR === undefined;
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    readFile: (path, maxBytes) => readFileBounded(path, maxBytes),
    readStdin: (maxBytes) => readStreamBounded(process.stdin, maxBytes),
    writeFile: (path, content) => writeFileSync(path, content),
    color,
    env,
  };
}

/** The stdin marker of `-f -` (and of simulate's FILE). */
export const STDIN = '-';

/** How an input is named in messages. */
export function inputName(path: string): string {
  return path === STDIN ? '<stdin>' : path;
}

function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** `--max-input-size`: bytes, or a quantity (`10Mi`, `500k`, `1G`); at least 1 byte. */
export function parseMaxInputSize(text: string | undefined): number {
  const value = text ?? DEFAULT_MAX_INPUT_SIZE;
  const nanos = /^\s*$/.test(value) ? undefined : parseQuantityNanos(value.trim());
  if (nanos === undefined || nanos < 1_000_000_000n || nanos % 1_000_000_000n !== 0n) {
    throw new UsageError(`--max-input-size must be a whole number of bytes or a quantity such as 10Mi or 500k, got ${JSON.stringify(value)}`);
  }
  const bytes = nanos / 1_000_000_000n;
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) throw new UsageError(`--max-input-size ${JSON.stringify(value)} is too large`);
  return Number(bytes);
}

/**
 * Reads an input for a command (`-` for stdin), bounded by `maxBytes`,
 * turning I/O errors and oversized inputs into one-line usage errors (exit 2).
 */
export async function readInput(io: CliIo, path: string, maxBytes: number): Promise<string> {
  try {
    return await (path === STDIN ? io.readStdin(maxBytes) : io.readFile(path, maxBytes));
  } catch (err) {
    if (err instanceof InputTooLarge) {
      const size = err.size === undefined ? `more than ${sizeText(err.limit)}` : `${sizeText(err.size)}`;
      throw new CommandError(`${inputName(path)} is too large (${size}; the limit is ${sizeText(err.limit)}): refused before parsing; raise the limit with --max-input-size if this input is meant`, 2);
    }
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new CommandError(`cannot read ${inputName(path)}: ${reason}`, 2);
  }
}
