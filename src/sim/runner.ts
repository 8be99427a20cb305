/**
 * `runScenario`: plays a parsed scenario on a backend — by default the
 * embedded cluster on a virtual clock with the real manager in-process;
 * with `kubeconfig`, an existing cluster on the real clock — and returns
 * what happened as data (`ScenarioRunResult`): per step the time, the
 * active pods of every WorkloadSpread target, the stored WorkloadSpreads,
 * the disruption budgets, the evictions of drain and evict steps,
 * the events recorded since the previous step and the expectation results.
 *
 * Order: start the backend → apply the objects (CRDs first) and settle →
 * for each step: run the action, settle unless the step says otherwise,
 * observe, evaluate. A failing action does not stop the run: it becomes a
 * failed expectation (`path: error`) unless the step expected it
 * (`expectFailure`). Everything the run started is stopped in a `finally`;
 * against a live cluster the objects and namespaces the scenario created
 * are deleted again, then its nodes. Only a failure to start or set up, or
 * an abort, ends a run early (`error`, `interrupted`).
 */
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { seededRaces } from '../clock/races.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { describeError, isNotFound } from '../client/errors.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { BUILTIN, type ResourceRef } from '../client/resources.ts';
import type { ServingCertificate } from '../client/loopback-certificates.ts';
import { formatTime } from '../k8s/time.ts';
import { ROLLOUT_KINDS } from '../k8s/rollout-status.ts';
import { DEFAULT_CONFIGMAP_NAME } from '../api/keys.ts';
import type { Whitelist } from '../api/whitelist.ts';
import { CONTROLLER_KNOWN_KINDS } from '../core/replicas.ts';
import { whitelistFromConfigMap } from '../kube/whitelist-source.ts';
import type { KubeObject, Node, Pod } from '../k8s/types.ts';
import { applyObjects, REPLACE_ANYTHING, runAction, type ApplyPolicy } from './actions.ts';
import { listBudgets } from './budget-listing.ts';
import type { BudgetRecord } from '../core/budget-records.ts';
import type { EvictionRecord } from './drain.ts';
import type { SettleOutcome, SettleProbe, SimBackend } from './backend.ts';
import { describeAction, describeUnsettled } from './describe.ts';
import { startEmbeddedBackend } from './embedded-backend.ts';
import { evaluateExpectations, type ExpectationResult } from './evaluate.ts';
import { startLiveBackend } from './live-backend.ts';
import { newEvents, observePodsAndSpreads, type ClusterListing, type EventRecord, type PodRecord, type WorkloadSpreadRecord } from './observation.ts';
import { judgeSettled, type SettleJudgement } from './settle-judgement.ts';
import type { Scenario } from './scenario.ts';
import { DEFAULT_SETTLE_TIMEOUT_MS, type ActionName, type Step, type SubsetPods } from './steps.ts';

export type { ExpectationResult } from './evaluate.ts';
export type { EventRecord, PodRecord, WorkloadSpreadRecord } from './observation.ts';
export type { BudgetRecord } from '../core/budget-records.ts';
export type { EvictionRecord } from './drain.ts';

/** The cluster as observed at one moment. */
export interface Snapshot {
  /** RFC 3339, second precision (clock time: virtual on the embedded cluster). */
  time: string;
  /** Clock milliseconds since the run started. */
  elapsedMs: number;
  pods: PodRecord[];
  workloadSpreads: WorkloadSpreadRecord[];
  /** Events recorded since the previous snapshot. */
  events: EventRecord[];
  /** DomainDisruptionBudgets and PodDisruptionBudgets of the scenario's namespaces. */
  budgets: BudgetRecord[];
}

/** One step's line of the JSON Lines output (issue 6: step, action, time, pods, workloadSpreads, events, expectations). */
export interface StepResult extends Snapshot {
  step: number;
  action: ActionName;
  /** What the step did, in words (`scale Deployment web to 7`). */
  summary: string;
  description?: string;
  expectations: ExpectationResult[];
  /** The action's failure (the server's message), when it failed. */
  error?: string;
  notes?: string[];
  /** Set when the cluster was settled after the step. */
  settled?: SettleOutcome;
  /** What a drain or evict step did to each pod. */
  evictions?: EvictionRecord[];
}

export interface ScenarioRunResult {
  name: string;
  description?: string;
  mode: 'embedded' | 'kubeconfig';
  /** The race seed the run was played under, if any. */
  raceSeed?: number;
  /** True when the run completed and every expectation held. */
  ok: boolean;
  passed: number;
  failed: number;
  /** After the objects were applied and the cluster settled; undefined when setup failed. */
  setup?: Snapshot;
  steps: StepResult[];
  /** Why the run ended early (start or setup failed). */
  error?: string;
  /** The run was aborted (Ctrl-C). */
  interrupted?: boolean;
}

export interface RunOptions {
  /** Called after every step (the demo narrates from here). */
  onStep?: (step: StepResult) => void | Promise<void>;
  /** Called once the objects are applied and the cluster settled. */
  onSetup?: (setup: Snapshot) => void | Promise<void>;
  /**
   * Called with the backend once it runs, before the objects are applied
   * (tests watch the cluster from here); the function it may return is
   * awaited before the backend stops.
   */
  onStart?: (backend: SimBackend) => void | (() => Promise<void>) | Promise<void | (() => Promise<void>)>;
  /** Run against the cluster of this kubeconfig file instead of the embedded one. */
  kubeconfig?: string;
  /** With `kubeconfig`: a context other than the file's current-context. */
  context?: string;
  log?: Logger;
  /** One-line warnings for the user (long real-time waits). */
  warn?: (message: string) => void;
  /** Aborting stops the run after cleaning up (Ctrl-C). */
  signal?: AbortSignal;
  /** Embedded cluster: a serving certificate for 127.0.0.1 to reuse across runs (saves the key generation). */
  certificate?: ServingCertificate;
  /** Embedded cluster: race mode under this seed (docs/scenarios.md, "Timing races"); default none, the fixed order. */
  raceSeed?: number;
}

/** Actions that move the clock themselves; the others run under `SimBackend.perform`. */
const CLOCK_DRIVING_ACTIONS: ReadonlySet<ActionName> = new Set(['advance', 'drain', 'settle', 'expect']);

/** Every namespace the scenario touches (objects, applied objects, referenced objects, WorkloadSpreads). */
export function scenarioNamespaces(scenario: Scenario): string[] {
  const out = new Set<string>(['default']);
  const add = (ns: string | undefined) => {
    if (ns !== undefined && ns !== '') out.add(ns);
  };
  for (const o of scenario.objects) add(o.metadata?.namespace);
  for (const w of scenario.workloadSpreads) add(w.namespace);
  for (const s of scenario.steps) {
    const a = s.action;
    if (a.action === 'apply') add(a.object.metadata?.namespace);
    if ('target' in a) add(a.target.namespace);
    if (a.action === 'createPods') add(a.owner.namespace);
    if (a.action === 'evict' && a.pods.by === 'name') add(a.pods.namespace);
  }
  return [...out].sort();
}

/** A workload a settle waits for, by reference. */
interface WorkloadRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

const groupOfApiVersion = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/** The workloads whose rollouts a settle waits for: those the scenario creates (objects, apply steps) and the WorkloadSpreads' targets, of the kinds `rolloutStatus` judges. */
export function scenarioWorkloads(scenario: Scenario): WorkloadRef[] {
  const out = new Map<string, WorkloadRef>();
  const add = (apiVersion: string | undefined, kind: string | undefined, namespace: string | undefined, name: string | undefined) => {
    if (apiVersion === undefined || kind === undefined || name === undefined || !ROLLOUT_KINDS.has(`${groupOfApiVersion(apiVersion)}/${kind}`)) return;
    const ref = { apiVersion, kind, namespace: namespace === undefined || namespace === '' ? 'default' : namespace, name };
    out.set(`${groupOfApiVersion(apiVersion)}/${kind}/${ref.namespace}/${name}`, ref);
  };
  const objects = [...scenario.objects, ...scenario.steps.flatMap((s) => (s.action.action === 'apply' ? [s.action.object] : []))];
  for (const o of objects) {
    add(o.apiVersion, o.kind, o.metadata?.namespace, o.metadata?.name);
    if (o.kind === 'WorkloadSpread') {
      const target = (o as { spec?: { targetRef?: { apiVersion?: unknown; kind?: unknown; name?: unknown } } }).spec?.targetRef;
      if (typeof target?.apiVersion === 'string' && typeof target.kind === 'string' && typeof target.name === 'string') add(target.apiVersion, target.kind, o.metadata?.namespace, target.name);
    }
  }
  return [...out.values()];
}

/** Lists what the snapshot and the settle judgement need, namespace by namespace. */
class Observer {
  readonly #backend: SimBackend;
  readonly #scenario: Scenario;
  readonly #namespaces: string[];
  readonly #workloads: WorkloadRef[];
  readonly #start: number;
  #seenEvents = new Map<string, number>();
  lastPods: Pod[] = [];

  constructor(backend: SimBackend, scenario: Scenario, start: number) {
    this.#backend = backend;
    this.#scenario = scenario;
    this.#namespaces = scenarioNamespaces(scenario);
    this.#workloads = scenarioWorkloads(scenario);
    this.#start = start;
  }

  async #listIn<T>(ref: ResourceRef): Promise<T[]> {
    const out: T[] = [];
    for (const namespace of this.#namespaces) {
      try {
        out.push(...(await this.#backend.client.list<T>(ref, { namespace })).items);
      } catch (err) {
        // A namespace the scenario has not created yet.
        if (!isNotFound(err)) throw err;
      }
    }
    return out;
  }

  /** An object by reference; undefined when it does not exist, or its kind is not served. */
  async #get(apiVersion: string, kind: string, namespace: string, name: string): Promise<KubeObject | undefined> {
    const ref = await this.#backend.client.resources.resolve(apiVersion, kind);
    if (!ref.ok) return undefined;
    try {
      return await this.#backend.client.get<KubeObject>(ref.ref, name, ref.ref.namespaced ? { namespace } : {});
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The custom-workload whitelist the manager reads (its config map in its namespace), if any. */
  async #whitelist(): Promise<Whitelist | undefined> {
    const namespace = this.#backend.managerNamespace;
    if (namespace === undefined) return undefined;
    const cm = await this.#get('v1', 'ConfigMap', namespace, DEFAULT_CONFIGMAP_NAME).catch(() => undefined);
    const read = whitelistFromConfigMap(cm);
    return read.ok ? read.whitelist : undefined;
  }

  /** The scale subresource of a custom-kind target, as the controller reads it. */
  async #scale(ws: WorkloadSpread): Promise<{ replicas?: number; selector?: string } | undefined> {
    const t = ws.spec?.targetRef;
    if (t === undefined || t === null || CONTROLLER_KNOWN_KINDS.has(`${groupOfApiVersion(t.apiVersion)}/${t.kind}`)) return undefined;
    const ref = await this.#backend.client.resources.resolve(t.apiVersion, t.kind);
    if (!ref.ok) return undefined;
    try {
      const scale = await this.#backend.client.getScale(ref.ref as ResourceRef, t.name, { namespace: ws.metadata?.namespace ?? '' });
      return { ...(typeof scale.spec?.replicas === 'number' ? { replicas: scale.spec.replicas } : {}), ...(typeof scale.status?.selector === 'string' ? { selector: scale.status.selector } : {}) };
    } catch {
      // No scale subresource (or not readable): the controller goes without it too.
      return undefined;
    }
  }

  /** One look at the scenario's namespaces: the WorkloadSpreads, their targets, ReplicaSets, pods, whitelist and scales. */
  async #listing(): Promise<ClusterListing> {
    const wanted = new Set(this.#scenario.workloadSpreads.map((w) => `${w.namespace}/${w.name}`));
    const spreads = (await this.#listIn<WorkloadSpread>(WORKLOADSPREAD_REF)).filter((w) => wanted.has(`${w.metadata?.namespace ?? ''}/${w.metadata?.name ?? ''}`));
    const workloads = new Map<string, KubeObject>();
    const scales = new Map<string, { replicas?: number; selector?: string }>();
    for (const ws of spreads) {
      const t = ws.spec?.targetRef;
      if (t === undefined || t === null) continue;
      const key = `${ws.metadata?.namespace ?? ''}/${ws.metadata?.name ?? ''}`;
      const workload = await this.#get(t.apiVersion, t.kind, ws.metadata?.namespace ?? '', t.name);
      if (workload !== undefined) workloads.set(key, workload);
      const scale = workload === undefined ? undefined : await this.#scale(ws);
      if (scale !== undefined) scales.set(key, scale);
    }
    const pods = await this.#listIn<Pod>(BUILTIN.pods);
    this.lastPods = pods;
    const whitelist = await this.#whitelist();
    return { workloadSpreads: spreads, workloads, replicaSets: await this.#listIn<KubeObject>(BUILTIN.replicasets), pods, scales, ...(whitelist === undefined ? {} : { whitelist }) };
  }

  async podsAndSpreads(): Promise<ReturnType<typeof observePodsAndSpreads>> {
    return observePodsAndSpreads(await this.#listing());
  }

  async snapshot(): Promise<Snapshot & { rawPods: Pod[] }> {
    const { pods, rawPods, workloadSpreads } = await this.podsAndSpreads();
    const { fresh, seen } = newEvents(await this.#listIn<KubeObject>(BUILTIN.eventsV1), this.#seenEvents);
    this.#seenEvents = seen;
    const now = this.#backend.clock.now();
    const budgets = await listBudgets(this.#backend.client, this.#namespaces);
    return { time: formatTime(now), elapsedMs: now - this.#start, pods, rawPods, workloadSpreads, events: fresh, budgets };
  }

  /** Changes whenever a pod, ReplicaSet or WorkloadSpread of the scenario's namespaces does (the embedded settle's busy-loop check). */
  async fingerprint(): Promise<string> {
    const versions: string[] = [];
    for (const ref of [BUILTIN.pods, WORKLOADSPREAD_REF, BUILTIN.replicasets]) {
      for (const o of await this.#listIn<KubeObject>(ref)) versions.push(`${o.metadata?.uid ?? ''}@${o.metadata?.resourceVersion ?? ''}`);
    }
    return versions.sort().join(',');
  }

  /** One look for a settle: the fingerprint (pods, ReplicaSets, WorkloadSpreads and the scenario's workloads) and the judgement of the facts. */
  async look(): Promise<{ fingerprint: string; judgement: SettleJudgement }> {
    const listing = await this.#listing();
    const tracked: KubeObject[] = [];
    for (const w of this.#workloads) {
      const o = await this.#get(w.apiVersion, w.kind, w.namespace, w.name);
      if (o !== undefined) tracked.push(o);
    }
    const version = (o: { metadata?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined }) => `${o.metadata?.uid ?? ''}@${o.metadata?.resourceVersion ?? ''}`;
    const fingerprint = [...listing.pods, ...listing.workloadSpreads, ...listing.replicaSets, ...tracked].map(version).sort().join(',');
    const judgement = judgeSettled({
      now: this.#backend.clock.now(),
      workloadSpreads: listing.workloadSpreads,
      observed: observePodsAndSpreads(listing),
      workloads: tracked,
      replicaSets: listing.replicaSets,
      pods: listing.pods,
    });
    return { fingerprint, judgement };
  }

  /** What a settle looks at (backend.ts `SettleProbe`). */
  get probe(): SettleProbe {
    return { fingerprint: () => this.fingerprint(), look: () => this.look() };
  }

  async nodes(): Promise<Node[]> {
    return (await this.#backend.client.list<Node>(BUILTIN.nodes)).items;
  }
}

/** The failure expectation of a step: expected when `expectFailure` is set, a failure otherwise. */
function failureExpectation(step: Step, error: string | undefined): ExpectationResult | undefined {
  const want = step.expectFailure;
  if (want === undefined) return error === undefined ? undefined : { ok: false, path: 'error', expected: null, actual: error, message: `the ${step.action.action} step failed` };
  const ok = error !== undefined && (want === true || error.includes(want));
  return { ok, path: 'expectFailure', expected: want, actual: error ?? null, ...(ok ? {} : { message: error === undefined ? 'the step succeeded' : 'the step failed with another message' }) };
}

/** Tracks what a live run created, so it can delete it again and never replaces anything else. */
class Ledger implements ApplyPolicy {
  readonly objects: { ref: ResourceRef; namespace: string | undefined; name: string }[] = [];
  readonly namespaces: string[] = [];
  mayReplace(ref: ResourceRef, namespace: string | undefined, name: string): boolean {
    return this.objects.some((o) => o.ref.resource === ref.resource && o.ref.group === ref.group && o.namespace === namespace && o.name === name);
  }
  created(ref: ResourceRef, namespace: string | undefined, name: string): void {
    if (!this.mayReplace(ref, namespace, name)) this.objects.push({ ref, namespace, name });
  }
  namespaceCreated(name: string): void {
    this.namespaces.push(name);
  }

  /** Deletes what the run created, newest first, and waits (bounded) for their pods to go while the kubelet still runs. */
  async undo(backend: SimBackend, observer: Observer, log: Logger): Promise<void> {
    for (const o of [...this.objects].reverse()) {
      try {
        await backend.client.delete(o.ref, o.name, { ...(o.namespace === undefined ? {} : { namespace: o.namespace }), propagationPolicy: 'Background' });
      } catch (err) {
        if (!isNotFound(err)) log.warn({ object: `${o.ref.kind} ${o.name}`, err: describeError(err) }, 'cannot delete an object the scenario created');
      }
    }
    for (let i = 0; i < 40; i++) {
      const { pods } = await observer.podsAndSpreads().catch(() => ({ pods: [] }));
      if (pods.length === 0) break;
      await backend.clock.sleep(250);
    }
    for (const ns of [...this.namespaces].reverse()) await backend.client.delete(BUILTIN.namespaces, ns).catch(() => {});
  }
}

async function startBackend(scenario: Scenario, options: RunOptions): Promise<SimBackend> {
  const log = options.log ?? silentLogger;
  if (options.kubeconfig !== undefined) {
    if (options.raceSeed !== undefined) throw new Error('race mode needs the embedded cluster: a real cluster has races of its own, not seeded ones');
    return startLiveBackend(scenario, { kubeconfig: options.kubeconfig, log, ...(options.context === undefined ? {} : { context: options.context }), ...(options.warn === undefined ? {} : { warn: options.warn }) });
  }
  return startEmbeddedBackend(scenario, {
    log,
    ...(options.certificate === undefined ? {} : { certificate: options.certificate }),
    ...(options.raceSeed === undefined ? {} : { races: seededRaces(options.raceSeed) }),
  });
}

const tally = (result: ScenarioRunResult): ScenarioRunResult => {
  const all = result.steps.flatMap((s) => s.expectations);
  result.passed = all.filter((e) => e.ok).length;
  result.failed = all.length - result.passed;
  result.ok = result.error === undefined && result.interrupted !== true && result.failed === 0;
  return result;
};

/** Runs a scenario; never throws for anything the scenario or the cluster does (see `error`). */
export async function runScenario(scenario: Scenario, options: RunOptions = {}): Promise<ScenarioRunResult> {
  const log = options.log ?? silentLogger;
  const signal = options.signal;
  const result: ScenarioRunResult = {
    name: scenario.name,
    ...(scenario.description === undefined ? {} : { description: scenario.description }),
    mode: options.kubeconfig === undefined ? 'embedded' : 'kubeconfig',
    ...(options.raceSeed === undefined ? {} : { raceSeed: options.raceSeed }),
    ok: false,
    passed: 0,
    failed: 0,
    steps: [],
  };
  let backend: SimBackend;
  try {
    signal?.throwIfAborted();
    backend = await startBackend(scenario, options);
  } catch (err) {
    if (signal?.aborted === true) result.interrupted = true;
    else result.error = describeError(err);
    return tally(result);
  }
  const ledger = backend.mode === 'kubeconfig' ? new Ledger() : undefined;
  const policy = ledger ?? REPLACE_ANYTHING;
  const observer = new Observer(backend, scenario, backend.clock.now());
  let onStop: (() => Promise<void>) | undefined;
  try {
    onStop = (await options.onStart?.(backend)) ?? undefined;
    await backend.perform(() => applyObjects(backend, scenario.objects, policy, signal));
    const settledSetup = await backend.settle(DEFAULT_SETTLE_TIMEOUT_MS, observer.probe, signal);
    const { rawPods: _ignored, ...setup } = await observer.snapshot();
    result.setup = setup;
    if (!settledSetup.quiescent) options.warn?.(`after the objects were applied: ${describeUnsettled(settledSetup) ?? ''}`);
    await options.onSetup?.(setup);
    let sinceExpect: EventRecord[] = [...setup.events];
    let evictionsSinceExpect: EvictionRecord[] = [];

    for (const step of scenario.steps) {
      signal?.throwIfAborted();
      const act = () =>
        runAction(step.action, {
          backend,
          apply: policy,
          ...(signal === undefined ? {} : { signal }),
          subsetPods: async (p: SubsetPods) => {
            const { pods } = await observer.podsAndSpreads();
            return pods.filter((x) => x.workloadSpread === `${p.workloadSpread.namespace}/${p.workloadSpread.name}` && x.subset === p.subset).slice(0, p.count);
          },
        });
      // `advance` and `drain` move the clock themselves.
      const outcome = CLOCK_DRIVING_ACTIONS.has(step.action.action) ? await act() : await backend.perform(act);
      evictionsSinceExpect.push(...(outcome.evictions ?? []));
      await backend.quiesce();
      let settled: SettleOutcome | undefined;
      const timeoutMs = step.action.action === 'settle' ? step.action.timeoutMs : step.after.settle ? step.after.timeoutMs : undefined;
      if (timeoutMs !== undefined) settled = await backend.settle(timeoutMs, observer.probe, signal);
      const { rawPods, ...snap } = await observer.snapshot();
      sinceExpect.push(...snap.events);
      const expectations: ExpectationResult[] = [];
      const failure = failureExpectation(step, outcome.ok ? undefined : outcome.error);
      if (failure !== undefined) expectations.push(failure);
      if (step.action.action === 'expect') {
        const needsNodes = step.action.expect.checks.some((c) => c.check === 'nodeLabels');
        expectations.push(...evaluateExpectations({ spec: step.action.expect, pods: snap.pods, rawPods, workloadSpreads: snap.workloadSpreads, events: sinceExpect, nodes: needsNodes ? await observer.nodes() : [], budgets: snap.budgets, evictions: evictionsSinceExpect }));
        sinceExpect = [];
        evictionsSinceExpect = [];
      }
      const record: StepResult = {
        step: step.index,
        action: step.action.action,
        summary: describeAction(step.action),
        ...(step.description === undefined ? {} : { description: step.description }),
        ...snap,
        expectations,
        ...(outcome.ok ? (outcome.notes.length > 0 ? { notes: outcome.notes } : {}) : { error: outcome.error }),
        ...(settled === undefined ? {} : { settled }),
        ...(outcome.evictions === undefined ? {} : { evictions: outcome.evictions }),
      };
      result.steps.push(record);
      await options.onStep?.(record);
    }
  } catch (err) {
    if (signal?.aborted === true) result.interrupted = true;
    else result.error = describeError(err);
  } finally {
    if (onStop !== undefined) await onStop().catch((err: unknown) => log.warn({ err: describeError(err) }, 'the onStart clean-up failed'));
    if (ledger !== undefined) await ledger.undo(backend, observer, log).catch((err: unknown) => log.warn({ err: describeError(err) }, 'cleaning up the scenario failed'));
    await backend.stop();
  }
  return tally(result);
}
