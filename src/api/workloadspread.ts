/**
 * The WorkloadSpread API, `apps.kruise.io/v1alpha1` (spec §1, DECISIONS D1, D2).
 *
 * One TypeBox schema is the single source of truth: the TypeScript types below
 * are derived from it (`Static`), the CRD's `openAPIV3Schema` is generated from
 * it (`crd.ts`), and structural validation runs against it (`validation.ts`).
 * Field names and JSON shapes are those of OpenKruise, so manifests carry over.
 */
import Type from 'typebox';
import { MAX_SUBSETS } from './keys.ts';
import {
  Int32,
  Int64,
  IntOrString,
  LabelSelectorSchema,
  MapOf,
  NodeSelectorTermSchema,
  PreferredSchedulingTermSchema,
  PreserveUnknown,
  StringEnum,
  Time,
  TolerationSchema,
} from './schema-kit.ts';

export { API_VERSION, GROUP, KIND, PLURAL, SHORT_NAMES, SINGULAR, VERSION } from './names.ts';

export const TargetReferenceSchema = Type.Object(
  {
    apiVersion: Type.String({ description: 'API version of the workload, e.g. apps/v1.' }),
    kind: Type.String({ description: 'Kind of the workload, e.g. Deployment.' }),
    name: Type.String({ description: 'Name of the workload, in the namespace of the WorkloadSpread.' }),
  },
  { description: 'The workload whose pods this WorkloadSpread places. Cannot be changed after creation.' },
);

export const TargetFilterSchema = Type.Object(
  {
    selector: Type.Optional({
      ...LabelSelectorSchema,
      description: "Only the workload's pods whose labels match are managed. Omitted: every pod.",
    }),
    replicasPathList: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Dot-separated paths into the workload object (numeric segments index arrays); the sum of the integers found there is the replica count used for percentages.',
      }),
    ),
  },
  { description: "Manage only part of the workload's pods." },
);

export const SubsetSchema = Type.Object(
  {
    name: Type.String({ description: 'Unique name of the subset; status entries are matched to subsets by name.' }),
    requiredNodeSelectorTerm: Type.Optional({
      ...NodeSelectorTermSchema,
      description: "Required node selector term of the subset; ANDed into every required term of the pod's node affinity.",
    }),
    preferredNodeSelectorTerms: Type.Optional(
      Type.Array(PreferredSchedulingTermSchema, {
        description: "Preferred node selector terms appended to the pod's node affinity.",
      }),
    ),
    tolerations: Type.Optional(Type.Array(TolerationSchema, { description: 'Tolerations appended to the pod.' })),
    maxReplicas: Type.Optional(
      IntOrString({
        description:
          'Upper bound of active pods in this subset: an integer or a percentage of the workload replicas (rounded up). Omitted: unlimited.',
      }),
    ),
    minReplicas: Type.Optional(
      Int32({
        minimum: 0,
        description:
          'Pods this subset gets before any other subset on scale-out, and keeps longest on scale-in (workloadspread extension; not in OpenKruise).',
      }),
    ),
    patch: Type.Optional(
      PreserveUnknown({
        description: 'A strategic merge patch applied to the pod (labels, annotations, container resources, env, ...).',
      }),
    ),
  },
  { description: 'A subset: one scheduling domain and the share of pods it may hold.' },
);

export const SCHEDULE_STRATEGY_TYPES = ['Adaptive', 'Fixed', ''] as const;

export const AdaptiveStrategySchema = Type.Object(
  {
    disableSimulationSchedule: Type.Optional(
      Type.Boolean({
        description: 'Disable the admission-time check that some node of a subset can host the pod.',
      }),
    ),
    rescheduleCriticalSeconds: Type.Optional(
      Int32({
        description:
          'How long a pod may stay unschedulable (from its creation) before it is deleted and its subset marked unschedulable, so that the replacement goes to the next subset.',
      }),
    ),
  },
  { description: 'Parameters of the Adaptive strategy.' },
);

export const ScheduleStrategySchema = Type.Object(
  {
    type: Type.Optional(StringEnum(SCHEDULE_STRATEGY_TYPES, { description: 'Fixed (the default) or Adaptive.' })),
    adaptive: Type.Optional(AdaptiveStrategySchema),
  },
  { description: 'How pods move between subsets when a subset cannot schedule them.' },
);

export const WorkloadSpreadSpecSchema = Type.Object(
  {
    targetRef: TargetReferenceSchema,
    targetFilter: Type.Optional(TargetFilterSchema),
    subsets: Type.Array(SubsetSchema, {
      maxItems: MAX_SUBSETS,
      description: `Subsets in priority order: scale-out fills them front to back, scale-in empties them back to front (at most ${MAX_SUBSETS}).`,
    }),
    scheduleStrategy: Type.Optional(ScheduleStrategySchema),
  },
  { description: 'Desired spread of the target workload.' },
);

export const SubsetConditionSchema = Type.Object(
  {
    type: Type.String({ description: 'Condition type; only Schedulable is used.' }),
    status: Type.String({ description: 'True, False or Unknown.' }),
    lastTransitionTime: Type.Optional(Time({ description: 'When the status last changed.' })),
    reason: Type.Optional(Type.String({ description: 'Sufficient or PodUnschedulable.' })),
    message: Type.Optional(Type.String({ description: 'Human-readable details.' })),
  },
  { description: 'A condition of a subset.' },
);

export const SubsetStatusSchema = Type.Object(
  {
    name: Type.String({ description: 'Name of the subset.' }),
    replicas: Int32({ description: 'Active pods in the subset.' }),
    missingReplicas: Int32({
      description: 'Remaining quota of the subset; -1 when the subset is unlimited.',
    }),
    creatingPods: Type.Optional(
      MapOf(Time(), { description: 'Pods admitted into the subset but not yet observed (pod name or generated uid -> time).' }),
    ),
    deletingPods: Type.Optional(
      MapOf(Time(), { description: 'Pods whose deletion was admitted but not yet observed (pod name -> time).' }),
    ),
    conditions: Type.Optional(Type.Array(SubsetConditionSchema, { description: 'Conditions of the subset.' })),
  },
  { description: 'Observed state of one subset.' },
);

export const WorkloadSpreadConditionSchema = Type.Object(
  {
    type: Type.String({
      description:
        'Condition type: Ready (True when the spread holds for the current spec and pods), Reconciling (True while it converges), Stalled (True when it cannot converge without a change), DuplicateTarget (True while another WorkloadSpread of the same workload takes precedence).',
    }),
    status: Type.String({ description: 'True, False or Unknown.' }),
    observedGeneration: Type.Optional(Int64({ description: 'The generation the condition was set for.' })),
    lastTransitionTime: Type.Optional(Time({ description: 'When the status last changed.' })),
    reason: Type.Optional(
      Type.String({
        description:
          'A CamelCase reason. Ready: Spread (True); WorkloadNotFound, PodsPending, Converging, SubsetUnschedulable, SubsetOverLimit, PodsOutsideSubsets, Rebalancing, PodsChanging, DuplicateTarget (False).',
      }),
    ),
    message: Type.Optional(Type.String({ description: 'Human-readable details.' })),
  },
  { description: 'A condition of the WorkloadSpread (workloadspread extension; not in OpenKruise).' },
);

export const REBALANCE_REASONS = [
  'Balanced',
  'Moving',
  'WaitingForStatus',
  'WaitingForReadiness',
  'NoRoom',
  'ReplacementWouldNotLand',
  'EvictionRefused',
  'EvictionFailed',
  'Unsupported',
  'InvalidSettings',
] as const;

export const RebalanceMoveSchema = Type.Object(
  {
    pod: Type.String({ description: 'The evicted pod.' }),
    from: Type.String({ description: 'The subset it was in (the fake subset name for a pod in no subset).' }),
    to: Type.String({ description: 'The subset its replacement was predicted to be placed in.' }),
    evictedAt: Time({ description: 'When the eviction was accepted.' }),
  },
  { description: 'A move in flight: a pod evicted by the rebalancer whose replacement is not Ready yet.' },
);

export const RebalanceStatusSchema = Type.Object(
  {
    pending: Int32({
      description: 'Active pods not in the subset the spec wants them in (filling subsets front to back, minReplicas first); 0 when balanced.',
    }),
    moves: Type.Optional(Type.Array(RebalanceMoveSchema, { description: 'Moves in flight (at most the max-in-flight annotation allows).' })),
    reason: Type.Optional(
      Type.String({
        description:
          'What the rebalancer is doing: Balanced, Moving, WaitingForStatus, WaitingForReadiness, or why no move can be made now: NoRoom, ReplacementWouldNotLand, EvictionRefused, EvictionFailed, Unsupported, InvalidSettings.',
      }),
    ),
    message: Type.Optional(Type.String({ description: 'Human-readable details of the reason.' })),
    lastTransitionTime: Type.Optional(Time({ description: 'When the reason last changed.' })),
  },
  { description: 'What the rebalancer (workloadspread extension, annotation workloadspread.io/rebalance) is doing; absent when rebalancing is off.' },
);

export const WorkloadSpreadStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Int64({ description: 'The generation this status was computed for.' })),
    conditions: Type.Optional(
      Type.Array(WorkloadSpreadConditionSchema, {
        description:
          'Conditions of the WorkloadSpread as a whole: Ready, with Reconciling or Stalled while it is not (kstatus conventions); DuplicateTarget=True means it is ignored because an older one spreads the same workload.',
      }),
    ),
    subsetStatuses: Type.Optional(
      Type.Array(SubsetStatusSchema, { description: 'One entry per subset, in spec order, over pods of every version.' }),
    ),
    versionedSubsetStatuses: Type.Optional(
      MapOf(Type.Array(SubsetStatusSchema), {
        description: 'Subset statuses per pod version (pod-template-hash), so each revision of a rollout gets its own quota.',
      }),
    ),
    subsetCount: Type.Optional(Int32({ description: 'Number of subsets (for display).' })),
    ready: Type.Optional(
      Type.String({ description: 'Ready pods placed in a subset over workload replicas, e.g. 7/10 (for display).' }),
    ),
    placed: Type.Optional(
      Type.String({ description: 'Active pods placed in a subset, ready or not, over workload replicas, e.g. 9/10 (for display).' }),
    ),
    workloadReplicas: Type.Optional(
      Int32({ description: "The workload's replicas this status was computed against (absent when unknown)." }),
    ),
    placedReplicas: Type.Optional(Int32({ description: 'Active pods placed in a subset, ready or not.' })),
    readyReplicas: Type.Optional(Int32({ description: 'Ready pods placed in a subset.' })),
    rebalance: Type.Optional(RebalanceStatusSchema),
  },
  { description: 'Observed state of the WorkloadSpread.' },
);

export const ObjectMetaSchema = PreserveUnknown({ description: 'Standard object metadata.' });

export const WorkloadSpreadSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String({ description: 'apps.kruise.io/v1alpha1' })),
    kind: Type.Optional(Type.String({ description: 'WorkloadSpread' })),
    metadata: Type.Optional(ObjectMetaSchema),
    spec: WorkloadSpreadSpecSchema,
    status: Type.Optional(WorkloadSpreadStatusSchema),
  },
  { description: "WorkloadSpread spreads the pods of one workload across subsets of nodes, without changing the workload." },
);

export type TargetReference = Type.Static<typeof TargetReferenceSchema>;
export type TargetFilter = Type.Static<typeof TargetFilterSchema>;
export type Subset = Type.Static<typeof SubsetSchema>;
export type ScheduleStrategy = Type.Static<typeof ScheduleStrategySchema>;
export type WorkloadSpreadSpec = Type.Static<typeof WorkloadSpreadSpecSchema>;
export type SubsetCondition = Type.Static<typeof SubsetConditionSchema>;
export type SubsetStatus = Type.Static<typeof SubsetStatusSchema>;
export type WorkloadSpreadCondition = Type.Static<typeof WorkloadSpreadConditionSchema>;
export type WorkloadSpreadStatus = Type.Static<typeof WorkloadSpreadStatusSchema>;
export type RebalanceMove = Type.Static<typeof RebalanceMoveSchema>;
export type RebalanceStatus = Type.Static<typeof RebalanceStatusSchema>;
export type RebalanceReason = (typeof REBALANCE_REASONS)[number];

export function isRebalanceReason(value: unknown): value is RebalanceReason {
  return typeof value === 'string' && (REBALANCE_REASONS as readonly string[]).includes(value);
}

/**
 * The entry named `name` of a list keyed by name (a spec's subsets, a
 * status's subset statuses). A loop, not an inline `find` callback: admission
 * and the controller look subsets up on every pod, and V8 compiles a callback
 * made anew per call again after each full GC.
 */
export function named<T extends { name: string }>(list: readonly T[] | undefined, name: string): T | undefined {
  if (list !== undefined) for (const entry of list) if (entry.name === name) return entry;
  return undefined;
}

/** A WorkloadSpread object as stored (metadata as the generic Kubernetes shape). */
export interface WorkloadSpread {
  apiVersion?: string;
  kind?: string;
  metadata: import('../k8s/types.ts').ObjectMeta;
  spec: WorkloadSpreadSpec;
  status?: WorkloadSpreadStatus;
}
