/**
 * The manager's parts as runnables, in the manner of controller-runtime's
 * `manager.Add(Runnable)`: each part is added to a group, and the groups
 * start in a fixed order and stop in the reverse one.
 *
 *   servers   health and metrics endpoints (they must answer while the rest starts)
 *   webhooks  certificates, then the admission server (before the caches, as
 *             controller-runtime does: a webhook the API server calls while the
 *             informers list must already be there)
 *   caches    informers; `start` resolves once they have synced
 *   startup   one-time steps once the caches are there (webhook registration)
 *   leader    loops only the elected replica runs (`run(signal)` while leading)
 *
 * Every part is a `Runnable` (client/runnable.ts, the contract the embedded
 * cluster's control loops keep too). A leader loop is a `LeaderRunnable`:
 * `run(signal)` for as long as this replica leads; `whileLeading(name,
 * create)` makes one from a runnable built afresh for every term (a stopped
 * runnable does not start again). Adding a loop is one line:
 * `runnables.addLeader(whileLeading(name, create))`. `start`
 * resolves when every group but the leader group has started; the leader
 * group is run by `lead(signal)` — from leader election, or for as long as
 * the manager runs when there is none. A part that fails to start fails the
 * start, and `stop` stops what did start (every part's stop is called at most
 * once, and failures are reported, not thrown): startup, then the webhooks —
 * before the caches, unlike the start order, because the admissions still in
 * flight when the server drains read the caches — then caches, then servers
 * (probes and metrics answer to the end); within a group, the last added
 * stops first. Start at `Runnables`.
 */

import type { Runnable } from '../client/runnable.ts';

export type RunnableGroup = 'servers' | 'webhooks' | 'caches' | 'startup';

/** The start order of the groups (the leader group runs after them, once elected). */
export const RUNNABLE_GROUPS: readonly RunnableGroup[] = ['servers', 'webhooks', 'caches', 'startup'];
/** The stop order (after the leader group): see the module comment for why webhooks precede caches. */
export const STOP_ORDER: readonly RunnableGroup[] = ['startup', 'webhooks', 'caches', 'servers'];

/** A loop only the elected replica runs. */
export interface LeaderRunnable {
  readonly name: string;
  /** Runs while this replica leads: returns (having stopped its work) once `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
}

/**
 * A leader loop over a runnable built fresh for each term: started with the
 * term's signal, stopped once the signal aborts (or its start fails).
 */
export function whileLeading(name: string, create: () => Runnable): LeaderRunnable {
  return {
    name,
    run: async (signal) => {
      const runnable = create();
      try {
        await runnable.start(signal);
        await aborted(signal);
      } finally {
        await runnable.stop();
      }
    },
  };
}

export interface RunnableHooks {
  /** Wraps each start (the manager tracks them as work on its clock, and checks for a stop request). */
  step?<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** A stop that failed: reported, the rest still stops. */
  onStopError?(name: string, err: unknown): void;
}

export class Runnables {
  readonly #groups = new Map<RunnableGroup, Runnable[]>(RUNNABLE_GROUPS.map((g) => [g, []]));
  readonly #leader: LeaderRunnable[] = [];
  readonly #started = new Map<RunnableGroup, Runnable[]>(RUNNABLE_GROUPS.map((g) => [g, []]));
  readonly #hooks: RunnableHooks;

  constructor(hooks: RunnableHooks = {}) {
    this.#hooks = hooks;
  }

  add(group: RunnableGroup, runnable: Runnable): void {
    this.#groups.get(group)?.push(runnable);
  }

  addLeader(runnable: LeaderRunnable): void {
    this.#leader.push(runnable);
  }

  /** Names in start order (diagnostics, tests). */
  names(): { group: RunnableGroup | 'leader'; name: string }[] {
    return [
      ...RUNNABLE_GROUPS.flatMap((group) => (this.#groups.get(group) ?? []).map((r) => ({ group, name: r.name }))),
      ...this.#leader.map((r) => ({ group: 'leader' as const, name: r.name })),
    ];
  }

  /** Starts every group in order, one part at a time; rejects with the first failure. */
  async start(signal: AbortSignal): Promise<void> {
    for (const group of RUNNABLE_GROUPS) {
      for (const runnable of this.#groups.get(group) ?? []) {
        const step = this.#hooks.step ?? (<T>(_name: string, fn: () => Promise<T>) => fn());
        this.#started.get(group)?.push(runnable);
        await step(runnable.name, () => runnable.start(signal));
      }
    }
  }

  /** Runs the leader group until `signal` aborts; resolves once each has stopped its work. */
  async lead(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#leader.map((r) => r.run(signal)));
  }

  /** Stops what started, group by group in `STOP_ORDER`, the last added first. */
  async stop(): Promise<void> {
    for (const group of STOP_ORDER) {
      const started = this.#started.get(group) ?? [];
      while (started.length > 0) {
        const runnable = started.pop() as Runnable;
        try {
          await runnable.stop();
        } catch (err) {
          this.#hooks.onStopError?.(runnable.name, err);
        }
      }
    }
  }
}

/** Resolves when `signal` aborts (at once if it has). */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
