/**
 * The garbage collector's picture of ownership (upstream's GraphBuilder and
 * its uidToNode graph, pkg/controller/garbagecollector): one node per object
 * uid, edges from owners to dependents, fed with every object the collector's
 * informers see. Pure bookkeeping: each change answers the work it causes
 * (uids to check for deletion, owners to orphan, dependents whose owner
 * reference crosses namespaces), the collector performs it.
 *
 * Invariants:
 * - an owner referenced before it was observed is a "virtual" node (its
 *   identity taken from the reference and the dependent's namespace); it is
 *   queued for a check, and becomes real when an informer observes it;
 * - `absent` remembers owners known not to exist, by uid AND namespace
 *   ('' for cluster scope): a uid alive in one namespace is absent for a
 *   dependent in another, because owner references carry no namespace;
 * - an object with a deletionTimestamp and the `foregroundDeletion` finalizer
 *   is "deleting dependents": when it starts, it and all its dependents are
 *   queued; when a dependent goes away or stops blocking, it is queued again;
 * - with the `orphan` finalizer it is queued for orphaning.
 * Start at `observe` and `forget`.
 */
import type { KubeObject, OwnerReference } from '../../k8s/types.ts';

export const FINALIZER_FOREGROUND = 'foregroundDeletion';
export const FINALIZER_ORPHAN = 'orphan';

export interface Identity {
  apiVersion: string;
  kind: string;
  /** '' for cluster-scoped objects (or unknown scope, for a virtual node of a cluster-scoped dependent). */
  namespace: string;
  name: string;
  uid: string;
}

export interface GraphNode {
  identity: Identity;
  owners: OwnerReference[];
  dependents: Set<string>;
  /** Known only from other objects' owner references. */
  virtual: boolean;
  beingDeleted: boolean;
  deletingDependents: boolean;
}

export interface GraphWork {
  /** uids for attemptToDelete. */
  remove: string[];
  /** uids for attemptToOrphan. */
  orphan: string[];
  /** Dependents with an owner reference that cannot be satisfied across namespaces. */
  invalidNamespace: { dependent: string; owner: OwnerReference }[];
}

const emptyWork = (): GraphWork => ({ remove: [], orphan: [], invalidNamespace: [] });

export function ownerReferencesOf(obj: KubeObject): OwnerReference[] {
  const refs: unknown = obj.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return [];
  return refs.filter((r): r is OwnerReference => typeof r === 'object' && r !== null && typeof (r as OwnerReference).uid === 'string' && (r as OwnerReference).uid !== '');
}

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  const list: unknown = obj.metadata?.finalizers;
  return Array.isArray(list) && list.includes(finalizer);
}

export function isBeingDeleted(obj: KubeObject): boolean {
  const ts: unknown = obj.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null;
}

export const absentKey = (uid: string, namespace: string): string => `${uid}|${namespace}`;

export class OwnerGraph {
  readonly #nodes = new Map<string, GraphNode>();
  readonly #absent = new Set<string>();

  get size(): number {
    return this.#nodes.size;
  }

  node(uid: string): GraphNode | undefined {
    return this.#nodes.get(uid);
  }

  isAbsent(uid: string, namespace: string): boolean {
    return this.#absent.has(absentKey(uid, namespace));
  }

  markAbsent(uid: string, namespace: string): void {
    this.#absent.add(absentKey(uid, namespace));
  }

  /** Dependents whose reference to `uid` has blockOwnerDeletion: they hold a foreground deletion. */
  blockingDependents(uid: string): GraphNode[] {
    const owner = this.#nodes.get(uid);
    if (owner === undefined) return [];
    const out: GraphNode[] = [];
    for (const d of owner.dependents) {
      const dep = this.#nodes.get(d);
      if (dep !== undefined && dep.owners.some((o) => o.uid === uid && o.blockOwnerDeletion === true)) out.push(dep);
    }
    return out;
  }

  /** An add or update seen by an informer. */
  observe(obj: KubeObject): GraphWork {
    const work = emptyWork();
    const uid = obj.metadata?.uid ?? '';
    if (uid === '') return work;
    const identity: Identity = { apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '', namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '', uid };
    const owners = ownerReferencesOf(obj);
    let node = this.#nodes.get(uid);
    const wasVirtual = node === undefined || node.virtual;
    const previousOwners = node?.virtual === false ? node.owners : [];
    if (node === undefined) {
      node = { identity, owners: [], dependents: new Set(), virtual: false, beingDeleted: false, deletingDependents: false };
      this.#nodes.set(uid, node);
    }
    node.identity = identity;
    node.virtual = false;

    const before = new Map(previousOwners.map((o) => [o.uid, o]));
    const after = new Map(owners.map((o) => [o.uid, o]));
    for (const [ownerUid, ref] of before) {
      const owner = this.#nodes.get(ownerUid);
      if (!after.has(ownerUid)) {
        owner?.dependents.delete(uid);
        if (owner?.deletingDependents === true) work.remove.push(ownerUid);
        this.#dropIfUnneeded(ownerUid);
      } else if (ref.blockOwnerDeletion === true && after.get(ownerUid)?.blockOwnerDeletion !== true && owner?.deletingDependents === true) {
        work.remove.push(ownerUid);
      }
    }
    node.owners = owners;
    for (const ref of owners) {
      let owner = this.#nodes.get(ref.uid);
      if (owner === undefined) {
        // An unchanged reference to an owner that is gone: the dependent was queued when the owner went.
        if (before.has(ref.uid)) continue;
        owner = { identity: { apiVersion: ref.apiVersion, kind: ref.kind, namespace: identity.namespace, name: ref.name, uid: ref.uid }, owners: [], dependents: new Set(), virtual: true, beingDeleted: false, deletingDependents: false };
        this.#nodes.set(ref.uid, owner);
        work.remove.push(ref.uid);
      }
      owner.dependents.add(uid);
      if (!owner.virtual && this.#crossesNamespace(owner, node)) {
        work.invalidNamespace.push({ dependent: uid, owner: ref });
        work.remove.push(uid);
      }
      if (owner.deletingDependents && !before.has(ref.uid)) work.remove.push(uid);
    }
    if (wasVirtual) {
      // An owner observed at last: dependents that referenced it from another namespace cannot keep it.
      for (const d of node.dependents) {
        const dep = this.#nodes.get(d);
        if (dep !== undefined && this.#crossesNamespace(node, dep)) {
          const ref = dep.owners.find((o) => o.uid === uid);
          if (ref !== undefined) work.invalidNamespace.push({ dependent: d, owner: ref });
          work.remove.push(d);
        }
      }
    }

    node.beingDeleted = isBeingDeleted(obj);
    if (node.beingDeleted && hasFinalizer(obj, FINALIZER_ORPHAN)) work.orphan.push(uid);
    const deletingDependents = node.beingDeleted && hasFinalizer(obj, FINALIZER_FOREGROUND);
    if (deletingDependents && !node.deletingDependents) {
      work.remove.push(...node.dependents, uid);
    }
    node.deletingDependents = deletingDependents;
    return work;
  }

  /** A deletion seen by an informer. */
  forget(obj: KubeObject): GraphWork {
    const uid = obj.metadata?.uid ?? '';
    const node = this.#nodes.get(uid);
    if (node === undefined) return emptyWork();
    return this.#remove(node, obj.metadata?.namespace ?? '');
  }

  /** The collector found a virtual (or not yet re-observed) node's object missing: the same as a deletion. */
  forgetMissing(uid: string): GraphWork {
    const node = this.#nodes.get(uid);
    if (node === undefined) return emptyWork();
    return this.#remove(node, node.identity.namespace);
  }

  #remove(node: GraphNode, namespace: string): GraphWork {
    const work = emptyWork();
    const uid = node.identity.uid;
    this.#nodes.delete(uid);
    this.markAbsent(uid, namespace);
    for (const ref of node.owners) {
      const owner = this.#nodes.get(ref.uid);
      if (owner === undefined) continue;
      owner.dependents.delete(uid);
      if (owner.deletingDependents) work.remove.push(ref.uid);
      this.#dropIfUnneeded(ref.uid);
    }
    work.remove.push(...node.dependents);
    return work;
  }

  /** A virtual node nobody references any more is dropped. */
  #dropIfUnneeded(uid: string): void {
    const node = this.#nodes.get(uid);
    if (node !== undefined && node.virtual && node.dependents.size === 0) this.#nodes.delete(uid);
  }

  /** A namespaced owner must live in its dependent's namespace. */
  #crossesNamespace(owner: GraphNode, dependent: GraphNode): boolean {
    return owner.identity.namespace !== '' && owner.identity.namespace !== dependent.identity.namespace;
  }
}
