/**
 * An in-memory CliIo for tests: captures output, serves files from a map
 * (falling back to disk, bounded as the real one is) and stdin from a string.
 */
import { InputTooLarge, readFileBounded, type CliIo } from '../cli/io.ts';

export interface CapturedIo extends CliIo {
  stdout: string;
  stderr: string;
  written: Map<string, string>;
}

export function captureIo(files: Record<string, string> = {}, stdin?: string): CapturedIo {
  const io: CapturedIo = {
    stdout: '',
    stderr: '',
    written: new Map(),
    out: (t) => {
      io.stdout += t;
    },
    err: (t) => {
      io.stderr += t;
    },
    readFile: (path, maxBytes) => {
      const inline = files[path];
      if (inline === undefined) return readFileBounded(path, maxBytes);
      const size = Buffer.byteLength(inline, 'utf8');
      if (size > maxBytes) throw new InputTooLarge(maxBytes, size);
      return inline;
    },
    readStdin: async (maxBytes) => {
      if (stdin === undefined) throw new Error('no stdin in this test');
      if (Buffer.byteLength(stdin, 'utf8') > maxBytes) throw new InputTooLarge(maxBytes);
      return stdin;
    },
    writeFile: (path, content) => {
      io.written.set(path, content);
    },
    color: false,
    env: {},
  };
  return io;
}
