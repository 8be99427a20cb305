/**
 * Kubernetes object shapes as they travel on the wire (JSON): timestamps are
 * RFC 3339 strings, quantities are strings, unknown fields are kept.
 *
 * Why not the model classes of @kubernetes/client-node: those deserialize
 * timestamps into Date objects and drop unknown fields, while every layer here
 * (admission, the embedded API server, the controller's caches) handles raw
 * JSON and must round-trip it untouched. These types describe only the fields
 * this project reads; the index signatures keep everything else.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  [key: string]: unknown;
}

/** Any Kubernetes object: apiVersion/kind/metadata plus whatever else it carries. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator | string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface NodeSelectorRequirement {
  key: string;
  operator: NodeSelectorOperator | string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeSelector {
  nodeSelectorTerms: NodeSelectorTerm[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeSelectorTerm;
}

export interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: NodeSelector;
  preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
}

export interface Affinity {
  nodeAffinity?: NodeAffinity;
  podAffinity?: unknown;
  podAntiAffinity?: unknown;
  [key: string]: unknown;
}

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal' | string;
  value?: string;
  effect?: TaintEffect | string;
  tolerationSeconds?: number;
}

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect | string;
  timeAdded?: string;
}

export interface ResourceRequirements {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  [key: string]: unknown;
}

export interface Container {
  name: string;
  image?: string;
  resources?: ResourceRequirements;
  [key: string]: unknown;
}

export interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: Affinity;
  tolerations?: Toleration[];
  containers: Container[];
  initContainers?: Container[];
  priorityClassName?: string;
  priority?: number;
  schedulerName?: string;
  overhead?: Record<string, string>;
  [key: string]: unknown;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown' | string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  [key: string]: unknown;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodStatus {
  phase?: PodPhase | string;
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  startTime?: string;
  [key: string]: unknown;
}

export interface Pod extends KubeObject {
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface Node extends KubeObject {
  metadata: ObjectMeta;
  spec?: {
    unschedulable?: boolean;
    taints?: Taint[];
    [key: string]: unknown;
  };
  status?: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: NodeCondition[];
    [key: string]: unknown;
  };
}

/** A Kubernetes IntOrString: an integer or a string such as "30%". */
export type IntOrString = number | string;
