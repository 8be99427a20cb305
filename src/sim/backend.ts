/**
 * Where a scenario runs: the embedded cluster on a virtual clock with the
 * manager in-process (embedded-backend.ts), or an existing cluster reached
 * through a kubeconfig, on the real clock (live-backend.ts). The runner and
 * the step actions only talk to this interface and to its API client, so a
 * scenario means the same thing in both places.
 *
 * Every operation that input can make fail answers `BackendResult`; a
 * backend's `stop()` undoes what it started (and, for a live cluster, the
 * nodes it created) and never throws.
 */
import type { Clock } from '../clock/clock.ts';
import type { KubeClient } from '../client/http-client.ts';
import type { NodeSpec } from '../cluster/nodes.ts';
import type { Taint } from '../k8s/types.ts';

export type BackendResult = { ok: true } | { ok: false; error: string };

export interface SettleOutcome {
  /** False when the timeout ended the wait with work still pending, or a busy loop did (`spinning`). */
  quiescent: boolean;
  /** Clock time that passed. */
  elapsedMs: number;
  /**
   * Embedded cluster: the timer that kept firing (at least every 100 ms)
   * while nothing the scenario observes changed, so the settle stopped
   * there instead of running it until the timeout.
   */
  spinning?: string;
}

/** Something that changes whenever the observed cluster state does (the live backend's "nothing changed for a while"). */
export type Fingerprint = () => Promise<string>;

export interface SimBackend {
  readonly mode: 'embedded' | 'kubeconfig';
  readonly client: KubeClient;
  readonly clock: Clock;
  addNodes(specs: NodeSpec[]): Promise<BackendResult>;
  removeNode(name: string): Promise<BackendResult>;
  cordon(name: string): Promise<BackendResult>;
  uncordon(name: string): Promise<BackendResult>;
  taint(name: string, taint: Taint): Promise<BackendResult>;
  untaint(name: string, key: string, effect?: string): Promise<BackendResult>;
  /** Lets every component see the writes just made (no time passes on a virtual clock). */
  quiesce(): Promise<void>;
  /** Runs until nothing is left to do, at most `timeoutMs` of clock time. */
  settle(timeoutMs: number, fingerprint: Fingerprint, signal?: AbortSignal): Promise<SettleOutcome>;
  /** Moves time forward (virtual), or waits (real). */
  advance(ms: number, signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

export const ok: BackendResult = { ok: true };
export const failed = (error: string): BackendResult => ({ ok: false, error });
