/**
 * Fake nodes: the Node object a kubelet registers for a `NodeSpec`
 * (k8s/node-specs.ts: what a cluster is asked for), shaped like a real 1.32
 * node: the well-known labels
 * (`kubernetes.io/hostname`, `kubernetes.io/os`, `kubernetes.io/arch` and
 * their beta twins; any of them overridable), capacity = allocatable (cpu,
 * memory, pods, ephemeral-storage, plus extended resources given), the four
 * kubelet conditions, addresses, daemon endpoint, nodeInfo and a pod CIDR.
 *
 * Invariants: the node with
 * index i gets pod CIDR 10.(244 + ⌊i/256⌋).(i mod 256).0/24 and an
 * InternalIP in 172.18.0.0/16 — distinct for 60,000 nodes. Pure.
 */
import { createHash } from 'node:crypto';
import { formatTime } from '../k8s/time.ts';
import type { KubeletBehaviour, NodeSpec } from '../k8s/node-specs.ts';
import type { Node } from '../k8s/types.ts';

export const KUBELET_VERSION = 'v1.32.4';
export const DEFAULT_CAPACITY: Readonly<Record<string, string>> = { cpu: '4', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' };

export function nodePodCidr(index: number): string {
  return `10.${244 + Math.floor(index / 256)}.${index % 256}.0/24`;
}

export function nodeInternalIp(index: number): string {
  const n = index + 2;
  return `172.18.${Math.floor(n / 256)}.${n % 256}`;
}

/** The Node object the kubelet of `spec` registers (`index` picks its addresses). */
export function nodeObject(spec: NodeSpec, index: number, now: number): Node {
  const arch = spec.labels?.['kubernetes.io/arch'] ?? 'amd64';
  const os = spec.labels?.['kubernetes.io/os'] ?? 'linux';
  const labels: Record<string, string> = {
    'beta.kubernetes.io/arch': arch,
    'beta.kubernetes.io/os': os,
    'kubernetes.io/arch': arch,
    'kubernetes.io/hostname': spec.name,
    'kubernetes.io/os': os,
    ...(spec.labels ?? {}),
  };
  const resources: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...DEFAULT_CAPACITY, ...(spec.capacity ?? {}) })) resources[k] = String(v);
  const t = formatTime(now);
  const cond = (type: string, status: string, reason: string, message: string) => ({ type, status, lastHeartbeatTime: t, lastTransitionTime: t, reason, message });
  const id = createHash('sha256').update(spec.name).digest('hex');
  const podCidr = nodePodCidr(index);
  const nodeSpec: Record<string, unknown> = { podCIDR: podCidr, podCIDRs: [podCidr], providerID: `workloadspread://embedded/${spec.name}` };
  if (spec.taints !== undefined && spec.taints.length > 0) nodeSpec['taints'] = spec.taints.map((x) => ({ ...x }));
  if (spec.unschedulable === true) nodeSpec['unschedulable'] = true;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      labels,
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: nodeSpec,
    status: {
      capacity: { ...resources },
      allocatable: { ...resources },
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: nodeInternalIp(index) },
        { type: 'Hostname', address: spec.name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: id.slice(0, 32),
        systemUUID: `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20, 32)}`,
        bootID: id.slice(32, 64),
        kernelVersion: '6.8.0-workloadspread',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntimeVersion: 'containerd://1.7.24',
        kubeletVersion: KUBELET_VERSION,
        kubeProxyVersion: KUBELET_VERSION,
        operatingSystem: os,
        architecture: arch,
      },
    },
  };
}

/** The behaviour a spec asks for (podsNeverStart folded in). */
export function behaviourOf(spec: NodeSpec): KubeletBehaviour {
  const b: KubeletBehaviour = { ...(spec.behaviour ?? {}) };
  if (spec.podsNeverStart === true) b.neverStart = true;
  return b;
}
