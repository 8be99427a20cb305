/**
 * The API names of the two kinds (group, version, kind, resource, short names), in a module that
 * imports nothing: callers that only name the kinds (the kubectl plugin, refs) do not load the
 * schemas. workloadspread.ts and disruption-budget.ts re-export them.
 */

export const GROUP = 'apps.kruise.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'WorkloadSpread';
export const PLURAL = 'workloadspreads';
export const SINGULAR = 'workloadspread';
export const SHORT_NAMES = ['ws'] as const;

export const DDB_GROUP = 'policy.workloadspread.io';
export const DDB_VERSION = 'v1alpha1';
export const DDB_API_VERSION = `${DDB_GROUP}/${DDB_VERSION}`;
export const DDB_KIND = 'DomainDisruptionBudget';
export const DDB_PLURAL = 'domaindisruptionbudgets';
export const DDB_SINGULAR = 'domaindisruptionbudget';
export const DDB_SHORT_NAMES = ['ddb'] as const;

// ---- DomainDisruptionBudget: domains, conditions, reasons, events ----

/** The one domain of a budget without a domain mode (story 3). */
export const DOMAIN_ALL = 'all';
/** The one domain of a `nodeSelectorTerm` budget (story 1). */
export const DOMAIN_MATCHING_NODES = 'matching-nodes';
/**
 * Pods that are running but cannot be named by the mode: a node without the
 * `topologyKey` label (or not in the cache), or, with `workloadSpreadRef`, a
 * pod without that WorkloadSpread's marker. They are budgeted together rather
 * than left unprotected.
 */
export const DOMAIN_NONE = '<none>';

/** How long an approved eviction is waited for before it counts as healthy again (the PDB's DeletionTimeout). */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60_000;

export const UNHEALTHY_POD_EVICTION_POLICIES = ['IfHealthyBudget', 'AlwaysAllow'] as const;

/** Condition types and reasons. */
export const CONDITION_DISRUPTION_ALLOWED = 'DisruptionAllowed';
export const REASON_SUFFICIENT_PODS = 'SufficientPods';
export const REASON_INSUFFICIENT_PODS = 'InsufficientPods';
export const CONDITION_WORKLOADSPREAD_FOUND = 'WorkloadSpreadFound';
export const REASON_FOUND = 'Found';
export const REASON_NOT_FOUND = 'NotFound';
export const CONDITION_SPEC_VALID = 'SpecValid';
export const REASON_VALID = 'Valid';
export const REASON_INVALID = 'Invalid';

/** Event reasons of the budget controller. */
export const EVENT_DISRUPTION_BLOCKED = 'DisruptionBlocked';
export const EVENT_DISRUPTION_UNBLOCKED = 'DisruptionUnblocked';
