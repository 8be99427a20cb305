/**
 * Test support for the controller: the kube layer and a running
 * `WorkloadSpreadController` wired against an API server, plus builders for
 * workloads and placed pods (created directly, as the admission webhook
 * would have left them). Not used by production code.
 */
import assert from 'node:assert/strict';
import { MATCHED_WORKLOADSPREAD_ANNOTATION } from '../api/keys.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { VirtualClock } from '../clock/virtual-clock.ts';
import type { KubeClient } from '../client/http-client.ts';
import type { Logger } from '../client/logger.ts';
import { formatMarker } from '../core/marker.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, OwnerReference, Pod } from '../k8s/types.ts';
import { ManagerCaches } from '../kube/caches.ts';
import { createEventRecorder, CONTROLLER_COMPONENT, EngineEventSink } from '../kube/events.ts';
import { PodWriter } from '../kube/pod-writer.ts';
import { StatusWriter } from '../kube/status-writer.ts';
import { WorkloadResolver } from '../kube/workload-resolver.ts';
import { WorkloadSpreadState } from '../kube/ws-state.ts';
import type { ClientTestBed } from './client-test-bed.ts';
import { WorkloadSpreadController, type ControllerMetrics } from '../controller/controller.ts';

export interface RunningController {
  caches: ManagerCaches;
  resolver: WorkloadResolver;
  state: WorkloadSpreadState;
  statusWriter: StatusWriter;
  controller: WorkloadSpreadController;
  events: EngineEventSink;
  stop(): Promise<void>;
}

export async function startController(
  client: KubeClient,
  options: { namespace: string; workers?: number; recoverySeconds?: number; metrics?: ControllerMetrics; log?: Logger; resyncMs?: number } ,
): Promise<RunningController> {
  const log = options.log;
  const caches = new ManagerCaches({ client, namespace: options.namespace, freeze: true, ...(log === undefined ? {} : { log }) });
  const resolver = new WorkloadResolver({ caches });
  const state = new WorkloadSpreadState();
  const statusWriter = new StatusWriter({ client, state });
  const events = new EngineEventSink(createEventRecorder(client, CONTROLLER_COMPONENT, 'test-0'));
  const controller = new WorkloadSpreadController({
    caches,
    resolver,
    state,
    statusWriter,
    podWriter: new PodWriter(client),
    events,
    clock: client.clock,
    ...(options.workers === undefined ? {} : { workers: options.workers }),
    ...(options.recoverySeconds === undefined ? {} : { recoverySeconds: options.recoverySeconds }),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs }),
    ...(log === undefined ? {} : { log }),
  });
  caches.start();
  await controller.start();
  return {
    caches,
    resolver,
    state,
    statusWriter,
    controller,
    events,
    stop: async () => {
      await controller.stop();
      await events.flush();
      await caches.stop();
    },
  };
}

export function ownerRef(obj: KubeObject): OwnerReference {
  return { apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '', name: obj.metadata?.name ?? '', uid: obj.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

const TEMPLATE_SPEC = { containers: [{ name: 'main', image: 'nginx' }] };

export function deploymentObject(ns: string, name: string, replicas: number, image = 'nginx'): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, annotations: { 'deployment.kubernetes.io/revision': '1' } },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } } },
  };
}

/** A ReplicaSet of `owner` (a Deployment) with the pod-template-hash `hash`; its template equals the Deployment's when `image` does. */
export function replicaSetObject(ns: string, owner: KubeObject, hash: string, replicas: number, image = 'nginx'): KubeObject {
  const app = owner.metadata?.name ?? '';
  const labels = { app, 'pod-template-hash': hash };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: `${app}-${hash}`, namespace: ns, labels, ownerReferences: [ownerRef(owner)] },
    spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'main', image }] } } },
  };
}

export interface PlacedPod {
  name: string;
  owner: KubeObject;
  /** The WorkloadSpread and subset of the marker; omitted: no marker. */
  ws?: string;
  subset?: string;
  node?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Running+Ready since this time (default: Running+Ready now); 'pending' leaves it Pending. */
  readyAt?: number | 'pending' | 'unschedulable';
  tolerations?: unknown[];
}

/** Creates a pod (as the webhook would have placed it) and sets its status. */
export async function createPod(bed: ClientTestBed, clock: VirtualClock, ns: string, p: PlacedPod): Promise<Pod> {
  const annotations: Record<string, string> = { ...(p.annotations ?? {}) };
  if (p.ws !== undefined) annotations[MATCHED_WORKLOADSPREAD_ANNOTATION] = formatMarker({ name: p.ws, subset: p.subset ?? '' });
  const labels = { ...(p.owner.metadata?.labels ?? {}), ...(p.labels ?? {}) };
  if (p.owner.kind === 'ReplicaSet') Object.assign(labels, (p.owner['spec'] as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels);
  const created = await bed.server.control.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: p.name, namespace: ns, labels, annotations, ownerReferences: [ownerRef(p.owner)] },
    spec: { ...TEMPLATE_SPEC, ...(p.node === undefined ? {} : { nodeName: p.node }), ...(p.tolerations === undefined ? {} : { tolerations: p.tolerations }) },
  });
  assert.ok(created.ok, `create pod ${p.name}: ${JSON.stringify(!created.ok && created.status)}`);
  const readyAt = p.readyAt ?? clock.now();
  let status: Record<string, unknown>;
  if (readyAt === 'pending') status = { phase: 'Pending' };
  else if (readyAt === 'unschedulable') status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: formatTime(clock.now()) }] };
  else status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: formatTime(readyAt) }, { type: 'PodScheduled', status: 'True' }] };
  const patched = await bed.server.control.patch('v1', 'Pod', ns, p.name, 'application/merge-patch+json', { status }, { subresource: 'status' });
  assert.ok(patched.ok, JSON.stringify(!patched.ok && patched.status));
  return patched.value.object as Pod;
}

export function getWs(bed: ClientTestBed, ns: string, name: string): WorkloadSpread {
  const r = bed.server.control.get('apps.kruise.io/v1alpha1', 'WorkloadSpread', ns, name);
  assert.ok(r.ok, `get WorkloadSpread ${ns}/${name}`);
  return r.value as unknown as WorkloadSpread;
}

export function listPods(bed: ClientTestBed, ns: string): Pod[] {
  const r = bed.server.control.list('v1', 'Pod', ns);
  assert.ok(r.ok);
  return (r.value.items as Pod[]).sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

/** Deletion costs by pod name ('' when absent). */
export function costs(bed: ClientTestBed, ns: string): Record<string, string> {
  return Object.fromEntries(listPods(bed, ns).map((p) => [p.metadata.name ?? '', p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'] ?? '']));
}

/** Events (events.k8s.io/v1) of a namespace as `reason: note`. */
export function eventNotes(bed: ClientTestBed, ns: string): string[] {
  const r = bed.server.control.list('events.k8s.io/v1', 'Event', ns);
  assert.ok(r.ok);
  return r.value.items.map((e) => `${String(e['reason'])}: ${String(e['note'])}`);
}

/** `name replicas/missing` per top-level subset status. */
export function subsetSummary(ws: WorkloadSpread): string[] {
  return (ws.status?.subsetStatuses ?? []).map((s) => `${s.name} ${s.replicas}/${s.missingReplicas}`);
}
