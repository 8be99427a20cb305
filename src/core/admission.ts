/**
 * Admission, decided end to end (spec §2 and §3; DECISIONS D3, D11, D12,
 * D13): the two functions the webhook, `plan` and the tests call, and the one
 * place each rule of admission is written down.
 *
 * - `decidePodCreate`: which WorkloadSpread a new pod belongs to (§2.1–§2.2,
 *   pod-selection.ts), then by `admissionPath`: one unlimited subset takes the
 *   pod (§2.3 A); a StatefulSet's ordinal picks the subset (§2.3 B,
 *   statefulset-ordinal.ts); everything else reserves quota in the stored
 *   status (§2.3 C, subset-choice.ts) with the simulation schedule (D3). The
 *   answer carries the injected pod (§2.5, inject.ts) and the new status, or
 *   the `NoSubsetAvailable` event (D11).
 * - `decidePodDeletion`: whether a DELETE or an eviction frees quota, and the
 *   `deletingPods` record that does (§3.4, deletion.ts).
 *
 * Both read the cluster only through a `ClusterView` (cluster-view.ts) and
 * return one union. Two of its answers ask the caller for something first:
 * `read` — the view could not answer without the API server (make the read,
 * add it to the view, decide again); `commit` — the decision depends on the
 * WorkloadSpread's stored status, so it must be taken again on the freshest
 * copy, under the per-WorkloadSpread group commit (D13), with `current`. A
 * decision taken with `current` is final: `placed`/`recorded` carry the status
 * to write (if any) and nothing else needs the API server. Pure: `now` and
 * `newUid` come from the caller.
 */
import { EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { apiVersionGroup, controllerRef } from '../k8s/pod.ts';
import type { Pod } from '../k8s/types.ts';
import type { ClusterView, ReadRequest } from './cluster-view.ts';
import { recordDeletion, shouldRecordDeletion } from './deletion.ts';
import { noSubsetAvailableEvent, workloadSpreadRef, type EngineEvent } from './events.ts';
import { injectSubset } from './inject.ts';
import { readMarker } from './marker.ts';
import { matchWorkloadSpreadForPod, SUPPORTED_WORKLOAD_KINDS } from './pod-selection.ts';
import { podVersion } from './pod-version.ts';
import { admissionWorkloadReplicas } from './replicas.ts';
import { requestedOnNode, simulationCanHost, simulationScheduleEnabled } from './simulation-schedule.ts';
import { chooseSubsetByOrdinal, namesPodsByOrdinal } from './statefulset-ordinal.ts';
import { chooseSubset, type WorkloadReplicasResult } from './subset-choice.ts';
import { cloneSetRecreates } from './workload-version.ts';

/** How admission decides for a WorkloadSpread (spec §2.3; A is checked before B, as in the reference). */
export type AdmissionPath =
  /** §2.3 A: one subset without maxReplicas takes every pod; no status is read or written. */
  | { kind: 'single-unlimited'; subset: string }
  /** §2.3 B: a StatefulSet pod's ordinal picks the subset; no status is written, on create or delete. */
  | { kind: 'ordinal' }
  /** §2.3 C: quota reserved in (and released to) the stored status. */
  | { kind: 'quota' };

export function admissionPath(ws: WorkloadSpread): AdmissionPath {
  const subsets = ws.spec.subsets;
  const only = subsets[0];
  if (subsets.length === 1 && only !== undefined && only.maxReplicas === undefined) return { kind: 'single-unlimited', subset: only.name };
  if (namesPodsByOrdinal(ws.spec.targetRef)) return { kind: 'ordinal' };
  return { kind: 'quota' };
}

/** The view could not answer: make this read, then decide again. */
export interface ReadFirst {
  kind: 'read';
  read: ReadRequest;
}

/** The decision depends on the stored status: decide again with `current` under the group commit. */
export interface CommitFirst {
  kind: 'commit';
  ws: WorkloadSpread;
}

/** The freshest stored copy of the WorkloadSpread a `commit` answer named; undefined when it is gone. */
export interface Current {
  ws: WorkloadSpread | undefined;
}

// ---- pod CREATE ----

export interface PodCreateInput {
  view: ClusterView;
  /** The pod of the request, as the API server sent it (injection works on a copy of it). */
  pod: Pod;
  namespace: string;
  now: number;
  /** A fresh id for a pod created without a name (generateName), kept in its marker. */
  newUid: () => string;
  current?: Current;
}

export type PodCreateDecision =
  /** Not a pod any WorkloadSpread places (or its WorkloadSpread is gone): admitted unchanged. */
  | { kind: 'admit' }
  | ReadFirst
  | CommitFirst
  /** Placed: answer with the patch to `pod`, once `status` (when set) is stored. `injected` is false for a subset gone from the spec. */
  | { kind: 'placed'; ws: WorkloadSpread; subset: string; pod: Pod; injected: boolean; status?: WorkloadSpreadStatus }
  /** D11: no subset can take the pod; admitted unchanged, and `event` is recorded on the WorkloadSpread. */
  | { kind: 'unplaced'; ws: WorkloadSpread; event: EngineEvent }
  /** Refused (500): the workload controller retries. `cause` says which rule refused, for the logs. */
  | { kind: 'error'; cause: 'owner-not-found' | 'whitelist' | 'reservation' | 'injection'; message: string; ws?: WorkloadSpread };

/** Decides a pod CREATE (spec §2.1–§2.5). */
export function decidePodCreate(input: PodCreateInput): PodCreateDecision {
  const { view, pod, namespace } = input;
  if (input.current !== undefined) {
    const ws = input.current.ws;
    return ws === undefined ? { kind: 'admit' } : decideByQuota(input, ws);
  }
  const spreads = view.workloadSpreads(namespace);
  if (spreads.length === 0) return { kind: 'admit' };
  const whitelist = whitelistForCreate(view, pod);
  if ('error' in whitelist) return { kind: 'error', cause: 'whitelist', message: whitelist.error };
  const match = matchWorkloadSpreadForPod(pod, spreads, (ref) => view.object(namespace, ref), whitelist.whitelist);
  switch (match.kind) {
    case 'skip':
    case 'none':
      return { kind: 'admit' };
    case 'read':
      return match;
    case 'error':
      return { kind: 'error', cause: 'owner-not-found', message: match.message };
    case 'matched':
      break;
  }
  const ws = match.ws;
  const path = admissionPath(ws);
  switch (path.kind) {
    case 'single-unlimited':
      return place(ws, pod, path.subset, undefined, undefined);
    case 'ordinal': {
      const subset = chooseSubsetByOrdinal(ws, pod.metadata?.name ?? '');
      return subset === undefined ? unplaced(ws, pod) : place(ws, pod, subset, undefined, undefined);
    }
    case 'quota':
      return { kind: 'commit', ws };
  }
}

/** §2.3 C on the freshest copy: version, quota, simulation, reservation. */
function decideByQuota(input: PodCreateInput, ws: WorkloadSpread): PodCreateDecision {
  const { view, pod, namespace } = input;
  const whitelist = whitelistForCreate(view, pod);
  if ('error' in whitelist) return { kind: 'error', cause: 'whitelist', message: whitelist.error, ws };
  const version = podVersionIn(view, namespace, pod);
  if ('read' in version) return { kind: 'read', read: version.read };
  const replicas = workloadReplicasIn(view, namespace, ws, whitelist.whitelist);
  const choice = chooseSubset({
    ws,
    pod,
    version: version.version,
    workloadReplicas: replicas.get,
    now: input.now,
    newUid: input.newUid,
    ...(simulationScheduleEnabled(ws)
      ? { canHost: simulationCanHost(ws, pod, view.nodes(), (node) => requestedOnNode(view.podsOnNode(node))) }
      : {}),
  });
  if (replicas.read !== undefined) return { kind: 'read', read: replicas.read };
  switch (choice.kind) {
    case 'error':
      return { kind: 'error', cause: 'reservation', message: choice.message, ws };
    case 'none':
      return unplaced(ws, pod);
    case 'chosen':
      return place(ws, pod, choice.subset, choice.uid, choice.status);
  }
}

function place(ws: WorkloadSpread, pod: Pod, subset: string, uid: string | undefined, status: WorkloadSpreadStatus | undefined): PodCreateDecision {
  const injected = injectSubset(pod, ws, subset, uid);
  if (!injected.ok) return { kind: 'error', cause: 'injection', message: injected.error, ws };
  const decision: PodCreateDecision = { kind: 'placed', ws, subset, pod: injected.pod, injected: injected.injected };
  if (status !== undefined) decision.status = status;
  return decision;
}

/** D11: the pod gets no subset; the Warning names it (or its generateName) and the workload. */
function unplaced(ws: WorkloadSpread, pod: Pod): PodCreateDecision {
  const name = pod.metadata?.name ?? '';
  const target = ws.spec.targetRef;
  const event = noSubsetAvailableEvent(workloadSpreadRef(ws), name !== '' ? name : (pod.metadata?.generateName ?? ''), { kind: target.kind, name: target.name });
  return { kind: 'unplaced', ws, event };
}

/**
 * The whitelist for matching a new pod. If it cannot be read, pods of the
 * built-in kinds (and unowned pods) are still placed — the whitelist cannot
 * change their outcome; a pod with another owner is refused, since it may
 * belong to a whitelisted workload.
 */
function whitelistForCreate(view: ClusterView, pod: Pod): { whitelist: Whitelist } | { error: string } {
  const wl = view.whitelist();
  if (!('error' in wl)) return { whitelist: wl };
  const owner = controllerRef(pod);
  if (owner === undefined) return { whitelist: EMPTY_WHITELIST };
  const gv = apiVersionGroup(owner.apiVersion);
  const builtIn = gv.ok && SUPPORTED_WORKLOAD_KINDS.some((k) => k.group === gv.group && k.kind === owner.kind);
  return builtIn ? { whitelist: EMPTY_WHITELIST } : { error: `the custom workload whitelist cannot be read: ${wl.error}` };
}

// ---- pod DELETE and eviction ----

export interface PodDeletionInput {
  view: ClusterView;
  /** The pod a DELETE removes (its `oldObject`), or the name of the pod an eviction names. */
  subject: { pod: Pod } | { podName: string };
  namespace: string;
  now: number;
  current?: Current;
}

export type PodDeletionDecision =
  /** Nothing to record: allowed without side effects. */
  | { kind: 'admit' }
  | ReadFirst
  | CommitFirst
  /** Allowed once `status` (the deletion record) is stored. */
  | { kind: 'recorded'; ws: WorkloadSpread; status: WorkloadSpreadStatus }
  /** Refused (400), as the reference refuses when it cannot read or record. */
  | { kind: 'error'; message: string };

/** Decides the bookkeeping of a pod DELETE or eviction (spec §3). */
export function decidePodDeletion(input: PodDeletionInput): PodDeletionDecision {
  const { view, namespace } = input;
  let pod: Pod;
  if ('podName' in input.subject) {
    const found = view.pod(namespace, input.subject.podName);
    if ('read' in found) return { kind: 'read', read: found.read };
    // Gone for the API server too: nothing to record, and the API server answers the eviction 404
    // itself once admission passes — what `kubectl drain` expects of a pod already deleted.
    if ('notFound' in found) return { kind: 'admit' };
    if ('error' in found) return { kind: 'error', message: found.error };
    pod = found.found;
  } else {
    pod = input.subject.pod;
  }
  const marker = readMarker(pod);
  if (marker === undefined || !shouldRecordDeletion(pod, marker)) return { kind: 'admit' };

  let ws: WorkloadSpread;
  if (input.current !== undefined) {
    if (input.current.ws === undefined) return { kind: 'admit' };
    ws = input.current.ws;
  } else {
    const listed = view.workloadSpread(namespace, marker.name);
    if ('notFound' in listed) return { kind: 'admit' };
    if ('error' in listed) return { kind: 'error', message: `cannot read WorkloadSpread ${namespace}/${marker.name}: ${listed.error}` };
    ws = listed.found;
  }
  // The shortcut and the StatefulSet path never write (§3.4 via §2.3 A/B).
  if (admissionPath(ws).kind !== 'quota') return { kind: 'admit' };
  if (input.current === undefined) return { kind: 'commit', ws };

  const version = podVersionIn(view, namespace, pod);
  if ('read' in version) return { kind: 'read', read: version.read };
  const wl = view.whitelist();
  const replicas = workloadReplicasIn(view, namespace, ws, 'error' in wl ? EMPTY_WHITELIST : wl);
  const record = recordDeletion({ ws, pod, marker, version: version.version, workloadReplicas: replicas.get, now: input.now });
  if (replicas.read !== undefined) return { kind: 'read', read: replicas.read };
  if (record.changed) return { kind: 'recorded', ws, status: record.status };
  return record.error === undefined ? { kind: 'admit' } : { kind: 'error', message: record.error };
}

// ---- what both read ----

/**
 * The pod's version (§6.1, D12). A CloneSet-owned pod is versioned when its
 * CloneSet recreates pods; a CloneSet the view does not have counts as
 * recreating (its default), one it cannot say about needs a read.
 */
function podVersionIn(view: ClusterView, namespace: string, pod: Pod): { version: string } | { read: ReadRequest } {
  const owner = controllerRef(pod);
  if (owner === undefined || owner.kind !== 'CloneSet') return { version: podVersion(pod) };
  const gv = apiVersionGroup(owner.apiVersion);
  if (!gv.ok || gv.group !== 'apps.kruise.io') return { version: podVersion(pod) };
  const found = view.object(namespace, { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name });
  if ('read' in found) return { read: found.read };
  return { version: podVersion(pod, { cloneSetRecreate: 'found' in found ? cloneSetRecreates(found.found) : true }) };
}

/**
 * The workload replicas for initializing a version entry with percentages
 * (§5.1), as the lazy getter `chooseSubset`/`recordDeletion` call only when
 * they need it. The target is read by its real version; when the view has to
 * read it first, the getter fails and `read` says which read to make.
 */
function workloadReplicasIn(view: ClusterView, namespace: string, ws: WorkloadSpread, whitelist: Whitelist): { get: () => WorkloadReplicasResult; read: ReadRequest | undefined } {
  const out: { get: () => WorkloadReplicasResult; read: ReadRequest | undefined } = {
    read: undefined,
    get: () => {
      const ref = ws.spec.targetRef;
      const workload = view.object(namespace, ref, { exactVersion: true });
      if ('read' in workload) {
        out.read = workload.read;
        return { ok: false, error: `${ref.kind} ${namespace}/${ref.name} must be read first` };
      }
      if ('error' in workload) return { ok: false, error: `cannot read ${ref.kind} ${namespace}/${ref.name}: ${workload.error}` };
      return admissionWorkloadReplicas(ws, 'found' in workload ? workload.found : undefined, whitelist);
    },
  };
  return out;
}
