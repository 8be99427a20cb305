/**
 * DomainDisruptionBudget CREATE/UPDATE admission (D14; the "Bad
 * input"): `validateDomainDisruptionBudget` / `...Update` from src/api, as a
 * 422 Invalid status whose message lists every field error and whose causes
 * carry the field paths. A `workloadSpreadRef` to a WorkloadSpread that does
 * not exist is admitted with a warning (the budget's status condition
 * WorkloadSpreadFound says so too), since the WorkloadSpread may come next.
 * Served at `VALIDATE_DDB_PATH`. Start at `admitDomainDisruptionBudget`.
 */
import { DDB_GROUP, DDB_KIND, DDB_PLURAL } from '../api/disruption-budget.ts';
import { validateDomainDisruptionBudget, validateDomainDisruptionBudgetUpdate } from '../api/disruption-budget-validation.ts';
import { isPlainObject } from '../k8s/json.ts';
import { allowed, errored, invalidObject, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import type { ClusterView } from '../core/cluster-view.ts';

export { VALIDATE_DDB_PATH } from './names.ts';

/** Answers one DomainDisruptionBudget CREATE/UPDATE review. */
export function admitDomainDisruptionBudget(req: AdmissionRequest, view: Pick<ClusterView, 'workloadSpread'>): AdmissionResponse {
  const { uid } = req;
  if (req.resource.group !== DDB_GROUP || req.resource.resource !== DDB_PLURAL || req.subResource !== '') return allowed(uid);
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return allowed(uid);
  const budget = req.object;
  if (!isPlainObject(budget)) return errored(uid, 400, new Error('the request object is not a DomainDisruptionBudget'));
  const metadata = isPlainObject(budget['metadata']) ? budget['metadata'] : {};
  const name = typeof metadata['name'] === 'string' && metadata['name'] !== '' ? metadata['name'] : req.name;
  const namespace = req.namespace !== '' ? req.namespace : typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';
  const errors =
    req.operation === 'UPDATE' && isPlainObject(req.oldObject) ? validateDomainDisruptionBudgetUpdate(req.oldObject, budget) : validateDomainDisruptionBudget(budget);
  if (errors.length > 0) return invalidObject(uid, { group: DDB_GROUP, kind: DDB_KIND }, name, errors);
  const spec = isPlainObject(budget['spec']) ? budget['spec'] : {};
  const ref = isPlainObject(spec['workloadSpreadRef']) ? spec['workloadSpreadRef'] : undefined;
  const wsName = typeof ref?.['name'] === 'string' ? ref['name'] : '';
  if (wsName !== '' && 'notFound' in view.workloadSpread(namespace, wsName)) {
    return allowed(uid, [`WorkloadSpread ${namespace}/${wsName} does not exist (yet): until it does, the budget's domains are the subsets named by the pods' markers`]);
  }
  return allowed(uid);
}
