/**
 * The `pods/eviction` subresource (k8s.io/kubernetes/pkg/registry/core/pod/storage/eviction.go),
 * POST of a policy/v1 (or policy/v1beta1) Eviction:
 *
 * 1. mutating admission, the name check, validating admission — webhooks
 *    see CREATE `pods/eviction` with the Eviction as the object;
 * 2. a pod that is finished, Pending or already terminating is deleted
 *    without looking at budgets (guarded by its resourceVersion unless it is
 *    finished or terminating, retried on conflict);
 * 3. otherwise the PodDisruptionBudgets of its namespace whose selector
 *    matches it decide: none → delete; several → a 500 Status answer;
 *    one → an unready pod may go without spending the budget (AlwaysAllow, or
 *    IfHealthyBudget while the budget is healthy), else the budget must be
 *    observed (`observedGeneration`) and allow a disruption (429 otherwise,
 *    with the DisruptionBudget cause); `disruptionsAllowed` is decremented
 *    and the pod recorded in `disruptedPods` with optimistic concurrency
 *    (re-read and re-check on conflict);
 * 4. the pod gets the DisruptionTarget condition and is deleted with the
 *    Eviction's deleteOptions — neither write goes through admission, as
 *    upstream's registry-level writes do not.
 * `dryRun` (query or deleteOptions) checks everything and writes nothing.
 * Conflicts are retried at once rather than after upstream's 500 ms pauses.
 */
import { invalid as invalidField, notSupported } from '../../k8s/field-errors.ts';
import { isPlainObject } from '../../k8s/json.ts';
import { labelSelectorAsSelector } from '../../k8s/label-selector.ts';
import { isPodReady } from '../../k8s/pod.ts';
import { asArray, asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject, LabelSelector, Pod } from '../../k8s/types.ts';
import type { AdmissionAttributes } from './admission.ts';
import { deleteObject, parseDeleteOptions, type DeleteOptions } from './delete.ts';
import { badRequest, conflict, fail, forbidden, invalid, notFound, ok, statusError, timeout, type Result, type Status, type StatusCause } from './errors.ts';
import { metaOf } from './object-meta.ts';
import type { ObjectOperations } from './operations.ts';
import { updatePodCondition } from './pod-condition.ts';
import { storageKey, type GroupVersionKind, type RequestContext, type ResourceDef, type SubresourceHandler, type SubresourceRequest, type SubresourceResponse } from './resource-def.ts';
import type { ResourceRegistry } from './resources.ts';

export const EVICTION_KIND: GroupVersionKind = { group: 'policy', version: 'v1', kind: 'Eviction' };
const EVICTION_VERSIONS = ['policy/v1', 'policy/v1beta1'];
const PDBS = 'policy/poddisruptionbudgets';
/** MaxDisruptedPodSize: budgets with more unconfirmed evictions refuse new ones. */
const MAX_DISRUPTED_POD_SIZE = 2000;
/** EvictionsRetry.Steps */
const MAX_ATTEMPTS = 20;
const BUDGET_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

export interface EvictionDeps {
  ops: ObjectOperations;
  registry: ResourceRegistry;
  /** The context of the server's own writes (the budget's status update is a loopback call upstream). */
  systemContext(): RequestContext;
}

const successStatus = (): Status => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });

/** The request body as an Eviction (apiVersion policy/v1), or the decoding error. */
export function decodeSubresourceBody(body: unknown, kind: string, accepted: readonly string[], namespace: string): Result<KubeObject> {
  if (!isPlainObject(body)) return fail(badRequest(`the object provided is unrecognized (must be of type ${kind})`));
  const obj = structuredClone(body) as KubeObject;
  const apiVersion = asString(obj.apiVersion) ?? '';
  const bodyKind = asString(obj.kind) ?? '';
  const target = accepted[0] ?? '';
  if (bodyKind !== '' && bodyKind !== kind) {
    return fail(badRequest(`${bodyKind} in version ${JSON.stringify(target.split('/').pop() ?? '')} cannot be handled as a ${kind}: no kind ${JSON.stringify(bodyKind)} is registered`));
  }
  if (apiVersion !== '' && !accepted.includes(apiVersion)) {
    return fail(badRequest(`the API version in the data (${apiVersion}) does not match the expected API version (${target})`));
  }
  obj.apiVersion = target;
  obj.kind = kind;
  const meta = metaOf(obj);
  const bodyNs = asString(meta.namespace) ?? '';
  if (bodyNs !== '' && bodyNs !== namespace) return fail(badRequest('the namespace of the provided object does not match the namespace sent on the request'));
  meta.namespace = namespace;
  return ok(obj);
}

function tooManyRequests(message: string, retryAfterSeconds: number, cause: StatusCause): Status {
  const status = statusError(429, 'TooManyRequests', message, { causes: [cause] });
  if (retryAfterSeconds > 0 && status.details !== undefined) status.details.retryAfterSeconds = retryAfterSeconds;
  return status;
}

/** createTooManyRequestsError: the budget's status does not reflect its spec yet. */
function budgetBeingProcessed(name: string): Status {
  return tooManyRequests(BUDGET_MESSAGE, 10, { reason: 'DisruptionBudget', message: `The disruption budget ${name} is still being processed by the server.` });
}

function findCondition(status: Record<string, unknown>, type: string): Record<string, unknown> | undefined {
  for (const c of asArray(status['conditions']) ?? []) {
    const cond = asRecord(c);
    if (cond?.['type'] === type) return cond;
  }
  return undefined;
}

/** Why a budget with no disruption left refuses: its sync failure, its health, or its condition. */
function noDisruptionCause(name: string, status: Record<string, unknown>): string {
  const cond = findCondition(status, 'DisruptionAllowed');
  const failed = cond !== undefined && cond['status'] === 'False' && (asString(cond['message']) ?? '') !== '' ? cond : undefined;
  const current = asNumber(status['currentHealthy']) ?? 0;
  const desired = asNumber(status['desiredHealthy']) ?? 0;
  if (failed !== undefined && failed['reason'] === 'SyncFailed') {
    return `The disruption budget ${name} does not allow evicting pods currently because it failed sync: ${asString(failed['message']) ?? ''}`;
  }
  if (current <= desired) return `The disruption budget ${name} needs ${desired} healthy pods and has ${current} currently`;
  if (failed !== undefined) return `The disruption budget ${name} does not allow evicting pods currently (${asString(failed['reason']) ?? ''}): ${asString(failed['message']) ?? ''}`;
  return `The disruption budget ${name} does not allow evicting pods currently`;
}

/** pdbhelper.UpdateDisruptionAllowedCondition with meta.SetStatusCondition's transition-time rule. */
function setDisruptionAllowedCondition(status: Record<string, unknown>, now: number): void {
  const allowed = (asNumber(status['disruptionsAllowed']) ?? 0) > 0;
  const next: Record<string, unknown> = {
    type: 'DisruptionAllowed',
    status: allowed ? 'True' : 'False',
    observedGeneration: asNumber(status['observedGeneration']) ?? 0,
    lastTransitionTime: formatTime(now),
    reason: allowed ? 'SufficientPods' : 'InsufficientPods',
    message: '',
  };
  const conditions = [...(asArray(status['conditions']) ?? [])];
  const index = conditions.findIndex((c) => asRecord(c)?.['type'] === 'DisruptionAllowed');
  const old = index >= 0 ? asRecord(conditions[index]) : undefined;
  if (old !== undefined && old['status'] === next['status']) next['lastTransitionTime'] = old['lastTransitionTime'];
  if (index >= 0) conditions[index] = next;
  else conditions.push(next);
  status['conditions'] = conditions;
}

function canIgnoreBudget(pod: KubeObject): boolean {
  const phase = asString(asRecord(pod.status)?.['phase']) ?? '';
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || pod.metadata?.deletionTimestamp !== undefined;
}

function shouldEnforceResourceVersion(pod: KubeObject): boolean {
  const phase = asString(asRecord(pod.status)?.['phase']) ?? '';
  return !(phase === 'Succeeded' || phase === 'Failed' || pod.metadata?.deletionTimestamp !== undefined);
}

const rvUnset = (o: DeleteOptions): boolean => o.preconditions?.resourceVersion === undefined;
const withRv = (o: DeleteOptions, rv: string): DeleteOptions => ({ ...o, preconditions: { ...o.preconditions, resourceVersion: rv } });
const isConflict = (s: Status): boolean => s.code === 409;

export class EvictionHandler implements SubresourceHandler {
  readonly verbs = ['create'];
  readonly kind = EVICTION_KIND;
  readonly #deps: EvictionDeps;

  constructor(deps: EvictionDeps) {
    this.#deps = deps;
  }

  async handle(req: SubresourceRequest): Promise<Result<SubresourceResponse>> {
    if (req.verb !== 'create') return fail(badRequest('only POST is supported on pods/eviction'));
    const { ops } = this.#deps;
    const decoded = decodeSubresourceBody(req.body, 'Eviction', EVICTION_VERSIONS, req.namespace);
    if (!decoded.ok) return decoded;
    const wiped = metaOf(decoded.value);
    for (const k of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink']) delete wiped[k as keyof typeof wiped];
    const attrs: AdmissionAttributes = ops.attributes('CREATE', req.resource, 'eviction', req.namespace, req.name, decoded.value, undefined, req.context, {});
    attrs.kind = EVICTION_KIND;
    const mutated = await ops.admission.mutate(attrs, req.context);
    if (!mutated.ok) return mutated;
    const eviction = mutated.value ?? decoded.value;
    attrs.object = eviction;
    if ((asString(eviction.metadata?.name) ?? '') !== req.name) return fail(badRequest('name in URL does not match name in Eviction object'));
    const rawOptions = asRecord(eviction['deleteOptions']) ?? {};
    if (rawOptions['ignoreStoreReadErrorWithClusterBreakingPotential'] === true) {
      return fail(
        invalid('Eviction', 'policy', req.name, [
          invalidField('deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential', true, 'can not be set for pod eviction, try after removing the option'),
        ]),
      );
    }
    const bodyDryRun = asArray(rawOptions['dryRun']) ?? [];
    const badDryRun = bodyDryRun.find((v) => v !== 'All');
    if (badDryRun !== undefined) return fail(invalid('DeleteOptions', 'meta.k8s.io', '', [notSupported('dryRun', badDryRun, ['All'])]));
    const validated = await ops.admission.validate(attrs, req.context);
    if (!validated.ok) return validated;
    const parsed = parseDeleteOptions(rawOptions, new URLSearchParams());
    if (!parsed.ok) return parsed;
    const dryRun = req.context.dryRun || bodyDryRun.includes('All');
    const ctx: RequestContext = { ...req.context, dryRun };
    // The copy shares the warnings list: warnings of the deletion reach the client.
    return this.#evict(req.resource, req.namespace, req.name, parsed.value, ctx);
  }

  async #evict(pods: ResourceDef, namespace: string, name: string, original: DeleteOptions, ctx: RequestContext): Promise<Result<SubresourceResponse>> {
    const { ops } = this.#deps;
    // First the pods whose budget does not matter.
    let pod: KubeObject | undefined;
    for (let attempt = 0; ; attempt++) {
      pod = ops.current(pods, namespace, name);
      if (pod === undefined) return fail(notFound({ group: '', resource: 'pods' }, name));
      if (!canIgnoreBudget(pod)) break;
      const options = shouldEnforceResourceVersion(pod) && rvUnset(original) ? withRv(original, asString(pod.metadata?.resourceVersion) ?? '') : original;
      const deleted = await this.#markAndDelete(pods, namespace, name, options, ctx);
      if (deleted.ok) return ok({ code: 201, body: successStatus() });
      if (!isConflict(deleted.status) || !rvUnset(original) || attempt + 1 >= MAX_ATTEMPTS) return deleted;
    }

    const budgets = this.#budgetsOf(namespace, pod);
    if (budgets.length > 1) {
      const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', code: 500 };
      return ok({ code: 500, body: status });
    }
    let guardWithRv = false;
    const budget = budgets[0];
    const budgetName = asString(budget?.metadata?.name) ?? '';
    if (budget !== undefined) {
      const status = asRecord(budget.status) ?? {};
      let spend = true;
      if (!isPodReady(pod as Pod)) {
        const policy = asString(asRecord(budget['spec'])?.['unhealthyPodEvictionPolicy']);
        const current = asNumber(status['currentHealthy']) ?? 0;
        const desired = asNumber(status['desiredHealthy']) ?? 0;
        // An unready pod does not count as healthy: taking it away disrupts nothing the budget protects.
        if (policy === 'AlwaysAllow' || (current >= desired && desired > 0)) {
          guardWithRv = true;
          spend = false;
        }
      }
      if (spend) {
        const spent = await this.#checkAndDecrement(namespace, name, budgetName, ctx.dryRun);
        if (!spent.ok) return spent;
      }
    }
    const options = guardWithRv ? withRv(original, asString(pod.metadata?.resourceVersion) ?? '') : original;
    const deleted = await this.#markAndDelete(pods, namespace, name, options, ctx);
    if (!deleted.ok) {
      if (isConflict(deleted.status) && guardWithRv && rvUnset(original)) return fail(budgetBeingProcessed(budgetName));
      return deleted;
    }
    return ok({ code: 201, body: successStatus() });
  }

  /** The budgets of the namespace selecting the pod: a null selector selects nothing, `{}` everything. */
  #budgetsOf(namespace: string, pod: KubeObject): KubeObject[] {
    const labels = (asRecord(pod.metadata?.labels) ?? {}) as Record<string, string>;
    return this.#deps.ops.store.list(PDBS, namespace).filter((pdb) => {
      if ((asString(pdb.metadata?.namespace) ?? '') !== namespace) return false;
      const selector = labelSelectorAsSelector(asRecord(pdb['spec'])?.['selector'] as LabelSelector | undefined);
      return selector.ok && selector.selector.matches(labels);
    });
  }

  /** checkAndDecrement under optimistic concurrency: re-read and re-check the budget after a conflict. */
  async #checkAndDecrement(namespace: string, podName: string, budgetName: string, dryRun: boolean): Promise<Result<void>> {
    const { ops, registry } = this.#deps;
    const def = registry.get('policy', 'v1', 'poddisruptionbudgets');
    if (def === undefined) return fail(notFound({ group: 'policy', resource: 'poddisruptionbudgets' }, budgetName));
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const pdb = ops.current(def, namespace, budgetName);
      if (pdb === undefined) return fail(notFound({ group: 'policy', resource: 'poddisruptionbudgets' }, budgetName));
      const status = structuredClone(asRecord(pdb.status) ?? {});
      const generation = asNumber(pdb.metadata?.generation) ?? 0;
      if ((asNumber(status['observedGeneration']) ?? 0) < generation) return fail(budgetBeingProcessed(budgetName));
      const allowed = asNumber(status['disruptionsAllowed']) ?? 0;
      const gr = { group: 'policy', resource: 'poddisruptionbudget' };
      if (allowed < 0) return fail(forbidden(gr, budgetName, 'pdb disruptions allowed is negative'));
      if (Object.keys(asRecord(status['disruptedPods']) ?? {}).length > MAX_DISRUPTED_POD_SIZE) {
        return fail(forbidden(gr, budgetName, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller'));
      }
      if (allowed === 0) return fail(tooManyRequests(BUDGET_MESSAGE, 0, { reason: 'DisruptionBudget', message: noDisruptionCause(budgetName, status) }));
      status['disruptionsAllowed'] = allowed - 1;
      if (allowed - 1 === 0) setDisruptionAllowedCondition(status, ops.now());
      if (dryRun) return ok(undefined);
      status['disruptedPods'] = { ...(asRecord(status['disruptedPods']) ?? {}), [podName]: formatTime(ops.now()) };
      const next = structuredClone(pdb);
      next.status = status;
      const written = await ops.updateWith(def, namespace, budgetName, this.#deps.systemContext(), 'status', {}, async () => ok(next), 'never');
      if (written.ok) return ok(undefined);
      if (!isConflict(written.status)) return written;
    }
    return fail(timeout(`couldn't update PodDisruptionBudget ${JSON.stringify(budgetName)} due to conflicts`, 10));
  }

  /** addConditionAndDeletePod: the DisruptionTarget condition (not on dry runs), then the delete, both without admission. */
  async #markAndDelete(pods: ResourceDef, namespace: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<Result<unknown>> {
    const { ops } = this.#deps;
    let opts = options;
    if (!ctx.dryRun) {
      for (let attempt = 0; ; attempt++) {
        const current = ops.current(pods, namespace, name);
        if (current === undefined) return fail(notFound({ group: '', resource: 'pods' }, name));
        const precondition = checkPreconditions(current, opts, name);
        if (precondition !== undefined) return fail(precondition);
        const next = structuredClone(current);
        if (!updatePodCondition(next, { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' }, ops.now())) break;
        const stored = ops.store.update(storageKey(pods), next, asString(current.metadata?.resourceVersion) ?? '');
        if (stored.ok) {
          // We moved the resourceVersion ourselves: a precondition on it follows.
          if (!rvUnset(opts)) opts = withRv(opts, asString(stored.object.metadata?.resourceVersion) ?? '');
          break;
        }
        if (stored.reason === 'notFound') return fail(notFound({ group: '', resource: 'pods' }, name));
        if (attempt + 1 >= MAX_ATTEMPTS) return fail(conflict({ group: '', resource: 'pods' }, name));
      }
    }
    return deleteObject(ops, pods, namespace, name, opts, ctx, { admission: false });
  }
}

function checkPreconditions(pod: KubeObject, options: DeleteOptions, name: string): Status | undefined {
  const uid = options.preconditions?.uid;
  const podUid = asString(pod.metadata?.uid) ?? '';
  const gr = { group: '', resource: 'Pod' };
  if (uid !== undefined && uid !== '' && uid !== podUid) {
    return conflict(gr, name, `the UID in the precondition (${uid}) does not match the UID in record (${podUid}). The object might have been deleted and then recreated`);
  }
  const rv = options.preconditions?.resourceVersion;
  const podRv = asString(pod.metadata?.resourceVersion) ?? '';
  if (rv !== undefined && rv !== '' && rv !== podRv) {
    return conflict(gr, name, `the ResourceVersion in the precondition (${rv}) does not match the ResourceVersion in record (${podRv}). The object might have been modified`);
  }
  return undefined;
}
