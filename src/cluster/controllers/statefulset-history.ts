/**
 * The writes behind a StatefulSet's revision history (upstream's
 * history.realHistory and the StatefulSet controller's getStatefulSetRevisions,
 * AdoptOrphanRevisions and truncateHistory), on top of the pure rules of
 * statefulset-revisions.ts and the generic writes of controller-history.ts:
 * - the update revision is the one whose data equals the live template: the
 *   newest revision if it does; an older equal one is renumbered to become the
 *   newest (a rollback); otherwise a new revision is created, and a name taken
 *   by different data bumps the collision count and rehashes;
 * - the current revision is the one `status.currentRevision` names, else the
 *   update revision (a new set);
 * - orphan revisions matching the selector are adopted, after a live re-read
 *   of the set proves it is neither gone nor being deleted;
 * - old revisions beyond `revisionHistoryLimit` that neither a pod nor the
 *   current/update revision uses are deleted, oldest first.
 */
import { isNotFound } from '../../client/errors.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { BUILTIN } from '../../client/resources.ts';
import { ownerReferenceFor } from '../../k8s/owner.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import { isTerminating, revisionOf } from './statefulset-pods.ts';
import { resolveSetRevisions, truncateSetHistory, type SetRevisions } from './controller-history.ts';
import { nameOf, newRevision, type ControllerRevision } from './statefulset-revisions.ts';

export type { SetRevisions } from './controller-history.ts';

const setRef = (set: KubeObject) => ownerReferenceFor({ ...set, apiVersion: 'apps/v1', kind: 'StatefulSet' });

/** AdoptOrphanRevisions (with the set re-read first, as canAdoptFunc does). */
export async function adoptOrphanRevisions(client: KubeClient, set: KubeObject, orphans: readonly ControllerRevision[]): Promise<void> {
  if (orphans.length === 0) return;
  const ns = set.metadata?.namespace ?? '';
  const fresh = await client.get(BUILTIN.statefulsets, set.metadata?.name ?? '', { namespace: ns });
  if (fresh.metadata?.uid !== set.metadata?.uid || isTerminating(fresh)) throw new Error(`can't adopt ControllerRevisions: StatefulSet ${ns}/${set.metadata?.name ?? ''} is gone or being deleted`);
  for (const r of orphans) {
    const refs = [...(r.metadata?.ownerReferences ?? []), setRef(set)];
    try {
      await client.patch(BUILTIN.controllerrevisions, nameOf(r), { type: 'merge', body: { metadata: { ownerReferences: refs, resourceVersion: r.metadata?.resourceVersion } } }, { namespace: ns });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** getStatefulSetRevisions over a sorted history (controller-history.ts). */
export function resolveRevisions(client: KubeClient, set: KubeObject, sorted: readonly ControllerRevision[]): Promise<SetRevisions> {
  return resolveSetRevisions(client, set, 'StatefulSet', sorted, (revision, collisionCount) => newRevision(set, revision, collisionCount));
}

/** truncateHistory: drop the oldest revisions no pod, nor the current or update revision, uses. */
export function truncateHistory(client: KubeClient, set: KubeObject, limit: number, pods: readonly Pod[], sorted: readonly ControllerRevision[], revisions: SetRevisions): Promise<void> {
  const live = new Set([nameOf(revisions.current), nameOf(revisions.update), ...pods.map(revisionOf)]);
  return truncateSetHistory(client, set, limit, live, sorted);
}
