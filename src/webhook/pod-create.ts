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
import { podLogFields, silentLogger, type Logger } from '../client/logger.ts';
import { decidePodCreate, holdsWithoutWrite, type PodCreateDecision, type PodCreateInput } from '../core/admission.ts';
import { subsetPatchRefusedEvent, workloadSpreadRef } from '../core/events.ts';
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { Pod } from '../k8s/types.ts';
import { allowed, errored, isDryRun, patched, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import { drive } from './admission-driver.ts';
import { IMMEDIATE_CONTEXT, type AdmissionContext } from './cpu-turns.ts';
import type { PodAdmissionDeps } from './pod-admission-deps.ts';
import type { Claim } from './reservation-pool.ts';
import { ReadThroughView, settle } from './view-reads.ts';


/** Remembers a placement taken without a reservation (D21), before the answer leaves. */
function remember(deps: PodAdmissionDeps, decision: PodCreateDecision): void {
  if (decision.kind === 'placed' && decision.placement !== undefined) deps.recent?.record(decision.ws.metadata.uid ?? '', decision.placement);
}

const REFUSALS: Record<Extract<PodCreateDecision, { kind: 'error' }>['cause'], string> = {
  'owner-not-found': "the new pod's owner is not in the cache yet; refusing so the workload controller retries",
  whitelist: 'pod admission refused: the custom workload whitelist cannot be read',
  reservation: 'pod admission failed',
  'held-ahead': 'no subset has room outside places another replica reserved ahead; refusing so the workload controller retries',
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
  const pool = deps.pool;
  const input: PodCreateInput = {
    view,
    pod,
    namespace,
    now: deps.clock.now(),
    newUid: deps.newUid ?? randomUUID,
    reservedHere: (id) => pool?.reserved(id) === true,
    ...(deps.subsetPatches === undefined ? {} : { subsetPatches: deps.subsetPatches }),
  };
  const decide = (current?: { ws: WorkloadSpread | undefined }, claimed?: Claim): PodCreateDecision =>
    current === undefined && claimed === undefined ? decidePodCreate(input) : decidePodCreate({ ...input, now: deps.clock.now(), current: current ?? { ws: claimed?.ws }, ...(claimed === undefined ? {} : { claimed }) });

  const driven = await drive<PodCreateDecision, WorkloadSpread, WorkloadSpreadStatus>({
    view,
    commit: deps.commit,
    decide: (current) => decide(current),
    commitKey: (d) => (d.kind === 'commit' ? { uid: d.ws.metadata.uid ?? '', namespace, name: d.ws.metadata.name ?? '' } : undefined),
    // No wait without a reason: a decision that takes no quota is answered without waiting for others' status writes.
    round: (d) => (d.kind === 'placed' && d.status !== undefined ? { value: d, status: d.status } : { value: d, alone: holdsWithoutWrite(d) }),
    // A pod without a name takes the next place reserved ahead for its version, if this process holds one: no round, no write.
    // Before the pod queues, a refill being written is waited for (its places are for this pod); inside a round it is not.
    claim: async (first, current) => {
      const version = first.kind === 'commit' ? first.version : undefined;
      const wsUid = first.kind === 'commit' ? (first.ws.metadata.uid ?? '') : '';
      const pool = deps.pool;
      const claim = version === undefined || pool === undefined ? undefined : current === undefined ? await pool.claimOrAwait(wsUid, version, () => context.signal.aborted) : pool.claim(wsUid, version);
      if (claim === undefined) return undefined;
      const value = await settle(view, () => decide(current === undefined ? undefined : { ws: current }, claim));
      if (value.kind === 'placed' && value.claimed === true) {
        log.debug({ ...podLogFields(namespace, pod.metadata), requestID: uid, workloadspread: value.ws.metadata.name ?? '', subset: value.subset }, 'pod placed in a place reserved ahead');
        return value;
      }
      deps.pool?.refused(wsUid, claim);
      return undefined;
    },
    decided: (d) => remember(deps, d),
    signal: context.signal,
  });
  if (!driven.ok) {
    log.warn({ ...podLogFields(namespace, pod.metadata), requestID: uid, workloadspread: driven.key.name, err: driven.error }, 'pod admission failed: the subset reservation was not stored');
    return errored(uid, 500, new Error(driven.error));
  }
  // The answer's patch is the last heavy step of a large pod: it takes its own turn.
  await context.turn();
  return answer(uid, raw, pod, namespace, driven.decision, deps, log);
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
