/**
 * Profiles of the running manager, served on the secure metrics endpoint
 * (never without authentication: the endpoint's filter — metrics-auth.ts —
 * authorizes each path, so RBAC grants them with `nonResourceURLs:
 * ["/debug/pprof/*"]`). The paths are Go's `net/http/pprof` ones; the
 * formats are V8's, which Chrome DevTools (and VS Code) open:
 *
 * - `GET /debug/pprof/profile?seconds=N`: a CPU profile of the next N
 *   seconds (default 30, 1 to 300), taken with the inspector's Profiler
 *   (`node:inspector`), as a `.cpuprofile` (JSON: nodes, samples,
 *   timeDeltas, startTime, endTime). The wait is on the manager's clock. A
 *   caller that goes away ends the profile early, and nothing is sent.
 * - `GET /debug/pprof/heap`: a V8 heap snapshot (`v8.getHeapSnapshot`), as a
 *   `.heapsnapshot` (JSON), streamed as it is written. Taking it stops the
 *   process while the heap is walked (admissions wait meanwhile) and costs
 *   far more memory than the heap: measured, a 45 MB heap of about a million
 *   small objects took 5 s and raised the peak RSS by about 0.8 GB (some 18
 *   times the heap). So a snapshot is refused (503) when the container's
 *   memory limit (cgroup v2 `memory.max`, else v1 `memory.limit_in_bytes`)
 *   does not leave 20 times the heap in use above the process' RSS — the
 *   kernel would kill the manager midway; `?force=true` takes it anyway.
 *
 * One profile at a time, of either kind: a second request while one is
 * being taken is 409 Conflict. `close()` ends a CPU profile in progress
 * (the manager stops). Start at `Profiler.routes`.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import { pipeline } from 'node:stream/promises';
import { getHeapSnapshot, getHeapStatistics } from 'node:v8';
import type { Clock } from '../clock/clock.ts';
import { describeError } from '../client/errors.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { sendText, type RouteHandler } from './endpoints.ts';

export const PROFILE_PATH = '/debug/pprof/profile';
export const HEAP_PATH = '/debug/pprof/heap';
export const DEFAULT_PROFILE_SECONDS = 30;
export const MAX_PROFILE_SECONDS = 300;

/** `seconds` of a CPU profile request: the number, or what is wrong with it. */
export function profileSeconds(url: string): { ok: true; seconds: number } | { ok: false; error: string } {
  const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
  const text = query.get('seconds');
  if (text === null || text === '') return { ok: true, seconds: DEFAULT_PROFILE_SECONDS };
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= MAX_PROFILE_SECONDS)) return { ok: false, error: `seconds must be an integer from 1 to ${MAX_PROFILE_SECONDS}, got ${JSON.stringify(text)}` };
  return { ok: true, seconds: n };
}

/** What a heap snapshot is estimated to need, as a multiple of the heap in use (measured: about 18). */
export const HEAP_SNAPSHOT_MEMORY_FACTOR = 20;

/** Memory now: the container's limit (undefined: none), the process' RSS and the V8 heap in use, in bytes. */
export interface MemoryReading {
  limitBytes: number | undefined;
  rssBytes: number;
  heapBytes: number;
}

/** The container's memory limit from its cgroup (v2, then v1); undefined when unlimited or unknown. */
export async function containerMemoryLimit(files: readonly string[] = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']): Promise<number | undefined> {
  for (const file of files) {
    let text: string;
    try {
      text = (await readFile(file, 'utf8')).trim();
    } catch {
      continue;
    }
    const n = Number(text);
    // cgroup v2 says `max`; v1 says a number near 2^63 when there is no limit.
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  }
  return undefined;
}

async function readMemory(): Promise<MemoryReading> {
  return { limitBytes: await containerMemoryLimit(), rssBytes: process.memoryUsage.rss(), heapBytes: getHeapStatistics().used_heap_size };
}

/** Why a heap snapshot would not fit under the memory limit, or undefined when it would (or there is none). */
export function heapSnapshotRefusal(m: MemoryReading): string | undefined {
  if (m.limitBytes === undefined) return undefined;
  const need = m.heapBytes * HEAP_SNAPSHOT_MEMORY_FACTOR;
  if (m.rssBytes + need <= m.limitBytes) return undefined;
  const mib = (b: number) => Math.ceil(b / 2 ** 20);
  return (
    `a heap snapshot needs about ${mib(need)} MiB (${HEAP_SNAPSHOT_MEMORY_FACTOR} times the ${mib(m.heapBytes)} MiB of heap in use) on top of the ${mib(m.rssBytes)} MiB the process holds, ` +
    `more than the container's memory limit of ${mib(m.limitBytes)} MiB allows: the manager would be killed midway. Raise the limit, or add ?force=true to take it anyway`
  );
}

/** `20260101T000000Z`: a file-name-friendly UTC time. */
function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

export interface ProfilerOptions {
  clock: Clock;
  log?: Logger;
  /** For the download's file name (default `workloadspread-manager`). */
  name?: string;
  /** Memory now (default: the cgroup's limit, the process' RSS, V8's heap in use). */
  memory?: () => Promise<MemoryReading>;
}

export class Profiler {
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #name: string;
  readonly #memory: () => Promise<MemoryReading>;
  readonly #closed = new AbortController();
  /** The kind of profile being taken. */
  #busy: 'cpu' | 'heap' | undefined;

  constructor(options: ProfilerOptions) {
    this.#clock = options.clock;
    this.#log = options.log ?? silentLogger;
    this.#name = options.name ?? 'workloadspread-manager';
    this.#memory = options.memory ?? readMemory;
  }

  routes(): Record<string, RouteHandler> {
    return { [PROFILE_PATH]: (req, res) => this.#cpu(req, res), [HEAP_PATH]: (req, res) => this.#heap(req, res) };
  }

  /** Ends a CPU profile in progress (its caller gets nothing). */
  close(): void {
    this.#closed.abort(new Error('the manager is stopping'));
  }

  /** Refuses HEAD (a profile is work, not a resource) and a second profile at once. */
  #refused(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET') {
      res.setHeader('allow', 'GET');
      sendText(res, 405, `method ${req.method ?? ''} not allowed\n`);
      return true;
    }
    if (this.#busy !== undefined) {
      sendText(res, 409, `a ${this.#busy === 'cpu' ? 'CPU profile' : 'heap snapshot'} is being taken; one profile at a time\n`);
      return true;
    }
    return false;
  }

  async #cpu(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = profileSeconds(req.url ?? '');
    if (!parsed.ok) return sendText(res, 400, `${parsed.error}\n`);
    if (this.#refused(req, res)) return;
    this.#busy = 'cpu';
    // The caller going away, or the manager stopping, ends the wait.
    const gone = new AbortController();
    const onClose = () => gone.abort(new Error('the caller went away'));
    res.on('close', onClose);
    const signal = AbortSignal.any([gone.signal, this.#closed.signal]);
    const session = new Session();
    try {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      const started = this.#clock.now();
      this.#log.info({ seconds: parsed.seconds }, 'CPU profile started');
      let complete = true;
      try {
        await this.#clock.sleep(parsed.seconds * 1000, signal, { name: 'CPU profile' });
      } catch {
        complete = false;
      }
      const { profile } = await session.post('Profiler.stop');
      if (!complete) {
        this.#log.info({ reason: describeError(signal.reason) }, 'CPU profile abandoned');
        if (!res.headersSent && !res.destroyed) sendText(res, 503, `the profile was not completed: ${describeError(signal.reason)}\n`);
        return;
      }
      const body = JSON.stringify(profile);
      this.#log.info({ seconds: parsed.seconds, bytes: body.length }, 'CPU profile taken');
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'content-disposition': `attachment; filename="${this.#name}-${stamp(started)}.cpuprofile"`,
        'x-content-type-options': 'nosniff',
      });
      res.end(body);
    } finally {
      res.off('close', onClose);
      session.disconnect();
      this.#busy = undefined;
    }
  }

  async #heap(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.#refused(req, res)) return;
    this.#busy = 'heap';
    try {
      const url = req.url ?? '';
      const force = /^(true|1)$/i.test(new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '').get('force') ?? '');
      const refusal = force ? undefined : heapSnapshotRefusal(await this.#memory());
      if (refusal !== undefined) {
        this.#log.warn({ reason: refusal }, 'heap snapshot refused');
        return sendText(res, 503, `${refusal}\n`);
      }
      this.#log.info({}, 'heap snapshot started');
      const started = this.#clock.now();
      const snapshot = getHeapSnapshot();
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-disposition': `attachment; filename="${this.#name}-${stamp(started)}.heapsnapshot"`,
        'x-content-type-options': 'nosniff',
      });
      await pipeline(snapshot, res);
      this.#log.info({}, 'heap snapshot sent');
    } catch (err) {
      // The caller went away mid-stream: nothing to answer.
      this.#log.warn({ err: describeError(err) }, 'heap snapshot not sent');
      res.destroy();
    } finally {
      this.#busy = undefined;
    }
  }
}
