/**
 * Which resources the garbage collector watches (upstream's
 * GetDeletableResources over ServerPreferredResources): every resource of
 * `/api/v1` and of each group's preferred version under `/apis` that supports
 * list, watch and delete, without subresources, minus the Events (upstream's
 * default ignored resources: they are never owners that matter and churn).
 * A group that disappears between the two requests is skipped this round.
 */
import { describeError } from '../../client/errors.ts';
import type { KubeClient } from '../../client/http-client.ts';
import type { Logger } from '../../client/logger.ts';
import type { ResourceRef } from '../../client/resources.ts';
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';

const IGNORED = new Set(['/events', 'events.k8s.io/events']);

/** GetDeletableResources: preferred versions, verbs list+watch+delete, no subresources. */
export async function deletableResources(client: KubeClient, log: Logger): Promise<ResourceRef[]> {
  const out: ResourceRef[] = [];
  const core = { group: '', version: 'v1', doc: await client.getJson('/api/v1') };
  const groups = asArray(asRecord(await client.getJson('/apis'))?.['groups']) ?? [];
  // Fetched in parallel, kept in the server's group order so the informers start in a stable order.
  const fetched = await Promise.all(
    groups.map(async (g) => {
      const group = asRecord(g);
      const name = asString(group?.['name']);
      const version = asString(asRecord(group?.['preferredVersion'])?.['version']) ?? asString(asRecord(asArray(group?.['versions'])?.[0])?.['version']);
      if (name === undefined || version === undefined) return undefined;
      try {
        return { group: name, version, doc: await client.getJson(`/apis/${name}/${version}`) };
      } catch (err) {
        log.debug({ group: name, err: describeError(err) }, 'group discovery failed');
        return undefined;
      }
    }),
  );
  for (const { group, version, doc } of [core, ...fetched.filter((f) => f !== undefined)]) {
    for (const entry of asArray(asRecord(doc)?.['resources']) ?? []) {
      const r = asRecord(entry);
      const resource = asString(r?.['name']);
      const kind = asString(r?.['kind']);
      const verbs = (asArray(r?.['verbs']) ?? []).filter((v): v is string => typeof v === 'string');
      if (resource === undefined || kind === undefined || resource.includes('/')) continue;
      if (!['list', 'watch', 'delete'].every((v) => verbs.includes(v))) continue;
      if (IGNORED.has(`${group}/${resource}`)) continue;
      out.push({ group, version, resource, kind, namespaced: r?.['namespaced'] === true });
    }
  }
  return out;
}
