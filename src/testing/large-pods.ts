/**
 * Test support for admission of very large pods (the starvation findings):
 * pod shapes of any size (node selector terms, tolerations, containers, env
 * entries), a real manager on the embedded cluster on the REAL clock (so a
 * stalled event loop costs it its lease, as in production), a target
 * ReplicaSet with a WorkloadSpread whose subsets add a required term and a
 * toleration to every pod, AdmissionReviews sent straight to the webhook
 * port, and a prober that times `/healthz` while they are served. Used by
 * the large-pod test and bench/admission-large-pods.ts. Not used by
 * production code.
 */
import { request, type Agent } from 'node:https';
import { get } from 'node:http';
import { workloadSpreadCrd } from '../api/crd.ts';
import { realClock, type Clock } from '../clock/clock.ts';
import { memoryLogger, type MemoryLogger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import { startCluster, type EmbeddedCluster } from '../cluster/index.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { startManager, type Manager } from '../manager/manager.ts';
import { MANAGER_NAMESPACE, ZONE_LABEL, ZONED_NODES } from './webhook-bed.ts';

export interface PodShape {
  /** Required node selector terms of the pod's own affinity (each gets the subset's term ANDed in). */
  terms: number;
  tolerations: number;
  containers?: number;
  /** Env entries per container. */
  env?: number;
}

/** A pod of the given shape, owned by `owner` (a ReplicaSet). */
export function largePod(shape: PodShape, owner: KubeObject, name: string): Pod {
  const containers = Array.from({ length: Math.max(1, shape.containers ?? 1) }, (_, c) => ({
    name: `c${c}`,
    image: 'registry.example/app:1.0',
    env: Array.from({ length: shape.env ?? 0 }, (_, e) => ({ name: `VAR_${c}_${e}`, value: `value-${e}` })),
    resources: { requests: { cpu: '10m', memory: '16Mi' } },
  }));
  const spec: Record<string, unknown> = { containers };
  if (shape.tolerations > 0) spec['tolerations'] = Array.from({ length: shape.tolerations }, (_, i) => ({ key: `example.com/t${i}`, operator: 'Exists', effect: 'NoSchedule' }));
  if (shape.terms > 0) {
    spec['affinity'] = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: Array.from({ length: shape.terms }, (_, i) => ({ matchExpressions: [{ key: `example.com/rack-${i}`, operator: 'DoesNotExist' }] })),
        },
      },
    };
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: owner.metadata?.namespace ?? '',
      labels: { app: 'big' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: spec as Pod['spec'],
  };
}

/** The body of a pod CREATE AdmissionReview, as the API server sends it. */
export function createReviewBody(pod: Pod, uid: string): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: pod.metadata.name ?? '',
      namespace: pod.metadata.namespace ?? '',
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  });
}

export interface ReviewAnswer {
  status: number;
  allowed: boolean;
  /** The JSON Patch operations of the answer. */
  patch: { op: string; path: string; value?: unknown }[];
  message: string;
  ms: number;
}

/** POSTs a review body to `url` (no client certificate) and reads the answer. */
export function postReview(url: string, body: string, agent?: Agent): Promise<ReviewAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', rejectUnauthorized: false, ...(agent === undefined ? { agent: false } : { agent }), headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const ms = performance.now() - started;
        try {
          const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { response?: { allowed?: boolean; patch?: string; status?: { message?: string } } };
          const r = review.response ?? {};
          const patch = r.patch === undefined ? [] : (JSON.parse(Buffer.from(r.patch, 'base64').toString('utf8')) as ReviewAnswer['patch']);
          resolve({ status: res.statusCode ?? 0, allowed: r.allowed === true, patch, message: r.status?.message ?? '', ms });
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Times GET requests to a health URL, one after the other with `gapMs` between them, until stopped. */
export class HealthProber {
  readonly latencies: number[] = [];
  readonly failures: string[] = [];
  #stopped = false;
  readonly #done: Promise<void>;

  constructor(url: string, clock: Clock, gapMs = 10) {
    this.#done = (async () => {
      while (!this.#stopped) {
        const started = performance.now();
        try {
          const code = await new Promise<number>((resolve, reject) => {
            const req = get(url, { agent: false }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            });
            req.on('error', reject);
          });
          if (code !== 200) this.failures.push(`HTTP ${code}`);
          else this.latencies.push(performance.now() - started);
        } catch (err) {
          this.failures.push(err instanceof Error ? err.message : String(err));
        }
        await clock.sleep(gapMs);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#done;
  }
}

export interface LargePodBed {
  cluster: EmbeddedCluster;
  manager: Manager;
  log: MemoryLogger;
  /** The ReplicaSet the pods are owned by (replicas 0: no controller makes pods of its own). */
  owner: KubeObject;
  /** `<webhook url>/mutate-pod`. */
  mutateUrl: string;
  healthUrl: string;
  /** Who holds the manager's Lease now. */
  leaseHolder(): Promise<string>;
  stop(): Promise<void>;
}

export const LARGE_POD_NAMESPACE = 'big';

/**
 * The embedded cluster and one manager, both on the real clock, with leader
 * election at controller-runtime's timings (lease 15 s, renew deadline 10 s,
 * retry 2 s), and a WorkloadSpread over ReplicaSet `big` whose subset `a`
 * (zone a, max 1,000,000) adds a required term and a toleration to every pod.
 */
export async function startLargePodBed(): Promise<LargePodBed> {
  const clock = realClock();
  const cluster = await startCluster({ clock, certificate: generateServingCertificate(), nodes: ZONED_NODES, controllers: [] });
  const log = memoryLogger();
  let manager: Manager | undefined;
  try {
    const crd = await cluster.apiServer.control.create(workloadSpreadCrd() as KubeObject);
    if (!crd.ok) throw new Error(`CRD: ${JSON.stringify(crd.status)}`);
    for (const name of [MANAGER_NAMESPACE, LARGE_POD_NAMESPACE]) await cluster.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const owner = await cluster.client.create(BUILTIN.replicasets, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'big', namespace: LARGE_POD_NAMESPACE },
      spec: { replicas: 0, selector: { matchLabels: { app: 'big' } }, template: { metadata: { labels: { app: 'big' } }, spec: { containers: [{ name: 'c0', image: 'registry.example/app:1.0' }] } } },
    });
    await cluster.client.create(WORKLOADSPREAD_REF, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'WorkloadSpread',
      metadata: { name: 'spread', namespace: LARGE_POD_NAMESPACE },
      spec: {
        targetRef: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'big' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE_LABEL, operator: 'In', values: ['a'] }] }, tolerations: [{ key: 'pool', operator: 'Equal', value: 'a', effect: 'NoSchedule' }], maxReplicas: 1_000_000 },
          { name: 'b', requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE_LABEL, operator: 'In', values: ['b'] }] } },
        ],
      },
    });
    const client = await cluster.newClient('workloadspread-manager/large-pods');
    const started = startManager({
      client,
      clock,
      namespace: MANAGER_NAMESPACE,
      identity: 'large-pods',
      log,
      healthAddress: { host: '127.0.0.1', port: 0 },
      leaderElection: { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
      webhook: { host: '127.0.0.1', port: 0, register: false, url: (own) => own },
    });
    manager = started;
    await started.ready;
    const deadline = performance.now() + 60_000;
    while (!started.isLeader()) {
      if (performance.now() > deadline) throw new Error('the manager did not become the leader within 60 s');
      await clock.sleep(50);
    }
    const endpoints = started.endpoints();
    const leased = await cluster.client.list<KubeObject>(BUILTIN.leases, { namespace: MANAGER_NAMESPACE });
    const leaseName = leased.items[0]?.metadata?.name ?? '';
    return {
      cluster,
      manager: started,
      log,
      owner,
      mutateUrl: `${endpoints.webhook ?? ''}/mutate-pod`,
      healthUrl: `${endpoints.health ?? ''}/healthz`,
      leaseHolder: async () => {
        const lease = await cluster.client.get<KubeObject & { spec?: { holderIdentity?: string } }>(BUILTIN.leases, leaseName, { namespace: MANAGER_NAMESPACE });
        return lease.spec?.holderIdentity ?? '';
      },
      stop: async () => {
        await started.stop();
        await cluster.stop();
      },
    };
  } catch (err) {
    await manager?.stop();
    await cluster.stop();
    throw err;
  }
}
