/**
 * Writing a WorkloadSpread's status (spec §2.3 C.7, §4.2 step 7; D9, D13):
 * `PUT .../workloadspreads/<name>/status` carrying the resourceVersion of the
 * copy the decision was made from, so a write based on a stale copy fails
 * with 409 Conflict instead of overwriting another replica's reservations
 * (optimistic concurrency is what keeps "never more pods in a subset than
 * its limit" true with any number of manager replicas).
 *
 * Results are data: `{ ok: true, ws }` with the stored object, or a typed
 * failure (`Conflict`, `NotFound`, `Error`). Retrying is the caller's call:
 * the webhook re-reads with `getFresh` and re-decides (group commit), the
 * controller requeues quietly.
 *
 * Every successful write and every fresh read refreshes the process-local
 * copy in `WorkloadSpreadState`; a NotFound drops it.
 * The caller holds the per-WorkloadSpread lock around read-decide-write.
 */
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { describeError, isConflict, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { WORKLOADSPREAD_REF } from './refs.ts';
import type { WorkloadSpreadState } from './ws-state.ts';

export type StatusWriteFailureReason = 'Conflict' | 'NotFound' | 'Error';

export type StatusWriteResult =
  | { ok: true; ws: WorkloadSpread }
  | { ok: false; reason: StatusWriteFailureReason; message: string; error: unknown };

export type FreshReadResult =
  | { ok: true; ws: WorkloadSpread }
  | { ok: false; reason: 'NotFound' | 'Error'; message: string; error: unknown };

/** Who writes, for metrics: the webhook's reservations or the controller's reconcile. */
export type StatusWriteSource = 'webhook' | 'controller';

export interface StatusWriterMetrics {
  /** One status PUT finished; `result` is `ok` or the failure reason. */
  statusWrite?(source: StatusWriteSource, result: 'ok' | StatusWriteFailureReason): void;
}

export interface StatusWriterOptions {
  client: KubeClient;
  state: WorkloadSpreadState;
  metrics?: StatusWriterMetrics;
}

export class StatusWriter {
  readonly #client: KubeClient;
  readonly #state: WorkloadSpreadState;
  readonly #metrics: StatusWriterMetrics;

  constructor(options: StatusWriterOptions) {
    this.#client = options.client;
    this.#state = options.state;
    this.#metrics = options.metrics ?? {};
  }

  /**
   * Replaces the status of `ws` with `status`, conditional on `ws`'s
   * resourceVersion. `ws` is the copy the decision was made from; it is not
   * modified.
   */
  async writeStatus(ws: WorkloadSpread, status: WorkloadSpreadStatus, source: StatusWriteSource = 'controller'): Promise<StatusWriteResult> {
    const meta = ws.metadata ?? {};
    const namespace = meta.namespace ?? '';
    const name = meta.name ?? '';
    if (name === '' || typeof meta.resourceVersion !== 'string' || meta.resourceVersion === '') {
      // Without a resourceVersion the PUT would be unconditional: refuse rather than risk a blind overwrite.
      const error = new Error(`WorkloadSpread ${namespace}/${name} has no name or resourceVersion: refusing an unconditional status write`);
      this.#metrics.statusWrite?.(source, 'Error');
      return { ok: false, reason: 'Error', message: error.message, error };
    }
    const body = {
      apiVersion: ws.apiVersion ?? `${WORKLOADSPREAD_REF.group}/${WORKLOADSPREAD_REF.version}`,
      kind: ws.kind ?? WORKLOADSPREAD_REF.kind,
      metadata: meta,
      spec: ws.spec,
      status,
    };
    try {
      const stored = await this.#client.updateStatus<WorkloadSpread>(WORKLOADSPREAD_REF, body);
      this.#state.remember(stored);
      this.#metrics.statusWrite?.(source, 'ok');
      return { ok: true, ws: stored };
    } catch (error) {
      const reason: StatusWriteFailureReason = isConflict(error) ? 'Conflict' : isNotFound(error) ? 'NotFound' : 'Error';
      if (reason === 'NotFound') this.#state.forget(namespace, name);
      this.#metrics.statusWrite?.(source, reason);
      return { ok: false, reason, message: describeError(error), error };
    }
  }

  /** Reads the WorkloadSpread straight from the API server (after a conflict, caches may lag). */
  async getFresh(namespace: string, name: string): Promise<FreshReadResult> {
    try {
      const ws = await this.#client.get<WorkloadSpread>(WORKLOADSPREAD_REF, name, { namespace });
      this.#state.remember(ws);
      return { ok: true, ws };
    } catch (error) {
      if (isNotFound(error)) {
        this.#state.forget(namespace, name);
        return { ok: false, reason: 'NotFound', message: describeError(error), error };
      }
      return { ok: false, reason: 'Error', message: describeError(error), error };
    }
  }
}
