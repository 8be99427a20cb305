/**
 * Test support for the workload controllers (not used by production code):
 * the embedded API server on a virtual clock with a client, namespaces, and a
 * stand-in for the kubelet — `PodStarter` marks pods Running and Ready after
 * a delay on the clock (optionally only some of them), so controller tests do
 * not depend on the scheduler/kubelet of the full cluster harness.
 * Everything goes through HTTP, like the components under test.
 */
import type { VirtualClock } from '../clock/virtual-clock.ts';
import type { KubeClient } from '../client/http-client.ts';
import { BUILTIN } from '../client/resources.ts';
import { Informer } from '../client/store.ts';
import { isPodReady } from '../k8s/pod.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { startClientTestBed, type ClientTestBed } from './client-test-bed.ts';
import type { ServingCertificate } from '../client/loopback-certificates.ts';

export async function startControllerTestBed(clock: VirtualClock, certificate: ServingCertificate): Promise<ClientTestBed> {
  return startClientTestBed(clock, certificate, { client: { userAgent: 'controller-test' } });
}

let namespaceSeq = 0;

/** A fresh namespace, created through the test client. */
export async function freshNamespace(client: KubeClient, prefix = 'ns'): Promise<string> {
  const name = `${prefix}-${++namespaceSeq}`;
  await client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

export interface PodStarterOptions {
  /** Virtual ms between a pod's creation being seen and it becoming Ready (default 1000). */
  readyAfterMs?: number;
  /** Only pods for which this returns true are started (default all). */
  filter?: (pod: Pod) => boolean;
}

/** Marks pods Running + Ready, the part of a kubelet the workload controllers care about. */
export class PodStarter {
  readonly informer: Informer<Pod>;
  readonly #client: KubeClient;
  readonly #clock: VirtualClock;
  readonly #options: PodStarterOptions;
  readonly #pending = new Set<string>();
  readonly #timers: { cancel(): void }[] = [];

  constructor(client: KubeClient, clock: VirtualClock, options: PodStarterOptions = {}) {
    this.#client = client;
    this.#clock = clock;
    this.#options = options;
    this.informer = new Informer<Pod>({ client, ref: BUILTIN.pods, resyncMs: 0, name: 'pod-starter' });
    this.informer.store.onAdd((p) => this.#consider(p));
    this.informer.store.onUpdate((_old, p) => this.#consider(p));
    this.informer.start();
  }

  #consider(pod: Pod): void {
    const key = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
    if (isPodReady(pod) || pod.metadata?.deletionTimestamp !== undefined || this.#pending.has(key)) return;
    if (this.#options.filter !== undefined && !this.#options.filter(pod)) return;
    this.#pending.add(key);
    this.#timers.push(
      this.#clock.setTimeout(async () => {
        this.#pending.delete(key);
        await markPodReady(this.#client, pod, this.#clock.now()).catch(() => undefined);
      }, this.#options.readyAfterMs ?? 1000, { name: `start ${key}` }),
    );
  }

  async stop(): Promise<void> {
    for (const t of this.#timers) t.cancel();
    await this.informer.stop();
  }
}

/** Running and Ready since `at`, through the status subresource. */
export function markPodReady(client: KubeClient, pod: KubeObject, at: number, extra: { restartCount?: number } = {}): Promise<unknown> {
  const since = formatTime(at);
  const containers = ((pod['spec'] as { containers?: { name?: string }[] } | undefined)?.containers ?? []).map((c) => ({
    name: c.name ?? 'c',
    ready: true,
    restartCount: extra.restartCount ?? 0,
    image: 'image',
    imageID: '',
    started: true,
    state: { running: { startedAt: since } },
  }));
  const status = {
    phase: 'Running',
    startTime: since,
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: since },
      { type: 'Initialized', status: 'True', lastTransitionTime: since },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: since },
      { type: 'Ready', status: 'True', lastTransitionTime: since },
    ],
    containerStatuses: containers,
  };
  return client.patchStatus(BUILTIN.pods, pod.metadata?.name ?? '', { type: 'merge', body: { status } }, { namespace: pod.metadata?.namespace ?? '' });
}

/** A minimal pod template with the given labels. */
export function podTemplate(labels: Record<string, string>, extra: { annotations?: Record<string, string>; image?: string } = {}): Record<string, unknown> {
  const metadata: Record<string, unknown> = { labels };
  if (extra.annotations !== undefined) metadata['annotations'] = extra.annotations;
  return { metadata, spec: { containers: [{ name: 'app', image: extra.image ?? 'nginx:1.25' }] } };
}
