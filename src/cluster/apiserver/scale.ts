/**
 * The `scale` subresource (autoscaling/v1 Scale) of Deployments, ReplicaSets,
 * StatefulSets and of custom resources that declare one: GET builds the Scale
 * from the parent (`status.selector` as a selector string), PUT and PATCH
 * change only the parent's replicas, with the parent's resourceVersion as the
 * optimistic-concurrency token. Admission sees the Scale (kind
 * autoscaling/v1 Scale, subresource `scale`), as upstream's scale REST does.
 */
import { root } from '../../k8s/field-errors.ts';
import { isPlainObject } from '../../k8s/json.ts';
import { selectorToString } from '../../k8s/label-selector.ts';
import { asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import { strategicMergePatch } from '../../k8s/strategic-merge.ts';
import type { KubeObject, LabelSelector } from '../../k8s/types.ts';
import { badRequest, conflict, fail, invalid, notFound, ok, unsupportedMediaType, type Result } from './errors.ts';
import { applyRequestJsonPatch, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH } from './patch.ts';
import { jsonMergePatch } from '../../k8s/merge-patch.ts';
import { groupResourceOf, type ObjectOperations, type WriteOutcome } from './operations.ts';
import type { GroupVersionKind, RequestContext, ResourceDef, ScaleSpec } from './resource-def.ts';

export const SCALE_KIND: GroupVersionKind = { group: 'autoscaling', version: 'v1', kind: 'Scale' };
const MAX_ATTEMPTS = 16;

function pathParts(path: string): string[] {
  return path.replace(/^\./, '').split('.').filter((p) => p !== '');
}

export function readPath(obj: unknown, path: string): unknown {
  let node: unknown = obj;
  for (const part of pathParts(path)) node = asRecord(node)?.[part];
  return node;
}

function writePath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = pathParts(path);
  let node = obj;
  parts.forEach((part, i) => {
    if (i === parts.length - 1) {
      node[part] = value;
      return;
    }
    const next = asRecord(node[part]) ?? {};
    node[part] = next;
    node = next;
  });
}

/** The Scale of a parent object. */
export function scaleOf(spec: ScaleSpec, parent: KubeObject): KubeObject {
  const meta = parent.metadata ?? {};
  const scaleMeta: Record<string, unknown> = { name: meta.name, namespace: meta.namespace, uid: meta.uid, resourceVersion: meta.resourceVersion, creationTimestamp: meta.creationTimestamp };
  for (const key of Object.keys(scaleMeta)) if (scaleMeta[key] === undefined) delete scaleMeta[key];
  const status: Record<string, unknown> = { replicas: asNumber(readPath(parent, spec.statusReplicasPath)) ?? 0 };
  if (spec.labelSelectorPath !== undefined) {
    const selector = readPath(parent, spec.labelSelectorPath);
    const text = typeof selector === 'string' ? selector : isPlainObject(selector) ? selectorToString(selector as LabelSelector) : '';
    if (text !== '') status['selector'] = text;
  }
  const specReplicas = asNumber(readPath(parent, spec.specReplicasPath));
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: scaleMeta, spec: specReplicas === undefined ? {} : { replicas: specReplicas }, status };
}

export function getScale(ops: ObjectOperations, def: ResourceDef, namespace: string, name: string): Result<KubeObject> {
  const spec = def.subresources.scale;
  if (spec === undefined) return fail(notFound(groupResourceOf(def), name));
  const current = ops.current(def, namespace, name);
  if (current === undefined) return fail(notFound(groupResourceOf(def), name));
  return ok(scaleOf(spec, current));
}

/** PUT (`patchType` undefined) or PATCH of `/scale`. */
export async function updateScale(
  ops: ObjectOperations,
  def: ResourceDef,
  namespace: string,
  name: string,
  body: unknown,
  patchType: string | undefined,
  ctx: RequestContext,
): Promise<Result<WriteOutcome>> {
  const spec = def.subresources.scale;
  if (spec === undefined) return fail(notFound(groupResourceOf(def), name));
  if (patchType !== undefined && ![JSON_PATCH, MERGE_PATCH, ...(def.builtin ? [STRATEGIC_MERGE_PATCH] : [])].includes(patchType)) {
    return fail(unsupportedMediaType([JSON_PATCH, MERGE_PATCH, ...(def.builtin ? [STRATEGIC_MERGE_PATCH] : [])]));
  }
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = ops.current(def, namespace, name);
    if (current === undefined) return fail(notFound(groupResourceOf(def), name));
    const oldScale = scaleOf(spec, current);
    let requested: unknown;
    if (patchType === undefined) {
      requested = body;
    } else if (patchType === JSON_PATCH) {
      const r = applyRequestJsonPatch(oldScale, body);
      if (!r.ok) return r;
      requested = r.value;
    } else if (patchType === MERGE_PATCH) {
      requested = jsonMergePatch(oldScale, body);
    } else {
      const r = strategicMergePatch(oldScale, body, {});
      if (!r.ok) return fail(badRequest(r.error));
      requested = r.value;
    }
    if (!isPlainObject(requested)) return fail(badRequest('the object provided is unrecognized (must be of type Scale)'));
    let scale = structuredClone(requested) as KubeObject;
    const kind = asString(scale.kind) ?? 'Scale';
    if (kind !== 'Scale') return fail(badRequest(`${kind} in version "v1" cannot be handled as a Scale: converting (v1.${kind}) to (autoscaling.Scale): unknown conversion`));
    const scaleName = asString(scale.metadata?.name) ?? '';
    if (scaleName !== '' && scaleName !== name) return fail(badRequest(`the name of the object (${scaleName}) does not match the name on the URL (${name})`));
    const attrs = ops.attributes('UPDATE', def, 'scale', namespace, name, scale, oldScale, ctx, {});
    attrs.kind = SCALE_KIND;
    const mutated = await ops.admission.mutate(attrs, ctx);
    if (!mutated.ok) return mutated;
    scale = mutated.value ?? scale;
    const replicas = asNumber(asRecord(scale['spec'])?.['replicas']) ?? 0;
    if (replicas < 0) {
      return fail(invalid('Scale', 'autoscaling', name, [{ type: 'FieldValueInvalid', field: root('spec', 'replicas').toString(), badValue: replicas, detail: 'must be greater than or equal to 0' }]));
    }
    const rv = asString(scale.metadata?.resourceVersion) ?? '';
    if (rv !== '' && rv !== current.metadata?.resourceVersion) return fail(conflict(groupResourceOf(def), name));
    const next = structuredClone(current);
    writePath(next, spec.specReplicasPath, replicas);
    // Recorded on the parent, as upstream does: `Update` with `subresource: scale` owning spec.replicas.
    ops.fields.update(def, current, next, ops.managerOf(ctx), 'scale', ops.now());
    const newScale = scaleOf(spec, next);
    const result = await ops.commitUpdate(def, current, next, ctx, { subresource: 'scale', admissionKind: SCALE_KIND, admissionObject: newScale, admissionOldObject: oldScale });
    if (result === 'conflict') continue;
    if (!result.ok) return result;
    return ok({ object: scaleOf(spec, result.value), created: false });
  }
  return fail(conflict(groupResourceOf(def), name));
}
