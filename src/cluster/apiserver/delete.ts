/**
 * DELETE and DELETE-collection, as registry/generic/registry/store.go deletes:
 *
 * - preconditions (uid, resourceVersion) → 409 with upstream's wording;
 * - graceful deletion for kinds whose strategy has a grace period (Pods):
 *   `deletionTimestamp = now + grace`, `deletionGracePeriodSeconds = grace`;
 *   a later delete may only shorten it; grace 0 deletes (after recording the
 *   zero grace period, as upstream's two-step delete does);
 * - `propagationPolicy` / `orphanDependents` add or remove the `orphan` and
 *   `foregroundDeletion` finalizers (the garbage collector honours them);
 * - an object with finalizers gets `deletionTimestamp` (grace 0) and stays
 *   until an update empties its finalizers (operations.ts deletes it then);
 * - the answer is the object (kinds that return it, or when it is not gone
 *   yet) or a Success Status with name, group, kind (the resource) and uid.
 * `dryRun` computes the same answer and writes nothing.
 */
import { notSupported, type FieldError } from '../../k8s/field-errors.ts';
import { isPlainObject } from '../../k8s/json.ts';
import { asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import { formatTime, parseTime } from '../../k8s/time.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { conflict, fail, invalid, notFound, ok, successStatus, type Result, type Status } from './errors.ts';
import type { ListOptions } from './list.ts';
import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN, finalizersOf, isNoopWrite, metaOf } from './object-meta.ts';
import { groupResourceOf, type ObjectOperations } from './operations.ts';
import { storageKey, type RequestContext, type ResourceDef } from './resource-def.ts';

import type { DeleteOptions, PropagationPolicy } from '../../k8s/wire.ts';
export type { DeleteOptions, PropagationPolicy };

export interface DeleteOutcome {
  body: KubeObject | Status;
  /** False while finalizers or a grace period keep the object. */
  deleted: boolean;
  /** 202 only for `orphanDependents: false` deletes that did not finish, as upstream. */
  code: 200 | 202;
}

const MAX_ATTEMPTS = 16;

/** DeleteOptions from a body (may be empty) and query parameters, with ValidateDeleteOptions. */
export function parseDeleteOptions(body: unknown, query: URLSearchParams): Result<DeleteOptions> {
  const opts: DeleteOptions = {};
  const b = isPlainObject(body) ? body : {};
  const grace = asNumber(b['gracePeriodSeconds']) ?? (query.has('gracePeriodSeconds') ? Number(query.get('gracePeriodSeconds')) : undefined);
  if (grace !== undefined && Number.isFinite(grace)) opts.gracePeriodSeconds = Math.trunc(grace);
  const policy = asString(b['propagationPolicy']) ?? query.get('propagationPolicy') ?? undefined;
  const orphan = typeof b['orphanDependents'] === 'boolean' ? b['orphanDependents'] : query.has('orphanDependents') ? query.get('orphanDependents') === 'true' : undefined;
  const errs: FieldError[] = [];
  if (policy !== undefined) {
    if (policy === 'Orphan' || policy === 'Background' || policy === 'Foreground') opts.propagationPolicy = policy;
    else errs.push(notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  if (orphan !== undefined) opts.orphanDependents = orphan;
  if (policy !== undefined && orphan !== undefined) errs.push({ type: 'FieldValueInvalid', field: 'propagationPolicy', badValue: policy, detail: 'orphanDependents and deletionPropagation cannot be both set' });
  const pre = asRecord(b['preconditions']);
  if (pre !== undefined) {
    opts.preconditions = {};
    const uid = asString(pre['uid']);
    const rv = asString(pre['resourceVersion']);
    if (uid !== undefined) opts.preconditions.uid = uid;
    if (rv !== undefined) opts.preconditions.resourceVersion = rv;
  }
  if (errs.length > 0) return fail(invalid('DeleteOptions', 'meta.k8s.io', '', errs));
  return ok(opts);
}

/** deletionFinalizersForGarbageCollection: the finalizer list a delete with these options leaves. */
export function gcFinalizers(obj: KubeObject, opts: DeleteOptions, defaultPolicy: PropagationPolicy): string[] {
  const existing = finalizersOf(obj);
  let orphan: boolean;
  let foreground = false;
  const fromFinalizers = (): { orphan: boolean | undefined; foreground: boolean | undefined } => {
    for (const f of existing) {
      if (f === FINALIZER_ORPHAN) return { orphan: true, foreground: false };
      if (f === FINALIZER_FOREGROUND) return { orphan: false, foreground: true };
    }
    return { orphan: undefined, foreground: undefined };
  };
  if (opts.orphanDependents !== undefined) {
    orphan = opts.orphanDependents;
  } else if (opts.propagationPolicy !== undefined) {
    orphan = opts.propagationPolicy === 'Orphan';
    foreground = opts.propagationPolicy === 'Foreground';
  } else {
    const f = fromFinalizers();
    orphan = f.orphan ?? defaultPolicy === 'Orphan';
    foreground = f.foreground ?? false;
  }
  const out = existing.filter((f) => f !== FINALIZER_ORPHAN && f !== FINALIZER_FOREGROUND);
  if (orphan) out.push(FINALIZER_ORPHAN);
  if (foreground) out.push(FINALIZER_FOREGROUND);
  return out;
}

function sameSet(a: string[], b: string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

function finalizeDelete(def: ResourceDef, obj: KubeObject): KubeObject | Status {
  if (def.strategy.returnDeletedObject) return obj;
  return successStatus({
    name: asString(obj.metadata?.name) ?? '',
    ...(def.group !== '' ? { group: def.group } : {}),
    kind: def.plural,
    uid: asString(obj.metadata?.uid) ?? '',
  });
}

/**
 * Deletes one object. `internal.admission: false` is for deletes the server
 * itself makes at the storage level (the eviction subresource), which upstream
 * does not submit to admission.
 */
export async function deleteObject(
  ops: ObjectOperations,
  def: ResourceDef,
  namespace: string,
  name: string,
  opts: DeleteOptions,
  ctx: RequestContext,
  internal: { admission?: boolean } = {},
): Promise<Result<DeleteOutcome>> {
  const ns = def.namespaced ? namespace : '';
  const resource = storageKey(def);
  if (opts.propagationPolicy === undefined && opts.orphanDependents === undefined && def.strategy.deleteWarning !== undefined && def.strategy.defaultDeletePropagation === 'Orphan') {
    ctx.warnings.push(def.strategy.deleteWarning);
  }
  const options = opts as unknown as Record<string, unknown>;
  const codeFor = (deleted: boolean): 200 | 202 => (!deleted && opts.orphanDependents === false ? 202 : 200);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = ops.current(def, ns, name);
    if (current === undefined) return fail(notFound(groupResourceOf(def), name));
    const uid = asString(current.metadata?.uid) ?? '';
    const rv = asString(current.metadata?.resourceVersion) ?? '';
    const kindResource = { group: def.group, resource: def.kind };
    if (opts.preconditions?.uid !== undefined && opts.preconditions.uid !== uid) {
      return fail(conflict(kindResource, name, `the UID in the precondition (${opts.preconditions.uid}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`));
    }
    if (opts.preconditions?.resourceVersion !== undefined && opts.preconditions.resourceVersion !== rv) {
      return fail(conflict(kindResource, name, `the ResourceVersion in the precondition (${opts.preconditions.resourceVersion}) does not match the ResourceVersion in record (${rv}). The object might have been modified`));
    }
    if (internal.admission !== false) {
      const attrs = ops.attributes('DELETE', def, '', ns, name, undefined, current, ctx, options);
      const mutated = await ops.admission.mutate(attrs, ctx);
      if (!mutated.ok) return mutated;
      const validated = await ops.admission.validate(attrs, ctx);
      if (!validated.ok) return validated;
    }

    const now = ops.now();
    const next = structuredClone(current);
    const meta = metaOf(next);
    if (meta.deletionTimestamp === undefined) def.strategy.prepareForDelete?.(next, { now, subresource: '' });
    // rest.BeforeDelete: graceful deletion and its shortening.
    let graceful = false;
    const requested = opts.gracePeriodSeconds === undefined ? undefined : opts.gracePeriodSeconds < 0 ? 1 : opts.gracePeriodSeconds;
    if (meta.deletionTimestamp !== undefined) {
      const currentGrace = meta.deletionGracePeriodSeconds;
      if (currentGrace !== undefined && currentGrace !== 0) {
        if (requested === undefined || requested >= currentGrace) return ok({ body: finalizeDelete(def, current), deleted: false, code: codeFor(false) });
        const started = (parseTime(meta.deletionTimestamp) ?? now) - currentGrace * 1000;
        meta.deletionTimestamp = formatTime(started + requested * 1000);
        meta.deletionGracePeriodSeconds = requested;
        graceful = true;
      }
    } else if (def.strategy.gracePeriodSeconds !== undefined) {
      const period = def.strategy.gracePeriodSeconds(next, requested);
      meta.deletionTimestamp = formatTime(now + period * 1000);
      meta.deletionGracePeriodSeconds = period;
      if (typeof meta.generation === 'number' && meta.generation > 0) meta.generation += 1;
      graceful = true;
    }
    const newFinalizers = gcFinalizers(next, opts, def.strategy.defaultDeletePropagation ?? 'Background');
    const finalizersChanged = !sameSet(newFinalizers, finalizersOf(next));
    if (newFinalizers.length > 0) meta.finalizers = newFinalizers;
    else delete meta.finalizers;
    const pending = newFinalizers.length > 0 || def.strategy.deletionPending?.(next) === true;

    let expectedRv = rv;
    if (graceful || pending || finalizersChanged) {
      if (!graceful && pending) {
        // markAsDeleting: the generation moves once, the timestamp never moves later, the grace period is 0.
        if (meta.deletionTimestamp === undefined && typeof meta.generation === 'number' && meta.generation > 0) meta.generation += 1;
        if (meta.deletionTimestamp === undefined || (parseTime(meta.deletionTimestamp) ?? 0) > now) meta.deletionTimestamp = formatTime(now);
        meta.deletionGracePeriodSeconds = 0;
      }
      if (graceful || pending) {
        let written = next;
        if (!ctx.dryRun && !isNoopWrite(next, current)) {
          const stored = ops.store.update(resource, def.conversion === undefined ? next : def.conversion.toStorage(next), rv);
          if (!stored.ok) continue;
          written = ops.served(def, stored.object);
          expectedRv = asString(written.metadata?.resourceVersion) ?? rv;
        }
        const stays = pending || (graceful && (meta.deletionGracePeriodSeconds ?? 0) > 0);
        if (stays) return ok({ body: written, deleted: false, code: codeFor(false) });
        if (ctx.dryRun) return ok({ body: finalizeDelete(def, written), deleted: true, code: 200 });
      }
    }
    if (ctx.dryRun) return ok({ body: finalizeDelete(def, current), deleted: true, code: 200 });
    const deleted = ops.store.delete(resource, ns, name, expectedRv);
    if (!deleted.ok) {
      if (deleted.reason === 'notFound') return fail(notFound(groupResourceOf(def), name));
      continue;
    }
    return ok({ body: finalizeDelete(def, ops.served(def, deleted.object)), deleted: true, code: 200 });
  }
  return fail(conflict(groupResourceOf(def), name));
}

/** DELETE on a collection: lists with the selectors, deletes each item; answers the list of what was listed. */
export async function deleteCollection(
  ops: ObjectOperations,
  def: ResourceDef,
  namespace: string | undefined,
  listOptions: ListOptions,
  opts: DeleteOptions,
  ctx: RequestContext,
): Promise<Result<{ items: KubeObject[]; resourceVersion: string }>> {
  const listed = ops.list(def, namespace, listOptions);
  if (!listed.ok) return listed;
  for (const item of listed.value.items) {
    const result = await deleteObject(ops, def, asString(item.metadata?.namespace) ?? '', asString(item.metadata?.name) ?? '', { ...opts }, ctx);
    if (!result.ok && result.status.code !== 404) return result;
  }
  return ok({ items: listed.value.items, resourceVersion: listed.value.resourceVersion });
}
