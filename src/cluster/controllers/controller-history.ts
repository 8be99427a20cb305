/**
 * The writes behind a controller's revision history (upstream's
 * history.realHistory and the StatefulSet controller's getStatefulSetRevisions
 * and truncateHistory, which OpenKruise's CloneSet repeats), on top of the
 * pure rules of controller-revisions.ts:
 * - the update revision is the one whose data equals the live template: the
 *   newest revision if it does; an older equal one is renumbered to become the
 *   newest (a rollback); otherwise a new revision is created, and a name taken
 *   by different data bumps the collision count and rehashes;
 * - the current revision is the one `status.currentRevision` names, else the
 *   update revision (a new set);
 * - old revisions beyond the history limit that are not live (used by a pod,
 *   or the current or update revision) are deleted, oldest first.
 * The caller says how to build a candidate revision (its owner kind) and
 * which revisions are live.
 */
import { isAlreadyExists, isNotFound } from '../../client/errors.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { BUILTIN } from '../../client/resources.ts';
import { asRecord } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { equalRevision, findEqualRevisions, hashRevision, nameOf, nextRevisionNumber, revisionName, type ControllerRevision } from './controller-revisions.ts';

const MAX_COLLISIONS = 100;

export interface SetRevisions {
  current: ControllerRevision;
  update: ControllerRevision;
  collisionCount: number;
}

/** Builds the revision the set would create now, numbered `revision`, named with `collisionCount`. */
export type RevisionBuilder = (revision: number, collisionCount: number) => ControllerRevision;

/** getStatefulSetRevisions (CloneSet: getActiveRevisions) over a sorted history; `kind` only names the set in errors. */
export async function resolveSetRevisions(client: KubeClient, set: KubeObject, kind: string, sorted: readonly ControllerRevision[], build: RevisionBuilder): Promise<SetRevisions> {
  const status = asRecord(set['status']) ?? {};
  let collisionCount = typeof status['collisionCount'] === 'number' ? status['collisionCount'] : 0;
  const candidate = build(nextRevisionNumber(sorted), collisionCount);
  const equal = findEqualRevisions(sorted, candidate);
  const last = sorted[sorted.length - 1];
  const lastEqual = equal[equal.length - 1];
  let update: ControllerRevision;
  if (lastEqual !== undefined && nameOf(last) === nameOf(lastEqual)) {
    update = lastEqual;
  } else if (lastEqual !== undefined) {
    update = await client.patch<ControllerRevision>(BUILTIN.controllerrevisions, nameOf(lastEqual), { type: 'merge', body: { revision: candidate.revision } }, { namespace: set.metadata?.namespace ?? '' });
  } else {
    const created = await createRevision(client, set, kind, candidate, collisionCount);
    update = created.revision;
    collisionCount = created.collisionCount;
  }
  const currentName = typeof status['currentRevision'] === 'string' ? status['currentRevision'] : '';
  const current = sorted.find((r) => nameOf(r) === currentName) ?? update;
  return { current, update, collisionCount };
}

/** CreateControllerRevision: on a name held by different data, bump the collision count and rehash. */
async function createRevision(client: KubeClient, set: KubeObject, kind: string, revision: ControllerRevision, startCount: number): Promise<{ revision: ControllerRevision; collisionCount: number }> {
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
  throw new Error(`${kind} ${ns}/${set.metadata?.name ?? ''}: no free ControllerRevision name after ${MAX_COLLISIONS} collisions`);
}

/** truncateHistory: drop the oldest revisions of a sorted history that are not `live`, keeping `limit` of them. */
export async function truncateSetHistory(client: KubeClient, set: KubeObject, limit: number, live: ReadonlySet<string>, sorted: readonly ControllerRevision[]): Promise<void> {
  const history = sorted.filter((r) => !live.has(nameOf(r)));
  for (const r of history.slice(0, Math.max(0, history.length - limit))) {
    try {
      await client.delete(BUILTIN.controllerrevisions, nameOf(r), { namespace: set.metadata?.namespace ?? '' });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
