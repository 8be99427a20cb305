/**
 * The DomainDisruptionBudget API, `policy.workloadspread.io/v1alpha1`
 * (DECISIONS D14; KEP-8 user stories 1–3 in shared/seeds/004_*).
 *
 * A PodDisruptionBudget per failure domain: `selector` picks the pods,
 * exactly one of `maxUnavailable` / `minAvailable` sets the budget (an int,
 * or a percentage of the pods expected in the domain, rounded up as a
 * PodDisruptionBudget rounds), and at most one of the domain modes says what
 * a domain is:
 * - `nodeSelectorTerm`: one domain, the pods on nodes matching the term;
 *   pods elsewhere are not governed (story 1, "only zone bar may lose pods");
 * - `topologyKey`: one domain per value of that node label (story 2);
 * - `workloadSpreadRef`: one domain per subset of that WorkloadSpread, read
 *   from the pods' marker annotation;
 * - none: one domain over every selected pod (story 3).
 *
 * As for WorkloadSpread, the TypeBox schema below is the single source of the
 * TS types, the CRD (`crd.ts`) and the structural check
 * (`disruption-budget-validation.ts`). The status is written by the budget
 * controller (counts, expiry) and by the eviction webhook (`disruptedPods`).
 * The math lives in `src/core/disruption-budget.ts`.
 */
import Type from 'typebox';
import type { ObjectMeta } from '../k8s/types.ts';
import { Int32, Int64, IntOrString, LabelSelectorSchema, MapOf, NodeSelectorTermSchema, StringEnum, Time } from './schema-kit.ts';

export { DDB_API_VERSION, DDB_GROUP, DDB_KIND, DDB_PLURAL, DDB_SHORT_NAMES, DDB_SINGULAR, DDB_VERSION } from './names.ts';

export {
  CONDITION_DISRUPTION_ALLOWED,
  CONDITION_SPEC_VALID,
  CONDITION_WORKLOADSPREAD_FOUND,
  DISRUPTED_POD_TIMEOUT_MS,
  DOMAIN_ALL,
  DOMAIN_MATCHING_NODES,
  DOMAIN_NONE,
  EVENT_DISRUPTION_BLOCKED,
  EVENT_DISRUPTION_UNBLOCKED,
  REASON_FOUND,
  REASON_INSUFFICIENT_PODS,
  REASON_INVALID,
  REASON_NOT_FOUND,
  REASON_SUFFICIENT_PODS,
  REASON_VALID,
  UNHEALTHY_POD_EVICTION_POLICIES,
} from './names.ts';
import { UNHEALTHY_POD_EVICTION_POLICIES } from './names.ts';
export type UnhealthyPodEvictionPolicy = (typeof UNHEALTHY_POD_EVICTION_POLICIES)[number];

export const WorkloadSpreadRefSchema = Type.Object(
  {
    name: Type.String({ description: 'Name of a WorkloadSpread in the namespace of the budget.' }),
  },
  { description: 'One domain per subset of this WorkloadSpread (a pod belongs to the subset its marker annotation names).' },
);

export const DomainDisruptionBudgetSpecSchema = Type.Object(
  {
    selector: {
      ...LabelSelectorSchema,
      description: 'The pods the budget protects (required, never empty).',
    },
    maxUnavailable: Type.Optional(
      IntOrString({
        description: 'Pods of a domain that may be unavailable after an eviction: an int, or a percentage of the pods expected in the domain (rounded up). Exactly one of maxUnavailable and minAvailable.',
      }),
    ),
    minAvailable: Type.Optional(
      IntOrString({
        description: 'Pods of a domain that must stay available after an eviction: an int, or a percentage of the pods expected in the domain (rounded up). Exactly one of maxUnavailable and minAvailable.',
      }),
    ),
    nodeSelectorTerm: Type.Optional({
      ...NodeSelectorTermSchema,
      description: 'One domain: the pods on nodes matching this term. Pods on other nodes are not governed by this budget.',
    }),
    topologyKey: Type.Optional(Type.String({ description: 'One domain per value of this node label, e.g. topology.kubernetes.io/zone.' })),
    workloadSpreadRef: Type.Optional(WorkloadSpreadRefSchema),
    unhealthyPodEvictionPolicy: Type.Optional(
      StringEnum(UNHEALTHY_POD_EVICTION_POLICIES, {
        description: 'When a pod that is not Ready may be evicted: IfHealthyBudget (the default: while its domain has its desired healthy pods) or AlwaysAllow. Either way it spends no budget.',
      }),
    ),
  },
  { description: 'Which pods are protected, how much disruption each domain may take, and what a domain is (at most one of nodeSelectorTerm, topologyKey, workloadSpreadRef; none: one domain).' },
);

export const BudgetConditionSchema = Type.Object(
  {
    type: Type.String({ description: 'DisruptionAllowed (domains), WorkloadSpreadFound or SpecValid (budget).' }),
    status: Type.String({ description: 'True, False or Unknown.' }),
    lastTransitionTime: Type.Optional(Time({ description: 'When the status last changed.' })),
    reason: Type.Optional(Type.String({ description: 'A CamelCase reason.' })),
    message: Type.Optional(Type.String({ description: 'Human-readable details.' })),
  },
  { description: 'A condition of the budget or of one domain.' },
);

export const DomainStatusSchema = Type.Object(
  {
    name: Type.String({ description: 'The domain: a label value, a subset name, matching-nodes, all, or <none>.' }),
    expectedPods: Int32({ description: 'Selected pods in the domain that have not finished (terminating ones included).' }),
    currentHealthy: Int32({ description: 'Ready pods of the domain that are neither terminating nor in disruptedPods.' }),
    desiredHealthy: Int32({ description: 'Healthy pods the domain must keep.' }),
    disruptionsAllowed: Int32({ description: 'Evictions the domain may take now: currentHealthy − desiredHealthy, never below 0.' }),
    disruptedPods: Type.Optional(
      MapOf(Time(), { description: 'Pods whose eviction was approved but whose deletion is not observed yet (pod name -> time of approval); entries expire after 2 minutes.' }),
    ),
    conditions: Type.Optional(Type.Array(BudgetConditionSchema, { description: 'DisruptionAllowed, with the time it last changed.' })),
  },
  { description: 'Observed state of one domain.' },
);

export const DomainDisruptionBudgetStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Int64({ description: 'The generation this status was computed for; evictions wait until it is current.' })),
    mode: Type.Optional(Type.String({ description: 'How domains are named, for display: all, nodeSelectorTerm, topologyKey=<key> or workloadSpreadRef=<name>.' })),
    domains: Type.Optional(Type.Array(DomainStatusSchema, { description: 'One entry per domain, by name (subset order for workloadSpreadRef).' })),
    domainCount: Type.Optional(Int32({ description: 'Number of domains (for display).' })),
    blockedDomains: Type.Optional(Int32({ description: 'Domains with pods that allow no disruption now (for display).' })),
    conditions: Type.Optional(Type.Array(BudgetConditionSchema, { description: 'WorkloadSpreadFound (workloadSpreadRef only) and SpecValid.' })),
  },
  { description: 'Observed state of the budget.' },
);

export const DomainDisruptionBudgetSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String({ description: 'policy.workloadspread.io/v1alpha1' })),
    kind: Type.Optional(Type.String({ description: 'DomainDisruptionBudget' })),
    metadata: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description: 'Standard object metadata.' })),
    spec: DomainDisruptionBudgetSpecSchema,
    status: Type.Optional(DomainDisruptionBudgetStatusSchema),
  },
  { description: 'DomainDisruptionBudget limits voluntary disruptions (evictions) of pods per failure domain: a PodDisruptionBudget per zone, per node group, or per WorkloadSpread subset.' },
);

export type WorkloadSpreadReference = Type.Static<typeof WorkloadSpreadRefSchema>;
export type DomainDisruptionBudgetSpec = Type.Static<typeof DomainDisruptionBudgetSpecSchema>;
export type BudgetCondition = Type.Static<typeof BudgetConditionSchema>;
export type DomainStatus = Type.Static<typeof DomainStatusSchema>;
export type DomainDisruptionBudgetStatus = Type.Static<typeof DomainDisruptionBudgetStatusSchema>;

/** A DomainDisruptionBudget as stored (metadata as the generic Kubernetes shape). */
export interface DomainDisruptionBudget {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: DomainDisruptionBudgetSpec;
  status?: DomainDisruptionBudgetStatus;
}

/** `namespace/name` of a budget, as messages, metrics and work-queue keys print it. */
export function budgetKey(budget: { metadata?: ObjectMeta }): string {
  return `${budget.metadata?.namespace ?? ''}/${budget.metadata?.name ?? ''}`;
}
