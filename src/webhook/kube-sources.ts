/**
 * The admission webhook wired to `src/kube/`: the caches as core's cluster
 * view and the API reader for what they cannot answer, the group commit's
 * store from the per-WorkloadSpread state and the status writer, and events
 * through the engine event sink; with `budgets`, `/validate-pod` checks
 * DomainDisruptionBudgets first (validate-pod.ts). Start at `webhookFromKube`,
 * which returns the handlers by path for `startWebhookServer`.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import type { SubsetPatchPolicy } from '../api/subset-patch-policy.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { ApiReader } from '../kube/api-reader.ts';
import type { ManagerCaches } from '../kube/caches.ts';
import type { EngineEventSink } from '../kube/events.ts';
import type { ConditionalStatusWriter, StatusBearing, StatusWriter } from '../kube/status-writer.ts';
import type { BudgetEnforcementDeps } from './budget-eviction.ts';
import type { NamespaceReach } from './configuration-keeper.ts';
import { admitDomainDisruptionBudget, VALIDATE_DDB_PATH } from './ddb-validate.ts';
import { isDryRun, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import { GroupCommit, type GroupCommitStore } from './group-commit.ts';
import type { WebhookMetrics } from './metrics.ts';
import { RecentPlacements } from './recent-placements.ts';
import { ReservationPool } from './reservation-pool.ts';
import type { AdmissionEvents, PodAdmissionDeps } from './pod-admission-deps.ts';
import { admitPodCreate } from './pod-create.ts';
import { MUTATE_POD_PATH, VALIDATE_POD_PATH, VALIDATE_WORKLOADSPREAD_PATH, type AdmissionHandler } from './server.ts';
import { validatePodHandler } from './validate-pod.ts';
import { admitWorkloadSpread } from './ws-validate.ts';

/** The group commit's store: the shared lock and local copy, the informer's copy, and conditional status writes. */
/** The group commit's store over a status writer (its lock, local copies, fresh reads and conditional writes) and an informer cache. */
export function writerCommitStore<O extends StatusBearing, S>(writer: ConditionalStatusWriter<O, S>, cached: (namespace: string, name: string) => O | undefined): GroupCommitStore<O, S> {
  return {
    withLock: (uid, fn) => writer.state.withLock(uid, fn),
    freshest: (namespace, name) => writer.freshest(cached(namespace, name), namespace, name),
    getFresh: (namespace, name) => writer.getFresh(namespace, name),
    writeStatus: (obj, status) => writer.writeStatus(obj, status, 'webhook'),
  };
}

/** Events of admission (D11's NoSubsetAvailable) through the engine event sink, regarding the WorkloadSpread. */
export function kubeAdmissionEvents(sink: EngineEventSink): AdmissionEvents {
  return { record: (ws: WorkloadSpread, event) => sink.record(event, [{ ...ws, kind: ws.kind ?? 'WorkloadSpread' }]) };
}

export interface KubeWebhookOptions {
  clock: Clock;
  caches: ManagerCaches;
  /** Reads from the API server (default: one over the caches' client). */
  reader?: ApiReader;
  /** The status writer; its state holds the per-WorkloadSpread lock and local copies. */
  writer: StatusWriter;
  events: EngineEventSink;
  metrics?: WebhookMetrics;
  log?: Logger;
  /** The manager's unschedulable recovery window (D10). */
  unschedulableRecoverySeconds?: number;
  /** Group-commit tuning (tests). */
  random?: () => number;
  /** DomainDisruptionBudget enforcement on evictions (D14; budget-kube.ts builds it). */
  budgets?: BudgetEnforcementDeps;
  /** `--guard-pod-deletion`: budgets are checked on pod DELETE too. */
  guardPodDeletion?: boolean;
  /** D20: what subset patches may set (`--allow-privileged-subset-patches`). */
  subsetPatches?: SubsetPatchPolicy;
  /** The namespaces scope: a WorkloadSpread's or budget's namespace joins the pod webhooks' reach before its creation is admitted. */
  reach?: NamespaceReach;
  /** The namespaces the manager caches (`--watch-namespaces`); an object elsewhere is admitted with a warning. Undefined: all. */
  watchNamespaces?: readonly string[];
}

export interface KubeWebhook {
  handlers: Record<string, AdmissionHandler>;
  commit: GroupCommit;
  /** Ends the background work of admission: the places reserved ahead are given back (reservation-pool.ts), the cache subscription ends. */
  stop(): Promise<void>;
}

/** An admitted creation (not a dry run) first brings its namespace into the pod webhooks' reach. */
async function reached(req: AdmissionRequest, kind: 'workloadspread' | 'budget', response: AdmissionResponse, reach: NamespaceReach | undefined): Promise<AdmissionResponse> {
  if (reach !== undefined && response.allowed && req.operation === 'CREATE' && !isDryRun(req) && req.namespace !== '') await reach.include(kind, req.namespace);
  return response;
}

/** An object admitted in a namespace this manager does not cache is told so: nothing will act on it. */
function unwatched(req: AdmissionRequest, what: string, response: AdmissionResponse, watched: readonly string[] | undefined): AdmissionResponse {
  if (watched === undefined || !response.allowed || req.namespace === '' || watched.includes(req.namespace) || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return response;
  const warning = `this manager watches only the namespaces ${watched.join(', ')} (--watch-namespaces): ${what} in namespace ${req.namespace} is stored, and nothing acts on it`;
  return { ...response, warnings: [...(response.warnings ?? []), warning] };
}

/** The admission handlers (pods, WorkloadSpreads, DomainDisruptionBudgets), sharing one group commit, over the manager's kube layer. */
export function webhookFromKube(options: KubeWebhookOptions): KubeWebhook {
  const log = options.log ?? silentLogger;
  const view = options.caches.view;
  const reads = options.reader ?? new ApiReader(options.caches.client, { unthrottled: true });
  // Places reserved ahead ride on the group commit's rounds (its `extend` hook) and are given back through it.
  const pool = new ReservationPool({ clock: options.clock, view, newUid: randomUUID, log });
  const commit = new GroupCommit({
    extend: (key, current, values) => pool.extend(key, current, values),
    clock: options.clock,
    store: writerCommitStore(options.writer, (namespace, name) => options.caches.getWorkloadSpread(namespace, name)),
    log,
    ...(options.metrics !== undefined ? { metrics: options.metrics } : {}),
    ...(options.random !== undefined ? { random: options.random } : {}),
  });
  const recent = new RecentPlacements(options.clock);
  // A pod the cache shows is counted from the cache (core/placed-count.ts); its answered placement is no longer needed.
  const unsubscribe = options.caches.pods.onAdd((pod) => recent.seen(pod));
  const deps: PodAdmissionDeps = {
    clock: options.clock,
    view,
    reads,
    commit,
    recent,
    pool,
    events: kubeAdmissionEvents(options.events),
    log,
    ...(options.metrics !== undefined ? { metrics: options.metrics } : {}),
    ...(options.subsetPatches !== undefined ? { subsetPatches: options.subsetPatches } : {}),
  };
  const validation = {
    view,
    reads,
    ...(options.unschedulableRecoverySeconds !== undefined ? { unschedulableRecoverySeconds: options.unschedulableRecoverySeconds } : {}),
    ...(options.subsetPatches !== undefined ? { subsetPatches: options.subsetPatches } : {}),
  };
  pool.attach(commit);
  return {
    commit,
    stop: async () => {
      unsubscribe();
      await pool.stop();
    },
    handlers: {
      [MUTATE_POD_PATH]: (req, context) => admitPodCreate(req, deps, context),
      [VALIDATE_POD_PATH]: validatePodHandler({
        pods: deps,
        ...(options.budgets === undefined ? {} : { budgets: options.budgets }),
        ...(options.guardPodDeletion === undefined ? {} : { guardPodDeletion: options.guardPodDeletion }),
      }),
      [VALIDATE_WORKLOADSPREAD_PATH]: async (req) => unwatched(req, 'this WorkloadSpread', await reached(req, 'workloadspread', await admitWorkloadSpread(req, validation), options.reach), options.watchNamespaces),
      [VALIDATE_DDB_PATH]: async (req) => unwatched(req, 'this DomainDisruptionBudget', await reached(req, 'budget', admitDomainDisruptionBudget(req, view), options.reach), options.watchNamespaces),
    },
  };
}
