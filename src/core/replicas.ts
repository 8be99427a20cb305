/**
 * The replica count of a WorkloadSpread's target workload: what percentages are
 * resolved against and what statuses are computed for.
 *
 * - `walkReplicasPath` / `sumReplicasPaths`: the dotted-path walker of
 *   `targetFilter.replicasPathList` and of the whitelist's `replicasPath`
 *   (spec §1.2), with the reference's error texts.
 * - `admissionWorkloadReplicas`: the webhook's count (spec §5.1), read only
 *   when a subset uses a percentage: to initialize a version entry, and to
 *   size a stored one at the current count (D22).
 * - `controllerWorkloadReplicas`: the reconciler's count (spec §5.2).
 *
 * The two sides differ on purpose, as in the reference: admission recognises
 * built-in kinds by exact group/version/kind and custom kinds by group+kind of
 * the whitelist; the controller recognises built-in kinds by group+kind and
 * uses a whitelist `replicasPath` only when group AND version match.
 *
 * D4: a nil `spec.replicas` / `spec.parallelism` counts as 1 (the Kubernetes
 * default) wherever the reference would dereference it. The same default
 * applies to a whitelist `replicasPath` whose value is absent, since such
 * workloads are defaulted the same way; an explicit `replicasPathList` in the
 * targetFilter stays strict (a missing path is the user's error, §1.2).
 * Pure: the caller fetches the workload (and its scale subresource).
 */
import { isPlainObject } from '../k8s/json.ts';
import { apiVersionGroup } from '../k8s/pod.ts';
import type { KubeObject } from '../k8s/types.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { replicasPathFor, replicasPathForGroupKind, type Whitelist } from '../api/whitelist.ts';

/** Why a path walk failed; `missing` is set when a field on the way (or the leaf) is absent or null. */
export type WalkResult = { ok: true; value: number } | { ok: false; error: string; missing: boolean };

export type ReplicasResult = { ok: true; replicas: number } | { ok: false; error: string };

/** Go's strconv.Atoi syntax: optional sign, decimal digits. */
const ATOI = /^[+-]?[0-9]+$/;

/**
 * Reads the integer at a dotted path (spec §1.2). Map segments must exist;
 * a segment applied to an array must be an index in [0, len); going past a
 * scalar is "not deep enough"; the leaf must be an integer. Empty path: 0.
 */
export function walkReplicasPath(obj: unknown, path: string): WalkResult {
  if (path === '') return { ok: true, value: 0 };
  let current: unknown = obj;
  for (const segment of path.split('.')) {
    if (Array.isArray(current)) {
      if (!ATOI.test(segment)) {
        return { ok: false, error: `strconv.Atoi: parsing ${JSON.stringify(segment)}: invalid syntax`, missing: false };
      }
      const index = Number(segment);
      if (index < 0 || index >= current.length) {
        return { ok: false, error: `index ${index} out of range`, missing: false };
      }
      current = current[index];
    } else if (isPlainObject(current)) {
      if (!Object.hasOwn(current, segment)) {
        return { ok: false, error: `path "${segment}" not exists`, missing: true };
      }
      current = current[segment];
    } else {
      return { ok: false, error: 'object is not deep enough', missing: current === null || current === undefined };
    }
  }
  // Unstructured JSON keeps integers as int64; anything else fails the type assertion.
  if (typeof current !== 'number' || !Number.isSafeInteger(current)) {
    return { ok: false, error: 'object type error', missing: current === null || current === undefined };
  }
  return { ok: true, value: current };
}

/** The sum of the integers at every path; the first failing path is the error. */
export function sumReplicasPaths(obj: unknown, paths: readonly string[]): ReplicasResult {
  let sum = 0;
  for (const path of paths) {
    const walked = walkReplicasPath(obj, path);
    if (!walked.ok) return { ok: false, error: walked.error };
    sum += walked.value;
  }
  return { ok: true, replicas: sum };
}

/** The value at a replicas field, nil counting as 1 (D4); a wrong type is still an error. */
function replicasOrDefault(obj: unknown, path: string): ReplicasResult {
  const walked = walkReplicasPath(obj, path);
  if (walked.ok) return { ok: true, replicas: walked.value };
  if (walked.missing) return { ok: true, replicas: 1 };
  return { ok: false, error: `${path}: ${walked.error}` };
}

function targetGroupVersionKind(ws: WorkloadSpread): { ok: true; group: string; version: string; kind: string } | { ok: false; error: string } {
  const ref = ws.spec.targetRef;
  const gv = apiVersionGroup(ref.apiVersion);
  if (!gv.ok) return { ok: false, error: gv.error };
  return { ok: true, group: gv.group, version: gv.version, kind: ref.kind };
}

function replicasPathList(ws: WorkloadSpread): string[] | undefined {
  const list = ws.spec.targetFilter?.replicasPathList;
  return Array.isArray(list) && list.length > 0 ? list : undefined;
}

/** Built-in kinds whose replica count admission reads from `spec.replicas`, by exact apiVersion (spec §5.1). */
const ADMISSION_SPEC_REPLICAS = new Set([
  'apps/v1/Deployment',
  'apps/v1/ReplicaSet',
  'apps/v1/StatefulSet',
  'apps.kruise.io/v1alpha1/CloneSet',
  'apps.kruise.io/v1alpha1/StatefulSet',
  'apps.kruise.io/v1beta1/StatefulSet',
]);

/**
 * The workload replicas seen by admission (spec §5.1). `workload` is the
 * object fetched for the targetRef; undefined means it was not found (0).
 * Custom kinds are resolved through the whitelist entry of the same
 * group+kind (version ignored), else 0 — including `apps.kruise.io/v1beta1`
 * CloneSets, as in the reference (§9.15).
 */
export function admissionWorkloadReplicas(ws: WorkloadSpread, workload: KubeObject | undefined, whitelist: Whitelist): ReplicasResult {
  if (workload === undefined || workload === null) return { ok: true, replicas: 0 };
  const paths = replicasPathList(ws);
  if (paths !== undefined) return sumReplicasPaths(workload, paths);
  const gvk = targetGroupVersionKind(ws);
  if (!gvk.ok) return gvk;
  const key = `${gvk.group}/${gvk.version}/${gvk.kind}`;
  if (ADMISSION_SPEC_REPLICAS.has(key)) return replicasOrDefault(workload, 'spec.replicas');
  if (key === 'batch/v1/Job') return replicasOrDefault(workload, 'spec.parallelism');
  const path = replicasPathForGroupKind(whitelist, gvk.group, gvk.kind);
  if (path === undefined) return { ok: true, replicas: 0 };
  return path === '' ? { ok: true, replicas: 0 } : replicasOrDefault(workload, path);
}

/**
 * Whether `admissionWorkloadReplicas` reads the count from the workload's
 * fields (a built-in kind, a replicas path), as opposed to the constant 0 of
 * a kind it cannot count (spec §9.15): only then can a fresh copy of the
 * workload give another count.
 */
export function admissionReadsReplicas(ws: WorkloadSpread, whitelist: Whitelist): boolean {
  if (replicasPathList(ws) !== undefined) return true;
  const gvk = targetGroupVersionKind(ws);
  if (!gvk.ok) return false;
  const key = `${gvk.group}/${gvk.version}/${gvk.kind}`;
  if (ADMISSION_SPEC_REPLICAS.has(key) || key === 'batch/v1/Job') return true;
  const path = replicasPathForGroupKind(whitelist, gvk.group, gvk.kind);
  return path !== undefined && path !== '';
}

/** Kinds whose controller-side count is `spec.replicas`, by group+kind (spec §5.2). */
const CONTROLLER_SPEC_REPLICAS = new Set([
  'apps/Deployment',
  'apps/ReplicaSet',
  'apps/StatefulSet',
  'apps.kruise.io/CloneSet',
  'apps.kruise.io/StatefulSet',
  '/ReplicationController',
]);

/**
 * The workload replicas seen by the controller (spec §5.2). `workload`
 * undefined means not found (0: no pods). For custom kinds the caller passes
 * the scale subresource when the kind has one; without it the count is -1
 * ("unknown", so percentages resolve to 0). `targetFilter.replicasPathList`
 * wins over everything, then a whitelist `replicasPath` whose group, version
 * and kind all equal the targetRef's.
 *
 * A Scale object omits `spec.replicas` when it is 0 (omitempty on an int32),
 * so an absent scale value is 0, not the D4 default.
 */
export function controllerWorkloadReplicas(
  ws: WorkloadSpread,
  workload: KubeObject | undefined,
  whitelist: Whitelist,
  scale?: { replicas?: number },
): ReplicasResult {
  if (workload === undefined || workload === null) return { ok: true, replicas: 0 };
  const gvk = targetGroupVersionKind(ws);
  if (!gvk.ok) return gvk;
  const paths = replicasPathList(ws);
  if (paths !== undefined) return sumReplicasPaths(workload, paths);
  const path = replicasPathFor(whitelist, gvk.group, gvk.version, gvk.kind);
  if (path !== undefined) return path === '' ? { ok: true, replicas: 0 } : replicasOrDefault(workload, path);
  if (gvk.group === 'batch' && gvk.kind === 'Job') return replicasOrDefault(workload, 'spec.parallelism');
  if (CONTROLLER_SPEC_REPLICAS.has(`${gvk.group}/${gvk.kind}`)) return replicasOrDefault(workload, 'spec.replicas');
  if (scale !== undefined) {
    const value = scale.replicas;
    return { ok: true, replicas: typeof value === 'number' && Number.isSafeInteger(value) ? value : 0 };
  }
  return { ok: true, replicas: -1 };
}

/** Workload kinds (`group/Kind`) whose replicas and pods the controller reads without a scale subresource (spec §5.2). */
export const CONTROLLER_KNOWN_KINDS: ReadonlySet<string> = new Set([
  'apps/Deployment',
  'apps/ReplicaSet',
  'apps/StatefulSet',
  'batch/Job',
  'apps.kruise.io/CloneSet',
  'apps.kruise.io/StatefulSet',
]);

/**
 * Whether the controller reads the target's scale subresource (spec §5.2):
 * only for a custom kind, and only when its count is otherwise unknown
 * (`plain` is -1) or the workload owns no pod itself.
 */
export function readsScaleSubresource(ws: WorkloadSpread, plain: ReplicasResult, ownsPods: boolean): boolean {
  if (!plain.ok) return false;
  const gvk = targetGroupVersionKind(ws);
  if (!gvk.ok || CONTROLLER_KNOWN_KINDS.has(`${gvk.group}/${gvk.kind}`)) return false;
  return plain.replicas === -1 || !ownsPods;
}

/**
 * The controller's count once the scale subresource is read (`plain` when it
 * was known already), and the scale's pod selector (`status.selector`, as
 * text) when the workload owns no pod itself: its pods are those the
 * selector matches (Argo Rollouts, whose ReplicaSets own the pods).
 */
export function replicasWithScale(
  ws: WorkloadSpread,
  workload: KubeObject,
  whitelist: Whitelist,
  plain: { ok: true; replicas: number },
  ownsPods: boolean,
  scale: { replicas?: number; selector?: string },
): { ok: true; replicas: number; selector?: string } | { ok: false; error: string } {
  const counted = plain.replicas !== -1 ? plain : controllerWorkloadReplicas(ws, workload, whitelist, scale.replicas === undefined ? {} : { replicas: scale.replicas });
  if (!counted.ok) return counted;
  if (!ownsPods && scale.selector !== undefined && scale.selector !== '') return { ok: true, replicas: counted.replicas, selector: scale.selector };
  return { ok: true, replicas: counted.replicas };
}
