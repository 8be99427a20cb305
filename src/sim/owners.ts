/**
 * Pods (and any object) owned by an object the scenario created, named by
 * kind and name only: a custom workload (an Argo Rollout, a TFJob…) has no
 * controller in the simulated cluster, so the scenario creates its pods, and
 * admission requires the owner's real uid, which a scenario cannot know in
 * advance. Two ways (docs/scenarios.md, "Owned pods"):
 *
 * - an `ownerReferences` entry without a `uid` in `objects` or an `apply`
 *   step — `{kind: TFJob, name: train, controller: true}`: checked when the
 *   scenario is parsed (kind and name; the apiVersion is filled in from the
 *   kind, as step references are), and its `uid` filled in when the object
 *   is applied, from the owner as stored (`fillOwnerUids`);
 * - the `createPods` step — `{owner: {kind, name}, count, template}`:
 *   `count` pods named after the owner, controlled by it, with the
 *   template's labels, annotations and spec (`createOwnedPods`).
 *
 * The owner must exist when the owned object is created (list it earlier in
 * `objects`); otherwise applying fails, naming it. Parsing is pure; the two
 * effects take the API client.
 */
import { isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { BUILTIN } from '../client/resources.ts';
import { deepClone, isPlainObject } from '../k8s/json.ts';
import type { KubeObject, OwnerReference, Pod } from '../k8s/types.ts';
import { child, describeType, item, readMapping, readString, readStringMap, rejectUnknownKeys, type Problems } from './field-reader.ts';

/** An owner by reference (the shape of a step's object reference). */
export interface OwnerRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** What the pods of a `createPods` step carry besides their owner. */
export interface PodTemplate {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: Record<string, unknown>;
}

export interface CreatePodsAction {
  action: 'createPods';
  owner: OwnerRef;
  count: number;
  template: PodTemplate;
}

/** The container a `createPods` pod runs when its template gives no spec (nothing runs it: the simulated kubelet only reports it Ready). */
export const DEFAULT_POD_SPEC: Readonly<Record<string, unknown>> = Object.freeze({ containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.9' }] });

const OWNER_REFERENCE_KEYS = ['apiVersion', 'kind', 'name', 'uid', 'controller', 'blockOwnerDeletion'] as const;

/**
 * Checks the object's `metadata.ownerReferences` (at `path`): an entry with
 * a `uid` is left as written; one without needs `kind` and `name`, and gets
 * its `apiVersion` from `kinds` unless it gives one. The object is changed
 * in place (it is the parser's own copy).
 */
export function readOwnerReferences(object: KubeObject, path: string, kinds: ReadonlyMap<string, string>, problems: Problems): void {
  const refs: unknown = object.metadata?.ownerReferences;
  if (refs === undefined || refs === null) return;
  const listPath = child(child(path, 'metadata'), 'ownerReferences');
  if (!Array.isArray(refs)) {
    problems.add(listPath, `must be a list, not ${describeType(refs)}`);
    return;
  }
  refs.forEach((entry: unknown, i) => {
    const p = item(listPath, i);
    const map = readMapping(entry, p, problems);
    if (map === undefined || (typeof map['uid'] === 'string' && map['uid'] !== '')) return;
    rejectUnknownKeys(map, OWNER_REFERENCE_KEYS, p, problems);
    const kind = readString(map['kind'], child(p, 'kind'), problems);
    readString(map['name'], child(p, 'name'), problems);
    if (map['apiVersion'] !== undefined) {
      readString(map['apiVersion'], child(p, 'apiVersion'), problems);
      return;
    }
    if (kind === undefined) return;
    const apiVersion = kinds.get(kind);
    if (apiVersion === undefined) problems.add(child(p, 'kind'), `unknown kind ${JSON.stringify(kind)}: give its apiVersion too (or its uid)`);
    else map['apiVersion'] = apiVersion;
  });
}

/** The owner as stored, or an error naming it. */
async function getOwner(client: KubeClient, ref: OwnerRef): Promise<KubeObject> {
  const resolved = await client.resources.resolve(ref.apiVersion, ref.kind);
  if (!resolved.ok) throw new Error(`owner ${ref.kind} ${ref.name}: the cluster does not serve ${ref.kind} in ${ref.apiVersion}`);
  try {
    return await client.get<KubeObject>(resolved.ref, ref.name, resolved.ref.namespaced ? { namespace: ref.namespace } : {});
  } catch (err) {
    if (isNotFound(err)) throw new Error(`owner ${ref.kind} ${resolved.ref.namespaced ? `${ref.namespace}/` : ''}${ref.name} does not exist: create it before the objects it owns`, { cause: err });
    throw err;
  }
}

/** A copy of the object whose ownerReferences without a uid name the owner's uid (and apiVersion) as stored. */
export async function fillOwnerUids(client: KubeClient, object: KubeObject, namespace: string | undefined): Promise<KubeObject> {
  const refs: unknown = object.metadata?.ownerReferences;
  if (!Array.isArray(refs) || refs.every((r: unknown) => !isPlainObject(r) || (typeof r['uid'] === 'string' && r['uid'] !== ''))) return object;
  const filled: OwnerReference[] = [];
  for (const r of refs as unknown[]) {
    if (!isPlainObject(r) || (typeof r['uid'] === 'string' && r['uid'] !== '')) {
      filled.push(r as unknown as OwnerReference);
      continue;
    }
    const owner = await getOwner(client, { apiVersion: String(r['apiVersion'] ?? ''), kind: String(r['kind'] ?? ''), name: String(r['name'] ?? ''), namespace: namespace ?? 'default' });
    filled.push({ ...(r as unknown as OwnerReference), apiVersion: owner.apiVersion ?? String(r['apiVersion']), uid: owner.metadata?.uid ?? '' });
  }
  return { ...object, metadata: { ...(object.metadata ?? {}), ownerReferences: filled } };
}

/** `createPods.template`: `{metadata: {labels, annotations}, spec}`, all optional. */
export function readPodTemplate(value: unknown, path: string, problems: Problems): PodTemplate | undefined {
  const template: PodTemplate = { labels: {}, annotations: {}, spec: deepClone(DEFAULT_POD_SPEC) as Record<string, unknown> };
  if (value === undefined) return template;
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  rejectUnknownKeys(map, ['metadata', 'spec'], path, problems);
  if (map['metadata'] !== undefined) {
    const metaPath = child(path, 'metadata');
    const meta = readMapping(map['metadata'], metaPath, problems);
    if (meta !== undefined) {
      rejectUnknownKeys(meta, ['labels', 'annotations'], metaPath, problems);
      if (meta['labels'] !== undefined) template.labels = readStringMap(meta['labels'], child(metaPath, 'labels'), problems) ?? {};
      if (meta['annotations'] !== undefined) template.annotations = readStringMap(meta['annotations'], child(metaPath, 'annotations'), problems) ?? {};
    }
  }
  if (map['spec'] !== undefined) {
    const spec = readMapping(map['spec'], child(path, 'spec'), problems);
    if (spec !== undefined) template.spec = deepClone(spec);
  }
  return template;
}

/** Creates the step's pods (through admission, as any pod), each controlled by the owner; their names. */
export async function createOwnedPods(client: KubeClient, action: CreatePodsAction): Promise<string[]> {
  const owner = await getOwner(client, action.owner);
  const namespace = action.owner.namespace;
  const names: string[] = [];
  for (let i = 0; i < action.count; i++) {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${action.owner.name}-`,
        namespace,
        ...(Object.keys(action.template.labels).length > 0 ? { labels: { ...action.template.labels } } : {}),
        ...(Object.keys(action.template.annotations).length > 0 ? { annotations: { ...action.template.annotations } } : {}),
        ownerReferences: [{ apiVersion: owner.apiVersion ?? action.owner.apiVersion, kind: owner.kind ?? action.owner.kind, name: action.owner.name, uid: owner.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
      },
      spec: deepClone(action.template.spec) as Pod['spec'],
    };
    const created = await client.create<Pod>(BUILTIN.pods, pod, { namespace });
    names.push(created.metadata?.name ?? '');
  }
  return names;
}
