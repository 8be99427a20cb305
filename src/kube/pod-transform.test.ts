/**
 * pod-transform: the trimmed pod answers every question the manager asks
 * exactly as the full pod does (property test over generated pods), drops
 * what nobody reads, shares repeated values, never crashes on malformed
 * input, and stays within 1 KiB of heap per cached pod (measured).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { MATCHED_WORKLOADSPREAD_ANNOTATION, POD_DELETION_COST_ANNOTATION } from '../api/keys.ts';
import { readMarker } from '../core/marker.ts';
import { podVersion } from '../core/pod-version.ts';
import { podScheduleFailed } from '../core/reschedule.ts';
import { compareActivePods } from '../k8s/pod-ranking.ts';
import { isPodActive, maxContainerRestarts, podDeletionCost, podReadyTime, podResourceRequests, isPodUnschedulable } from '../k8s/pod.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { Store } from '../client/store.ts';
import { indexPodStore } from './caches.ts';
import { Interner, podTransform, trimPod, withoutManagedFields } from './pod-transform.ts';

const T0 = Date.UTC(2026, 0, 1);

/** A pod as the API server returns it for a ReplicaSet's pod, with the usual noise. */
function fullPod(i: number, opts: { rs?: number; node?: number; phase?: string; ready?: boolean; restarts?: number; deleting?: boolean; scheduledFalse?: boolean; cpu?: string | undefined; memory?: string | undefined; marker?: boolean; cost?: string | undefined; ns?: string } = {}): Pod {
  const rs = opts.rs ?? i % 10;
  const hash = `7d9f8c${rs}b5`;
  const name = `web${rs}-${hash}-${i.toString(36).padStart(5, 'x')}`;
  const created = formatTime(T0 + i * 1000);
  const conditions: Record<string, unknown>[] = [
    { type: 'PodReadyToStartContainers', status: 'True', lastProbeTime: null, lastTransitionTime: created },
    { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: created },
    { type: 'Ready', status: opts.ready === false ? 'False' : 'True', lastProbeTime: null, lastTransitionTime: formatTime(T0 + i * 1000 + 5000) },
    { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: created },
    opts.scheduledFalse === true
      ? { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/50 nodes are available: 50 node(s) didn\'t match Pod\'s node affinity/selector.', lastProbeTime: null, lastTransitionTime: created }
      : { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: created },
  ];
  const annotations: Record<string, string> = { 'kubectl.kubernetes.io/restartedAt': '2025-12-31T10:00:00Z', 'prometheus.io/scrape': 'true' };
  if (opts.marker !== false) annotations[MATCHED_WORKLOADSPREAD_ANNOTATION] = JSON.stringify({ name: 'spread', subset: `zone-${i % 3}`, uid: randomUUID() });
  if (opts.cost !== undefined) annotations[POD_DELETION_COST_ANNOTATION] = opts.cost;
  const requests: Record<string, string> = {};
  if (opts.cpu !== undefined) requests['cpu'] = opts.cpu;
  if (opts.memory !== undefined) requests['memory'] = opts.memory;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `web${rs}-${hash}-`,
      namespace: opts.ns ?? `team-${i % 2}`,
      uid: randomUUID(),
      resourceVersion: String(100_000 + i),
      creationTimestamp: created,
      ...(opts.deleting === true ? { deletionTimestamp: formatTime(T0 + 500_000), deletionGracePeriodSeconds: 30 } : {}),
      labels: { app: 'web', tier: 'frontend', 'pod-template-hash': hash },
      annotations,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `web${rs}-${hash}`, uid: `00000000-0000-0000-0000-00000000000${rs}`, controller: true, blockOwnerDeletion: true }],
      managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: created, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } } }],
    },
    spec: {
      nodeName: opts.node === undefined ? `node-${i % 50}` : opts.node < 0 ? undefined : `node-${opts.node}`,
      containers: [
        {
          name: 'main',
          image: 'registry.example.com/team/web:1.2.3',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          env: [{ name: 'MODE', value: 'production' }],
          resources: Object.keys(requests).length > 0 ? { requests, limits: { cpu: '2' } } : {},
          volumeMounts: [{ name: 'kube-api-access-abcde', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      volumes: [{ name: 'kube-api-access-abcde', projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }] } }],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: opts.phase ?? 'Running',
      conditions: conditions as never,
      hostIP: '10.0.0.1',
      podIP: `10.1.${i % 250}.${i % 200}`,
      startTime: created,
      containerStatuses: [
        { name: 'main', ready: true, restartCount: opts.restarts ?? 0, image: 'registry.example.com/team/web:1.2.3', imageID: 'sha256:abc', containerID: 'containerd://def', started: true, state: { running: { startedAt: created } } },
        { name: 'sidecar', ready: true, restartCount: 0, image: 'envoy', imageID: 'sha256:abd', containerID: 'containerd://deg', started: true, state: { running: { startedAt: created } } },
      ],
      qosClass: 'Burstable',
    },
  } as Pod;
}

describe('trimPod', () => {
  test('keeps what the manager reads, drops the rest', () => {
    const pool = new Interner();
    const full = fullPod(7, { cpu: '250m', memory: '512Mi', cost: '-200', restarts: 3 });
    const t = trimPod(full, pool);
    assert.equal(t.metadata.name, full.metadata.name);
    assert.equal(t.metadata.uid, full.metadata.uid);
    assert.deepEqual(t.metadata.labels, full.metadata.labels);
    assert.deepEqual(Object.keys(t.metadata.annotations ?? {}).sort(), [POD_DELETION_COST_ANNOTATION, MATCHED_WORKLOADSPREAD_ANNOTATION].sort());
    assert.deepEqual(t.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web7-7d9f8c7b5', uid: '00000000-0000-0000-0000-000000000007', controller: true }]);
    assert.equal(t.metadata['managedFields'], undefined);
    assert.equal(t.metadata.generateName, undefined);
    assert.equal(t.spec.tolerations, undefined);
    assert.equal(t.spec.nodeName, 'node-7');
    assert.deepEqual(podResourceRequests(t), podResourceRequests(full));
    assert.deepEqual(t.status?.conditions?.map((c) => c.type), ['Ready', 'PodScheduled']);
    assert.equal(maxContainerRestarts(t), 3);
  });

  test('pods of one ReplicaSet share labels and owner references (frozen)', () => {
    const pool = new Interner();
    const a = trimPod(fullPod(1, { rs: 4 }), pool);
    const b = trimPod(fullPod(2, { rs: 4 }), pool);
    assert.equal(a.metadata.labels, b.metadata.labels);
    assert.equal(a.metadata.ownerReferences, b.metadata.ownerReferences);
    assert.ok(Object.isFrozen(a.metadata.labels));
    assert.throws(() => {
      (a.metadata.labels as Record<string, string>)['x'] = 'y';
    });
  });

  test('pods of one subset whose marker has no uid share one frozen annotations object; a marker with a uid keeps its own', () => {
    const pool = new Interner();
    const withMarker = (i: number, marker: string, cost: string): Pod => {
      const pod = fullPod(i, { marker: false, cost });
      (pod.metadata.annotations as Record<string, string>)[MATCHED_WORKLOADSPREAD_ANNOTATION] = marker;
      return pod;
    };
    const plain = '{"name":"spread","subset":"zone-b"}';
    const a = trimPod(withMarker(1, plain, '100'), pool);
    const b = trimPod(withMarker(2, plain, '100'), pool);
    assert.equal(a.metadata.annotations, b.metadata.annotations);
    assert.ok(Object.isFrozen(a.metadata.annotations));
    assert.deepEqual(a.metadata.annotations, { [MATCHED_WORKLOADSPREAD_ANNOTATION]: plain, [POD_DELETION_COST_ANNOTATION]: '100' });
    assert.deepEqual(readMarker(b), { name: 'spread', subset: 'zone-b' });
    // Another cost, or a marker with a uid: not the same object.
    const c = trimPod(withMarker(3, plain, '200'), pool);
    assert.notEqual(c.metadata.annotations, a.metadata.annotations);
    assert.equal(c.metadata.annotations?.[POD_DELETION_COST_ANNOTATION], '200');
    const own = '{"name":"spread","subset":"zone-a","uid":"u-1"}';
    const d = trimPod(withMarker(4, own, '100'), pool);
    const e = trimPod(withMarker(5, own.replace('u-1', 'u-2'), '100'), pool);
    assert.notEqual(d.metadata.annotations, e.metadata.annotations);
    assert.equal(readMarker(e)?.uid, 'u-2');
  });

  test('the trimmed pod answers every rule like the full pod (property)', () => {
    const arbPod = fc.record({
      i: fc.nat(10_000),
      rs: fc.nat(3),
      node: fc.integer({ min: -1, max: 5 }),
      phase: fc.constantFrom('Pending', 'Running', 'Succeeded', 'Failed', 'Unknown', ''),
      ready: fc.boolean(),
      restarts: fc.nat(5),
      deleting: fc.boolean(),
      scheduledFalse: fc.boolean(),
      cpu: fc.constantFrom(undefined, '100m', '1', '1500m'),
      memory: fc.constantFrom(undefined, '64Mi', '1Gi', '123456'),
      marker: fc.boolean(),
      cost: fc.constantFrom(undefined, '100', '-300', 'junk'),
    });
    fc.assert(
      fc.property(arbPod, arbPod, (o1, o2) => {
        const clean = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
        const p1 = fullPod(o1.i, clean(o1));
        const p2 = fullPod(o2.i + 1, clean(o2));
        const pool = new Interner();
        const t1 = trimPod(p1, pool);
        const t2 = trimPod(p2, pool);
        const now = T0 + 1_000_000;
        assert.equal(isPodActive(t1), isPodActive(p1));
        assert.equal(podVersion(t1), podVersion(p1));
        assert.deepEqual(readMarker(t1), readMarker(p1));
        assert.equal(podDeletionCost(t1), podDeletionCost(p1));
        assert.equal(podReadyTime(t1), podReadyTime(p1));
        assert.equal(isPodUnschedulable(t1), isPodUnschedulable(p1));
        assert.deepEqual(podScheduleFailed(t1, 30, now), podScheduleFailed(p1, 30, now));
        assert.deepEqual(podResourceRequests(t1), podResourceRequests(p1));
        assert.equal(Math.sign(compareActivePods(t1, t2)), Math.sign(compareActivePods(p1, p2)));
      }),
      { numRuns: 300 },
    );
  });

  test('malformed input never throws', () => {
    fc.assert(
      fc.property(fc.anything(), (raw) => {
        const t = trimPod(raw as KubeObject, new Interner());
        assert.equal(t.kind, 'Pod');
      }),
    );
    assert.deepEqual(trimPod({ metadata: { name: 'x', labels: { a: 1 } as never, ownerReferences: [null] as never } }, new Interner()).metadata, { name: 'x' });
  });

  test('the interner stays bounded', () => {
    const pool = new Interner(10);
    for (let i = 0; i < 100; i++) pool.string(`value-${i}`);
    assert.ok(pool.size <= 10);
  });

  test('withoutManagedFields drops only managedFields', () => {
    const obj = { kind: 'ReplicaSet', metadata: { name: 'r', managedFields: [{}], labels: { a: 'b' } }, spec: { replicas: 1 } };
    assert.deepEqual(withoutManagedFields(obj), { kind: 'ReplicaSet', metadata: { name: 'r', labels: { a: 'b' } }, spec: { replicas: 1 } });
    const plain = { kind: 'X', metadata: { name: 'y' } };
    assert.equal(withoutManagedFields(plain), plain);
  });

  test('a pod\'s marker text is held once, however many watch events bring it', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const N = 20_000;
    // Markers with a uid: each is unique to its pod (the memo of parsed markers keeps one per text).
    // Kept as bytes outside the heap, so the heap measures only what the store and the memo hold.
    const raw = Array.from({ length: N }, (_, i) => Buffer.from(JSON.stringify(fullPod(i, { cost: '100' }))));
    const store = new Store<Pod>({ transform: podTransform(new Interner()) });
    indexPodStore(store);
    const heap = (): number => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const empty = heap();
    store.handle({ type: 'init' });
    for (let i = 0; i < N; i++) store.handle({ type: 'initApply', object: JSON.parse(raw[i]!.toString()) as KubeObject });
    store.handle({ type: 'initDone', resourceVersion: '1' });
    const first = (heap() - empty) / N;
    // Every pod's next events: the same marker text, parsed again into a new string each time.
    for (let round = 2; round <= 3; round++) {
      for (let i = 0; i < N; i++) {
        const next = JSON.parse(raw[i]!.toString()) as KubeObject;
        next.metadata!.resourceVersion = String(round * 100_000 + i);
        store.handle({ type: 'apply', object: next });
      }
    }
    const later = (heap() - empty) / N;
    // Read after measuring, so the store is alive when the heap is (an unused one could be collected first).
    assert.equal(store.size, N);
    console.log(`# heap per cached pod after its first event ${first.toFixed(0)} bytes, after its third ${later.toFixed(0)} bytes`);
    // A second copy of a ~90-character marker would cost ~110 bytes per pod.
    assert.ok(later - first < 50, `later events grew the heap by ${(later - first).toFixed(0)} bytes per pod`);
  });

  test('heap per cached pod ≤ 1 KiB, store and indexes included (measured over 20,000 pods)', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const N = 20_000;
    const raw = Array.from({ length: N }, (_, i) => JSON.stringify(fullPod(i, { cpu: '250m', memory: '256Mi', cost: String(100 * ((i % 3) + 1)), restarts: i % 4 })));
    // The real store with the cache's indexes, fed as a relist feeds it.
    const store = new Store<Pod>({ transform: podTransform(new Interner()) });
    indexPodStore(store);
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    store.handle({ type: 'init' });
    for (let i = 0; i < N; i++) store.handle({ type: 'initApply', object: JSON.parse(raw[i]!) as KubeObject });
    store.handle({ type: 'initDone', resourceVersion: '1' });
    gc();
    gc();
    const perPod = (process.memoryUsage().heapUsed - before) / N;
    assert.equal(store.size, N);
    const rawPerPod = raw.reduce((s, r) => s + r.length, 0) / N;
    console.log(`# heap per cached pod: ${perPod.toFixed(0)} bytes (raw JSON ${rawPerPod.toFixed(0)} bytes)`);
    assert.ok(perPod <= 1024, `heap per cached pod is ${perPod.toFixed(0)} bytes, above 1 KiB`);
  });
});
