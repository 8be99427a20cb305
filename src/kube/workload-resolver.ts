/**
 * Workload resolution for the controller, from the caches with the API server
 * as the fallback (spec §5, §6.2; user-issues #4, #12, #18):
 *
 * - `lookup(namespace, ref, exactVersion)`: an object from the cache view
 *   when it can answer, else read through discovery (api-reader.ts).
 * - `targetWorkload(ws)`: the target by its REAL group and version (an
 *   `apps.kruise.io/v1beta1` CloneSet or an Advanced StatefulSet is fetched
 *   as such; the caches serve only the version they watch).
 * - `controllerReplicas(ws, workload)`: core's `controllerWorkloadReplicas`,
 *   with the scale subresource for custom kinds whose count is otherwise
 *   unknown (and its `status.selector` as the pod fallback).
 * - `resolveForReconcile(ws)`: everything the reconciler feeds `planReconcile`
 *   with: the workload, its replicas, its pods (`podsForWorkloadSpread` over
 *   candidates from the owner index), the latest version, whether deletion
 *   cost is written (D7) and the pod-version options (D12).
 * Errors are data. Start at `resolveForReconcile`.
 */
import { POD_TEMPLATE_HASH_LABEL, VERSION_IGNORED } from '../api/keys.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { writesDeletionCost } from '../core/deletion-cost.ts';
import type { ObjectRef } from '../core/cluster-view.ts';
import type { PodVersionOptions } from '../core/pod-version.ts';
import { CONTROLLER_KNOWN_KINDS, controllerWorkloadReplicas, readsScaleSubresource, replicasWithScale } from '../core/replicas.ts';
import { podsForWorkloadSpread } from '../core/workload-pods.ts';
import { cloneSetRecreates, latestWorkloadVersion, type LatestVersion } from '../core/workload-version.ts';
import { byName } from '../k8s/by-name.ts';
import { parseSelector } from '../k8s/label-selector.ts';
import type { Lookup } from '../k8s/lookup.ts';
import { apiVersionGroup, controllerRef } from '../k8s/pod.ts';
import { parseTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { describeError, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import type { ResourceRef, Scale } from '../client/resources.ts';
import { ApiReader } from './api-reader.ts';
import type { ManagerCaches } from './caches.ts';

export type WorkloadFetch = { ok: true; workload: KubeObject | undefined } | { ok: false; error: string };

export type ControllerReplicas =
  | { ok: true; replicas: number; fallbackSelector?: { matches(labels: Record<string, string>): boolean } }
  | { ok: false; error: string };

export interface ReconcileInputs {
  /** The target workload; undefined when it does not exist (yet). */
  workload: KubeObject | undefined;
  workloadReplicas: number;
  /** The WorkloadSpread's pods (cached, trimmed), in name order. */
  pods: Pod[];
  latestVersion: LatestVersion;
  writeDeletionCost: boolean;
  podVersionOptions: PodVersionOptions;
}

export type ReconcileResolution = { ok: true; inputs: ReconcileInputs } | { ok: false; error: string };

export interface WorkloadResolverOptions {
  caches: ManagerCaches;
  /** Defaults to the caches' client. */
  client?: KubeClient;
  /** Defaults to a reader over the client. */
  reader?: ApiReader;
  log?: Logger;
}

export class WorkloadResolver {
  readonly #caches: ManagerCaches;
  readonly #client: KubeClient;
  readonly #reader: ApiReader;
  readonly #log: Logger;

  constructor(options: WorkloadResolverOptions) {
    this.#caches = options.caches;
    this.#client = options.client ?? options.caches.client;
    this.#reader = options.reader ?? new ApiReader(this.#client);
    this.#log = options.log ?? silentLogger;
  }

  // ---- single objects ----

  /** One object of a workload kind: the cache view's answer, or a read through discovery when it has none. */
  async lookup(namespace: string, ref: ObjectRef, options: { exactVersion?: boolean } = {}): Promise<Lookup<KubeObject>> {
    const answer = this.#caches.view.object(namespace, ref, options);
    return 'read' in answer ? this.#reader.object(namespace, ref.apiVersion, ref.kind, ref.name) : answer;
  }

  // ---- the target workload ----

  /** The WorkloadSpread's target, by its real group and version; undefined when it does not exist. */
  async targetWorkload(ws: WorkloadSpread): Promise<WorkloadFetch> {
    const result = await this.lookup(ws.metadata.namespace ?? '', ws.spec.targetRef, { exactVersion: true });
    if ('found' in result) return { ok: true, workload: result.found };
    if ('notFound' in result) return { ok: true, workload: undefined };
    return { ok: false, error: result.error };
  }

  /**
   * The controller's replica count (spec §5.2), and for custom kinds the pod
   * selector of their scale subresource (`status.selector`), which finds pods
   * the workload does not own itself (Argo Rollouts: ReplicaSets own them).
   * The scale subresource is read only for custom kinds, and only when the
   * count is otherwise unknown or the workload owns no pod directly.
   */
  async controllerReplicas(ws: WorkloadSpread, workload: KubeObject | undefined): Promise<ControllerReplicas> {
    const whitelist = this.#caches.whitelist();
    const plain = controllerWorkloadReplicas(ws, workload, whitelist);
    if (!plain.ok || workload === undefined) return plain;
    // An index lookup: the pods the workload owns itself.
    const owns = this.#caches.podCountOwnedBy(workload.metadata?.uid ?? '') > 0;
    if (!readsScaleSubresource(ws, plain, owns)) return plain;
    const scale = await this.#scaleOf(ws);
    if (scale === undefined) return plain;
    const counted = replicasWithScale(ws, workload, whitelist, plain, owns, {
      ...(typeof scale.spec?.replicas === 'number' ? { replicas: scale.spec.replicas } : {}),
      ...(typeof scale.status?.selector === 'string' ? { selector: scale.status.selector } : {}),
    });
    if (!counted.ok) return counted;
    if (counted.selector !== undefined) {
      const parsed = parseSelector(counted.selector);
      if (parsed.ok) return { ok: true, replicas: counted.replicas, fallbackSelector: parsed.selector };
    }
    return { ok: true, replicas: counted.replicas };
  }

  /** The target's scale subresource; undefined when the kind has none (or it cannot be read). */
  async #scaleOf(ws: WorkloadSpread): Promise<Scale | undefined> {
    const target = ws.spec.targetRef;
    const resolved = await this.#client.resources.resolve(target.apiVersion, target.kind);
    if (!resolved.ok) return undefined;
    try {
      return await this.#client.getScale(resolved.ref as ResourceRef, target.name, { namespace: ws.metadata?.namespace ?? '' });
    } catch (err) {
      if (!isNotFound(err)) this.#log.warn({ namespace: ws.metadata?.namespace ?? '', name: ws.metadata?.name ?? '', err: describeError(err) }, 'cannot read the scale subresource');
      return undefined;
    }
  }

  // ---- versions ----

  /** D12: whether a pod's CloneSet recreates pods (so its pods are versioned); read from the cache. */
  podVersionOptions(pod: Pod): PodVersionOptions {
    const owner = controllerRef(pod);
    if (owner === undefined || owner.kind !== 'CloneSet') return {};
    const gv = apiVersionGroup(owner.apiVersion);
    if (!gv.ok || gv.group !== 'apps.kruise.io') return {};
    const cached = this.#caches.workloadStore('apps.kruise.io', 'CloneSet');
    return { cloneSetRecreate: cloneSetRecreates(cached?.store.get(pod.metadata?.namespace, owner.name)) };
  }

  // ---- the reconciler's inputs ----

  async resolveForReconcile(ws: WorkloadSpread): Promise<ReconcileResolution> {
    const target = ws.spec.targetRef;
    const fetched = await this.targetWorkload(ws);
    if (!fetched.ok) return fetched;
    const workload = fetched.workload;
    const replicas = await this.controllerReplicas(ws, workload);
    if (!replicas.ok) return { ok: false, error: `workload replicas: ${replicas.error}` };

    const gv = apiVersionGroup(target.apiVersion);
    const group = gv.ok ? gv.group : '';
    const isCloneSet = group === 'apps.kruise.io' && target.kind === 'CloneSet';
    const podVersionOptions: PodVersionOptions = isCloneSet ? { cloneSetRecreate: cloneSetRecreates(workload) } : {};
    const namespace = ws.metadata?.namespace ?? '';
    const uid = workload?.metadata?.uid ?? '';
    const replicaSets = uid === '' ? [] : this.#caches.replicaSetsOwnedBy(uid);

    let candidates: Pod[] = [];
    if (workload !== undefined && uid !== '') {
      const named = new Map<string, Pod>();
      for (const owner of [uid, ...replicaSets.map((rs) => rs.metadata?.uid ?? '')]) {
        if (owner === '') continue;
        for (const pod of this.#caches.podsOwnedBy(owner)) named.set(pod.metadata?.name ?? '', pod);
      }
      candidates = [...named.values()];
      if (candidates.length === 0 && replicas.ok && 'fallbackSelector' in replicas) candidates = this.#caches.listPods(namespace);
      candidates.sort(byName);
    }
    const selected = podsForWorkloadSpread({
      ws,
      workload,
      replicaSets,
      pods: candidates,
      workloadReplicas: replicas.replicas,
      ...(replicas.fallbackSelector === undefined ? {} : { fallbackSelector: replicas.fallbackSelector }),
    });
    if (!selected.ok) return { ok: false, error: selected.error };

    const builtinKind = isBuiltinOrKruise(group, target.kind);
    const ownedByReplicaSets = !builtinKind && selected.pods.length > 0 && selected.pods.every((p) => isReplicaSetOwned(p));
    const writeDeletionCost = writesDeletionCost(target, { ownedByReplicaSets });
    let latestVersion = latestWorkloadVersion(target, workload, replicaSets, podVersionOptions.cloneSetRecreate === undefined ? {} : { cloneSetRecreate: podVersionOptions.cloneSetRecreate });
    if (ownedByReplicaSets && workload !== undefined) latestVersion = this.#customLatestVersion(workload, selected.pods);
    return { ok: true, inputs: { workload, workloadReplicas: replicas.replicas, pods: selected.pods, latestVersion, writeDeletionCost, podVersionOptions } };
  }

  /**
   * D7 for custom kinds whose pods are owned by ReplicaSets (Argo Rollouts):
   * the latest version is the hash of the ReplicaSet whose template equals the
   * workload's `spec.template` (the Deployment rule, which needs only the
   * selector, the template and the ReplicaSets' controller); failing that, the
   * newest ReplicaSet holding pods. Without it every version would count as old.
   */
  #customLatestVersion(workload: KubeObject, pods: readonly Pod[]): LatestVersion {
    const owned = this.#caches.replicaSetsOwnedBy(workload.metadata?.uid ?? '');
    const byTemplate = latestWorkloadVersion({ apiVersion: 'apps/v1', kind: 'Deployment' }, workload, owned);
    if (byTemplate.ok) return byTemplate;
    const rsUids = new Set(pods.map((p) => controllerRef(p)?.uid ?? ''));
    let newest: { at: number; hash: string } | undefined;
    for (const rs of this.#caches.replicaSets.list(workload.metadata?.namespace)) {
      if (!rsUids.has(rs.metadata?.uid ?? '')) continue;
      const at = parseTime(rs.metadata?.creationTimestamp) ?? 0;
      const hash = rs.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL] ?? '';
      if (newest === undefined || at > newest.at) newest = { at, hash };
    }
    return { ok: true, version: newest?.hash || VERSION_IGNORED };
  }
}

const KNOWN_KINDS = CONTROLLER_KNOWN_KINDS;

function isBuiltinOrKruise(group: string, kind: string): boolean {
  return KNOWN_KINDS.has(`${group}/${kind}`);
}

function isReplicaSetOwned(pod: Pod): boolean {
  const owner = controllerRef(pod);
  if (owner?.kind !== 'ReplicaSet') return false;
  const gv = apiVersionGroup(owner.apiVersion);
  return gv.ok && gv.group === 'apps';
}
