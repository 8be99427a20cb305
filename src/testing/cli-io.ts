/** An in-memory CliIo for tests: captures output, serves files from a map (falling back to disk). */
import { readFileSync } from 'node:fs';
import type { CliIo } from '../cli/io.ts';

export interface CapturedIo extends CliIo {
  stdout: string;
  stderr: string;
  written: Map<string, string>;
}

export function captureIo(files: Record<string, string> = {}): CapturedIo {
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
    readFile: (path) => {
      const inline = files[path];
      if (inline !== undefined) return inline;
      return readFileSync(path, 'utf8');
    },
    writeFile: (path, content) => {
      io.written.set(path, content);
    },
    color: false,
    env: {},
  };
  return io;
}
