/**
 * The controller's writes to pods, each minimal and idempotent (STYLE §7):
 *
 * - deletion cost (spec §4.5 step 3) and the managed label (D21): one JSON
 *   merge patch of the annotation and/or the label, sent only when the
 *   stored value differs;
 * - adoption (spec §4.3): a strategic merge patch of metadata only (the
 *   marker without a uid, plus the subset patch's metadata), carrying the
 *   pod's UID so a pod deleted and recreated under the same name in the
 *   meantime is never adopted by mistake (the server rejects a UID change);
 * - deleting a schedule-failed pod (spec §4.6): DELETE with a UID
 *   precondition, so only the pod that was judged stuck goes.
 * A pod that is already gone is not an error for any of them.
 * Results are data: `{ ok: true }` or `{ ok: false, notFound, message }`.
 */
import { MANAGED_LABEL, MANAGED_LABEL_VALUE, POD_DELETION_COST_ANNOTATION } from '../api/keys.ts';
import type { AdoptionPatch } from '../core/adoption.ts';
import type { Pod } from '../k8s/types.ts';
import { describeError, isConflict, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { BUILTIN } from '../client/resources.ts';

export type PodWriteResult = { ok: true; skipped?: boolean } | { ok: false; notFound: boolean; conflict: boolean; message: string; error: unknown };

function failure(error: unknown): PodWriteResult {
  return { ok: false, notFound: isNotFound(error), conflict: isConflict(error), message: describeError(error), error };
}

export class PodWriter {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  /**
   * One JSON merge patch of the pod's metadata: the deletion-cost annotation
   * set to `cost` and/or the managed label added, each only where the cached
   * copy differs (nothing to change → no request).
   */
  async patchMetadata(pod: Pod, change: { cost?: number; managed?: boolean }): Promise<PodWriteResult> {
    const metadata: { annotations?: Record<string, string>; labels?: Record<string, string> } = {};
    if (change.cost !== undefined && pod.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION] !== String(change.cost)) {
      metadata.annotations = { [POD_DELETION_COST_ANNOTATION]: String(change.cost) };
    }
    if (change.managed === true && pod.metadata?.labels?.[MANAGED_LABEL] !== MANAGED_LABEL_VALUE) {
      metadata.labels = { [MANAGED_LABEL]: MANAGED_LABEL_VALUE };
    }
    if (metadata.annotations === undefined && metadata.labels === undefined) return { ok: true, skipped: true };
    try {
      await this.#client.patch(BUILTIN.pods, pod.metadata?.name ?? '', { type: 'merge', body: { metadata } }, { namespace: pod.metadata?.namespace ?? '' });
      return { ok: true };
    } catch (error) {
      return failure(error);
    }
  }

  /** Applies an adoption patch (metadata only) to the pod with this name and UID. */
  async adopt(namespace: string, name: string, uid: string | undefined, patch: AdoptionPatch): Promise<PodWriteResult> {
    const metadata: Record<string, unknown> = { ...patch.metadata };
    if (uid !== undefined && uid !== '') metadata['uid'] = uid;
    try {
      await this.#client.patch(BUILTIN.pods, name, { type: 'strategic', body: { metadata } }, { namespace });
      return { ok: true };
    } catch (error) {
      return failure(error);
    }
  }

  /** Deletes the pod only if it is still the one with this UID; a pod already gone counts as deleted. */
  async deletePod(namespace: string, name: string, uid: string | undefined): Promise<PodWriteResult> {
    try {
      await this.#client.delete(BUILTIN.pods, name, { namespace, ...(uid !== undefined && uid !== '' ? { preconditions: { uid } } : {}) });
      return { ok: true };
    } catch (error) {
      if (isNotFound(error)) return { ok: true, skipped: true };
      return failure(error);
    }
  }
}
