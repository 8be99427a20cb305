/**
 * Owner references (metav1.GetControllerOf, metav1.NewControllerRef): the
 * controller of an object is its first ownerReference with `controller: true`.
 */
import type { KubeObject, OwnerReference } from './types.ts';
import { isPlainObject } from './json.ts';

/** The ownerReference with controller=true, if any (the first one, as upstream). */
export function controllerRef(obj: KubeObject): OwnerReference | undefined {
  const refs: unknown = obj?.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return undefined;
  for (const ref of refs as unknown[]) {
    if (isPlainObject(ref) && ref.controller === true) return ref as unknown as OwnerReference;
  }
  return undefined;
}

/** Whether `obj` is controlled by the object with uid `ownerUid`. */
export function isControlledBy(obj: KubeObject, ownerUid: string): boolean {
  const ref = controllerRef(obj);
  return ref !== undefined && ownerUid !== '' && ref.uid === ownerUid;
}

/**
 * A reference to `owner`. As a controller reference (the default) it also
 * blocks the owner's foreground deletion, like metav1.NewControllerRef.
 */
export function ownerReferenceFor(owner: KubeObject, controller = true): OwnerReference {
  const ref: OwnerReference = {
    apiVersion: owner.apiVersion ?? '',
    kind: owner.kind ?? '',
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
  };
  if (controller) {
    ref.controller = true;
    ref.blockOwnerDeletion = true;
  }
  return ref;
}
