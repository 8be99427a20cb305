/**
 * Namespace lifecycle, the API-server side and the namespace controller's:
 *
 * - the NamespaceLifecycle admission plug-in: writes into a namespace that
 *   does not exist → 404 `namespaces "x" not found`; creates in a Terminating
 *   namespace → 403 (cause NamespaceTerminating); `default`, `kube-system` and
 *   `kube-public` cannot be deleted;
 * - the `namespaces/finalize` subresource (PUT: only spec.finalizers change);
 * - the namespace controller: a Terminating namespace gets its content
 *   deleted (finalizers and graceful pod deletion are honoured, so it may take
 *   a kubelet or a finalizer's owner); once empty, the `kubernetes` finalizer
 *   is removed and the namespace disappears.
 */
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { AdmissionPlugin } from './admission.ts';
import { deleteObject } from './delete.ts';
import { badRequest, fail, forbidden, notFound, ok, type Result } from './errors.ts';
import type { ObjectOperations } from './operations.ts';
import type { RequestContext, ResourceDef, SubresourceHandler } from './resource-def.ts';
import { storageKey } from './resource-def.ts';
import type { ResourceRegistry } from './resources.ts';
import type { StoreEvent } from './storage.ts';
import { NAMESPACE_FINALIZER } from './strategies/core.ts';

export const NAMESPACE_RESOURCE = '/namespaces';
const IMMORTAL = new Set(['default', 'kube-system', 'kube-public']);

export function namespaceLifecycleAdmission(ops: ObjectOperations): AdmissionPlugin {
  return {
    name: 'NamespaceLifecycle',
    order: 0,
    mutate: (a) => {
      if (a.resource.group === '' && a.resource.plural === 'namespaces') return undefined;
      if (a.namespace === '' || !a.resource.namespaced || a.operation === 'DELETE') return undefined;
      const ns = ops.store.get(NAMESPACE_RESOURCE, '', a.namespace);
      if (ns === undefined) return { allowed: false, status: notFound({ group: '', resource: 'namespaces' }, a.namespace) };
      if (a.operation === 'CREATE' && asString(asRecord(ns.status)?.['phase']) === 'Terminating') {
        const name = asString(a.object?.metadata?.name) || asString(a.object?.metadata?.generateName) || a.name;
        return {
          allowed: false,
          status: forbidden({ group: a.resource.group, resource: a.subresource === '' ? a.resource.plural : `${a.resource.plural}/${a.subresource}` }, name ?? '', `unable to create new content in namespace ${a.namespace} because it is being terminated`, [
            { reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' },
          ]),
        };
      }
      return undefined;
    },
    validate: (a) => {
      if (a.operation === 'DELETE' && a.resource.group === '' && a.resource.plural === 'namespaces' && IMMORTAL.has(a.name)) {
        return { allowed: false, status: forbidden({ group: '', resource: 'namespaces' }, a.name, 'this namespace may not be deleted') };
      }
      return undefined;
    },
  };
}

function specFinalizers(obj: KubeObject): string[] {
  return (asArray(asRecord(obj['spec'])?.['finalizers']) ?? []).filter((f): f is string => typeof f === 'string');
}

/** PUT namespaces/<name>/finalize: replaces spec.finalizers, nothing else. */
async function finalize(ops: ObjectOperations, def: ResourceDef, name: string, finalizers: string[], ctx: RequestContext): Promise<Result<KubeObject>> {
  for (let attempt = 0; attempt < 16; attempt++) {
    const current = ops.current(def, '', name);
    if (current === undefined) return fail(notFound({ group: '', resource: 'namespaces' }, name));
    const next = structuredClone(current);
    next['spec'] = { ...(asRecord(next['spec']) ?? {}), finalizers };
    const result = await ops.commitUpdate(def, current, next, ctx, { subresource: 'finalize', prepare: () => {} });
    if (result === 'conflict') continue;
    return result;
  }
  return fail(notFound({ group: '', resource: 'namespaces' }, name));
}

export function finalizeSubresource(ops: ObjectOperations, registry: ResourceRegistry): SubresourceHandler {
  return {
    verbs: ['update'],
    handle: async (req) => {
      if (req.verb !== 'update') return fail(badRequest('only PUT is supported on namespaces/finalize'));
      const def = registry.get('', 'v1', 'namespaces');
      if (def === undefined) return fail(notFound({ group: '', resource: 'namespaces' }, req.name));
      const checked = ops.checkBody(def, req.body);
      if (!checked.ok) return checked;
      const result = await finalize(ops, def, req.name, specFinalizers(checked.value), req.context);
      return result.ok ? ok({ code: 200, body: result.value }) : result;
    },
  };
}

export interface NamespaceControllerDeps {
  ops: ObjectOperations;
  registry: ResourceRegistry;
  track: (label: string, fn: () => Promise<void>) => void;
  systemContext: () => RequestContext;
}

/** The namespace controller: empties Terminating namespaces, then finalizes them. */
export class NamespaceController {
  readonly #deps: NamespaceControllerDeps;
  #scheduled = new Set<string>();

  constructor(deps: NamespaceControllerDeps) {
    this.#deps = deps;
  }

  onEvent(e: StoreEvent): void {
    if (e.resource === NAMESPACE_RESOURCE) {
      if (e.type !== 'DELETED' && e.object.metadata?.deletionTimestamp !== undefined) this.#schedule(asString(e.object.metadata?.name) ?? '');
      return;
    }
    if (e.type === 'DELETED' && e.namespace !== '') {
      const ns = this.#deps.ops.store.get(NAMESPACE_RESOURCE, '', e.namespace);
      if (ns?.metadata?.deletionTimestamp !== undefined) this.#schedule(e.namespace);
    }
  }

  #schedule(name: string): void {
    if (name === '' || this.#scheduled.has(name)) return;
    this.#scheduled.add(name);
    this.#deps.track(`namespace cleanup ${name}`, async () => {
      this.#scheduled.delete(name);
      await this.#cleanup(name);
    });
  }

  #defFor(resource: string): ResourceDef | undefined {
    return this.#deps.registry.all().find((d) => d.namespaced && d.conversion === undefined && storageKey(d) === resource);
  }

  async #cleanup(name: string): Promise<void> {
    const { ops, registry } = this.#deps;
    const ns = ops.store.get(NAMESPACE_RESOURCE, '', name);
    if (ns === undefined || ns.metadata?.deletionTimestamp === undefined) return;
    let remaining = 0;
    for (const resource of ops.store.resources()) {
      const def = this.#defFor(resource);
      if (def === undefined) continue;
      for (const item of ops.store.list(resource, name)) {
        remaining++;
        if (item.metadata?.deletionTimestamp !== undefined) continue;
        await deleteObject(ops, def, name, asString(item.metadata?.name) ?? '', { propagationPolicy: 'Background' }, this.#deps.systemContext());
      }
    }
    if (remaining > 0 && ops.store.resources().some((r) => this.#defFor(r) !== undefined && ops.store.list(r, name).length > 0)) return;
    const def = registry.get('', 'v1', 'namespaces');
    if (def === undefined) return;
    const current = ops.store.get(NAMESPACE_RESOURCE, '', name);
    if (current === undefined || !specFinalizers(current).includes(NAMESPACE_FINALIZER)) return;
    await finalize(ops, def, name, specFinalizers(current).filter((f) => f !== NAMESPACE_FINALIZER), this.#deps.systemContext());
  }
}
