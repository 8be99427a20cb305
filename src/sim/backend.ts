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
import type { NodeSpec } from '../k8s/node-specs.ts';
import type { Taint } from '../k8s/types.ts';
import type { SettleJudgement } from './settle-judgement.ts';

export type BackendResult = { ok: true } | { ok: false; error: string };

export interface SettleOutcome {
  /**
   * True when the settle ended settled: the cluster's facts hold
   * (settle-judgement.ts) and nothing was left to run (embedded cluster) or
   * nothing changed for the quiet period (a live cluster). False when the
   * timeout ended the wait, a busy loop did (`spinning`), or nothing was
   * left to run while a fact still did not hold (`idle`).
   */
  quiescent: boolean;
  /** Clock time that passed. */
  elapsedMs: number;
  /**
   * Embedded cluster: the timer that kept firing (at least every 100 ms)
   * while nothing the scenario observes changed, so the settle stopped
   * there instead of running it until the timeout.
   */
  spinning?: string;
  /** Embedded cluster: nothing was left to run, yet `waitingFor` was not reached (it never will be by itself). */
  idle?: boolean;
  /** What was not true yet when the settle ended (settle-judgement.ts), one line per object. */
  waitingFor?: string[];
  /** Workloads that stopped short of their spec and do not move on by themselves (a Deployment past its progress deadline). */
  notes?: string[];
}

/** Something that changes whenever the observed cluster state does (the live backend's "nothing changed for a while"). */
export type Fingerprint = () => Promise<string>;

/** What a settle looks at: a fingerprint of the observed state, and the judgement of the facts (settle-judgement.ts). */
export interface SettleProbe {
  fingerprint: Fingerprint;
  /** One look: the fingerprint and the judgement, from the same listing. */
  look(): Promise<{ fingerprint: string; judgement: SettleJudgement }>;
}

export interface SimBackend {
  readonly mode: 'embedded' | 'kubeconfig';
  readonly client: KubeClient;
  readonly clock: Clock;
  /** The namespace of the manager (its whitelist config map), when known. */
  readonly managerNamespace?: string | undefined;
  addNodes(specs: NodeSpec[]): Promise<BackendResult>;
  removeNode(name: string): Promise<BackendResult>;
  cordon(name: string): Promise<BackendResult>;
  uncordon(name: string): Promise<BackendResult>;
  taint(name: string, taint: Taint): Promise<BackendResult>;
  untaint(name: string, key: string, effect?: string): Promise<BackendResult>;
  /** Lets every component see the writes just made (no time passes on a virtual clock). */
  quiesce(): Promise<void>;
  /**
   * `quiesce`, and in race mode the watch events still on their way are
   * delivered at once first: the setup creates its objects one after the
   * other, each seen by every component before the next, with or without
   * race mode.
   */
  deliver(): Promise<void>;
  /**
   * Runs requests the simulator itself makes (an action, the objects of the
   * setup). In race mode on the embedded cluster a request can take clock
   * time (its admission webhook calls are delayed), so the clock is moved,
   * timer by timer, until `work` ends; otherwise `work` just runs.
   */
  perform<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Runs until the cluster is settled — the facts of `probe` hold, and
   * nothing is left to run (virtual clock) or nothing changed for the quiet
   * period (real clock) — at most `timeoutMs` of clock time.
   */
  settle(timeoutMs: number, probe: SettleProbe, signal?: AbortSignal): Promise<SettleOutcome>;
  /** Moves time forward (virtual), or waits (real). */
  advance(ms: number, signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

export const ok: BackendResult = { ok: true };
export const failed = (error: string): BackendResult => ({ ok: false, error });

/** The outcome of a settle that ended with `judgement` (what was or was not true at its end). */
export function withJudgement(outcome: SettleOutcome, judgement: SettleJudgement): SettleOutcome {
  const notes = judgement.notes.length > 0 ? { notes: judgement.notes } : {};
  if (judgement.settled) return { ...outcome, ...notes };
  return { ...outcome, quiescent: false, waitingFor: judgement.waitingFor, ...notes };
}
