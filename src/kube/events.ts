/**
 * Core's `EngineEvent`s (spec §4.7, D11) as `events.k8s.io/v1` Events,
 * written through the client's `EventRecorder` (series aggregation, never
 * throws, never blocks).
 *
 * The reporting controller names the half of the manager that saw the
 * event: `workloadspread-controller` (reconcile: CreatePodFailed,
 * DeletePodFailed, RecoverSchedulable, PatchPodDeletionCostFailed) or
 * `workloadspread-webhook` (admission: NoSubsetAvailable); the rebalancer's
 * Rebalancing and RebalanceBlocked (D18) report as the controller. `regarding` is the
 * object the event is about (the WorkloadSpread for every reason of the
 * reference), with its UID when the caller has the object at hand.
 * Start at `EngineEventSink.record`.
 */
import { API_VERSION as WS_API_VERSION, KIND as WS_KIND } from '../api/workloadspread.ts';
import type { EngineEvent } from '../core/events.ts';
import type { KubeObject, ObjectMeta } from '../k8s/types.ts';
import { EventRecorder, referenceTo, type ObjectReference } from '../client/event-recorder.ts';
import type { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';

export const CONTROLLER_COMPONENT = 'workloadspread-controller';
export const WEBHOOK_COMPONENT = 'workloadspread-webhook';

export type ReportingComponent = typeof CONTROLLER_COMPONENT | typeof WEBHOOK_COMPONENT;

/** A recorder reporting as one half of the manager; `instance` is this replica (its pod name). */
export function createEventRecorder(client: KubeClient, component: ReportingComponent, instance: string, log: Logger = silentLogger): EventRecorder {
  return new EventRecorder({ client, reportingController: component, reportingInstance: instance, log });
}

/** Any object the caller has at hand (a WorkloadSpread, a pod), to take the reference's UID from. */
export interface KnownObject {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  metadata?: ObjectMeta | undefined;
}

/** The `action` of each event reason (what was being done when it happened). */
const ACTIONS: Record<string, string> = {
  CreatePodFailed: 'Reconcile',
  DeletePodFailed: 'Reconcile',
  RecoverSchedulable: 'Reconcile',
  PatchPodDeletionCostFailed: 'PatchDeletionCost',
  NoSubsetAvailable: 'Admit',
  Rebalancing: 'Rebalance',
  RebalanceBlocked: 'Rebalance',
};

/** The object reference an EngineEvent is about; `objects` supplies UIDs for objects the caller has. */
export function regardingOf(event: EngineEvent, objects: readonly KnownObject[] = []): ObjectReference | undefined {
  const involved = event.involved;
  if (involved === undefined) return undefined;
  const apiVersion = involved.kind === 'WorkloadSpread' ? WS_API_VERSION : 'v1';
  const known = objects.find(
    (o) => (o.kind === undefined || o.kind === involved.kind) && o.metadata?.name === involved.name && (o.metadata?.namespace ?? '') === involved.namespace,
  );
  if (known !== undefined) return { ...referenceTo(known as KubeObject), apiVersion: known.apiVersion ?? apiVersion, kind: involved.kind };
  return { apiVersion, kind: involved.kind === 'WorkloadSpread' ? WS_KIND : 'Pod', namespace: involved.namespace, name: involved.name };
}

export class EngineEventSink {
  readonly #recorder: EventRecorder;
  readonly #log: Logger;

  constructor(recorder: EventRecorder, log: Logger = silentLogger) {
    this.#recorder = recorder;
    this.#log = log;
  }

  /** Records one engine event; `objects` (e.g. the WorkloadSpread) give the reference its UID. */
  record(event: EngineEvent, objects: readonly KnownObject[] = []): void {
    const regarding = regardingOf(event, objects);
    if (regarding === undefined) {
      this.#log.warn({ reason: event.reason, message: event.message }, 'event without an object, not recorded');
      return;
    }
    this.#recorder.record(regarding, { type: event.type, reason: event.reason, note: event.message, action: ACTIONS[event.reason] ?? 'Reconcile' });
  }

  recordAll(events: readonly EngineEvent[], objects: readonly KnownObject[] = []): void {
    for (const e of events) this.record(e, objects);
  }

  /** Waits for the writes in flight (tests, shutdown). */
  flush(): Promise<void> {
    return this.#recorder.flush();
  }
}
