/**
 * Test support for the admission handlers: AdmissionReview fixtures, an
 * in-memory cluster (`FakeCluster`: a `ClusterView` over plain lists, and the
 * API reads behind it) and an in-memory `GroupCommitStore` with optimistic
 * concurrency, so handler rules are tested without an API server. The
 * end-to-end tests use the real ones. Not used by production code.
 */
import { readFileSync } from 'node:fs';
import { applyPatch } from 'rfc6902';
import type { Clock } from '../clock/clock.ts';
import { EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import type { WhitelistReadError } from '../api/validation.ts';
import type { WorkloadSpread, WorkloadSpreadStatus } from '../api/workloadspread.ts';
import type { ClusterView, ObjectRef, PlacedTally, ReadRequest, RecentPlacement, ViewLookup } from '../core/cluster-view.ts';
import { tallyPods } from '../core/placed-count.ts';
import { requestedOnNode, type NodeRequested } from '../core/simulation-schedule.ts';
import type { PodVersionOptions } from '../core/pod-version.ts';
import { readMarker } from '../core/marker.ts';
import type { EngineEvent } from '../core/events.ts';
import type { Lookup } from '../k8s/lookup.ts';
import { apiVersionGroup } from '../k8s/pod.ts';
import type { KubeObject, Node, Pod } from '../k8s/types.ts';
import { decodePatch, parseAdmissionReview, type AdmissionRequest, type AdmissionResponse } from '../webhook/admission-review.ts';
import { GroupCommit, type GroupCommitStore } from '../webhook/group-commit.ts';
import type { PodAdmissionDeps } from '../webhook/pod-admission-deps.ts';
import { RecentPlacements } from '../webhook/recent-placements.ts';
import type { ApiReads } from '../webhook/view-reads.ts';
import { FresherThanCache } from '../kube/api-reader.ts';

/** A fixture review as raw JSON, to edit before use. */
export function fixtureReview(name: string): { apiVersion: string; kind: string; request: Record<string, unknown> } {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as { apiVersion: string; kind: string; request: Record<string, unknown> };
}

/** Parses a (possibly edited) review; throws when the test built a bad one. */
export function requestOf(review: unknown): AdmissionRequest {
  const parsed = parseAdmissionReview(JSON.stringify(review));
  if (!parsed.ok) throw new Error(`bad test review: ${parsed.message}`);
  return parsed.request;
}

/** The object a patched response produces from the request's raw object. */
export function applyResponse(raw: unknown, response: AdmissionResponse): unknown {
  const target = structuredClone(raw);
  const results = applyPatch(target, decodePatch(response) as Parameters<typeof applyPatch>[1]);
  const failed = results.find((r) => r !== null);
  if (failed) throw new Error(`the response patch does not apply: ${String(failed)}`);
  return target;
}

/**
 * An in-memory cluster for the handlers. As the view, it answers owners from
 * `objects` and pods from `pods` (its "cache"); the target workload in its
 * exact version and pods it does not hold are reads, answered from `objects`
 * (failing with `targetError`) and from `pods` + `uncachedPods` (failing with
 * `freshError`, counted in `freshReads`).
 */
export class FakeCluster implements ClusterView, ApiReads {
  spreads: WorkloadSpread[] = [];
  objects: KubeObject[] = [];
  pods: Pod[] = [];
  nodeList: Node[] = [];
  whitelistValue: Whitelist | WhitelistReadError = EMPTY_WHITELIST;
  targetError: string | undefined;
  wsError: string | undefined;
  /** Pods the API server has but the cache does not show yet; `freshError` fails the read. */
  uncachedPods: Pod[] = [];
  freshError: string | undefined;
  /** API server reads of pods so far. */
  freshReads = 0;
  /** Objects read that the "cache" has not caught up with, across admissions (as the manager's ApiReader keeps them). */
  readonly fresher = new FresherThanCache();

  whitelist(): Whitelist | WhitelistReadError {
    return this.whitelistValue;
  }
  workloadSpreads(namespace: string): readonly WorkloadSpread[] {
    return this.spreads.filter((w) => w.metadata.namespace === namespace);
  }
  workloadSpread(namespace: string, name: string): Lookup<WorkloadSpread> {
    if (this.wsError !== undefined) return { error: this.wsError };
    const ws = this.spreads.find((w) => w.metadata.namespace === namespace && w.metadata.name === name);
    return ws === undefined ? { notFound: true } : { found: ws };
  }
  #object(namespace: string, ref: ObjectRef): KubeObject | undefined {
    const gv = apiVersionGroup(ref.apiVersion);
    return this.objects.find((o) => {
      const og = apiVersionGroup(o.apiVersion ?? '');
      return o.kind === ref.kind && o.metadata?.name === ref.name && (o.metadata?.namespace ?? '') === namespace && og.ok && gv.ok && og.group === gv.group;
    });
  }
  object(namespace: string, ref: ObjectRef, options: { exactVersion?: boolean } = {}): ViewLookup<KubeObject> {
    if (options.exactVersion === true) return { read: { kind: 'object', namespace, ref, exactVersion: true } };
    const found = this.#object(namespace, ref);
    return found === undefined ? { notFound: true } : { found };
  }
  pod(namespace: string, name: string): ViewLookup<Pod> {
    const pod = this.pods.find((p) => p.metadata.namespace === namespace && p.metadata.name === name);
    return pod === undefined ? { read: { kind: 'pod', namespace, name } } : { found: pod };
  }
  nodes(): readonly Node[] {
    return this.nodeList;
  }
  podsOnNode(nodeName: string): readonly Pod[] {
    return this.pods.filter((p) => p.spec?.nodeName === nodeName);
  }
  requestedOnNode(nodeName: string): NodeRequested {
    return requestedOnNode(this.podsOnNode(nodeName));
  }
  placedTally(namespace: string, wsName: string, version: string, options: PodVersionOptions): PlacedTally {
    return tallyPods(this.pods, namespace, wsName, version, options);
  }
  /** Placements admission answered that `pods` does not show yet, per WorkloadSpread uid. */
  recent = new Map<string, RecentPlacement[]>();
  recentPlacements(wsUid: string): readonly RecentPlacement[] {
    return this.recent.get(wsUid) ?? [];
  }
  async read(request: ReadRequest): Promise<Lookup<KubeObject>> {
    if (request.kind === 'pod') {
      this.freshReads++;
      if (this.freshError !== undefined) return { error: this.freshError };
      const pod = [...this.pods, ...this.uncachedPods].find((p) => p.metadata.namespace === request.namespace && p.metadata.name === request.name);
      return pod === undefined ? { notFound: true } : { found: pod };
    }
    if (this.targetError !== undefined) return { error: this.targetError };
    const found = this.#object(request.namespace, request.ref);
    return found === undefined ? { notFound: true } : { found };
  }
}

/** WorkloadSpreads stored in memory with resourceVersions: a stale write conflicts. */
export class MemoryStatusStore implements GroupCommitStore {
  readonly #byKey = new Map<string, WorkloadSpread>();
  #rv = 100;
  writes = 0;
  /** Conflicts to answer before writes succeed again. */
  conflictsToInject = 0;
  /** A non-conflict failure for the next write. */
  failNext: string | undefined;

  constructor(initial: WorkloadSpread[] = []) {
    for (const ws of initial) this.put(ws);
  }

  /** Stores (or replaces) a WorkloadSpread with a fresh resourceVersion; returns the stored copy. */
  put(ws: WorkloadSpread): WorkloadSpread {
    const stored = structuredClone({ ...ws, metadata: { ...ws.metadata, resourceVersion: String(++this.#rv) } });
    this.#byKey.set(`${ws.metadata.namespace ?? ''}/${ws.metadata.name ?? ''}`, stored);
    return stored;
  }

  get(namespace: string, name: string): WorkloadSpread | undefined {
    return this.#byKey.get(`${namespace}/${name}`);
  }

  async withLock<R>(_uid: string, fn: () => Promise<R>): Promise<R> {
    return fn();
  }
  freshest(namespace: string, name: string): WorkloadSpread | undefined {
    return this.get(namespace, name);
  }
  async getFresh(namespace: string, name: string): ReturnType<GroupCommitStore['getFresh']> {
    const ws = this.get(namespace, name);
    return ws === undefined ? { ok: false, reason: 'NotFound', message: 'not found', error: undefined } : { ok: true, ws };
  }
  async writeStatus(ws: WorkloadSpread, status: WorkloadSpreadStatus): ReturnType<GroupCommitStore['writeStatus']> {
    this.writes++;
    if (this.failNext !== undefined) {
      const message = this.failNext;
      this.failNext = undefined;
      return { ok: false, reason: 'Error', message, error: new Error(message) };
    }
    if (this.conflictsToInject > 0) {
      this.conflictsToInject--;
      return { ok: false, reason: 'Conflict', message: 'the object has been modified', error: undefined };
    }
    const current = this.get(ws.metadata.namespace ?? '', ws.metadata.name ?? '');
    if (current === undefined) return { ok: false, reason: 'NotFound', message: 'not found', error: undefined };
    if (current.metadata.resourceVersion !== ws.metadata.resourceVersion) return { ok: false, reason: 'Conflict', message: 'stale resourceVersion', error: undefined };
    return { ok: true, ws: this.put({ ...current, status }) };
  }
}

export interface HandlerBed {
  cluster: FakeCluster;
  store: MemoryStatusStore;
  events: { ws: string; event: EngineEvent }[];
  noSubset: string[];
  deps: PodAdmissionDeps;
}

/** Deps for the pod handlers over a fake cluster and an in-memory status store. */
export function handlerBed(clock: Clock, cluster = new FakeCluster(), store = new MemoryStatusStore()): HandlerBed {
  const events: { ws: string; event: EngineEvent }[] = [];
  const noSubset: string[] = [];
  let uidSeq = 0;
  const deps: PodAdmissionDeps = {
    clock,
    view: cluster,
    reads: cluster,
    commit: new GroupCommit({ clock, store, random: () => 0 }),
    events: { record: (ws, event) => events.push({ ws: ws.metadata.name ?? '', event }) },
    metrics: { noSubsetAvailable: (ns, name) => noSubset.push(`${ns}/${name}`) },
    newUid: () => `uid-${++uidSeq}`,
    recent: new RecentPlacements(clock),
  };
  return { cluster, store, events, noSubset, deps };
}

/**
 * A Deployment → ReplicaSet owner chain for the fixture pods (`web` /
 * `web-5d4f8b7c9` in `shop`). With `current`, the ReplicaSet carries the
 * Deployment's pod template (and selector), so the fixture pods are of the
 * latest version (their birth costs run forward, D21); without it the
 * ReplicaSet has no template and the latest version is not found.
 */
export function deploymentChain(namespace = 'shop', options: { current?: boolean } = {}): KubeObject[] {
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } };
  const hash = '5d4f8b7c9';
  const rsSpec = options.current === true
    ? { replicas: 10, selector: { matchLabels: { app: 'web', 'pod-template-hash': hash } }, template: { metadata: { labels: { app: 'web', 'pod-template-hash': hash } }, spec: template.spec } }
    : { replicas: 10 };
  return [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace, uid: 'deploy-uid-1' }, spec: { replicas: 10, ...(options.current === true ? { selector: { matchLabels: { app: 'web' } } } : {}), template } },
    {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `web-${hash}`,
        namespace,
        uid: 'rs-uid-1',
        ...(options.current === true ? { labels: { app: 'web', 'pod-template-hash': hash } } : {}),
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'deploy-uid-1', controller: true }],
      },
      spec: rsSpec,
    },
  ];
}
