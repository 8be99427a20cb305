/**
 * What `status` prints in kubectl's object formats (`-o json|yaml|name|jsonpath=…|custom-columns=…`,
 * output.ts): one object per WorkloadSpread, `apiVersion: workloadspread.io/v1alpha1`,
 * `kind: WorkloadSpreadView`, the WorkloadSpread's identifying metadata (name, namespace, uid,
 * resourceVersion, generation, creationTimestamp, labels), then the view's fields (status-model.ts:
 * target, subsets, placed, ready, pods, unassigned, problems, budgets, rebalance). A kind of its own,
 * not `WorkloadSpread`: the view is computed here and is no API object, so `kubectl apply` of the
 * output is refused instead of overwriting the WorkloadSpread. `-o name` names the WorkloadSpread
 * (`workloadspread.apps.kruise.io/NAME`), as `kubectl get workloadspreads -o name` does. Pure.
 */
import { GROUP, SINGULAR } from '../api/names.ts';
import type { PrintedObject } from './output.ts';
import type { WorkloadSpreadView } from './status-model.ts';

export const VIEW_API_VERSION = 'workloadspread.io/v1alpha1';
export const VIEW_KIND = 'WorkloadSpreadView';

const KEPT_METADATA = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'labels'] as const;

/** What `-o name` prints for a WorkloadSpread. */
export function workloadSpreadName(name: string): string {
  return `${SINGULAR}.${GROUP}/${name}`;
}

/** The printed object of one view, with the metadata of its WorkloadSpread. */
export function statusObject(view: WorkloadSpreadView, ws: { metadata?: unknown }): PrintedObject {
  const metadata: Record<string, unknown> = {};
  const source = (ws.metadata ?? {}) as Record<string, unknown>;
  for (const key of KEPT_METADATA) if (source[key] !== undefined && source[key] !== null) metadata[key] = source[key];
  return { object: { apiVersion: VIEW_API_VERSION, kind: VIEW_KIND, metadata, ...view }, name: workloadSpreadName(view.name) };
}
