/**
 * The `drain` step: what `kubectl drain NODE --ignore-daemonsets
 * --delete-emptydir-data --force --timeout=5m` does (k8s.io/kubectl
 * pkg/drain), so a scenario shows how budgets pace a node's maintenance.
 *
 * 1. cordon the node;
 * 2. list the pods bound to it; leave out DaemonSet-owned pods (their
 *    controller would put them straight back, and tolerates the cordon) and
 *    mirror pods (the kubelet owns them; the API cannot delete them);
 *    everything else is evicted, bare pods and pods with emptyDir included
 *    (kubectl's --force and --delete-emptydir-data);
 * 3. every pod gets its own eviction loop, all running at once as kubectl's
 *    goroutines do: POST the Eviction; 429 (a budget said no) → wait 5 s and
 *    try again; 404 → the pod is already gone; any other error ends that
 *    pod's loop (kubectl reports it and does not retry); once accepted,
 *    poll every second until the pod is gone (or replaced by a pod of the
 *    same name with another uid);
 * 4. the global timeout (default 5m) ends every loop; the step then fails
 *    with `drain did not complete within 5m`, naming the pods left and the
 *    last refusal.
 * Every pod's story is one `EvictionRecord` (attempts, refusals, the budget
 * that refused, when it was evicted and when it was gone): the runner
 * reports them and `refusedEvictions` expectations check them.
 *
 * Time: on the embedded cluster nothing moves the virtual clock while an
 * action runs, so `runDrain` moves it a second at a time while the loops
 * wait; each loop is its own clock activity, busy while it talks to the API
 * server and idle while it sleeps, so time never jumps past a loop at work.
 * On a live cluster the loops sleep in real time.
 */
import { ApiError, describeError, isNotFound } from '../client/errors.ts';
import { BUILTIN } from '../client/resources.ts';
import { isPlainObject } from '../k8s/json.ts';
import { controllerRef } from '../k8s/owner.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';
import type { SimBackend } from './backend.ts';
import { formatDuration, parseDuration } from '../k8s/duration.ts';
import { refusingBudget, budgetLabel, type RefusingBudget } from './eviction-refusal.ts';
import { child, readMapping, readString, rejectUnknownKeys, type Problems } from './field-reader.ts';

/** kubectl drain's pause between two attempts at a refused eviction. */
export const EVICTION_RETRY_MS = 5_000;
/** kubectl drain's poll interval while it waits for an evicted pod to go. */
export const DELETION_POLL_MS = 1_000;
/** How long a drain step may take unless it says otherwise. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 5 * 60_000;
/** The kubelet's annotation on a static pod's API mirror. */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

export interface DrainAction {
  action: 'drain';
  node: string;
  timeoutMs: number;
}

/** `drain: node-1` or `drain: {node: node-1, timeout: 10m}`. */
export function parseDrain(value: unknown, path: string, problems: Problems): DrainAction | undefined {
  if (typeof value === 'string') {
    const node = readString(value, path, problems);
    return node === undefined ? undefined : { action: 'drain', node, timeoutMs: DEFAULT_DRAIN_TIMEOUT_MS };
  }
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  rejectUnknownKeys(map, ['node', 'timeout'], path, problems);
  const node = readString(map['node'], child(path, 'node'), problems);
  let timeoutMs = DEFAULT_DRAIN_TIMEOUT_MS;
  if (map['timeout'] !== undefined) {
    const d = parseDuration(map['timeout']);
    if (!d.ok) problems.add(child(path, 'timeout'), d.error);
    else if (d.ms <= 0) problems.add(child(path, 'timeout'), 'must be longer than 0s');
    else timeoutMs = d.ms;
  }
  return node === undefined ? undefined : { action: 'drain', node, timeoutMs };
}

export function describeDrain(a: DrainAction): string {
  return `drain node ${a.node}${a.timeoutMs === DEFAULT_DRAIN_TIMEOUT_MS ? '' : ` (timeout ${formatDuration(a.timeoutMs)})`}`;
}

export type SkipReason = 'DaemonSet-managed' | 'mirror pod';

export interface DrainPlan {
  evict: Pod[];
  skipped: { pod: Pod; reason: SkipReason }[];
}

/** Which of the node's pods a drain evicts, in name order (kubectl's filters, with --ignore-daemonsets --force). */
export function drainPlan(pods: readonly Pod[], node: string): DrainPlan {
  const plan: DrainPlan = { evict: [], skipped: [] };
  const key = (p: Pod) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
  for (const pod of [...pods].sort((a, b) => key(a).localeCompare(key(b)))) {
    if (pod.spec?.nodeName !== node) continue;
    const annotations = isPlainObject(pod.metadata?.annotations) ? pod.metadata.annotations : {};
    if (Object.hasOwn(annotations, MIRROR_POD_ANNOTATION)) plan.skipped.push({ pod, reason: 'mirror pod' });
    else if (controllerRef(pod)?.kind === 'DaemonSet') plan.skipped.push({ pod, reason: 'DaemonSet-managed' });
    else plan.evict.push(pod);
  }
  return plan;
}

export type EvictionResult = 'evicted' | 'refused' | 'failed' | 'gone';

/** One pod's eviction during a drain (or an `evict` step). */
export interface EvictionRecord {
  namespace: string;
  pod: string;
  node: string;
  /**
   * evicted: the API accepted the eviction; refused: every attempt until the
   * timeout was answered 429; failed: another error ended it; gone: the pod
   * disappeared before its eviction went through.
   */
  result: EvictionResult;
  attempts: number;
  refusals: number;
  /** `Kind/name` of every budget that refused it, in order of first refusal. */
  refusedBy: string[];
  /** Domains of the refusing DomainDisruptionBudgets, as their messages named them. */
  refusedIn: string[];
  /** RFC 3339 clock times. */
  firstRefusedAt?: string;
  evictedAt?: string;
  /** When the drain saw the pod gone (within a second of its deletion). */
  goneAt?: string;
  /** The last refusal or error, as the server said it. */
  message?: string;
}

export interface DrainOutcome {
  ok: boolean;
  /** Why the drain failed (timeout, a pod that could not be evicted, the node missing). */
  error?: string;
  notes: string[];
  evictions: EvictionRecord[];
}

/** The server's words for a failed request: the Status message, else the error. */
function serverMessage(err: unknown): string {
  if (err instanceof ApiError && typeof err.status.message === 'string' && err.status.message !== '') {
    const message = err.status.message;
    // A webhook's denial repeats its message as a cause; only causes that add something are shown.
    const causes = (err.status.details?.causes ?? []).map((c) => c.message).filter((m): m is string => typeof m === 'string' && m !== '' && !message.includes(m));
    return causes.length === 0 ? message : `${message} (${causes.join('; ')})`;
  }
  return describeError(err);
}

/** kubectl drain retries on TooManyRequests by reason or by code (apierrors.IsTooManyRequests). */
const isRefusal = (err: unknown): err is ApiError => err instanceof ApiError && (err.code === 429 || err.reason === 'TooManyRequests');

function noteRefusal(record: EvictionRecord, err: ApiError, now: number): void {
  record.refusals++;
  record.firstRefusedAt ??= formatTime(now);
  record.message = serverMessage(err);
  const budget: RefusingBudget | undefined = refusingBudget(err.status);
  if (budget === undefined) return;
  const label = budgetLabel(budget);
  if (!record.refusedBy.includes(label)) record.refusedBy.push(label);
  if (budget.domain !== undefined && !record.refusedIn.includes(budget.domain)) record.refusedIn.push(budget.domain);
}

interface LoopContext {
  backend: SimBackend;
  deadline: number;
  signal: AbortSignal | undefined;
}

/** Sleeps `ms` of clock time unless that passes the deadline; false when the deadline came first. */
async function pause(ctx: LoopContext, ms: number, name: string): Promise<boolean> {
  const clock = ctx.backend.clock;
  const left = ctx.deadline - clock.now();
  if (left <= 0) return false;
  await clock.sleep(Math.min(ms, left), ctx.signal, { name });
  return clock.now() < ctx.deadline;
}

/** One pod's loop: evict until accepted (retrying 429s), then wait until it is gone. */
async function evictAndWait(ctx: LoopContext, pod: Pod, node: string): Promise<EvictionRecord> {
  const { client, clock } = ctx.backend;
  const namespace = pod.metadata?.namespace ?? 'default';
  const name = pod.metadata?.name ?? '';
  const uid = pod.metadata?.uid;
  const record: EvictionRecord = { namespace, pod: name, node, result: 'refused', attempts: 0, refusals: 0, refusedBy: [], refusedIn: [] };
  for (;;) {
    record.attempts++;
    try {
      await client.evict(namespace, name);
      record.result = 'evicted';
      record.evictedAt = formatTime(clock.now());
      break;
    } catch (err) {
      if (ctx.signal?.aborted === true) throw err;
      if (isNotFound(err)) {
        record.result = 'gone';
        record.goneAt = formatTime(clock.now());
        return record;
      }
      if (!isRefusal(err)) {
        record.result = 'failed';
        record.message = serverMessage(err);
        return record;
      }
      noteRefusal(record, err, clock.now());
    }
    if (!(await pause(ctx, EVICTION_RETRY_MS, `drain: retry eviction of ${namespace}/${name}`))) return record;
  }
  // waitForDelete: gone, or a new pod under the same name.
  for (;;) {
    try {
      const current = await client.get<Pod>(BUILTIN.pods, name, { namespace });
      if (uid !== undefined && current.metadata?.uid !== uid) break;
    } catch (err) {
      if (ctx.signal?.aborted === true) throw err;
      if (isNotFound(err)) break;
    }
    if (!(await pause(ctx, DELETION_POLL_MS, `drain: wait for ${namespace}/${name} to go`))) return record;
  }
  record.goneAt = formatTime(clock.now());
  return record;
}

/**
 * One eviction, as the `evict` step makes it: the record (evicted, refused
 * once, failed, or gone) and the error to report when it did not go through.
 */
export async function evictOnce(backend: SimBackend, namespace: string, name: string): Promise<{ record: EvictionRecord; error?: unknown }> {
  const { client, clock } = backend;
  let node = '';
  try {
    node = (await client.get<Pod>(BUILTIN.pods, name, { namespace })).spec?.nodeName ?? '';
  } catch {
    // The eviction below reports a missing pod in the server's words.
  }
  const record: EvictionRecord = { namespace, pod: name, node, result: 'evicted', attempts: 1, refusals: 0, refusedBy: [], refusedIn: [] };
  try {
    await client.evict(namespace, name);
    record.evictedAt = formatTime(clock.now());
    return { record };
  } catch (err) {
    if (isRefusal(err)) {
      record.result = 'refused';
      noteRefusal(record, err, clock.now());
    } else {
      record.result = isNotFound(err) ? 'gone' : 'failed';
      record.message = serverMessage(err);
    }
    return { record, error: err };
  }
}

/** Why a record keeps the drain from completing, or undefined when it does not. */
function leftOver(r: EvictionRecord): string | undefined {
  const who = `${r.namespace}/${r.pod}`;
  if (r.result === 'failed') return `${who}: ${r.message ?? 'eviction failed'}`;
  if (r.result === 'refused') return `${who}: refused ${r.refusals} time(s)${r.message === undefined ? '' : ` (last: ${r.message})`}`;
  if (r.result === 'evicted' && r.goneAt === undefined) return `${who}: evicted but still terminating`;
  return undefined;
}

/** Drains a node (see the header); never throws for anything the cluster answers, only on abort. */
export async function runDrain(backend: SimBackend, action: DrainAction, signal?: AbortSignal): Promise<DrainOutcome> {
  const cordoned = await backend.cordon(action.node);
  if (!cordoned.ok) return { ok: false, error: cordoned.error, notes: [], evictions: [] };
  const clock = backend.clock;
  let pods: Pod[];
  try {
    pods = (await backend.client.list<Pod>(BUILTIN.pods, { fieldSelector: `spec.nodeName=${action.node}` })).items;
  } catch (err) {
    return { ok: false, error: `cannot list the pods of node ${action.node}: ${serverMessage(err)}`, notes: [`node ${action.node} cordoned`], evictions: [] };
  }
  const plan = drainPlan(pods, action.node);
  const notes = [`node ${action.node} cordoned`];
  for (const s of plan.skipped) notes.push(`ignored ${s.reason} ${s.pod.metadata?.namespace ?? ''}/${s.pod.metadata?.name ?? ''}`);
  const ctx: LoopContext = { backend, deadline: clock.now() + action.timeoutMs, signal };
  let running = plan.evict.length;
  const loops = plan.evict.map((pod) =>
    clock.activity.run(`drain ${action.node}: ${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`, () => evictAndWait(ctx, pod, action.node)).finally(() => {
      running--;
    }),
  );
  // Loops that fail (an abort) must not leave the others unobserved.
  const all = Promise.allSettled(loops);
  if (clock.virtual) {
    // Second by second, so the step ends within a second of the last pod going (the loops' own timers fire on the way, in order).
    while (running > 0 && clock.now() <= ctx.deadline) {
      signal?.throwIfAborted();
      await backend.advance(DELETION_POLL_MS, signal);
    }
    await backend.quiesce();
  }
  const evictions: EvictionRecord[] = [];
  for (const r of await all) {
    if (r.status === 'rejected') throw r.reason;
    evictions.push(r.value);
  }
  const evicted = evictions.filter((r) => r.result === 'evicted' || r.result === 'gone').length;
  notes.push(`evicted ${evicted} of ${plan.evict.length} pod(s)${evictions.some((r) => r.refusals > 0) ? `, ${evictions.reduce((n, r) => n + r.refusals, 0)} refusal(s)` : ''}`);
  const left = evictions.map(leftOver).filter((s): s is string => s !== undefined);
  if (left.length === 0) {
    notes.push(`node ${action.node} drained`);
    return { ok: true, notes, evictions };
  }
  const timedOut = evictions.some((r) => r.result === 'refused' || (r.result === 'evicted' && r.goneAt === undefined));
  const head = timedOut ? `drain did not complete within ${formatDuration(action.timeoutMs)}` : `drain of node ${action.node} failed`;
  return { ok: false, error: `${head}: ${left.join('; ')}`, notes, evictions };
}
