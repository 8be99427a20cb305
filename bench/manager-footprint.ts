/**
 * Benchmark: the manager's footprint, for the chart's resource requests and
 * limits. The published build (`dist/`, `workloadspread manager` in its own
 * process, bench/lib/dist-manager.ts) against the embedded cluster in a child
 * process on the real clock, read from outside as the kubelet would: RSS and
 * its high-water mark (VmHWM) from /proc, CPU time from /proc.
 *
 * Phases: idle with no pod (CPU over `idleSeconds`, RSS), then for each size
 * (cumulative) Deployments of 100 replicas, each under a WorkloadSpread
 * (int 30/30/rest over three zones), scaled from 0 at once: the burst's CPU
 * and peak RSS, then the same idle window at that size.
 *
 * Run:  npm run bench manager-footprint
 *       node --expose-gc --import tsx bench/manager-footprint.ts [sizes=1000,10000] [idleSeconds=60]
 *
 * Prints figures only; asserts nothing.
 */
import { readFileSync } from 'node:fs';
import { realClock } from '../src/clock/clock.ts';
import { BUILTIN } from '../src/client/resources.ts';
import { WORKLOADSPREAD_REF } from '../src/kube/refs.ts';
import { clientFor } from './lib/bench-manager.ts';
import { sampleOf, startDistManager, type DistManager } from './lib/dist-manager.ts';
import { NS, RemoteCluster } from './lib/scale-cluster.ts';

const SIZES = (process.argv[2] ?? '1000,10000').split(',').map(Number).filter((n) => n > 0);
const IDLE_S = Number(process.argv[3] ?? 60);
const REPLICAS = 100;
const clock = realClock();

function statusKb(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`)) ?? '';
  return Number(/(\d+)/.exec(line)?.[1] ?? NaN);
}

const mb = (kb: number) => (kb / 1024).toFixed(0);

interface Window {
  cpuMs: number;
  seconds: number;
  rssMinKb: number;
  rssMaxKb: number;
}

/** Samples RSS every 250 ms for `seconds`, and the CPU time used meanwhile. */
async function observe(dist: DistManager, seconds: number, until?: () => Promise<boolean>): Promise<Window> {
  const cpu0 = dist.cpuMs();
  const t0 = performance.now();
  let rssMinKb = Number.POSITIVE_INFINITY;
  let rssMaxKb = 0;
  for (;;) {
    const rss = statusKb(dist.pid, 'VmRSS');
    rssMinKb = Math.min(rssMinKb, rss);
    rssMaxKb = Math.max(rssMaxKb, rss);
    const elapsed = (performance.now() - t0) / 1000;
    if (until !== undefined ? await until() : elapsed >= seconds) break;
    await clock.sleep(250);
  }
  return { cpuMs: dist.cpuMs() - cpu0, seconds: (performance.now() - t0) / 1000, rssMinKb, rssMaxKb };
}

function printIdle(label: string, w: Window, dist: DistManager, heapBytes: number | undefined): void {
  const millicores = w.cpuMs / w.seconds;
  console.log(`  ${label}: CPU ${millicores.toFixed(1)} millicores over ${w.seconds.toFixed(0)} s; RSS ${mb(w.rssMinKb)}–${mb(w.rssMaxKb)} MiB (peak so far ${mb(statusKb(dist.pid, 'VmHWM'))} MiB); heap used ${heapBytes === undefined ? 'n/a' : (heapBytes / 2 ** 20).toFixed(0)} MiB`);
}

async function main(): Promise<void> {
  const pods = Math.max(...SIZES, 0);
  const perZone = Math.max(10, Math.ceil(pods / 3 / 200));
  console.log(`the published-build manager (one replica); sizes ${SIZES.join(', ')} pods; ${perZone * 3} nodes; idle windows of ${IDLE_S} s`);
  const side = await RemoteCluster.start(20, perZone);
  const admin = clientFor(side.connection, clock, 'bench/admin');
  let dist: DistManager | undefined;
  try {
    const started = performance.now();
    dist = await startDistManager(side.connection);
    const d = dist;
    console.log(`  ready after ${((performance.now() - started) / 1000).toFixed(1)} s: RSS ${mb(statusKb(d.pid, 'VmRSS'))} MiB, CPU ${(d.cpuMs() / 1000).toFixed(1)} s to start`);
    await clock.sleep(5_000);
    printIdle('idle, no pod', await observe(d, IDLE_S), d, sampleOf(await d.metrics(), 'nodejs_heap_size_used_bytes'));
    await d.collectGarbage();
    console.log(`    after a full GC: RSS ${mb(statusKb(d.pid, 'VmRSS'))} MiB`);

    let deployments = 0;
    const zone = (...zones: string[]) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: zones }] });
    for (const size of SIZES) {
      const first = deployments;
      const want = Math.ceil(size / REPLICAS);
      for (let i = first; i < want; i++) {
        const name = `web-${String(i).padStart(3, '0')}`;
        await admin.create(WORKLOADSPREAD_REF, {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'WorkloadSpread',
          metadata: { name, namespace: NS },
          spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name }, subsets: [{ name: 'a', requiredNodeSelectorTerm: zone('a'), maxReplicas: 30 }, { name: 'b', requiredNodeSelectorTerm: zone('b'), maxReplicas: 30 }, { name: 'c', requiredNodeSelectorTerm: zone('c') }] },
        });
        await admin.create(BUILTIN.deployments, {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name, namespace: NS },
          spec: { replicas: 0, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '10m', memory: '16Mi' } } }] } } },
        });
      }
      deployments = want;
      await clock.sleep(2_000);
      const total = deployments * REPLICAS;
      const burstStart = performance.now();
      await Promise.all(Array.from({ length: deployments - first }, (_, k) => admin.scale(BUILTIN.deployments, `web-${String(first + k).padStart(3, '0')}`, REPLICAS, { namespace: NS })));
      const burst = await observe(d, 0, async () => (await side.pods()).bound >= total || performance.now() - burstStart > 60 * 60_000);
      console.log(`  ${total.toLocaleString('en-US')} pods: scale-out to all bound in ${burst.seconds.toFixed(0)} s, manager CPU ${(burst.cpuMs / 1000).toFixed(1)} s (${(burst.cpuMs / burst.seconds).toFixed(0)} millicores on average); RSS up to ${mb(burst.rssMaxKb)} MiB, peak (VmHWM) ${mb(statusKb(d.pid, 'VmHWM'))} MiB`);
      await clock.sleep(15_000);
      printIdle(`idle at ${total.toLocaleString('en-US')} pods`, await observe(d, IDLE_S), d, sampleOf(await d.metrics(), 'nodejs_heap_size_used_bytes'));
      await d.collectGarbage();
      console.log(`    after a full GC: RSS ${mb(statusKb(d.pid, 'VmRSS'))} MiB`);
    }
  } finally {
    await dist?.stop();
    await side.stop();
  }
}

await main();
