/**
 * Benchmark: the embedded API server with 10,000 pods.
 *
 * Run:  node --import tsx bench/apiserver-list-watch.ts [pods=10000] [concurrency=32]
 *
 * Prints (figures only, no assertions):
 * - create: N pods over HTTPS (keep-alive, `concurrency` requests in flight): total ms and pods/s;
 * - list: one unpaginated list of all pods: ms, response MiB, and the heap the
 *   server holds for the stored pods (MiB, and KiB per pod);
 * - list paginated: the same list in pages of 500, as informers do;
 * - watch from 0: a watch without resourceVersion until the N-th ADDED event: ms;
 * - pod encodings, JSON vs Kubernetes protobuf (`application/vnd.kubernetes.protobuf`),
 *   what serving a pod list+watch costs in either: per 1,000 pod watch events the
 *   encode time and the bytes, the decode time on the client's side, and one list
 *   of all N pods — for the pods as this server stores them and for a running
 *   Deployment pod of the shape a real API server sends (ownerReferences,
 *   managedFields, conditions, container statuses). This server does not serve
 *   protobuf (it reads protobuf request bodies only, src/cluster/apiserver/protobuf/),
 *   so the protobuf side is bench/lib/kube-protobuf.ts's encoder, each shape first
 *   checked to round-trip through the server's decoder. Times are single-thread
 *   JavaScript (V8: JSON.stringify and JSON.parse are native, the protobuf code
 *   is JavaScript), the median of 5 rounds over fresh copies. They do not carry
 *   over to kube-apiserver, which is Go (where the protobuf marshaller is the
 *   fast one) and which encodes each watch event once per format for all its
 *   watchers (the in-cluster components watch pods in protobuf, so a JSON pod
 *   watcher adds a JSON encoding of every pod event); the byte counts do.
 * The server runs on the real clock in this process; the heap figure is
 * `heapUsed` after a forced GC when node runs with --expose-gc.
 */
import { Agent, request } from 'node:https';
import { realClock } from '../src/clock/clock.ts';
import { startApiServer, type ApiServer } from '../src/cluster/index.ts';
import { decodeKubernetesProtobuf } from '../src/cluster/apiserver/protobuf/decode.ts';
import { deepEqual } from '../src/k8s/json.ts';
import type { KubeObject } from '../src/k8s/types.ts';
import { encodeMessage, encodePod, encodePodList, watchFrame } from './lib/kube-protobuf.ts';


const N = Number(process.argv[2] ?? 10_000);
const CONCURRENCY = Number(process.argv[3] ?? 32);
const MiB = 1024 * 1024;

function gc(): void {
  const maybe = (globalThis as { gc?: () => void }).gc;
  if (maybe !== undefined) maybe();
}

function call(server: ApiServer, agent: Agent, method: string, path: string, body?: string): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${server.token}` };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const req = request({ host: server.host, port: server.port, method, path, ca: server.caPem, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, bytes: buf.length, text: buf.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function podBody(i: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, labels: { app: 'bench', shard: String(i % 10) }, annotations: { 'bench/index': String(i) } },
    spec: { nodeName: `node-${i % 100}`, containers: [{ name: 'app', image: 'nginx:1.25', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
  });
}

async function main(): Promise<void> {
  const clock = realClock();
  const server = await startApiServer({ clock });
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  gc();
  const heapBefore = process.memoryUsage().heapUsed;

  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < N; i = next++) {
        const r = await call(server, agent, 'POST', '/api/v1/namespaces/default/pods', podBody(i));
        if (r.status !== 201) throw new Error(`create pod-${i}: ${r.status} ${r.text}`);
      }
    }),
  );
  const createMs = performance.now() - t0;
  console.log(`create  ${N} pods: ${createMs.toFixed(0)} ms (${((N / createMs) * 1000).toFixed(0)} pods/s, concurrency ${CONCURRENCY})`);

  gc();
  const heapStored = process.memoryUsage().heapUsed - heapBefore;
  const t1 = performance.now();
  const list = await call(server, agent, 'GET', '/api/v1/namespaces/default/pods');
  const listMs = performance.now() - t1;
  const items = (JSON.parse(list.text) as { items: unknown[] }).items.length;
  console.log(`list    ${items} pods: ${listMs.toFixed(0)} ms, response ${(list.bytes / MiB).toFixed(1)} MiB`);
  const t1b = performance.now();
  const again = await call(server, agent, 'GET', '/api/v1/namespaces/default/pods');
  console.log(`list    again (serialization cached): ${(performance.now() - t1b).toFixed(0)} ms, ${(again.bytes / MiB).toFixed(1)} MiB`);
  gc();
  const heapAfterList = process.memoryUsage().heapUsed - heapBefore;
  console.log(`heap    stored pods: ${(heapStored / MiB).toFixed(1)} MiB (${(heapStored / 1024 / N).toFixed(2)} KiB/pod); after listing (JSON cached): ${(heapAfterList / MiB).toFixed(1)} MiB`);

  const t2 = performance.now();
  let cont = '';
  let pages = 0;
  let seen = 0;
  do {
    const r = await call(server, agent, 'GET', `/api/v1/namespaces/default/pods?limit=500${cont === '' ? '' : `&continue=${encodeURIComponent(cont)}`}`);
    const page = JSON.parse(r.text) as { items: unknown[]; metadata: { continue?: string } };
    seen += page.items.length;
    cont = page.metadata.continue ?? '';
    pages++;
  } while (cont !== '');
  console.log(`list    paginated (limit 500): ${pages} pages, ${seen} pods, ${(performance.now() - t2).toFixed(0)} ms`);

  const t3 = performance.now();
  const watched = await new Promise<number>((resolve, reject) => {
    const req = request(
      { host: server.host, port: server.port, method: 'GET', path: '/api/v1/namespaces/default/pods?watch=true', ca: server.caPem, headers: { Authorization: `Bearer ${server.token}` } },
      (res) => {
        let count = 0;
        let buf = '';
        res.on('data', (c: Buffer) => {
          buf += c.toString('utf8');
          let i: number;
          while ((i = buf.indexOf('\n')) >= 0) {
            buf = buf.slice(i + 1);
            if (++count === N) {
              req.destroy();
              resolve(count);
            }
          }
        });
        res.on('error', () => {});
      },
    );
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
    req.end();
  });
  console.log(`watch   from 0: ${watched} ADDED events in ${(performance.now() - t3).toFixed(0)} ms`);

  const stored = server.control.list('v1', 'Pod', 'default');
  if (!stored.ok) throw new Error(stored.status.message ?? 'list failed');
  agent.destroy();
  await server.close();
  console.log('\npod encodings for a pod list+watch: JSON vs protobuf (encode = server side, decode = client side; ms per 1,000 events, median of 5 rounds)');
  const storedPods = stored.value.items;
  encodings('pods as this server stores them (created, bound)', storedPods);
  encodings('running Deployment pods, the shape a real API server sends', storedPods.map((p, i) => runningDeploymentPod(p, i)));
}

/** `a` equals `b` but for fields `a` lacks where `b` holds a zero value (protobuf cannot tell absent from zero there). */
function sameModuloZeros(a: unknown, b: unknown, path = ''): string | undefined {
  if (deepEqual(a, b)) return undefined;
  const isZero = (v: unknown) => v === 0 || v === '' || v === false || v === null || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && Object.keys(v).length === 0);
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b)) {
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    for (const k of new Set([...Object.keys(ra), ...Object.keys(rb)])) {
      if (!(k in ra) && isZero(rb[k])) continue;
      const d = sameModuloZeros(ra[k], rb[k], `${path}.${k}`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  return `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
}

/**
 * The server's decoder keeps the fields Go inlines in JSON nested under their
 * protobuf names (volumes[].volumeSource, ...localObjectReference): lifted
 * here as JSON has them, for the round-trip check.
 */
function liftInlined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(liftInlined);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'volumeSource' || k === 'localObjectReference') Object.assign(out, liftInlined(x));
    else out[k] = liftInlined(x);
  }
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/** Median ms of `fn` over 5 rounds, each on fresh copies of `input` (copied outside the timing). */
function timed<T>(input: () => T, fn: (x: T) => void): number {
  const times: number[] = [];
  for (let round = 0; round < 6; round++) {
    const x = input();
    gc();
    const t = performance.now();
    fn(x);
    if (round > 0) times.push(performance.now() - t); // the first round warms up
  }
  return median(times);
}

function encodings(label: string, pods: KubeObject[]): void {
  const events = pods.slice(0, 1000);
  const per1000 = 1000 / events.length;
  for (const pod of events.slice(0, 50)) {
    const back = decodeKubernetesProtobuf(encodePod(pod));
    if (!back.ok) throw new Error(`protobuf round trip: ${back.error}`);
    const diff = sameModuloZeros(liftInlined(back.value), pod);
    if (diff !== undefined) throw new Error(`protobuf round trip changed the pod at ${diff}`);
  }
  const copies = () => events.map((p) => structuredClone(p));
  let jsonBytes = 0;
  let protoBytes = 0;
  const jsonEncode = timed(copies, (ps) => {
    jsonBytes = 0;
    for (const p of ps) jsonBytes += Buffer.byteLength(`{"type":"MODIFIED","object":${JSON.stringify(p)}}\n`);
  });
  const protoEncode = timed(copies, (ps) => {
    protoBytes = 0;
    for (const p of ps) protoBytes += watchFrame('MODIFIED', encodePod(p)).length;
  });
  const jsonLines = events.map((p) => `{"type":"MODIFIED","object":${JSON.stringify(p)}}`);
  const envelopes = events.map((p) => encodePod(p));
  const jsonDecode = timed(() => jsonLines, (ls) => {
    for (const l of ls) JSON.parse(l);
  });
  const protoDecode = timed(() => envelopes, (bs) => {
    for (const b of bs) decodeKubernetesProtobuf(b);
  });
  console.log(`  ${label}:`);
  console.log(`    watch event  JSON ${(jsonBytes / events.length).toFixed(0)} B, protobuf ${(protoBytes / events.length).toFixed(0)} B (${(protoBytes / jsonBytes).toFixed(2)}×)`);
  console.log(`    encode       JSON ${(jsonEncode * per1000).toFixed(1)} ms, protobuf ${(protoEncode * per1000).toFixed(1)} ms per 1,000 events (JavaScript encoder)`);
  console.log(`    decode       JSON.parse ${(jsonDecode * per1000).toFixed(1)} ms, protobuf ${(protoDecode * per1000).toFixed(1)} ms per 1,000 events (the embedded server's JavaScript decoder)`);
  let jsonList = 0;
  let protoList = 0;
  const listJsonMs = timed(() => pods.map((p) => structuredClone(p)), (ps) => {
    jsonList = Buffer.byteLength(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: ps }));
  });
  const listProtoMs = timed(() => pods.map((p) => structuredClone(p)), (ps) => {
    protoList = encodePodList('1', ps.map((p) => encodeMessage('.k8s.io.api.core.v1.Pod', p))).length;
  });
  console.log(`    list of ${pods.length} JSON ${(jsonList / MiB).toFixed(1)} MiB in ${listJsonMs.toFixed(0)} ms, protobuf ${(protoList / MiB).toFixed(1)} MiB in ${listProtoMs.toFixed(0)} ms`);
}

/** A running pod of a Deployment as kube-apiserver stores it after the kubelet's status update (managedFields of the ReplicaSet controller and the kubelet). */
function runningDeploymentPod(stored: KubeObject, i: number): KubeObject {
  const pod = structuredClone(stored);
  const t = '2026-01-01T00:00:00Z';
  const meta = (pod.metadata ??= {});
  meta.generateName = 'web-6d4cf56db6-';
  meta.labels = { ...(meta.labels as Record<string, string>), app: 'web', 'pod-template-hash': '6d4cf56db6' };
  meta.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-6d4cf56db6', uid: '6f0a8f9e-6a0e-4c3b-9d55-2f1c7a1c9e11', controller: true, blockOwnerDeletion: true }];
  meta.managedFields = [
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: 'v1',
      time: t,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {} }, 'f:ownerReferences': { '.': {}, 'k:{"uid":"6f0a8f9e-6a0e-4c3b-9d55-2f1c7a1c9e11"}': {} } },
        'f:spec': {
          'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {}, 'f:resources': { '.': {}, 'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} } }, 'f:terminationMessagePath': {}, 'f:terminationMessagePolicy': {} } },
          'f:dnsPolicy': {},
          'f:enableServiceLinks': {},
          'f:restartPolicy': {},
          'f:schedulerName': {},
          'f:securityContext': {},
          'f:terminationGracePeriodSeconds': {},
        },
      },
    },
    {
      manager: 'kubelet',
      operation: 'Update',
      apiVersion: 'v1',
      time: t,
      fieldsType: 'FieldsV1',
      subresource: 'status',
      fieldsV1: {
        'f:status': {
          'f:conditions': { 'k:{"type":"ContainersReady"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} }, 'k:{"type":"Initialized"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} }, 'k:{"type":"Ready"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} } },
          'f:containerStatuses': {},
          'f:hostIP': {},
          'f:phase': {},
          'f:podIP': {},
          'f:podIPs': { '.': {}, 'k:{"ip":"10.244.1.2"}': { '.': {}, 'f:ip': {} } },
          'f:startTime': {},
        },
      },
    },
  ];
  const ip = `10.244.${Math.floor(i / 250) % 250}.${(i % 250) + 2}`;
  pod['status'] = {
    phase: 'Running',
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: t })),
    hostIP: '172.18.0.3',
    hostIPs: [{ ip: '172.18.0.3' }],
    podIP: ip,
    podIPs: [{ ip }],
    startTime: t,
    containerStatuses: [{ name: 'app', state: { running: { startedAt: t } }, lastState: {}, ready: true, restartCount: 0, image: 'docker.io/library/nginx:1.25', imageID: 'docker.io/library/nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31', containerID: 'containerd://5d1c3f0c2b9a7e8f6d4c3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a291807f6e', started: true }],
    qosClass: 'Burstable',
  };
  return pod;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
