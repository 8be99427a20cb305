/**
 * Strategies of apps/v1: Deployment, ReplicaSet, StatefulSet and
 * ControllerRevision (k8s.io/kubernetes/pkg/registry/apps/*, defaults from
 * pkg/apis/apps/v1/defaults.go, rules from pkg/apis/apps/validation).
 *
 * Generation: Deployments bump it on spec or annotation changes (annotations
 * are copied to their ReplicaSets), the others on spec changes. Selectors are
 * immutable in apps/v1; a StatefulSet's spec may only change in replicas,
 * ordinals, template, updateStrategy, persistentVolumeClaimRetentionPolicy and
 * minReadySeconds.
 */
import { deepEqual } from '../../../k8s/json.ts';
import { forbidden, invalid, notSupported, required, root, type FieldError } from '../../../k8s/field-errors.ts';
import { podTemplateDecodeError } from '../../../k8s/pod-decode.ts';
import { asNumber, asRecord, asString } from '../../../k8s/raw-json.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import { defaultPodTemplate } from '../pod-defaults.ts';
import { metaOf } from '../object-meta.ts';
import type { ResourceStrategy } from '../resource-def.ts';
import { immutable, nonNegative, setIfAbsent, specOf, specSubject, strategy } from './base.ts';
import { isZeroIntOrPercent, validateIntOrPercent, validateSelectorAndTemplate, validateWorkloadTemplate } from './workload-validation.ts';

const SPEC = root('spec');

function templateDecodeError(obj: KubeObject): string | undefined {
  return podTemplateDecodeError(asRecord(obj['spec'])?.['template']);
}

function validateReplicas(spec: Record<string, unknown>): FieldError[] {
  return nonNegative(spec['replicas'], SPEC.child('replicas'));
}

function noActiveDeadline(spec: Record<string, unknown>): FieldError[] {
  const podSpec = asRecord(asRecord(spec['template'])?.['spec']);
  return podSpec?.['activeDeadlineSeconds'] !== undefined
    ? [forbidden(SPEC.child('template', 'spec', 'activeDeadlineSeconds'), 'activeDeadlineSeconds in ReplicaSet is not Supported')]
    : [];
}

// ---- Deployment ----

function defaultDeployment(obj: KubeObject): void {
  const spec = specOf(obj);
  setIfAbsent(spec, 'replicas', 1);
  const strat = asRecord(spec['strategy']) ?? {};
  spec['strategy'] = strat;
  setIfAbsent(strat, 'type', 'RollingUpdate');
  if (strat['type'] === 'RollingUpdate') {
    const ru = asRecord(strat['rollingUpdate']) ?? {};
    strat['rollingUpdate'] = ru;
    setIfAbsent(ru, 'maxUnavailable', '25%');
    setIfAbsent(ru, 'maxSurge', '25%');
  }
  setIfAbsent(spec, 'revisionHistoryLimit', 10);
  setIfAbsent(spec, 'progressDeadlineSeconds', 600);
  defaultPodTemplate(spec['template']);
}

function validateDeploymentSpec(obj: KubeObject): FieldError[] {
  const spec = asRecord(obj['spec']) ?? {};
  const errs = [...validateReplicas(spec), ...validateSelectorAndTemplate(spec, SPEC, 'deployment')];
  errs.push(...validateWorkloadTemplate(spec, SPEC, ['Always']), ...noActiveDeadline(spec));
  const strat = asRecord(spec['strategy']) ?? {};
  const type = asString(strat['type']) ?? '';
  const stratPath = SPEC.child('strategy');
  if (type === 'Recreate') {
    if (strat['rollingUpdate'] !== undefined && strat['rollingUpdate'] !== null) {
      errs.push(forbidden(stratPath.child('rollingUpdate'), "may not be specified when strategy `type` is 'Recreate'"));
    }
  } else if (type === 'RollingUpdate') {
    const ru = asRecord(strat['rollingUpdate']) ?? {};
    const ruPath = stratPath.child('rollingUpdate');
    errs.push(...validateIntOrPercent(ru['maxUnavailable'], ruPath.child('maxUnavailable'), true));
    errs.push(...validateIntOrPercent(ru['maxSurge'], ruPath.child('maxSurge')));
    if (isZeroIntOrPercent(ru['maxUnavailable']) && isZeroIntOrPercent(ru['maxSurge'])) {
      errs.push(invalid(ruPath.child('maxUnavailable'), ru['maxUnavailable'], 'may not be 0 when `maxSurge` is 0'));
    }
  } else {
    errs.push(notSupported(stratPath.child('type'), type, ['Recreate', 'RollingUpdate']));
  }
  errs.push(...nonNegative(spec['revisionHistoryLimit'], SPEC.child('revisionHistoryLimit')));
  errs.push(...nonNegative(spec['minReadySeconds'], SPEC.child('minReadySeconds')));
  const deadline = asNumber(spec['progressDeadlineSeconds']);
  if (deadline !== undefined) {
    errs.push(...nonNegative(deadline, SPEC.child('progressDeadlineSeconds')));
    if (deadline <= (asNumber(spec['minReadySeconds']) ?? 0)) {
      errs.push(invalid(SPEC.child('progressDeadlineSeconds'), deadline, 'must be greater than minReadySeconds'));
    }
  }
  return errs;
}

function selectorImmutable(obj: KubeObject, old: KubeObject): FieldError[] {
  return immutable(asRecord(obj['spec'])?.['selector'], asRecord(old['spec'])?.['selector'], SPEC.child('selector'));
}

export function deploymentStrategy(): ResourceStrategy {
  return strategy({
    applyDefaults: defaultDeployment,
    decodeError: templateDecodeError,
    resetStatusOnCreate: true,
    generationSubject: (obj) => [obj['spec'] ?? null, obj.metadata?.annotations ?? null],
    prepareForStatusUpdate: (obj, old) => {
      const meta = metaOf(obj);
      if (old.metadata?.labels === undefined) delete meta.labels;
      else meta.labels = old.metadata.labels;
    },
    validate: validateDeploymentSpec,
    validateUpdate: (obj, old) => [...validateDeploymentSpec(obj), ...selectorImmutable(obj, old)],
  });
}

// ---- ReplicaSet ----

function validateReplicaSetSpec(obj: KubeObject): FieldError[] {
  const spec = asRecord(obj['spec']) ?? {};
  return [
    ...validateReplicas(spec),
    ...nonNegative(spec['minReadySeconds'], SPEC.child('minReadySeconds')),
    ...validateSelectorAndTemplate(spec, SPEC, 'deployment'),
    ...validateWorkloadTemplate(spec, SPEC, ['Always']),
    ...noActiveDeadline(spec),
  ];
}

export function replicaSetStrategy(): ResourceStrategy {
  return strategy({
    applyDefaults: (obj) => {
      const spec = specOf(obj);
      setIfAbsent(spec, 'replicas', 1);
      defaultPodTemplate(spec['template']);
    },
    decodeError: templateDecodeError,
    resetStatusOnCreate: true,
    generationSubject: specSubject,
    validate: validateReplicaSetSpec,
    validateUpdate: (obj, old) => [...validateReplicaSetSpec(obj), ...selectorImmutable(obj, old)],
    selectableFields: (obj) => ({ 'status.replicas': String(asNumber(asRecord(obj['status'])?.['replicas']) ?? 0) }),
  });
}

// ---- StatefulSet ----

function defaultStatefulSet(obj: KubeObject): void {
  const spec = specOf(obj);
  setIfAbsent(spec, 'podManagementPolicy', 'OrderedReady');
  const update = asRecord(spec['updateStrategy']) ?? {};
  spec['updateStrategy'] = update;
  setIfAbsent(update, 'type', 'RollingUpdate');
  if (update['type'] === 'RollingUpdate') {
    const ru = asRecord(update['rollingUpdate']) ?? {};
    update['rollingUpdate'] = ru;
    setIfAbsent(ru, 'partition', 0);
  }
  const retention = asRecord(spec['persistentVolumeClaimRetentionPolicy']) ?? {};
  spec['persistentVolumeClaimRetentionPolicy'] = retention;
  setIfAbsent(retention, 'whenDeleted', 'Retain');
  setIfAbsent(retention, 'whenScaled', 'Retain');
  setIfAbsent(spec, 'replicas', 1);
  setIfAbsent(spec, 'revisionHistoryLimit', 10);
  defaultPodTemplate(spec['template']);
}

function validateStatefulSetSpec(obj: KubeObject): FieldError[] {
  const spec = asRecord(obj['spec']) ?? {};
  const errs = [...validateReplicas(spec), ...validateSelectorAndTemplate(spec, SPEC, 'statefulset')];
  errs.push(...validateWorkloadTemplate(spec, SPEC, ['Always']), ...noActiveDeadline(spec));
  const policy = asString(spec['podManagementPolicy']) ?? '';
  if (!['OrderedReady', 'Parallel'].includes(policy)) errs.push(notSupported(SPEC.child('podManagementPolicy'), policy, ['OrderedReady', 'Parallel']));
  const update = asRecord(spec['updateStrategy']) ?? {};
  const type = asString(update['type']) ?? '';
  if (type === '') errs.push(required(SPEC.child('updateStrategy')));
  else if (!['OnDelete', 'RollingUpdate'].includes(type)) errs.push(notSupported(SPEC.child('updateStrategy'), type, ['OnDelete', 'RollingUpdate']));
  if (type === 'OnDelete' && update['rollingUpdate'] !== undefined && update['rollingUpdate'] !== null) {
    errs.push(invalid(SPEC.child('updateStrategy', 'rollingUpdate'), update['rollingUpdate'], 'only allowed for updateStrategy \'RollingUpdate\''));
  }
  errs.push(...nonNegative(asRecord(update['rollingUpdate'])?.['partition'], SPEC.child('updateStrategy', 'rollingUpdate', 'partition')));
  errs.push(...nonNegative(spec['revisionHistoryLimit'], SPEC.child('revisionHistoryLimit')));
  errs.push(...nonNegative(spec['minReadySeconds'], SPEC.child('minReadySeconds')));
  return errs;
}

const STATEFULSET_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

function validateStatefulSetUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const next = { ...(asRecord(obj['spec']) ?? {}) };
  const prev = asRecord(old['spec']) ?? {};
  for (const key of STATEFULSET_MUTABLE) {
    if (prev[key] === undefined) delete next[key];
    else next[key] = prev[key];
  }
  const errs = validateStatefulSetSpec(obj);
  if (!deepEqual(next, prev)) {
    errs.push(
      forbidden(
        SPEC,
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    );
  }
  return errs;
}

export function statefulSetStrategy(): ResourceStrategy {
  return strategy({
    applyDefaults: defaultStatefulSet,
    decodeError: templateDecodeError,
    resetStatusOnCreate: true,
    generationSubject: specSubject,
    validate: validateStatefulSetSpec,
    validateUpdate: validateStatefulSetUpdate,
  });
}

// ---- ControllerRevision ----

export function controllerRevisionStrategy(): ResourceStrategy {
  return strategy({
    validate: (obj) => {
      const errs = nonNegative(obj['revision'], root('revision'));
      if (obj['data'] === undefined || obj['data'] === null) errs.push(required(root('data'), 'data is mandatory'));
      return errs;
    },
    validateUpdate: (obj, old) => [...nonNegative(obj['revision'], root('revision')), ...immutable(obj['data'], old['data'], root('data'))],
  });
}
