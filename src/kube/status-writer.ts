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
 * The caller holds the per-WorkloadSpread lock around read-decide-write, so
 * these requests skip the client-side rate limiter: admission waits on that
 * lock, and a token wait inside it would hold every pod of the object behind
 * the limiter (D24).
 * `ConditionalStatusWriter` is the mechanism for any kind with a status
 * subresource; the DomainDisruptionBudget writer is another instance of it.
 * What the API server returns is decoded on the way in (api/decode.ts for
 * WorkloadSpreads), like what the informers cache.
 */
import { decodeWorkloadSpread, type Decoded } from '../api/decode.ts';
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { describeError, isConflict, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import type { ResourceRef } from '../client/resources.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { KubeObject, ObjectMeta } from '../k8s/types.ts';
import { withoutManagedFields } from './pod-transform.ts';
import { WORKLOADSPREAD_REF } from './refs.ts';
import type { WorkloadSpreadState } from './ws-state.ts';

export type StatusWriteFailureReason = 'Conflict' | 'NotFound' | 'Error';

export type WriteResult<O> = { ok: true; ws: O } | { ok: false; reason: StatusWriteFailureReason; message: string; error: unknown };

export type ReadResult<O> = { ok: true; ws: O } | { ok: false; reason: 'NotFound' | 'Error'; message: string; error: unknown };

export type StatusWriteResult = WriteResult<WorkloadSpread>;
export type FreshReadResult = ReadResult<WorkloadSpread>;

/** Who writes, for metrics: the webhook's reservations or the controller's reconcile. */
export type StatusWriteSource = 'webhook' | 'controller';

/** An object with a status subresource. */
export interface StatusBearing {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: unknown;
}

/**
 * Conditional status writes and fresh reads for one kind, keeping `state`
 * (the process-local copies) current. `onWrite` sees every PUT's outcome.
 */
export class ConditionalStatusWriter<O extends StatusBearing, S> {
  readonly state: WorkloadSpreadState<O>;
  readonly #client: KubeClient;
  readonly #ref: ResourceRef;
  readonly #onWrite: (source: StatusWriteSource, result: 'ok' | StatusWriteFailureReason) => void;
  readonly #decode: (raw: unknown) => Decoded<O>;

  constructor(
    client: KubeClient,
    ref: ResourceRef,
    state: WorkloadSpreadState<O>,
    onWrite: (source: StatusWriteSource, result: 'ok' | StatusWriteFailureReason) => void = () => {},
    decode: (raw: unknown) => Decoded<O> = (raw) => ({ ok: true, value: raw as O }),
  ) {
    this.#client = client;
    this.#ref = ref;
    this.state = state;
    this.#onWrite = onWrite;
    this.#decode = decode;
  }

  /**
   * Replaces the status of `obj` with `status`, conditional on `obj`'s
   * resourceVersion. `obj` is the copy the decision was made from; it is not
   * modified.
   */
  async writeStatus(obj: O, status: S, source: StatusWriteSource = 'controller'): Promise<WriteResult<O>> {
    const meta = obj.metadata ?? {};
    const namespace = meta.namespace ?? '';
    const name = meta.name ?? '';
    if (name === '' || typeof meta.resourceVersion !== 'string' || meta.resourceVersion === '') {
      // Without a resourceVersion the PUT would be unconditional: refuse rather than risk a blind overwrite.
      const error = new Error(`${this.#ref.kind} ${namespace}/${name} has no name or resourceVersion: refusing an unconditional status write`);
      this.#onWrite(source, 'Error');
      return { ok: false, reason: 'Error', message: error.message, error };
    }
    const body = {
      apiVersion: obj.apiVersion ?? `${this.#ref.group}/${this.#ref.version}`,
      kind: obj.kind ?? this.#ref.kind,
      // Without managedFields: the API server keeps them as they are when an update leaves them out.
      metadata: withoutManagedFields<KubeObject>(obj as unknown as KubeObject).metadata,
      spec: obj.spec,
      status,
    };
    try {
      const decoded = this.#decode(withoutFieldOwnership(await this.#client.updateStatus<unknown>(this.#ref, body, { unthrottled: true })));
      this.#onWrite(source, 'ok');
      if (!decoded.ok) return { ok: false, reason: 'Error', message: decoded.error, error: new Error(decoded.error) };
      this.state.remember(decoded.value);
      return { ok: true, ws: decoded.value };
    } catch (error) {
      const reason: StatusWriteFailureReason = isConflict(error) ? 'Conflict' : isNotFound(error) ? 'NotFound' : 'Error';
      if (reason === 'NotFound') this.state.forget(namespace, name);
      this.#onWrite(source, reason);
      return { ok: false, reason, message: describeError(error), error };
    }
  }

  /** Reads the object straight from the API server (after a conflict, caches may lag). */
  async getFresh(namespace: string, name: string): Promise<ReadResult<O>> {
    try {
      const decoded = this.#decode(withoutFieldOwnership(await this.#client.get<unknown>(this.#ref, name, { namespace, unthrottled: true })));
      if (!decoded.ok) return { ok: false, reason: 'Error', message: decoded.error, error: new Error(decoded.error) };
      this.state.remember(decoded.value);
      return { ok: true, ws: decoded.value };
    } catch (error) {
      if (isNotFound(error)) {
        this.state.forget(namespace, name);
        return { ok: false, reason: 'NotFound', message: describeError(error), error };
      }
      return { ok: false, reason: 'Error', message: describeError(error), error };
    }
  }

  /** The freshest in-process copy: `cached` (the informer's) or the last one this process wrote or read. */
  freshest(cached: O | undefined, namespace: string, name: string): O | undefined {
    return this.state.freshest(cached, namespace, name);
  }
}

export interface StatusWriterMetrics {
  /** One status PUT finished; `result` is `ok` or the failure reason. */
  statusWrite?(source: StatusWriteSource, result: 'ok' | StatusWriteFailureReason): void;
}

export interface StatusWriterOptions {
  client: KubeClient;
  state: WorkloadSpreadState;
  metrics?: StatusWriterMetrics;
}

/** The WorkloadSpread status writer. */
export class StatusWriter extends ConditionalStatusWriter<WorkloadSpread, WorkloadSpreadStatus> {
  constructor(options: StatusWriterOptions) {
    const metrics = options.metrics ?? {};
    super(options.client, WORKLOADSPREAD_REF, options.state, (source, result) => metrics.statusWrite?.(source, result), decodeWorkloadSpread);
  }
}

/** What the API server answered, without `metadata.managedFields` (kept in memory and sent back on the next write otherwise). */
function withoutFieldOwnership(raw: unknown): unknown {
  return isPlainObject(raw) ? withoutManagedFields(raw as KubeObject) : raw;
}
