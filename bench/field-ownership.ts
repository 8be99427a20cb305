/**
 * Benchmark: what recording field ownership (`metadata.managedFields`) costs
 * the embedded API server per write, for the writes a pod sees on the hot
 * path of a scale-up: its create by a workload controller, the scheduler's
 * and kubelet's status writes, a label change, and a server-side apply.
 *
 * Run:  node --import tsx bench/field-ownership.ts [pods=5000]
 *
 * Prints (figures only, no assertions) CPU µs per write of the field manager
 * alone (process CPU time, so a busy machine inflates it less than wall
 * time), and the size of the managedFields the writes leave on a pod next to
 * the size of the pod.
 */
import { ServiceAllocator } from '../src/cluster/apiserver/strategies/service.ts';
import { Authorizer } from '../src/cluster/apiserver/authorization.ts';
import { ObjectStore } from '../src/cluster/apiserver/storage.ts';
import { builtinResources } from '../src/cluster/apiserver/builtin-resources.ts';
import { FieldManager } from '../src/cluster/apiserver/fields/managed-fields.ts';
import type { KubeObject } from '../src/k8s/types.ts';
import { ok } from '../src/cluster/apiserver/errors.ts';

const N = Number(process.argv[2] ?? 5000);
const def = builtinResources({ serviceAllocator: new ServiceAllocator(), authorizer: new Authorizer(new ObjectStore()) }).find((d) => d.group === '' && d.plural === 'pods');
if (def === undefined) throw new Error('no pods resource');
const podDef = def;
const fields = new FieldManager();
const T0 = Date.UTC(2026, 0, 1);

function newPod(i: number): KubeObject {
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'bench-7d9f8c6b5-',
      name: `bench-7d9f8c6b5-${i}`,
      namespace: 'default',
      labels: { app: 'bench', 'pod-template-hash': '7d9f8c6b5' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'bench-7d9f8c6b5', uid: '6f0c1f7e-2b1a-4a43-9d0e-6a3c3b9b1e11', controller: true, blockOwnerDeletion: true }],
    },
    spec: { containers: [{ name: 'app', image: 'nginx:1.25', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
  };
  podDef.strategy.applyDefaults?.(pod);
  return pod;
}

function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Times `record` over N prepared inputs (preparation — copies, defaults — is not timed). */
function measure<T>(label: string, prepare: (i: number) => T, record: (input: T, i: number) => void): void {
  const warm = Math.min(200, N);
  for (let i = 0; i < warm; i++) record(prepare(i), i);
  const inputs = Array.from({ length: N }, (_, i) => prepare(i));
  const cpu = cpuMicros();
  const wall = performance.now();
  for (let i = 0; i < N; i++) record(inputs[i] as T, i);
  const cpuPer = (cpuMicros() - cpu) / N;
  const wallPer = ((performance.now() - wall) * 1000) / N;
  console.log(`${label.padEnd(42)} ${cpuPer.toFixed(1).padStart(6)} µs CPU/write  (${wallPer.toFixed(1)} µs wall)`);
}

const pods: KubeObject[] = [];
const statusScheduled = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:01Z' }] };
const statusRunning = {
  phase: 'Running',
  hostIP: '10.0.0.1',
  podIP: '10.1.0.5',
  podIPs: [{ ip: '10.1.0.5' }],
  startTime: '2026-01-01T00:00:02Z',
  conditions: [
    { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:01Z' },
    { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:02Z' },
    { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:03Z' },
    { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:03Z' },
  ],
  containerStatuses: [{ name: 'app', ready: true, restartCount: 0, image: 'nginx:1.25', imageID: '', started: true, state: { running: { startedAt: '2026-01-01T00:00:02Z' } } }],
};

/** The next version of pod i: a private copy with `change` applied. */
function nextOf(i: number, change: (next: KubeObject) => void): { live: KubeObject; next: KubeObject } {
  const live = pods[i] as KubeObject;
  const next = structuredClone(live);
  change(next);
  return { live, next };
}

console.log(`${N} pods; field manager only (no HTTP, no storage, no admission)`);
measure('create (kube-controller-manager)', newPod, (pod, i) => {
  fields.update(podDef, undefined, pod, 'kube-controller-manager', '', T0);
  pods[i] = pod;
});
measure(
  'status: PodScheduled (kube-scheduler)',
  (i) => nextOf(i, (n) => (n['status'] = structuredClone(statusScheduled))),
  ({ live, next }, i) => {
    fields.update(podDef, live, next, 'kube-scheduler', 'status', T0 + 1000);
    pods[i] = next;
  },
);
measure(
  'status: Running and Ready (kubelet)',
  (i) => nextOf(i, (n) => (n['status'] = structuredClone(statusRunning))),
  ({ live, next }, i) => {
    fields.update(podDef, live, next, 'kubelet', 'status', T0 + 3000);
    pods[i] = next;
  },
);
measure(
  'metadata: an annotation (merge patch)',
  (i) => nextOf(i, (n) => ((n.metadata as Record<string, unknown>)['annotations'] = { 'controller.kubernetes.io/pod-deletion-cost': '100' })),
  ({ live, next }, i) => {
    fields.update(podDef, live, next, 'workloadspread-manager', '', T0 + 4000);
    pods[i] = next;
  },
);
measure(
  'server-side apply of one label',
  (i) => ({ live: pods[i] as KubeObject, config: { apiVersion: 'v1', kind: 'Pod', metadata: { name: pods[i]?.metadata?.name ?? '', namespace: 'default', labels: { tier: 'web' } } } }),
  ({ live, config }) => {
    const r = fields.apply(podDef, live, config, { manager: 'labeller', subresource: '', force: false, now: T0 + 5000 }, (merged) => ok(merged));
    if (!r.ok) throw new Error(r.status.message);
  },
);

const sample = pods[0] as KubeObject;
const mf = JSON.stringify(sample.metadata?.managedFields ?? []);
const { managedFields: _dropped, ...meta } = sample.metadata ?? {};
const bare = JSON.stringify({ ...sample, metadata: meta });
console.log(`managedFields of a running pod: ${mf.length} bytes, ${(sample.metadata?.managedFields as unknown[]).length} entries; the pod without them: ${bare.length} bytes (+${((100 * mf.length) / bare.length).toFixed(0)}%)`);
