/**
 * Adoption and release (k8s.io/kubernetes pkg/controller
 * BaseControllerRefManager.ClaimObject and its pod / ReplicaSet variants):
 * which of the objects a controller's selector finds it owns, adopts or lets go.
 *
 * `claimDecision` is the pure rule, for one object:
 * - owned by another controller → ignore;
 * - owned by us and matching → claimed; owned by us and no longer matching →
 *   release (remove our ownerReference), unless we are being deleted;
 * - an orphan → adopt when it matches, is not being deleted, is in our
 *   namespace and we are not being deleted; otherwise ignore.
 * `claimObjects` applies it: adoption first re-reads the controller from the
 * API server once per round (upstream's RecheckDeletionTimestamp: a
 * controller deleted or replaced since our cache saw it must not adopt), and
 * both patches are strategic merges that carry the object's uid, so they fail
 * instead of touching a recreated namesake. NotFound (and, for a release,
 * Invalid) means the object went away: not an error.
 */
import type { KubeClient } from '../../client/http-client.ts';
import { isInvalid, isNotFound } from '../../client/errors.ts';
import type { ResourceRef } from '../../client/resources.ts';
import type { Selector } from '../../k8s/label-selector.ts';
import { controllerRef, ownerReferenceFor } from '../../k8s/owner.ts';
import type { KubeObject } from '../../k8s/types.ts';

export type ClaimAction = 'ignore' | 'claimed' | 'release' | 'adopt';

function deleting(obj: KubeObject): boolean {
  const ts = obj.metadata?.deletionTimestamp;
  return ts !== undefined && ts !== null;
}

export function claimDecision(obj: KubeObject, controller: KubeObject, matches: boolean): ClaimAction {
  const ref = controllerRef(obj);
  const uid = controller.metadata?.uid ?? '';
  if (ref !== undefined) {
    if (ref.uid !== uid) return 'ignore';
    if (matches) return 'claimed';
    return deleting(controller) ? 'ignore' : 'release';
  }
  if (deleting(controller) || !matches || deleting(obj)) return 'ignore';
  const ns = controller.metadata?.namespace ?? '';
  if (ns !== '' && ns !== (obj.metadata?.namespace ?? '')) return 'ignore';
  return 'adopt';
}

export interface ClaimOptions {
  client: KubeClient;
  /** The controller (as cached): its uid, namespace, deletionTimestamp and kind. */
  controller: KubeObject;
  /** Where to re-read the controller before adopting. */
  controllerRef: ResourceRef;
  /** The kind of the claimed objects. */
  objectRef: ResourceRef;
  selector: Selector;
}

export interface ClaimResult<T> {
  claimed: T[];
  errors: unknown[];
}

/** Adoption is refused when the controller is gone, was replaced, or is being deleted. */
async function recheckController(options: ClaimOptions): Promise<void> {
  const { controller } = options;
  const name = controller.metadata?.name ?? '';
  const ns = controller.metadata?.namespace ?? '';
  const fresh = await options.client.get(options.controllerRef, name, ns === '' ? {} : { namespace: ns });
  if (fresh.metadata?.uid !== controller.metadata?.uid) {
    throw new Error(`original ${controller.kind ?? 'controller'} ${ns}/${name} is gone: got uid ${fresh.metadata?.uid ?? ''}, wanted ${controller.metadata?.uid ?? ''}`);
  }
  if (deleting(fresh)) throw new Error(`${ns}/${name} has just been deleted at ${String(fresh.metadata?.deletionTimestamp)}`);
}

export async function claimObjects<T extends KubeObject>(objects: readonly T[], options: ClaimOptions): Promise<ClaimResult<T>> {
  const claimed: T[] = [];
  const errors: unknown[] = [];
  let canAdopt: Promise<void> | undefined;
  for (const obj of objects) {
    const labels = obj.metadata?.labels;
    const action = claimDecision(obj, options.controller, options.selector.matches(labels));
    if (action === 'claimed') claimed.push(obj);
    else if (action === 'release') {
      try {
        await release(obj, options);
      } catch (err) {
        if (!isNotFound(err) && !isInvalid(err)) errors.push(err);
      }
    } else if (action === 'adopt') {
      try {
        canAdopt ??= recheckController(options);
        await canAdopt.catch((err: unknown) => {
          const kind = obj.kind ?? options.objectRef.kind;
          throw new Error(`can't adopt ${kind} ${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''} (${obj.metadata?.uid ?? ''}): ${err instanceof Error ? err.message : String(err)}`);
        });
        await adopt(obj, options);
        claimed.push(obj);
      } catch (err) {
        if (!isNotFound(err)) errors.push(err);
      }
    }
  }
  return { claimed, errors };
}

function adopt(obj: KubeObject, options: ClaimOptions): Promise<unknown> {
  const body = { metadata: { ownerReferences: [ownerReferenceFor(options.controller)], uid: obj.metadata?.uid } };
  return options.client.patch(options.objectRef, obj.metadata?.name ?? '', { type: 'strategic', body }, { namespace: obj.metadata?.namespace ?? '' });
}

function release(obj: KubeObject, options: ClaimOptions): Promise<unknown> {
  const body = { metadata: { ownerReferences: [{ $patch: 'delete', uid: options.controller.metadata?.uid }], uid: obj.metadata?.uid } };
  return options.client.patch(options.objectRef, obj.metadata?.name ?? '', { type: 'strategic', body }, { namespace: obj.metadata?.namespace ?? '' });
}
