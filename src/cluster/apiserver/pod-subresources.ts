/**
 * The basic `pods/binding` and `pods/eviction` subresources, so a scheduler
 * and `kubectl drain` work from day one. Both are registered as replaceable
 * subresource handlers: the eviction here honours no PodDisruptionBudget (the
 * full version replaces it via `ResourceRegistry.setSubresourceHandler`).
 *
 * - binding (POST, v1 Binding): sets `spec.nodeName` and the PodScheduled=True
 *   condition, copies the binding's annotations; 409 when the pod is already
 *   bound or being deleted; answers a Success Status with code 201;
 * - eviction (POST, policy/v1 Eviction): deletes the pod with the eviction's
 *   deleteOptions; answers a Success Status with code 201.
 * Admission sees CREATE on the subresource with the Binding / Eviction.
 */
import { asRecord, asString } from '../../k8s/raw-json.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { deleteObject, parseDeleteOptions } from './delete.ts';
import { badRequest, conflict, fail, invalid, notFound, ok, type Result, type Status } from './errors.ts';
import { metaOf } from './object-meta.ts';
import type { ObjectOperations } from './operations.ts';
import type { GroupVersionKind, SubresourceHandler, SubresourceRequest, SubresourceResponse } from './resource-def.ts';

export const BINDING_KIND: GroupVersionKind = { group: '', version: 'v1', kind: 'Binding' };
export const EVICTION_KIND: GroupVersionKind = { group: 'policy', version: 'v1', kind: 'Eviction' };

const created = (): Status => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });

function bodyObject(req: SubresourceRequest, kind: string): Result<KubeObject> {
  const body = asRecord(req.body);
  if (body === undefined) return fail(badRequest(`the object provided is unrecognized (must be of type ${kind})`));
  const bodyKind = asString(body['kind']) ?? kind;
  if (bodyKind !== kind) return fail(badRequest(`${bodyKind} in version "v1" cannot be handled as a ${kind}`));
  const name = asString(asRecord(body['metadata'])?.['name']) ?? '';
  if (name !== '' && name !== req.name) return fail(badRequest(`the name of the object (${name}) does not match the name on the URL (${req.name})`));
  return ok(structuredClone(body) as KubeObject);
}

async function admit(ops: ObjectOperations, req: SubresourceRequest, kind: GroupVersionKind, object: KubeObject): Promise<Result<KubeObject>> {
  const attrs = ops.attributes('CREATE', req.resource, req.subresource, req.namespace, req.name, object, undefined, req.context, {});
  attrs.kind = kind;
  const mutated = await ops.admission.mutate(attrs, req.context);
  if (!mutated.ok) return mutated;
  attrs.object = mutated.value ?? object;
  const validated = await ops.admission.validate(attrs, req.context);
  if (!validated.ok) return validated;
  return ok(attrs.object);
}

export function bindingSubresource(ops: ObjectOperations): SubresourceHandler {
  return {
    verbs: ['create'],
    kind: BINDING_KIND,
    handle: async (req): Promise<Result<SubresourceResponse>> => {
      if (req.verb !== 'create') return fail(badRequest('only POST is supported on pods/binding'));
      const parsed = bodyObject(req, 'Binding');
      if (!parsed.ok) return parsed;
      const target = asRecord(parsed.value['target']) ?? {};
      const targetKind = asString(target['kind']) ?? '';
      const node = asString(target['name']) ?? '';
      if (targetKind !== '' && targetKind !== 'Node') {
        return fail(invalid('Binding', '', req.name, [{ type: 'FieldValueNotSupported', field: 'target.kind', badValue: targetKind, detail: 'must be empty or \'Node\'' }]));
      }
      if (node === '') return fail(invalid('Binding', '', req.name, [{ type: 'FieldValueRequired', field: 'target.name', badValue: '', detail: '' }]));
      if (ops.current(req.resource, req.namespace, req.name) === undefined) return fail(notFound({ group: '', resource: 'pods' }, req.name));
      const admitted = await admit(ops, req, BINDING_KIND, parsed.value);
      if (!admitted.ok) return admitted;
      const bindingResource = { group: '', resource: 'pods/binding' };
      for (let attempt = 0; attempt < 16; attempt++) {
        const current = ops.current(req.resource, req.namespace, req.name);
        if (current === undefined) return fail(notFound({ group: '', resource: 'pods' }, req.name));
        if (current.metadata?.deletionTimestamp !== undefined) return fail(conflict(bindingResource, req.name, `pod ${req.name} is being deleted, cannot be assigned to a host`));
        const bound = asString(asRecord(current['spec'])?.['nodeName']) ?? '';
        if (bound !== '') return fail(conflict(bindingResource, req.name, `pod ${req.name} is already assigned to node ${JSON.stringify(bound)}`));
        const next = structuredClone(current);
        const spec = asRecord(next['spec']) ?? {};
        spec['nodeName'] = node;
        next['spec'] = spec;
        const annotations = asRecord(admitted.value.metadata?.annotations);
        if (annotations !== undefined) metaOf(next).annotations = { ...(next.metadata?.annotations ?? {}), ...(annotations as Record<string, string>) };
        const status = { ...(asRecord(next.status) ?? {}) };
        const conditions = ((status['conditions'] as unknown[] | undefined) ?? []).filter((c) => asRecord(c)?.['type'] !== 'PodScheduled');
        conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: formatTime(ops.now()) });
        status['conditions'] = conditions;
        next.status = status;
        const result = await ops.commitUpdate(req.resource, current, next, req.context, { subresource: 'binding', prepare: () => {}, validate: () => [] });
        if (result === 'conflict') continue;
        if (!result.ok) return result;
        return ok({ code: 201, body: created() });
      }
      return fail(conflict(bindingResource, req.name));
    },
  };
}

export function evictionSubresource(ops: ObjectOperations): SubresourceHandler {
  return {
    verbs: ['create'],
    kind: EVICTION_KIND,
    handle: async (req): Promise<Result<SubresourceResponse>> => {
      if (req.verb !== 'create') return fail(badRequest('only POST is supported on pods/eviction'));
      const parsed = bodyObject(req, 'Eviction');
      if (!parsed.ok) return parsed;
      if (ops.current(req.resource, req.namespace, req.name) === undefined) return fail(notFound({ group: '', resource: 'pods' }, req.name));
      const admitted = await admit(ops, req, EVICTION_KIND, parsed.value);
      if (!admitted.ok) return admitted;
      const options = parseDeleteOptions(admitted.value['deleteOptions'] ?? {}, new URLSearchParams());
      if (!options.ok) return options;
      const deleted = await deleteObject(ops, req.resource, req.namespace, req.name, options.value, req.context);
      if (!deleted.ok) return deleted;
      return ok({ code: 201, body: created() });
    },
  };
}
