/**
 * D21: how many pods of one version each subset holds, counted from the pods
 * themselves — those a view shows, plus the placements admission answered
 * that the view does not show yet — for subsets that keep no reservations in
 * the status (unlimited, without minReplicas). A pod's birth cost in such a
 * subset of a balanced spec is the cost of its place, so its place must be
 * known without a status write per pod. Pure.
 *
 * A view answers with a `PlacedTally`. What a pod is counted under is one
 * definition, `placedKeys`: the manager's cache keeps the counts as counts
 * of its pod store (kube/caches.ts), so admission asks two map lookups per
 * subset instead of reading every pod of the WorkloadSpread; `tallyPods`
 * builds the same tally from a list (tests, `plan`).
 */
import type { Pod } from '../k8s/types.ts';
import { isPodActive } from '../k8s/pod.ts';
import type { PlacedTally, RecentPlacement } from './cluster-view.ts';
import { readMarker } from './marker.ts';
import { podVersion, type PodVersionOptions } from './pod-version.ts';

/**
 * What one pod adds to the tallies: the keys it is counted under (see
 * `placedCountKeys`) and the keys it answers to (`placedAnswerKey`); empty
 * when its marker names no subset. A pod's version depends on whether its
 * CloneSet recreates pods only for a CloneSet owner, so most pods have one
 * count key and a CloneSet's pods one per reading.
 */
export function placedKeys(pod: Pod): { counts: string[]; answers: string[] } {
  const marker = readMarker(pod);
  const namespace = pod.metadata?.namespace ?? '';
  if (marker === undefined || marker.name === '' || marker.subset === '') return { counts: [], answers: [] };
  const answers: string[] = [];
  const name = pod.metadata?.name;
  if (typeof name === 'string' && name !== '') answers.push(placedAnswerKey(namespace, marker.name, name));
  if (marker.uid !== undefined && marker.uid !== '') answers.push(placedAnswerKey(namespace, marker.name, marker.uid));
  if (!isPodActive(pod)) return { counts: [], answers };
  const plain = podVersion(pod, {});
  const recreate = podVersion(pod, { cloneSetRecreate: true });
  const counts = plain === recreate
    ? [countKey('*', namespace, marker.name, marker.subset, plain)]
    : [countKey('d', namespace, marker.name, marker.subset, plain), countKey('r', namespace, marker.name, marker.subset, recreate)];
  return { counts, answers };
}

function countKey(reading: '*' | 'd' | 'r', namespace: string, wsName: string, subset: string, version: string): string {
  return `${reading}\u0000${namespace}\u0000${wsName}\u0000${subset}\u0000${version}`;
}

/** The keys whose counts add up to the active pods of `subset` and `version` (under either reading, or under this one). */
export function placedCountKeys(namespace: string, wsName: string, subset: string, version: string, options: PodVersionOptions): [string, string] {
  return [countKey('*', namespace, wsName, subset, version), countKey(options.cloneSetRecreate === true ? 'r' : 'd', namespace, wsName, subset, version)];
}

/** The key under which a pod answers to a placement: its name, or the uid in its marker. */
export function placedAnswerKey(namespace: string, wsName: string, key: string): string {
  return `${namespace}\u0000${wsName}\u0000${key}`;
}

/** The tally of a list of pods (any WorkloadSpread's; only `wsName`'s in `namespace` count). */
export function tallyPods(pods: readonly Pod[], namespace: string, wsName: string, version: string, options: PodVersionOptions = {}): PlacedTally {
  const counts = new Map<string, number>();
  const answers = new Set<string>();
  for (const pod of pods) {
    const keys = placedKeys(pod);
    for (const k of keys.counts) counts.set(k, (counts.get(k) ?? 0) + 1);
    for (const k of keys.answers) answers.add(k);
  }
  return {
    count: (subset) => placedCountKeys(namespace, wsName, subset, version, options).reduce((sum, k) => sum + (counts.get(k) ?? 0), 0),
    shows: (key) => answers.has(placedAnswerKey(namespace, wsName, key)),
  };
}

/**
 * Active pods of the tally's version per subset, plus the recent placements
 * of that version no pod answers to yet (by name, or by marker uid for a pod
 * created without a name). A pod that is no longer active still answers to
 * its placement, so a finished pod is not counted twice.
 */
export function countPlaced(tally: PlacedTally, recent: readonly RecentPlacement[], version: string): (subset: string) => number {
  const pending = new Map<string, number>();
  const seen = new Set<string>();
  for (const r of recent) {
    if (r.version !== version || seen.has(r.key)) continue;
    seen.add(r.key);
    if (!tally.shows(r.key)) pending.set(r.subset, (pending.get(r.subset) ?? 0) + 1);
  }
  return (subset) => tally.count(subset) + (pending.get(subset) ?? 0);
}
