/**
 * Fake nodes as they are asked for — by the embedded cluster (`nodes`,
 * `addNodes`), a scenario file's `nodes` and `workloadspread cluster --nodes`:
 * a name, a full spec, or a group `{ namePrefix, count }` (`NodeSpecInput`),
 * and the kubelet behaviour a node may be given. The Node object a kubelet
 * registers for a spec is the embedded cluster's (cluster/nodes.ts).
 *
 * Invariants: `expandNodeSpecs` yields unique names in input order (groups
 * as `<prefix>-1..N`), or an error naming the first problem. Pure.
 */
import { parseQuantityNanos } from './quantity.ts';
import type { Taint } from './types.ts';

/** Per-node kubelet behaviour. */
export interface KubeletBehaviour {
  /** Pods bound here stay Pending/ContainerCreating forever. */
  neverStart?: boolean;
  /** Pods bound here fail (phase Failed, container exit code 1) once started. */
  failPods?: boolean;
  /** Overrides the cluster's kubelet start delay for this node. */
  startDelayMs?: number;
}

export interface NodeSpec {
  name: string;
  /** Added to (and overriding) the default labels. */
  labels?: Record<string, string>;
  /** cpu, memory, pods, ephemeral-storage and extended resources; unspecified ones take the cluster's defaults (cluster/nodes.ts). */
  capacity?: Record<string, string | number>;
  taints?: Taint[];
  unschedulable?: boolean;
  /** Shorthand for `behaviour.neverStart`. */
  podsNeverStart?: boolean;
  behaviour?: KubeletBehaviour;
}

export type NodeGroupSpec = Omit<NodeSpec, 'name'> & { namePrefix: string; count: number };
export type NodeSpecInput = string | NodeSpec | NodeGroupSpec;

export type ExpandResult = { ok: true; nodes: NodeSpec[] } | { ok: false; error: string };

const NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function validateSpec(spec: NodeSpec): string | undefined {
  if (typeof spec.name !== 'string' || spec.name.length > 253 || !NAME_RE.test(spec.name)) return `invalid node name ${JSON.stringify(spec.name)}: must be a lowercase RFC 1123 subdomain`;
  for (const [resource, value] of Object.entries(spec.capacity ?? {})) {
    const nanos = parseQuantityNanos(value);
    if (nanos === undefined || nanos < 0n) return `node ${spec.name}: invalid capacity ${resource}=${String(value)}`;
  }
  for (const t of spec.taints ?? []) {
    if (typeof t?.key !== 'string' || t.key === '') return `node ${spec.name}: a taint needs a key`;
    if (!['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(String(t.effect))) return `node ${spec.name}: taint ${t.key} has an invalid effect ${JSON.stringify(t.effect)}`;
  }
  return undefined;
}

/** Names, specs and groups → one spec per node. */
export function expandNodeSpecs(inputs: readonly NodeSpecInput[]): ExpandResult {
  const nodes: NodeSpec[] = [];
  for (const input of inputs) {
    if (typeof input === 'string') nodes.push({ name: input });
    else if (input !== null && typeof input === 'object' && 'namePrefix' in input) {
      const { namePrefix, count, ...rest } = input;
      if (!Number.isInteger(count) || count < 0) return { ok: false, error: `node group ${namePrefix}: count must be a non-negative integer` };
      for (let i = 1; i <= count; i++) nodes.push({ ...rest, name: `${namePrefix}-${i}` });
    } else if (input !== null && typeof input === 'object') nodes.push(input);
    else return { ok: false, error: `invalid node spec ${JSON.stringify(input)}` };
  }
  const seen = new Set<string>();
  for (const n of nodes) {
    const problem = validateSpec(n);
    if (problem !== undefined) return { ok: false, error: problem };
    if (seen.has(n.name)) return { ok: false, error: `duplicate node name ${n.name}` };
    seen.add(n.name);
  }
  return { ok: true, nodes };
}
