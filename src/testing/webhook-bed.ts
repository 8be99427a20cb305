/**
 * Test support for the webhook's end-to-end tests: the embedded cluster on a
 * virtual clock with the WorkloadSpread CRD, and the real admission webhook
 * in front of it — the manager's caches and kube layer, certificates
 * generated into a Secret, an HTTPS server on loopback, and the webhook
 * configurations registered with a `--webhook-url`-style URL and the CA in
 * their caBundle — exactly the path the manager takes, minus the controller.
 * Not used by production code.
 */
import assert from 'node:assert/strict';
import { workloadSpreadCrd } from '../api/crd.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { KubeClient } from '../client/http-client.ts';
import type { Logger } from '../client/logger.ts';
import { BUILTIN, refForKind, type ResourceRef } from '../client/resources.ts';
import { generateServingCertificate, type ServingCertificate } from '../client/loopback-certificates.ts';
import { startCluster, type ClusterOptions, type EmbeddedCluster, type ControllerFactory, defaultControllers } from '../cluster/index.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { ManagerCaches } from '../kube/caches.ts';
import { createEventRecorder, EngineEventSink, WEBHOOK_COMPONENT } from '../kube/events.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { StatusWriter } from '../kube/status-writer.ts';
import { WorkloadResolver } from '../kube/workload-resolver.ts';
import { WorkloadSpreadState } from '../kube/ws-state.ts';
import { SecretCertificates, servingNames } from '../webhook/certs.ts';
import { webhookFromKube, type KubeWebhook } from '../webhook/kube-sources.ts';
import type { WebhookMetrics } from '../webhook/metrics.ts';
import { MUTATING_CONFIGURATION_NAME, registerWebhooks, VALIDATING_CONFIGURATION_NAME, webhookConfigurations } from '../webhook/registration.ts';
import { startWebhookServer, type WebhookServer } from '../webhook/server.ts';

export const MANAGER_NAMESPACE = 'workloadspread-system';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

let certificate: ServingCertificate | undefined;

export interface WebhookReplica {
  client: KubeClient;
  caches: ManagerCaches;
  resolver: WorkloadResolver;
  state: WorkloadSpreadState;
  writer: StatusWriter;
  events: EngineEventSink;
  webhook: KubeWebhook;
  certificates: SecretCertificates;
  server: WebhookServer;
  stop(): Promise<void>;
}

/** One manager replica's webhook half, serving on loopback; registers the configurations when asked. */
export async function startWebhookReplica(cluster: EmbeddedCluster, options: { register?: boolean; metrics?: WebhookMetrics; log?: Logger; name?: string } = {}): Promise<WebhookReplica> {
  const client = await cluster.newClient(`workloadspread-webhook/${options.name ?? 'test-0'}`);
  const clock = cluster.clock;
  const log = options.log;
  const caches = new ManagerCaches({ client, namespace: MANAGER_NAMESPACE, ...(log === undefined ? {} : { log }) });
  const resolver = new WorkloadResolver({ caches });
  const state = new WorkloadSpreadState();
  const writer = new StatusWriter({ client, state });
  const events = new EngineEventSink(createEventRecorder(client, WEBHOOK_COMPONENT, options.name ?? 'test-0'));
  caches.start();
  await caches.waitForSync();
  const certificates = new SecretCertificates({
    client,
    clock,
    namespace: MANAGER_NAMESPACE,
    names: servingNames({ webhookUrl: 'https://127.0.0.1' }),
    mutatingConfigurations: [MUTATING_CONFIGURATION_NAME],
    validatingConfigurations: [VALIDATING_CONFIGURATION_NAME],
  });
  await certificates.start();
  const webhook = webhookFromKube({ clock, caches, writer, events, ...(options.metrics === undefined ? {} : { metrics: options.metrics }), ...(log === undefined ? {} : { log }) });
  const server = await startWebhookServer({ clock, host: '127.0.0.1', port: 0, certificates, handlers: webhook.handlers, ...(options.metrics === undefined ? {} : { metrics: options.metrics }) });
  if (options.register !== false) {
    await registerWebhooks(client, webhookConfigurations({ managerNamespace: MANAGER_NAMESPACE, endpoint: { url: server.url }, caBundle: certificates.caBundle() ?? '' }));
  }
  return {
    client,
    caches,
    resolver,
    state,
    writer,
    events,
    webhook,
    certificates,
    server,
    stop: async () => {
      certificates.stop();
      await server.close(1_000);
      await events.flush();
      await caches.stop();
    },
  };
}

export interface WebhookCluster {
  cluster: EmbeddedCluster;
  clock: VirtualClock;
  replica: WebhookReplica;
  /** A fresh namespace for one test. */
  namespace(prefix?: string): Promise<string>;
  stop(): Promise<void>;
}

/** Six nodes, two per zone a/b/c, 4 CPU and 110 pods each unless `options.nodes` says otherwise. */
export const ZONED_NODES = ['a', 'b', 'c'].flatMap((z) => [1, 2].map((i) => ({ name: `${z}${i}`, labels: { [ZONE_LABEL]: z } })));

/** The control loops of the webhook and manager beds: the cluster's defaults, which hold every workload controller. */
export function workloadControllers(): ControllerFactory[] {
  return defaultControllers();
}

export async function startWebhookCluster(options: ClusterOptions = {}): Promise<WebhookCluster> {
  certificate ??= generateServingCertificate();
  const clock = new VirtualClock(Date.UTC(2026, 0, 1), { realWaitMs: 60_000 });
  const cluster = await startCluster({ clock, certificate, nodes: ZONED_NODES, controllers: workloadControllers(), ...options });
  try {
    const crd = await cluster.apiServer.control.create(workloadSpreadCrd() as KubeObject);
    assert.ok(crd.ok, JSON.stringify(!crd.ok && crd.status));
    const ns = await cluster.apiServer.control.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: MANAGER_NAMESPACE } });
    assert.ok(ns.ok, JSON.stringify(!ns.ok && ns.status));
    await clock.quiesce();
    const replica = await startWebhookReplica(cluster);
    let seq = 0;
    return {
      cluster,
      clock,
      replica,
      namespace: async (prefix = 'e2e') => {
        const name = `${prefix}-${++seq}`;
        await cluster.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
        await clock.quiesce();
        return name;
      },
      stop: async () => {
        await replica.stop();
        await cluster.stop();
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

// ---- objects and reads ----

export function deployment(namespace: string, name: string, replicas: number, template: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '10m' } } }], ...template } },
    },
  };
}

export function workloadSpreadObject(namespace: string, name: string, spec: WorkloadSpread['spec']): KubeObject {
  return { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name, namespace }, spec };
}

export function zoneTerm(zone: string): { matchExpressions: { key: string; operator: string; values: string[] }[] } {
  return { matchExpressions: [{ key: ZONE_LABEL, operator: 'In', values: [zone] }] };
}

export async function podsOf(client: KubeClient, namespace: string): Promise<Pod[]> {
  return (await client.list<Pod>(BUILTIN.pods, { namespace })).items.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

export async function readSpread(client: KubeClient, namespace: string, name: string): Promise<WorkloadSpread> {
  return client.get<WorkloadSpread>(WORKLOADSPREAD_REF, name, { namespace });
}

const MARKER = 'apps.kruise.io/matched-workloadspread';

/** The subset of each pod by its marker ('' for none). */
export function subsetOf(pod: Pod): string {
  const raw = pod.metadata.annotations?.[MARKER];
  if (raw === undefined) return '';
  try {
    return String((JSON.parse(raw) as { subset?: string }).subset ?? '');
  } catch {
    return '';
  }
}

/** Pod counts per subset (active pods only), e.g. `{ a: 2, b: 3, '': 1 }`. */
export function countBySubset(pods: readonly Pod[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of pods) {
    if (p.metadata.deletionTimestamp !== undefined) continue;
    const s = subsetOf(p);
    out[s] = (out[s] ?? 0) + 1;
  }
  return out;
}

/** The REST ref of a built-in object used by the tests. */
export function refOf(obj: KubeObject): ResourceRef {
  const ref = refForKind(obj.apiVersion ?? '', obj.kind ?? '');
  if (ref === undefined) throw new Error(`no ref for ${obj.apiVersion ?? ''}/${obj.kind ?? ''}`);
  return ref;
}

/** Creates an object through the admin client (so every webhook sees it) and lets the cluster react. */
export async function createObject(env: WebhookCluster, obj: KubeObject, ref: ResourceRef = refOf(obj)): Promise<KubeObject> {
  const created = await env.cluster.client.create(ref, obj);
  await env.clock.quiesce();
  return created;
}

/**
 * A pod controlled directly by a Deployment object — a supported owner a
 * WorkloadSpread can target, and one no controller creates or deletes pods for,
 * so a test decides exactly which pods exist.
 */
export function ownedPod(namespace: string, owner: KubeObject, name: string, extra: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { app: owner.metadata?.name ?? '' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '', controller: true }],
    },
    spec: { containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '10m' } } }], ...extra },
  };
}
