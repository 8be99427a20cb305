/**
 * How the long-running commands stop on SIGINT (Ctrl-C) and SIGTERM.
 *
 * The first signal asks the command to stop: it stops what it started
 * (servers, the embedded cluster, temporary files), then exits — 130 for the
 * interactive commands (`status --watch`, `cluster`, `simulate`, `demo`; what
 * a shell reports for Ctrl-C), 0 for `manager`, which is a server: like a
 * controller-runtime manager (and what a kubelet expects of a container) a
 * graceful shutdown on SIGTERM is a success. A second signal while it is
 * still stopping ends the process at once (130, or 1 for the manager, as
 * controller-runtime's signal handler does).
 */
import type { CliIo } from './io.ts';

export type StopSignal = 'SIGINT' | 'SIGTERM';

export interface StopSignals {
  /** Aborted at the first SIGINT or SIGTERM; the reason is an Error naming the signal. */
  readonly signal: AbortSignal;
  /** Resolves with the first signal's name. */
  readonly received: Promise<StopSignal>;
  /** Removes the handlers (the command is over). */
  dispose(): void;
}

export interface StopSignalOptions {
  /** Exit code when a second signal arrives while stopping. */
  forcedExitCode: number;
  /** Said on stderr at the first signal (default: nothing). */
  firstMessage?: (signal: StopSignal) => string;
}

/** Listens for SIGINT and SIGTERM until `dispose()`; see the module comment. */
export function stopOnSignals(io: CliIo, options: StopSignalOptions): StopSignals {
  const controller = new AbortController();
  let resolveReceived: (signal: StopSignal) => void = () => {};
  const received = new Promise<StopSignal>((resolve) => {
    resolveReceived = resolve;
  });
  const on = (signal: StopSignal): void => {
    if (!controller.signal.aborted) {
      const message = options.firstMessage?.(signal);
      if (message !== undefined) io.err(message);
      controller.abort(new Error(`interrupted by ${signal}`));
      resolveReceived(signal);
      return;
    }
    io.err(`\n${signal} again: exiting without finishing the clean-up\n`);
    process.exit(options.forcedExitCode);
  };
  const onInt = () => on('SIGINT');
  const onTerm = () => on('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return {
    signal: controller.signal,
    received,
    dispose: () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
}
