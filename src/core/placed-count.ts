/**
 * D21: how many pods of one version each subset holds, counted from the pods
 * themselves — those a view shows, plus the placements admission answered
 * that the view does not show yet — for subsets that keep no reservations in
 * the status (unlimited, without minReplicas). A pod's birth cost in such a
 * subset of a balanced spec is the cost of its place, so its place must be
 * known without a status write per pod. Pure.
 */
import type { Pod } from '../k8s/types.ts';
import { isPodActive } from '../k8s/pod.ts';
import type { RecentPlacement } from './cluster-view.ts';
import { readMarker } from './marker.ts';
import { podVersion, type PodVersionOptions } from './pod-version.ts';

/**
 * Active pods of `version` per subset of the WorkloadSpread `wsName`: the
 * pods shown (`pods`, the view's `placedPods`) and the recent placements
 * none of them answers to (by name, or by marker uid for a pod created
 * without a name). A shown pod that is no longer active still answers to its
 * placement, so a finished pod is not counted twice.
 */
export function countPlaced(pods: readonly Pod[], recent: readonly RecentPlacement[], wsName: string, version: string, options: PodVersionOptions = {}): Map<string, number> {
  const counts = new Map<string, number>();
  const shown = new Set<string>();
  for (const pod of pods) {
    const marker = readMarker(pod);
    if (marker === undefined || marker.name !== wsName || marker.subset === '') continue;
    const name = pod.metadata?.name;
    if (typeof name === 'string' && name !== '') shown.add(name);
    if (marker.uid !== undefined) shown.add(marker.uid);
    if (!isPodActive(pod) || podVersion(pod, options) !== version) continue;
    counts.set(marker.subset, (counts.get(marker.subset) ?? 0) + 1);
  }
  for (const r of recent) {
    if (r.version !== version || shown.has(r.key)) continue;
    counts.set(r.subset, (counts.get(r.subset) ?? 0) + 1);
  }
  return counts;
}
