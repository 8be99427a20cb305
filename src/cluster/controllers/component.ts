/**
 * The contract between the embedded cluster (cluster.ts) and its control
 * loops: a `ControllerFactory` names a component and builds it from a
 * `ControllerContext` — its own `KubeClient` (user agent
 * `workloadspread-embedded/<name>`, so every write of the control plane says
 * who made it), the cluster's clock, a logger and the cluster-wide settings.
 * The built `Controller` is a `Runnable` (client/runnable.ts: the contract the
 * manager's parts keep too): started after the API server is up, in list
 * order, with a signal that aborts when the cluster stops, and stopped in
 * reverse order; `stop()` must end every watch, timer and request it started
 * (a test file has to exit by itself). The control loops built on a work
 * queue keep it through `QueueLoop` (client/queue-loop.ts).
 * Which controllers run by default is registry.ts.
 */
import type { Clock } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import type { KubeClient } from '../../client/http-client.ts';
import type { Logger } from '../../client/logger.ts';
import type { Runnable } from '../../client/runnable.ts';

/** Settings every component may read; fixed for the cluster's lifetime. */
export interface ClusterSettings {
  /** How long (clock ms) a kubelet takes to start a pod's containers (default 2 s). */
  kubeletDelayMs: number;
  /** How long a pod owned by a Job runs before it succeeds (default 10 s). */
  jobPodDurationMs: number;
  /** How long stopping a deleted pod's containers takes at most (capped by its grace period; default 1 s). */
  podStopDelayMs: number;
}

export const DEFAULT_SETTINGS: ClusterSettings = { kubeletDelayMs: 2_000, jobPodDurationMs: 10_000, podStopDelayMs: 1_000 };

export interface ControllerContext {
  /** A client of its own, with the user agent `workloadspread-embedded/<name>`. */
  client: KubeClient;
  clock: Clock;
  logger: Logger;
  settings: ClusterSettings;
  /** Race mode (the cluster's `races`): a component hands it to its work queue, which then waits a random delay before each sync. */
  races?: Races | undefined;
  /**
   * The CA of the client certificate the API server presents to admission
   * webhooks (made on the first call); a webhook server that trusts it
   * authenticates the API server (`--client-ca-file`).
   */
  webhookClientCa(): string;
}

/** A control-plane component: the shared lifecycle contract, nothing more. */
export type Controller = Runnable;

export interface ControllerFactory {
  /** Component name: in the user agent, logs and diagnostics. */
  name: string;
  create(context: ControllerContext): Controller | Promise<Controller>;
}

/** The user agent of a control-plane component. */
export function componentUserAgent(name: string): string {
  return `workloadspread-embedded/${name}`;
}
