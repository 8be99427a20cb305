/**
 * The scheduler's view of each node: its allocatable resources and the
 * requests of the pods on it (the pods the API server shows bound there, plus
 * the pods this scheduler has *assumed* there and is still binding), as
 * upstream's scheduler cache (pkg/scheduler/backend/cache) keeps them.
 *
 * Invariants:
 * - a pod key is on at most one node; re-adding a pod moves it;
 * - an assumed pod counts exactly like a bound one, so two pods scheduled back
 *   to back see each other's requests before the watch reports the binding;
 *   the informer's version of the pod replaces the assumption when it arrives
 *   (confirmation), `forget` drops it when the binding fails;
 * - terminating pods still count (their containers are still running);
 *   terminal pods (Succeeded/Failed) are never added (the scheduler's pod
 *   informer excludes them, as upstream's does);
 * - pods may sit on a node the cache has no Node object for (yet); they count
 *   as soon as the Node appears, as upstream's "ghost" NodeInfos do.
 * Two request totals per node: `requested` (what the pods ask for, used by the
 * NodeResourcesFit filter) and `nonZeroRequested` (cpu/memory with upstream's
 * defaults of 100m / 200Mi per container that asks for none, used by scoring).
 * Start at `SchedulerCache`.
 */
import { podResourceRequests } from '../../k8s/pod.ts';
import { ceilValue, milliValue } from '../../k8s/quantity.ts';
import { asArray, asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import type { Node, Pod } from '../../k8s/types.ts';

/** Upstream's schedutil.DefaultMilliCPURequest / DefaultMemoryRequest. */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

export interface Resources {
  cpuMilli: number;
  memory: number;
  ephemeralStorage: number;
  /** Extended, hugepages and other scalar resources, by name (base units). */
  scalar: Map<string, number>;
}

export interface Allocatable extends Resources {
  pods: number;
}

export interface HostPort {
  hostIP: string;
  protocol: string;
  port: number;
}

/** What the scheduler remembers of one pod. */
export interface PodRecord {
  key: string;
  uid: string;
  namespace: string;
  name: string;
  nodeName: string;
  labels: Record<string, string>;
  requests: Resources;
  nonZero: { cpuMilli: number; memory: number };
  hostPorts: HostPort[];
  priority: number;
  terminating: boolean;
  assumed: boolean;
}

export interface NodeInfo {
  readonly name: string;
  /** Undefined while only pods name this node (the Node object is unknown). */
  node: Node | undefined;
  allocatable: Allocatable;
  requested: Resources;
  nonZeroRequested: { cpuMilli: number; memory: number };
  readonly pods: Map<string, PodRecord>;
}

export const emptyResources = (): Resources => ({ cpuMilli: 0, memory: 0, ephemeralStorage: 0, scalar: new Map() });

/** Resource names the NodeResourcesFit plugin checks besides cpu, memory, ephemeral-storage and pods. */
export function isScalarResourceName(name: string): boolean {
  if (name.startsWith('hugepages-') || name.startsWith('attachable-volumes-')) return true;
  // Extended resources and prefixed native resources carry a domain.
  return name.includes('/') && !name.startsWith('requests.');
}

function toResources(requests: Record<string, number>): Resources {
  const r = emptyResources();
  for (const [name, value] of Object.entries(requests)) {
    if (name === 'cpuMilli') r.cpuMilli = value;
    else if (name === 'memory') r.memory = value;
    else if (name === 'ephemeral-storage') r.ephemeralStorage = value;
    else if (isScalarResourceName(name)) r.scalar.set(name, value);
  }
  return r;
}

/** A copy of `pod` in which every container that requests no cpu/memory requests upstream's defaults. */
function withDefaultRequests(pod: Pod): Pod {
  const spec = asRecord(pod.spec);
  if (spec === undefined) return pod;
  const podLevel = asRecord(asRecord(spec['resources'])?.['requests']);
  const fill = (list: unknown): unknown =>
    (asArray(list) ?? []).map((c) => {
      const container = asRecord(c);
      if (container === undefined) return c;
      const requests = { ...(asRecord(asRecord(container['resources'])?.['requests']) ?? {}) };
      // With pod-level requests set, a default applies only where neither level names the resource.
      if (requests['cpu'] === undefined && podLevel?.['cpu'] === undefined) requests['cpu'] = `${DEFAULT_MILLI_CPU_REQUEST}m`;
      if (requests['memory'] === undefined && podLevel?.['memory'] === undefined) requests['memory'] = String(DEFAULT_MEMORY_REQUEST);
      return { ...container, resources: { ...(asRecord(container['resources']) ?? {}), requests } };
    });
  return { ...pod, spec: { ...spec, containers: fill(spec['containers']) as Pod['spec']['containers'], initContainers: fill(spec['initContainers']) as Pod['spec']['containers'] } };
}

function hostPortsOf(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  // Upstream's NodePorts plugin looks at the regular containers only.
  for (const c of asArray(pod.spec?.containers) ?? []) {
    for (const p of asArray(asRecord(c)?.['ports']) ?? []) {
      const port = asRecord(p);
      const hostPort = asNumber(port?.['hostPort']);
      if (hostPort === undefined || hostPort <= 0) continue;
      const hostIP = asString(port?.['hostIP']) ?? '';
      const protocol = asString(port?.['protocol']) ?? '';
      out.push({ hostIP: hostIP === '' ? '0.0.0.0' : hostIP, protocol: protocol === '' ? 'TCP' : protocol, port: hostPort });
    }
  }
  return out;
}

export function podKeyOf(pod: Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** The scheduler's record of `pod` as if it ran on `nodeName`. */
export function podRecord(pod: Pod, nodeName: string, assumed: boolean): PodRecord {
  const labels = asRecord(pod.metadata?.labels) as Record<string, string> | undefined;
  const nonZero = podResourceRequests(withDefaultRequests(pod));
  return {
    key: podKeyOf(pod),
    uid: pod.metadata?.uid ?? '',
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    nodeName,
    labels: labels ?? {},
    requests: toResources(podResourceRequests(pod)),
    nonZero: { cpuMilli: nonZero.cpuMilli, memory: nonZero.memory },
    hostPorts: hostPortsOf(pod),
    priority: asNumber(pod.spec?.priority) ?? 0,
    terminating: pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null,
    assumed,
  };
}

/** Quantity.MilliValue / Quantity.Value (rounded up, as upstream); 0 when unparseable. */
function quantity(value: unknown, milli: boolean): number {
  if (typeof value !== 'string' && typeof value !== 'number') return 0;
  return (milli ? milliValue(value) : ceilValue(value)) ?? 0;
}

/** A node's `status.allocatable` (falling back to capacity, as the kubelet reports both). */
export function nodeAllocatable(node: Node | undefined): Allocatable {
  const status = asRecord(node?.status);
  const list = asRecord(status?.['allocatable']) ?? asRecord(status?.['capacity']) ?? {};
  const a: Allocatable = { ...emptyResources(), pods: 0 };
  for (const [name, value] of Object.entries(list)) {
    if (name === 'cpu') a.cpuMilli = quantity(value, true);
    else if (name === 'memory') a.memory = quantity(value, false);
    else if (name === 'ephemeral-storage') a.ephemeralStorage = quantity(value, false);
    else if (name === 'pods') a.pods = quantity(value, false);
    else if (isScalarResourceName(name)) a.scalar.set(name, quantity(value, false));
  }
  return a;
}

function addTo(into: Resources, r: Resources, sign: 1 | -1): void {
  into.cpuMilli += sign * r.cpuMilli;
  into.memory += sign * r.memory;
  into.ephemeralStorage += sign * r.ephemeralStorage;
  for (const [name, v] of r.scalar) into.scalar.set(name, (into.scalar.get(name) ?? 0) + sign * v);
}

export class SchedulerCache {
  readonly #nodes = new Map<string, NodeInfo>();
  readonly #podNode = new Map<string, string>();

  /** Adds or refreshes a Node object. */
  setNode(node: Node): void {
    const name = node.metadata?.name ?? '';
    if (name === '') return;
    const info = this.#info(name);
    info.node = node;
    info.allocatable = nodeAllocatable(node);
  }

  removeNode(name: string): void {
    const info = this.#nodes.get(name);
    if (info === undefined) return;
    info.node = undefined;
    info.allocatable = nodeAllocatable(undefined);
    if (info.pods.size === 0) this.#nodes.delete(name);
  }

  /** Records a pod the API server shows bound to a node (confirms an assumption of it). */
  addPod(pod: Pod): void {
    const nodeName = pod.spec?.nodeName ?? '';
    if (nodeName === '') return;
    this.#place(podRecord(pod, nodeName, false));
  }

  /** Places `pod` on `nodeName` before the binding is confirmed. */
  assume(pod: Pod, nodeName: string): PodRecord {
    const record = podRecord(pod, nodeName, true);
    this.#place(record);
    return record;
  }

  /** Drops an assumption (the binding failed); a confirmed pod stays. */
  forget(key: string): void {
    const record = this.#record(key);
    if (record?.assumed === true) this.removePod(key);
  }

  isAssumed(key: string): boolean {
    return this.#record(key)?.assumed === true;
  }

  removePod(key: string): void {
    const nodeName = this.#podNode.get(key);
    if (nodeName === undefined) return;
    this.#podNode.delete(key);
    const info = this.#nodes.get(nodeName);
    const record = info?.pods.get(key);
    if (info === undefined || record === undefined) return;
    info.pods.delete(key);
    addTo(info.requested, record.requests, -1);
    info.nonZeroRequested.cpuMilli -= record.nonZero.cpuMilli;
    info.nonZeroRequested.memory -= record.nonZero.memory;
    if (info.node === undefined && info.pods.size === 0) this.#nodes.delete(nodeName);
  }

  get(name: string): NodeInfo | undefined {
    const info = this.#nodes.get(name);
    return info?.node === undefined ? undefined : info;
  }

  /** The nodes with a Node object, by name. */
  nodes(): NodeInfo[] {
    return [...this.#nodes.values()].filter((i) => i.node !== undefined).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The pod records (bound and assumed) on every node. */
  podCount(): number {
    return this.#podNode.size;
  }

  #record(key: string): PodRecord | undefined {
    const nodeName = this.#podNode.get(key);
    return nodeName === undefined ? undefined : this.#nodes.get(nodeName)?.pods.get(key);
  }

  #info(name: string): NodeInfo {
    let info = this.#nodes.get(name);
    if (info === undefined) {
      info = { name, node: undefined, allocatable: nodeAllocatable(undefined), requested: emptyResources(), nonZeroRequested: { cpuMilli: 0, memory: 0 }, pods: new Map() };
      this.#nodes.set(name, info);
    }
    return info;
  }

  #place(record: PodRecord): void {
    this.removePod(record.key);
    const info = this.#info(record.nodeName);
    info.pods.set(record.key, record);
    this.#podNode.set(record.key, record.nodeName);
    addTo(info.requested, record.requests, 1);
    info.nonZeroRequested.cpuMilli += record.nonZero.cpuMilli;
    info.nonZeroRequested.memory += record.nonZero.memory;
  }
}
