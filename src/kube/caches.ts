/**
 * `ManagerCaches`: the manager's informers, shared by the webhook and the
 * controller, and the cache queries both need — what the informers hold and
 * nothing else (reads from the API server are api-reader.ts). `view` is the
 * `ClusterView` admission decides on (core/cluster-view.ts): what the caches
 * cannot answer (a kind not watched, or not in the wanted version; a pod not
 * seen yet) comes back as the read to make.
 *
 * Watched: WorkloadSpreads, Pods (trimmed, pod-transform.ts), Nodes,
 * ReplicaSets, Deployments, StatefulSets and Jobs in all namespaces; the
 * whitelist config map (whitelist-source.ts, D6); OpenKruise CloneSets
 * (`apps.kruise.io/v1alpha1`) only while discovery says they are served
 * (checked at start and every `discoveryRecheckMs`); and every custom kind
 * the whitelist names (workloads and their subResources), started and
 * stopped as the whitelist changes. Other objects lose `managedFields`.
 *
 * Indexes: pods by owner UID (any ownerReference, as core's ownership test)
 * and by node; WorkloadSpreads by target (`ns/group/kind/name`, version
 * ignored as admission does); ReplicaSets by controller UID; pods by the
 * WorkloadSpread their marker names.
 *
 * WorkloadSpreads are decoded once, as they enter the cache (api/decode.ts):
 * the queries hand out typed values; one that cannot be decoded is left out
 * of lists and answered as an error by name (logged once per version).
 *
 * Invariants: `waitForSync` waits for the built-in informers and the
 * whitelist only; CloneSet and custom informers are optional (RBAC or a
 * missing CRD must not keep the manager from starting): an object of such a
 * kind is answered from its cache once it has listed, else by a read from
 * the API server. Cached objects are shared: never mutate them.
 * Start at `start()`, then the query methods.
 */
import type { Clock, Timer } from '../clock/clock.ts';
import { decodeWorkloadSpread } from '../api/decode.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { Whitelist } from '../api/whitelist.ts';
import type { ClusterView, ObjectRef, PlacedTally, ViewLookup } from '../core/cluster-view.ts';
import type { PodVersionOptions } from '../core/pod-version.ts';
import { readMarker } from '../core/marker.ts';
import { placedAnswerKey, placedCountKeys, placedKeys } from '../core/placed-count.ts';
import { nodeRequestOf, type NodeRequested } from '../core/simulation-schedule.ts';
import { byName } from '../k8s/by-name.ts';
import { lookupOf, type Lookup } from '../k8s/lookup.ts';
import { apiVersionGroup, controllerRef } from '../k8s/pod.ts';
import type { KubeObject, Node, Pod } from '../k8s/types.ts';
import type { EventRecorder } from '../client/event-recorder.ts';
import { describeError, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { BUILTIN, apiVersionOf, type ResourceRef } from '../client/resources.ts';
import { Informer, type IndexFunc, type InformerOptions, type Store } from '../client/store.ts';
import type { WatcherOptions } from '../client/watcher.ts';
import { Interner, podTransform, withoutManagedFields } from './pod-transform.ts';
import { CLONESET_REF, WORKLOADSPREAD_REF } from './refs.ts';
import { WhitelistSource } from './whitelist-source.ts';

export const POD_OWNER_INDEX = 'owner';
export const POD_NODE_INDEX = 'node';
export const POD_PLACED_COUNT = 'placed-count';
/** Per node, what its pods request (core's `nodeRequestOf`, summed): cpu milli, memory bytes, pods. */
export const POD_NODE_REQUESTED_SUM = 'node-requested';

/** A bound pod's share of its node's requests, as the pod cache sums it. */
export function nodeRequestedPart(pod: Pod): { key: string; values: readonly number[] } | undefined {
  const node = pod.spec?.nodeName;
  if (typeof node !== 'string' || node === '') return undefined;
  const r = nodeRequestOf(pod);
  return r === undefined ? undefined : { key: node, values: [r.cpuMilli, r.memory, r.pods] };
}
export const WS_TARGET_INDEX = 'target';
export const RS_OWNER_INDEX = 'owner';

export const DEFAULT_DISCOVERY_RECHECK_MS = 60_000;

/** Watched workload kinds with a fixed ref, by `group/Kind`. */
const BUILTIN_WORKLOADS: readonly ResourceRef[] = [BUILTIN.deployments, BUILTIN.replicasets, BUILTIN.statefulsets, BUILTIN.jobs];

/** A WorkloadSpread as the store holds it: the decoded object, or why it could not be decoded. */
export type CachedWorkloadSpread = KubeObject & { [DECODED]: { ok: true; ws: WorkloadSpread } | { ok: false; error: string } };

/** Where the store keeps the decoded WorkloadSpread (not a JSON field: never serialized). */
const DECODED: unique symbol = Symbol('decoded WorkloadSpread');

export type WorkloadEventType = 'add' | 'update' | 'delete';

/** A change of a watched workload object (built-in, CloneSet or custom kind). */
export interface WorkloadEvent {
  type: WorkloadEventType;
  group: string;
  kind: string;
  obj: KubeObject;
  /** The previous object, on updates. */
  old?: KubeObject;
}

/** A watched workload kind. `synced` is false until its first complete list. */
export interface WorkloadStore {
  ref: ResourceRef;
  store: Store<KubeObject>;
  readonly synced: boolean;
}

export interface ManagerCachesOptions {
  client: KubeClient;
  /** The manager's namespace (where the whitelist config map lives). */
  namespace: string;
  configMapName?: string;
  /** Records Warning events about a bad whitelist. */
  recorder?: EventRecorder;
  log?: Logger;
  discoveryRecheckMs?: number;
  /** Watcher tuning (tests: resync, back-off, randomness). */
  watcher?: Partial<Pick<WatcherOptions, 'resyncMs' | 'backoff' | 'random' | 'watchTimeoutSeconds' | 'pageSize'>>;
  /** Deep-freeze cached objects (tests). */
  freeze?: boolean;
  /**
   * Cache only these namespaces' objects (`--watch-namespaces`): one watch
   * per namespace for every namespaced kind; nodes are cluster-wide as ever.
   * Undefined: every namespace.
   */
  namespaces?: readonly string[];
}

/** `group/Kind`, the key of workload stores. */
export function groupKindKey(group: string, kind: string): string {
  return `${group}/${kind}`;
}

/** The WS target index value of a WorkloadSpread (none when it could not be decoded). */
function targetIndexValues(cached: CachedWorkloadSpread): string[] {
  const decoded = cached[DECODED];
  if (!decoded.ok) return [];
  const ref = decoded.ws.spec.targetRef;
  const gv = apiVersionGroup(ref.apiVersion);
  if (!gv.ok) return [];
  return [targetKey(decoded.ws.metadata.namespace ?? '', gv.group, ref.kind, ref.name)];
}

export function targetKey(namespace: string, group: string, kind: string, name: string): string {
  return `${namespace}/${group}/${kind}/${name}`;
}

/** The indexes of the pod cache. */
const POD_INDEXES: Readonly<Record<string, IndexFunc<Pod>>> = Object.freeze({
  [POD_OWNER_INDEX]: (p: Pod) => {
    const uids: string[] = [];
    for (const r of p.metadata?.ownerReferences ?? []) if (r.uid !== '') uids.push(r.uid);
    return uids;
  },
  [POD_NODE_INDEX]: (p: Pod) => (p.spec?.nodeName ? [p.spec.nodeName] : []),
});

/** The pod store's counts (`Store.addCount`): numbers only, no set of pods behind them. */
const POD_COUNTS: Readonly<Record<string, IndexFunc<Pod>>> = Object.freeze({
  // D21: the counts admission reads places from (core/placed-count.ts), kept as the pods change.
  [POD_PLACED_COUNT]: (p: Pod) => placedKeys(p).counts,
});

/**
 * Gives a pod store the pod cache's indexes, its per-node sum of requests and
 * its place counts (the cache's own store, and the tests that measure it).
 */
export function indexPodStore(store: Store<Pod>): void {
  for (const [name, fn] of Object.entries(POD_INDEXES)) store.addIndex(name, fn);
  store.addSum(POD_NODE_REQUESTED_SUM, nodeRequestedPart);
  for (const [name, fn] of Object.entries(POD_COUNTS)) store.addCount(name, fn);
}

/**
 * The view's `placedTally` over the pod store's place counts (`POD_COUNTS`). `shows` looks a
 * pod up by name only: a placement made for a pod without a name is keyed by
 * its marker uid, and the webhook forgets it as soon as the cache shows the
 * pod (`RecentPlacements.seen`), which is always after the placement was
 * recorded (before the answer left). An index of marker uids would cost every
 * cached pod about 600 bytes to answer a question that never comes up.
 */
export function placedTallyOf(pods: Store<Pod>, namespace: string, wsName: string, version: string, options: PodVersionOptions): PlacedTally {
  return {
    count: (subset) => placedCountKeys(namespace, wsName, subset, version, options).reduce((sum, k) => sum + pods.countOf(POD_PLACED_COUNT, k), 0),
    shows: (key) => {
      const pod = pods.get(namespace, key);
      return pod !== undefined && placedKeys(pod).answers.includes(placedAnswerKey(namespace, wsName, key));
    },
  };
}

interface DynamicInformer {
  informer: Informer<KubeObject>;
  ref: ResourceRef;
  unsubscribe: (() => void)[];
}

export class ManagerCaches {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly workloadSpreads: Store<CachedWorkloadSpread>;
  /** `listWorkloadSpreads`' answers while the store's change count is `changes`. */
  #wsLists: { changes: number; byNamespace: Map<string, readonly WorkloadSpread[]> } = { changes: -1, byNamespace: new Map() };
  readonly pods: Store<Pod>;
  readonly nodes: Store<Node>;
  readonly replicaSets: Store<KubeObject>;
  readonly deployments: Store<KubeObject>;
  readonly statefulSets: Store<KubeObject>;
  readonly jobs: Store<KubeObject>;
  readonly whitelistSource: WhitelistSource;
  /** The namespaces cached (`--watch-namespaces`); undefined: every namespace. */
  readonly namespaces: readonly string[] | undefined;
  readonly #opts: ManagerCachesOptions;
  readonly #log: Logger;
  readonly #builtin: Informer<KubeObject>[] = [];
  /** The built-in workload kinds' stores by `group/Kind`, as admission asks for them (one object each: admission asks several times per pod). */
  readonly #builtinWorkloads = new Map<string, WorkloadStore>();
  readonly #dynamic = new Map<string, DynamicInformer>();
  #workloadHandlers: ((event: WorkloadEvent) => void)[] = [];
  #discoveryTimer: Timer | undefined;
  #discoveryRun: Promise<void> = Promise.resolve();
  #started = false;
  #stopped = false;

  constructor(options: ManagerCachesOptions) {
    this.client = options.client;
    this.clock = options.client.clock;
    this.#opts = options;
    this.namespaces = options.namespaces;
    this.#log = options.log ?? silentLogger;
    const pool = new Interner();

    const ws = this.#informer<CachedWorkloadSpread>(WORKLOADSPREAD_REF, { [WS_TARGET_INDEX]: targetIndexValues }, (obj) => this.#decode(obj));
    this.workloadSpreads = ws.store;
    this.pods = this.#informer<Pod>(BUILTIN.pods, {}, podTransform(pool)).store;
    indexPodStore(this.pods);
    this.nodes = this.#informer<Node>(BUILTIN.nodes, {}).store;
    for (const ref of BUILTIN_WORKLOADS) {
      const indexes = ref === BUILTIN.replicasets ? { [RS_OWNER_INDEX]: (rs: KubeObject) => { const owner = controllerRef(rs); return owner === undefined ? [] : [owner.uid]; } } : {};
      const informer = this.#informer<KubeObject>(ref, indexes);
      const store = informer.store;
      this.#builtinWorkloads.set(groupKindKey(ref.group, ref.kind), { ref, store, get synced() { return store.hasSynced(); } });
      this.#subscribeWorkload(store, ref);
    }
    this.replicaSets = this.#builtinWorkloads.get(groupKindKey('apps', 'ReplicaSet'))!.store;
    this.deployments = this.#builtinWorkloads.get(groupKindKey('apps', 'Deployment'))!.store;
    this.statefulSets = this.#builtinWorkloads.get(groupKindKey('apps', 'StatefulSet'))!.store;
    this.jobs = this.#builtinWorkloads.get(groupKindKey('batch', 'Job'))!.store;

    this.whitelistSource = new WhitelistSource({
      client: options.client,
      namespace: options.namespace,
      log: this.#log,
      ...(options.configMapName === undefined ? {} : { configMapName: options.configMapName }),
      ...(options.recorder === undefined ? {} : { recorder: options.recorder }),
      ...(options.watcher === undefined ? {} : { watcher: options.watcher }),
    });
    this.whitelistSource.onChange(() => this.refreshDiscovery());
  }

  /** The cache transform of WorkloadSpreads: decoded once per version; a failure is logged and kept as the answer. */
  #decode(obj: KubeObject): CachedWorkloadSpread {
    const stripped = withoutManagedFields<KubeObject>(obj);
    const decoded = decodeWorkloadSpread(stripped);
    if (!decoded.ok) this.#log.error({ namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '', err: decoded.error }, 'WorkloadSpread ignored: it cannot be decoded');
    return Object.assign(stripped, { [DECODED]: decoded.ok ? { ok: true as const, ws: decoded.value } : decoded });
  }

  #informer<T extends KubeObject>(ref: ResourceRef, indexes: Record<string, (obj: T) => string[]>, transform?: (obj: KubeObject) => T): Informer<T> {
    const options: InformerOptions<T> = {
      client: this.client,
      ref,
      name: ref.resource,
      log: this.#log,
      indexes,
      transform: transform ?? ((obj) => withoutManagedFields<T>(obj)),
      ...this.#opts.watcher,
    };
    if (this.#opts.freeze === true) options.freeze = true;
    if (this.#opts.namespaces !== undefined) options.namespaces = this.#opts.namespaces;
    const informer = new Informer<T>(options);
    this.#builtin.push(informer as unknown as Informer<KubeObject>);
    return informer;
  }

  // ---- lifecycle ----

  /** Starts every informer and the discovery checks (idempotent). */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    for (const informer of this.#builtin) informer.start();
    this.whitelistSource.start();
    this.refreshDiscovery();
    const every = this.#opts.discoveryRecheckMs ?? DEFAULT_DISCOVERY_RECHECK_MS;
    if (every > 0) {
      this.#discoveryTimer = this.clock.setInterval(() => this.refreshDiscovery(), every, { background: true, name: 'workload discovery' });
    }
  }

  /** Stops every informer and timer; resolves when they are gone. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#discoveryTimer?.cancel();
    await this.#discoveryRun.catch(() => {});
    const dynamic = [...this.#dynamic.values()];
    this.#dynamic.clear();
    await Promise.all([
      ...this.#builtin.map((i) => i.stop()),
      this.whitelistSource.stop(),
      ...dynamic.map((d) => this.#stopDynamic(d)),
    ]);
  }

  /** Resolves once the built-in informers and the whitelist have listed once. */
  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.#builtin.map((i) => i.waitForSync(signal)), this.whitelistSource.waitForSync(signal)]);
  }

  hasSynced(): boolean {
    return this.#builtin.every((i) => i.store.hasSynced()) && this.whitelistSource.hasSynced();
  }

  // ---- whitelist ----

  whitelist(): Whitelist {
    return this.whitelistSource.current();
  }

  // ---- workload events ----

  /**
   * Calls `fn` for every add/update/delete of a watched workload (built-in,
   * CloneSet, custom kinds, including informers started later).
   */
  onWorkloadEvent(fn: (event: WorkloadEvent) => void): () => void {
    this.#workloadHandlers.push(fn);
    return () => {
      this.#workloadHandlers = this.#workloadHandlers.filter((h) => h !== fn);
    };
  }

  #subscribeWorkload(store: Store<KubeObject>, ref: ResourceRef): (() => void)[] {
    const emit = (event: WorkloadEvent) => {
      for (const h of this.#workloadHandlers) {
        try {
          h(event);
        } catch (err) {
          this.#log.error({ kind: ref.kind, err: describeError(err) }, 'workload event handler failed');
        }
      }
    };
    const { group, kind } = ref;
    return [
      store.onAdd((obj) => emit({ type: 'add', group, kind, obj })),
      store.onUpdate((old, obj) => emit({ type: 'update', group, kind, obj, old })),
      store.onDelete((obj) => emit({ type: 'delete', group, kind, obj })),
    ];
  }

  // ---- workload stores ----

  /** The watched store of a workload group+kind, if any (built-in, CloneSet, custom). */
  workloadStore(group: string, kind: string): WorkloadStore | undefined {
    const key = groupKindKey(group, kind);
    const builtin = this.#builtinWorkloads.get(key);
    if (builtin !== undefined) return builtin;
    const dynamic = this.#dynamic.get(key);
    if (dynamic === undefined) return undefined;
    const store = dynamic.informer.store;
    return { ref: dynamic.ref, store, get synced() { return store.hasSynced(); } };
  }

  /** Group/kinds watched right now beyond the built-in ones (CloneSet, custom kinds). */
  dynamicKinds(): string[] {
    return [...this.#dynamic.keys()].sort();
  }

  /**
   * Re-checks discovery for CloneSets and the whitelisted kinds, starting and
   * stopping informers to match. Runs are serialized; the returned promise
   * settles when this run is done (tests await it).
   */
  refreshDiscovery(): Promise<void> {
    const run = this.#discoveryRun.then(() => (this.#stopped ? undefined : this.clock.activity.run('workload discovery', () => this.#reconcileDynamic())));
    this.#discoveryRun = run.catch((err: unknown) => {
      this.#log.warn({ err: describeError(err) }, 'workload discovery failed');
    });
    return this.#discoveryRun;
  }

  /** The dynamic kinds wanted now: CloneSet (tried always) and the whitelist's kinds that are not built in. */
  #wanted(): Map<string, { group: string; version: string; kind: string }> {
    const wanted = new Map<string, { group: string; version: string; kind: string }>();
    wanted.set(groupKindKey(CLONESET_REF.group, CLONESET_REF.kind), { group: CLONESET_REF.group, version: CLONESET_REF.version, kind: CLONESET_REF.kind });
    for (const w of this.whitelist().workloads) {
      for (const gvk of [w, ...w.subResources]) {
        const key = groupKindKey(gvk.group, gvk.kind);
        if (gvk.kind === '' || this.#builtinWorkloads.has(key) || wanted.has(key)) continue;
        wanted.set(key, { group: gvk.group, version: gvk.version, kind: gvk.kind });
      }
    }
    return wanted;
  }

  async #reconcileDynamic(): Promise<void> {
    const wanted = this.#wanted();
    for (const [key, running] of [...this.#dynamic]) {
      if (wanted.has(key)) continue;
      this.#dynamic.delete(key);
      this.#log.info({ kind: key }, 'no longer watching workload kind');
      await this.#stopDynamic(running);
    }
    for (const [key, gvk] of wanted) {
      if (this.#stopped) return;
      const resolved = await this.#resolve(gvk);
      const running = this.#dynamic.get(key);
      if (resolved === undefined) {
        // Not served (CRD absent or removed): stop watching; a later check starts again.
        if (running !== undefined) {
          this.#dynamic.delete(key);
          this.#log.info({ kind: key }, 'workload kind no longer served, stopping its informer');
          await this.#stopDynamic(running);
        }
        continue;
      }
      if (running !== undefined && apiVersionOf(running.ref) === apiVersionOf(resolved)) continue;
      if (running !== undefined) {
        this.#dynamic.delete(key);
        await this.#stopDynamic(running);
      }
      this.#startDynamic(key, resolved);
    }
  }

  /** The ref of a kind through discovery; undefined when not served. An empty version means the group's preferred one. */
  async #resolve(gvk: { group: string; version: string; kind: string }): Promise<ResourceRef | undefined> {
    let version = gvk.version;
    if (version === '') {
      try {
        const doc = (await this.client.getJson(`/apis/${encodeURIComponent(gvk.group)}`)) as { preferredVersion?: { version?: unknown } } | null;
        version = typeof doc?.preferredVersion?.version === 'string' ? doc.preferredVersion.version : '';
      } catch (err) {
        if (!isNotFound(err)) this.#log.warn({ group: gvk.group, err: describeError(err) }, 'cannot read API group discovery');
        return undefined;
      }
      if (version === '') return undefined;
    }
    const apiVersion = gvk.group === '' ? version : `${gvk.group}/${version}`;
    this.client.resources.invalidate(apiVersion);
    const result = await this.client.resources.resolve(apiVersion, gvk.kind);
    if (result.ok) return result.ref;
    if (!result.notFound) this.#log.warn({ kind: `${apiVersion}/${gvk.kind}`, err: describeError(result.error) }, 'discovery failed');
    return undefined;
  }

  #startDynamic(key: string, ref: ResourceRef): void {
    const options: InformerOptions<KubeObject> = {
      client: this.client,
      ref,
      name: `${ref.resource}.${ref.group}`,
      log: this.#log,
      transform: (obj) => withoutManagedFields(obj),
      ...this.#opts.watcher,
    };
    if (this.#opts.freeze === true) options.freeze = true;
    if (this.#opts.namespaces !== undefined) options.namespaces = this.#opts.namespaces;
    const informer = new Informer<KubeObject>(options);
    const unsubscribe = this.#subscribeWorkload(informer.store, ref);
    this.#dynamic.set(key, { informer, ref, unsubscribe });
    this.#log.info({ kind: key, apiVersion: apiVersionOf(ref) }, 'watching workload kind');
    informer.start();
  }

  async #stopDynamic(d: DynamicInformer): Promise<void> {
    for (const u of d.unsubscribe) u();
    await d.informer.stop();
  }

  // ---- WorkloadSpreads ----

  /** One WorkloadSpread, decoded (an `error` when the stored object cannot be decoded). */
  workloadSpread(namespace: string, name: string): Lookup<WorkloadSpread> {
    const cached = this.workloadSpreads.get(namespace, name);
    if (cached === undefined) return { notFound: true };
    const decoded = cached[DECODED];
    return decoded.ok ? { found: decoded.ws } : { error: decoded.error };
  }

  /** One WorkloadSpread, or undefined when it is not cached or cannot be decoded. */
  getWorkloadSpread(namespace: string, name: string): WorkloadSpread | undefined {
    const found = this.workloadSpread(namespace, name);
    return 'found' in found ? found.found : undefined;
  }

  /** The WorkloadSpreads of a namespace, in name order (a stable "list order" for admission). */
  /**
   * The namespace's WorkloadSpreads by name, one shared array until the store
   * changes (admission asks for every pod; a namespace may hold a hundred).
   */
  listWorkloadSpreads(namespace: string): readonly WorkloadSpread[] {
    const changes = this.workloadSpreads.changes;
    if (this.#wsLists.changes !== changes) this.#wsLists = { changes, byNamespace: new Map() };
    let list = this.#wsLists.byNamespace.get(namespace);
    if (list === undefined) {
      list = Object.freeze(decodedOnly(this.workloadSpreads.list(namespace)).sort(byName));
      this.#wsLists.byNamespace.set(namespace, list);
    }
    return list;
  }

  /** The WorkloadSpreads whose targetRef names this workload (group compared, version ignored). */
  workloadSpreadsForTarget(namespace: string, group: string, kind: string, name: string): WorkloadSpread[] {
    return decodedOnly(this.workloadSpreads.byIndex(WS_TARGET_INDEX, targetKey(namespace, group, kind, name))).sort(byName);
  }

  // ---- the view admission decides on ----

  /** These caches as core's `ClusterView`. */
  readonly view: ClusterView = {
    whitelist: () => (this.whitelistSource.hasSynced() ? this.whitelist() : { error: 'the whitelist config map has not been read yet' }),
    workloadSpreads: (namespace) => this.listWorkloadSpreads(namespace),
    workloadSpread: (namespace, name) => this.workloadSpread(namespace, name),
    object: (namespace, ref, options) => this.object(namespace, ref, options),
    pod: (namespace, name) => this.pod(namespace, name),
    nodes: () => this.listNodes(),
    podsOnNode: (nodeName) => this.podsOnNode(nodeName),
    requestedOnNode: (nodeName) => this.requestedOnNode(nodeName),
    placedTally: (namespace, wsName, version, options) => placedTallyOf(this.pods, namespace, wsName, version, options),
    // Only admission knows what it placed; the webhook adds these (webhook/recent-placements.ts).
    recentPlacements: () => [],
  };

  /**
   * One object of a workload kind: from its cache when the group+kind is
   * watched and listed (and, with `exactVersion`, watched in the ref's
   * version; a miss is NotFound), else the read to make.
   */
  object(namespace: string, ref: ObjectRef, options: { exactVersion?: boolean } = {}): ViewLookup<KubeObject> {
    const gv = apiVersionGroup(ref.apiVersion);
    if (!gv.ok) return { error: gv.error };
    const cached = this.workloadStore(gv.group, ref.kind);
    if (cached !== undefined && cached.synced && (options.exactVersion !== true || cached.ref.version === gv.version)) {
      return lookupOf(cached.store.get(namespace, ref.name));
    }
    return { read: { kind: 'object', namespace, ref: { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name }, exactVersion: options.exactVersion === true } };
  }

  /** One pod from the cache; one it does not show is read from the API server. */
  pod(namespace: string, name: string): ViewLookup<Pod> {
    const pod = this.pods.get(namespace, name);
    return pod === undefined ? { read: { kind: 'pod', namespace, name } } : { found: pod };
  }

  // ---- pods ----

  getPod(namespace: string, name: string): Pod | undefined {
    return this.pods.get(namespace, name);
  }

  /** Pods with an ownerReference to this UID, in name order. */
  podsOwnedBy(uid: string): Pod[] {
    return this.pods.byIndex(POD_OWNER_INDEX, uid).sort(byName);
  }

  /** How many pods have an ownerReference to this UID (an index count: no list, no sort). */
  podCountOwnedBy(uid: string): number {
    return this.pods.countByIndex(POD_OWNER_INDEX, uid);
  }

  /** Pods bound to this node. */
  podsOnNode(nodeName: string): Pod[] {
    return this.pods.byIndex(POD_NODE_INDEX, nodeName);
  }

  /** What the pods bound to this node request (D3), kept summed as pods come, change and go. */
  requestedOnNode(nodeName: string): NodeRequested {
    const [cpuMilli = 0, memory = 0, pods = 0] = this.pods.sumOf(POD_NODE_REQUESTED_SUM, nodeName) ?? [];
    return { cpuMilli, memory, pods };
  }

  /** The pods of a namespace, in name order. */
  listPods(namespace: string): Pod[] {
    return this.pods.list(namespace).sort(byName);
  }

  // ---- nodes ----

  getNode(name: string): Node | undefined {
    return this.nodes.get(undefined, name);
  }

  listNodes(): Node[] {
    return this.nodes.list();
  }

  // ---- ReplicaSets ----

  /** ReplicaSets whose controller is this UID, in name order. */
  replicaSetsOwnedBy(uid: string): KubeObject[] {
    return this.replicaSets.byIndex(RS_OWNER_INDEX, uid).sort(byName);
  }
}

function decodedOnly(cached: readonly CachedWorkloadSpread[]): WorkloadSpread[] {
  const out: WorkloadSpread[] = [];
  for (const c of cached) {
    const decoded = c[DECODED];
    if (decoded.ok) out.push(decoded.ws);
  }
  return out;
}

