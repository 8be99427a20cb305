/**
 * Builders for the scheduling tests (not used by production code): nodes and
 * pods as plain objects, and a `SchedulerCache` holding them. They live in
 * the embedded cluster's own test support because they build its internals.
 */
import type { Node, Pod, Taint, Toleration } from '../../k8s/types.ts';
import { SchedulerCache, type NodeInfo } from '../scheduling/node-info.ts';

export interface NodeFixture {
  name: string;
  labels?: Record<string, string>;
  cpu?: string;
  memory?: string;
  pods?: string;
  extra?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
}

export function node(f: NodeFixture): Node {
  const allocatable = { cpu: f.cpu ?? '4', memory: f.memory ?? '16Gi', pods: f.pods ?? '110', 'ephemeral-storage': '100Gi', ...(f.extra ?? {}) };
  const spec: Record<string, unknown> = {};
  if (f.taints !== undefined) spec['taints'] = f.taints;
  if (f.unschedulable === true) spec['unschedulable'] = true;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: f.name, labels: { 'kubernetes.io/hostname': f.name, ...(f.labels ?? {}) } },
    spec,
    status: { capacity: allocatable, allocatable },
  };
}

export interface PodFixture {
  name?: string;
  namespace?: string;
  cpu?: string;
  memory?: string;
  requests?: Record<string, string>;
  labels?: Record<string, string>;
  nodeSelector?: Record<string, string>;
  affinity?: Record<string, unknown>;
  tolerations?: Toleration[];
  hostPort?: number;
  nodeName?: string;
  priority?: number;
  preemptionPolicy?: string;
  extraSpec?: Record<string, unknown>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
}

export function pod(f: PodFixture = {}): Pod {
  const requests: Record<string, string> = { ...(f.requests ?? {}) };
  if (f.cpu !== undefined) requests['cpu'] = f.cpu;
  if (f.memory !== undefined) requests['memory'] = f.memory;
  const container: Record<string, unknown> = { name: 'app', image: 'nginx' };
  if (Object.keys(requests).length > 0) container['resources'] = { requests };
  if (f.hostPort !== undefined) container['ports'] = [{ containerPort: 80, hostPort: f.hostPort, protocol: 'TCP' }];
  const spec: Record<string, unknown> = { containers: [container], ...(f.extraSpec ?? {}) };
  if (f.nodeSelector !== undefined) spec['nodeSelector'] = f.nodeSelector;
  if (f.affinity !== undefined) spec['affinity'] = f.affinity;
  if (f.tolerations !== undefined) spec['tolerations'] = f.tolerations;
  if (f.nodeName !== undefined) spec['nodeName'] = f.nodeName;
  if (f.priority !== undefined) spec['priority'] = f.priority;
  if (f.preemptionPolicy !== undefined) spec['preemptionPolicy'] = f.preemptionPolicy;
  const metadata: Pod['metadata'] = { name: f.name ?? 'p', namespace: f.namespace ?? 'default', uid: `uid-${f.name ?? 'p'}`, labels: f.labels ?? {} };
  if (f.ownerReferences !== undefined) metadata.ownerReferences = f.ownerReferences;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: spec as Pod['spec'] };
}

/** A cache with these nodes and (bound) pods; answers the NodeInfos by name. */
export function cacheWith(nodes: Node[], pods: Pod[] = []): { cache: SchedulerCache; infos: NodeInfo[]; info(name: string): NodeInfo } {
  const cache = new SchedulerCache();
  for (const n of nodes) cache.setNode(n);
  for (const p of pods) cache.addPod(p);
  return {
    cache,
    infos: cache.nodes(),
    info: (name) => {
      const i = cache.get(name);
      if (i === undefined) throw new Error(`no node ${name}`);
      return i;
    },
  };
}
