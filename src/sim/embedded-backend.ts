/**
 * The simulator's default backend: the embedded Kubernetes (src/cluster/)
 * on a virtual clock, with the WorkloadSpread and DomainDisruptionBudget
 * CRDs installed and the REAL
 * manager (src/manager/: webhooks + controller) running in-process against
 * it, its webhooks registered by URL with the CA it generated — the path a
 * production manager takes, minus the network hop of a Service.
 *
 * Time moves only when the simulator says so: `settle` jumps from timer to
 * timer until nothing is pending (so a 5-minute recovery window costs
 * milliseconds) or only a busy loop that changes nothing is left
 * (`settleVirtual`), then judges the facts as the live backend does
 * (settle-judgement.ts: statuses that describe the pods, finished
 * rollouts), so both end a settle on the same rule; `advance` moves a fixed
 * amount. The manager runs without
 * leader election (one replica; nothing to elect).
 *
 * One certificate serves both TLS endpoints on 127.0.0.1: the API server's
 * and, through the manager's `--cert-dir` path, the webhook's (the API
 * server trusts its CA through the caBundle). RSA key generation is most of
 * a run's start-up cost; a caller running many scenarios passes one in.
 *
 * Race mode (`races`): the clock and the cluster get the same `Races`, so
 * the cluster's components, its watch streams (the manager's included) and
 * its webhook calls take random clock time drawn from the seed
 * (cluster.ts); the manager itself runs unchanged.
 *
 * `stop()` stops the manager while still driving the clock (its shutdown
 * waits on clock timers), then the cluster, and removes the certificate
 * directory; nothing is left running.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { domainDisruptionBudgetCrd, workloadSpreadCrd } from '../api/crd.ts';
import type { Races } from '../clock/races.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { describeError } from '../client/errors.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import { generateServingCertificate, type ServingCertificate } from '../client/loopback-certificates.ts';
import { startCluster, type EmbeddedCluster } from '../cluster/index.ts';
import { startManager, type Manager } from '../manager/manager.ts';
import type { KubeObject } from '../k8s/types.ts';
import { withJudgement, type BackendResult, type Fingerprint, type SettleOutcome, type SettleProbe, type SimBackend } from './backend.ts';
import type { Scenario } from './scenario.ts';

/** The manager's namespace inside the embedded cluster. */
export const SIM_MANAGER_NAMESPACE = 'workloadspread-system';
/** Virtual time the manager may take to become ready (its caches sync in far less). */
const READY_WITHIN_MS = 5 * 60_000;
/** Race mode: virtual time the clock may move while one of the simulator's own requests waits (each takes well under a second). */
const PERFORM_WITHIN_MS = 5 * 60_000;

/**
 * Runs the virtual clock until `done()` holds: quiesce, look, jump to the next timer; false when `maxMs` passed or nothing is left.
 * It waits for the driven work's own waits for quiescence too (`quiesceAll`), so the same run moves time at the same points.
 */
export async function driveClock(clock: VirtualClock, done: () => boolean, maxMs: number): Promise<boolean> {
  const deadline = clock.now() + maxMs;
  for (;;) {
    await clock.quiesceAll();
    if (done()) return true;
    const next = clock.pendingTimers().reduce<number | undefined>((min, t) => (min === undefined || t.at < min ? t.at : min), undefined);
    if (next === undefined || next > deadline) return done();
    await clock.advanceTo(next);
  }
}

/**
 * A step of the clock this short counts towards a busy loop: a rate-limited
 * requeue comes 5 ms after the last, or up to 100 ms once the work queue's
 * overall bucket (10 a second after a burst of 100, as upstream's) is spent.
 */
export const SPIN_STEP_MS = 100;
/** This many short steps in a row without an observed change end a settle (a minute of a 100 ms loop). */
export const SPIN_STEPS = 600;

/**
 * `VirtualClock.settle` (jump from foreground timer to foreground timer
 * until none is left, at most `maxMs`), except that it stops early when the
 * only work left is a busy loop: `SPIN_STEPS` timers in a row, each due at
 * most `SPIN_STEP_MS` after the previous one, while the fingerprint (pods,
 * ReplicaSets, WorkloadSpreads) stayed the same. The case it is for: a
 * Deployment with a pod that never becomes available re-checks its
 * progress deadline through a rate-limited requeue (5 ms, then 100 ms once
 * the queue's overall bucket is spent) once the deadline is near, as upstream
 * does, and nothing else would end a settle before its timeout.
 */
export async function settleVirtual(clock: VirtualClock, maxMs: number, fingerprint: Fingerprint, signal?: AbortSignal): Promise<SettleOutcome> {
  const start = clock.now();
  const deadline = start + maxMs;
  let shortSteps = 0;
  let before: string | undefined;
  for (;;) {
    signal?.throwIfAborted();
    await clock.quiesce();
    const next = clock.pendingTimers().reduce<{ at: number; name: string } | undefined>((min, t) => (t.background || (min !== undefined && t.at >= min.at) ? min : t), undefined);
    if (next === undefined) return { quiescent: true, elapsedMs: clock.now() - start };
    if (next.at > deadline) {
      await clock.advanceTo(deadline, signal);
      return { quiescent: false, elapsedMs: clock.now() - start };
    }
    if (next.at - clock.now() > SPIN_STEP_MS) {
      shortSteps = 0;
      before = undefined;
    } else if (shortSteps++ === 0) before = await fingerprint();
    else if (shortSteps >= SPIN_STEPS) {
      if ((await fingerprint()) === before) return { quiescent: false, elapsedMs: clock.now() - start, spinning: next.name };
      shortSteps = 0;
    }
    await clock.advanceTo(next.at, signal);
  }
}

export interface EmbeddedBackendOptions {
  log?: Logger;
  /** A serving certificate for 127.0.0.1 to reuse (default: a new one). */
  certificate?: ServingCertificate;
  /** Race mode: random latencies in the cluster, drawn from its seed. */
  races?: Races;
}

/** Writes the certificate as the manager's `--cert-dir` expects it (tls.crt, tls.key, ca.crt). */
async function certificateDir(cert: ServingCertificate): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'workloadspread-sim-'));
  await writeFile(join(dir, 'tls.crt'), cert.certPem, { mode: 0o600 });
  await writeFile(join(dir, 'tls.key'), cert.keyPem, { mode: 0o600 });
  await writeFile(join(dir, 'ca.crt'), cert.caPem, { mode: 0o600 });
  return dir;
}

class EmbeddedBackend implements SimBackend {
  readonly mode = 'embedded' as const;
  readonly managerNamespace = SIM_MANAGER_NAMESPACE;
  readonly clock: VirtualClock;
  readonly #cluster: EmbeddedCluster;
  readonly #manager: Manager;
  readonly #certDir: string;
  readonly #raceMode: boolean;
  #stopped: Promise<void> | undefined;

  constructor(clock: VirtualClock, cluster: EmbeddedCluster, manager: Manager, certDir: string, raceMode: boolean) {
    this.clock = clock;
    this.#cluster = cluster;
    this.#manager = manager;
    this.#certDir = certDir;
    this.#raceMode = raceMode;
  }

  get client() {
    return this.#cluster.client;
  }

  addNodes = (specs: Parameters<EmbeddedCluster['addNodes']>[0]): Promise<BackendResult> => this.#cluster.addNodes(specs);
  removeNode = (name: string): Promise<BackendResult> => this.#cluster.removeNode(name);
  cordon = (name: string): Promise<BackendResult> => this.#cluster.cordon(name);
  uncordon = (name: string): Promise<BackendResult> => this.#cluster.uncordon(name);
  taint = (name: string, taint: Parameters<EmbeddedCluster['taint']>[1]): Promise<BackendResult> => this.#cluster.taint(name, taint);
  untaint = (name: string, key: string, effect?: string): Promise<BackendResult> => this.#cluster.untaint(name, key, effect);

  quiesce(): Promise<void> {
    return this.clock.quiesce();
  }

  deliver(): Promise<void> {
    return this.#cluster.deliverWatchEvents();
  }

  /** Race mode: drives the clock until `work` ends (its webhook calls wait on the clock); otherwise runs it as is. */
  async perform<T>(work: () => Promise<T>): Promise<T> {
    if (!this.#raceMode) return work();
    let finished = false;
    const running = work().finally(() => {
      finished = true;
    });
    // Observed here already, so a failure while the clock moves is not an unhandled rejection.
    running.catch(() => {});
    await driveClock(this.clock, () => finished, PERFORM_WITHIN_MS);
    return running;
  }

  /** Runs the clock (`settleVirtual`), then judges: with nothing left to run, a fact that does not hold will not by itself (`idle`). */
  async settle(timeoutMs: number, probe: SettleProbe, signal?: AbortSignal): Promise<SettleOutcome> {
    const outcome = await settleVirtual(this.clock, timeoutMs, probe.fingerprint, signal);
    const { judgement } = await probe.look();
    const judged = withJudgement(outcome, judgement);
    return !judgement.settled && outcome.quiescent ? { ...judged, idle: true } : judged;
  }

  advance(ms: number, signal?: AbortSignal): Promise<void> {
    return this.clock.advance(ms, signal);
  }

  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      await stopManagerOnClock(this.#manager, this.clock);
      await this.#cluster.stop();
      await rm(this.#certDir, { recursive: true, force: true });
    })();
    return this.#stopped;
  }
}

/** Stops a manager while driving the clock (its shutdown waits on clock timers); never throws. */
async function stopManagerOnClock(manager: Manager, clock: VirtualClock): Promise<void> {
  let stopped = false;
  const stopping = manager.stop().then(
    () => {
      stopped = true;
    },
    () => {
      stopped = true;
    },
  );
  try {
    await driveClock(clock, () => stopped, 60_000);
  } catch {
    // A clock that cannot quiesce any more still lets the manager finish on real timers.
  }
  await stopping;
}

/** Starts the embedded cluster with the scenario's nodes and settings, the CRD, and a ready manager. */
export async function startEmbeddedBackend(scenario: Scenario, options: EmbeddedBackendOptions = {}): Promise<SimBackend> {
  const log = options.log ?? silentLogger;
  const races = options.races;
  const clock = new VirtualClock(scenario.cluster.startTimeMs, { races });
  const c = scenario.cluster;
  const certificate = options.certificate ?? generateServingCertificate();
  const certDir = await certificateDir(certificate);
  let cluster: EmbeddedCluster;
  try {
    cluster = await startCluster({
      clock,
      certificate,
      nodes: scenario.nodes,
      kubeletDelayMs: c.kubeletDelayMs,
      ...(c.jobPodDurationMs === undefined ? {} : { jobPodDurationMs: c.jobPodDurationMs }),
      ...(c.podStopDelayMs === undefined ? {} : { podStopDelayMs: c.podStopDelayMs }),
      name: 'workloadspread-sim',
      ...(races === undefined ? {} : { races }),
    });
  } catch (err) {
    await rm(certDir, { recursive: true, force: true });
    throw err;
  }
  let manager: Manager | undefined;
  try {
    await cluster.client.create(BUILTIN.customresourcedefinitions, workloadSpreadCrd() as KubeObject);
    await cluster.client.create(BUILTIN.customresourcedefinitions, domainDisruptionBudgetCrd() as KubeObject);
    await cluster.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SIM_MANAGER_NAMESPACE } });
    await clock.quiesce();
    const managerClient = await cluster.newClient('workloadspread-manager/simulator');
    manager = startManager({
      client: managerClient,
      namespace: SIM_MANAGER_NAMESPACE,
      identity: 'workloadspread-simulator',
      log,
      leaderElection: false,
      unschedulableRecoverySeconds: c.unschedulableRecoverySeconds,
      budgets: { guardPodDeletion: c.guardPodDeletion },
      webhook: { host: '127.0.0.1', port: 0, register: true, url: (own) => own, certDir },
    });
    let failure: string | undefined;
    void manager.done.then((d) => {
      if (d.reason === 'failed') failure = d.error ?? 'failed';
    });
    const m = manager;
    const ready = await driveClock(clock, () => m.isReady() || failure !== undefined, READY_WITHIN_MS);
    if (!ready || failure !== undefined) throw new Error(`the WorkloadSpread manager did not start in the embedded cluster: ${failure ?? 'not ready in time'}`);
    return new EmbeddedBackend(clock, cluster, manager, certDir, races !== undefined);
  } catch (err) {
    if (manager !== undefined) await stopManagerOnClock(manager, clock);
    await cluster.stop();
    await rm(certDir, { recursive: true, force: true });
    throw new Error(describeError(err));
  }
}
