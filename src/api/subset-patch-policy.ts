/**
 * What a subset patch may change on a pod (DECISIONS D20; the reference
 * accepts anything).
 *
 * - Never the pod's identity or ownership: `metadata.name`, `generateName`,
 *   `namespace`, `uid`, `resourceVersion`, `ownerReferences`, `finalizers`,
 *   the deletion and creation fields, `managedFields`, `selfLink`, and
 *   `spec.nodeName` (which would bypass the scheduler and every subset). Nor
 *   may a patch replace or prune the pod's metadata with a strategic-merge
 *   directive (`$patch`, `$retainKeys`, ... at the top or in `metadata`).
 * - Privilege-bearing fields only when the manager allows them
 *   (`--allow-privileged-subset-patches`): the service account and its token
 *   (`serviceAccountName`, `serviceAccount`, `automountServiceAccountToken`),
 *   host namespaces (`hostNetwork`, `hostPID`, `hostIPC`, `hostUsers`), the
 *   pod's `securityContext`, a container's `securityContext` except
 *   `capabilities.drop` and `readOnlyRootFilesystem` (which only take
 *   privilege away), container `hostPort`s, and `hostPath` volumes. Whoever
 *   may write a WorkloadSpread could otherwise give another team's pods a
 *   more powerful identity or host access.
 * The container image, command, env, resources, labels, annotations,
 * priorityClassName and the like stay patchable: spreading across CPU
 * architectures or node pools needs them.
 *
 * Two checks: `subsetPatchPolicyErrors` reads the patch itself (validation:
 * the webhook and `workloadspread validate`, messages name the patch field
 * and the flag); `forbiddenPodChanges` compares a pod before and after the
 * patch (injection: a WorkloadSpread stored before this rule, whatever
 * directive it uses, never changes what a pod is). Start there.
 */
import { forbidden, type FieldError, type FieldPath } from '../k8s/field-errors.ts';
import { isPlainObject } from '../k8s/json.ts';

/** The manager flag (and `workloadspread validate` option) that allows privilege-bearing patches. */
export const ALLOW_PRIVILEGED_FLAG = '--allow-privileged-subset-patches';

export interface SubsetPatchPolicy {
  /** Privilege-bearing fields are allowed (`--allow-privileged-subset-patches`). */
  allowPrivileged: boolean;
}

export const DEFAULT_SUBSET_PATCH_POLICY: Readonly<SubsetPatchPolicy> = Object.freeze({ allowPrivileged: false });

/** Metadata fields that make the pod what it is (identity, ownership, lifecycle). */
export const IDENTITY_METADATA_FIELDS = [
  'name',
  'generateName',
  'namespace',
  'uid',
  'resourceVersion',
  'ownerReferences',
  'finalizers',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'creationTimestamp',
  'generation',
  'managedFields',
  'selfLink',
] as const;

/** Pod spec fields the manager must not let a patch set without the flag. */
export const PRIVILEGED_POD_SPEC_FIELDS = ['serviceAccountName', 'serviceAccount', 'automountServiceAccountToken', 'hostNetwork', 'hostPID', 'hostIPC', 'hostUsers', 'securityContext'] as const;

const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;
/** Container securityContext fields that only take privilege away. */
const HARMLESS_CONTAINER_SECURITY = new Set(['readOnlyRootFilesystem']);

const identityDetail = (what: string): string => `a subset patch may not change the pod's ${what} (it would change what the pod is or who owns it)`;
const privilegedDetail = (what: string): string =>
  `a subset patch may set ${what} only when the manager runs with ${ALLOW_PRIVILEGED_FLAG} (it grants the pod more privilege than its workload gave it)`;

/** Field errors for a subset's `patch` (at `path`) that breaks the policy; empty when it is fine. */
export function subsetPatchPolicyErrors(patch: unknown, path: FieldPath, policy: SubsetPatchPolicy = DEFAULT_SUBSET_PATCH_POLICY): FieldError[] {
  if (!isPlainObject(patch)) return [];
  const errs: FieldError[] = [];
  for (const key of Object.keys(patch)) {
    if (key.startsWith('$')) errs.push(forbidden(path.child(key), identityDetail('metadata through a strategic-merge directive')));
  }
  const metadata = patch['metadata'];
  if (metadata !== undefined && !isPlainObject(metadata)) {
    // null or a scalar would delete or replace the whole metadata.
    errs.push(forbidden(path.child('metadata'), identityDetail('metadata')));
  } else if (isPlainObject(metadata)) {
    for (const key of Object.keys(metadata)) {
      if ((IDENTITY_METADATA_FIELDS as readonly string[]).includes(key)) errs.push(forbidden(path.child('metadata', key), identityDetail(`metadata.${key}`)));
      else if (key.startsWith('$')) errs.push(forbidden(path.child('metadata', key), identityDetail('metadata through a strategic-merge directive')));
    }
  }
  const spec = patch['spec'];
  if (!isPlainObject(spec)) return errs;
  const specPath = path.child('spec');
  if (Object.hasOwn(spec, 'nodeName')) errs.push(forbidden(specPath.child('nodeName'), identityDetail('node (spec.nodeName bypasses the scheduler and the subsets)')));
  if (policy.allowPrivileged) return errs;
  for (const field of PRIVILEGED_POD_SPEC_FIELDS) {
    if (Object.hasOwn(spec, field)) errs.push(forbidden(specPath.child(field), privilegedDetail(`spec.${field}`)));
  }
  for (const list of CONTAINER_LISTS) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    containers.forEach((c, i) => {
      if (!isPlainObject(c)) return;
      const at = specPath.child(list).index(i);
      errs.push(...containerSecurityErrors(c, at));
    });
  }
  const volumes = spec['volumes'];
  if (Array.isArray(volumes)) {
    volumes.forEach((v, i) => {
      if (isPlainObject(v) && v['hostPath'] !== undefined) errs.push(forbidden(specPath.child('volumes').index(i).child('hostPath'), privilegedDetail('a hostPath volume')));
    });
  }
  return errs;
}

function containerSecurityErrors(container: Record<string, unknown>, at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const security = container['securityContext'];
  if (security !== undefined && !isPlainObject(security)) {
    errs.push(forbidden(at.child('securityContext'), privilegedDetail('a container securityContext')));
  } else if (isPlainObject(security)) {
    for (const [key, value] of Object.entries(security)) {
      if (HARMLESS_CONTAINER_SECURITY.has(key)) continue;
      if (key === 'capabilities' && isPlainObject(value) && Object.keys(value).every((k) => k === 'drop')) continue;
      const field = key === 'capabilities' ? 'capabilities.add' : key;
      errs.push(forbidden(at.child('securityContext', ...field.split('.')), privilegedDetail(`securityContext.${field}`)));
    }
  }
  const ports = container['ports'];
  if (Array.isArray(ports)) {
    ports.forEach((p, j) => {
      if (isPlainObject(p) && p['hostPort'] !== undefined && p['hostPort'] !== 0) errs.push(forbidden(at.child('ports').index(j).child('hostPort'), privilegedDetail('a hostPort')));
    });
  }
  return errs;
}

// ---- the pod before and after a patch (injection) ----

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (!isPlainObject(v)) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]));
}

function field(obj: unknown, key: string): unknown {
  return isPlainObject(obj) ? obj[key] : undefined;
}

function byName(list: unknown): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  if (!Array.isArray(list)) return out;
  for (const item of list) if (isPlainObject(item) && typeof item['name'] === 'string') out.set(item['name'], item);
  return out;
}

/** The securityContext without what only takes privilege away. */
function privilegedSecurity(security: unknown): unknown {
  if (!isPlainObject(security)) return security ?? null;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(security)) {
    if (HARMLESS_CONTAINER_SECURITY.has(k)) continue;
    if (k === 'capabilities') {
      const add = field(v, 'add');
      if (add !== undefined) out['capabilities.add'] = add;
      continue;
    }
    out[k] = v;
  }
  return out;
}

function hostPorts(container: unknown): number[] {
  const ports = field(container, 'ports');
  if (!Array.isArray(ports)) return [];
  return ports.map((p) => field(p, 'hostPort')).filter((h): h is number => typeof h === 'number' && h !== 0).sort((a, b) => a - b);
}

/**
 * The fields the policy protects that differ between `before` and `after`
 * (a pod before and after a subset patch), as dotted paths; empty when the
 * patch kept to what it may change.
 */
export function forbiddenPodChanges(before: unknown, after: unknown, policy: SubsetPatchPolicy = DEFAULT_SUBSET_PATCH_POLICY): string[] {
  const out: string[] = [];
  const mb = field(before, 'metadata');
  const ma = field(after, 'metadata');
  for (const key of IDENTITY_METADATA_FIELDS) if (!same(field(mb, key), field(ma, key))) out.push(`metadata.${key}`);
  const sb = field(before, 'spec');
  const sa = field(after, 'spec');
  if (!same(field(sb, 'nodeName'), field(sa, 'nodeName'))) out.push('spec.nodeName');
  if (policy.allowPrivileged) return out;
  for (const key of PRIVILEGED_POD_SPEC_FIELDS) if (!same(field(sb, key), field(sa, key))) out.push(`spec.${key}`);
  for (const list of CONTAINER_LISTS) {
    const was = byName(field(sb, list));
    for (const [name, container] of byName(field(sa, list))) {
      const old = was.get(name);
      if (!same(privilegedSecurity(field(old, 'securityContext')), privilegedSecurity(field(container, 'securityContext')))) out.push(`spec.${list}[${name}].securityContext`);
      if (!same(hostPorts(old), hostPorts(container))) out.push(`spec.${list}[${name}].ports.hostPort`);
    }
  }
  const volumesBefore = byName(field(sb, 'volumes'));
  for (const [name, volume] of byName(field(sa, 'volumes'))) {
    if (volume['hostPath'] !== undefined && !same(field(volumesBefore.get(name), 'hostPath'), volume['hostPath'])) out.push(`spec.volumes[${name}].hostPath`);
  }
  return out;
}

/** The metadata of a subset patch without the identity fields and directives (what adoption may copy onto a pod). */
export function patchableMetadata(metadata: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(metadata)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if ((IDENTITY_METADATA_FIELDS as readonly string[]).includes(key) || key.startsWith('$')) continue;
    out[key] = value;
  }
  return out;
}
