/**
 * V15 (spec §7): a subset's `patch` must leave the target's pod template valid.
 * Each patch is applied, as a strategic merge patch with the Pod's patch
 * metadata, to the workload's pod template; the result must decode as a
 * PodTemplateSpec ("failed to unmarshal: ...") and pass core pod template
 * validation, reported under `spec.subsets[i].patch`.
 *
 * Which workloads (user-issues #11–#13):
 * - Deployment, ReplicaSet, StatefulSet (apps), Job (batch), CloneSet and
 *   Advanced StatefulSet (apps.kruise.io): `spec.template`. The caller fetches
 *   the workload by its real group and version, so Kruise StatefulSets are
 *   validated too (the reference fetched an apps/v1 one, #2539).
 * - CloneSet and both StatefulSets first get their `spec.volumeClaimTemplates`
 *   as `persistentVolumeClaim` volumes (#1738), replacing a same-named volume
 *   as the StatefulSet controller does when it builds pods.
 * - A missing workload, or another kind, validates nothing (#1964: a
 *   WorkloadSpread may be created before its workload).
 *
 * Divergence: when the merge itself fails, only "failed to merge patch" is
 * reported; the reference then also decodes and validates an empty template,
 * adding errors that only confuse.
 */
import { invalid, root, type FieldError, type FieldPath } from '../k8s/field-errors.ts';
import { apiVersionGroup } from '../k8s/pod.ts';
import { asArray, asRecord, asString, type JsonRecord } from '../k8s/raw-json.ts';
import { POD_PATCH_META, strategicMergePatch } from '../k8s/strategic-merge.ts';
import type { KubeObject } from '../k8s/types.ts';
import { podTemplateDecodeError, validatePodTemplateSpec } from '../k8s/validation.ts';

/** group/kind → whether its volumeClaimTemplates become volumes of the pods. */
const TEMPLATE_WORKLOADS: ReadonlyMap<string, { claimTemplates: boolean }> = new Map([
  ['apps/Deployment', { claimTemplates: false }],
  ['apps/ReplicaSet', { claimTemplates: false }],
  ['apps/StatefulSet', { claimTemplates: true }],
  ['batch/Job', { claimTemplates: false }],
  ['apps.kruise.io/CloneSet', { claimTemplates: true }],
  ['apps.kruise.io/StatefulSet', { claimTemplates: true }],
]);

/**
 * The pod template the subset patches apply to, for a targetRef and the workload
 * it names; undefined when there is nothing to validate against.
 */
export function podTemplateForPatches(targetRef: unknown, workload: KubeObject | undefined): JsonRecord | undefined {
  const ref = asRecord(targetRef);
  if (workload === undefined || workload === null || ref === undefined) return undefined;
  const gv = apiVersionGroup(asString(ref['apiVersion']) ?? '');
  const kind = asString(ref['kind']) ?? '';
  const shape = gv.ok ? TEMPLATE_WORKLOADS.get(`${gv.group}/${kind}`) : undefined;
  const spec = asRecord(workload['spec']);
  const template = asRecord(spec?.['template']);
  if (shape === undefined || template === undefined) return undefined;
  const copy = structuredClone(template);
  if (!shape.claimTemplates) return copy;
  const claims = asArray(spec?.['volumeClaimTemplates']) ?? [];
  if (claims.length === 0) return copy;
  const podSpec: JsonRecord = asRecord(copy['spec']) ?? {};
  const volumes = (asArray(podSpec['volumes']) ?? []).slice();
  for (const claim of claims) {
    const name = asString(asRecord(asRecord(claim)?.['metadata'])?.['name']) ?? '';
    if (name === '') continue;
    const volume = { name, persistentVolumeClaim: { claimName: name } };
    const existing = volumes.findIndex((v) => asString(asRecord(v)?.['name']) === name);
    if (existing >= 0) volumes[existing] = volume;
    else volumes.push(volume);
  }
  podSpec['volumes'] = volumes;
  copy['spec'] = podSpec;
  return copy;
}

/** V15 for one patch against a template; `path` is the patch's field path. */
export function subsetPatchErrors(patch: unknown, template: JsonRecord, path: FieldPath): FieldError[] {
  const merged = strategicMergePatch(template, patch, POD_PATCH_META);
  if (!merged.ok) return [invalid(path, patch, `failed to merge patch: ${merged.error}`)];
  const decodeError = podTemplateDecodeError(merged.value);
  if (decodeError !== undefined) return [invalid(path, patch, `failed to unmarshal: ${decodeError}`)];
  return validatePodTemplateSpec(merged.value, path);
}

/** V15 for every subset of a WorkloadSpread; `workload` undefined (not found) → no errors. */
export function validateSubsetPatches(ws: unknown, workload: KubeObject | undefined): FieldError[] {
  const spec = asRecord(asRecord(ws)?.['spec']);
  const template = podTemplateForPatches(spec?.['targetRef'], workload);
  if (template === undefined) return [];
  const errs: FieldError[] = [];
  (asArray(spec?.['subsets']) ?? []).forEach((subset, i) => {
    const patch = asRecord(subset)?.['patch'];
    if (patch !== undefined && patch !== null) errs.push(...subsetPatchErrors(patch, template, root('spec', 'subsets').index(i).child('patch')));
  });
  return errs;
}
