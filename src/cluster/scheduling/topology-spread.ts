/**
 * PodTopologySpread's scoring (pkg/scheduler/framework/plugins/podtopologyspread,
 * 1.32): prefer nodes whose topology domains hold fewer pods of the same set.
 *
 * Which constraints score a pod:
 * - the pod's own `topologySpreadConstraints` with `whenUnsatisfiable:
 *   ScheduleAnyway` (then every node must carry every topology key);
 * - otherwise the cluster's system defaults (hostname maxSkew 3, zone maxSkew
 *   5), selecting the pods that the Services, ReplicaSet or StatefulSet of the
 *   pod select (`defaultSelector`) — nodes without a zone label still spread
 *   by hostname.
 * A node's raw score is Σ over constraints of (matching pods in its domain ×
 * ln(number of domains + 2) + maxSkew − 1), rounded; raw scores are then
 * inverted onto 0..100: 100 · (max + min − s) / max (all 100 when max is 0).
 * Pods are counted on every node the constraint's inclusion policies admit:
 * by default those matching the pod's required node affinity/selector
 * (nodeAffinityPolicy Honor) whatever their taints (nodeTaintsPolicy
 * Ignore); terminating pods and pods of other namespaces never count.
 * `DoNotSchedule` constraints (a filter) are not emulated. Pure.
 */
import { labelSelectorAsSelector, type Requirement } from '../../k8s/label-selector.ts';
import { newRequirement, requirementMatches } from '../../k8s/label-requirement.ts';
import { podMatchesNodeSelectorAndAffinity } from '../../k8s/node-selector.ts';
import { asArray, asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import { findUntoleratedTaint, isSchedulingTaint } from '../../k8s/taints.ts';
import type { KubeObject, LabelSelector, Pod, Taint, Toleration } from '../../k8s/types.ts';
import type { NodeInfo } from './node-info.ts';

export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';

export interface SpreadConstraint {
  topologyKey: string;
  maxSkew: number;
  /** ANDed; an empty list selects nothing here (upstream skips an empty selector). */
  selector: readonly Requirement[];
  /** nodeAffinityPolicy Honor (the default): count only nodes matching the pod's node selector/affinity. */
  honorAffinity: boolean;
  /** nodeTaintsPolicy Honor (default Ignore): count only nodes whose NoSchedule/NoExecute taints the pod tolerates. */
  honorTaints: boolean;
}

export const SYSTEM_DEFAULT_CONSTRAINTS: readonly { topologyKey: string; maxSkew: number }[] = [
  { topologyKey: LABEL_HOSTNAME, maxSkew: 3 },
  { topologyKey: LABEL_ZONE, maxSkew: 5 },
];

/** What `defaultSelector` needs to know about the objects that select pods. */
export interface SelectorSources {
  /** Services in the pod's namespace (their `spec.selector`). */
  services: readonly KubeObject[];
  /** The ReplicaSet or StatefulSet named by the pod's controller reference, if known. */
  owner?: KubeObject | undefined;
}

/**
 * helper.DefaultSelector: the merged selectors of the Services that select the
 * pod, ANDed with the selector of its ReplicaSet or StatefulSet controller.
 */
export function defaultSelector(pod: Pod, sources: SelectorSources): Requirement[] {
  const podLabels = (asRecord(pod.metadata?.labels) ?? {}) as Record<string, string>;
  const merged = new Map<string, string>();
  for (const svc of sources.services) {
    const sel = asRecord(asRecord(svc['spec'])?.['selector']);
    if (sel === undefined || Object.keys(sel).length === 0) continue;
    if (!Object.entries(sel).every(([k, v]) => podLabels[k] === v)) continue;
    for (const [k, v] of Object.entries(sel)) if (typeof v === 'string') merged.set(k, v);
  }
  const reqs: Requirement[] = [];
  for (const [k, v] of [...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const r = newRequirement(k, '=', [v]);
    if (r.ok) reqs.push(r.requirement);
  }
  const owner = sources.owner;
  if (owner !== undefined && (owner.kind === 'ReplicaSet' || owner.kind === 'StatefulSet')) {
    const parsed = labelSelectorAsSelector(asRecord(owner['spec'])?.['selector'] as LabelSelector | undefined);
    if (parsed.ok) reqs.push(...parsed.selector.requirements);
  }
  return reqs;
}

/** The pod's own ScheduleAnyway constraints (selector plus matchLabelKeys); undefined when it declares none at all. */
export function podSoftConstraints(pod: Pod): SpreadConstraint[] | undefined {
  const declared = asArray(pod.spec?.['topologySpreadConstraints']);
  if (declared === undefined || declared.length === 0) return undefined;
  const podLabels = (asRecord(pod.metadata?.labels) ?? {}) as Record<string, string>;
  const out: SpreadConstraint[] = [];
  for (const raw of declared) {
    const c = asRecord(raw);
    if (c === undefined || c['whenUnsatisfiable'] !== 'ScheduleAnyway') continue;
    const parsed = labelSelectorAsSelector(asRecord(c['labelSelector']) as LabelSelector | undefined);
    if (!parsed.ok) continue;
    const selector = [...parsed.selector.requirements];
    for (const key of asArray(c['matchLabelKeys']) ?? []) {
      if (typeof key !== 'string' || podLabels[key] === undefined) continue;
      const r = newRequirement(key, 'in', [podLabels[key]]);
      if (r.ok) selector.push(r.requirement);
    }
    out.push({
      topologyKey: asString(c['topologyKey']) ?? '',
      maxSkew: asNumber(c['maxSkew']) ?? 1,
      selector,
      honorAffinity: c['nodeAffinityPolicy'] !== 'Ignore',
      honorTaints: c['nodeTaintsPolicy'] === 'Honor',
    });
  }
  return out;
}

function countMatching(info: NodeInfo, selector: readonly Requirement[], namespace: string): number {
  if (selector.length === 0) return 0;
  let n = 0;
  for (const p of info.pods.values()) {
    if (p.terminating || p.namespace !== namespace) continue;
    if (selector.every((r) => requirementMatches(r, p.labels))) n++;
  }
  return n;
}

function labelsOf(info: NodeInfo): Record<string, string> {
  return (asRecord(info.node?.metadata?.labels) ?? {}) as Record<string, string>;
}

/**
 * Normalized PodTopologySpread scores of the feasible nodes; undefined when
 * the plugin skips the pod (no constraints apply).
 */
export function topologySpreadScores(pod: Pod, feasible: readonly NodeInfo[], allNodes: readonly NodeInfo[], defaults: readonly Requirement[]): Map<string, number> | undefined {
  if (allNodes.length === 0) return undefined;
  const own = podSoftConstraints(pod);
  const requireAll = own !== undefined;
  const constraints: SpreadConstraint[] = own ?? (defaults.length === 0 ? [] : SYSTEM_DEFAULT_CONSTRAINTS.map((c) => ({ ...c, selector: defaults, honorAffinity: true, honorTaints: false })));
  if (constraints.length === 0) return undefined;
  const hasAllKeys = (labels: Record<string, string>) => constraints.every((c) => Object.prototype.hasOwnProperty.call(labels, c.topologyKey));

  const ignored = new Set<string>();
  const domainCounts = constraints.map(() => new Map<string, number>());
  for (const info of feasible) {
    const labels = labelsOf(info);
    if (requireAll && !hasAllKeys(labels)) {
      ignored.add(info.name);
      continue;
    }
    constraints.forEach((c, i) => {
      if (c.topologyKey === LABEL_HOSTNAME) return;
      const value = labels[c.topologyKey] ?? '';
      if (!domainCounts[i]!.has(value)) domainCounts[i]!.set(value, 0);
    });
  }
  const weights = constraints.map((c, i) => Math.log((c.topologyKey === LABEL_HOSTNAME ? feasible.length - ignored.size : domainCounts[i]!.size) + 2));

  const namespace = pod.metadata?.namespace ?? '';
  const tolerations = (asArray(pod.spec?.tolerations) ?? []) as Toleration[];
  for (const info of allNodes) {
    const node = info.node;
    if (node === undefined) continue;
    const labels = labelsOf(info);
    if (requireAll && !hasAllKeys(labels)) continue;
    const matchesAffinity = podMatchesNodeSelectorAndAffinity(pod, node);
    const tolerated = findUntoleratedTaint(asArray(asRecord(node.spec)?.['taints']) as Taint[] | undefined, tolerations, isSchedulingTaint) === undefined;
    constraints.forEach((c, i) => {
      if ((c.honorAffinity && !matchesAffinity) || (c.honorTaints && !tolerated)) return;
      const counts = domainCounts[i]!;
      const value = labels[c.topologyKey] ?? '';
      const current = counts.get(value);
      if (current === undefined) return;
      counts.set(value, current + countMatching(info, c.selector, namespace));
    });
  }

  const raw = new Map<string, number>();
  for (const info of feasible) {
    if (ignored.has(info.name)) continue;
    const labels = labelsOf(info);
    let score = 0;
    constraints.forEach((c, i) => {
      const value = labels[c.topologyKey];
      if (value === undefined) return;
      const count = c.topologyKey === LABEL_HOSTNAME ? countMatching(info, c.selector, namespace) : (domainCounts[i]!.get(value) ?? 0);
      score += count * weights[i]! + (c.maxSkew - 1);
    });
    raw.set(info.name, Math.round(score));
  }
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  for (const s of raw.values()) {
    min = Math.min(min, s);
    max = Math.max(max, s);
  }
  const out = new Map<string, number>();
  for (const info of feasible) {
    const s = raw.get(info.name);
    if (s === undefined) out.set(info.name, 0);
    else out.set(info.name, max === 0 ? 100 : Math.trunc((100 * (max + min - s)) / max));
  }
  return out;
}
