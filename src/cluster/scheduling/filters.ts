/**
 * The scheduler's PreFilter and Filter stages and the message of a pod that
 * fits nowhere, with the plugins, order, status codes and wording of
 * kube-scheduler 1.32's default profile (pkg/scheduler/framework/plugins):
 *
 *   NodeUnschedulable → TaintToleration → NodeAffinity → NodePorts → NodeResourcesFit
 *
 * A node is rejected by the FIRST plugin that fails (upstream's
 * RunFilterPlugins stops there), with all of that plugin's reasons; the
 * message counts reasons over nodes ("2 Insufficient cpu"), sorted as strings
 * (so "10 …" sorts before "2 …", as Go's sort.Strings does), then appends the
 * DefaultPreemption post-filter's own summary. NodeName is not run: pods that
 * name a node are never this scheduler's. PodTopologySpread (DoNotSchedule),
 * InterPodAffinity and the volume plugins are not emulated (see the scheduler's
 * module comment).
 *
 * Status codes matter for the preemption summary: nodes rejected with
 * `UnschedulableAndUnresolvable` are "Preemption is not helpful for
 * scheduling"; nodes rejected with `Unschedulable` (resources, ports) are where
 * preemption would look for victims. Pure functions; start at `findFeasibleNodes`.
 */
import { podMatchesNodeSelectorAndAffinity } from '../../k8s/node-selector.ts';
import { findUntoleratedTaint, isSchedulingTaint, tolerationsTolerateTaint } from '../../k8s/taints.ts';
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { Pod, Taint } from '../../k8s/types.ts';
import type { HostPort, NodeInfo, PodRecord } from './node-info.ts';

export type FilterCode = 'Unschedulable' | 'UnschedulableAndUnresolvable';

export interface FilterStatus {
  code: FilterCode;
  reasons: string[];
  /** The plugin that rejected the node. */
  plugin: string;
}

export const ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable";
export const ERR_REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
export const ERR_REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports";
export const ERR_REASON_AFFINITY_CONFLICT = 'pod affinity terms conflict';
export const ERR_NO_NODES_AVAILABLE = 'no nodes available to schedule pods';
export const PREEMPTION_NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const NO_PREEMPTION_VICTIMS = 'No preemption victims found for incoming pod';

const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

const rejected = (plugin: string, code: FilterCode, ...reasons: string[]): FilterStatus => ({ plugin, code, reasons });

function nodeUnschedulable(pod: Pod, info: NodeInfo): FilterStatus | undefined {
  if (asRecord(info.node?.spec)?.['unschedulable'] !== true) return undefined;
  // A pod that tolerates the unschedulable taint tolerates spec.unschedulable too.
  if (tolerationsTolerateTaint(pod.spec?.tolerations, UNSCHEDULABLE_TAINT)) return undefined;
  return rejected('NodeUnschedulable', 'UnschedulableAndUnresolvable', ERR_REASON_UNSCHEDULABLE);
}

function taintToleration(pod: Pod, info: NodeInfo): FilterStatus | undefined {
  const taints = asArray(asRecord(info.node?.spec)?.['taints']) as Taint[] | undefined;
  const taint = findUntoleratedTaint(taints, pod.spec?.tolerations, isSchedulingTaint);
  if (taint === undefined) return undefined;
  return rejected('TaintToleration', 'UnschedulableAndUnresolvable', `node(s) had untolerated taint {${asString(taint.key) ?? ''}: ${asString(taint.value) ?? ''}}`);
}

function nodeAffinity(pod: Pod, info: NodeInfo): FilterStatus | undefined {
  if (info.node === undefined || podMatchesNodeSelectorAndAffinity(pod, info.node)) return undefined;
  return rejected('NodeAffinity', 'UnschedulableAndUnresolvable', ERR_REASON_NODE_AFFINITY);
}

/** HostPortInfo.CheckConflict: 0.0.0.0 conflicts with every address on the same protocol and port. */
function portConflicts(wanted: HostPort, used: HostPort): boolean {
  if (wanted.port !== used.port || wanted.protocol !== used.protocol) return false;
  return wanted.hostIP === '0.0.0.0' || used.hostIP === '0.0.0.0' || wanted.hostIP === used.hostIP;
}

function nodePorts(record: PodRecord, info: NodeInfo): FilterStatus | undefined {
  if (record.hostPorts.length === 0) return undefined;
  for (const other of info.pods.values()) {
    for (const used of other.hostPorts) {
      if (record.hostPorts.some((w) => portConflicts(w, used))) return rejected('NodePorts', 'Unschedulable', ERR_REASON_NODE_PORTS);
    }
  }
  return undefined;
}

/** NodeResourcesFit's fitsRequest: pods, cpu, memory, ephemeral-storage, then scalar resources by name. */
function nodeResourcesFit(record: PodRecord, info: NodeInfo): FilterStatus | undefined {
  const reasons: string[] = [];
  let unresolvable = false;
  const alloc = info.allocatable;
  const used = info.requested;
  if (info.pods.size + 1 > alloc.pods) reasons.push('Too many pods');
  const req = record.requests;
  const check = (name: string, want: number, allocatable: number, requested: number) => {
    if (want > 0 && want > allocatable - requested) {
      reasons.push(`Insufficient ${name}`);
      // More than the whole node: evicting other pods cannot help.
      if (want > allocatable) unresolvable = true;
    }
  };
  check('cpu', req.cpuMilli, alloc.cpuMilli, used.cpuMilli);
  check('memory', req.memory, alloc.memory, used.memory);
  check('ephemeral-storage', req.ephemeralStorage, alloc.ephemeralStorage, used.ephemeralStorage);
  for (const [name, want] of [...req.scalar].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    check(name, want, alloc.scalar.get(name) ?? 0, used.scalar.get(name) ?? 0);
  }
  if (reasons.length === 0) return undefined;
  return { plugin: 'NodeResourcesFit', code: unresolvable ? 'UnschedulableAndUnresolvable' : 'Unschedulable', reasons };
}

/** Runs the filter plugins in order; undefined when the node passes them all. */
export function filterNode(pod: Pod, record: PodRecord, info: NodeInfo): FilterStatus | undefined {
  return nodeUnschedulable(pod, info) ?? taintToleration(pod, info) ?? nodeAffinity(pod, info) ?? nodePorts(record, info) ?? nodeResourcesFit(record, info);
}

export type PreFilterResult = { ok: true; nodeNames?: Set<string> } | { ok: false; status: FilterStatus };

/**
 * NodeAffinity's PreFilter: when every required term pins `metadata.name In
 * [...]`, only those nodes are candidates (terms ORed, requirements within a
 * term intersected); pins that exclude each other reject the pod outright.
 */
export function preFilter(pod: Pod): PreFilterResult {
  const affinity = asRecord(asRecord(pod.spec?.affinity)?.['nodeAffinity']);
  const required = asRecord(affinity?.['requiredDuringSchedulingIgnoredDuringExecution']);
  const terms = asArray(required?.['nodeSelectorTerms']);
  if (terms === undefined) return { ok: true };
  let names: Set<string> | undefined;
  for (const t of terms) {
    let termNames: Set<string> | undefined;
    for (const f of asArray(asRecord(t)?.['matchFields']) ?? []) {
      const r = asRecord(f);
      if (r?.['key'] !== 'metadata.name' || r['operator'] !== 'In') continue;
      const values = new Set((asArray(r['values']) ?? []).filter((v): v is string => typeof v === 'string'));
      termNames = termNames === undefined ? values : new Set([...termNames].filter((n) => values.has(n)));
    }
    // A term without a name pin lets every node through: the terms are ORed.
    if (termNames === undefined) return { ok: true };
    names = new Set([...(names ?? []), ...termNames]);
  }
  if (names !== undefined && names.size === 0) return { ok: false, status: rejected('NodeAffinity', 'UnschedulableAndUnresolvable', ERR_REASON_AFFINITY_CONFLICT) };
  return names === undefined ? { ok: true } : { ok: true, nodeNames: names };
}

/** Why a pod fits nowhere: what upstream's FitError carries. */
export interface Diagnosis {
  numAllNodes: number;
  /** Rejection per node name, for every node (absent-from-PreFilter nodes included). */
  statuses: Map<string, FilterStatus>;
  /** Set when a PreFilter rejected the pod before any node was looked at. */
  preFilter?: FilterStatus;
  /** The plugins that rejected the pod somewhere (drives which cluster events retry it). */
  rejectedBy: Set<string>;
}

export type FeasibleResult = { feasible: NodeInfo[]; diagnosis: Diagnosis };

/** PreFilter, then every filter on every candidate node (upstream looks at all nodes below 100). */
export function findFeasibleNodes(pod: Pod, record: PodRecord, nodes: readonly NodeInfo[]): FeasibleResult {
  const diagnosis: Diagnosis = { numAllNodes: nodes.length, statuses: new Map(), rejectedBy: new Set() };
  const pre = preFilter(pod);
  if (!pre.ok) {
    diagnosis.preFilter = pre.status;
    diagnosis.rejectedBy.add(pre.status.plugin);
    for (const n of nodes) diagnosis.statuses.set(n.name, pre.status);
    return { feasible: [], diagnosis };
  }
  let candidates = nodes;
  if (pre.nodeNames !== undefined) {
    const names = pre.nodeNames;
    const absent = rejected('NodeAffinity', 'UnschedulableAndUnresolvable', "node(s) didn't satisfy plugin(s) [NodeAffinity]");
    candidates = nodes.filter((n) => names.has(n.name));
    for (const n of nodes) if (!names.has(n.name)) diagnosis.statuses.set(n.name, absent);
    if (candidates.length < nodes.length) diagnosis.rejectedBy.add('NodeAffinity');
  }
  const feasible: NodeInfo[] = [];
  for (const info of candidates) {
    const status = filterNode(pod, record, info);
    if (status === undefined) feasible.push(info);
    else {
      diagnosis.statuses.set(info.name, status);
      diagnosis.rejectedBy.add(status.plugin);
    }
  }
  return { feasible, diagnosis };
}

/** "a, b, c" of `count reason` entries, sorted as strings (Go's sort.Strings on the histogram). */
function histogram(counts: Map<string, number>): string {
  return [...counts].map(([reason, n]) => `${n} ${reason}`).sort().join(', ');
}

/**
 * DefaultPreemption's summary when it finds no candidate. Preemption itself is
 * not emulated: a node rejected for resources or ports reads as having no victims.
 */
export function preemptionMessage(pod: Pod, diagnosis: Diagnosis): string {
  if (asString(pod.spec?.['preemptionPolicy']) === 'Never') return 'preemption: not eligible due to preemptionPolicy=Never.';
  const counts = new Map<string, number>();
  for (const status of diagnosis.statuses.values()) {
    const reason = status.code === 'UnschedulableAndUnresolvable' ? PREEMPTION_NOT_HELPFUL : NO_PREEMPTION_VICTIMS;
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  return `preemption: 0/${diagnosis.numAllNodes} nodes are available: ${histogram(counts)}.`;
}

/** FitError.Error(): "0/N nodes are available: <prefilter or filter reasons>. <post-filter message>". */
export function fitErrorMessage(diagnosis: Diagnosis, postFilterMessage: string): string {
  let message = `0/${diagnosis.numAllNodes} nodes are available:`;
  if (diagnosis.preFilter !== undefined) {
    message += ` ${diagnosis.preFilter.reasons.join(', ')}.`;
  } else {
    const counts = new Map<string, number>();
    for (const status of diagnosis.statuses.values()) {
      for (const reason of status.reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
    }
    if (counts.size > 0) message += ` ${histogram(counts)}.`;
  }
  if (postFilterMessage !== '') message += ` ${postFilterMessage}`;
  return message;
}

/** The message a pod that fits nowhere gets in its condition and FailedScheduling event. */
export function unschedulableMessage(pod: Pod, diagnosis: Diagnosis): string {
  if (diagnosis.numAllNodes === 0) return ERR_NO_NODES_AVAILABLE;
  return fitErrorMessage(diagnosis, preemptionMessage(pod, diagnosis));
}
