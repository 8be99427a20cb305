/**
 * The effects of scenario steps (steps.ts says what they mean): each action
 * becomes the API calls a user with kubectl would make — `kubectl scale`,
 * `apply` (create, or replace what exists), `patch`, `delete`, the eviction
 * API, `kubectl drain` (drain.ts), `cordon`/`uncordon`/`taint`, `rollout
 * restart` — or a node operation
 * of the backend. Nothing here reads the clock's time except to stamp a
 * rollout.
 *
 * Errors are data: an API refusal (a validation error, a 429 from a
 * disruption budget, a missing object) comes back as `{ok: false, error}`
 * with the server's message, so a scenario can expect it (`expectFailure`).
 * `applyObjects` applies the scenario's objects: CRDs first, then
 * Namespaces, then the rest in order, creating namespaces they name.
 */
import { ApiError, describeError, isAlreadyExists, isNotFound } from '../client/errors.ts';
import type { KubeClient, JsonPatchOperation } from '../client/http-client.ts';
import { BUILTIN, type ResourceRef } from '../client/resources.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject } from '../k8s/types.ts';
import type { SimBackend } from './backend.ts';
import { evictOnce, runDrain, type EvictionRecord } from './drain.ts';
import { createOwnedPods, fillOwnerUids } from './owners.ts';
import type { ObjectRef, StepAction, SubsetPods } from './steps.ts';

/** `evictions`: what the drain and evict steps did to each pod (refusedEvictions expectations, reports). */
export type ActionOutcome = { ok: true; notes: string[]; evictions?: EvictionRecord[] } | { ok: false; error: string; evictions?: EvictionRecord[] };

/**
 * What apply may do to objects that already exist, and who hears about the
 * ones it creates (the live backend deletes them afterwards and never
 * replaces an object the scenario did not create).
 */
export interface ApplyPolicy {
  mayReplace(ref: ResourceRef, namespace: string | undefined, name: string): boolean;
  created(ref: ResourceRef, namespace: string | undefined, name: string): void;
  namespaceCreated(name: string): void;
}

export const REPLACE_ANYTHING: ApplyPolicy = { mayReplace: () => true, created: () => {}, namespaceCreated: () => {} };

export interface ActionContext {
  backend: SimBackend;
  apply: ApplyPolicy;
  /** The active pods of a subset, as the runner observes them now (sorted by name). */
  subsetPods(pods: SubsetPods): Promise<{ namespace: string; name: string }[]>;
  signal?: AbortSignal;
}

/** The annotation `kubectl rollout restart` sets on the pod template. */
export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

const done = (notes: string[] = []): ActionOutcome => ({ ok: true, notes });
const refused = (error: string): ActionOutcome => ({ ok: false, error });

async function resolve(client: KubeClient, apiVersion: string, kind: string): Promise<ResourceRef> {
  const r = await client.resources.resolve(apiVersion, kind);
  if (!r.ok) throw new Error(r.notFound ? `the cluster does not serve ${kind} in ${apiVersion}` : describeError(r.error));
  return r.ref;
}

const nsOf = (ref: ResourceRef, namespace: string | undefined): { namespace?: string } => (ref.namespaced && namespace !== undefined && namespace !== '' ? { namespace } : {});

function label(target: ObjectRef): string {
  return `${target.kind} ${target.namespace === '' ? '' : `${target.namespace}/`}${target.name}`;
}

/** Creates the namespace unless it exists. */
export async function ensureNamespace(client: KubeClient, name: string, policy: ApplyPolicy = REPLACE_ANYTHING): Promise<void> {
  try {
    await client.get(BUILTIN.namespaces, name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    try {
      await client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      policy.namespaceCreated(name);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
}

/** kubectl apply without the three-way merge: create, or replace the stored object (keeping its resourceVersion). */
export async function applyObject(client: KubeClient, object: KubeObject, policy: ApplyPolicy = REPLACE_ANYTHING): Promise<'created' | 'replaced'> {
  const ref = await resolve(client, object.apiVersion ?? '', object.kind ?? '');
  const namespace = ref.namespaced ? (object.metadata?.namespace ?? 'default') : undefined;
  const name = object.metadata?.name ?? '';
  const named: KubeObject = { ...object, metadata: { ...(object.metadata ?? {}), ...(namespace === undefined ? {} : { namespace }) } };
  if (namespace !== undefined) await ensureNamespace(client, namespace, policy);
  // Owners named by kind and name only get their uid now (owners.ts).
  const body = await fillOwnerUids(client, named, namespace);
  try {
    await client.create(ref, body, nsOf(ref, namespace));
    policy.created(ref, namespace, name);
    return 'created';
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  if (!policy.mayReplace(ref, namespace, name)) {
    throw new Error(`${object.kind} ${namespace === undefined ? '' : `${namespace}/`}${name} already exists in the cluster; the simulator only replaces objects it created (delete it, or use another namespace)`);
  }
  const stored = await client.get<KubeObject>(ref, name, nsOf(ref, namespace));
  await client.update(ref, { ...body, metadata: { ...(body.metadata ?? {}), resourceVersion: stored.metadata?.resourceVersion } });
  return 'replaced';
}

/** Applies the scenario's objects: CRDs (waiting until they are served), Namespaces, then the rest in order. */
export async function applyObjects(backend: SimBackend, objects: readonly KubeObject[], policy: ApplyPolicy = REPLACE_ANYTHING, signal?: AbortSignal): Promise<void> {
  const rank = (o: KubeObject) => (o.kind === 'CustomResourceDefinition' ? 0 : o.kind === 'Namespace' ? 1 : 2);
  const ordered = [...objects].sort((a, b) => rank(a) - rank(b));
  for (const [i, object] of ordered.entries()) {
    signal?.throwIfAborted();
    try {
      await applyObject(backend.client, object, policy);
    } catch (err) {
      throw new Error(`cannot apply ${object.kind} ${object.metadata?.namespace === undefined ? '' : `${object.metadata.namespace}/`}${object.metadata?.name ?? ''}: ${refusalMessage(err)}`, { cause: err });
    }
    // Every component sees each object before the next is created (in race mode too: the races are the steps').
    await backend.deliver();
    if (rank(object) === 0 && rank(ordered[i + 1] ?? object) !== 0) await waitForServedKinds(backend, ordered.slice(i + 1), signal);
  }
}

/** After CRDs: waits (at most ~30 s of clock time) until every kind the objects use is served. */
async function waitForServedKinds(backend: SimBackend, objects: readonly KubeObject[], signal?: AbortSignal): Promise<void> {
  const kinds = new Map(objects.map((o) => [`${o.apiVersion}|${o.kind}`, o]));
  for (let attempt = 0; attempt < 60; attempt++) {
    let missing = 0;
    for (const o of kinds.values()) {
      const r = await backend.client.resources.resolve(o.apiVersion ?? '', o.kind ?? '');
      if (!r.ok) missing++;
    }
    if (missing === 0) return;
    backend.client.resources.invalidate();
    await backend.clock.sleep(500, signal);
    await backend.quiesce();
  }
}

async function deletePod(client: KubeClient, namespace: string, name: string): Promise<void> {
  await client.delete(BUILTIN.pods, name, { namespace });
}

async function run(action: StepAction, ctx: ActionContext): Promise<ActionOutcome> {
  const { backend } = ctx;
  const client = backend.client;
  switch (action.action) {
    case 'scale': {
      const t = action.target;
      const ref = await resolve(client, t.apiVersion, t.kind);
      if (t.kind === 'Job') await client.patch(ref, t.name, { type: 'merge', body: { spec: { parallelism: action.replicas } } }, nsOf(ref, t.namespace));
      else await client.scale(ref, t.name, action.replicas, nsOf(ref, t.namespace));
      return done();
    }
    case 'apply':
      return done([`${action.object.kind} ${action.object.metadata?.name ?? ''} ${await applyObject(client, action.object, ctx.apply)}`]);
    case 'patch': {
      const t = action.target;
      const ref = await resolve(client, t.apiVersion, t.kind);
      const patch = action.patchType === 'json' ? { type: 'json' as const, ops: action.patch as JsonPatchOperation[] } : { type: action.patchType, body: action.patch };
      await client.patch(ref, t.name, patch, nsOf(ref, t.namespace));
      return done();
    }
    case 'delete': {
      if ('pods' in action) {
        const pods = await ctx.subsetPods(action.pods);
        for (const p of pods) await deletePod(client, p.namespace, p.name);
        const notes = [`deleted ${pods.length === 0 ? 'no pods' : pods.map((p) => p.name).join(', ')}`];
        if (pods.length < action.pods.count) notes.push(`subset ${action.pods.subset} had only ${pods.length} active pod(s)`);
        return done(notes);
      }
      const t = action.target;
      const ref = await resolve(client, t.apiVersion, t.kind);
      await client.delete(ref, t.name, nsOf(ref, t.namespace));
      return done();
    }
    case 'evict': {
      const choice = action.pods;
      const pods = choice.by === 'name' ? [{ namespace: choice.namespace, name: choice.name }] : await ctx.subsetPods(choice);
      const evictions: EvictionRecord[] = [];
      for (const p of pods) {
        const { record, error } = await evictOnce(backend, p.namespace, p.name);
        evictions.push(record);
        if (error !== undefined) return { ok: false, error: refusalMessage(error), evictions };
      }
      return { ...done(choice.by === 'name' ? [] : [`evicted ${pods.length === 0 ? 'no pods' : pods.map((p) => p.name).join(', ')}`]), evictions };
    }
    case 'drain': {
      const drained = await runDrain(backend, action, ctx.signal);
      return drained.ok ? { ok: true, notes: drained.notes, evictions: drained.evictions } : { ok: false, error: drained.error ?? 'the drain failed', evictions: drained.evictions };
    }
    case 'cordon':
      return outcome(await backend.cordon(action.node));
    case 'uncordon':
      return outcome(await backend.uncordon(action.node));
    case 'deleteNode':
      return outcome(await backend.removeNode(action.node));
    case 'addNodes':
      return outcome(await backend.addNodes(action.nodes), [`added ${action.nodes.map((n) => n.name).join(', ')}`]);
    case 'taint':
      return outcome(await backend.taint(action.node, action.taint));
    case 'untaint':
      return outcome(await backend.untaint(action.node, action.key, action.effect));
    case 'rollout': {
      const t = action.target;
      const ref = await resolve(client, t.apiVersion, t.kind);
      const body = { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: formatTime(backend.clock.now()) } } } } };
      await client.patch(ref, t.name, { type: 'strategic', body }, nsOf(ref, t.namespace));
      return done([`${label(t)}: pod template changed`]);
    }
    case 'createPods': {
      const names = await createOwnedPods(client, action);
      return done([`created ${names.length === 0 ? 'no pods' : names.join(', ')}`]);
    }
    case 'advance':
      await backend.advance(action.ms, ctx.signal);
      return done();
    case 'settle':
    case 'expect':
      // The runner settles and evaluates; nothing to do to the cluster.
      return done();
  }
}

function outcome(r: { ok: true } | { ok: false; error: string }, notes: string[] = []): ActionOutcome {
  return r.ok ? done(notes) : refused(r.error);
}

/** The server's own words for a refusal (`Cannot evict pod as it would violate…`), else the error's message. */
export function refusalMessage(err: unknown): string {
  if (err instanceof ApiError && typeof err.status.message === 'string' && err.status.message !== '') return `${err.status.message} (${err.code}${err.reason === '' ? '' : ` ${err.reason}`})`;
  return describeError(err);
}

/** Runs one action; every failure comes back as `{ok: false, error}` (the server's message). */
export async function runAction(action: StepAction, ctx: ActionContext): Promise<ActionOutcome> {
  try {
    return await run(action, ctx);
  } catch (err) {
    if (ctx.signal?.aborted === true) throw err;
    return refused(refusalMessage(err));
  }
}
