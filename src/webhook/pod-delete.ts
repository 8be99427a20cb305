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
 * eviction, and expires after 15 s (§3.5). Start at `admitPodDeletion`.
 */
import { podLogFields, silentLogger } from '../client/logger.ts';
import { decidePodDeletion, type PodDeletionDecision, type PodDeletionInput } from '../core/admission.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { Pod } from '../k8s/types.ts';
import { allowed, errored, isDryRun, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import type { PodAdmissionDeps } from './pod-create.ts';
import { ReadThroughView, settle } from './view-reads.ts';

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
export async function admitPodDeletion(req: AdmissionRequest, deps: PodAdmissionDeps, view = new ReadThroughView(deps.view, deps.reads)): Promise<AdmissionResponse> {
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
  const kind = 'pod' in subject ? 'Delete' : 'Eviction';

  let decision = await settle(view, () => decidePodDeletion(input));
  if (decision.kind === 'commit') {
    const { ws } = decision;
    const outcome = await deps.commit.submit<Exclude<PodDeletionDecision, { kind: 'read' }>>({ uid: ws.metadata.uid ?? '', namespace, name: ws.metadata.name ?? '' }, async (current) => {
      const value = await settle(view, () => decidePodDeletion({ ...input, now: deps.clock.now(), current: { ws: current } }));
      return value.kind === 'recorded' ? { value, status: value.status } : { value };
    });
    const plog = { ...('pod' in subject ? podLogFields(namespace, subject.pod.metadata) : { namespace, name: subject.podName }), requestID: uid, workloadspread: ws.metadata.name ?? '', kind };
    if (!outcome.ok) {
      log.warn({ ...plog, err: outcome.error }, 'pod deletion refused: its WorkloadSpread bookkeeping was not stored');
      return errored(uid, 400, new Error(outcome.error));
    }
    decision = outcome.value;
    if (decision.kind === 'recorded') log.debug(plog, 'pod deletion recorded');
  }
  switch (decision.kind) {
    case 'error':
      if (decision.detail !== undefined) log.warn({ namespace, requestID: uid, kind, err: decision.detail }, 'pod deletion refused');
      return errored(uid, 400, new Error(decision.message));
    case 'commit':
      // A decision taken under the group commit is final (core/admission.ts).
      return errored(uid, 400, new Error('internal error: the deletion decision asked for a second commit'));
    default:
      return allowed(uid);
  }
}
