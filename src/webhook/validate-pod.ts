/**
 * The `/validate-pod` route (pod DELETE and `pods/eviction` CREATE): the
 * DomainDisruptionBudget check (budget-eviction.ts, D14) and then the
 * WorkloadSpread deletion bookkeeping (pod-delete.ts, spec §3).
 *
 * Why budgets first: the bookkeeping releases the subset's quota
 * (`deletingPods`, `missingReplicas++`) so a replacement can be admitted
 * before the controller sees the pod gone. Recording that for an eviction a
 * budget then refuses would let the workload over-fill the subset for up to
 * 15 s (until the record expires). In the other order, a budget record made
 * for a request the bookkeeping then refuses is given back at once (and would
 * expire within 2 minutes anyway), which only ever errs towards fewer
 * disruptions.
 *
 * Budgets are checked on every eviction; on a plain DELETE only with
 * `guardPodDeletion` (`--guard-pod-deletion`): deletions are how controllers
 * scale down and namespaces are emptied, so guarding them is opt-in. Pods the
 * eviction API already approved (in a budget's disruptedPods) and pods
 * already terminating pass. Start at `validatePodHandler`.
 */
import { isPlainObject } from '../k8s/json.ts';
import type { Lookup } from '../k8s/lookup.ts';
import type { Pod } from '../k8s/types.ts';
import { errored, isDryRun, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import { IMMEDIATE_CONTEXT, type AdmissionContext } from './cpu-turns.ts';
import { budgetRefusal, enforceBudgets, type BudgetEnforcementDeps, type DisruptionKind } from './budget-eviction.ts';
import type { PodAdmissionDeps } from './pod-admission-deps.ts';
import { admitPodDeletion, evictionName } from './pod-delete.ts';
import type { AdmissionHandler } from './server.ts';
import { ReadThroughView, settleLookup } from './view-reads.ts';

export interface ValidatePodOptions {
  pods: PodAdmissionDeps;
  /** Budget enforcement; omitted, the route is the bookkeeping alone. */
  budgets?: BudgetEnforcementDeps;
  /** Check budgets on pod DELETE too (default false). */
  guardPodDeletion?: boolean;
}

interface Disruption {
  pod: Pod;
  namespace: string;
  kind: DisruptionKind;
  dryRun: boolean;
}

/** The pod a request would disrupt, when budgets apply to it (`evicted`: an eviction's pod, read once). */
function disruptionOf(req: AdmissionRequest, options: ValidatePodOptions, evicted: Lookup<Pod> | undefined): Disruption | { error: string } | undefined {
  if (evicted !== undefined) {
    // A pod the API server does not have either has nothing to protect (the eviction gets its 404).
    if ('notFound' in evicted) return undefined;
    // Unknown is not unprotected: refuse rather than skip the budgets.
    if ('error' in evicted) return { error: evicted.error };
    const eviction = req.object as Record<string, unknown>;
    return { pod: evicted.found, namespace: req.namespace, kind: 'Eviction', dryRun: isDryRun(req, eviction['deleteOptions']) };
  }
  if (req.resource.group !== '' || req.resource.resource !== 'pods') return undefined;
  if (req.operation === 'DELETE' && req.subResource === '' && options.guardPodDeletion === true) {
    if (!isPlainObject(req.oldObject)) return undefined;
    const pod = req.oldObject as unknown as Pod;
    return { pod, namespace: req.namespace !== '' ? req.namespace : (pod.metadata?.namespace ?? ''), kind: 'Delete', dryRun: isDryRun(req) };
  }
  return undefined;
}

/** The handler of `/validate-pod`. */
export function validatePodHandler(options: ValidatePodOptions): AdmissionHandler {
  return async (req: AdmissionRequest, context: AdmissionContext = IMMEDIATE_CONTEXT): Promise<AdmissionResponse> => {
    // One view for the request: the pod an eviction names is read once, for the budgets and the bookkeeping.
    const view = new ReadThroughView(options.pods.view, options.pods.reads);
    if (options.budgets === undefined) return admitPodDeletion(req, options.pods, view, context);
    const name = evictionName(req);
    const evicted = name === undefined ? undefined : await settleLookup(view, () => view.pod(req.namespace, name));
    const disruption = disruptionOf(req, options, evicted);
    if (disruption === undefined) return admitPodDeletion(req, options.pods, view, context);
    if ('error' in disruption) return errored(req.uid, 400, new Error(disruption.error));
    const verdict = await enforceBudgets(disruption.pod, disruption.namespace, disruption.kind, disruption.dryRun, options.budgets, context.signal);
    if (!verdict.allowed) return budgetRefusal(req.uid, verdict);
    const response = await admitPodDeletion(req, options.pods, view, context);
    if (!response.allowed) await verdict.release();
    return response;
  };
}
