/**
 * Admission, decided end to end (spec §2 and §3; DECISIONS D3, D11, D12,
 * D13): the two functions the webhook, `plan` and the tests call, and the one
 * place each rule of admission is written down.
 *
 * - `decidePodCreate`: which WorkloadSpread a new pod belongs to (§2.1–§2.2,
 *   pod-selection.ts), then by `admissionPath`: one unlimited subset takes the
 *   pod (§2.3 A); a StatefulSet's ordinal picks the subset (§2.3 B,
 *   statefulset-ordinal.ts); everything else reserves quota in the stored
 *   status (§2.3 C, subset-choice.ts) with the simulation schedule (D3), a
 *   percentage limit leaving the room it leaves at the workload's replicas
 *   now (D22, `withRoomAtReplicas`: a scale-out's pods are not checked
 *   against the limits of the old count; a pod that finds no room has the
 *   target read again first, in case the cache has not seen the scale-out). The
 *   answer carries the injected pod (§2.5, inject.ts) and the new status, or
 *   the `NoSubsetAvailable` event (D11).
 * - `decidePodDeletion`: whether a DELETE or an eviction frees quota, and the
 *   `deletingPods` record that does (§3.4, deletion.ts).
 *
 * Both read the cluster only through a `ClusterView` (cluster-view.ts) and
 * return one union. Two of its answers ask the caller for something first:
 * `read` — the view could not answer without the API server (make the read,
 * add it to the view, decide again); `commit` — the decision depends on the
 * WorkloadSpread's stored status, so it must be taken again on the freshest
 * copy, under the per-WorkloadSpread group commit (D13), with `current`. A
 * decision taken with `current` is final: `placed`/`recorded` carry the status
 * to write (if any) and nothing else needs the API server. Pure: `now` and
 * `newUid` come from the caller.
 *
 * What a forged review could poison (issue 14) is checked against the view:
 * a new pod's owner must exist with the uid its ownerReference names
 * (pod-selection.ts); a DELETE is booked only for the stored pod with the
 * request's uid (its marker and version taken from the stored pod); and a
 * booked deletion frees its slot for a new pod only once the deletion is
 * observed — the pod gone or terminating in the cache, or in a fresh read
 * when the cache still shows it running (subset-choice.ts). A subset patch
 * that changes protected fields is not applied (D20, inject.ts).
 */
import type { SubsetPatchPolicy } from '../api/subset-patch-policy.ts';
import { EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import { named, type Subset, type SubsetStatus, type WorkloadSpread, type WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { apiVersionGroup, controllerRef, isPodActive } from '../k8s/pod.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import type { ClusterView, ReadRequest, RecentPlacement } from './cluster-view.ts';
import { birthCost, unplacedCost, usesBalancedCosts, writesDeletionCost } from './deletion-cost.ts';
import { recordDeletion, shouldRecordDeletion } from './deletion.ts';
import { noSubsetAvailableEvent, workloadSpreadRef, type EngineEvent } from './events.ts';
import { injectSubset } from './inject.ts';
import { readMarker } from './marker.ts';
import { matchWorkloadSpreadForPod, SUPPORTED_WORKLOAD_KINDS } from './pod-selection.ts';
import { countPlaced } from './placed-count.ts';
import { podVersion, type PodVersionOptions } from './pod-version.ts';
import { admissionReadsReplicas, admissionWorkloadReplicas } from './replicas.ts';
import { simulationCanHost, simulationScheduleEnabled } from './simulation-schedule.ts';
import { chooseSubsetByOrdinal, namesPodsByOrdinal } from './statefulset-ordinal.ts';
import { chooseSubset, keepsBookkeeping, occupancy, reservesPlaces, subsetsUsePercent, withRoomAtReplicas, withVersionStatuses, type WorkloadReplicasResult } from './subset-choice.ts';
import { cloneSetRecreates, latestWorkloadVersion } from './workload-version.ts';
import { allSubsetStatuses } from './ready-condition.ts';
import { POD_DELETION_COST_ANNOTATION, POD_DELETION_COST_POSITIVE, RESERVED_AHEAD_PREFIX, VERSION_IGNORED as VERSION_IGNORED_KEY } from '../api/keys.ts';
import { deepClone } from '../k8s/json.ts';

/** How admission decides for a WorkloadSpread (spec §2.3; A is checked before B, as in the reference). */
export type AdmissionPath =
  /** §2.3 A: one subset without maxReplicas takes every pod; no status is read or written. */
  | { kind: 'single-unlimited'; subset: string }
  /** §2.3 B: a StatefulSet pod's ordinal picks the subset; no status is written, on create or delete. */
  | { kind: 'ordinal' }
  /** §2.3 C: quota reserved in (and released to) the stored status. */
  | { kind: 'quota' };

export function admissionPath(ws: WorkloadSpread): AdmissionPath {
  const subsets = ws.spec.subsets;
  const only = subsets[0];
  if (subsets.length === 1 && only !== undefined && only.maxReplicas === undefined) return { kind: 'single-unlimited', subset: only.name };
  if (namesPodsByOrdinal(ws.spec.targetRef)) return { kind: 'ordinal' };
  return { kind: 'quota' };
}

/** The view could not answer: make this read, then decide again. */
export interface ReadFirst {
  kind: 'read';
  read: ReadRequest;
}

/** The decision depends on the stored status: decide again with `current` under the group commit. */
export interface CommitFirst {
  kind: 'commit';
  ws: WorkloadSpread;
  /** The pod's version when it is known without a read: a place reserved ahead for it may be claimed (`PodCreateInput.claimed`). */
  version?: string;
}

/**
 * A place reserved ahead in the stored status (`reserveAhead`) that this
 * process hands to a pod without a name: the creatingPods entry `uid` of
 * `subset` for the pod's version. `unclaimed`: per subset, how many places
 * reserved ahead stay unclaimed after this one (they are in the stored
 * occupancy but hold no pod yet, so the pod's birth cost leaves them out).
 */
export interface ClaimedPlace {
  subset: string;
  uid: string;
  version: string;
  unclaimed: Record<string, number>;
}

/** The freshest stored copy of the WorkloadSpread a `commit` answer named; undefined when it is gone. */
export interface Current {
  ws: WorkloadSpread | undefined;
}

// ---- pod CREATE ----

export interface PodCreateInput {
  view: ClusterView;
  /** The pod of the request, as the API server sent it (injection works on a copy of it). */
  pod: Pod;
  namespace: string;
  now: number;
  /** A fresh id for a pod created without a name (generateName), kept in its marker. */
  newUid: () => string;
  current?: Current;
  /** D20: what subset patches may change (`--allow-privileged-subset-patches`); default: no privilege-bearing fields. */
  subsetPatches?: SubsetPatchPolicy;
  /** With `current`: the pod takes this place reserved ahead (stored already), so nothing is reserved for it. */
  claimed?: ClaimedPlace;
  /**
   * Whether this process reserved the place reserved ahead `uid` (claimed or
   * not). Given by a webhook that reserves
   * ahead: a pod that finds no room while other places reserved ahead are in
   * the status is refused so its controller retries it. Omitted (plan,
   * simulate): such a pod is unplaced, as the reference does.
   */
  reservedHere?: (uid: string) => boolean;
}

export type PodCreateDecision =
  /** Not a pod any WorkloadSpread places (or its WorkloadSpread is gone): admitted unchanged. */
  | { kind: 'admit' }
  | ReadFirst
  | CommitFirst
  /**
   * Placed: answer with the patch to `pod`, once `status` (when set) is
   * stored. `injected` is false for a subset gone from the spec.
   * `refusedPatch`: the subset's patch was left out because it changes these
   * protected fields (D20; the caller records `SubsetPatchRefused`).
   * `placement` (D21): a place taken without a reservation that later birth
   * costs must count until the pod is seen — the caller remembers it.
   * `reservedFor`: the version a new reservation (in `status`) was made for,
   * when the pod has no name (places for its successors may be reserved
   * ahead), and `template` the request pod, which those places are tried
   * with where the simulation schedule applies (D3). `claimed`: the pod took
   * a place reserved ahead.
   */
  | {
      kind: 'placed';
      ws: WorkloadSpread;
      subset: string;
      pod: Pod;
      injected: boolean;
      status?: WorkloadSpreadStatus;
      refusedPatch?: string[];
      placement?: RecentPlacement;
      reservedFor?: string;
      template?: Pod;
      claimed?: boolean;
    }
  /**
   * D11: no subset can take the pod; `event` is recorded on the
   * WorkloadSpread. Admitted unchanged, or (D21, a target that gets deletion
   * costs) with `pod`: the request pod with only its deletion cost added.
   */
  | { kind: 'unplaced'; ws: WorkloadSpread; event: EngineEvent; pod?: Pod }
  /** Refused (500): the workload controller retries. `cause` says which rule refused, for the logs. */
  /**
   * Refused. `message` is what the caller reads (it lands in the workload's events): only what the
   * request said and the WorkloadSpread's name, never uids, patch contents or other objects' fields;
   * `detail` is the whole story, for the manager's log.
   */
  | { kind: 'error'; cause: 'owner-not-found' | 'whitelist' | 'reservation' | 'held-ahead' | 'injection'; message: string; detail?: string; ws?: WorkloadSpread };

/**
 * Whether a pod CREATE decision that changed no status holds whatever becomes
 * of other admissions' reservations it was decided with but that are not
 * written yet (group commit, issue 13): it takes no quota — no WorkloadSpread,
 * no subset, a subset gone from the spec, or a subset that keeps no
 * bookkeeping (unlimited, no minReplicas) — so no limit's arithmetic counts
 * it and it cannot put a subset over its limit. A placement without a status
 * change in a subset that keeps bookkeeping rests on a reservation (a retried
 * admission), and an error may come from the unwritten state: neither holds
 * alone.
 */
export function holdsWithoutWrite(decision: PodCreateDecision): boolean {
  switch (decision.kind) {
    case 'admit':
    case 'unplaced':
      return true;
    case 'placed': {
      if (decision.status !== undefined) return false;
      // A place reserved ahead is stored already: the answer rests on nothing unwritten.
      if (!decision.injected || decision.claimed === true) return true;
      const subset = named(decision.ws.spec.subsets, decision.subset);
      return subset !== undefined && !reservesPlaces(subset);
    }
    default:
      return false;
  }
}

export interface ReserveAheadInput {
  view: ClusterView;
  namespace: string;
  /** The WorkloadSpread as the round is about to write it (its reservations included). */
  ws: WorkloadSpread;
  version: string;
  /**
   * A pod of the version (the request pod of the round that reserves):
   * where the simulation schedule applies (D3), a place is reserved only in
   * a subset some node of which could host it now; without it, none is.
   */
  pod?: Pod;
  /** At most this many places. */
  want: number;
  now: number;
  newUid: () => string;
}

/**
 * Places reserved ahead (issue 13): during a burst of pod creations, the
 * write that stores this round's reservations also reserves places for the
 * pods without a name expected next, so that they are answered from those
 * places without a status write each. Each place is what `chooseSubset`
 * gives one more pod without a name, in order, on the status with the
 * places before it; so the stored status holds exactly reservations (the
 * API, the limits and other manager replicas see nothing new), and a pod
 * claiming them in order lands where the rules would have put it. At most
 * the pods the workload still lacks for this version (its replicas minus
 * the places taken and the pods placed), none past the last limited subset
 * (an unlimited subset reserves nothing). With the simulation schedule (D3)
 * a place depends on the pod: the places are what the rules give `pod` (all
 * pods of a version share its template) while a node of the chosen subset
 * can host it — none where the rules would place it only because no subset
 * can; a claim checks again with the claiming pod. Booked deletions count as
 * not observed (the conservative reading). Pure: undefined when nothing is
 * reserved.
 */
export function reserveAhead(input: ReserveAheadInput): { status: WorkloadSpreadStatus; uids: { subset: string; uid: string }[] } | undefined {
  const { view, namespace, version } = input;
  let ws = input.ws;
  if (input.want <= 0) return undefined;
  let canHost: ((subset: Subset) => boolean) | undefined;
  if (simulationScheduleEnabled(ws)) {
    if (input.pod === undefined) return undefined;
    // The nodes do not change during this call: one answer per subset.
    const hosts = simulationCanHost(ws, input.pod, view.nodes(), (node) => view.requestedOnNode(node));
    const known = new Map<string, boolean>();
    canHost = (subset) => {
      let answer = known.get(subset.name);
      if (answer === undefined) known.set(subset.name, (answer = hosts(subset)));
      return answer;
    };
  }
  const wl = view.whitelist();
  const replicas = workloadReplicasIn(view, namespace, ws, 'error' in wl ? EMPTY_WHITELIST : wl);
  const total = replicas.get();
  if (!total.ok) return undefined;
  const n = Math.min(input.want, total.replicas - knownPlacements(view, namespace, ws, version));
  ws = withRoomAtReplicas(ws, version, () => total);
  const uids: { subset: string; uid: string }[] = [];
  const phantom: Pod = { metadata: { namespace }, spec: { containers: [] } };
  for (let i = 0; i < n; i++) {
    const choice = chooseSubset({ ws, pod: phantom, version, workloadReplicas: () => total, now: input.now, newUid: () => RESERVED_AHEAD_PREFIX + input.newUid(), deletionObserved: () => false, ...(canHost === undefined ? {} : { canHost }) });
    if (choice.kind !== 'chosen' || choice.status === undefined || choice.uid === undefined) break;
    if (canHost !== undefined) {
      const subset = named(ws.spec.subsets, choice.subset);
      if (subset === undefined || !canHost(subset)) break;
    }
    ws = { ...ws, status: choice.status };
    uids.push({ subset: choice.subset, uid: choice.uid });
  }
  return uids.length === 0 || ws.status === undefined ? undefined : { status: ws.status, uids };
}

/**
 * The places reserved ahead that the stored status still holds (their
 * creatingPods entries, every version), by uid — claimed or not: a claimed
 * place stays until the controller sees its pod. With two manager replicas,
 * a pod that finds no room while the other one holds such places may be one
 * of the pods they were reserved for.
 */
function placesReservedAhead(ws: WorkloadSpread): string[] {
  const uids = new Set<string>();
  for (const s of ws.status === undefined ? [] : allSubsetStatuses(ws.status)) {
    for (const id of Object.keys(s.creatingPods ?? {})) if (id.startsWith(RESERVED_AHEAD_PREFIX)) uids.add(id);
  }
  return [...uids];
}

/**
 * Gives back places reserved ahead that no pod claimed (the burst ended, or
 * the workload scaled down): their creatingPods entries go, and each frees
 * the room it took. Entries already gone (expired by the controller, or
 * matched by a pod) are left alone. Pure: undefined when nothing changes.
 */
export function releaseAhead(ws: WorkloadSpread, version: string, uids: readonly string[]): WorkloadSpreadStatus | undefined {
  const stored = ws.status?.versionedSubsetStatuses?.[version];
  if (stored === undefined) return undefined;
  const gone = new Set(uids);
  let changed = false;
  const statuses = stored.map((st) => {
    const creating = st.creatingPods ?? {};
    const dropped = Object.keys(creating).filter((k) => gone.has(k));
    if (dropped.length === 0) return st;
    changed = true;
    const kept = Object.fromEntries(Object.entries(creating).filter(([k]) => !gone.has(k)));
    const next: SubsetStatus = { ...st, creatingPods: kept, missingReplicas: st.missingReplicas === -1 ? -1 : st.missingReplicas + dropped.length };
    return next;
  });
  return changed ? withVersionStatuses(ws, version, statuses) : undefined;
}

/**
 * Stamps places reserved ahead again: their creatingPods entries get `now`,
 * so the controller, which drops an entry 30 s after its stamp, keeps them
 * while the pool holding them hands them out. `kept`: the places whose
 * entry was still there (one the controller dropped, or that a seen pod
 * turned into a replica, is not, and is not added back). Pure: undefined
 * when no entry is stamped.
 */
export function renewAhead(ws: WorkloadSpread, version: string, uids: readonly string[], now: number): { status: WorkloadSpreadStatus; kept: Set<string> } | undefined {
  const stored = ws.status?.versionedSubsetStatuses?.[version];
  if (stored === undefined || uids.length === 0) return undefined;
  const wanted = new Set(uids);
  const kept = new Set<string>();
  const stamp = formatTime(now);
  const statuses = stored.map((st) => {
    const creating = st.creatingPods;
    if (creating === undefined) return st;
    let next: Record<string, string> | undefined;
    for (const id of Object.keys(creating)) {
      if (!wanted.has(id)) continue;
      kept.add(id);
      next ??= { ...creating };
      next[id] = stamp;
    }
    return next === undefined ? st : { ...st, creatingPods: next };
  });
  return kept.size === 0 ? undefined : { status: withVersionStatuses(ws, version, statuses), kept };
}

const WHITELIST_UNREADABLE = "the manager's custom workload whitelist cannot be read";

const wsName = (ws: WorkloadSpread): string => `${ws.metadata.namespace ?? ''}/${ws.metadata.name ?? ''}`;

function heldAheadMessage(ws: WorkloadSpread, held: number): string {
  return `no subset of WorkloadSpread ${wsName(ws)} has room outside ${held} place(s) another manager replica reserved ahead for this burst; retry (unclaimed places are given back within seconds)`;
}

/** A refusal for limits that cannot be resolved: which values are wrong is the WorkloadSpread's business (the log has it). */
function limitsUnresolved(ws: WorkloadSpread): string {
  return `the subset limits of WorkloadSpread ${wsName(ws)} cannot be worked out`;
}

/** Decides a pod CREATE (spec §2.1–§2.5). */
export function decidePodCreate(input: PodCreateInput): PodCreateDecision {
  const { view, pod, namespace } = input;
  if (input.current !== undefined) {
    const ws = input.current.ws;
    return ws === undefined ? { kind: 'admit' } : decideByQuota(input, ws);
  }
  const spreads = view.workloadSpreads(namespace);
  if (spreads.length === 0) return { kind: 'admit' };
  const whitelist = whitelistForCreate(view, pod);
  if ('error' in whitelist) return { kind: 'error', cause: 'whitelist', message: WHITELIST_UNREADABLE, detail: whitelist.error };
  const match = matchWorkloadSpreadForPod(pod, spreads, (ref) => view.object(namespace, ref), whitelist.whitelist);
  switch (match.kind) {
    case 'skip':
    case 'none':
      return { kind: 'admit' };
    case 'read':
      return match;
    case 'error':
      return { kind: 'error', cause: 'owner-not-found', message: match.message, detail: match.detail };
    case 'matched':
      break;
  }
  const ws = match.ws;
  const path = admissionPath(ws);
  switch (path.kind) {
    case 'single-unlimited':
      return placeInOnlySubset(input, ws, path.subset);
    case 'ordinal': {
      const subset = chooseSubsetByOrdinal(ws, pod.metadata?.name ?? '');
      return subset === undefined ? unplaced(ws, pod) : place(input, ws, subset, undefined, undefined, undefined);
    }
    case 'quota': {
      const version = pod.metadata?.name === undefined || pod.metadata.name === '' ? podVersionIn(view, namespace, pod) : undefined;
      return version === undefined || 'read' in version ? { kind: 'commit', ws } : { kind: 'commit', ws, version: version.version };
    }
  }
}

/**
 * §2.3 A: the one unlimited subset takes the pod, with no status. Its cost
 * (D21): every pod is within it (100 · (1 − 0)), unless a minReplicas
 * protects the first places (D2) — then the new pod's place is counted from
 * the pods known, and the pod is told apart for that count as on the quota path.
 */
function placeInOnlySubset(input: PodCreateInput, ws: WorkloadSpread, subset: string): PodCreateDecision {
  const { view, pod, namespace } = input;
  if (!writesDeletionCost(ws.spec.targetRef)) return place(input, ws, subset, undefined, undefined, undefined);
  if (!keepsBookkeeping(ws.spec.subsets[0])) return place(input, ws, subset, undefined, undefined, POD_DELETION_COST_POSITIVE);
  const version = podVersionIn(view, namespace, pod);
  if ('read' in version) return { kind: 'read', read: version.read };
  const latest = isLatestVersion(view, namespace, ws, pod, version.version);
  if ('read' in latest) return { kind: 'read', read: latest.read };
  if (latest.latest === undefined) return place(input, ws, subset, undefined, undefined, undefined);
  const named = pod.metadata?.name !== undefined && pod.metadata.name !== '';
  const uid = named ? undefined : input.newUid();
  const placed: Placed = { view, namespace, version: version.version, options: version.options };
  const cost = costAtBirth(ws, placed, subset, undefined, false, latest.latest, () => ({ ok: true, replicas: 0 }), true);
  const decision = place(input, ws, subset, uid, undefined, cost);
  if (decision.kind === 'placed') decision.placement = { key: uid ?? pod.metadata?.name ?? '', subset, version: version.version };
  return decision;
}

/**
 * The places of a version the stored status and the caches know of: each
 * limited subset's occupancy (pods and reservations), each unlimited one's
 * placed pods (cached, or answered and not seen yet).
 */
function knownPlacements(view: ClusterView, namespace: string, ws: WorkloadSpread, version: string): number {
  const statuses = ws.status?.versionedSubsetStatuses?.[version] ?? [];
  const placedHere = countPlaced(view.placedTally(namespace, ws.metadata.name ?? '', version, {}), view.recentPlacements(ws.metadata.uid ?? ''), version);
  let known = 0;
  for (const subset of ws.spec.subsets) {
    const stored = named(statuses, subset.name);
    known += reservesPlaces(subset) ? (stored === undefined ? 0 : Math.max(0, occupancy(stored))) : placedHere(subset.name);
  }
  return known;
}

/** §2.3 C on the freshest copy: version, quota, simulation, reservation. */
function decideByQuota(input: PodCreateInput, ws: WorkloadSpread): PodCreateDecision {
  const { view, pod, namespace } = input;
  const whitelist = whitelistForCreate(view, pod);
  if ('error' in whitelist) return { kind: 'error', cause: 'whitelist', message: WHITELIST_UNREADABLE, detail: whitelist.error, ws };
  const version = podVersionIn(view, namespace, pod);
  if ('read' in version) return { kind: 'read', read: version.read };
  // Whether the pod's version is the latest (its birth cost, D21) — asked before a uid is drawn for it.
  const latest = writesDeletionCost(ws.spec.targetRef) ? isLatestVersion(view, namespace, ws, pod, version.version) : { latest: undefined };
  if ('read' in latest) return { kind: 'read', read: latest.read };
  const replicas = workloadReplicasIn(view, namespace, ws, whitelist.whitelist);
  const observed = deletionsObservedIn(view, namespace, ws, version.version);
  if ('read' in observed) return { kind: 'read', read: observed.read };
  const claimed = input.claimed;
  const claimedSubset = claimed === undefined ? undefined : named(ws.spec.subsets, claimed.subset);
  // D3: a place reserved ahead in Adaptive mode holds only while a node of its subset can still host this pod.
  const claimHolds = claimedSubset !== undefined && (!simulationScheduleEnabled(ws) || simulationCanHost(ws, pod, view.nodes(), (node) => view.requestedOnNode(node))(claimedSubset));
  if (claimed !== undefined && claimed.version === version.version && claimHolds) {
    const placed: Placed = { view, namespace, version: version.version, options: version.options };
    const cost = latest.latest === undefined ? undefined : costAtBirth(ws, placed, claimed.subset, ws.status, true, latest.latest, replicas.get, false, claimed.unclaimed);
    if (replicas.read !== undefined) return { kind: 'read', read: replicas.read };
    const decision = place(input, ws, claimed.subset, claimed.uid, undefined, cost);
    if (decision.kind === 'placed') decision.claimed = true;
    return decision;
  }
  if (subsetsUsePercent(ws) && admissionReadsReplicas(ws, whitelist.whitelist)) {
    // D22: a pod beyond the workload's replicas as the cache has them is the sign of a scale-out the cache has
    // not seen yet (its watch lags the pods'): percentages sized at the old count would send this pod to an
    // unlimited subset. The target is read from the API server first (once; then decided again).
    const total = replicas.get();
    if (replicas.read !== undefined) return { kind: 'read', read: replicas.read };
    if (total.ok && knownPlacements(view, namespace, ws, version.version) >= total.replicas) {
      const fresh = view.freshObject?.(namespace, ws.spec.targetRef, { exactVersion: true });
      if (fresh !== undefined && 'read' in fresh) return { kind: 'read', read: fresh.read };
    }
  }
  // D22: percentage limits leave the room they leave at the workload's replicas now, not at those the stored status was computed for.
  const sized = withRoomAtReplicas(ws, version.version, replicas.get);
  if (replicas.read !== undefined) return { kind: 'read', read: replicas.read };
  // D21: in a balanced spec a pod's place in an unlimited subset decides its cost; it is counted from the pods, so it must be told apart.
  const counted = latest.latest === true && usesBalancedCosts(ws);
  const choice = chooseSubset({
    ws: sized,
    pod,
    version: version.version,
    workloadReplicas: replicas.get,
    now: input.now,
    newUid: input.newUid,
    deletionObserved: observed.observed,
    identifyUnreserved: counted,
    ...(simulationScheduleEnabled(ws)
      ? { canHost: simulationCanHost(ws, pod, view.nodes(), (node) => view.requestedOnNode(node)) }
      : {}),
  });
  if (replicas.read !== undefined) return { kind: 'read', read: replicas.read };
  if (choice.kind === 'none' && subsetsUsePercent(ws) && admissionReadsReplicas(ws, whitelist.whitelist)) {
    // D22: a pod that finds no room may be the first sign of a scale-out the cache has not seen yet; the
    // target is read from the API server before the pod is admitted without a subset (then decided again).
    // The read is this decision's own: one another admission made (while the cache lags) can predate the
    // scale-out that created this pod, and would leave it without a subset.
    // Not for a kind admission cannot count (its 0 would not change): no read per pod there.
    const fresh = view.freshObject?.(namespace, ws.spec.targetRef, { exactVersion: true, thisDecision: true });
    if (fresh !== undefined && 'read' in fresh) return { kind: 'read', read: fresh.read };
  }
  switch (choice.kind) {
    case 'error':
      return { kind: 'error', cause: 'reservation', message: limitsUnresolved(ws), detail: choice.message, ws };
    case 'none': {
      // Places another manager replica reserved ahead are held for pods of this burst, and this may be one of
      // them: refused (the workload controller creates it again) rather than left without a subset; that
      // replica claims them or gives them back within seconds.
      const reservedHere = input.reservedHere;
      const elsewhere = reservedHere === undefined ? 0 : placesReservedAhead(ws).filter((id) => !reservedHere(id)).length;
      if (elsewhere > 0) return { kind: 'error', cause: 'held-ahead', message: heldAheadMessage(ws, elsewhere), ws };
      // D21: the pod stays in no subset; it is born with the cost the controller gives such pods.
      return unplaced(ws, pod, latest.latest === undefined ? undefined : unplacedCost(ws));
    }
    case 'chosen': {
      const placed: Placed = { view, namespace, version: version.version, options: version.options };
      const cost = latest.latest === undefined ? undefined : costAtBirth(ws, placed, choice.subset, choice.status ?? ws.status, choice.status !== undefined, latest.latest, replicas.get);
      if (replicas.read !== undefined) return { kind: 'read', read: replicas.read };
      const decision = place(input, ws, choice.subset, choice.uid, choice.status, cost);
      const key = choice.uid ?? pod.metadata?.name ?? '';
      if (counted && choice.status === undefined && decision.kind === 'placed' && key !== '') decision.placement = { key, subset: choice.subset, version: version.version };
      if (choice.status !== undefined && choice.uid !== undefined && decision.kind === 'placed') {
        decision.reservedFor = version.version;
        decision.template = pod;
      }
      return decision;
    }
  }
}

function place(input: PodCreateInput, ws: WorkloadSpread, subset: string, uid: string | undefined, status: WorkloadSpreadStatus | undefined, cost: number | undefined): PodCreateDecision {
  const injected = injectSubset(input.pod, ws, subset, uid, input.subsetPatches);
  if (!injected.ok) return { kind: 'error', cause: 'injection', message: `the patch of subset ${subset} of WorkloadSpread ${wsName(ws)} cannot be applied to the pod`, detail: injected.error, ws };
  let placed = injected.pod;
  if (cost !== undefined && injected.injected) {
    // Only the annotations change: share the rest of the injected pod.
    placed = { ...placed, metadata: { ...placed.metadata, annotations: { ...placed.metadata.annotations, [POD_DELETION_COST_ANNOTATION]: String(cost) } } };
  }
  const decision: PodCreateDecision = { kind: 'placed', ws, subset, pod: placed, injected: injected.injected };
  if (status !== undefined) decision.status = status;
  if (injected.refusedPatch !== undefined) decision.refusedPatch = injected.refusedPatch;
  return decision;
}

/**
 * Which booked deletions of the version have taken effect (issue 14): a pod
 * the cache no longer shows, or shows terminating, is gone; one it shows
 * running is confirmed with a fresh read (the cache may lag behind the
 * deletion that triggered this very pod). Only observed deletions free their
 * slot (subset-choice.ts): a forged or refused deletion of a running pod
 * frees nothing. A failed read counts as not observed.
 */
function deletionsObservedIn(view: ClusterView, namespace: string, ws: WorkloadSpread, version: string): { observed: (podName: string) => boolean } | { read: ReadRequest } {
  const running = new Set<string>();
  for (const status of ws.status?.versionedSubsetStatuses?.[version] ?? []) {
    for (const name of Object.keys(status.deletingPods ?? {})) {
      const cached = view.pod(namespace, name);
      if ('read' in cached || 'notFound' in cached) continue;
      if ('error' in cached) {
        running.add(name);
        continue;
      }
      if (!isPodActive(cached.found)) continue;
      const fresh = view.freshPod === undefined ? cached : view.freshPod(namespace, name);
      if ('read' in fresh) return { read: fresh.read };
      if ('error' in fresh || ('found' in fresh && isPodActive(fresh.found))) running.add(name);
    }
  }
  return { observed: (name) => !running.has(name) };
}

/**
 * D21: the deletion cost the controller will give the new pod — the last
 * place of its subset among this version's pods (the stored counts, the new
 * reservation included), forward order when the pod's version is the
 * workload's latest, reverse otherwise. The caller gives none when the target
 * gets no costs (StatefulSet, Job, custom kinds: the controller decides
 * those) or whether the version is the latest is not known here.
 */
function costAtBirth(
  ws: WorkloadSpread,
  placed: Placed,
  subset: string,
  status: WorkloadSpreadStatus | undefined,
  reserved: boolean,
  latest: boolean,
  workloadReplicas: () => WorkloadReplicasResult,
  countAll = false,
  unclaimed: Record<string, number> = {},
): number | undefined {
  const { version } = placed;
  const statuses = status?.versionedSubsetStatuses?.[version] ?? [];
  // A balanced table needs the size of every subset. Those keeping reservations have it in the status;
  // the others (unlimited, no minReplicas) are counted from the pods known and this process's recent placements.
  let known: ((subset: string) => number) | undefined;
  const counted = (name: string): number => {
    known ??= countPlaced(placed.view.placedTally(placed.namespace, ws.metadata.name ?? '', version, placed.options), placed.view.recentPlacements(ws.metadata.uid ?? ''), version);
    return known(name);
  };
  const balanced = latest && usesBalancedCosts(ws);
  const counts = ws.spec.subsets.map((s) => {
    const stored = named(statuses, s.name);
    const bookkept = reservesPlaces(s);
    // Places reserved ahead and not claimed yet hold no pod: they are left out of the count.
    const held = countAll || (balanced && !bookkept) ? counted(s.name) : stored === undefined ? 0 : Math.max(0, occupancy(stored) - (unclaimed[s.name] ?? 0));
    // Without a reservation the new pod is not counted yet.
    return s.name === subset && !reserved ? held + 1 : held;
  });
  const replicas = workloadReplicas();
  return birthCost(ws, subset, counts, replicas.ok ? replicas.replicas : 0, latest);
}

/** Where a new pod's version is counted (`countPlaced`). */
interface Placed {
  view: ClusterView;
  namespace: string;
  version: string;
  options: PodVersionOptions;
}

/** Whether the pod's version is the workload's latest (spec §6.2); undefined when that cannot be told here. */
function isLatestVersion(view: ClusterView, namespace: string, ws: WorkloadSpread, pod: Pod, version: string): { latest: boolean | undefined } | { read: ReadRequest } {
  const target = ws.spec.targetRef;
  const workload = view.object(namespace, target, { exactVersion: true });
  if ('read' in workload) return { read: workload.read };
  if (!('found' in workload)) return { latest: undefined };
  const owner = controllerRef(pod);
  let replicaSets: KubeObject[] = [];
  if (target.kind === 'Deployment' && owner !== undefined && owner.kind === 'ReplicaSet') {
    const rs = view.object(namespace, { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name });
    if ('read' in rs) return { read: rs.read };
    if ('found' in rs) replicaSets = [rs.found];
  }
  const cloneSetRecreate = target.kind === 'CloneSet' && version !== VERSION_IGNORED_KEY;
  const latest = latestWorkloadVersion(target, workload.found, replicaSets, { cloneSetRecreate });
  if (latest.ok) return { latest: latest.version === version };
  return { latest: latest.notFound ? false : undefined };
}

/**
 * D11: the pod gets no subset; the Warning names it (or its generateName) and
 * the workload. With a `cost` (D21) the pod carries only that annotation: no
 * marker, no injection.
 */
function unplaced(ws: WorkloadSpread, pod: Pod, cost?: number): PodCreateDecision {
  const name = pod.metadata?.name ?? '';
  const target = ws.spec.targetRef;
  const event = noSubsetAvailableEvent(workloadSpreadRef(ws), name !== '' ? name : (pod.metadata?.generateName ?? ''), { kind: target.kind, name: target.name });
  if (cost === undefined) return { kind: 'unplaced', ws, event };
  const costed = deepClone(pod);
  costed.metadata = { ...costed.metadata, annotations: { ...costed.metadata?.annotations, [POD_DELETION_COST_ANNOTATION]: String(cost) } };
  return { kind: 'unplaced', ws, event, pod: costed };
}

/**
 * The whitelist for matching a new pod. If it cannot be read, pods of the
 * built-in kinds (and unowned pods) are still placed — the whitelist cannot
 * change their outcome; a pod with another owner is refused, since it may
 * belong to a whitelisted workload.
 */
function whitelistForCreate(view: ClusterView, pod: Pod): { whitelist: Whitelist } | { error: string } {
  const wl = view.whitelist();
  if (!('error' in wl)) return { whitelist: wl };
  const owner = controllerRef(pod);
  if (owner === undefined) return { whitelist: EMPTY_WHITELIST };
  const gv = apiVersionGroup(owner.apiVersion);
  const builtIn = gv.ok && SUPPORTED_WORKLOAD_KINDS.some((k) => k.group === gv.group && k.kind === owner.kind);
  return builtIn ? { whitelist: EMPTY_WHITELIST } : { error: `the custom workload whitelist cannot be read: ${wl.error}` };
}

// ---- pod DELETE and eviction ----

export interface PodDeletionInput {
  view: ClusterView;
  /** The pod a DELETE removes (its `oldObject`), or the name of the pod an eviction names. */
  subject: { pod: Pod } | { podName: string };
  namespace: string;
  now: number;
  current?: Current;
}

export type PodDeletionDecision =
  /** Nothing to record: allowed without side effects. */
  | { kind: 'admit' }
  | ReadFirst
  | CommitFirst
  /** Allowed once `status` (the deletion record) is stored. */
  | { kind: 'recorded'; ws: WorkloadSpread; status: WorkloadSpreadStatus }
  /** Refused (400), as the reference refuses when it cannot read or record; `detail` (for the log) as in PodCreateDecision. */
  | { kind: 'error'; message: string; detail?: string };

/** Decides the bookkeeping of a pod DELETE or eviction (spec §3). */
export function decidePodDeletion(input: PodDeletionInput): PodDeletionDecision {
  const { view, namespace } = input;
  let pod: Pod;
  if ('podName' in input.subject) {
    const found = view.pod(namespace, input.subject.podName);
    if ('read' in found) return { kind: 'read', read: found.read };
    // Gone for the API server too: nothing to record, and the API server answers the eviction 404
    // itself once admission passes — what `kubectl drain` expects of a pod already deleted.
    if ('notFound' in found) return { kind: 'admit' };
    if ('error' in found) return { kind: 'error', message: found.error };
    pod = found.found;
  } else {
    // Issue 14: book the deletion of the pod the cluster has — same name and uid as the request's
    // oldObject — and take marker, owner and version from it, not from what the caller sent.
    const claimed = input.subject.pod;
    const name = claimed.metadata?.name ?? '';
    const uid = claimed.metadata?.uid ?? '';
    if (name === '' || uid === '') return { kind: 'admit' };
    let stored = view.pod(namespace, name);
    if ('read' in stored) return { kind: 'read', read: stored.read };
    if ('found' in stored && stored.found.metadata?.uid !== uid && view.freshPod !== undefined) {
      // The cache may still hold an earlier pod of that name.
      stored = view.freshPod(namespace, name);
      if ('read' in stored) return { kind: 'read', read: stored.read };
    }
    // Not the pod the cluster has (gone, or another one under that name): nothing to book.
    if ('notFound' in stored) return { kind: 'admit' };
    if ('error' in stored) return { kind: 'error', message: stored.error };
    if (stored.found.metadata?.uid !== uid) return { kind: 'admit' };
    pod = stored.found;
  }
  const marker = readMarker(pod);
  if (marker === undefined || !shouldRecordDeletion(pod, marker)) return { kind: 'admit' };

  let ws: WorkloadSpread;
  if (input.current !== undefined) {
    if (input.current.ws === undefined) return { kind: 'admit' };
    ws = input.current.ws;
  } else {
    const listed = view.workloadSpread(namespace, marker.name);
    if ('notFound' in listed) return { kind: 'admit' };
    if ('error' in listed) return { kind: 'error', message: `cannot read WorkloadSpread ${namespace}/${marker.name}: ${listed.error}` };
    ws = listed.found;
  }
  // The shortcut and the StatefulSet path never write (§3.4 via §2.3 A/B).
  if (admissionPath(ws).kind !== 'quota') return { kind: 'admit' };
  if (input.current === undefined) return { kind: 'commit', ws };

  const version = podVersionIn(view, namespace, pod);
  if ('read' in version) return { kind: 'read', read: version.read };
  const wl = view.whitelist();
  const replicas = workloadReplicasIn(view, namespace, ws, 'error' in wl ? EMPTY_WHITELIST : wl);
  // D22, as on create: the freed place is counted from the room at the workload's replicas now.
  const sized = withRoomAtReplicas(ws, version.version, replicas.get);
  const record = recordDeletion({ ws: sized, pod, marker, version: version.version, workloadReplicas: replicas.get, now: input.now });
  if (replicas.read !== undefined) return { kind: 'read', read: replicas.read };
  if (record.changed) return { kind: 'recorded', ws, status: record.status };
  return record.error === undefined ? { kind: 'admit' } : { kind: 'error', message: limitsUnresolved(ws), detail: record.error };
}

// ---- what both read ----

/**
 * The pod's version (§6.1, D12). A CloneSet-owned pod is versioned when its
 * CloneSet recreates pods; a CloneSet the view does not have counts as
 * recreating (its default), one it cannot say about needs a read.
 */
function podVersionIn(view: ClusterView, namespace: string, pod: Pod): { version: string; options: PodVersionOptions } | { read: ReadRequest } {
  const owner = controllerRef(pod);
  if (owner === undefined || owner.kind !== 'CloneSet') return { version: podVersion(pod), options: {} };
  const gv = apiVersionGroup(owner.apiVersion);
  if (!gv.ok || gv.group !== 'apps.kruise.io') return { version: podVersion(pod), options: {} };
  const found = view.object(namespace, { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name });
  if ('read' in found) return { read: found.read };
  const options = { cloneSetRecreate: 'found' in found ? cloneSetRecreates(found.found) : true };
  return { version: podVersion(pod, options), options };
}

/**
 * The workload replicas percentages are resolved against (§5.1): to initialize
 * a version entry, and (D22, `withRoomAtReplicas`) to size a stored one at the
 * workload's replicas now; a lazy getter, called only when some limit is a
 * percentage. The target is read by its real version; when the view has to
 * read it first, the getter fails and `read` says which read to make.
 */
function workloadReplicasIn(view: ClusterView, namespace: string, ws: WorkloadSpread, whitelist: Whitelist): { get: () => WorkloadReplicasResult; read: ReadRequest | undefined } {
  // Asked several times per decision: answered once (the view does not change while one decision is taken).
  let answer: WorkloadReplicasResult | undefined;
  const out: { get: () => WorkloadReplicasResult; read: ReadRequest | undefined } = {
    read: undefined,
    get: () => (answer ??= replicasNow()),
  };
  const replicasNow = (): WorkloadReplicasResult => {
    const ref = ws.spec.targetRef;
    const workload = view.object(namespace, ref, { exactVersion: true });
    if ('read' in workload) {
      out.read = workload.read;
      return { ok: false, error: `${ref.kind} ${namespace}/${ref.name} must be read first` };
    }
    if ('error' in workload) return { ok: false, error: `cannot read ${ref.kind} ${namespace}/${ref.name}: ${workload.error}` };
    return admissionWorkloadReplicas(ws, 'found' in workload ? workload.found : undefined, whitelist);
  };
  return out;
}
