/**
 * The embedded cluster alone in a child process, on the real clock, for
 * bench/manager-scale-up.ts (which starts it with `RemoteCluster.start`):
 * the API server, controllers and kubelets run here, the manager in the
 * benchmark's process, so this process's CPU time is the cluster's (its
 * webhook thread's included).
 *
 * Protocol (Node IPC, JSON): the parent sends `{ id, op }` with op one of
 * `pods`, `reset`, `tally`, `podBytes`, `stop`; the child answers `{ id, ok, value }` or
 * `{ id, ok: false, error }`. Once started it sends `{ ready: connection }`.
 * It exits when told to stop or when the parent goes away.
 */
import { realClock } from '../../src/clock/clock.ts';
import { generateServingCertificate } from '../../src/client/loopback-certificates.ts';
import { LocalCluster } from './scale-cluster.ts';

interface Request {
  id: number;
  op: 'pods' | 'reset' | 'tally' | 'podBytes' | 'stop';
}

const send = (message: unknown): void => {
  process.send?.(message);
};

const kubeletDelayMs = Number(process.argv[2] ?? 20);
const nodesPerZone = Number(process.argv[3] ?? 10);
// On the real clock, webhooks are called from the API server's webhook thread: a call is timed as kube-apiserver times it, without this process's own queue.
const cluster = await LocalCluster.start(realClock(), generateServingCertificate(), kubeletDelayMs, nodesPerZone, true);
let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await cluster.stop();
};
process.on('disconnect', () => {
  void stop().finally(() => process.exit(0));
});
process.on('message', (raw) => {
  const req = raw as Request;
  const answer = async (): Promise<unknown> => {
    switch (req.op) {
      case 'pods':
        return cluster.podCounts();
      case 'reset':
        return cluster.reset();
      case 'tally':
        return cluster.tally();
      case 'podBytes':
        return cluster.podBytes();
      case 'stop':
        return stop();
    }
  };
  answer().then(
    (value) => send({ id: req.id, ok: true, value }),
    (err: unknown) => send({ id: req.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
  ).finally(() => {
    // Stopped: let the answer go out, then leave (the 'disconnect' handler exits).
    if (req.op === 'stop') setImmediate(() => process.disconnect?.());
  });
});
send({ ready: cluster.connection });
