/**
 * Admission webhook calls made from a worker thread of their own
 * (`ClusterOptions.webhookThread`).
 *
 * Why: kube-apiserver calls a webhook from a goroutine of its own and times
 * the call there (`apiserver_admission_webhook_admission_duration_seconds`),
 * so the time it reports is the webhook's: connecting, sending, the webhook
 * server's queue and handler, the answer. The embedded API server serves
 * everything from one event loop; a call made there ends only when that loop
 * gets round to the answer, so under load its timing carries the API server's
 * own queue (tens of ms at 10,000 pods). On this thread the TLS connection, the
 * bytes and the timing are off that loop, and the time reported is what a
 * multi-threaded API server would see.
 *
 * Semantics are `postToWebhook`'s (webhook-client.ts, which the thread runs),
 * with one difference: the timeout runs on the thread's real clock. So the
 * caller's clock stays busy while a call is out — on a virtual clock time
 * does not move during a call, and a webhook that never answers times out
 * after `timeoutSeconds` of real time. Meant for clusters on the real clock.
 *
 * The thread starts with the first call and stops with `close()`; it does not
 * keep the process alive.
 */
import { Worker } from 'node:worker_threads';
import type { PostOptions, WebhookCallResult, WebhookTarget } from './webhook-client.ts';
import { targetToWire, type ThreadAnswer, type ThreadCall } from './webhook-thread-wire.ts';

/** `postToWebhook`'s options; the thread keeps its own keep-alive agent. */
export type ThreadPostOptions = Omit<PostOptions, 'agent'>;

/** A call's result and, when the webhook thread made it, how long it took there. */
export type TimedWebhookCallResult = WebhookCallResult & { elapsedMs?: number };

/** tsx's registration API, for a worker started from source. */
const TSX_REGISTER = 'tsx/esm/api';

/** The entry as it sits next to this module: `.ts` when run from source (tsx), `.js` when built. */
function startWorker(): Worker {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const entry = new URL(`./webhook-thread-entry${ext}`, import.meta.url);
  if (ext === '.js') return new Worker(entry);
  // From source (tests and benchmarks, run with tsx) a worker has no TypeScript loader of its own: tsx's
  // hooks stay on the main thread, and `--import tsx` is not honoured in a worker's execArgv. The worker
  // registers tsx (a dev dependency) before it loads the entry. The built package never takes this branch.
  const code = `import(${JSON.stringify(TSX_REGISTER)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(code, { eval: true });
}

export class WebhookThread {
  #worker: Worker | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, { worker: Worker; resolve: (r: TimedWebhookCallResult) => void; endBusy: () => void }>();
  #closed = false;

  post(target: WebhookTarget, body: string, options: ThreadPostOptions): Promise<TimedWebhookCallResult> {
    if (this.#closed) return Promise.resolve({ ok: false, error: 'the API server is shutting down' });
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    const call: ThreadCall = {
      id,
      target: targetToWire(target),
      body,
      caPem: options.caPem,
      clientCertificate: options.clientCertificate,
      timeoutMs: options.timeoutMs,
      label: options.label,
    };
    return new Promise<TimedWebhookCallResult>((resolve) => {
      const endBusy = options.clock.activity.begin(`${options.label}: on the webhook thread`);
      this.#pending.set(id, { worker, resolve, endBusy });
      worker.postMessage(call);
    });
  }

  /** Stops the thread; calls still out end with an error. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker === undefined) return;
    this.#failAll(worker, 'the API server is shutting down');
    await worker.terminate();
  }

  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = startWorker();
    worker.unref();
    worker.on('message', (answer: ThreadAnswer) => {
      const waiting = this.#pending.get(answer.id);
      if (waiting === undefined) return;
      this.#pending.delete(answer.id);
      waiting.endBusy();
      waiting.resolve({ ...answer.result, elapsedMs: answer.elapsedMs });
    });
    worker.on('error', (err) => {
      // A thread that failed is replaced by the next call; the calls it held fail now.
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(worker, `the webhook thread failed: ${err.message}`);
    });
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(worker, 'the webhook thread exited');
    });
    this.#worker = worker;
    return worker;
  }

  /** Ends the calls `worker` held with `error`. */
  #failAll(worker: Worker, error: string): void {
    for (const [id, waiting] of this.#pending) {
      if (waiting.worker !== worker) continue;
      this.#pending.delete(id);
      waiting.endBusy();
      waiting.resolve({ ok: false, error });
    }
  }
}
