/**
 * The webhook's side of core's "read first" answers (core/cluster-view.ts):
 * `ReadThroughView` is the cache view of one admission plus what was read
 * from the API server for it, and `settle` runs a decision until it needs no
 * read — making each read the decision names, once.
 *
 * A view lives for one admission request, so a read made for the budgets of
 * an eviction also answers its bookkeeping, and a read made before the group
 * commit also answers the decision taken under it.
 */
import type { ClusterView, ObjectRef, ReadRequest, RecentPlacement, ViewLookup } from '../core/cluster-view.ts';
import type { Lookup } from '../k8s/lookup.ts';
import { apiVersionGroup } from '../k8s/pod.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import type { FresherThanCache } from '../kube/api-reader.ts';

/** What makes the reads (kube/api-reader.ts in the manager). */
export interface ApiReads {
  read(request: ReadRequest): Promise<Lookup<KubeObject>>;
  /**
   * Objects read from the API server that are newer than the cache's copy,
   * remembered across admissions until the cache moves (`FresherThanCache`):
   * the pods of a scale-out the cache has not seen are decided on the count
   * one of them read, without a read each.
   */
  fresher?: FresherThanCache;
}

/**
 * Reads one decision may need: an owner chain (real ones have 2–3 links), the
 * target, a CloneSet, a pod. More means the view keeps asking for what it was
 * given — a bug, reported instead of looping.
 */
const MAX_READS = 24;

function objectKey(namespace: string, ref: ObjectRef, exactVersion: boolean): string {
  const gv = apiVersionGroup(ref.apiVersion);
  const group = gv.ok ? gv.group : ref.apiVersion;
  return ['object', namespace, group, ref.kind, ref.name, exactVersion ? ref.apiVersion : ''].join('\u0000');
}

function readKey(request: ReadRequest): string {
  return request.kind === 'pod' ? ['pod', request.namespace, request.name].join('\u0000') : objectKey(request.namespace, request.ref, request.exactVersion);
}

export class ReadThroughView implements ClusterView {
  readonly #base: ClusterView;
  readonly #reads: ApiReads;
  readonly #done = new Map<string, Lookup<KubeObject>>();
  /** Reads made so far (diagnostics, tests). */
  count = 0;

  readonly #recent: ((wsUid: string) => readonly RecentPlacement[]) | undefined;

  /** `recent`: the placements this process's admission answered (webhook/recent-placements.ts). */
  constructor(base: ClusterView, reads: ApiReads, recent?: (wsUid: string) => readonly RecentPlacement[]) {
    this.#base = base;
    this.#reads = reads;
    this.#recent = recent;
  }

  /** Makes a read and keeps its answer for the rest of this admission. */
  async read(request: ReadRequest): Promise<void> {
    const key = readKey(request);
    if (this.#done.has(key)) return;
    this.count++;
    const answer = await this.#reads.read(request);
    this.#done.set(key, answer);
    if (request.kind === 'object' && 'found' in answer && this.#reads.fresher !== undefined) {
      const cached = this.#base.object(request.namespace, request.ref, { exactVersion: request.exactVersion });
      this.#reads.fresher.remember(key, answer.found, 'found' in cached ? cached.found : undefined);
    }
  }

  whitelist(): ReturnType<ClusterView['whitelist']> {
    return this.#base.whitelist();
  }

  workloadSpreads(namespace: string): ReturnType<ClusterView['workloadSpreads']> {
    return this.#base.workloadSpreads(namespace);
  }

  workloadSpread(namespace: string, name: string): ReturnType<ClusterView['workloadSpread']> {
    return this.#base.workloadSpread(namespace, name);
  }

  object(namespace: string, ref: ObjectRef, options: { exactVersion?: boolean } = {}): ViewLookup<KubeObject> {
    const key = objectKey(namespace, ref, options.exactVersion === true);
    const done = this.#done.get(key);
    if (done !== undefined) return done;
    const cached = this.#base.object(namespace, ref, options);
    const fresher = this.#reads.fresher?.get(key, 'found' in cached ? cached.found : undefined);
    return fresher === undefined ? cached : { found: fresher };
  }

  freshObject(namespace: string, ref: ObjectRef, options: { exactVersion?: boolean; thisDecision?: boolean } = {}): ViewLookup<KubeObject> {
    const exactVersion = options.exactVersion === true;
    const key = objectKey(namespace, ref, exactVersion);
    const done = this.#done.get(key);
    if (done !== undefined) return done;
    if (options.thisDecision === true) return { read: { kind: 'object', namespace, ref, exactVersion } };
    // Read already by another admission, and the cache has not moved since: that read is as fresh as the cache.
    const base = this.#base.object(namespace, ref, { exactVersion });
    const fresher = this.#reads.fresher?.get(key, 'found' in base ? base.found : undefined);
    return fresher === undefined ? { read: { kind: 'object', namespace, ref, exactVersion } } : { found: fresher };
  }

  pod(namespace: string, name: string): ViewLookup<Pod> {
    return (this.#done.get(readKey({ kind: 'pod', namespace, name })) as Lookup<Pod> | undefined) ?? this.#base.pod(namespace, name);
  }

  freshPod(namespace: string, name: string): ViewLookup<Pod> {
    const request: ReadRequest = { kind: 'pod', namespace, name };
    return (this.#done.get(readKey(request)) as Lookup<Pod> | undefined) ?? { read: request };
  }

  nodes(): ReturnType<ClusterView['nodes']> {
    return this.#base.nodes();
  }

  podsOnNode(nodeName: string): ReturnType<ClusterView['podsOnNode']> {
    return this.#base.podsOnNode(nodeName);
  }

  requestedOnNode(nodeName: string): ReturnType<ClusterView['requestedOnNode']> {
    return this.#base.requestedOnNode(nodeName);
  }

  placedTally(...args: Parameters<ClusterView['placedTally']>): ReturnType<ClusterView['placedTally']> {
    return this.#base.placedTally(...args);
  }

  recentPlacements(wsUid: string): ReturnType<ClusterView['recentPlacements']> {
    return this.#recent?.(wsUid) ?? this.#base.recentPlacements(wsUid);
  }
}

/** Runs `decide` until it needs no read, making the reads it names on `view`. */
export async function settle<D extends { kind: string }>(view: ReadThroughView, decide: () => D): Promise<Exclude<D, { kind: 'read' }>> {
  for (let reads = 0; ; reads++) {
    const decision = decide();
    if (decision.kind !== 'read') return decision as Exclude<D, { kind: 'read' }>;
    if (reads === MAX_READS) throw new Error(`an admission decision asked for more than ${MAX_READS} reads from the API server`);
    await view.read((decision as unknown as { read: ReadRequest }).read);
  }
}

/** Runs a view lookup until it needs no read, making the reads it names on `view`. */
export async function settleLookup<T>(view: ReadThroughView, lookup: () => ViewLookup<T>): Promise<Lookup<T>> {
  const settled = await settle(view, () => {
    const answer = lookup();
    return 'read' in answer ? { kind: 'read' as const, read: answer.read } : { kind: 'lookup' as const, answer };
  });
  return settled.answer;
}
