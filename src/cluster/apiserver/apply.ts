/**
 * Server-side apply (`application/apply-patch+yaml`, `kubectl apply --server-side`).
 *
 * A missing object is created from the applied configuration; an existing one
 * gets it merged in (fields/typed-value.ts). Field ownership, conflicts (409
 * naming each field and its manager), `force` and the removal of fields the
 * applier stopped setting are the field manager's (fields/managed-fields.ts).
 * The result then goes through the normal update pipeline (defaults, admission,
 * validation), retried from the fresh object when a concurrent write wins.
 */
import { isPlainObject } from '../../k8s/json.ts';
import { asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { badRequest, fail, type Result } from './errors.ts';
import type { ObjectOperations, WriteOutcome } from './operations.ts';
import { apiVersionOf, type RequestContext, type ResourceDef } from './resource-def.ts';

/** A PATCH request as the handler parsed it (every patch type; apply is one of them). */
export interface PatchRequest {
  patchType: string;
  /** The parsed body (JSON, or YAML for apply). */
  body: unknown;
  subresource: string;
  fieldManager?: string;
  force?: boolean;
  options?: Record<string, unknown>;
}

/** PATCH with `application/apply-patch+yaml`. */
export async function applyObject(ops: ObjectOperations, def: ResourceDef, namespace: string, name: string, req: PatchRequest, ctx: RequestContext): Promise<Result<WriteOutcome>> {
  const manager = req.fieldManager ?? '';
  if (manager === '') return fail(badRequest('fieldManager is required for apply requests'));
  if (!isPlainObject(req.body)) return fail(badRequest('error decoding YAML: the applied configuration must be an object'));
  const body = req.body as KubeObject;
  if (isPlainObject(body.metadata) && body.metadata.managedFields !== undefined) return fail(badRequest('metadata.managedFields must be nil'));
  const checked = ops.checkBody(def, body);
  if (!checked.ok) return checked;
  const fields = ops.checkFields(def, checked.value, ctx, (unknown) => `failed to create typed patch object (${namespace}/${name}; ${apiVersionOf(def)}, Kind=${def.kind}): .${unknown[0] ?? ''}: field not declared in schema`);
  if (!fields.ok) return fields;
  const applied = checked.value;
  const appliedName = asString(applied.metadata?.name) ?? '';
  if (appliedName !== name) return fail(badRequest(`the name of the object (${appliedName}) does not match the name on the URL (${name})`));
  return ops.updateWith(
    def,
    namespace,
    name,
    ctx,
    req.subresource,
    req.options ?? {},
    async (current) =>
      ops.fields.apply(def, current, applied, { manager, subresource: req.subresource, force: req.force === true, now: ops.now() }, (merged) => {
        // A private copy, checked and defaulted as any decoded body, before ownership is computed.
        const checked = ops.checkBody(def, merged);
        if (checked.ok) def.strategy.applyDefaults?.(checked.value);
        return checked;
      }),
    'always',
    true,
  );
}
