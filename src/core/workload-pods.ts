/**
 * Which pods a WorkloadSpread manages, as the controller sees them (the pure
 * part of spec §5.2, `getPodsForWorkloadSpread`; user-issues #4, #18, #20).
 *
 * - Job: pods owned by the Job that also match `job.spec.selector`; listed
 *   even when parallelism is 0.
 * - A workload scaled to 0 still has the pods it has: the reference lists none
 *   ("replicas 0 → no pods"), so the status forgot pods whose deletion was
 *   still pending or had been refused, and the next scale-up reserved their
 *   slots again — a subset above its limit, found by the fault soak (issue 14).
 * - Deployment: the pods of every non-deleting ReplicaSet it controls,
 *   including ReplicaSets scaled to 0 (old revisions still hold pods during a
 *   rollout); with no ReplicaSet, pods owned by the Deployment itself.
 * - ReplicaSet being deleted: none.
 * - Other kinds: pods owned by the workload's UID; when none are, and the
 *   caller knows a selector (a custom kind's scale subresource), the pods that
 *   selector matches (Argo Rollouts: pods are owned by its ReplicaSets).
 * Then `targetFilter.selector`, when set, narrows the set (D5, shared with
 * admission through `targetFilterSelectsPod`).
 * Ownership is any ownerReference with the UID, as the reference's owner index.
 * Replica counting lives in `replicas.ts`; fetching lives in the kube layer.
 */
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { isPlainObject } from '../k8s/json.ts';
import { labelSelectorAsSelector } from '../k8s/label-selector.ts';
import { apiVersionGroup, controllerRef } from '../k8s/pod.ts';
import type { KubeObject, LabelSelector, Pod } from '../k8s/types.ts';
import { targetFilterSelectsPod } from './pod-selection.ts';

export interface WorkloadPodsInput {
  ws: WorkloadSpread;
  /** The target workload; undefined when it does not exist. */
  workload: KubeObject | undefined;
  /** ReplicaSets of the namespace (only read for a Deployment target). */
  replicaSets: readonly KubeObject[];
  /** Candidate pods of the namespace, in listing order. */
  pods: readonly Pod[];
  /** The workload's replica count (`controllerWorkloadReplicas`). */
  workloadReplicas: number;
  /** A custom workload's pod selector (e.g. from its scale subresource), used when no pod is owned by it. */
  fallbackSelector?: { matches(labels: Record<string, string>): boolean };
}

export type WorkloadPods = { ok: true; pods: Pod[] } | { ok: false; error: string };

function ownedByAny(pod: Pod, uids: ReadonlySet<string>): boolean {
  const refs = pod.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return false;
  for (const r of refs) if (r !== null && typeof r === 'object' && uids.has(r.uid)) return true;
  return false;
}

/**
 * The pods owned by one of `uids` (and, when given, matching `selector`).
 * A loop over one set, not a per-call callback: this runs in every sync (see k8s/pod-ranking.ts sortActivePods).
 */
function podsOwnedBy(pods: readonly Pod[], uids: ReadonlySet<string>, selector?: { matches(labels: Record<string, string>): boolean }): Pod[] {
  const out: Pod[] = [];
  for (const p of pods) if (ownedByAny(p, uids) && (selector === undefined || selector.matches(p.metadata?.labels ?? {}))) out.push(p);
  return out;
}

function isDeleting(obj: KubeObject): boolean {
  const ts = obj.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null && ts !== '';
}

function ownedPods(input: WorkloadPodsInput, workload: KubeObject): Pod[] {
  const uid = workload.metadata?.uid;
  if (typeof uid !== 'string' || uid === '') return [];
  const owned = podsOwnedBy(input.pods, new Set([uid]));
  if (owned.length > 0 || input.fallbackSelector === undefined) return owned;
  const selector = input.fallbackSelector;
  return input.pods.filter((p) => selector.matches(p.metadata?.labels ?? {}));
}

function deploymentPods(input: WorkloadPodsInput, deployment: KubeObject): Pod[] {
  const uid = deployment.metadata?.uid;
  if (typeof uid !== 'string' || uid === '') return [];
  const replicaSetUids = new Set<string>();
  for (const rs of input.replicaSets) {
    if (isDeleting(rs) || controllerRef(rs)?.uid !== uid) continue;
    const rsUid = rs.metadata?.uid;
    if (typeof rsUid === 'string' && rsUid !== '') replicaSetUids.add(rsUid);
  }
  return podsOwnedBy(input.pods, replicaSetUids.size > 0 ? replicaSetUids : new Set([uid]));
}

function jobPods(input: WorkloadPodsInput, job: KubeObject): Pod[] {
  const uid = job.metadata?.uid;
  if (typeof uid !== 'string' || uid === '') return [];
  const spec = job['spec'];
  const raw = isPlainObject(spec) ? spec['selector'] : undefined;
  // A Job without a selector selects nothing, as Kubernetes treats a nil selector.
  if (!isPlainObject(raw)) return [];
  const converted = labelSelectorAsSelector(raw as LabelSelector);
  if (!converted.ok) return [];
  return podsOwnedBy(input.pods, new Set([uid]), converted.selector);
}

/** The pods the WorkloadSpread manages (spec §5.2). */
export function podsForWorkloadSpread(input: WorkloadPodsInput): WorkloadPods {
  const { ws, workload } = input;
  const target = ws.spec.targetRef;
  if (workload === undefined) return { ok: true, pods: [] };
  const gv = apiVersionGroup(target.apiVersion);
  const group = gv.ok ? gv.group : '';

  let pods: Pod[];
  if (group === 'batch' && target.kind === 'Job') {
    pods = jobPods(input, workload);
  } else if (group === 'apps' && target.kind === 'Deployment') {
    pods = deploymentPods(input, workload);
  } else if (group === 'apps' && target.kind === 'ReplicaSet' && isDeleting(workload)) {
    pods = [];
  } else {
    pods = ownedPods(input, workload);
  }

  const selected: Pod[] = [];
  for (const pod of pods) {
    const r = targetFilterSelectsPod(ws, pod.metadata?.labels);
    if (!r.ok) return { ok: false, error: `targetFilter.selector: ${r.error}` };
    if (r.selected) selected.push(pod);
  }
  return { ok: true, pods: selected };
}
