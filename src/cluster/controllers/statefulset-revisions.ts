/**
 * The revision history of a StatefulSet: the generic ControllerRevision rules
 * of controller-revisions.ts, with the StatefulSet as the revisions' owner
 * (`newRevision`) and the label its pods carry. Pure.
 */
import type { KubeObject } from '../../k8s/types.ts';
import { CONTROLLER_REVISION_LABEL, newControllerRevision, type ControllerRevision } from './controller-revisions.ts';

export {
  applyRevision,
  CONTROLLER_REVISION_HASH_LABEL,
  equalRevision,
  findEqualRevisions,
  fnv32,
  goJson,
  hashRevision,
  nameOf,
  nextRevisionNumber,
  revisionName,
  revisionNumber,
  revisionPatch,
  sortRevisions,
  templateOf,
  type ControllerRevision,
} from './controller-revisions.ts';

/** The label a StatefulSet's pods carry with the name of their revision. */
export const STATEFULSET_REVISION_LABEL = CONTROLLER_REVISION_LABEL;

/** The revision a StatefulSet would create now (controller-revisions.ts `newControllerRevision`). */
export function newRevision(set: KubeObject, revision: number, collisionCount: number): ControllerRevision {
  return newControllerRevision(set, { apiVersion: 'apps/v1', kind: 'StatefulSet' }, revision, collisionCount);
}
