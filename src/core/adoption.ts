/**
 * Grouping a workload's pods into subsets, and adopting pods that carry no
 * marker (spec §4.3; user-issues #24).
 *
 * Pods whose marker names this WorkloadSpread go to the named subset, or to
 * the FAKE bucket when that subset no longer exists. Every other pod (created
 * before the WorkloadSpread, unmatched at admission, or marked by another
 * WorkloadSpread) is adopted when its node fits a subset: the subset with the
 * strictly greatest `matchesSubset` score wins, the earlier one on ties. The
 * adoption is returned as a metadata-only patch (the marker without a uid, plus
 * the subset patch's `metadata` unless the WorkloadSpread opts out), and the
 * grouped pods already carry it, so the same reconcile computes costs and
 * status with them.
 *
 * Quotas are counted per pod version, inactive pods included, exactly as the
 * reference does; an unlimited subset's quota is int32 max.
 * Start at `groupPodsBySubset`; `matchesSubset` holds the scoring.
 */
import { patchableMetadata } from '../api/subset-patch-policy.ts';
import {
  FAKE_SUBSET_NAME,
  IGNORE_PATCH_EXISTING_PODS_METADATA_ANNOTATION,
  MANAGED_LABEL,
  MANAGED_LABEL_VALUE,
  MATCHED_WORKLOADSPREAD_ANNOTATION,
} from '../api/keys.ts';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { deepClone, deepEqual, isPlainObject } from '../k8s/json.ts';
import { nodeSelectorMatches, preferredSchedulingTermsScore } from '../k8s/node-selector.ts';
import { POD_PATCH_META, strategicMergePatch } from '../k8s/strategic-merge.ts';
import { findUntoleratedTaint } from '../k8s/taints.ts';
import type { Node, NodeSelectorTerm, Pod, Toleration } from '../k8s/types.ts';
import { formatMarker, markedSubset } from './marker.ts';
import { subsetQuota } from './percent.ts';
import { podVersion } from './pod-version.ts';
import type { PodVersionOptions } from './pod-version.ts';

/** The pod's required node-selector terms with the subset's term ANDed in (spec §2.5 step 4). */
export function requiredTermsWithSubset(pod: Pod, term: NodeSelectorTerm): NodeSelectorTerm[] {
  const own = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const terms = Array.isArray(own) ? own : [];
  if (terms.length === 0) return [deepClone(term)];
  return terms.map((t) => ({
    ...deepClone(t),
    matchExpressions: [...(t.matchExpressions ?? []), ...(term.matchExpressions ?? [])].map((e) => deepClone(e)),
    matchFields: [...(t.matchFields ?? []), ...(term.matchFields ?? [])].map((e) => deepClone(e)),
  }));
}

/**
 * 1 when applying the subset's patch changes nothing but annotations (the
 * pod already looks like the subset's pods), else 0; 0 without a patch or
 * when the patch does not apply.
 */
export function podFitsPatch(pod: Pod, subset: Subset): 0 | 1 {
  if (subset.patch === undefined || subset.patch === null) return 0;
  const patched = strategicMergePatch(pod, subset.patch, POD_PATCH_META);
  if (!patched.ok || !isPlainObject(patched.value)) return 0;
  const withoutAnnotations = (obj: Record<string, unknown>): unknown => {
    const copy = deepClone(obj);
    const meta = copy['metadata'];
    if (isPlainObject(meta)) delete meta['annotations'];
    return copy;
  };
  return deepEqual(withoutAnnotations(pod as unknown as Record<string, unknown>), withoutAnnotations(patched.value)) ? 1 : 0;
}

/**
 * How well a pod already running on `node` fits a subset: -1 when it does not
 * (an untolerated taint of any effect, or the required term fails), else
 * `preferredWeight*100 + podFit*10 + (quota > 0 ? 1 : 0)`.
 */
export function matchesSubset(pod: Pod, node: Node, subset: Subset, quota: number): number {
  const tolerations: Toleration[] = [
    ...(Array.isArray(pod.spec?.tolerations) ? pod.spec.tolerations : []),
    ...(Array.isArray(subset.tolerations) ? subset.tolerations : []),
  ];
  const taints = Array.isArray(node.spec?.taints) ? node.spec.taints : [];
  if (findUntoleratedTaint(taints, tolerations) !== undefined) return -1;
  if (subset.requiredNodeSelectorTerm !== undefined && subset.requiredNodeSelectorTerm !== null) {
    const terms = requiredTermsWithSubset(pod, subset.requiredNodeSelectorTerm);
    if (!nodeSelectorMatches({ nodeSelectorTerms: terms }, node)) return -1;
  }
  const preferred = Array.isArray(subset.preferredNodeSelectorTerms)
    ? preferredSchedulingTermsScore(subset.preferredNodeSelectorTerms, node)
    : 0;
  return preferred * 100 + podFitsPatch(pod, subset) * 10 + (quota > 0 ? 1 : 0);
}

/** A metadata-only strategic merge patch that adopts a pod into a subset. */
export interface AdoptionPatch {
  metadata: { annotations: Record<string, unknown>; [key: string]: unknown };
}

export interface Adoption {
  pod: string;
  subset: string;
  patch: AdoptionPatch;
}

/** Whether the WorkloadSpread opts out of copying patch metadata onto adopted pods ("true", any case). */
export function ignoresPatchMetadata(ws: Pick<WorkloadSpread, 'metadata'>): boolean {
  const value = ws.metadata?.annotations?.[IGNORE_PATCH_EXISTING_PODS_METADATA_ANNOTATION];
  return typeof value === 'string' && value.toLowerCase() === 'true';
}

/**
 * The adoption patch: the subset patch's `metadata` (unless ignored) plus the
 * marker without a uid, and our managed label (so the pod's deletion reaches
 * the webhook). Identity and ownership fields (D20: name, namespace,
 * ownerReferences, finalizers, ...) and strategic-merge directives are never
 * copied onto a running pod, even from a WorkloadSpread stored before the rule.
 */
export function adoptionPatch(ws: Pick<WorkloadSpread, 'metadata'>, subset: Subset): AdoptionPatch {
  let metadata: Record<string, unknown> = {};
  const patch: unknown = subset.patch;
  if (!ignoresPatchMetadata(ws) && isPlainObject(patch) && isPlainObject(patch['metadata'])) {
    metadata = deepClone(patchableMetadata(patch['metadata']) ?? {});
  }
  const annotations = isPlainObject(metadata['annotations']) ? metadata['annotations'] : {};
  annotations[MATCHED_WORKLOADSPREAD_ANNOTATION] = formatMarker({ name: ws.metadata?.name ?? '', subset: subset.name });
  const labels = isPlainObject(metadata['labels']) ? metadata['labels'] : {};
  labels[MANAGED_LABEL] = MANAGED_LABEL_VALUE;
  return { metadata: { ...metadata, labels, annotations } };
}

/** The pod as it reads once the adoption patch is applied (a new object). */
function applyAdoption(pod: Pod, patch: AdoptionPatch): Pod {
  const merged = strategicMergePatch(pod, patch, POD_PATCH_META);
  if (merged.ok && isPlainObject(merged.value)) return merged.value as unknown as Pod;
  // The patch is metadata only, so this cannot fail on a well-formed pod; if
  // the pod is malformed, still record the marker so grouping stays consistent.
  const copy = deepClone(pod);
  copy.metadata = { ...(copy.metadata ?? {}) };
  copy.metadata.annotations = {
    ...(copy.metadata.annotations ?? {}),
    [MATCHED_WORKLOADSPREAD_ANNOTATION]: String(patch.metadata.annotations[MATCHED_WORKLOADSPREAD_ANNOTATION]),
  };
  copy.metadata.labels = { ...(copy.metadata.labels ?? {}), [MANAGED_LABEL]: MANAGED_LABEL_VALUE };
  return copy;
}

export interface GroupPodsInput {
  ws: WorkloadSpread;
  pods: readonly Pod[];
  nodeByName: (name: string) => Node | undefined;
  workloadReplicas: number;
  /** How pod versions are read (D12). */
  podVersionOptions?: PodVersionOptions;
}

export interface GroupedPods {
  /** Per subset name (and FAKE): the pods of every version, in listing order. */
  bySubset: Map<string, Pod[]>;
  /** Per pod version: per subset name (and FAKE) the pods, in listing order. */
  byVersion: Map<string, Map<string, Pod[]>>;
  /** Every pod in listing order, adopted ones with their adoption applied. */
  pods: Pod[];
  /** Pods to patch, in listing order. */
  adoptions: Adoption[];
}

function emptyBuckets(subsets: readonly Subset[]): Map<string, Pod[]> {
  const buckets = new Map<string, Pod[]>();
  for (const s of subsets) if (!buckets.has(s.name)) buckets.set(s.name, []);
  buckets.set(FAKE_SUBSET_NAME, []);
  return buckets;
}

/** spec §4.3: group per version, adopt unmarked pods, and take the union over versions. */
export function groupPodsBySubset(input: GroupPodsInput): GroupedPods {
  const { ws, workloadReplicas } = input;
  const wsName = ws.metadata.name ?? '';
  const subsets = ws.spec.subsets;
  const specNames = new Set(subsets.map((s) => s.name));

  const versions = new Map<string, number[]>();
  // Loops rather than per-call callbacks in this per-sync path (see k8s/pod-ranking.ts sortActivePods).
  const options = input.podVersionOptions ?? {};
  for (let index = 0; index < input.pods.length; index++) {
    const v = podVersion(input.pods[index] as Pod, options);
    const list = versions.get(v);
    if (list === undefined) versions.set(v, [index]);
    else list.push(index);
  }

  const placed: { subset: string; pod: Pod }[] = new Array(input.pods.length);
  const adoptionAt = new Map<number, Adoption>();
  const byVersion = new Map<string, Map<string, Pod[]>>();

  for (const [version, indexes] of versions) {
    const quota = new Map<string, number>();
    for (const s of subsets) quota.set(s.name, subsetQuota(s.maxReplicas, workloadReplicas));
    for (const i of indexes) {
      const own = markedSubset(input.pods[i] as Pod, wsName);
      if (own !== undefined && specNames.has(own)) quota.set(own, (quota.get(own) ?? 0) - 1);
    }

    const buckets = emptyBuckets(subsets);
    for (const i of indexes) {
      const pod = input.pods[i] as Pod;
      let subset: string = FAKE_SUBSET_NAME;
      let grouped = pod;
      const own = markedSubset(pod, wsName);
      if (own !== undefined) {
        if (specNames.has(own)) subset = own;
      } else {
        const best = bestSubsetFor(pod, subsets, quota, input.nodeByName);
        if (best !== undefined) {
          const patch = adoptionPatch(ws, best);
          adoptionAt.set(i, { pod: pod.metadata?.name ?? '', subset: best.name, patch });
          grouped = applyAdoption(pod, patch);
          quota.set(best.name, (quota.get(best.name) ?? 0) - 1);
          subset = best.name;
        }
      }
      buckets.get(subset)?.push(grouped);
      placed[i] = { subset, pod: grouped };
    }
    byVersion.set(version, buckets);
  }

  const bySubset = emptyBuckets(subsets);
  const adoptions: Adoption[] = [];
  const pods: Pod[] = [];
  for (let i = 0; i < placed.length; i++) {
    const p = placed[i];
    if (p === undefined) continue;
    bySubset.get(p.subset)?.push(p.pod);
    pods.push(p.pod);
    const adoption = adoptionAt.get(i);
    if (adoption !== undefined) adoptions.push(adoption);
  }
  return { bySubset, byVersion, pods, adoptions };
}

function bestSubsetFor(
  pod: Pod,
  subsets: readonly Subset[],
  quota: ReadonlyMap<string, number>,
  nodeByName: (name: string) => Node | undefined,
): Subset | undefined {
  const nodeName = pod.spec?.nodeName;
  if (typeof nodeName !== 'string' || nodeName === '') return undefined;
  const node = nodeByName(nodeName);
  if (node === undefined) return undefined;
  let best: Subset | undefined;
  let bestScore = -1;
  for (const subset of subsets) {
    const score = matchesSubset(pod, node, subset, quota.get(subset.name) ?? 0);
    if (score > bestScore) {
      best = subset;
      bestScore = score;
    }
  }
  return best;
}
