/**
 * Rebalancing (DECISIONS D18, opt-in per WorkloadSpread): which pod to move
 * next, or why none — pure, over the WorkloadSpread, its pods and a
 * `ClusterView`. The leader's rebalance loop (controller/rebalancer.ts)
 * evicts what this decides, through the Eviction API.
 *
 * Where pods belong: the distribution admission would make if the workload
 * were scaled up from nothing — `minReplicas` first, in spec order, then every
 * subset filled front to back up to its limit (`idealCounts`). A pod is out of
 * place when its subset holds more than that (and more than its minReplicas
 * protects), or it is in no subset; `pending` counts them.
 *
 * A move evicts ONE pod; the workload controller creates its replacement and
 * admission places it. So a move is made only when the replacement will land
 * where intended, judged by core's own admission on the current status:
 * the eviction is recorded as the webhook would record it
 * (`decidePodDeletion`), then the replacement — built from the evicted pod's
 * owner's template — is admitted (`decidePodCreate`), and a node of the chosen
 * subset must be able to host it (the simulation schedule's node check, with
 * the evicted pod's requests freed). The move is wanted when that subset is
 * better than the pod's own:
 *   1. the pod's subset is above its limit (back subsets first), or
 *   2. the pod is in no subset, or
 *   3. the chosen subset comes before the pod's (a higher-priority subset has
 *      room again), or is below its `minReplicas`;
 * and never takes a subset below its own `minReplicas`. The pod moved is the
 * least valuable of its subset in the ReplicaSet scale-down order (deletion
 * cost first). Every move lowers (over-limit pods, pods in no subset, the sum
 * of subset indexes) lexicographically, so moves end.
 *
 * Pacing ("the next only when the replacement is Ready"):
 * - `unavailable` = max(pods of the WorkloadSpread still terminating,
 *   replicas − active Ready pods);
 * - a move is in flight from its accepted eviction until the evicted pod no
 *   longer exists AND at least `replicas − k` active pods are Ready, k being
 *   the other moves in flight whose pods still exist — with the default of one
 *   move, until the evicted pod is deleted and every replica is Ready again;
 * - a new move starts only when fewer than `maxInFlight` moves are in flight
 *   and `unavailable < maxInFlight`, so the workload never has more than
 *   `maxInFlight` pods unavailable because of the rebalancer;
 * - a recorded move whose pod the cache still shows untouched (the informer
 *   lags the eviction) counts as terminating for 15 s;
 * - waiting for the workload to be Ready is reported as blocked (a Warning)
 *   only after 10 minutes: a workload scaling or rolling out is not news.
 * Nothing moves unless the target's pods are replaced by a ReplicaSet-like
 * controller (D7: never StatefulSet or Job), and nothing moves while the stored
 * status lags the pods or the spec (admission would decide on stale quota).
 * Start at `planRebalance`, then `rebalanceStatus`.
 */
import { DELETE_POD_TIMEOUT_MS, FAKE_SUBSET_NAME } from '../api/keys.ts';
import { named, type RebalanceMove, type RebalanceReason, type RebalanceStatus, type Subset, type WorkloadSpread } from '../api/workloadspread.ts';
import { deepEqual, isPlainObject } from '../k8s/json.ts';
import { controllerRef, isPodActive, isPodReady, isPodTerminating, podPhase } from '../k8s/pod.ts';
import { rankPodsForScaleDown } from '../k8s/pod-ranking.ts';
import { formatTime, parseTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { admissionPath, decidePodCreate, decidePodDeletion } from './admission.ts';
import type { ClusterView, ReadRequest } from './cluster-view.ts';
import { injectSubset } from './inject.ts';
import { markedSubset } from './marker.ts';
import { resolveMaxReplicas } from './percent.ts';
import { nodeCanHostPod, requestedOnNode } from './simulation-schedule.ts';
import { isSchedulableFalse } from './subset-choice.ts';

/** How long the workload may stay not Ready before the wait is reported as blocked (a Warning). */
export const READINESS_PATIENCE_MS = 10 * 60_000;

/** How long a recorded move whose pod still looks untouched counts as in flight (the reference's deletion timeout). */
export const MOVE_RECORD_GRACE_MS = DELETE_POD_TIMEOUT_MS;

export interface RebalanceInput {
  /** The WorkloadSpread (decoded, the freshest copy). */
  ws: WorkloadSpread;
  /** `workloadspread.io/rebalance-max-in-flight` (≥ 1). */
  maxInFlight: number;
  /** The WorkloadSpread's pods (`podsForWorkloadSpread`), terminating ones included. */
  pods: readonly Pod[];
  /** The workload's replicas (the controller's count; -1 when unknown). */
  workloadReplicas: number;
  /** D7: whether the target's pods are replaced by a ReplicaSet-like controller (`writesDeletionCost`). */
  replacesPods: boolean;
  /** Owners' templates, nodes and the pods bound to them; admission reads through it. */
  view: ClusterView;
  now: number;
}

/** The next move: evict `pod`, whose replacement admission places in `to`. */
export interface PlannedMove {
  pod: string;
  uid?: string;
  /** The pod's subset (FAKE_SUBSET_NAME: in no subset). */
  from: string;
  to: string;
}

export type RebalanceNext =
  | { kind: 'move'; move: PlannedMove }
  /** No move now. `blocked`: a move is wanted and cannot be made (worth a RebalanceBlocked event). */
  | { kind: 'none'; reason: RebalanceReason; message: string; blocked: boolean };

export interface RebalancePlan {
  /** Pods not where the spec wants them. */
  pending: number;
  /** The recorded moves still in flight after this look. */
  inFlight: RebalanceMove[];
  /** The recorded moves this look found complete (or stale). */
  completed: RebalanceMove[];
  next: RebalanceNext;
  /** Look again after this long (a recorded move whose pod still looks untouched). */
  requeueAfterMs?: number;
  /** Look again after this long only to report a wait that lasted (not work: it must not hold a settle). */
  wakeAfterMs?: number;
}

/** Per subset: the active pods, and how many the spec wants there. */
interface SubsetCount {
  subset: Subset;
  index: number;
  pods: Pod[];
  /** Resolved limit; undefined when unlimited. */
  limit: number | undefined;
  min: number;
  ideal: number;
}

/**
 * How many pods each subset holds when `total` pods are placed from nothing
 * (admission's order): minReplicas first, in spec order, then front to back up
 * to each limit (undefined: unlimited). Pods beyond every limit are not
 * placed. Pure arithmetic, no node capacity.
 */
export function idealCounts(subsets: readonly { limit: number | undefined; min: number }[], total: number): number[] {
  const ideal = subsets.map(() => 0);
  let left = Math.max(0, total);
  subsets.forEach((s, i) => {
    if (s.min <= 0 || left === 0) return;
    const give = Math.min(s.min, s.limit ?? Infinity, left);
    ideal[i] = give;
    left -= give;
  });
  subsets.forEach((s, i) => {
    if (left === 0) return;
    const room = (s.limit ?? Infinity) - (ideal[i] ?? 0);
    const give = Math.min(room, left);
    if (give <= 0) return;
    ideal[i] = (ideal[i] ?? 0) + give;
    left -= give;
  });
  return ideal;
}

/** The pods a subset holds on to: its ideal share, or what its minReplicas protects if that is more. */
function keeps(c: SubsetCount): number {
  return Math.max(c.ideal, Math.min(c.pods.length, c.min));
}

function nameOf(pod: Pod): string {
  return pod.metadata?.name ?? '';
}

/** A pod the informer still shows untouched although its eviction was accepted: seen as terminating. */
function asTerminating(pod: Pod, since: string): Pod {
  return { ...pod, metadata: { ...pod.metadata, deletionTimestamp: since } };
}

function isFinished(pod: Pod): boolean {
  const phase = podPhase(pod);
  return phase === 'Succeeded' || phase === 'Failed';
}

function subsetLabel(name: string): string {
  return name === FAKE_SUBSET_NAME ? 'no subset' : `subset ${name}`;
}

export function planRebalance(input: RebalanceInput): RebalancePlan {
  const { ws, now, view } = input;
  const wsName = ws.metadata.name ?? '';
  const namespace = ws.metadata.namespace ?? '';
  const replicas = input.workloadReplicas;
  const maxInFlight = Math.max(1, Math.floor(input.maxInFlight));

  // ---- the recorded moves, and the pods as they are once those evictions are counted ----
  const recorded = ws.status?.rebalance?.moves ?? [];
  const byName = new Map(input.pods.map((p) => [nameOf(p), p]));
  const completed: RebalanceMove[] = [];
  const kept: RebalanceMove[] = [];
  const racing = new Map<string, string>();
  let requeueAfterMs: number | undefined;
  for (const move of recorded) {
    const pod = byName.get(move.pod);
    if (pod !== undefined && isPodActive(pod)) {
      const at = parseTime(move.evictedAt) ?? now;
      const due = at + MOVE_RECORD_GRACE_MS - now;
      if (due < 0) {
        completed.push(move); // the eviction never showed: stale
        continue;
      }
      racing.set(move.pod, move.evictedAt);
      requeueAfterMs = requeueAfterMs === undefined ? due + 1 : Math.min(requeueAfterMs, due + 1);
    }
    kept.push(move);
  }
  const pods = input.pods.map((p) => (racing.has(nameOf(p)) ? asTerminating(p, racing.get(nameOf(p)) as string) : p));

  const active = pods.filter(isPodActive);
  const readyCount = active.filter(isPodReady).length;
  const terminating = pods.filter((p) => isPodTerminating(p) && !isFinished(p)).length;
  const unavailable = Math.max(0, terminating, replicas - readyCount);
  const exists = new Set(pods.map(nameOf));

  const inFlight: RebalanceMove[] = [];
  for (const move of kept) {
    const othersExisting = kept.filter((m) => m !== move && exists.has(m.pod)).length;
    if (!exists.has(move.pod) && readyCount >= replicas - othersExisting) completed.push(move);
    else inFlight.push(move);
  }

  // ---- where pods are, and where the spec wants them ----
  const subsets = ws.spec.subsets;
  const fake: Pod[] = [];
  const counts: SubsetCount[] = subsets.map((subset, index) => {
    const limit = resolveMaxReplicas(subset.maxReplicas, Math.max(0, replicas));
    return {
      subset,
      index,
      pods: [],
      limit: limit === undefined || limit < 0 ? undefined : limit,
      min: typeof subset.minReplicas === 'number' && subset.minReplicas > 0 ? Math.floor(subset.minReplicas) : 0,
      ideal: 0,
    };
  });
  const bySubsetName = new Map(counts.map((c) => [c.subset.name, c]));
  for (const pod of active) {
    const own = markedSubset(pod, wsName);
    const count = own === undefined ? undefined : bySubsetName.get(own);
    if (count === undefined) fake.push(pod);
    else count.pods.push(pod);
  }
  const ideal = idealCounts(counts, Math.max(replicas, active.length));
  counts.forEach((c, i) => (c.ideal = ideal[i] ?? 0));
  // A subset keeps its ideal share, and never gives up the pods its minReplicas protects (D2).
  const pending = counts.reduce((n, c) => n + Math.max(0, c.pods.length - keeps(c)), 0) + fake.length;

  const plan = (next: RebalanceNext): RebalancePlan => {
    const out: RebalancePlan = { pending, inFlight, completed, next };
    if (requeueAfterMs !== undefined) out.requeueAfterMs = requeueAfterMs;
    return out;
  };
  const none = (reason: RebalanceReason, message: string, blocked: boolean) => plan({ kind: 'none', reason, message, blocked });

  // ---- what may not move at all ----
  const target = ws.spec.targetRef;
  if (!input.replacesPods || admissionPath(ws).kind === 'ordinal') {
    return none('Unsupported', `pods of ${target.kind} ${namespace}/${target.name} are not replaced by a ReplicaSet-like controller, so they are never moved (only Deployment, ReplicaSet, CloneSet and workloads whose pods ReplicaSets own are rebalanced)`, true);
  }

  // ---- pacing ----
  const movingMessage = () => {
    const m = inFlight[0] as RebalanceMove;
    const more = inFlight.length > 1 ? ` (and ${inFlight.length - 1} more move${inFlight.length > 2 ? 's' : ''})` : '';
    return `waiting for the replacement of pod ${namespace}/${m.pod} (moved from ${subsetLabel(m.from)} to ${subsetLabel(m.to)}) to be Ready${more}`;
  };
  if (pending === 0) {
    return inFlight.length > 0 ? none('Moving', movingMessage(), false) : none('Balanced', 'every pod is in the subset the spec wants it in', false);
  }
  if (inFlight.length >= maxInFlight || (inFlight.length > 0 && unavailable >= maxInFlight)) return none('Moving', movingMessage(), false);
  if (unavailable >= maxInFlight) {
    // A workload scaling, rolling out or starting is not Ready for a while: that is no news. Only a wait
    // longer than READINESS_PATIENCE_MS is reported as blocked (its message differs, so it is recorded once).
    const previous = ws.status?.rebalance;
    const since = previous?.reason === 'WaitingForReadiness' ? (parseTime(previous.lastTransitionTime) ?? now) : now;
    const rule = `a move starts only while fewer than ${maxInFlight} of its pods are unavailable (not Ready, missing or terminating)`;
    if (now - since >= READINESS_PATIENCE_MS) {
      return none('WaitingForReadiness', `the pods of ${target.kind} ${namespace}/${target.name} have not all been Ready for ${READINESS_PATIENCE_MS / 60_000} minutes: ${rule}`, true);
    }
    const out = none('WaitingForReadiness', `waiting for the pods of ${target.kind} ${namespace}/${target.name} to be Ready: ${rule}`, false);
    out.wakeAfterMs = since + READINESS_PATIENCE_MS - now + 1;
    return out;
  }
  const lag = statusLag(ws, counts);
  if (lag !== undefined) return none('WaitingForStatus', lag, false);

  // ---- candidates, most urgent first ----
  const candidates: { from: string; pods: Pod[]; reason: 'over-limit' | 'no-subset' | 'priority'; count?: SubsetCount }[] = [];
  const backToFront = [...counts].reverse();
  for (const c of backToFront) if (c.limit !== undefined && c.pods.length > c.limit) candidates.push({ from: c.subset.name, pods: c.pods, reason: 'over-limit', count: c });
  if (fake.length > 0) candidates.push({ from: FAKE_SUBSET_NAME, pods: fake, reason: 'no-subset' });
  for (const c of backToFront) {
    if (c.limit !== undefined && c.pods.length > c.limit) continue;
    if (c.pods.length > keeps(c)) candidates.push({ from: c.subset.name, pods: c.pods, reason: 'priority', count: c });
  }

  let firstFailure: { reason: RebalanceReason; message: string } | undefined;
  for (const candidate of candidates) {
    const tried = tryMove(input, counts, candidate, active);
    if ('move' in tried) return plan({ kind: 'move', move: tried.move });
    firstFailure ??= tried;
  }
  const failure = firstFailure ?? { reason: 'NoRoom' as const, message: 'no subset has room for the pods out of place' };
  return none(failure.reason, failure.message, true);
}

/** Why the stored status cannot be trusted yet for admission's quota, or undefined when it can. */
function statusLag(ws: WorkloadSpread, counts: readonly SubsetCount[]): string | undefined {
  const generation = ws.metadata.generation;
  const status = ws.status;
  if (typeof generation === 'number' && status?.observedGeneration !== generation) {
    return 'waiting for the controller to observe the current spec (status.observedGeneration)';
  }
  const stored = new Map((status?.subsetStatuses ?? []).map((s) => [s.name, s]));
  for (const c of counts) {
    const s = stored.get(c.subset.name);
    if (s === undefined || s.replicas !== c.pods.length) return `waiting for the controller to count the pods of subset ${c.subset.name} in the status`;
  }
  return undefined;
}

type Tried = { move: PlannedMove } | { reason: RebalanceReason; message: string };

/** The pod a workload controller would create to replace `pod`: its owner's template, with the same owner. */
function replacementFor(pod: Pod, owner: KubeObject): Pod | undefined {
  const spec = isPlainObject(owner['spec']) ? owner['spec'] : undefined;
  const template = spec !== undefined && isPlainObject(spec['template']) ? spec['template'] : undefined;
  if (template === undefined) return undefined;
  const meta = isPlainObject(template['metadata']) ? template['metadata'] : {};
  const ref = controllerRef(pod);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...(isPlainObject(meta['labels']) ? { labels: { ...(meta['labels'] as Record<string, string>) } } : {}),
      ...(isPlainObject(meta['annotations']) ? { annotations: { ...(meta['annotations'] as Record<string, string>) } } : {}),
      namespace: pod.metadata?.namespace ?? '',
      generateName: `${owner.metadata?.name ?? ''}-`,
      ...(ref === undefined ? {} : { ownerReferences: [ref] }),
    },
    spec: (isPlainObject(template['spec']) ? template['spec'] : {}) as Pod['spec'],
  } as Pod;
}

function tryMove(
  input: RebalanceInput,
  counts: readonly SubsetCount[],
  candidate: { from: string; pods: Pod[]; reason: 'over-limit' | 'no-subset' | 'priority'; count?: SubsetCount },
  active: readonly Pod[],
): Tried {
  const { ws, view, now } = input;
  const namespace = ws.metadata.namespace ?? '';
  const ranked = rankPodsForScaleDown([...candidate.pods], [...active], now);
  const pod = ranked[0];
  if (pod === undefined) return { reason: 'NoRoom', message: `${subsetLabel(candidate.from)} has no pod to move` };
  const podName = nameOf(pod);
  const from = subsetLabel(candidate.from);

  const ref = controllerRef(pod);
  if (ref === undefined) return { reason: 'ReplacementWouldNotLand', message: `pod ${namespace}/${podName} has no controller: nothing would replace it` };
  const owner = view.object(namespace, { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name });
  if (!('found' in owner)) return { reason: 'ReplacementWouldNotLand', message: `the owner ${ref.kind} ${namespace}/${ref.name} of pod ${podName} is not known, so its replacement cannot be predicted` };
  const replacement = replacementFor(pod, owner.found);
  if (replacement === undefined) return { reason: 'ReplacementWouldNotLand', message: `${ref.kind} ${namespace}/${ref.name} has no pod template, so the replacement of pod ${podName} cannot be predicted` };

  // The eviction as the webhook records it, then the replacement's admission on that status.
  let after = ws;
  const deletion = decidePodDeletion({ view, subject: { pod }, namespace, now, current: { ws } });
  if (deletion.kind === 'recorded') after = { ...ws, status: deletion.status };
  else if (deletion.kind !== 'admit') return { reason: 'ReplacementWouldNotLand', message: `the eviction of pod ${podName} cannot be predicted: ${unpredictable(deletion)}` };

  let to: string;
  let placed: Pod;
  const path = admissionPath(ws);
  if (path.kind === 'single-unlimited') {
    const injected = injectSubset(replacement, ws, path.subset);
    if (!injected.ok) return { reason: 'ReplacementWouldNotLand', message: injected.error };
    to = path.subset;
    placed = injected.pod;
  } else {
    const decision = decidePodCreate({ view, pod: replacement, namespace, now, newUid: () => 'rebalance-probe', current: { ws: after } });
    if (decision.kind === 'unplaced') return noRoomFor(input, counts, replacement, pod, { reason: 'NoRoom', message: `no subset has quota left for the replacement of pod ${namespace}/${podName}` });
    if (decision.kind !== 'placed') {
      return { reason: 'ReplacementWouldNotLand', message: `the admission of the replacement of pod ${podName} cannot be predicted: ${unpredictable(decision)}` };
    }
    to = decision.subset;
    placed = decision.pod;
  }

  const target = counts.find((c) => c.subset.name === to);
  const better =
    target !== undefined &&
    to !== candidate.from &&
    (candidate.reason !== 'priority' || target.index < (candidate.count?.index ?? Infinity) || target.pods.length < target.min);
  if (!better) {
    return noRoomFor(input, counts, replacement, pod, { reason: 'ReplacementWouldNotLand', message: `the replacement of pod ${namespace}/${podName} would be placed in subset ${to}, not ahead of ${from}` });
  }
  if (!canHost(input, placed, pod)) {
    return { reason: 'NoRoom', message: `no node of subset ${to} can host the replacement of pod ${namespace}/${podName} (${from})` };
  }
  const move: PlannedMove = { pod: podName, from: candidate.from, to };
  if (typeof pod.metadata?.uid === 'string') move.uid = pod.metadata.uid;
  return { move };
}

/** Why an admission decision could not be taken from the view alone. */
function unpredictable(decision: { kind: string; message?: string; read?: ReadRequest }): string {
  if (decision.kind === 'error') return decision.message ?? 'refused';
  if (decision.kind === 'read' && decision.read !== undefined) {
    const r = decision.read;
    return r.kind === 'pod' ? `pod ${r.namespace}/${r.name} is not in the cache` : `${r.ref.kind} ${r.namespace}/${r.ref.name} is not in the cache`;
  }
  return `unexpected answer ${decision.kind}`;
}

/**
 * Admission would not put the replacement anywhere better: say why in the
 * words of the subset the spec wants filled next — marked unschedulable, or
 * with quota but no node for the pod (waiting for capacity) — else `otherwise`.
 */
function noRoomFor(input: RebalanceInput, counts: readonly SubsetCount[], replacement: Pod, evicted: Pod, otherwise: { reason: RebalanceReason; message: string }): Tried {
  const wanting = counts.find((c) => c.pods.length < c.ideal);
  if (wanting !== undefined) {
    const stored = named(input.ws.status?.subsetStatuses, wanting.subset.name);
    if (stored !== undefined && isSchedulableFalse(stored)) {
      return { reason: 'ReplacementWouldNotLand', message: `subset ${wanting.subset.name} wants more pods but is marked unschedulable (Schedulable=False) until its recovery window ends` };
    }
    const injected = injectSubset(replacement, input.ws, wanting.subset.name);
    if (injected.ok && !canHost(input, injected.pod, evicted)) {
      return { reason: 'NoRoom', message: `subset ${wanting.subset.name} wants more pods but none of its nodes can host one` };
    }
  }
  return otherwise;
}

/** Whether some node could take `pod` now, with the evicted pod's requests freed (the scheduler's filters, D3). */
function canHost(input: RebalanceInput, pod: Pod, evicted: Pod): boolean {
  const uid = evicted.metadata?.uid;
  const name = nameOf(evicted);
  return input.view.nodes().some((node) => {
    const bound = input.view.podsOnNode(node.metadata?.name ?? '').filter((p) => (uid !== undefined ? p.metadata?.uid !== uid : nameOf(p) !== name));
    return nodeCanHostPod(node, pod, requestedOnNode(bound));
  });
}

// ---- the status the plan leads to ----

export interface RebalanceOutcome {
  reason: RebalanceReason;
  message: string;
  /** The moves in flight after this look (the plan's, plus an eviction just accepted). */
  moves: RebalanceMove[];
  pending: number;
}

/** A move record for an eviction accepted at `now`. */
export function moveRecord(move: PlannedMove, now: number): RebalanceMove {
  return { pod: move.pod, from: move.from, to: move.to, evictedAt: formatTime(now) };
}

/**
 * `status.rebalance` after a look: the outcome, with `lastTransitionTime`
 * kept while the reason stays the same (so an unchanged state writes nothing).
 */
export function rebalanceStatus(previous: RebalanceStatus | undefined, outcome: RebalanceOutcome, now: number): RebalanceStatus {
  const status: RebalanceStatus = { pending: outcome.pending };
  if (outcome.moves.length > 0) status.moves = outcome.moves;
  status.reason = outcome.reason;
  status.message = outcome.message;
  status.lastTransitionTime = previous?.reason === outcome.reason && previous.lastTransitionTime !== undefined ? previous.lastTransitionTime : formatTime(now);
  return status;
}

/** Whether a blocked outcome is news (reason or message changed), so its event is recorded once, not on every look. */
export function blockedIsNews(previous: RebalanceStatus | undefined, outcome: { reason: RebalanceReason; message: string }): boolean {
  return !deepEqual([previous?.reason, previous?.message], [outcome.reason, outcome.message]);
}
