/**
 * Pod DELETE and `pods/eviction` CREATE admission (the validating webhook,
 * `/validate-pod`, spec §3): when a pod placed by a WorkloadSpread goes away,
 * its subset's quota is released before the controller sees the pod gone.
 * The request gates (§3.1–§3.3: subresources, requests without an
 * `oldObject`, dry runs) are here; whether and what to record is core's
 * `decidePodDeletion`, written through the same group commit as creations,
 * so deletions and creations of one WorkloadSpread never race in-process.
 * A decision that cannot read or record denies with 400; the record is a
 * side effect even when a later check (a PodDisruptionBudget) refuses the
 * eviction, and expires after 15 s (§3.5). A review the API server gave up
 * on records nothing (admission-driver.ts). Start at `admitPodDeletion`.
 */
import { podLogFields, silentLogger } from '../client/logger.ts';
import { decidePodDeletion, type PodDeletionDecision, type PodDeletionInput } from '../core/admission.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { Pod } from '../k8s/types.ts';
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { allowed, errored, isDryRun, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import type { PodAdmissionDeps } from './pod-admission-deps.ts';
import { drive } from './admission-driver.ts';
import { IMMEDIATE_CONTEXT, type AdmissionContext } from './cpu-turns.ts';
import { ReadThroughView } from './view-reads.ts';

/** The pod a `pods/eviction` CREATE names; undefined for any other request (or an unreadable Eviction). */
export function evictionName(req: AdmissionRequest): string | undefined {
  if (req.resource.group !== '' || req.resource.resource !== 'pods' || req.operation !== 'CREATE' || req.subResource !== 'eviction') return undefined;
  const eviction = req.object;
  if (!isPlainObject(eviction)) return undefined;
  if (req.name !== '') return req.name;
  const meta = eviction['metadata'];
  return isPlainObject(meta) && typeof meta['name'] === 'string' ? meta['name'] : '';
}

/**
 * Answers one pod DELETE or pods/eviction CREATE review (spec §3). `view`:
 * the admission's view when the caller already read through it (the
 * eviction's pod, read once for the budgets and the bookkeeping).
 */
export async function admitPodDeletion(req: AdmissionRequest, deps: PodAdmissionDeps, view = new ReadThroughView(deps.view, deps.reads), context: AdmissionContext = IMMEDIATE_CONTEXT): Promise<AdmissionResponse> {
  const { uid } = req;
  if (req.resource.group !== '' || req.resource.resource !== 'pods') return allowed(uid);
  let subject: PodDeletionInput['subject'];
  if (req.operation === 'DELETE' && req.subResource === '') {
    // No oldObject: an API server too old to send it (§3.2).
    if (req.oldObject === undefined || req.oldObject === null) return allowed(uid);
    if (!isPlainObject(req.oldObject)) return errored(uid, 400, new Error('the request oldObject is not a Pod'));
    if (isDryRun(req)) return allowed(uid);
    subject = { pod: req.oldObject as unknown as Pod };
  } else if (req.operation === 'CREATE' && req.subResource === 'eviction') {
    if (!isPlainObject(req.object)) return errored(uid, 400, new Error('the request object is not an Eviction'));
    if (isDryRun(req, req.object['deleteOptions'])) return allowed(uid);
    subject = { podName: evictionName(req) ?? '' };
  } else {
    return allowed(uid);
  }
  const namespace = req.namespace !== '' ? req.namespace : 'pod' in subject ? (subject.pod.metadata?.namespace ?? '') : '';
  const input: PodDeletionInput = { view, subject, namespace, now: deps.clock.now() };
  const log = deps.log ?? silentLogger;
  const plog = { ...('pod' in subject ? podLogFields(namespace, subject.pod.metadata) : { namespace, name: subject.podName }), requestID: uid, kind: 'pod' in subject ? 'Delete' : 'Eviction' };
  const driven = await drive<PodDeletionDecision, WorkloadSpread, WorkloadSpreadStatus>({
    view,
    commit: deps.commit,
    decide: (current) => decidePodDeletion(current === undefined ? input : { ...input, now: deps.clock.now(), current }),
    commitKey: (d) => (d.kind === 'commit' ? { uid: d.ws.metadata.uid ?? '', namespace, name: d.ws.metadata.name ?? '' } : undefined),
    round: (d) => (d.kind === 'recorded' ? { value: d, status: d.status } : { value: d }),
    signal: context.signal,
  });
  if (!driven.ok) {
    log.warn({ ...plog, workloadspread: driven.key.name, err: driven.error }, 'pod deletion refused: its WorkloadSpread bookkeeping was not stored');
    return errored(uid, 400, new Error(driven.error));
  }
  const decision = driven.decision;
  switch (decision.kind) {
    case 'recorded':
      log.debug({ ...plog, workloadspread: decision.ws.metadata.name ?? '' }, 'pod deletion recorded');
      return allowed(uid);
    case 'error':
      return errored(uid, 400, new Error(decision.message));
    case 'commit':
      // A decision taken under the group commit is final (core/admission.ts).
      return errored(uid, 400, new Error('internal error: the deletion decision asked for a second commit'));
    default:
      return allowed(uid);
  }
}
