/**
 * Pod CREATE admission (the mutating webhook, `/mutate-pod`): the request
 * gates of spec §2.1 (not a pod or a subresource, not CREATE, dry run →
 * admitted unchanged, with no reservation and no injection), then core's
 * `decidePodCreate` (core/admission.ts decides everything else), under the
 * group commit when it needs the stored status (D13), then the answer: the
 * JSON Patch from the raw request pod, or the pod unchanged with D11's
 * `NoSubsetAvailable` event, or 500 so the workload controller retries.
 * Start at `admitPodCreate`.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import { podLogFields, silentLogger, type Logger } from '../client/logger.ts';
import { decidePodCreate, holdsWithoutWrite, type PodCreateDecision, type PodCreateInput } from '../core/admission.ts';
import type { ClusterView } from '../core/cluster-view.ts';
import { subsetPatchRefusedEvent, workloadSpreadRef, type EngineEvent } from '../core/events.ts';
import type { SubsetPatchPolicy } from '../api/subset-patch-policy.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { Pod } from '../k8s/types.ts';
import { allowed, errored, isDryRun, patched, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import { IMMEDIATE_CONTEXT, type AdmissionContext } from './cpu-turns.ts';
import type { GroupCommit } from './group-commit.ts';
import type { WebhookMetrics } from './metrics.ts';
import type { RecentPlacements } from './recent-placements.ts';
import type { Claim, ReservationPool } from './reservation-pool.ts';
import { ReadThroughView, settle, type ApiReads } from './view-reads.ts';

/** Where admission reports user-facing events (a kube EventRecorder in the manager). */
export interface AdmissionEvents {
  record(ws: WorkloadSpread, event: EngineEvent): void;
}

export interface PodAdmissionDeps {
  clock: Clock;
  /** The caches, as core's view of the cluster. */
  view: ClusterView;
  /** Reads from the API server for what the view cannot answer. */
  reads: ApiReads;
  commit: GroupCommit;
  events: AdmissionEvents;
  metrics?: WebhookMetrics;
  log?: Logger;
  /** UUIDs for pods created without a name (generateName); default crypto.randomUUID. */
  newUid?: () => string;
  /** D20: what subset patches may change (`--allow-privileged-subset-patches`); default: no privilege-bearing fields. */
  subsetPatches?: SubsetPatchPolicy;
  /** D21: placements answered without a reservation, counted for birth costs until the cache shows the pods. */
  recent?: RecentPlacements;
  /** Places reserved ahead for pods without a name (issue 13); without it every reservation is written by its own round. */
  pool?: ReservationPool;
}

/** Remembers a placement taken without a reservation (D21), before the answer leaves. */
function remember(deps: PodAdmissionDeps, decision: PodCreateDecision): void {
  if (decision.kind === 'placed' && decision.placement !== undefined) deps.recent?.record(decision.ws.metadata.uid ?? '', decision.placement);
}

const REFUSALS: Record<Extract<PodCreateDecision, { kind: 'error' }>['cause'], string> = {
  'owner-not-found': "the new pod's owner is not in the cache yet; refusing so the workload controller retries",
  whitelist: 'pod admission refused: the custom workload whitelist cannot be read',
  reservation: 'pod admission failed',
  injection: 'subset injection failed',
};

/** Answers one pod CREATE review (spec §2). */
export async function admitPodCreate(req: AdmissionRequest, deps: PodAdmissionDeps, context: AdmissionContext = IMMEDIATE_CONTEXT): Promise<AdmissionResponse> {
  const { uid } = req;
  if (req.resource.group !== '' || req.resource.resource !== 'pods' || req.subResource !== '' || req.operation !== 'CREATE' || isDryRun(req)) return allowed(uid);
  const raw = req.object;
  if (!isPlainObject(raw) || (raw['metadata'] !== undefined && !isPlainObject(raw['metadata']))) return errored(uid, 400, new Error('the request object is not a Pod'));
  const pod = raw as unknown as Pod;
  const namespace = req.namespace !== '' ? req.namespace : (pod.metadata?.namespace ?? '');
  const log = deps.log ?? silentLogger;
  const recent = deps.recent;
  const view = new ReadThroughView(deps.view, deps.reads, recent === undefined ? undefined : (wsUid) => recent.list(wsUid));
  const input: PodCreateInput = { view, pod, namespace, now: deps.clock.now(), newUid: deps.newUid ?? randomUUID, ...(deps.subsetPatches === undefined ? {} : { subsetPatches: deps.subsetPatches }) };

  let decision = await settle(view, () => decidePodCreate(input));
  remember(deps, decision);
  if (decision.kind === 'commit') {
    const { ws, version } = decision;
    const wsUid = ws.metadata.uid ?? '';
    // A pod without a name takes the next place reserved ahead for its version, if this process holds one: no round, no write.
    // Decided on the round's copy, or outside a round on the copy that stored the place (the cache may not show that write yet).
    const fromPool = async (current?: WorkloadSpread): Promise<Exclude<PodCreateDecision, { kind: 'read' }> | undefined> => {
      const claim: Claim | undefined = version === undefined ? undefined : deps.pool?.claim(wsUid, version);
      if (claim === undefined) return undefined;
      const value = await settle(view, () => decidePodCreate({ ...input, now: deps.clock.now(), current: { ws: current ?? claim.ws }, claimed: claim }));
      if (value.kind === 'placed' && value.claimed === true) return value;
      deps.pool?.giveBack(wsUid, claim);
      return undefined;
    };
    const claimed = await fromPool();
    if (claimed !== undefined) {
      log.debug({ ...podLogFields(namespace, pod.metadata), requestID: uid, workloadspread: ws.metadata.name ?? '', subset: claimed.kind === 'placed' ? claimed.subset : '' }, 'pod placed in a place reserved ahead');
      await context.turn();
      return answer(uid, raw, pod, namespace, claimed, deps, log);
    }
    const outcome = await deps.commit.submit<Exclude<PodCreateDecision, { kind: 'read' }>>({ uid: wsUid, namespace, name: ws.metadata.name ?? '' }, async (current) => {
      const pooled = current === undefined ? undefined : await fromPool(current);
      if (pooled !== undefined) return { value: pooled, alone: true };
      const value = await settle(view, () => decidePodCreate({ ...input, now: deps.clock.now(), current: { ws: current } }));
      // Decided in the WorkloadSpread's serial lane: the next admission's birth cost counts this one.
      remember(deps, value);
      // No wait without a reason: a decision that takes no quota is answered without waiting for others' status writes.
      return value.kind === 'placed' && value.status !== undefined ? { value, status: value.status } : { value, alone: holdsWithoutWrite(value) };
    });
    if (!outcome.ok) {
      log.warn({ ...podLogFields(namespace, pod.metadata), requestID: uid, workloadspread: ws.metadata.name ?? '', err: outcome.error }, 'pod admission failed: the subset reservation was not stored');
      return errored(uid, 500, new Error(outcome.error));
    }
    decision = outcome.value;
  }

  // The answer's patch is the last heavy step of a large pod: it takes its own turn.
  await context.turn();
  return answer(uid, raw, pod, namespace, decision, deps, log);
}

/** The review's answer for a final decision. */
function answer(uid: string, raw: Record<string, unknown>, pod: Pod, namespace: string, decision: Exclude<PodCreateDecision, { kind: 'read' }>, deps: PodAdmissionDeps, log: Logger): AdmissionResponse {
  const plog = { ...podLogFields(namespace, pod.metadata), requestID: uid, ...('ws' in decision && decision.ws !== undefined ? { workloadspread: decision.ws.metadata.name ?? '' } : {}) };
  switch (decision.kind) {
    case 'admit':
      return allowed(uid);
    case 'placed':
      if (decision.refusedPatch !== undefined) {
        // D20: a stored patch that changes protected fields was left out; the pod keeps its placement.
        deps.events.record(decision.ws, subsetPatchRefusedEvent(workloadSpreadRef(decision.ws), decision.subset, pod.metadata?.name ?? '', decision.refusedPatch));
        log.warn({ ...plog, subset: decision.subset, fields: decision.refusedPatch }, 'subset patch not applied: it changes protected pod fields (D20)');
      }
      log.debug({ ...plog, subset: decision.subset, injected: decision.injected }, 'pod placed in subset');
      return patched(uid, raw, decision.pod);
    case 'unplaced':
      deps.events.record(decision.ws, decision.event);
      deps.metrics?.noSubsetAvailable?.(namespace, decision.ws.metadata.name ?? '');
      log.warn(plog, 'no subset has quota left; pod admitted without placement');
      return decision.pod === undefined ? allowed(uid) : patched(uid, raw, decision.pod);
    case 'error':
      log.warn({ ...plog, err: decision.detail ?? decision.message }, REFUSALS[decision.cause]);
      return errored(uid, 500, new Error(decision.message));
    case 'commit':
      // A decision taken under the group commit is final (core/admission.ts).
      return errored(uid, 500, new Error('internal error: the admission decision asked for a second commit'));
  }
}
