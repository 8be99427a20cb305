/**
 * Pod CREATE admission (the mutating webhook, `/mutate-pod`): spec §2 with
 * DECISIONS D3 (simulation schedule), D11 (visible "no subset") and D13
 * (group commit). Start at `admitPodCreate`.
 *
 * The flow, in the reference's order:
 * 1. gates (§2.1): not a pod or a subresource, not CREATE, dry run → admit
 *    unchanged with no reservation (§2.1.4: no injection either);
 * 2. `matchWorkloadSpreadForPod` (inactive, unowned and unsupported pods are
 *    skipped there); an owner missing from the cache fails closed with 500
 *    (§2.1 step 8, the reference's PR #1807: the workload controller retries);
 * 3. StatefulSet targets: the ordinal decides, nothing is written (§2.3 B);
 *    one unlimited subset: taken without touching the status (§2.3 A);
 *    everything else: `chooseSubset` through the group commit, so the answer
 *    leaves only after the reservation is stored;
 * 4. `injectSubset` and the JSON Patch from the raw request pod.
 * No subset with quota: admitted unchanged, plus a Warning Event
 * `NoSubsetAvailable` on the WorkloadSpread and a counter (D11).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import { podLogFields, silentLogger, type Logger } from '../client/logger.ts';
import { EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { noSubsetAvailableEvent, workloadSpreadRef } from '../core/events.ts';
import { injectSubset } from '../core/inject.ts';
import { matchWorkloadSpreadForPod, SUPPORTED_WORKLOAD_KINDS, type OwnerLookup } from '../core/pod-selection.ts';
import { podVersion } from '../core/pod-version.ts';
import { admissionWorkloadReplicas } from '../core/replicas.ts';
import { simulationCanHost, simulationScheduleEnabled } from '../core/simulation-schedule.ts';
import { chooseSubsetByOrdinal } from '../core/statefulset-ordinal.ts';
import { chooseSubset, specSubsets, subsetsUsePercent, type SubsetChoice, type WorkloadReplicasResult } from '../core/subset-choice.ts';
import { cloneSetRecreates } from '../core/workload-version.ts';
import { isPlainObject } from '../k8s/json.ts';
import { apiVersionGroup, controllerRef } from '../k8s/pod.ts';
import type { Pod } from '../k8s/types.ts';
import { allowed, errored, patched, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import type { GroupCommit } from './group-commit.ts';
import type { WebhookMetrics } from './metrics.ts';
import type { AdmissionEvents, AdmissionSources } from './sources.ts';

export interface PodAdmissionDeps {
  clock: Clock;
  sources: AdmissionSources;
  commit: GroupCommit;
  events: AdmissionEvents;
  metrics?: WebhookMetrics;
  log?: Logger;
  /** UUIDs for pods created without a name (generateName); default crypto.randomUUID. */
  newUid?: () => string;
}

/** DryRun of the request or of its Create/Delete options (`dryRun: ["All"]`). */
export function isDryRun(req: AdmissionRequest, options: unknown = req.options): boolean {
  if (req.dryRun) return true;
  const dryRun = isPlainObject(options) ? options['dryRun'] : undefined;
  return Array.isArray(dryRun) && dryRun.length > 0;
}

/**
 * The whitelist for matching. If it cannot be read, pods of the built-in
 * kinds are still placed (the whitelist cannot change their outcome); a pod
 * with another owner fails closed (the caller only asks in a namespace that
 * has WorkloadSpreads), since it may belong to a whitelisted workload.
 */
function whitelistFor(pod: Pod, deps: PodAdmissionDeps): { ok: true; whitelist: Whitelist } | { ok: false; error: string } {
  const wl = deps.sources.whitelist();
  if (!('error' in wl)) return { ok: true, whitelist: wl };
  const owner = controllerRef(pod);
  const gv = owner === undefined ? undefined : apiVersionGroup(owner.apiVersion);
  const builtIn = owner !== undefined && gv?.ok === true && SUPPORTED_WORKLOAD_KINDS.some((k) => k.group === gv.group && k.kind === owner.kind);
  if (builtIn || owner === undefined) return { ok: true, whitelist: EMPTY_WHITELIST };
  return { ok: false, error: `the custom workload whitelist cannot be read: ${wl.error}` };
}

/** Whether the pod's owner is a CloneSet that recreates pods on update (D12 versioning). */
export function cloneSetRecreateFor(pod: Pod, lookup: OwnerLookup): boolean {
  const owner = controllerRef(pod);
  if (owner === undefined || owner.kind !== 'CloneSet') return false;
  const gv = apiVersionGroup(owner.apiVersion);
  if (!gv.ok || gv.group !== 'apps.kruise.io') return false;
  const found = lookup({ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name });
  return 'found' in found ? cloneSetRecreates(found.found) : true;
}

/** The workload replicas for initializing a version entry with percentages (§5.1); a missing workload counts 0. */
async function workloadReplicas(ws: WorkloadSpread, namespace: string, whitelist: Whitelist, deps: PodAdmissionDeps): Promise<WorkloadReplicasResult> {
  const ref = ws.spec?.targetRef;
  if (ref === undefined || ref === null) return { ok: true, replicas: 0 };
  const workload = await deps.sources.targetWorkload(namespace, ref);
  if ('error' in workload) return { ok: false, error: `cannot read ${ref.kind} ${namespace}/${ref.name}: ${workload.error}` };
  return admissionWorkloadReplicas(ws, 'found' in workload ? workload.found : undefined, whitelist);
}

/** Whether the pod version already has its subset statuses (else they are initialized, and percentages need the workload replicas). */
export function hasVersionEntry(ws: WorkloadSpread, version: string): boolean {
  const entry = ws.status?.versionedSubsetStatuses?.[version];
  return Array.isArray(entry) && entry.length > 0;
}

type CreateDecision = { kind: 'gone' } | { kind: 'decided'; choice: SubsetChoice; ws: WorkloadSpread };

/** Answers one pod CREATE review (spec §2). */
export async function admitPodCreate(req: AdmissionRequest, deps: PodAdmissionDeps): Promise<AdmissionResponse> {
  const { uid } = req;
  if (req.resource.group !== '' || req.resource.resource !== 'pods' || req.subResource !== '') return allowed(uid);
  if (req.operation !== 'CREATE') return allowed(uid);
  if (isDryRun(req)) return allowed(uid);
  const raw = req.object;
  if (!isPlainObject(raw) || (raw['metadata'] !== undefined && !isPlainObject(raw['metadata']))) {
    return errored(uid, 400, new Error('the request object is not a Pod'));
  }
  const pod = raw as unknown as Pod;
  const namespace = req.namespace !== '' ? req.namespace : (pod.metadata?.namespace ?? '');
  const log = deps.log ?? silentLogger;

  const spreads = deps.sources.workloadSpreads(namespace);
  if (spreads.length === 0) return allowed(uid);
  const wl = whitelistFor(pod, deps);
  if (!wl.ok) return errored(uid, 500, new Error(wl.error));
  const lookup = await deps.sources.ownerLookup(namespace, controllerRef(pod));
  const match = matchWorkloadSpreadForPod(pod, spreads, lookup, wl.whitelist);
  if (match.kind === 'skip' || match.kind === 'none') return allowed(uid);
  if (match.kind === 'error') {
    log.warn({ ...podLogFields(namespace, pod.metadata), requestID: uid, err: match.message }, 'owner of the new pod is not in the cache yet; refusing so the workload controller retries');
    return errored(uid, 500, new Error(match.message));
  }

  const listed = match.ws;
  const plog = { ...podLogFields(namespace, pod.metadata), requestID: uid, workloadspread: listed.metadata?.name ?? '' };

  // §2.3 B: StatefulSet ordinals; no status read or write.
  if (listed.spec?.targetRef?.kind === 'StatefulSet') {
    const subset = chooseSubsetByOrdinal(listed, pod.metadata?.name ?? '');
    if (subset === undefined) return noSubset(uid, listed, pod, namespace, deps);
    return inject(uid, pod, listed, subset, undefined, deps, plog);
  }

  // §2.3 A: one unlimited subset takes every pod without a status write.
  const subsets = specSubsets(listed);
  const only = subsets[0];
  if (subsets.length === 1 && only !== undefined && only.maxReplicas === undefined) {
    return inject(uid, pod, listed, only.name, undefined, deps, plog);
  }

  const wsUid = listed.metadata?.uid ?? '';
  const version = podVersion(pod, { cloneSetRecreate: cloneSetRecreateFor(pod, lookup) });
  const newUid = deps.newUid ?? randomUUID;
  const outcome = await deps.commit.submit<CreateDecision>(
    { uid: wsUid, namespace, name: listed.metadata?.name ?? '' },
    async (ws) => {
      if (ws === undefined) return { value: { kind: 'gone' } };
      let replicas: WorkloadReplicasResult = { ok: true, replicas: 0 };
      if (subsetsUsePercent(ws) && !hasVersionEntry(ws, version)) replicas = await workloadReplicas(ws, namespace, wl.whitelist, deps);
      const input: Parameters<typeof chooseSubset>[0] = { ws, pod, version, workloadReplicas: () => replicas, now: deps.clock.now(), newUid };
      if (simulationScheduleEnabled(ws)) {
        input.canHost = simulationCanHost(ws, pod, deps.sources.nodes(), (node) => deps.sources.requestedOnNode(node));
      }
      const choice = chooseSubset(input);
      const value: CreateDecision = { kind: 'decided', choice, ws };
      return choice.kind === 'chosen' && choice.status !== undefined ? { value, status: choice.status } : { value };
    },
  );
  if (!outcome.ok) {
    log.warn({ ...plog, err: outcome.error }, 'pod admission failed: the subset reservation was not stored');
    return errored(uid, 500, new Error(outcome.error));
  }
  const decision = outcome.value;
  if (decision.kind === 'gone') return allowed(uid);
  const { choice, ws } = decision;
  if (choice.kind === 'error') {
    log.warn({ ...plog, err: choice.message }, 'pod admission failed');
    return errored(uid, 500, new Error(choice.message));
  }
  if (choice.kind === 'none') return noSubset(uid, ws, pod, namespace, deps);
  return inject(uid, pod, ws, choice.subset, choice.uid, deps, plog);
}

function inject(
  uid: string,
  pod: Pod,
  ws: WorkloadSpread,
  subset: string,
  podUid: string | undefined,
  deps: PodAdmissionDeps,
  plog: Record<string, string>,
): AdmissionResponse {
  const injected = injectSubset(pod, ws, subset, podUid);
  if (!injected.ok) {
    (deps.log ?? silentLogger).warn({ ...plog, subset, err: injected.error }, 'subset injection failed');
    return errored(uid, 500, new Error(injected.error));
  }
  (deps.log ?? silentLogger).debug({ ...plog, subset, injected: injected.injected }, 'pod placed in subset');
  return patched(uid, pod, injected.pod);
}

function noSubset(uid: string, ws: WorkloadSpread, pod: Pod, namespace: string, deps: PodAdmissionDeps): AdmissionResponse {
  const target = ws.spec?.targetRef;
  const name = pod.metadata?.name ?? '';
  const event = noSubsetAvailableEvent(workloadSpreadRef({ metadata: { namespace, name: ws.metadata?.name ?? '' } }), name !== '' ? name : (pod.metadata?.generateName ?? ''), {
    kind: target?.kind ?? '',
    name: target?.name ?? '',
  });
  deps.events.record(ws, event);
  deps.metrics?.noSubsetAvailable?.(namespace, ws.metadata?.name ?? '');
  (deps.log ?? silentLogger).warn({ ...podLogFields(namespace, pod.metadata), requestID: uid, workloadspread: ws.metadata?.name ?? '' }, 'no subset has quota left; pod admitted without placement');
  return allowed(uid);
}

