/**
 * The `pods/binding` subresource (BindingREST in
 * k8s.io/kubernetes/pkg/registry/core/pod/storage/storage.go), POST of a v1
 * Binding, how a scheduler assigns a pod to a node:
 *
 * - admission sees CREATE `pods/binding` with the Binding;
 * - the Binding must carry the pod's name and a target of kind Node (or no
 *   kind) with a name — upstream reports a bad target as a plain error, i.e.
 *   a 500 with reason Unknown, and so do we;
 * - the Binding's uid / resourceVersion, when set, are preconditions on the pod;
 * - the pod must not be deleting, bound already, or gated: 409 on
 *   `pods/binding` (`pod x is already assigned to node "y"`);
 * - then, in one write that bypasses the pod strategy (a storage-level update
 *   upstream, so no admission and no update validation): `spec.nodeName`, the
 *   Binding's annotations merged in, and the PodScheduled=True condition.
 * The answer is a Success Status with code 201.
 */
import { formatFieldError, notSupported, required, type FieldError } from '../../k8s/field-errors.ts';
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { badRequest, conflict, fail, notFound, ok, statusError, type Result, type Status } from './errors.ts';
import { decodeSubresourceBody } from './eviction.ts';
import { metaOf } from './object-meta.ts';
import type { ObjectOperations } from './operations.ts';
import { updatePodCondition } from './pod-condition.ts';
import { storageKey, type GroupVersionKind, type SubresourceHandler, type SubresourceRequest, type SubresourceResponse } from './resource-def.ts';

export const BINDING_KIND: GroupVersionKind = { group: '', version: 'v1', kind: 'Binding' };
const MAX_ATTEMPTS = 16;

/** validation.ValidatePodBinding. */
export function validatePodBinding(binding: KubeObject): FieldError[] {
  const target = asRecord(binding['target']) ?? {};
  const kind = asString(target['kind']) ?? '';
  const errs: FieldError[] = [];
  if (kind !== '' && kind !== 'Node') errs.push(notSupported('target.kind', kind, ['Node', '<empty>']));
  if ((asString(target['name']) ?? '') === '') errs.push(required('target.name'));
  return errs;
}

/** A plain Go error returned by a REST handler: 500, reason Unknown, the (aggregated) error text. */
function plainError(errors: FieldError[]): Status {
  const texts = [...new Set(errors.map(formatFieldError))];
  return statusError(500, 'Unknown', texts.length === 1 ? (texts[0] as string) : `[${texts.join(', ')}]`);
}

const bindingConflict = (name: string, why: string): Status => conflict({ group: '', resource: 'pods/binding' }, name, why);

export class BindingHandler implements SubresourceHandler {
  readonly verbs = ['create'];
  readonly kind = BINDING_KIND;
  readonly #ops: ObjectOperations;

  constructor(ops: ObjectOperations) {
    this.#ops = ops;
  }

  async handle(req: SubresourceRequest): Promise<Result<SubresourceResponse>> {
    if (req.verb !== 'create') return fail(badRequest('only POST is supported on pods/binding'));
    const ops = this.#ops;
    const decoded = decodeSubresourceBody(req.body, 'Binding', ['v1'], req.namespace);
    if (!decoded.ok) return decoded;
    const attrs = ops.attributes('CREATE', req.resource, 'binding', req.namespace, req.name, decoded.value, undefined, req.context, {});
    attrs.kind = BINDING_KIND;
    const mutated = await ops.admission.mutate(attrs, req.context);
    if (!mutated.ok) return mutated;
    const binding = mutated.value ?? decoded.value;
    attrs.object = binding;
    if ((asString(binding.metadata?.name) ?? '') !== req.name) return fail(badRequest('name in URL does not match name in Binding object'));
    const errors = validatePodBinding(binding);
    if (errors.length > 0) return fail(plainError(errors));
    const validated = await ops.admission.validate(attrs, req.context);
    if (!validated.ok) return validated;
    const assigned = this.#assign(req, binding);
    if (!assigned.ok) return assigned;
    return ok({ code: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } });
  }

  #assign(req: SubresourceRequest, binding: KubeObject): Result<void> {
    const ops = this.#ops;
    const node = asString(asRecord(binding['target'])?.['name']) ?? '';
    const wantUid = asString(binding.metadata?.uid) ?? '';
    const wantRv = asString(binding.metadata?.resourceVersion) ?? '';
    const annotations = (asRecord(binding.metadata?.annotations) ?? {}) as Record<string, string>;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = ops.current(req.resource, req.namespace, req.name);
      if (current === undefined) return fail(notFound({ group: '', resource: 'pods' }, req.name));
      const uid = asString(current.metadata?.uid) ?? '';
      const rv = asString(current.metadata?.resourceVersion) ?? '';
      if (wantUid !== '' && wantUid !== uid) return fail(conflict({ group: '', resource: 'pods' }, req.name, `Precondition failed: UID in precondition: ${wantUid}, UID in object meta: ${uid}`));
      if (wantRv !== '' && wantRv !== rv) return fail(conflict({ group: '', resource: 'pods' }, req.name, `Precondition failed: ResourceVersion in precondition: ${wantRv}, ResourceVersion in object meta: ${rv}`));
      if (current.metadata?.deletionTimestamp !== undefined) return fail(bindingConflict(req.name, `pod ${req.name} is being deleted, cannot be assigned to a host`));
      const spec = asRecord(current['spec']) ?? {};
      const bound = asString(spec['nodeName']) ?? '';
      if (bound !== '') return fail(bindingConflict(req.name, `pod ${req.name} is already assigned to node ${JSON.stringify(bound)}`));
      if ((asArray(spec['schedulingGates']) ?? []).length > 0) return fail(bindingConflict(req.name, `pod ${req.name} has non-empty .spec.schedulingGates`));
      if (req.context.dryRun) return ok(undefined);
      const next = structuredClone(current);
      next['spec'] = { ...(asRecord(next['spec']) ?? {}), nodeName: node };
      const meta = metaOf(next);
      const merged = { ...((asRecord(meta.annotations) ?? {}) as Record<string, string>), ...annotations };
      if (Object.keys(merged).length > 0) meta.annotations = merged;
      updatePodCondition(next, { type: 'PodScheduled', status: 'True' }, ops.now());
      const stored = ops.store.update(storageKey(req.resource), next, rv);
      if (stored.ok) return ok(undefined);
      if (stored.reason === 'notFound') return fail(notFound({ group: '', resource: 'pods' }, req.name));
    }
    return fail(bindingConflict(req.name, 'the object has been modified; please apply your changes to the latest version and try again'));
  }
}
