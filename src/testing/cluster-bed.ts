/**
 * Helpers for the embedded cluster's tests (not used by production code):
 * one serving certificate per test file, a cluster on a fresh virtual clock,
 * pod manifests, and reads through the admin client.
 */
import { BUILTIN } from '../client/resources.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { Pod } from '../k8s/types.ts';
import { generateServingCertificate, type ServingCertificate } from '../client/loopback-certificates.ts';
import { startCluster, type ClusterOptions, type EmbeddedCluster } from '../cluster/index.ts';

let certificate: ServingCertificate | undefined;

/** A cluster on a virtual clock starting at 2026-01-01T00:00:00Z, sharing one certificate per process. */
export function testCluster(options: ClusterOptions = {}): Promise<EmbeddedCluster> {
  certificate ??= generateServingCertificate();
  return startCluster({ clock: new VirtualClock(Date.UTC(2026, 0, 1), { realWaitMs: 60_000 }), certificate, ...options });
}

export interface PodManifest {
  name: string;
  namespace?: string;
  cpu?: string;
  memory?: string;
  labels?: Record<string, string>;
  nodeName?: string;
  spec?: Record<string, unknown>;
  ownerReferences?: unknown[];
}

export function podManifest(m: PodManifest): Pod {
  const container: Record<string, unknown> = { name: 'app', image: 'nginx:1.25' };
  const requests: Record<string, string> = {};
  if (m.cpu !== undefined) requests['cpu'] = m.cpu;
  if (m.memory !== undefined) requests['memory'] = m.memory;
  if (Object.keys(requests).length > 0) container['resources'] = { requests };
  const spec: Record<string, unknown> = { containers: [container], ...(m.spec ?? {}) };
  if (m.nodeName !== undefined) spec['nodeName'] = m.nodeName;
  const metadata: Record<string, unknown> = { name: m.name, namespace: m.namespace ?? 'default', labels: m.labels ?? {} };
  if (m.ownerReferences !== undefined) metadata['ownerReferences'] = m.ownerReferences;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec } as Pod;
}

export async function createPods(c: EmbeddedCluster, pods: PodManifest[]): Promise<void> {
  for (const m of pods) await c.client.create(BUILTIN.pods, podManifest(m));
}

export async function getPod(c: EmbeddedCluster, name: string, namespace = 'default'): Promise<Pod | undefined> {
  try {
    return await c.client.get<Pod>(BUILTIN.pods, name, { namespace });
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

export async function listPods(c: EmbeddedCluster, namespace = 'default'): Promise<Pod[]> {
  return (await c.client.list<Pod>(BUILTIN.pods, { namespace })).items;
}

/** node name → pod names on it (sorted), for assertions. */
export async function placement(c: EmbeddedCluster, namespace = 'default'): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const p of await listPods(c, namespace)) {
    const node = p.spec.nodeName ?? '<none>';
    (out[node] ??= []).push(p.metadata.name ?? '');
  }
  for (const list of Object.values(out)) list.sort();
  return out;
}

export interface EventSummary {
  reason: string;
  type: string;
  note: string;
  regarding: string;
  count: number;
  controller: string;
}

export async function events(c: EmbeddedCluster, namespace = 'default'): Promise<EventSummary[]> {
  const list = await c.client.list<Record<string, unknown>>(BUILTIN.eventsV1, { namespace });
  return list.items.map((e) => ({
    reason: String(e['reason'] ?? ''),
    type: String(e['type'] ?? ''),
    note: String(e['note'] ?? ''),
    regarding: String((e['regarding'] as { name?: string } | undefined)?.name ?? ''),
    count: Number((e['series'] as { count?: number } | undefined)?.count ?? 1),
    controller: String(e['reportingController'] ?? ''),
  }));
}

export function condition(pod: Pod | undefined, type: string): { status?: string; reason?: string; message?: string } | undefined {
  return pod?.status?.conditions?.find((c) => c.type === type);
}
