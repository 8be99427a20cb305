/**
 * The PodDisruptionBudget status controller of the embedded cluster
 * (k8s.io/kubernetes pkg/controller/disruption), talking to the API server
 * only through HTTP and watches: informers on PDBs, Pods, ReplicaSets,
 * Deployments and StatefulSets → PDB keys → `#sync(key)`.
 *
 * One sync, as upstream's trySync:
 * - the budget's pods: its namespace, its selector (nil selects nothing,
 *   `{}` everything);
 * - `expectedPods`: with `maxUnavailable` or a percentage `minAvailable`, the
 *   sum of the scales of the pods' controllers (a ReplicaSet owned by a
 *   Deployment counts as the Deployment, then ReplicaSet, StatefulSet, then
 *   any resource with a scale subresource, read live); pods without a
 *   controller are "unmanaged" (a warning, not counted). With an integer
 *   `minAvailable` it is the number of pods;
 * - `desiredHealthy`: minAvailable, or expectedPods − maxUnavailable (≥ 0),
 *   percentages rounded up (intstr, roundUp=true for both);
 * - `disruptedPods` (written by evictions) keep only pods that still exist,
 *   are not being deleted and were evicted less than 2 minutes ago; the budget
 *   is looked at again when the next entry expires;
 * - `currentHealthy`: Ready pods neither being deleted nor in disruptedPods;
 * - `disruptionsAllowed` = currentHealthy − desiredHealthy, never below 0,
 *   and 0 while expectedPods is 0; condition `DisruptionAllowed`
 *   (True/SufficientPods, False/InsufficientPods); `observedGeneration`.
 * A sync that fails (a controller not found, a bad percentage) writes
 * disruptionsAllowed 0 with reason SyncFailed, as upstream's failSafe.
 * Differences, on purpose: a pod change wakes every budget selecting the pod
 * (upstream picks one arbitrarily, and none with an empty selector); an
 * eviction expires at exactly 2 minutes (upstream: just after, which on a
 * virtual clock would re-check the same instant forever). The stale
 * DisruptionTarget condition cleanup is not emulated.
 * Start reading at `#trySync`.
 */
import type { Clock } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import { describeError, isConflict, isNotFound } from '../../client/errors.ts';
import type { EventRecorder } from '../../client/event-recorder.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { silentLogger, type Logger } from '../../client/logger.ts';
import { BUILTIN, groupVersionPath, parseApiVersion } from '../../client/resources.ts';
import { Informer, objectKey } from '../../client/store.ts';
import { QueueLoop } from '../../client/queue-loop.ts';
import type { Runnable } from '../../client/runnable.ts';
import type { WorkQueue } from '../../client/workqueue.ts';
import { deepEqual } from '../../k8s/json.ts';
import { formatLabelSelector, labelSelectorAsSelector } from '../../k8s/label-selector.ts';
import { controllerRef } from '../../k8s/owner.ts';
import { isPodReady } from '../../k8s/pod.ts';
import { asArray, asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import { formatTime, parseTime } from '../../k8s/time.ts';
import type { IntOrString, KubeObject, LabelSelector, OwnerReference, Pod, PodCondition } from '../../k8s/types.ts';
import { componentClient, componentRecorder } from './component-client.ts';
import { scaledIntOrPercent } from './int-or-percent.ts';
import type { ControllerFactory } from './component.ts';

export const DISRUPTION_CONTROLLER = 'disruption-controller';

/** The PodDisruptionBudget status controller as a component of the embedded cluster (registry.ts). */
export const disruptionController: ControllerFactory = {
  name: DISRUPTION_CONTROLLER,
  create: (ctx) => new DisruptionController({ client: ctx.client, clock: ctx.clock, logger: ctx.logger, races: ctx.races }),
};
/** How long an eviction recorded in disruptedPods is waited for (DeletionTimeout). */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

export interface DisruptionControllerOptions {
  client: KubeClient;
  clock: Clock;
  /** Race mode: a random delay before each sync (the cluster's `races`). */
  races?: Races | undefined;
  logger?: Logger;
  /** Concurrent syncs (default 1). */
  workers?: number;
  /** Write NoPods / UnmanagedPods / NotDeleted / CalculateExpectedPodCountFailed events (default true). */
  recordEvents?: boolean;
}

export interface PdbCondition {
  type: string;
  status: string;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface PdbStatus {
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: PdbCondition[];
}

const APPS_GROUPS = ['apps', 'extensions'];

function refIs(ref: OwnerReference, kind: string, groups: readonly string[]): boolean {
  return ref.kind === kind && groups.includes(parseApiVersion(ref.apiVersion ?? '').group);
}

const specOf = (obj: KubeObject): Record<string, unknown> => asRecord(obj['spec']) ?? {};
const replicasOf = (obj: KubeObject): number => asNumber(specOf(obj)['replicas']) ?? 1;
const intOrString = (v: unknown): IntOrString | undefined => (typeof v === 'number' || typeof v === 'string' ? v : undefined);

export class DisruptionController implements Runnable {
  readonly name = DISRUPTION_CONTROLLER;
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #workers: number;
  readonly #recorder: EventRecorder | undefined;
  readonly #pdbs: Informer;
  readonly #pods: Informer<Pod>;
  readonly #replicaSets: Informer;
  readonly #deployments: Informer;
  readonly #statefulSets: Informer;
  readonly #loop: QueueLoop;
  readonly #queue: WorkQueue<string>;

  constructor(options: DisruptionControllerOptions) {
    this.#clock = options.clock;
    this.#client = componentClient(options.client, options.clock, DISRUPTION_CONTROLLER);
    this.#log = options.logger ?? silentLogger;
    this.#workers = options.workers ?? 1;
    this.#recorder = options.recordEvents === false ? undefined : componentRecorder(this.#client, DISRUPTION_CONTROLLER, options.logger);
    const informer = <T extends KubeObject>(ref: typeof BUILTIN.pods, transform?: (obj: KubeObject) => T) =>
      new Informer<T>({ client: this.#client, log: this.#log, ref, name: `${DISRUPTION_CONTROLLER} ${ref.resource}`, ...(transform !== undefined ? { transform } : {}) });
    this.#pdbs = informer(BUILTIN.poddisruptionbudgets);
    this.#pods = informer<Pod>(BUILTIN.pods, trimPod);
    this.#replicaSets = informer(BUILTIN.replicasets);
    this.#deployments = informer(BUILTIN.deployments);
    this.#statefulSets = informer(BUILTIN.statefulsets);
    this.#loop = new QueueLoop({
      name: DISRUPTION_CONTROLLER,
      clock: this.#clock,
      log: this.#log,
      races: options.races,
      workers: this.#workers,
      informers: this.#all(),
      handle: (key) => this.#sync(key),
    });
    this.#queue = this.#loop.queue;
    this.#wireHandlers();
  }

  #all(): { start(): void; stop(): Promise<void>; waitForSync(): Promise<void>; store: { hasSynced(): boolean } }[] {
    return [this.#pdbs, this.#pods, this.#replicaSets, this.#deployments, this.#statefulSets];
  }

  /** Starts the informers; resolves once every cache is filled and the workers run. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  /** Ends every watch, timer and worker; resolves when all are gone. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  hasSynced(): boolean {
    return this.#all().every((i) => i.store.hasSynced());
  }

  // ---- event handlers ----

  #wireHandlers(): void {
    const pdbs = this.#pdbs.store;
    pdbs.onAdd((p) => this.#queue.add(objectKey(p)));
    pdbs.onUpdate((_old, p) => this.#queue.add(objectKey(p)));
    pdbs.onDelete((p) => this.#queue.add(objectKey(p)));
    const pods = this.#pods.store;
    pods.onAdd((p) => this.#wakeBudgets(p));
    pods.onUpdate((old, p) => {
      this.#wakeBudgets(p);
      if (!deepEqual(old.metadata?.labels ?? {}, p.metadata?.labels ?? {})) this.#wakeBudgets(old);
    });
    pods.onDelete((p) => this.#wakeBudgets(p));
  }

  #wakeBudgets(pod: Pod): void {
    for (const pdb of this.#pdbs.store.list(pod.metadata?.namespace ?? '')) {
      const sel = labelSelectorAsSelector(specOf(pdb)['selector'] as LabelSelector | undefined);
      if (sel.ok && sel.selector.matches(pod.metadata?.labels)) this.#queue.add(objectKey(pdb));
    }
  }

  // ---- sync ----

  async #sync(key: string): Promise<void> {
    const pdb = this.#pdbs.store.getByKey(key);
    if (pdb === undefined) return;
    try {
      await this.#trySync(key, pdb);
    } catch (err) {
      if (isConflict(err)) throw err;
      this.#log.warn({ pdb: key, err: describeError(err) }, 'failed to sync PodDisruptionBudget');
      await this.#failSafe(pdb, err);
    }
  }

  async #trySync(key: string, pdb: KubeObject): Promise<void> {
    const pods = this.#podsFor(pdb);
    if (pods.length === 0) this.#event(pdb, 'Normal', 'NoPods', 'No matching pods found');
    let counted: { expected: number; desired: number; unmanaged: string[] };
    try {
      counted = await this.#expectedPodCount(pdb, pods);
    } catch (err) {
      this.#event(pdb, 'Warning', 'CalculateExpectedPodCountFailed', `Failed to calculate the number of expected pods: ${describeError(err)}`);
      throw err;
    }
    if (counted.unmanaged.length > 0) {
      this.#event(
        pdb,
        'Warning',
        'UnmanagedPods',
        `Pods selected by this PodDisruptionBudget (selector: ${formatLabelSelector(specOf(pdb)['selector'] as LabelSelector | undefined)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
      );
    }
    const now = this.#clock.now();
    const { disrupted, recheckAt } = this.#disruptedPodMap(pdb, pods, now);
    const currentHealthy = pods.filter((p) => p.metadata?.deletionTimestamp === undefined && !Object.hasOwn(disrupted, p.metadata?.name ?? '') && isPodReady(p)).length;
    await this.#writeStatus(pdb, { currentHealthy, desiredHealthy: counted.desired, expectedPods: counted.expected, disrupted });
    if (recheckAt !== undefined) this.#queue.addAfter(key, recheckAt - now);
  }

  #podsFor(pdb: KubeObject): Pod[] {
    const sel = labelSelectorAsSelector(specOf(pdb)['selector'] as LabelSelector | undefined);
    if (!sel.ok) throw new Error(sel.error);
    return this.#pods.store.list(pdb.metadata?.namespace ?? '').filter((p) => sel.selector.matches(p.metadata?.labels));
  }

  /** getExpectedPodCount. */
  async #expectedPodCount(pdb: KubeObject, pods: Pod[]): Promise<{ expected: number; desired: number; unmanaged: string[] }> {
    const spec = specOf(pdb);
    const maxUnavailable = intOrString(spec['maxUnavailable']);
    const minAvailable = intOrString(spec['minAvailable']);
    if (maxUnavailable !== undefined) {
      const { expected, unmanaged } = await this.#expectedScale(pods);
      const scaled = scaledIntOrPercent(maxUnavailable, expected, true);
      if (!scaled.ok) throw new Error(scaled.error);
      return { expected, desired: Math.max(0, expected - scaled.value), unmanaged };
    }
    if (typeof minAvailable === 'number') return { expected: pods.length, desired: minAvailable, unmanaged: [] };
    if (typeof minAvailable === 'string') {
      const { expected, unmanaged } = await this.#expectedScale(pods);
      const scaled = scaledIntOrPercent(minAvailable, expected, true);
      if (!scaled.ok) throw new Error(scaled.error);
      return { expected, desired: scaled.value, unmanaged };
    }
    return { expected: 0, desired: 0, unmanaged: [] };
  }

  /** getExpectedScale: the sum of the scales of the pods' controllers, each counted once. */
  async #expectedScale(pods: Pod[]): Promise<{ expected: number; unmanaged: string[] }> {
    const scales = new Map<string, number>();
    const unmanaged: string[] = [];
    for (const pod of pods) {
      const ref = controllerRef(pod);
      if (ref === undefined) {
        unmanaged.push(pod.metadata?.name ?? '');
        continue;
      }
      if (scales.has(ref.uid)) continue;
      const ns = pod.metadata?.namespace ?? '';
      const found = this.#deploymentOf(ref, ns) ?? this.#replicaSetOf(ref, ns) ?? this.#statefulSetOf(ref, ns) ?? (await this.#scaleOf(ref, ns));
      if (found === undefined) throw new Error(`found no controllers for pod "${pod.metadata?.name ?? ''}"`);
      scales.set(found.uid, found.scale);
    }
    let expected = 0;
    for (const n of scales.values()) expected += n;
    return { expected, unmanaged };
  }

  #lookup(informer: Informer, ns: string, ref: OwnerReference): KubeObject | undefined {
    const obj = informer.store.get(ns, ref.name);
    return obj !== undefined && obj.metadata?.uid === ref.uid ? obj : undefined;
  }

  /** getPodDeployment: pod → ReplicaSet → Deployment. */
  #deploymentOf(ref: OwnerReference, ns: string): { uid: string; scale: number } | undefined {
    if (!refIs(ref, 'ReplicaSet', APPS_GROUPS)) return undefined;
    const rs = this.#lookup(this.#replicaSets, ns, ref);
    const rsRef = rs === undefined ? undefined : controllerRef(rs);
    if (rsRef === undefined || !refIs(rsRef, 'Deployment', APPS_GROUPS)) return undefined;
    const d = this.#lookup(this.#deployments, ns, rsRef);
    return d === undefined ? undefined : { uid: rsRef.uid, scale: replicasOf(d) };
  }

  /** getPodReplicaSet: a ReplicaSet not controlled by a Deployment. */
  #replicaSetOf(ref: OwnerReference, ns: string): { uid: string; scale: number } | undefined {
    if (!refIs(ref, 'ReplicaSet', APPS_GROUPS)) return undefined;
    const rs = this.#lookup(this.#replicaSets, ns, ref);
    if (rs === undefined) return undefined;
    const rsRef = controllerRef(rs);
    if (rsRef !== undefined && rsRef.kind === 'Deployment') return undefined;
    return { uid: ref.uid, scale: replicasOf(rs) };
  }

  #statefulSetOf(ref: OwnerReference, ns: string): { uid: string; scale: number } | undefined {
    if (!refIs(ref, 'StatefulSet', ['apps'])) return undefined;
    const s = this.#lookup(this.#statefulSets, ns, ref);
    return s === undefined ? undefined : { uid: ref.uid, scale: replicasOf(s) };
  }

  /** getScaleController: any kind with a `scale` subresource, read live. */
  async #scaleOf(ref: OwnerReference, ns: string): Promise<{ uid: string; scale: number } | undefined> {
    const resolved = await this.#client.resources.resolve(ref.apiVersion, ref.kind);
    if (!resolved.ok) throw resolved.error instanceof Error ? resolved.error : new Error(String(resolved.error));
    const res = resolved.ref;
    try {
      const scale = await this.#client.getScale(res, ref.name, { namespace: ns });
      if (scale.metadata?.uid !== ref.uid) return undefined;
      return { uid: ref.uid, scale: asNumber(scale.spec?.replicas) ?? 0 };
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const list = await this.#client.getJson(groupVersionPath(res));
      const names = (asArray(asRecord(list)?.['resources']) ?? []).map((r) => asString(asRecord(r)?.['name']));
      const gr = res.group === '' ? res.resource : `${res.resource}.${res.group}`;
      if (!names.includes(`${res.resource}/scale`)) throw new Error(`${gr} does not implement the scale subresource`);
      return undefined;
    }
  }

  /** buildDisruptedPodMap: evictions still expected to complete, and when the next one expires. */
  #disruptedPodMap(pdb: KubeObject, pods: Pod[], now: number): { disrupted: Record<string, string>; recheckAt: number | undefined } {
    const recorded = asRecord(asRecord(pdb['status'])?.['disruptedPods']) ?? {};
    const disrupted: Record<string, string> = {};
    let recheckAt: number | undefined;
    for (const pod of pods) {
      if (pod.metadata?.deletionTimestamp !== undefined) continue;
      const name = pod.metadata?.name ?? '';
      const raw = asString(recorded[name]);
      if (raw === undefined) continue;
      const expiresAt = (parseTime(raw) ?? 0) + DELETION_TIMEOUT_MS;
      if (expiresAt <= now) {
        this.#event(pod, 'Warning', 'NotDeleted', `Pod was expected by PDB ${pdb.metadata?.namespace ?? ''}/${pdb.metadata?.name ?? ''} to be deleted but it wasn't`);
        continue;
      }
      disrupted[name] = raw;
      if (recheckAt === undefined || expiresAt < recheckAt) recheckAt = expiresAt;
    }
    return { disrupted, recheckAt };
  }

  /** updatePdbStatus: only when something changed. */
  async #writeStatus(pdb: KubeObject, c: { currentHealthy: number; desiredHealthy: number; expectedPods: number; disrupted: Record<string, string> }): Promise<void> {
    let allowed = c.currentHealthy - c.desiredHealthy;
    if (c.expectedPods <= 0 || allowed <= 0) allowed = 0;
    const old = asRecord(pdb['status']) ?? {};
    const generation = pdb.metadata?.generation ?? 0;
    const conditions = (asArray(old['conditions']) ?? []).filter((x): x is PdbCondition => asRecord(x) !== undefined) as PdbCondition[];
    const upToDate =
      old['currentHealthy'] === c.currentHealthy &&
      old['desiredHealthy'] === c.desiredHealthy &&
      old['expectedPods'] === c.expectedPods &&
      old['disruptionsAllowed'] === allowed &&
      deepEqual(asRecord(old['disruptedPods']) ?? {}, c.disrupted) &&
      (asNumber(old['observedGeneration']) ?? 0) === generation &&
      conditionUpToDate(conditions, allowed, generation);
    if (upToDate) return;
    const status: PdbStatus = { disruptionsAllowed: allowed, currentHealthy: c.currentHealthy, desiredHealthy: c.desiredHealthy, expectedPods: c.expectedPods };
    if (generation !== 0) status.observedGeneration = generation;
    if (Object.keys(c.disrupted).length > 0) status.disruptedPods = c.disrupted;
    status.conditions = setCondition(conditions, allowed > 0 ? { status: 'True', reason: 'SufficientPods', message: '' } : { status: 'False', reason: 'InsufficientPods', message: '' }, generation, this.#clock.now());
    await this.#client.updateStatus(BUILTIN.poddisruptionbudgets, { ...pdb, status });
  }

  /** failSafe: no disruption allowed while the budget cannot be computed. */
  async #failSafe(pdb: KubeObject, err: unknown): Promise<void> {
    const old = asRecord(pdb['status']) ?? {};
    const conditions = (asArray(old['conditions']) ?? []).filter((x): x is PdbCondition => asRecord(x) !== undefined) as PdbCondition[];
    const observed = asNumber(old['observedGeneration']) ?? 0;
    const status = { ...old, disruptionsAllowed: 0, conditions: setCondition(conditions, { status: 'False', reason: 'SyncFailed', message: describeError(err) }, observed, this.#clock.now()) };
    await this.#client.updateStatus(BUILTIN.poddisruptionbudgets, { ...pdb, status });
  }

  #event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.#recorder?.record(obj, { type, reason, note, action: 'Sync' });
  }
}

/** What the budget needs of a pod: identity, labels, owner, deletion and readiness (a cluster's pods stay cheap to cache). */
function trimPod(obj: KubeObject): Pod {
  const m = obj.metadata ?? {};
  const metadata: Pod['metadata'] = {};
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'labels', 'ownerReferences', 'deletionTimestamp'] as const) {
    if (m[k] !== undefined) (metadata as Record<string, unknown>)[k] = m[k];
  }
  const status = asRecord(obj['status']) ?? {};
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [] }, status: { phase: asString(status['phase']) ?? '', conditions: (asArray(status['conditions']) ?? []) as PodCondition[] } };
}

/** pdbhelper.ConditionsAreUpToDate for the DisruptionAllowed condition. */
function conditionUpToDate(conditions: readonly PdbCondition[], allowed: number, generation: number): boolean {
  const c = conditions.find((x) => x.type === 'DisruptionAllowed');
  if (c === undefined || (c.observedGeneration ?? 0) !== generation) return false;
  return allowed > 0 ? c.status === 'True' && c.reason === 'SufficientPods' : c.status === 'False' && c.reason === 'InsufficientPods';
}

/** apimeta.SetStatusCondition for DisruptionAllowed: the transition time moves only when the status does. */
function setCondition(conditions: readonly PdbCondition[], next: { status: string; reason: string; message: string }, observedGeneration: number, now: number): PdbCondition[] {
  const out = conditions.map((c) => ({ ...c }));
  const existing = out.find((c) => c.type === 'DisruptionAllowed');
  if (existing === undefined) {
    out.push({ type: 'DisruptionAllowed', status: next.status, observedGeneration, lastTransitionTime: formatTime(now), reason: next.reason, message: next.message });
    return out;
  }
  if (existing.status !== next.status) existing.lastTransitionTime = formatTime(now);
  existing.status = next.status;
  existing.reason = next.reason;
  existing.message = next.message;
  existing.observedGeneration = observedGeneration;
  return out;
}
