/**
 * What the simulator sees of the cluster after a step, as plain records —
 * the `pods`, `workloadSpreads` and `events` of a step in the JSON Lines
 * output (issue 6 §2) — computed from listed objects. Pure: the runner
 * lists, these functions interpret.
 *
 * - The pods of a WorkloadSpread are the active pods of its target workload,
 *   found the way the controller finds them (core/workload-pods.ts: owner
 *   chains, Deployment → ReplicaSets, targetFilter). `subset` comes from the
 *   marker annotation when it names this WorkloadSpread, else null.
 * - The workload's replicas are the controller's (core/replicas.ts), with
 *   the custom-workload whitelist the manager runs with and, for a custom
 *   kind, its scale subresource, as the controller reads them; a custom
 *   workload that owns no pod itself has the pods its scale's selector
 *   matches (Argo Rollouts).
 * - A subset's `limit` is its maxReplicas resolved against the workload's
 *   replicas (percentages round up, spec §5.3); null means unlimited.
 * - Events are `events.k8s.io/v1` objects; an event counts as new for a
 *   step when it appeared or its series count grew since the last look.
 */
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import { POD_DELETION_COST_ANNOTATION } from '../api/keys.ts';
import { markedSubset } from '../core/marker.ts';
import { resolveMaxReplicas } from '../core/percent.ts';
import { controllerWorkloadReplicas, readsScaleSubresource, replicasWithScale } from '../core/replicas.ts';
import { podsForWorkloadSpread } from '../core/workload-pods.ts';
import { EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import { parseSelector } from '../k8s/label-selector.ts';
import { isPodActive, isPodReady, podDeletionCost, podPhase } from '../k8s/pod.ts';
import { asNumber, asRecord, asString } from '../k8s/raw-json.ts';
import { parseTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';

export interface PodRecord {
  name: string;
  subset: string | null;
  node: string | null;
  phase: string;
  ready: boolean;
  deletionCost: number | null;
  namespace: string;
  /** `namespace/name` of the WorkloadSpread whose target owns the pod. */
  workloadSpread: string;
}

export interface SubsetRecord {
  name: string;
  /** As written in the spec (an integer, a percentage, or null). */
  maxReplicas: number | string | null;
  /** Resolved against the workload's replicas; null when unlimited. */
  limit: number | null;
}

export interface WorkloadSpreadRecord {
  namespace: string;
  name: string;
  status: WorkloadSpreadStatus | Record<string, never>;
  /** `Kind/name` of the target. */
  target: string;
  /** The target's replicas (-1 unknown, 0 when it does not exist). */
  replicas: number;
  subsets: SubsetRecord[];
}

export interface EventRecord {
  reason: string;
  type: string;
  message: string;
  namespace: string;
  /** `Kind/name` of the object the event is about. */
  object: string;
  reportingController: string;
  count: number;
}

/** Everything the runner listed in one namespace-scoped look at the cluster. */
export interface ClusterListing {
  workloadSpreads: WorkloadSpread[];
  /** The target workload of each WorkloadSpread (key `namespace/name` of the WorkloadSpread); absent when it does not exist. */
  workloads: ReadonlyMap<string, KubeObject>;
  replicaSets: KubeObject[];
  pods: Pod[];
  /** The custom-workload whitelist the manager runs with (default: none). */
  whitelist?: Whitelist;
  /** The scale subresource of custom-kind targets, by WorkloadSpread (`namespace/name`); absent when it has none. */
  scales?: ReadonlyMap<string, { replicas?: number; selector?: string }>;
}

export interface PodsAndSpreads {
  pods: PodRecord[];
  /** The raw pods behind `pods`, same order (for pod-field checks). */
  rawPods: Pod[];
  workloadSpreads: WorkloadSpreadRecord[];
}

const keyOf = (o: { metadata?: { namespace?: string; name?: string } | undefined }): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

function podRecord(pod: Pod, ws: WorkloadSpread): PodRecord {
  const subset = markedSubset(pod, ws.metadata.name ?? '');
  const annotated = pod.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION];
  const node = pod.spec?.nodeName;
  return {
    name: pod.metadata?.name ?? '',
    subset: subset ?? null,
    node: typeof node === 'string' && node !== '' ? node : null,
    phase: podPhase(pod) || 'Pending',
    ready: isPodReady(pod),
    deletionCost: typeof annotated === 'string' ? podDeletionCost(pod) : null,
    namespace: pod.metadata?.namespace ?? '',
    workloadSpread: keyOf(ws),
  };
}

/** The controller's count of the target's replicas (0 when it cannot be read) and, for a custom kind that owns no pod, the selector of its pods. */
function workloadCount(
  ws: WorkloadSpread,
  workload: KubeObject | undefined,
  pods: readonly Pod[],
  whitelist: Whitelist,
  scale: { replicas?: number; selector?: string } | undefined,
): { replicas: number; fallbackSelector?: { matches(labels: Record<string, string>): boolean } } {
  const plain = controllerWorkloadReplicas(ws, workload, whitelist);
  if (!plain.ok) return { replicas: 0 };
  const uid = workload?.metadata?.uid;
  const ownsPods = uid !== undefined && pods.some((p) => (p.metadata?.ownerReferences ?? []).some((r) => r?.uid === uid));
  if (workload === undefined || scale === undefined || !readsScaleSubresource(ws, plain, ownsPods)) return { replicas: plain.replicas };
  const counted = replicasWithScale(ws, workload, whitelist, plain, ownsPods, scale);
  if (!counted.ok) return { replicas: 0 };
  const parsed = counted.selector === undefined ? undefined : parseSelector(counted.selector);
  return parsed?.ok === true ? { replicas: counted.replicas, fallbackSelector: parsed.selector } : { replicas: counted.replicas };
}

/** The active pods of every WorkloadSpread's target, and the WorkloadSpreads as stored (sorted by namespace/name). */
export function observePodsAndSpreads(listing: ClusterListing): PodsAndSpreads {
  const pods: PodRecord[] = [];
  const rawPods: Pod[] = [];
  const workloadSpreads: WorkloadSpreadRecord[] = [];
  const spreads = [...listing.workloadSpreads].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
  for (const ws of spreads) {
    const key = keyOf(ws);
    const workload = listing.workloads.get(key);
    const ns = ws.metadata?.namespace ?? '';
    const nsPods = listing.pods.filter((p) => p.metadata?.namespace === ns);
    const counted = workloadCount(ws, workload, nsPods, listing.whitelist ?? EMPTY_WHITELIST, listing.scales?.get(key));
    const total = counted.replicas;
    // The controller lists no pods for a workload at 0 replicas; the simulator shows what exists, so it asks as if there were some.
    const found = podsForWorkloadSpread({
      ws,
      workload,
      replicaSets: listing.replicaSets.filter((r) => r.metadata?.namespace === ns),
      pods: nsPods,
      workloadReplicas: Math.max(1, total),
      ...(counted.fallbackSelector === undefined ? {} : { fallbackSelector: counted.fallbackSelector }),
    });
    const active = (found.ok ? found.pods : []).filter(isPodActive).sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    for (const pod of active) {
      pods.push(podRecord(pod, ws));
      rawPods.push(pod);
    }
    const target = ws.spec?.targetRef;
    workloadSpreads.push({
      namespace: ns,
      name: ws.metadata?.name ?? '',
      status: ws.status ?? {},
      target: `${target?.kind ?? ''}/${target?.name ?? ''}`,
      replicas: total,
      subsets: (Array.isArray(ws.spec?.subsets) ? ws.spec.subsets : []).map((s) => {
        const max = s?.maxReplicas;
        const limit = max === undefined || max === null ? undefined : resolveMaxReplicas(max, total);
        return { name: s?.name ?? '', maxReplicas: max ?? null, limit: limit ?? null };
      }),
    });
  }
  return { pods, rawPods, workloadSpreads };
}

function eventCount(e: KubeObject): number {
  const series = asNumber(asRecord(e['series'])?.['count']);
  return series ?? asNumber(e['deprecatedCount']) ?? 1;
}

function eventTime(e: KubeObject): number {
  return (
    parseTime(asString(asRecord(e['series'])?.['lastObservedTime'])) ??
    parseTime(asString(e['eventTime'])) ??
    parseTime(asString(e['deprecatedLastTimestamp'])) ??
    parseTime(e.metadata?.creationTimestamp) ??
    0
  );
}

export function eventRecord(e: KubeObject): EventRecord {
  const regarding = asRecord(e['regarding']);
  return {
    reason: asString(e['reason']) ?? '',
    type: asString(e['type']) ?? 'Normal',
    message: asString(e['note']) ?? '',
    namespace: e.metadata?.namespace ?? '',
    object: `${asString(regarding?.['kind']) ?? ''}/${asString(regarding?.['name']) ?? ''}`,
    reportingController: asString(e['reportingController']) ?? '',
    count: eventCount(e),
  };
}

/**
 * The events that are new since `seen` (uid → count), oldest first, and the
 * updated memory. An event whose count grew reports the growth as its count.
 */
export function newEvents(events: readonly KubeObject[], seen: ReadonlyMap<string, number>): { fresh: EventRecord[]; seen: Map<string, number> } {
  const next = new Map<string, number>();
  const fresh: { at: number; record: EventRecord }[] = [];
  for (const e of events) {
    const id = e.metadata?.uid ?? keyOf(e);
    const count = eventCount(e);
    next.set(id, count);
    const before = seen.get(id) ?? 0;
    if (count > before) fresh.push({ at: eventTime(e), record: { ...eventRecord(e), count: count - before } });
  }
  fresh.sort((a, b) => a.at - b.at);
  return { fresh: fresh.map((f) => f.record), seen: next };
}
