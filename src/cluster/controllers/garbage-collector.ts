/**
 * The garbage collector of the embedded cluster (k8s.io/kubernetes
 * pkg/controller/garbagecollector), talking to the API server only through
 * HTTP and watches.
 *
 * - Discovery (garbage-collector-discovery.ts) finds every resource the
 *   server serves with list, watch and delete (preferred version per group;
 *   Events excluded), custom resources included; an informer per
 *   resource (objects trimmed to their metadata) feeds the owner graph
 *   (garbage-collector-graph.ts). Discovery runs again when a
 *   CustomResourceDefinition changes, and every 30 s in the background.
 * - `attemptToDelete(uid)` (upstream's attemptToDeleteItem): reads the object
 *   live and classifies each owner reference by a live read of the owner in
 *   the dependent's namespace: absent or replaced (uid differs) → dangling;
 *   being deleted in the foreground → waiting; otherwise solid. With a solid
 *   owner the dangling/waiting references are removed; with only waiting
 *   owners and dependents of its own, the object is deleted in the
 *   foreground; otherwise it is deleted with the propagation its own
 *   finalizers ask for (background by default). Deletes carry a uid precondition.
 * - An owner with the `foregroundDeletion` finalizer waits until no dependent
 *   that blocks it (blockOwnerDeletion) is left, then loses the finalizer;
 *   one with the `orphan` finalizer has its references removed from every
 *   dependent, then loses the finalizer.
 * - Owner references as upstream: no namespace in a reference, so a
 *   namespaced owner is looked up in the dependent's namespace (one living in
 *   another namespace counts as absent — the dependent is collected — and an
 *   OwnerRefInvalidNamespace warning is recorded); a cluster-scoped dependent
 *   of a namespaced kind is left alone with the same warning; a reference to
 *   a kind the server does not serve keeps its dependent (retried in the
 *   background and when discovery changes, never deleted).
 * Start reading at `#attemptToDelete`.
 */
import type { Clock, Timer } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import { describeError, isConflict, isNotFound } from '../../client/errors.ts';
import type { EventRecorder } from '../../client/event-recorder.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { silentLogger, type Logger } from '../../client/logger.ts';
import type { ResourceRef } from '../../client/resources.ts';
import { Informer } from '../../client/store.ts';
import { QueueLoop } from '../../client/queue-loop.ts';
import type { Runnable } from '../../client/runnable.ts';
import type { WorkQueue } from '../../client/workqueue.ts';
import type { KubeObject, OwnerReference } from '../../k8s/types.ts';
import { componentClient, componentRecorder } from './component-client.ts';
import { deletableResources } from './garbage-collector-discovery.ts';
import type { ControllerFactory } from './component.ts';
import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN, hasFinalizer, isBeingDeleted, OwnerGraph, ownerReferencesOf, type GraphNode, type GraphWork, type Identity } from './garbage-collector-graph.ts';

export const GARBAGE_COLLECTOR = 'garbage-collector-controller';

/** The garbage collector as a component of the embedded cluster (registry.ts). */
export const garbageCollector: ControllerFactory = {
  name: GARBAGE_COLLECTOR,
  create: (ctx) => new GarbageCollector({ client: ctx.client, clock: ctx.clock, logger: ctx.logger, races: ctx.races }),
};
/** How often discovery runs again without a CRD change (upstream's resync of monitors). */
export const DISCOVERY_RESYNC_MS = 30_000;
/** Background retry of references to kinds the server does not serve. */
const UNRESOLVED_RETRY_MS = 30_000;
const FINALIZER_RETRIES = 5;

export interface GarbageCollectorOptions {
  client: KubeClient;
  clock: Clock;
  /** Race mode: a random delay before each sync (the cluster's `races`). */
  races?: Races | undefined;
  logger?: Logger;
  /** Concurrent workers (default 20, `--concurrent-gc-syncs`). */
  workers?: number;
  /** Write OwnerRefInvalidNamespace events (default true). */
  recordEvents?: boolean;
}

class RestMappingError extends Error {}

/** What the collector keeps of each object: enough for the graph. */
function trimToMetadata(obj: KubeObject): KubeObject {
  const m = obj.metadata ?? {};
  const metadata: KubeObject['metadata'] = {};
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'ownerReferences', 'finalizers', 'deletionTimestamp'] as const) {
    if (m[k] !== undefined) (metadata as Record<string, unknown>)[k] = m[k];
  }
  const out: KubeObject = { metadata };
  if (obj.apiVersion !== undefined) out.apiVersion = obj.apiVersion;
  if (obj.kind !== undefined) out.kind = obj.kind;
  return out;
}

const resourceKey = (ref: ResourceRef): string => `${ref.group}/${ref.resource}`;

export class GarbageCollector implements Runnable {
  readonly name = GARBAGE_COLLECTOR;
  readonly graph = new OwnerGraph();
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #workers: number;
  readonly #recorder: EventRecorder | undefined;
  readonly #loop: QueueLoop;
  readonly #queue: WorkQueue<string>;
  readonly #informers = new Map<string, Informer>();
  readonly #unresolved = new Set<string>();
  #discovery: Promise<void> | undefined;
  #discoveryAgain = false;
  #resync: Timer | undefined;

  constructor(options: GarbageCollectorOptions) {
    this.#clock = options.clock;
    this.#client = componentClient(options.client, options.clock, GARBAGE_COLLECTOR);
    this.#log = options.logger ?? silentLogger;
    this.#workers = options.workers ?? 20;
    this.#recorder = options.recordEvents === false ? undefined : componentRecorder(this.#client, GARBAGE_COLLECTOR, options.logger);
    // The informers are the loop's inputs but not its own: discovery decides which there are (`#syncResources`).
    this.#loop = new QueueLoop({
      name: GARBAGE_COLLECTOR,
      clock: this.#clock,
      log: this.#log,
      races: options.races,
      workers: this.#workers,
      waitForSync: async (signal) => {
        this.#resync = this.#clock.setInterval(() => this.#rediscover(), DISCOVERY_RESYNC_MS, { background: true, name: `${GARBAGE_COLLECTOR} discovery` });
        await this.#rediscover();
        await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
      },
      handle: (key) => this.#process(key),
      onStopping: async () => {
        this.#resync?.cancel();
        await this.#discovery;
      },
      onStopped: async () => {
        await Promise.all([...this.#informers.values()].map((i) => i.stop()));
        this.#informers.clear();
      },
    });
    this.#queue = this.#loop.queue;
  }

  /** Discovers resources and starts their informers; resolves once their first lists are in and the workers run. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  /** Ends every watch, timer and worker; resolves when all are gone. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** True once every informer started so far has listed its resource. */
  hasSynced(): boolean {
    return this.#informers.size > 0 && [...this.#informers.values()].every((i) => i.store.hasSynced());
  }

  /** The resources currently watched, `group/resource`. */
  watchedResources(): string[] {
    return [...this.#informers.keys()].sort();
  }

  // ---- discovery and informers ----

  /** Runs discovery (one at a time; a request during a run causes one more run). */
  #rediscover(): Promise<void> {
    if (this.#loop.stopping) return Promise.resolve();
    if (this.#discovery !== undefined) {
      this.#discoveryAgain = true;
      return this.#discovery;
    }
    this.#discovery = this.#clock.activity
      .run(`${GARBAGE_COLLECTOR} discovery`, async () => {
        do {
          this.#discoveryAgain = false;
          await this.#syncResources();
        } while (this.#discoveryAgain && !this.#loop.stopping);
      })
      .catch((err: unknown) => this.#log.warn({ err: describeError(err) }, 'discovery failed'))
      .finally(() => {
        this.#discovery = undefined;
      });
    return this.#discovery;
  }

  async #syncResources(): Promise<void> {
    const refs = await deletableResources(this.#client, this.#log);
    if (this.#loop.stopping) return;
    const wanted = new Map(refs.map((r) => [resourceKey(r), r]));
    let changed = false;
    for (const [key, informer] of this.#informers) {
      if (wanted.has(key)) continue;
      this.#informers.delete(key);
      changed = true;
      void informer.stop();
    }
    for (const [key, ref] of wanted) {
      if (this.#informers.has(key)) continue;
      changed = true;
      this.#informers.set(key, this.#watch(ref));
    }
    if (changed) {
      this.#client.resources.invalidate();
      for (const uid of this.#unresolved) this.#queue.add(`delete:${uid}`);
      this.#unresolved.clear();
    }
  }

  #watch(ref: ResourceRef): Informer {
    const informer = new Informer({ client: this.#client, ref, log: this.#log, name: `${GARBAGE_COLLECTOR} ${resourceKey(ref)}`, transform: trimToMetadata });
    const crds = ref.group === 'apiextensions.k8s.io' && ref.resource === 'customresourcedefinitions';
    informer.store.onAdd((obj) => {
      this.#apply(this.graph.observe(obj));
      if (crds) void this.#rediscover();
    });
    informer.store.onUpdate((_old, obj) => {
      this.#apply(this.graph.observe(obj));
      if (crds) void this.#rediscover();
    });
    informer.store.onDelete((obj) => {
      this.#apply(this.graph.forget(obj));
      if (crds) void this.#rediscover();
    });
    informer.start();
    return informer;
  }

  #apply(work: GraphWork): void {
    for (const uid of work.remove) this.#queue.add(`delete:${uid}`);
    for (const uid of work.orphan) this.#queue.add(`orphan:${uid}`);
    for (const { dependent, owner } of work.invalidNamespace) {
      const node = this.graph.node(dependent);
      if (node !== undefined) this.#invalidNamespaceEvent(node.identity, owner);
    }
  }

  #invalidNamespaceEvent(dependent: Identity, owner: OwnerReference): void {
    this.#recorder?.record(
      { apiVersion: dependent.apiVersion, kind: dependent.kind, name: dependent.name, namespace: dependent.namespace, uid: dependent.uid },
      { type: 'Warning', reason: 'OwnerRefInvalidNamespace', note: `ownerRef ${JSON.stringify(owner)} does not resolve to a valid object in namespace ${JSON.stringify(dependent.namespace)}`, action: 'GarbageCollect' },
    );
  }

  // ---- work ----

  async #process(key: string): Promise<void> {
    const colon = key.indexOf(':');
    const uid = key.slice(colon + 1);
    try {
      if (key.startsWith('orphan:')) await this.#attemptToOrphan(uid);
      else await this.#attemptToDelete(uid);
    } catch (err) {
      if (!(err instanceof RestMappingError)) throw err;
      // The kind may appear with a CRD: retried then, or in the background meanwhile.
      this.#unresolved.add(uid);
      this.#queue.addAfter(key, UNRESOLVED_RETRY_MS, { background: true });
      this.#log.debug({ uid, err: err.message }, 'owner kind not served; will retry');
    }
  }

  async #refFor(apiVersion: string, kind: string): Promise<ResourceRef> {
    const r = await this.#client.resources.resolve(apiVersion, kind);
    if (!r.ok) {
      if (r.notFound) throw new RestMappingError(`no resource serves ${kind} in ${apiVersion}`);
      throw r.error;
    }
    return r.ref;
  }

  /** A live GET of an identity; undefined when it does not exist (or is another object now). */
  async #getLive(identity: Identity): Promise<KubeObject | undefined> {
    const ref = await this.#refFor(identity.apiVersion, identity.kind);
    try {
      const obj = await this.#client.get(ref, identity.name, ref.namespaced ? { namespace: identity.namespace } : {});
      return obj.metadata?.uid === identity.uid ? { ...obj, apiVersion: obj.apiVersion ?? identity.apiVersion, kind: obj.kind ?? identity.kind } : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** attemptToDeleteItem. */
  async #attemptToDelete(uid: string): Promise<void> {
    const node = this.graph.node(uid);
    if (node === undefined) return;
    if (!node.virtual && node.beingDeleted && !node.deletingDependents) return;
    if (node.virtual && node.identity.namespace !== '') {
      // A virtual node may be a cluster-scoped owner named from a namespaced dependent: check its scope first.
      const ref = await this.#refFor(node.identity.apiVersion, node.identity.kind);
      if (!ref.namespaced) node.identity = { ...node.identity, namespace: '' };
    }
    const latest = await this.#getLive(node.identity);
    if (latest === undefined) {
      this.#apply(this.graph.forgetMissing(uid));
      return;
    }
    if (node.deletingDependents) {
      await this.#processDeletingDependents(node, latest);
      return;
    }
    const refs = ownerReferencesOf(latest);
    if (refs.length === 0) return;
    const classified = await this.#classify(node, refs);
    if (classified === 'invalid') return;
    const { solid, dangling, waiting } = classified;
    if (solid.length > 0) {
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      if (drop.size === 0) return;
      await this.#patchOwnerRefs(node.identity, (list) => list.filter((r) => !drop.has(r.uid)));
      return;
    }
    if (waiting.length > 0 && node.dependents.size > 0) {
      const cycle = [...node.dependents].some((d) => this.graph.node(d)?.deletingDependents === true);
      if (cycle) {
        // A dependent is itself waiting for us: stop blocking the owners we wait for, or neither finishes.
        const waitingUids = new Set(waiting.map((r) => r.uid));
        await this.#patchOwnerRefs(node.identity, (list) => list.map((r) => (waitingUids.has(r.uid) ? { ...r, blockOwnerDeletion: false } : r)));
      }
      await this.#delete(node.identity, 'Foreground');
      return;
    }
    const policy = hasFinalizer(latest, FINALIZER_ORPHAN) ? 'Orphan' : hasFinalizer(latest, FINALIZER_FOREGROUND) ? 'Foreground' : 'Background';
    await this.#delete(node.identity, policy);
  }

  /** classifyReferences + isDangling, with live reads of every owner. */
  async #classify(node: GraphNode, refs: OwnerReference[]): Promise<{ solid: OwnerReference[]; dangling: OwnerReference[]; waiting: OwnerReference[] } | 'invalid'> {
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    const depNs = node.identity.namespace;
    for (const ref of refs) {
      if (this.graph.isAbsent(ref.uid, '') || this.graph.isAbsent(ref.uid, depNs)) {
        dangling.push(ref);
        continue;
      }
      const resource = await this.#refFor(ref.apiVersion, ref.kind);
      if (depNs === '' && resource.namespaced) {
        this.#invalidNamespaceEvent(node.identity, ref);
        return 'invalid';
      }
      const ns = resource.namespaced ? depNs : '';
      const owner = await this.#getLive({ apiVersion: ref.apiVersion, kind: ref.kind, namespace: ns, name: ref.name, uid: ref.uid });
      if (owner === undefined) {
        this.graph.markAbsent(ref.uid, ns);
        dangling.push(ref);
      } else if (isBeingDeleted(owner) && hasFinalizer(owner, FINALIZER_FOREGROUND)) waiting.push(ref);
      else solid.push(ref);
    }
    return { solid, dangling, waiting };
  }

  /** processDeletingDependentsItem: the finalizer goes once no blocking dependent is left. */
  async #processDeletingDependents(node: GraphNode, latest: KubeObject): Promise<void> {
    const blocking = this.graph.blockingDependents(node.identity.uid);
    if (blocking.length === 0) {
      await this.#removeFinalizer(node.identity, latest, FINALIZER_FOREGROUND);
      return;
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.#queue.add(`delete:${dep.identity.uid}`);
  }

  /** attemptToOrphan: drop the owner's references from every dependent, then its `orphan` finalizer. */
  async #attemptToOrphan(uid: string): Promise<void> {
    const node = this.graph.node(uid);
    if (node === undefined || node.virtual) return;
    const latest = await this.#getLive(node.identity);
    if (latest === undefined || !isBeingDeleted(latest) || !hasFinalizer(latest, FINALIZER_ORPHAN)) return;
    for (const d of [...node.dependents]) {
      const dep = this.graph.node(d);
      if (dep === undefined || dep.virtual) continue;
      try {
        await this.#patchOwnerRefs(dep.identity, (list) => list.filter((r) => r.uid !== uid));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    await this.#removeFinalizer(node.identity, latest, FINALIZER_ORPHAN);
  }

  async #delete(identity: Identity, policy: 'Foreground' | 'Background' | 'Orphan'): Promise<void> {
    const ref = await this.#refFor(identity.apiVersion, identity.kind);
    try {
      await this.#client.delete(ref, identity.name, { ...(ref.namespaced ? { namespace: identity.namespace } : {}), propagationPolicy: policy, preconditions: { uid: identity.uid } });
      this.#log.debug({ object: `${identity.kind} ${identity.namespace}/${identity.name}`, policy }, 'garbage collected');
    } catch (err) {
      // Gone already, or a precondition failure: a new object under that name is not ours to delete.
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  /** Rewrites the object's owner references (merge patch guarded by resourceVersion), re-reading on conflict. */
  async #patchOwnerRefs(identity: Identity, edit: (refs: OwnerReference[]) => OwnerReference[]): Promise<void> {
    const ref = await this.#refFor(identity.apiVersion, identity.kind);
    const ns = ref.namespaced ? { namespace: identity.namespace } : {};
    for (let attempt = 0; ; attempt++) {
      const latest = await this.#getLive(identity);
      if (latest === undefined) return;
      const before = ownerReferencesOf(latest);
      const after = edit(before);
      if (JSON.stringify(after) === JSON.stringify(before)) return;
      try {
        await this.#client.patch(ref, identity.name, { type: 'merge', body: { metadata: { resourceVersion: latest.metadata?.resourceVersion, ownerReferences: after.length > 0 ? after : null } } }, ns);
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= FINALIZER_RETRIES) throw err;
      }
    }
  }

  /** removeFinalizer, re-reading on conflict. */
  async #removeFinalizer(identity: Identity, first: KubeObject, finalizer: string): Promise<void> {
    const ref = await this.#refFor(identity.apiVersion, identity.kind);
    const ns = ref.namespaced ? { namespace: identity.namespace } : {};
    let latest: KubeObject | undefined = first;
    for (let attempt = 0; latest !== undefined; attempt++) {
      const finalizers = (latest.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
      if (finalizers.length === (latest.metadata?.finalizers ?? []).length) return;
      try {
        await this.#client.patch(ref, identity.name, { type: 'merge', body: { metadata: { resourceVersion: latest.metadata?.resourceVersion, finalizers: finalizers.length > 0 ? finalizers : null } } }, ns);
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= FINALIZER_RETRIES) throw err;
      }
      latest = await this.#getLive(identity);
    }
  }
}
