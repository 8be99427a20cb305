/**
 * CPU-time profiles of the published-build manager with Linux `perf`, for the
 * scale benchmarks (`profile=perf`). V8's own profiler samples wall-clock
 * time: on a machine whose cores the cluster and the manager share, a
 * function the kernel preempted is charged the time it waited (a wall-clock
 * profile of a 3,000-pod scale-out put five times more JSON parsing in (3)
 * than in (4) for the same reviews; perf showed the same CPU in both). perf samples only
 * while a thread runs, every thread of the process, V8's compiler and
 * garbage-collector threads included.
 *
 * How: the manager runs with `--perf-prof --interpreted-frames-native-stack`
 * (V8 writes a jitdump of every function it compiles, `jit-<pid>.dump` in its
 * working directory, so interpreted and optimized JavaScript frames get their
 * names), `perf record -g -k mono -p <pid>` covers one phase, `perf inject
 * --jit` resolves the JavaScript frames, and `perf script` is summarized here:
 * CPU by thread (main / V8's helpers), by kind of work, and the main thread's
 * heaviest JavaScript functions with what they call included.
 *
 * Needs `perf` on PATH and a kernel that lets this user record another
 * process (`perf_event_paranoid` ≤ 2 for one's own processes); `available()`
 * says why not otherwise, and the benchmark then runs without profiles.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';

/** The manager's Node.js flags for a profile perf can name. */
export const PERF_NODE_ARGS: readonly string[] = ['--perf-prof', '--interpreted-frames-native-stack'];

/** Undefined when perf can record here, else why it cannot. */
export function perfUnavailable(): string | undefined {
  const probe = spawnSync('perf', ['record', '-q', '-o', '/dev/null', '--', 'true'], { encoding: 'utf8' });
  if (probe.error !== undefined) return `perf is not on PATH (${probe.error.message})`;
  if (probe.status !== 0) return `perf cannot record here: ${(probe.stderr || '').trim().split('\n')[0] ?? ''}`;
  return undefined;
}

/** A recording of process `pid` into `file`; `stop` ends it and resolves once the file is complete. */
export interface PerfRecording {
  readonly pid: number;
  readonly file: string;
  stop(): Promise<void>;
}

/** Starts recording `pid` (all its threads, call graphs, the clock V8's jitdump uses) into `file`. */
export function recordProcess(pid: number, file: string): PerfRecording {
  const child: ChildProcess = spawn('perf', ['record', '-q', '-g', '-k', 'mono', '-F', '997', '-p', String(pid), '-o', file], { stdio: 'ignore' });
  const exited = once(child, 'exit');
  return {
    pid,
    file,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}

/** What kind of work a leaf frame is. */
type Kind =
  | 'JavaScript (optimized and interpreted code, V8 builtins)'
  | 'V8 runtime (property lookups and transitions, object creation, inline-cache misses)'
  | 'TurboFan compiling'
  | 'garbage collection'
  | 'JSON parse / stringify'
  | 'kernel (syscalls, scheduling)'
  | 'Node.js, OpenSSL, libc';

function kindOf(symbol: string, kernel: boolean): Kind {
  if (kernel) return 'kernel (syscalls, scheduling)';
  if (symbol.includes('compiler::') || symbol.includes('Pipeline') || symbol.includes('Turboshaft')) return 'TurboFan compiling';
  if (/Scaveng|Mark(ing|Compact)|Sweep|Evacuat|RememberedSet|Worklist|SlotSet|MemoryChunk|Heap::/.test(symbol)) return 'garbage collection';
  if (/Json(Parser|Stringif)|StringTable|InternalizeString/.test(symbol)) return 'JSON parse / stringify';
  if (symbol.startsWith('JS:') || symbol.startsWith('Builtin') || symbol.startsWith('Eval:')) return 'JavaScript (optimized and interpreted code, V8 builtins)';
  if (symbol.startsWith('v8::') || symbol.includes(' v8::')) return 'V8 runtime (property lookups and transitions, object creation, inline-cache misses)';
  return 'Node.js, OpenSSL, libc';
}

/**
 * A JavaScript frame's function: `JS:*name file:///…/dist/x/y.js:12:3` →
 * `name x/y.js:12` (interpreted `~`, baseline `^` and optimized `*` code
 * alike); `own` when it is the project's (dist/), not Node.js's or a package's.
 */
function jsFunction(symbol: string): { fn: string; own: boolean } | undefined {
  const m = /^JS:[*~^+]?(\S*) (\S+?):(\d+):\d+$/.exec(symbol);
  if (m === null) return undefined;
  const [, name, url = '', line] = m;
  const own = /^file:\/\/.*\/dist\//.test(url);
  const where = url.replace(/^file:\/\/.*?\/dist\//, '').replace(/^.*\/node_modules\//, '');
  return { fn: `${name === '' ? '(anonymous)' : name} ${where}:${line}`, own };
}

export interface PerfSummary {
  /** CPU sampled in all threads, ms. */
  totalMs: number;
  /** CPU of the main thread, ms. */
  mainMs: number;
  byKind: [Kind, number][];
  /** The main thread's functions of the project by inclusive CPU (ms), heaviest first. */
  mainInclusive: [string, number][];
}

/** Resolves the JavaScript frames of a finished recording (perf inject --jit) and summarizes it (the process's main thread has its pid as thread id). */
export function summarize({ file, pid }: PerfRecording): PerfSummary {
  const injected = `${file}.jit`;
  const inject = spawnSync('perf', ['inject', '--jit', '-i', file, '-o', injected], { encoding: 'utf8' });
  if (inject.status !== 0) throw new Error(`perf inject failed: ${inject.stderr}`);
  const script = spawnSync('perf', ['script', '-i', injected, '-F', 'tid,period,ip,sym'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr}`);
  const samples: { tid: number; period: number; frames: string[] }[] = [];
  for (const block of script.stdout.split('\n\n')) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    const head = /^\s*(\d+)\s+(\d+)/.exec(lines[0] ?? '');
    if (head === null) continue;
    // A frame line is "<hex ip> <symbol>"; the kernel's addresses start with ffff.
    const frames = lines.slice(1).map((l) => l.trim().replace(/^[0-9a-f]+ /, (ip) => (ip.startsWith('ffff') ? '[k] ' : '')).replace(/\+0x[0-9a-f]+$/, ''));
    samples.push({ tid: Number(head[1]), period: Number(head[2]), frames });
  }
  const byKind = new Map<Kind, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  let mainTotal = 0;
  for (const s of samples) {
    total += s.period;
    const leaf = s.frames[0] ?? '';
    const kind = kindOf(leaf.replace(/^\[k\] /, ''), leaf.startsWith('[k] '));
    byKind.set(kind, (byKind.get(kind) ?? 0) + s.period);
    if (s.tid !== pid) continue;
    mainTotal += s.period;
    const seen = new Set<string>();
    for (const frame of s.frames) {
      const js = jsFunction(frame);
      if (js === undefined || !js.own || seen.has(js.fn)) continue;
      seen.add(js.fn);
      inclusive.set(js.fn, (inclusive.get(js.fn) ?? 0) + s.period);
    }
  }
  const ms = (ns: number) => ns / 1e6;
  return {
    totalMs: ms(total),
    mainMs: ms(mainTotal),
    byKind: [...byKind].map(([k, v]): [Kind, number] => [k, ms(v)]).sort((a, b) => b[1] - a[1]),
    mainInclusive: [...inclusive].map(([k, v]): [string, number] => [k, ms(v)]).sort((a, b) => b[1] - a[1]),
  };
}

/** Prints a summary: CPU by thread and kind, and the project's heaviest functions on the main thread. */
export function printSummary(label: string, summary: PerfSummary, pods: number, top = 30): void {
  const perPod = (v: number) => (v / pods).toFixed(3);
  console.log(`\n  perf CPU profile ${label}: ${summary.totalMs.toFixed(0)} ms of CPU sampled (${perPod(summary.totalMs)} ms per pod), main thread ${summary.mainMs.toFixed(0)} ms, other threads (V8's compiler and GC helpers, libuv's pool) ${(summary.totalMs - summary.mainMs).toFixed(0)} ms`);
  for (const [kind, v] of summary.byKind) console.log(`    ${v.toFixed(0).padStart(7)} ms ${((100 * v) / summary.totalMs).toFixed(1).padStart(5)} %  ${kind}`);
  console.log("  the main thread's own functions (src/, as compiled to dist/) by CPU, what they call included:");
  for (const [fn, v] of summary.mainInclusive.slice(0, top)) {
    console.log(`    ${v.toFixed(0).padStart(7)} ms ${((100 * v) / summary.mainMs).toFixed(1).padStart(5)} %  ${perPod(v)} ms per pod  ${fn}`);
  }
}

/** How often TurboFan compiled the project's functions over a manager's life (its jitdump). */
export interface TurboFanCompiles {
  /** TurboFan code objects of the project's functions. */
  compiles: number;
  /** Distinct functions among them. */
  functions: number;
  /** Functions compiled more than once: name, times, bytes of code in all; most bytes first. */
  repeated: [string, number, number][];
}

/**
 * Reads the jitdump V8 wrote with `--perf-prof` (`jit-<pid>.dump` in the
 * manager's working directory): one code-load record per compiled code
 * object, optimized code named `JS:*name url:line:column`. A function
 * compiled again and again is either deoptimized (a second shape of object,
 * maps that died) or a closure made anew per call, whose optimized code V8
 * keeps only while a closure holds it (a full GC drops it).
 * Format: a header (its size at byte 8), then records of id (u32), size
 * (u32), timestamp (u64); a code load (id 0) follows with pid, tid (u32),
 * vma, code address, code size, code index (u64) and a NUL-terminated name.
 */
export function turboFanCompiles(dir: string, pid: number): TurboFanCompiles | undefined {
  const path = `${dir}/jit-${pid}.dump`;
  if (!existsSync(path)) return undefined;
  const data = readFileSync(path);
  // Per function: how many TurboFan code objects, and their bytes in all.
  const byFunction = new Map<string, { times: number; bytes: number }>();
  let off = data.readUInt32LE(8);
  while (off + 16 <= data.length) {
    const id = data.readUInt32LE(off);
    const size = data.readUInt32LE(off + 4);
    if (size === 0) break;
    if (id === 0 && off + 56 < data.length) {
      const end = data.indexOf(0, off + 56);
      const name = data.toString('utf8', off + 56, end < 0 ? off + size : end);
      const js = jsFunction(name);
      // `JS:*`: TurboFan's code (`~` interpreted, `^` baseline).
      if (js?.own === true && name.startsWith('JS:*')) {
        const seen = byFunction.get(js.fn) ?? { times: 0, bytes: 0 };
        seen.times++;
        seen.bytes += Number(data.readBigUInt64LE(off + 40));
        byFunction.set(js.fn, seen);
      }
    }
    off += size;
  }
  let compiles = 0;
  for (const { times } of byFunction.values()) compiles += times;
  const repeated = [...byFunction].filter(([, f]) => f.times > 1).map(([fn, f]): [string, number, number] => [fn, f.times, f.bytes]).sort((a, b) => b[2] - a[2]);
  return { compiles, functions: byFunction.size, repeated };
}

/** Prints how often TurboFan compiled the project's functions, the most compiled first. */
export function printCompiles(label: string, compiles: TurboFanCompiles, top = 15): void {
  const again = compiles.repeated.reduce((sum, [, n]) => sum + n - 1, 0);
  console.log(`\n  TurboFan compiles of the project's functions, ${label}: ${compiles.compiles} for ${compiles.functions} functions (${again} again); compiled more than once, most code first:`);
  for (const [fn, n, b] of compiles.repeated.slice(0, top)) console.log(`    ${String(n).padStart(3)} × ${(b / 1024).toFixed(1).padStart(6)} KiB  ${fn}`);
}
