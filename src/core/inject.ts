/**
 * Injection of a subset into a new pod (spec §2.5), in the reference's exact
 * order: tolerations, node affinity (preferred, then required), the subset's
 * strategic merge patch, then labels/annotations and the marker annotation —
 * plus, beyond the reference, our `workloadspread.io/managed` label (the pod
 * DELETE webhook's objectSelector).
 *
 * Works on a copy of the raw pod JSON (deep when the subset has a patch;
 * otherwise only what injection writes into is copied, the rest shared and
 * never changed): fields this project does not know survive untouched,
 * because the webhook answers with the JSON Patch between the request's pod
 * and this result. Observable details kept on purpose:
 * `affinity.nodeAffinity` appears as `{}` even for a subset without affinity;
 * tolerations are appended without de-duplication; the patch is applied last,
 * so it can override what the earlier steps injected (tolerations have no
 * merge key and are replaced wholesale).
 *
 * D20, defensively: a patch that would change the pod's identity or ownership
 * (or, without `allowPrivileged`, a privilege-bearing field) is not applied at
 * all — validation refuses such patches, but a WorkloadSpread stored before
 * the rule must not make the webhook answer `replace /metadata/namespace`.
 * The pod keeps the placement (affinity, tolerations, marker) and the result
 * names what was refused (`refusedPatch`) for the caller's Warning event.
 */
import { MANAGED_LABEL, MANAGED_LABEL_VALUE, MATCHED_WORKLOADSPREAD_ANNOTATION } from '../api/keys.ts';
import { DEFAULT_SUBSET_PATCH_POLICY, forbiddenPodChanges, type SubsetPatchPolicy } from '../api/subset-patch-policy.ts';
import { named, type Subset, type WorkloadSpread } from '../api/workloadspread.ts';
import { deepClone, isPlainObject } from '../k8s/json.ts';
import { POD_PATCH_META, strategicMergePatch } from '../k8s/strategic-merge.ts';
import type { NodeAffinity, NodeSelectorTerm, Pod } from '../k8s/types.ts';
import { formatMarker } from './marker.ts';

export type InjectResult =
  /** `refusedPatch`: the subset patch was not applied because it changes these protected fields (D20). */
  | { ok: true; pod: Pod; injected: boolean; refusedPatch?: string[] }
  | { ok: false; error: string };

/**
 * Injects subset `subsetName` of `ws` into `pod`; `uid` is the id reserved for
 * a pod without a name (it goes into the marker). A subset missing from the
 * spec (a stale status) leaves the pod unchanged without error.
 */
export function injectSubset(pod: Pod, ws: WorkloadSpread, subsetName: string, uid?: string, policy: SubsetPatchPolicy = DEFAULT_SUBSET_PATCH_POLICY): InjectResult {
  const subset = named(ws.spec.subsets, subsetName);
  if (subset === undefined) return { ok: true, pod: deepClone(pod), injected: false };

  // Without a patch, only the objects injection writes into are copied; the rest (containers, volumes, …)
  // is shared with the request's pod, so the JSON Patch diff skips it by identity.
  const clone = subset.patch === undefined || subset.patch === null ? placementCopy(pod) : (deepClone(pod) as Pod);
  if (!isPlainObject(clone.spec)) clone.spec = {} as Pod['spec'];
  const spec = clone.spec;

  if (Array.isArray(subset.tolerations) && subset.tolerations.length > 0) {
    const existing = Array.isArray(spec.tolerations) ? spec.tolerations : [];
    spec.tolerations = [...existing, ...deepClone(subset.tolerations)];
  }

  if (!isPlainObject(spec.affinity)) spec.affinity = {};
  if (!isPlainObject(spec.affinity.nodeAffinity)) spec.affinity.nodeAffinity = {};
  const nodeAffinity: NodeAffinity = spec.affinity.nodeAffinity;
  appendPreferred(nodeAffinity, subset);
  andRequired(nodeAffinity, subset);

  let result: Pod = clone;
  let refusedPatch: string[] | undefined;
  if (subset.patch !== undefined && subset.patch !== null) {
    const patched = strategicMergePatch(clone, subset.patch, POD_PATCH_META);
    if (!patched.ok) return { ok: false, error: `failed to apply the patch of subset ${subsetName}: ${patched.error}` };
    if (!isPlainObject(patched.value)) return { ok: false, error: `the patch of subset ${subsetName} did not yield a pod object` };
    const forbiddenChanges = forbiddenPodChanges(clone, patched.value, policy);
    if (forbiddenChanges.length > 0) refusedPatch = forbiddenChanges;
    else result = patched.value as Pod;
    // The Priority admission plugin resolved `priority` from the old class; clearing it lets the
    // API server resolve it again for the new one instead of rejecting the mismatch (issue #1607).
    // Go compares plain strings, so an absent class and "" are the same class.
    const before = pod.spec?.priorityClassName ?? '';
    if (isPlainObject(result.spec) && (result.spec.priorityClassName ?? '') !== before) delete result.spec.priority;
  }

  if (!isPlainObject(result.metadata)) result.metadata = {};
  const metadata = result.metadata;
  if (!isPlainObject(metadata.labels)) metadata.labels = {};
  if (!isPlainObject(metadata.annotations)) metadata.annotations = {};
  const marker = uid === undefined || uid === '' ? { name: ws.metadata?.name ?? '', subset: subsetName } : { name: ws.metadata?.name ?? '', subset: subsetName, uid };
  metadata.annotations[MATCHED_WORKLOADSPREAD_ANNOTATION] = formatMarker(marker);
  metadata.labels[MANAGED_LABEL] = MANAGED_LABEL_VALUE;
  return refusedPatch === undefined ? { ok: true, pod: result, injected: true } : { ok: true, pod: result, injected: true, refusedPatch };
}

/**
 * A copy of `pod` in which every object the placement steps (tolerations,
 * node affinity, labels, annotations) write into is the copy's own: the pod,
 * its metadata, labels and annotations, its spec, affinity, node affinity and
 * required node affinity. Arrays are replaced, never changed in place, and
 * everything else is shared with `pod`, which is never changed.
 */
function placementCopy(pod: Pod): Pod {
  const copy: Pod = { ...pod };
  if (isPlainObject(pod.metadata)) {
    const metadata = { ...pod.metadata };
    if (isPlainObject(metadata.labels)) metadata.labels = { ...metadata.labels };
    if (isPlainObject(metadata.annotations)) metadata.annotations = { ...metadata.annotations };
    copy.metadata = metadata;
  }
  if (isPlainObject(pod.spec)) {
    const spec = { ...pod.spec };
    if (isPlainObject(spec.affinity)) {
      const affinity = { ...spec.affinity };
      if (isPlainObject(affinity.nodeAffinity)) {
        const nodeAffinity = { ...affinity.nodeAffinity };
        const required = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
        if (isPlainObject(required)) nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { ...required };
        affinity.nodeAffinity = nodeAffinity;
      }
      spec.affinity = affinity;
    }
    copy.spec = spec;
  }
  return copy;
}

function appendPreferred(nodeAffinity: NodeAffinity, subset: Subset): void {
  const preferred = subset.preferredNodeSelectorTerms;
  if (!Array.isArray(preferred) || preferred.length === 0) return;
  const existing = Array.isArray(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution)
    ? nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution
    : [];
  nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution = [...existing, ...deepClone(preferred)];
}

/**
 * The pod's required terms are ORed, so the subset term is ANDed into each of
 * them; a pod without terms simply gets the subset term. The subset's
 * requirements are copied once and the copies shared by every term of the
 * result: a pod may carry thousands of terms, nothing writes into an injected
 * pod, and the strategic merge patch applied after works on its own copy.
 */
function andRequired(nodeAffinity: NodeAffinity, subset: Subset): void {
  const term = subset.requiredNodeSelectorTerm;
  if (!isPlainObject(term)) return;
  if (!isPlainObject(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution)) {
    nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: [] };
  }
  const required = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  const terms: NodeSelectorTerm[] = Array.isArray(required.nodeSelectorTerms) ? required.nodeSelectorTerms : [];
  if (terms.length === 0) {
    required.nodeSelectorTerms = [deepClone(term)];
    return;
  }
  const expressions = Array.isArray(term.matchExpressions) ? deepClone(term.matchExpressions) : [];
  const fields = Array.isArray(term.matchFields) ? deepClone(term.matchFields) : [];
  required.nodeSelectorTerms = terms.map((existing) => andTerm(isPlainObject(existing) ? existing : {}, expressions, fields));
}

function andTerm(existing: NodeSelectorTerm, expressions: NonNullable<NodeSelectorTerm['matchExpressions']>, fields: NonNullable<NodeSelectorTerm['matchFields']>): NodeSelectorTerm {
  const out: NodeSelectorTerm = { ...existing };
  if (expressions.length > 0) {
    out.matchExpressions = [...(Array.isArray(existing.matchExpressions) ? existing.matchExpressions : []), ...expressions];
  }
  if (fields.length > 0) {
    out.matchFields = [...(Array.isArray(existing.matchFields) ? existing.matchFields : []), ...fields];
  }
  return out;
}
