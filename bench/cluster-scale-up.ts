/**
 * Benchmark: the embedded cluster scaling a workload from 0 to N pods, then
 * rolling all N to a new template, on the virtual clock.
 *
 * Run:  node --expose-gc --import tsx bench/cluster-scale-up.ts [pods=1000] [nodes=100]
 *       (or `npm run bench cluster-scale-up`)
 *
 * Prints (figures only, no assertions), for each phase:
 * - wall ms from the request that starts it (a scale, a template change; for
 *   bare pods, their sequential creation) until `settle()` returns, and the
 *   virtual seconds that passed meanwhile (kubelet start delays, rollout waits);
 * - API requests made, by kind (pod creates/bindings/status writes/deletes,
 *   events), and requests per pod;
 * - heap used after a forced GC (when node runs with --expose-gc).
 * The workload is a Deployment when the cluster's default controllers include
 * the Deployment controller, else a ReplicaSet when the ReplicaSet controller
 * is registered, else N bare pods (scale-up only) — so the figures exist at
 * every stage of the project and the header says which was measured.
 */
import { BUILTIN } from '../src/client/resources.ts';
import { VirtualClock } from '../src/clock/virtual-clock.ts';
import { startCluster, type EmbeddedCluster, defaultControllers } from '../src/cluster/index.ts';

const PODS = Number(process.argv[2] ?? 1000);
const NODES = Number(process.argv[3] ?? 100);
const MiB = 1024 * 1024;

function heapMiB(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) gc();
  return process.memoryUsage().heapUsed / MiB;
}

type Mode = 'Deployment' | 'ReplicaSet' | 'Pods';

function modeOf(): Mode {
  const names = defaultControllers().map((f) => f.name);
  if (names.some((n) => n.startsWith('deployment'))) return 'Deployment';
  if (names.some((n) => n.startsWith('replicaset'))) return 'ReplicaSet';
  return 'Pods';
}

function template(image: string): Record<string, unknown> {
  return { metadata: { labels: { app: 'bench' } }, spec: { containers: [{ name: 'app', image, resources: { requests: { cpu: '100m', memory: '128Mi' } } }] } };
}

async function runningPods(c: EmbeddedCluster): Promise<number> {
  const pods = await c.client.listAll<{ status?: { phase?: string }; metadata?: { deletionTimestamp?: string } }>(BUILTIN.pods, { namespace: 'default' });
  return pods.items.filter((p) => p.status?.phase === 'Running' && p.metadata?.deletionTimestamp === undefined).length;
}

function requests(c: EmbeddedCluster): string {
  const ctl = c.apiServer.control;
  const n = (filter: Parameters<typeof ctl.requestCount>[0]) => ctl.requestCount(filter);
  const podWrites = n({ resource: 'pods', verb: 'create', subresource: '' });
  const bindings = n({ resource: 'pods', subresource: 'binding' });
  const statuses = n({ resource: 'pods', subresource: 'status' });
  const deletes = n({ resource: 'pods', verb: 'delete' });
  const events = n({ resource: 'events' });
  const total = n({});
  return `${total} requests (${(total / PODS).toFixed(1)}/pod): pod creates ${podWrites}, bindings ${bindings}, pod status writes ${statuses}, pod deletes ${deletes}, events ${events}`;
}

async function phase(c: EmbeddedCluster, clock: VirtualClock, name: string, act: () => Promise<void>): Promise<void> {
  c.apiServer.control.resetCounters();
  const virtualStart = clock.now();
  const wall = performance.now();
  await act();
  const result = await c.settle(60 * 60_000);
  const ms = performance.now() - wall;
  const running = await runningPods(c);
  console.log(`${name}: ${ms.toFixed(0)} ms wall until settled (${((PODS * 1000) / ms).toFixed(0)} pods/s), ${((clock.now() - virtualStart) / 1000).toFixed(1)} s virtual, quiescent=${result.quiescent}, ${running} pods Running`);
  console.log(`  ${requests(c)}`);
  console.log(`  heap after GC: ${heapMiB().toFixed(1)} MiB`);
}

async function main(): Promise<void> {
  const mode = modeOf();
  // A big settle can keep the system busy for minutes of real time: do not let the clock's guard give up.
  const clock = new VirtualClock(Date.UTC(2026, 0, 1), { realWaitMs: 30 * 60_000 });
  const started = performance.now();
  const c = await startCluster({ clock, nodes: [{ namePrefix: 'node', count: NODES, capacity: { cpu: '64', memory: '256Gi', pods: '250' } }] });
  console.log(`embedded cluster: ${NODES} nodes, controllers ${defaultControllers().map((f) => f.name).join(', ')}; started in ${(performance.now() - started).toFixed(0)} ms`);
  console.log(`workload: ${mode} of ${PODS} pods (100m cpu, 128Mi each)`);
  const baseline = heapMiB();
  console.log(`heap after GC before the workload: ${baseline.toFixed(1)} MiB`);
  try {
    if (mode === 'Pods') {
      await phase(c, clock, `0 → ${PODS} bare pods`, async () => {
        for (let i = 0; i < PODS; i++) await c.client.create(BUILTIN.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `bench-${i}`, namespace: 'default', labels: { app: 'bench' } }, spec: (template('nginx:1.25') as { spec: unknown }).spec });
      });
      console.log('rolling update: skipped (no Deployment controller registered yet)');
      return;
    }
    const ref = mode === 'Deployment' ? BUILTIN.deployments : BUILTIN.replicasets;
    const manifest = { apiVersion: 'apps/v1', kind: mode, metadata: { name: 'bench', namespace: 'default' }, spec: { replicas: 0, selector: { matchLabels: { app: 'bench' } }, template: template('nginx:1.25') } };
    await c.client.create(ref, manifest);
    await c.settle();
    await phase(c, clock, `${mode} 0 → ${PODS}`, async () => {
      await c.client.scale(ref, 'bench', PODS, { namespace: 'default' });
    });
    if (mode !== 'Deployment') {
      console.log('rolling update: skipped (needs the Deployment controller)');
      return;
    }
    await phase(c, clock, `rolling update of ${PODS} pods (maxSurge 25%, maxUnavailable 25%)`, async () => {
      await c.client.patch(ref, 'bench', { type: 'merge', body: { spec: { template: template('nginx:1.26') } } }, { namespace: 'default' });
    });
  } finally {
    await c.stop();
  }
}

await main();
