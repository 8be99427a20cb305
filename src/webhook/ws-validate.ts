/**
 * WorkloadSpread CREATE/UPDATE admission (the validating webhook,
 * `/validate-apps-kruise-io-workloadspread`): spec §7 in full through
 * `validateWorkloadSpreadFull`, with what only the cluster knows:
 * - the custom-workload whitelist (V8); when it cannot be read and the rule
 *   needs it, the answer is 500 InternalError, as in the reference;
 * - the target workload, fetched by its real group and version (V15;
 *   user-issues #12); a workload that does not exist yet only skips patch
 *   validation, never rejects (user-issues #13), and a failed read does the
 *   same with a warning to the user;
 * - the other WorkloadSpreads of the namespace (V26: only those that take
 *   precedence over this one, core/target-conflict.ts — the older one of a
 *   workload stays editable while a duplicate exists) and, on UPDATE, the
 *   stored object (V27).
 * Errors become a 422 Invalid status whose message lists every field error
 * and whose causes carry the field paths, as `kubectl apply` prints them.
 * Start at `admitWorkloadSpread`.
 */
import { validateWorkloadSpreadFull, type WhitelistReadError } from '../api/validation.ts';
import type { SubsetPatchPolicy } from '../api/subset-patch-policy.ts';
import type { Whitelist } from '../api/whitelist.ts';
import { GROUP, KIND, PLURAL } from '../api/workloadspread.ts';
import { takesPrecedence } from '../core/target-conflict.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { KubeObject } from '../k8s/types.ts';
import type { ClusterView } from '../core/cluster-view.ts';
import { allowed, errored, invalidObject, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import { ReadThroughView, settleLookup, type ApiReads } from './view-reads.ts';

export interface WorkloadSpreadValidationDeps {
  view: ClusterView;
  reads: ApiReads;
  /** The manager's unschedulable recovery window (D10), for the V24 bound. */
  unschedulableRecoverySeconds?: number;
  /** D20: `--allow-privileged-subset-patches`. */
  subsetPatches?: SubsetPatchPolicy;
}

/** Answers one WorkloadSpread CREATE/UPDATE review (spec §7). */
export async function admitWorkloadSpread(req: AdmissionRequest, deps: WorkloadSpreadValidationDeps): Promise<AdmissionResponse> {
  const { uid } = req;
  if (req.resource.group !== GROUP || req.resource.resource !== PLURAL || req.subResource !== '') return allowed(uid);
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return allowed(uid);
  const ws = req.object;
  if (!isPlainObject(ws)) return errored(uid, 400, new Error('the request object is not a WorkloadSpread'));
  const metadata = isPlainObject(ws['metadata']) ? ws['metadata'] : {};
  const name = typeof metadata['name'] === 'string' && metadata['name'] !== '' ? metadata['name'] : req.name;
  const namespace = req.namespace !== '' ? req.namespace : typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';

  const view = new ReadThroughView(deps.view, deps.reads);
  const whitelist: Whitelist | WhitelistReadError = view.whitelist();
  const warnings: string[] = [];
  let workload: KubeObject | undefined;
  const spec = isPlainObject(ws['spec']) ? ws['spec'] : undefined;
  const ref = spec !== undefined && isPlainObject(spec['targetRef']) ? spec['targetRef'] : undefined;
  if (ref !== undefined && typeof ref['apiVersion'] === 'string' && typeof ref['kind'] === 'string' && typeof ref['name'] === 'string' && ref['name'] !== '') {
    const target = { apiVersion: ref['apiVersion'], kind: ref['kind'], name: ref['name'] };
    const found = await settleLookup(view, () => view.object(namespace, target, { exactVersion: true }));
    if ('found' in found) workload = found.found;
    else if ('error' in found) {
      warnings.push(`the target ${ref['kind']} ${namespace}/${ref['name']} could not be read (${found.error}); subset patches were not checked against its pod template`);
    }
  }
  // V26 against those that take precedence over this one (core/target-conflict.ts): the older stays editable.
  const others = view.workloadSpreads(namespace).filter((other) => takesPrecedence(other, ws));
  const errors = validateWorkloadSpreadFull(ws, {
    whitelist,
    workload,
    others,
    ...(req.operation === 'UPDATE' && req.oldObject !== undefined && req.oldObject !== null ? { old: req.oldObject } : {}),
    ...(deps.unschedulableRecoverySeconds !== undefined ? { unschedulableRecoverySeconds: deps.unschedulableRecoverySeconds } : {}),
    ...(deps.subsetPatches !== undefined ? { subsetPatches: deps.subsetPatches } : {}),
  });
  const internal = errors.find((e) => e.type === 'InternalError');
  if (internal !== undefined) {
    // The only internal error is an unreadable whitelist (V8): what the config map read said stays in the
    // manager's log (kube/whitelist-source.ts logs it); the caller may not read that config map.
    const response = errored(uid, 500, new Error("Internal error occurred: the manager's custom workload whitelist cannot be read"));
    if (response.status !== undefined) response.status.reason = 'InternalError';
    return response;
  }
  if (errors.length > 0) return invalidObject(uid, { group: GROUP, kind: KIND }, name, errors);
  return allowed(uid, warnings);
}
