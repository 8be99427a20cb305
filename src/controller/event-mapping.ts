/**
 * Which WorkloadSpreads an observed change concerns (spec §4.1): the
 * controller is level-triggered, so a change only has to name the keys
 * (`namespace/name`) to reconcile; the reconciler re-reads everything.
 *
 * The reference's triggers, exactly:
 * - a WorkloadSpread: any event;
 * - a pod WITH the marker: create and delete; an update only when the pod
 *   went from active to inactive or its version changed;
 * - a workload (Deployment, ReplicaSet, Job, CloneSet, whitelisted custom
 *   kinds): create and delete always; an update when its replicas changed
 *   (Job: parallelism; custom kinds: the whitelist's replicasPath), a
 *   CloneSet's new updateRevision differs from the old currentRevision, or a
 *   Deployment's revision annotation changed. A ReplicaSet also maps to the
 *   WorkloadSpread of its Deployment.
 * What we add (each a case the reference only caught on a later resync):
 * - StatefulSets, like any workload (the reference forgot to register it);
 * - any workload whose `metadata.generation` changed (a spec edit may change
 *   the count behind `targetFilter.replicasPathList`);
 * - a marked pod that the scheduler just declared Unschedulable (Adaptive
 *   rescheduling counts from that moment on);
 * - a marked pod that became ready or stopped being ready (the status's
 *   READY column and the per-subset ready gauge count ready pods);
 * - an unmarked pod that just got a node (it can now be adopted);
 * - a WorkloadSpread event also names the others of the same workload (when
 *   the one that counted is deleted, the duplicate it held back takes over);
 * - nodes: added, deleted, or changed in labels, taints, allocatable or
 *   `unschedulable` → the WorkloadSpreads of the pods on that node (the
 *   marker's, or for unmarked pods the one their owner chain leads to).
 * Everything here is synchronous and reads only the `MappingView` (caches).
 * Start at `EventMapper`.
 */
import { DEPLOYMENT_REVISION_ANNOTATION } from '../api/keys.ts';
import { replicasPathForGroupKind, type Whitelist } from '../api/whitelist.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { readMarker } from '../core/marker.ts';
import { matchWorkloadSpreadForPod, type OwnerLookup } from '../core/pod-selection.ts';
import { podVersion, type PodVersionOptions } from '../core/pod-version.ts';
import { walkReplicasPath } from '../core/replicas.ts';
import { deepEqual, isPlainObject } from '../k8s/json.ts';
import { controllerRef, isPodActive, isPodReady, isPodUnschedulable } from '../k8s/pod.ts';
import type { KubeObject, Node, ObjectMeta, Pod } from '../k8s/types.ts';
import { apiVersionGroup } from '../k8s/pod.ts';

/** What the mapper reads: the caches' indexes, the whitelist, a cache-only owner lookup. */
export interface MappingView {
  workloadSpreadsForTarget(namespace: string, group: string, kind: string, name: string): readonly WorkloadSpread[];
  listWorkloadSpreads(namespace: string): readonly WorkloadSpread[];
  podsOnNode(nodeName: string): readonly Pod[];
  whitelist(): Whitelist;
  ownerLookup(namespace: string): OwnerLookup;
  podVersionOptions(pod: Pod): PodVersionOptions;
}

export type ChangeType = 'add' | 'update' | 'delete';

/** The queue key of a WorkloadSpread. */
export function workloadSpreadKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Splits a queue key; undefined when it is not `namespace/name`. */
export function parseKey(key: string): { namespace: string; name: string } | undefined {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1 || key.indexOf('/', slash + 1) >= 0) return undefined;
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

function keyOfWs(ws: { metadata?: ObjectMeta }): string {
  return workloadSpreadKey(ws.metadata?.namespace ?? '', ws.metadata?.name ?? '');
}

function specField(obj: KubeObject | undefined, field: string): unknown {
  const spec = obj?.['spec'];
  return isPlainObject(spec) ? spec[field] : undefined;
}

function statusField(obj: KubeObject | undefined, field: string): unknown {
  const status = obj?.['status'];
  return isPlainObject(status) ? status[field] : undefined;
}

/** The value a custom kind's whitelist replicasPath points at (undefined when unreadable). */
function pathValue(obj: KubeObject | undefined, path: string): number | undefined {
  if (path === '') return undefined;
  const walked = walkReplicasPath(obj, path);
  return walked.ok ? walked.value : undefined;
}

/**
 * D25: whether a WorkloadSpread update changed its status and nothing else —
 * not the spec, labels, annotations, finalizers, owners or deletion. Compared
 * field by field rather than by generation, so a spec change is never taken
 * for a status one whoever wrote it.
 */
export function onlyStatusChanged(old: { metadata?: ObjectMeta; spec?: unknown; status?: unknown }, obj: { metadata?: ObjectMeta; spec?: unknown; status?: unknown }): boolean {
  const a = old.metadata ?? {};
  const b = obj.metadata ?? {};
  return (
    (a.deletionTimestamp ?? undefined) === (b.deletionTimestamp ?? undefined) &&
    (a.generation ?? 0) === (b.generation ?? 0) &&
    deepEqual(old.spec, obj.spec) &&
    deepEqual(a.labels ?? {}, b.labels ?? {}) &&
    deepEqual(a.annotations ?? {}, b.annotations ?? {}) &&
    deepEqual(a.finalizers ?? [], b.finalizers ?? []) &&
    deepEqual(a.ownerReferences ?? [], b.ownerReferences ?? [])
  );
}

export class EventMapper {
  readonly #view: MappingView;

  constructor(view: MappingView) {
    this.#view = view;
  }

  /** Any WorkloadSpread event: that WorkloadSpread, and the others that target the same workload. */
  forWorkloadSpread(ws: { metadata?: ObjectMeta; spec?: WorkloadSpread['spec'] }): string[] {
    if (!ws.metadata?.name) return [];
    const keys = new Set([keyOfWs(ws)]);
    const ref = ws.spec?.targetRef;
    const gv = ref === undefined || ref === null ? undefined : apiVersionGroup(ref.apiVersion ?? '');
    if (ref && gv?.ok === true) {
      for (const other of this.#view.workloadSpreadsForTarget(ws.metadata.namespace ?? '', gv.group, ref.kind, ref.name)) keys.add(keyOfWs(other));
    }
    return [...keys];
  }

  /** A pod event (spec §4.1 plus the two additions above). */
  forPod(type: ChangeType, pod: Pod, old?: Pod): string[] {
    const namespace = pod.metadata?.namespace ?? '';
    const marker = readMarker(pod);
    if (marker !== undefined && marker.name !== '') {
      const key = workloadSpreadKey(namespace, marker.name);
      if (type !== 'update' || old === undefined) return [key];
      if (isPodActive(old) && !isPodActive(pod)) return [key];
      if (podVersion(old, this.#view.podVersionOptions(old)) !== podVersion(pod, this.#view.podVersionOptions(pod))) return [key];
      if (!isPodUnschedulable(old) && isPodUnschedulable(pod)) return [key];
      if (isPodReady(old) !== isPodReady(pod)) return [key];
      return [];
    }
    if (type === 'update' && old !== undefined && !old.spec?.nodeName && pod.spec?.nodeName) return this.#owningWorkloadSpread(pod);
    return [];
  }

  /** A workload event: the WorkloadSpreads targeting it (and a ReplicaSet's Deployment). */
  forWorkload(type: ChangeType, group: string, kind: string, obj: KubeObject, old?: KubeObject): string[] {
    if (type === 'update' && old !== undefined && !this.#workloadChanged(group, kind, old, obj)) return [];
    const namespace = obj.metadata?.namespace ?? '';
    const keys = new Set<string>();
    for (const ws of this.#view.workloadSpreadsForTarget(namespace, group, kind, obj.metadata?.name ?? '')) keys.add(keyOfWs(ws));
    if (group === 'apps' && kind === 'ReplicaSet') {
      const owner = controllerRef(obj);
      const gv = owner === undefined ? undefined : apiVersionGroup(owner.apiVersion);
      if (owner !== undefined && gv?.ok === true && gv.group === 'apps' && owner.kind === 'Deployment') {
        for (const ws of this.#view.workloadSpreadsForTarget(namespace, 'apps', 'Deployment', owner.name)) keys.add(keyOfWs(ws));
      }
    }
    return [...keys];
  }

  #workloadChanged(group: string, kind: string, old: KubeObject, obj: KubeObject): boolean {
    if ((old.metadata?.generation ?? 0) !== (obj.metadata?.generation ?? 0)) return true;
    if (group === 'batch' && kind === 'Job') return !deepEqual(specField(old, 'parallelism'), specField(obj, 'parallelism'));
    if (!deepEqual(specField(old, 'replicas'), specField(obj, 'replicas'))) return true;
    if (group === 'apps' && kind === 'Deployment') {
      return old.metadata?.annotations?.[DEPLOYMENT_REVISION_ANNOTATION] !== obj.metadata?.annotations?.[DEPLOYMENT_REVISION_ANNOTATION];
    }
    if (group === 'apps.kruise.io' && kind === 'CloneSet') {
      return statusField(obj, 'updateRevision') !== statusField(old, 'currentRevision');
    }
    const path = replicasPathForGroupKind(this.#view.whitelist(), group, kind);
    if (path !== undefined && path !== 'spec.replicas') return pathValue(old, path) !== pathValue(obj, path);
    return false;
  }

  /** A node event: the WorkloadSpreads of the pods bound to it, when something adoption reads changed. */
  forNode(type: ChangeType, node: Node, old?: Node): string[] {
    if (type === 'update' && old !== undefined && !nodeChanged(old, node)) return [];
    const keys = new Set<string>();
    for (const pod of this.#view.podsOnNode(node.metadata?.name ?? '')) {
      const marker = readMarker(pod);
      if (marker !== undefined && marker.name !== '') keys.add(workloadSpreadKey(pod.metadata?.namespace ?? '', marker.name));
      else for (const key of this.#owningWorkloadSpread(pod)) keys.add(key);
    }
    return [...keys];
  }

  /** The WorkloadSpread an unmarked pod belongs to through its owner chain (cache only). */
  #owningWorkloadSpread(pod: Pod): string[] {
    const namespace = pod.metadata?.namespace ?? '';
    const candidates = this.#view.listWorkloadSpreads(namespace);
    if (candidates.length === 0) return [];
    const match = matchWorkloadSpreadForPod(pod, candidates, this.#view.ownerLookup(namespace), this.#view.whitelist());
    return match.kind === 'matched' ? [keyOfWs(match.ws)] : [];
  }
}

/** Whether a node changed in what adoption (labels, taints) or the simulation schedule (allocatable, cordon) reads. */
export function nodeChanged(old: Node, node: Node): boolean {
  return (
    !deepEqual(old.metadata?.labels ?? {}, node.metadata?.labels ?? {}) ||
    !deepEqual(old.spec?.taints ?? [], node.spec?.taints ?? []) ||
    (old.spec?.unschedulable === true) !== (node.spec?.unschedulable === true) ||
    !deepEqual(old.status?.allocatable ?? {}, node.status?.allocatable ?? {})
  );
}
