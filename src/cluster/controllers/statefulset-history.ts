/**
 * The writes behind a StatefulSet's revision history (upstream's
 * history.realHistory and the StatefulSet controller's getStatefulSetRevisions,
 * AdoptOrphanRevisions and truncateHistory), on top of the pure rules of
 * statefulset-revisions.ts:
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
import { isAlreadyExists, isNotFound } from '../../client/errors.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { BUILTIN } from '../../client/resources.ts';
import { ownerReferenceFor } from '../../k8s/owner.ts';
import { asRecord } from '../../k8s/raw-json.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import { isTerminating, revisionOf } from './statefulset-pods.ts';
import { equalRevision, findEqualRevisions, hashRevision, nameOf, newRevision, nextRevisionNumber, revisionName, type ControllerRevision } from './statefulset-revisions.ts';

const MAX_COLLISIONS = 100;

export interface SetRevisions {
  current: ControllerRevision;
  update: ControllerRevision;
  collisionCount: number;
}

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

/** getStatefulSetRevisions over a sorted history. */
export async function resolveRevisions(client: KubeClient, set: KubeObject, sorted: readonly ControllerRevision[]): Promise<SetRevisions> {
  const status = asRecord(set['status']) ?? {};
  let collisionCount = typeof status['collisionCount'] === 'number' ? status['collisionCount'] : 0;
  const candidate = newRevision(set, nextRevisionNumber(sorted), collisionCount);
  const equal = findEqualRevisions(sorted, candidate);
  const last = sorted[sorted.length - 1];
  const lastEqual = equal[equal.length - 1];
  let update: ControllerRevision;
  if (lastEqual !== undefined && nameOf(last) === nameOf(lastEqual)) {
    update = lastEqual;
  } else if (lastEqual !== undefined) {
    update = await client.patch<ControllerRevision>(BUILTIN.controllerrevisions, nameOf(lastEqual), { type: 'merge', body: { revision: candidate.revision } }, { namespace: set.metadata?.namespace ?? '' });
  } else {
    const created = await createRevision(client, set, candidate, collisionCount);
    update = created.revision;
    collisionCount = created.collisionCount;
  }
  const currentName = typeof status['currentRevision'] === 'string' ? status['currentRevision'] : '';
  const current = sorted.find((r) => nameOf(r) === currentName) ?? update;
  return { current, update, collisionCount };
}

/** CreateControllerRevision: on a name held by different data, bump the collision count and rehash. */
async function createRevision(client: KubeClient, set: KubeObject, revision: ControllerRevision, startCount: number): Promise<{ revision: ControllerRevision; collisionCount: number }> {
  const ns = set.metadata?.namespace ?? '';
  let collisionCount = startCount;
  for (let i = 0; i < MAX_COLLISIONS; i++) {
    const name = revisionName(set.metadata?.name ?? '', hashRevision(revision.data, collisionCount));
    const body: ControllerRevision = { ...revision, metadata: { ...revision.metadata, name } };
    try {
      return { revision: await client.create<ControllerRevision>(BUILTIN.controllerrevisions, body, { namespace: ns }), collisionCount };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Our cache may not have caught up with a revision we created: same data means it is ours.
      const existing = await client.get<ControllerRevision>(BUILTIN.controllerrevisions, name, { namespace: ns });
      if (equalRevision(existing, revision)) return { revision: existing, collisionCount };
      collisionCount++;
    }
  }
  throw new Error(`StatefulSet ${ns}/${set.metadata?.name ?? ''}: no free ControllerRevision name after ${MAX_COLLISIONS} collisions`);
}

/** truncateHistory: drop the oldest revisions no pod, nor the current or update revision, uses. */
export async function truncateHistory(client: KubeClient, set: KubeObject, limit: number, pods: readonly Pod[], sorted: readonly ControllerRevision[], revisions: SetRevisions): Promise<void> {
  const live = new Set([nameOf(revisions.current), nameOf(revisions.update), ...pods.map(revisionOf)]);
  const history = sorted.filter((r) => !live.has(nameOf(r)));
  for (const r of history.slice(0, Math.max(0, history.length - limit))) {
    try {
      await client.delete(BUILTIN.controllerrevisions, nameOf(r), { namespace: set.metadata?.namespace ?? '' });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
