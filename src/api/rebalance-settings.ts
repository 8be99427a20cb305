/**
 * D18's switch: rebalancing is turned on per WorkloadSpread by an annotation
 * of ours, not a spec field — `apps.kruise.io/v1alpha1` is OpenKruise's API
 * group, and a field there could collide with a future Kruise one (and would
 * be pruned by a Kruise CRD). Kruise ignores both annotations, so a manifest
 * carrying them still works unchanged there.
 *
 *   workloadspread.io/rebalance: "true"              on ("false" or absent: off, the default)
 *   workloadspread.io/rebalance-max-in-flight: "2"   moves at once, 1–100 (default 1)
 *
 * `rebalanceSettings` reads them (the rebalancer, `status`);
 * `validateRebalanceAnnotations` is what the validating webhook and
 * `workloadspread validate` report: an unknown value, a max-in-flight that is
 * not an integer from 1 to 100, and rebalancing asked of a StatefulSet or Job
 * target (their pods are not replaced by a ReplicaSet-like controller, D7), each
 * naming the annotation and the value. Pure.
 */
import { invalid, root, type FieldError } from '../k8s/field-errors.ts';
import { asRecord, asString } from '../k8s/raw-json.ts';
import {
  DEFAULT_REBALANCE_MAX_IN_FLIGHT,
  MAX_REBALANCE_MAX_IN_FLIGHT,
  REBALANCE_ANNOTATION,
  REBALANCE_MAX_IN_FLIGHT_ANNOTATION,
} from './keys.ts';

export type RebalanceSettings =
  | { enabled: false }
  | { enabled: true; maxInFlight: number };

/** Target kinds whose pods are never moved (StatefulSet: ordinal identity; Job: run to completion). */
const NEVER_REBALANCED_KINDS = new Set(['StatefulSet', 'Job']);

function annotationsOf(obj: unknown): Record<string, unknown> {
  return asRecord(asRecord(asRecord(obj)?.['metadata'])?.['annotations']) ?? {};
}

function annotationPath(key: string) {
  return root('metadata', 'annotations').key(key);
}

function maxInFlightError(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^[0-9]{1,9}$/.test(value)) return `must be an integer from 1 to ${MAX_REBALANCE_MAX_IN_FLIGHT}`;
  const n = Number(value);
  return n >= 1 && n <= MAX_REBALANCE_MAX_IN_FLIGHT ? undefined : `must be an integer from 1 to ${MAX_REBALANCE_MAX_IN_FLIGHT}`;
}

/** The annotation errors of a WorkloadSpread (any shape; never throws). */
export function validateRebalanceAnnotations(ws: unknown): FieldError[] {
  const annotations = annotationsOf(ws);
  const errs: FieldError[] = [];
  const on = annotations[REBALANCE_ANNOTATION];
  if (on !== undefined && on !== 'true' && on !== 'false') {
    errs.push(invalid(annotationPath(REBALANCE_ANNOTATION), on, 'must be "true" or "false"'));
  }
  const max = annotations[REBALANCE_MAX_IN_FLIGHT_ANNOTATION];
  if (max !== undefined) {
    const problem = maxInFlightError(max);
    if (problem !== undefined) errs.push(invalid(annotationPath(REBALANCE_MAX_IN_FLIGHT_ANNOTATION), max, problem));
  }
  if (on === 'true') {
    const kind = asString(asRecord(asRecord(asRecord(ws)?.['spec'])?.['targetRef'])?.['kind']);
    if (kind !== undefined && NEVER_REBALANCED_KINDS.has(kind)) {
      errs.push(invalid(annotationPath(REBALANCE_ANNOTATION), on, `rebalancing is not supported for ${kind} targets: their pods are not replaced by a ReplicaSet-like controller`));
    }
  }
  return errs;
}

/**
 * The settings in force. An invalid value (an object stored before the
 * webhook validated it) is an error: the rebalancer then moves nothing and
 * says why.
 */
export function rebalanceSettings(ws: unknown): { ok: true; settings: RebalanceSettings } | { ok: false; error: string } {
  const annotations = annotationsOf(ws);
  const on = annotations[REBALANCE_ANNOTATION];
  if (on === undefined || on === 'false') return { ok: true, settings: { enabled: false } };
  if (on !== 'true') return { ok: false, error: `annotation ${REBALANCE_ANNOTATION} is ${JSON.stringify(on)}: must be "true" or "false"` };
  const max = annotations[REBALANCE_MAX_IN_FLIGHT_ANNOTATION];
  if (max === undefined) return { ok: true, settings: { enabled: true, maxInFlight: DEFAULT_REBALANCE_MAX_IN_FLIGHT } };
  const problem = maxInFlightError(max);
  if (problem !== undefined) return { ok: false, error: `annotation ${REBALANCE_MAX_IN_FLIGHT_ANNOTATION} is ${JSON.stringify(max)}: ${problem}` };
  return { ok: true, settings: { enabled: true, maxInFlight: Number(max) } };
}

/** Whether the annotation asks for rebalancing (valid or not: a bad value is still worth reporting). */
export function rebalanceRequested(ws: unknown): boolean {
  const on = annotationsOf(ws)[REBALANCE_ANNOTATION];
  return on !== undefined && on !== 'false';
}
