/**
 * The manager as the scale benchmarks run it (bench/manager-scale-up.ts,
 * bench/manager-scale-100.ts): a real manager on the benchmark's clock,
 * registering its webhooks by URL, whose admission latencies, status writes
 * (by writer and result), group-commit batch sizes and conflicts land in a
 * `ManagerFigures` the benchmark swaps between phases.
 */
import type { Clock } from '../../src/clock/clock.ts';
import { VirtualClock } from '../../src/clock/virtual-clock.ts';
import { connectionFromToken } from '../../src/client/config.ts';
import { KubeClient } from '../../src/client/http-client.ts';
import { WORKLOADSPREAD_REF } from '../../src/kube/refs.ts';
import { startManager, type Manager } from '../../src/manager/manager.ts';
import { ManagerMetrics } from '../../src/manager/metrics.ts';
import { MANAGER_NS, type ConnectionInfo } from './scale-cluster.ts';

export const MANAGER_AGENT = 'workloadspread-manager/bench';

export interface ManagerFigures {
  /** pod CREATE (/mutate-pod) handler time, ms. */
  admissionMs: number[];
  /** Pod DELETE and eviction (/validate-pod) handler time, ms. */
  deleteReviewMs: number[];
  statusWriteMs: number[];
  /** `source result` → count, from the status writer's metrics hook. */
  statusWrites: Map<string, number>;
  batches: number[];
  conflicts: number;
}

export function newFigures(): ManagerFigures {
  return { admissionMs: [], deleteReviewMs: [], statusWriteMs: [], statusWrites: new Map(), batches: [], conflicts: 0 };
}

export function clientFor(connection: ConnectionInfo, clock: Clock, userAgent: string): KubeClient {
  const r = connectionFromToken({ ...connection, source: 'bench' });
  if (!r.ok) throw new Error(`${r.error.source}: ${r.error.message}`);
  return new KubeClient(r.connection, { clock, userAgent, fieldManager: userAgent });
}

/** A manager on `clock` whose figures land in `figures()` (swapped between phases). */
export function startBenchManager(connection: ConnectionInfo, clock: Clock, figures: () => ManagerFigures): Manager {
  const client = clientFor(connection, clock, MANAGER_AGENT);
  const now = clock instanceof VirtualClock ? () => clock.now() : () => performance.now();
  // The latency of one WorkloadSpread status write: the manager's PUT .../status, timed around the client call.
  const updateStatus = client.updateStatus.bind(client);
  client.updateStatus = (async (ref, obj, options) => {
    const started = now();
    try {
      return await updateStatus(ref, obj, options);
    } finally {
      if (ref.kind === WORKLOADSPREAD_REF.kind) figures().statusWriteMs.push(now() - started);
    }
  }) as typeof client.updateStatus;
  const metrics = new ManagerMetrics({ processMetrics: false });
  const admission = metrics.webhook.admission;
  metrics.webhook.admission = (webhook, operation, result, seconds) => {
    if (webhook === '/mutate-pod' && operation === 'CREATE') figures().admissionMs.push(seconds * 1000);
    if (webhook === '/validate-pod') figures().deleteReviewMs.push(seconds * 1000);
    admission?.(webhook, operation, result, seconds);
  };
  const batchSize = metrics.webhook.batchSize;
  metrics.webhook.batchSize = (n) => {
    figures().batches.push(n);
    batchSize?.(n);
  };
  const conflict = metrics.webhook.conflict;
  metrics.webhook.conflict = () => {
    figures().conflicts++;
    conflict?.();
  };
  const statusWrite = metrics.statusWriter.statusWrite;
  metrics.statusWriter.statusWrite = (source, result) => {
    const key = `${source} ${result}`;
    const m = figures().statusWrites;
    m.set(key, (m.get(key) ?? 0) + 1);
    statusWrite?.(source, result);
  };
  return startManager({ client, clock, namespace: MANAGER_NS, identity: 'bench', metrics, leaderElection: false, webhook: { host: '127.0.0.1', port: 0, url: (own) => own, register: true } });
}

