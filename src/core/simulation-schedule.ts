/**
 * The admission-time simulation schedule (DECISIONS D3; the reference leaves
 * `disableSimulationSchedule` as a TODO, spec §1.1, §9.1): in Adaptive mode a
 * subset is skipped when none of its nodes could host the pod right now.
 *
 * A node can host the pod when, as the Kubernetes scheduler's filters would
 * say: it is not cordoned; it matches the pod's nodeSelector and required node
 * affinity (and, for a subset, the subset's required term); the pod's
 * tolerations (plus the subset's) tolerate every NoSchedule/NoExecute taint;
 * and allocatable cpu, memory and pod count minus what bound pods already
 * request leave room for the pod's requests (cpu and memory are checked only
 * when the pod requests them, as NodeResourcesFit does).
 *
 * Start at `simulationCanHost`, the closure admission passes to
 * `chooseSubset` as `canHost`; `requestedOnNode` sums what the pods bound to
 * a node request, as the scheduler counts them.
 */
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { nodeSelectorTermMatches, podMatchesNodeSelectorAndAffinity } from '../k8s/node-selector.ts';
import { podPhase, podResourceRequests } from '../k8s/pod.ts';
import { ceilValue, milliValue } from '../k8s/quantity.ts';
import { findUntoleratedTaint, isSchedulingTaint } from '../k8s/taints.ts';
import type { Node, Pod, Taint } from '../k8s/types.ts';
import { injectSubset } from './inject.ts';

/** What the pods already bound to a node request. */
export interface NodeRequested {
  cpuMilli: number;
  /** Bytes. */
  memory: number;
  /** Number of pods. */
  pods: number;
}

/**
 * What one pod adds to the requests of the node it is bound to: every pod
 * that has not finished counts, terminating ones included, as the scheduler
 * counts them; a finished pod adds nothing (undefined).
 */
export function nodeRequestOf(pod: Pod): NodeRequested | undefined {
  const phase = podPhase(pod);
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const r = podResourceRequests(pod);
  return { cpuMilli: r.cpuMilli, memory: r.memory, pods: 1 };
}

/** What the pods bound to a node request: the sum of `nodeRequestOf`. */
export function requestedOnNode(pods: readonly Pod[]): NodeRequested {
  const out: NodeRequested = { cpuMilli: 0, memory: 0, pods: 0 };
  for (const pod of pods) {
    const r = nodeRequestOf(pod);
    if (r === undefined) continue;
    out.cpuMilli += r.cpuMilli;
    out.memory += r.memory;
    out.pods += r.pods;
  }
  return out;
}

/** Whether D3 applies: Adaptive strategy without `disableSimulationSchedule`. */
export function simulationScheduleEnabled(ws: WorkloadSpread): boolean {
  const strategy = ws.spec.scheduleStrategy;
  return strategy?.type === 'Adaptive' && strategy.adaptive?.disableSimulationSchedule !== true;
}

/** A resource of the node's allocatable (capacity when allocatable is not reported); 0 when absent or malformed. */
function allocatable(node: Node, name: string, milli: boolean): number {
  const raw: unknown = node.status?.allocatable?.[name] ?? node.status?.capacity?.[name];
  if (typeof raw !== 'string' && typeof raw !== 'number') return 0;
  return (milli ? milliValue(raw) : ceilValue(raw)) ?? 0;
}

/** Whether `node` could take `pod` now, given what its bound pods already request. */
export function nodeCanHostPod(node: Node, pod: Pod, requested: NodeRequested): boolean {
  return nodeFits(node, podFit(pod), requested);
}

/** What the node checks read of a pod, read once for all the nodes it is tried on. */
interface PodFit {
  pod: Pod;
  tolerations: NonNullable<NonNullable<Pod['spec']>['tolerations']>;
  wants: ReturnType<typeof podResourceRequests>;
}

function podFit(pod: Pod): PodFit {
  return { pod, tolerations: Array.isArray(pod.spec?.tolerations) ? pod.spec.tolerations : [], wants: podResourceRequests(pod) };
}

function nodeFits(node: Node, fit: PodFit, requested: NodeRequested): boolean {
  if (node.spec?.unschedulable === true) return false;
  if (!podMatchesNodeSelectorAndAffinity(fit.pod, node)) return false;
  const taints: Taint[] = Array.isArray(node.spec?.taints) ? node.spec.taints : [];
  if (findUntoleratedTaint(taints, fit.tolerations, isSchedulingTaint) !== undefined) return false;

  if (requested.pods + 1 > allocatable(node, 'pods', false)) return false;
  const { wants } = fit;
  if (wants.cpuMilli > 0 && wants.cpuMilli > allocatable(node, 'cpu', true) - requested.cpuMilli) return false;
  if (wants.memory > 0 && wants.memory > allocatable(node, 'memory', false) - requested.memory) return false;
  return true;
}

/**
 * Whether some node of the subset (matching its required term) could host the
 * pod with the subset's tolerations added. Pass the pod as it would be after
 * injection when the subset's patch matters (see `simulationCanHost`).
 */
export function subsetCanHostPod(
  subset: Subset,
  pod: Pod,
  nodes: readonly Node[],
  requestedOnNode: (nodeName: string) => NodeRequested,
): boolean {
  return subsetHosts(subset, podFit(pod), nodes, requestedOnNode);
}

/** `subsetCanHostPod` on a pod's fit read once: the subset's term is checked first (node labels only), then the rest. */
function subsetHosts(subset: Subset, base: PodFit, nodes: readonly Node[], requestedOnNode: (nodeName: string) => NodeRequested): boolean {
  const term = subset.requiredNodeSelectorTerm;
  const extra = Array.isArray(subset.tolerations) ? subset.tolerations : [];
  const fit: PodFit = extra.length === 0 ? base : { ...base, tolerations: [...base.tolerations, ...extra] };
  for (const node of nodes) {
    if ((term === undefined || term === null || nodeSelectorTermMatches(term, node)) && nodeFits(node, fit, requestedOnNode(node.metadata?.name ?? ''))) return true;
  }
  return false;
}

/**
 * The `canHost` of `chooseSubset` for one admission: each subset is tried with
 * the pod as injection would make it. Without a subset patch, injection adds
 * only the subset's required term (ANDed into the pod's own terms) and its
 * tolerations, so the pod is tried as it is against the term and with the
 * tolerations added — the same answer without building the injected pod. With
 * a patch (which may change resources or the node selector) the injected pod
 * is tried. A subset whose patch cannot be applied is left to injection to
 * report, so it is not ruled out here.
 */
export function simulationCanHost(
  ws: WorkloadSpread,
  pod: Pod,
  nodes: readonly Node[],
  requestedOnNode: (nodeName: string) => NodeRequested,
): (subset: Subset) => boolean {
  let base: PodFit | undefined;
  return (subset) => {
    if (subset.patch === undefined || subset.patch === null) return subsetHosts(subset, (base ??= podFit(pod)), nodes, requestedOnNode);
    const injected = injectSubset(pod, ws, subset.name);
    if (!injected.ok) return true;
    // The injected pod already carries the subset's term and tolerations (or what its patch made of them).
    const fit = podFit(injected.pod);
    for (const node of nodes) if (nodeFits(node, fit, requestedOnNode(node.metadata?.name ?? ''))) return true;
    return false;
  };
}
