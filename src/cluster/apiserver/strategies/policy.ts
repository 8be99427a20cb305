/**
 * Strategies of the coordination, policy and scheduling kinds: Lease,
 * PodDisruptionBudget and PriorityClass (k8s.io/kubernetes/pkg/registry/
 * {coordination,policy,scheduling}; defaults and validation from pkg/apis).
 * The one-global-default rule of PriorityClasses is enforced by the Priority
 * admission plugin, not here.
 */
import { forbidden, invalid, notSupported, required, root, type FieldError } from '../../../k8s/field-errors.ts';
import { validateLabelSelector } from '../../../k8s/meta-validation.ts';
import { asNumber, asRecord, asString } from '../../../k8s/raw-json.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import type { ResourceStrategy } from '../resource-def.ts';
import { immutable, nonNegative, setIfAbsent, specSubject, strategy } from './base.ts';
import { validateIntOrPercent } from './workload-validation.ts';

// ---- Lease ----

export function leaseStrategy(): ResourceStrategy {
  const validate = (obj: KubeObject): FieldError[] => {
    const spec = asRecord(obj['spec']) ?? {};
    const errs: FieldError[] = [];
    const duration = asNumber(spec['leaseDurationSeconds']);
    if (duration !== undefined && duration <= 0) errs.push(invalid(root('spec', 'leaseDurationSeconds'), duration, 'must be greater than 0'));
    errs.push(...nonNegative(spec['leaseTransitions'], root('spec', 'leaseTransitions')));
    return errs;
  };
  return strategy({ allowCreateOnUpdate: true, validate, validateUpdate: validate });
}

// ---- PodDisruptionBudget ----

function validatePdb(obj: KubeObject): FieldError[] {
  const spec = asRecord(obj['spec']) ?? {};
  const path = root('spec');
  const errs: FieldError[] = [];
  const hasMin = spec['minAvailable'] !== undefined && spec['minAvailable'] !== null;
  const hasMax = spec['maxUnavailable'] !== undefined && spec['maxUnavailable'] !== null;
  if (hasMin && hasMax) errs.push(invalid(path, spec, 'minAvailable and maxUnavailable cannot be both set'));
  errs.push(...validateIntOrPercent(spec['minAvailable'], path.child('minAvailable'), true));
  errs.push(...validateIntOrPercent(spec['maxUnavailable'], path.child('maxUnavailable'), true));
  errs.push(...validateLabelSelector(spec['selector'], path.child('selector')));
  const policy = asString(spec['unhealthyPodEvictionPolicy']);
  if (policy !== undefined && !['IfHealthyBudget', 'AlwaysAllow'].includes(policy)) {
    errs.push(notSupported(path.child('unhealthyPodEvictionPolicy'), policy, ['IfHealthyBudget', 'AlwaysAllow']));
  }
  return errs;
}

export function podDisruptionBudgetStrategy(): ResourceStrategy {
  return strategy({
    resetStatusOnCreate: true,
    generationSubject: specSubject,
    prepareForCreate: (obj) => {
      // These status counters are not omitempty: a new budget shows them as zeros.
      obj.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    },
    validate: validatePdb,
    validateUpdate: validatePdb,
  });
}

// ---- PriorityClass ----

export const SYSTEM_PRIORITY_CLASSES: ReadonlyArray<{ name: string; value: number; description: string }> = [
  { name: 'system-node-critical', value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2000000000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

const HIGHEST_USER_PRIORITY = 1000000000;

function validatePriorityClass(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = asString(obj.metadata?.name) ?? '';
  const value = asNumber(obj['value']) ?? 0;
  const system = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name);
  if (system !== undefined) {
    if (system.value !== value) errs.push(forbidden(root('metadata', 'name'), `name ${name} is reserved for system critical priority class with value ${system.value}`));
  } else {
    if (name.startsWith('system-')) errs.push(forbidden(root('metadata', 'name'), "priority class names with 'system-' prefix are reserved"));
    if (value > HIGHEST_USER_PRIORITY) errs.push(forbidden(root('value'), `maximum allowed value of a user defined priority is ${HIGHEST_USER_PRIORITY}`));
  }
  const policy = asString(obj['preemptionPolicy']);
  if (policy !== undefined && !['Never', 'PreemptLowerPriority'].includes(policy)) {
    errs.push(notSupported(root('preemptionPolicy'), policy, ['Never', 'PreemptLowerPriority']));
  }
  return errs;
}

export function priorityClassStrategy(): ResourceStrategy {
  return strategy({
    applyDefaults: (obj) => {
      // value is a plain int32: absent reads (and prints) as 0.
      setIfAbsent(obj, 'value', 0);
      setIfAbsent(obj, 'preemptionPolicy', 'PreemptLowerPriority');
    },
    validate: validatePriorityClass,
    validateUpdate: (obj, old) => {
      const errs = validatePriorityClass(obj);
      if (obj['value'] !== old['value']) errs.push(forbidden(root('value'), 'may not be changed in an update.'));
      errs.push(...immutable(obj['preemptionPolicy'], old['preemptionPolicy'], root('preemptionPolicy')));
      return errs;
    },
  });
}

/** A required-field check kept here for the webhook and CRD strategies' shared use. */
export function requireString(obj: Record<string, unknown>, key: string, path: ReturnType<typeof root>, detail = ''): FieldError[] {
  return (asString(obj[key]) ?? '') === '' ? [required(path.child(key), detail)] : [];
}
