/**
 * Well-known names shared with OpenKruise's WorkloadSpread (spec §1.5, §1.6),
 * quoted exactly: manifests, pods and dashboards written for Kruise keep working.
 */

/** Pod annotation naming the WorkloadSpread and subset a pod was placed in. */
export const MATCHED_WORKLOADSPREAD_ANNOTATION = 'apps.kruise.io/matched-workloadspread';

/**
 * Pod label of ours on every pod a WorkloadSpread placed or adopted (value
 * "true"): the pod DELETE webhook is registered with an objectSelector on it,
 * so deleting any other pod never calls the manager. Not in OpenKruise.
 */
export const MANAGED_LABEL = 'workloadspread.io/managed';
export const MANAGED_LABEL_VALUE = 'true';

/** Upstream ReplicaSet scale-down honours this annotation (lower cost goes first); defined with the other pod semantics. */
export { POD_DELETION_COST_ANNOTATION } from '../k8s/pod.ts';

/** Unit of deletion cost: positive for pods in their subset's quota, negative for surplus. */
export const POD_DELETION_COST_POSITIVE = 100;
export const POD_DELETION_COST_NEGATIVE = -100;

/** Version key for pods of workloads that are not versioned (spec §6.1). */
export const VERSION_IGNORED = 'versionIgnored';

/** Internal bucket for pods that belong to no subset; never persisted (spec §4.3). */
export const FAKE_SUBSET_NAME = 'kruise.io/workloadspread-fake-subset-name';

/** WorkloadSpread annotation: "true" disables copying patch metadata to adopted pods (spec §4.3). */
export const IGNORE_PATCH_EXISTING_PODS_METADATA_ANNOTATION =
  'workloadspread.kruise.io/ignore-patch-existing-pods-metadata';

/**
 * D18 rebalancing, opt-in per WorkloadSpread (ours, not OpenKruise's: the API
 * group is shared with Kruise, so the switch is an annotation in our own
 * prefix rather than a spec field). `"true"` turns it on; absent or `"false"`
 * leaves it off. See api/rebalance-settings.ts.
 */
export const REBALANCE_ANNOTATION = 'workloadspread.io/rebalance';
/** D18: how many moves may be in flight at once (a positive integer; default 1). */
export const REBALANCE_MAX_IN_FLIGHT_ANNOTATION = 'workloadspread.io/rebalance-max-in-flight';
export const DEFAULT_REBALANCE_MAX_IN_FLIGHT = 1;
/** The largest max-in-flight accepted (a bound that keeps a typo such as 1000 from emptying a subset at once). */
export const MAX_REBALANCE_MAX_IN_FLIGHT = 100;

/** The only subset condition type, and its reasons (DECISIONS D8). */
export const SUBSET_SCHEDULABLE = 'Schedulable';
export const REASON_SUFFICIENT = 'Sufficient';
export const REASON_POD_UNSCHEDULABLE = 'PodUnschedulable';

export const DEPLOYMENT_REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';

/** Custom-workload whitelist: config map data key (spec §5.4) and our default config map name (D6). */
export const WHITELIST_CONFIGMAP_KEY = 'WorkloadSpread_Watch_Custom_Workload_WhiteList';
export const DEFAULT_CONFIGMAP_NAME = 'workloadspread-configuration';

/** Timing constants of the reference (spec §1.6), in milliseconds. */
export const CREATE_POD_TIMEOUT_MS = 30_000;
export const DELETE_POD_TIMEOUT_MS = 15_000;
/** Default unschedulable recovery window (`MaxScheduledFailedDuration`); a manager flag (D10). */
export const DEFAULT_UNSCHEDULABLE_RECOVERY_SECONDS = 300;

/** Admission status-write attempts before giving up (client-go DefaultBackoff, spec §2.4, D13). */
export const STATUS_UPDATE_ATTEMPTS = 4;

/** Event reasons (spec §4.7, D11). */
export const EVENT_CREATE_POD_FAILED = 'CreatePodFailed';
export const EVENT_DELETE_POD_FAILED = 'DeletePodFailed';
export const EVENT_RECOVER_SCHEDULABLE = 'RecoverSchedulable';
export const EVENT_PATCH_DELETION_COST_FAILED = 'PatchPodDeletionCostFailed';
export const EVENT_NO_SUBSET_AVAILABLE = 'NoSubsetAvailable';
/** D20: a stored subset patch changes protected pod fields, so admission placed the pod without it. */
export const EVENT_SUBSET_PATCH_REFUSED = 'SubsetPatchRefused';
/** One WorkloadSpread per workload: this one lost to an older WorkloadSpread of the same workload and is ignored. */
export const EVENT_DUPLICATE_TARGET = 'DuplicateTarget';
/** D18: a pod was evicted so that its replacement lands in a better subset (Normal). */
export const EVENT_REBALANCING = 'Rebalancing';
/** D18: a move is wanted but cannot be made now; the message says why (Warning). */
export const EVENT_REBALANCE_BLOCKED = 'RebalanceBlocked';

/**
 * The prefix of the marker uid of a place reserved ahead by the webhook
 * (issue 13, core/admission.ts reserveAhead): an entry of creatingPods like
 * any reservation; one that no pod claimed expires without CreatePodFailed.
 */
export const RESERVED_AHEAD_PREFIX = 'ahead-';

/** int32 max, the reference's stand-in for "unlimited" in quota arithmetic. */
export const MAX_INT32 = 2147483647;
/**
 * The most subsets a WorkloadSpread may have (the CRD's maxItems; the reference has no limit).
 * Zones times node pools rarely reach a dozen; the bound keeps status, admission and the
 * controller's per-pod scoring small, and V24's bound (295 / (n - 1)) meaningful.
 */
export const MAX_SUBSETS = 100;
