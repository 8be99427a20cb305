/**
 * Validation shared by the workload kinds (apps/v1 Deployment, ReplicaSet,
 * StatefulSet, batch/v1 Job): selector against template labels, the pod
 * template with its restart policy, int-or-percent fields
 * (k8s.io/kubernetes/pkg/apis/apps/validation, .../batch/validation).
 */
import { invalid, notSupported, required, type FieldError, type FieldPath } from '../../../k8s/field-errors.ts';
import { labelSelectorAsSelector } from '../../../k8s/label-selector.ts';
import { validateLabelSelector } from '../../../k8s/meta-validation.ts';
import { validatePodTemplateSpec } from '../../../k8s/pod-validation.ts';
import { asRecord, asString, stringMap } from '../../../k8s/raw-json.ts';
import type { LabelSelector } from '../../../k8s/types.ts';
import { nonNegative } from './base.ts';

const PERCENT_MESSAGE = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/** Go's %#v of a map[string]string, as validation messages print template labels. */
export function goStringMap(value: unknown): string {
  const entries = stringMap(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `map[string]string{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(', ')}}`;
}

/**
 * The selector rules of a workload spec: required, not empty, valid, and
 * matching the template's labels (`spec.template.metadata.labels`).
 */
export function validateSelectorAndTemplate(spec: Record<string, unknown>, path: FieldPath, kindWord: string): FieldError[] {
  const errs: FieldError[] = [];
  const selector = spec['selector'];
  const template = asRecord(spec['template']);
  if (selector === undefined || selector === null) {
    errs.push(required(path.child('selector')));
  } else {
    errs.push(...validateLabelSelector(selector, path.child('selector')));
    const parsed = labelSelectorAsSelector(selector as LabelSelector);
    if (parsed.ok && parsed.selector.empty) {
      errs.push(invalid(path.child('selector'), selector, `empty selector is invalid for ${kindWord}`));
    } else if (parsed.ok && template !== undefined) {
      const labels = Object.fromEntries(stringMap(asRecord(template['metadata'])?.['labels']));
      if (!parsed.selector.matches(labels)) {
        // Go prints this value with %#v (unquoted), which a FieldError's badValue cannot express: it leads the detail instead.
        errs.push({ type: 'FieldValueInvalid', field: path.child('template', 'metadata', 'labels').toString(), detail: `${goStringMap(labels)}: \`selector\` does not match template \`labels\`` });
      }
    }
  }
  return errs;
}

/** The pod template of a workload, its restart policy restricted to `allowed`. */
export function validateWorkloadTemplate(spec: Record<string, unknown>, path: FieldPath, allowed: readonly string[]): FieldError[] {
  const template = spec['template'];
  if (template === undefined || template === null) return [required(path.child('template'))];
  const errs = validatePodTemplateSpec(template, path.child('template'));
  const podSpec = asRecord(asRecord(template)?.['spec']) ?? {};
  const restartPolicy = asString(podSpec['restartPolicy']) ?? '';
  if (restartPolicy !== '' && !allowed.includes(restartPolicy)) {
    errs.push(notSupported(path.child('template', 'spec', 'restartPolicy'), restartPolicy, allowed));
  } else if (restartPolicy === '' && !allowed.includes('Always')) {
    errs.push(required(path.child('template', 'spec', 'restartPolicy'), `valid values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`));
  }
  return errs;
}

/** ValidatePositiveIntOrPercent (+ IsNotMoreThan100Percent when `max100`). */
export function validateIntOrPercent(value: unknown, path: FieldPath, max100 = false): FieldError[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'number') return nonNegative(value, path);
  if (typeof value !== 'string') return [invalid(path, value, 'must be an integer or percentage (e.g \'5%\')')];
  if (!/^[0-9]+%$/.test(value)) return [invalid(path, value, PERCENT_MESSAGE)];
  if (max100 && Number(value.slice(0, -1)) > 100) return [invalid(path, value, 'must not be greater than 100%')];
  return [];
}

/** The int value of an int-or-percent for the "both zero" check (percent 0% counts as zero). */
export function isZeroIntOrPercent(value: unknown): boolean {
  if (value === 0) return true;
  return typeof value === 'string' && /^0+%$/.test(value);
}
