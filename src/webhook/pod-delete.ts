/**
 * Pod DELETE and `pods/eviction` CREATE admission (the validating webhook,
 * `/validate-pod`): spec §3. When a pod placed by a WorkloadSpread goes away,
 * its subset's quota is released before the controller sees the pod gone:
 * `deletingPods[name] = now` and `missingReplicas++` in the pod's version
 * (`recordDeletion`), written through the same group commit as creations, so
 * deletions and creations of one WorkloadSpread never race in-process.
 *
 * The gates follow the reference: dry runs and requests it cannot read are
 * allowed without side effects; errors reading the WorkloadSpread or storing
 * the record deny the request with 400 (for an eviction, so does a pod missing
 * from the cache). The record is a side effect even when a later check (a
 * PodDisruptionBudget) refuses the eviction; it expires after 15 s (§3.5).
 * Start at `admitPodDeletion`.
 */
import { EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import { recordDeletion, shouldRecordDeletion } from '../core/deletion.ts';
import { readMarker, type Marker } from '../core/marker.ts';
import { podVersion } from '../core/pod-version.ts';
import { admissionWorkloadReplicas } from '../core/replicas.ts';
import { specSubsets, subsetsUsePercent, type WorkloadReplicasResult } from '../core/subset-choice.ts';
import { isPlainObject } from '../k8s/json.ts';
import { controllerRef } from '../k8s/pod.ts';
import type { Pod } from '../k8s/types.ts';
import { podLogFields, silentLogger } from '../client/logger.ts';
import { allowed, errored, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import { cloneSetRecreateFor, hasVersionEntry, isDryRun, type PodAdmissionDeps } from './pod-create.ts';
import type { AdmissionSources, Lookup } from './sources.ts';

type DeletionKind = 'Delete' | 'Eviction';

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
 * Answers one pod DELETE or pods/eviction CREATE review (spec §3).
 * `evicted`: the evicted pod when the caller has already read it.
 */
export async function admitPodDeletion(req: AdmissionRequest, deps: PodAdmissionDeps, evicted?: Lookup<Pod>): Promise<AdmissionResponse> {
  const { uid } = req;
  if (req.resource.group !== '' || req.resource.resource !== 'pods') return allowed(uid);
  if (req.operation === 'DELETE') {
    if (req.subResource !== '') return allowed(uid);
    const old = req.oldObject;
    // No oldObject: an API server too old to send it (§3.2).
    if (old === undefined || old === null) return allowed(uid);
    if (!isPlainObject(old)) return errored(uid, 400, new Error('the request oldObject is not a Pod'));
    if (isDryRun(req)) return allowed(uid);
    return handleDeletion(uid, old as unknown as Pod, req.namespace, 'Delete', deps);
  }
  if (req.operation === 'CREATE') {
    if (req.subResource !== 'eviction') return allowed(uid);
    const eviction = req.object;
    if (!isPlainObject(eviction)) return errored(uid, 400, new Error('the request object is not an Eviction'));
    if (isDryRun(req, eviction['deleteOptions'])) return allowed(uid);
    const found = evicted ?? (await evictedPod(deps.sources, req.namespace, evictionName(req) ?? ''));
    // Gone for the API server too: nothing to record, and the API server answers the eviction 404
    // itself once admission passes — what `kubectl drain` expects of a pod already deleted.
    if ('notFound' in found) return allowed(uid);
    if ('error' in found) return errored(uid, 400, new Error(found.error));
    return handleDeletion(uid, found.found, req.namespace, 'Eviction', deps);
  }
  return allowed(uid);
}

/**
 * The pod an eviction names: from the cache, or — on a miss (a pod created a
 * moment ago, or one already deleted) — from the API server. The reference
 * denies a cache miss with 400 (spec §3.3), which fails `kubectl drain` for a
 * pod deleted during the drain and refuses evicting a brand-new pod.
 */
export async function evictedPod(sources: AdmissionSources, namespace: string, name: string): Promise<Lookup<Pod>> {
  const cached = sources.pod(namespace, name);
  return 'notFound' in cached ? sources.freshPod(namespace, name) : cached;
}

/** `handleDeletion` of §3.4. */
async function handleDeletion(uid: string, pod: Pod, reqNamespace: string, kind: DeletionKind, deps: PodAdmissionDeps): Promise<AdmissionResponse> {
  const namespace = reqNamespace !== '' ? reqNamespace : (pod.metadata?.namespace ?? '');
  const marker = readMarker(pod);
  if (!shouldRecordDeletion(pod, marker)) return allowed(uid);
  const m = marker as Marker;
  const listed = deps.sources.workloadSpread(namespace, m.name);
  if ('notFound' in listed) return allowed(uid);
  if ('error' in listed) return errored(uid, 400, new Error(`cannot read WorkloadSpread ${namespace}/${m.name}: ${listed.error}`));
  const ws = listed.found;
  // The shortcut and the StatefulSet branch never write (§3.4 via §2.3 A/B); skip the queue for them.
  const subsets = specSubsets(ws);
  if (subsets.length === 1 && subsets[0]?.maxReplicas === undefined) return allowed(uid);
  if (ws.spec?.targetRef?.kind === 'StatefulSet') return allowed(uid);

  const wl = deps.sources.whitelist();
  const whitelist: Whitelist = 'error' in wl ? EMPTY_WHITELIST : wl;
  const owner = controllerRef(pod);
  const cloneSetRecreate = owner?.kind === 'CloneSet' ? cloneSetRecreateFor(pod, await deps.sources.ownerLookup(namespace, owner)) : false;
  const version = podVersion(pod, { cloneSetRecreate });
  const log = deps.log ?? silentLogger;
  const plog = { ...podLogFields(namespace, pod.metadata), requestID: uid, workloadspread: m.name };

  const outcome = await deps.commit.submit<{ error?: string }>({ uid: ws.metadata?.uid ?? '', namespace, name: m.name }, async (fresh) => {
    if (fresh === undefined) return { value: {} };
    let replicas: WorkloadReplicasResult = { ok: true, replicas: 0 };
    if (subsetsUsePercent(fresh) && !hasVersionEntry(fresh, version)) {
      const ref = fresh.spec?.targetRef;
      const workload = ref === undefined ? ({ notFound: true } as const) : await deps.sources.targetWorkload(namespace, ref);
      replicas = 'error' in workload ? { ok: false, error: workload.error } : admissionWorkloadReplicas(fresh, 'found' in workload ? workload.found : undefined, whitelist);
    }
    const record = recordDeletion({ ws: fresh, pod, marker: m, version, workloadReplicas: () => replicas, now: deps.clock.now() });
    if (record.changed) return { value: {}, status: record.status };
    return record.error === undefined ? { value: {} } : { value: { error: record.error } };
  });
  if (!outcome.ok) {
    log.warn({ ...plog, kind, err: outcome.error }, 'pod deletion refused: its WorkloadSpread bookkeeping was not stored');
    return errored(uid, 400, new Error(outcome.error));
  }
  if (outcome.value.error !== undefined) return errored(uid, 400, new Error(outcome.value.error));
  log.debug({ ...plog, kind }, 'pod deletion recorded');
  return allowed(uid);
}
