/**
 * The batch/v1 Job strategy (k8s.io/kubernetes/pkg/registry/batch/job):
 * SetDefaults_Job, the generated selector (`batch.kubernetes.io/controller-uid`
 * plus the job-name and controller-uid template labels, legacy and new),
 * immutable template, selector and completion mode, and the orphaning default
 * of a batch/v1 delete that names no propagation policy (with its warning).
 */
import { notSupported, root, type FieldError } from '../../../k8s/field-errors.ts';
import { podTemplateDecodeError } from '../../../k8s/pod-decode.ts';
import { asNumber, asRecord, asString } from '../../../k8s/raw-json.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import { defaultPodTemplate } from '../pod-defaults.ts';
import { metaOf } from '../object-meta.ts';
import type { ResourceStrategy } from '../resource-def.ts';
import { immutable, nonNegative, setIfAbsent, specOf, specSubject, strategy } from './base.ts';
import { validateSelectorAndTemplate, validateWorkloadTemplate } from './workload-validation.ts';

const SPEC = root('spec');
const MAX_INT32 = 2147483647;

export const JOB_NAME_LABELS = ['job-name', 'batch.kubernetes.io/job-name'];
export const CONTROLLER_UID_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];

const JOB_DELETE_WARNING =
  'child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning';

function defaultJob(obj: KubeObject): void {
  const spec = specOf(obj);
  if ((spec['completions'] ?? null) === null && (spec['parallelism'] ?? null) === null) {
    spec['completions'] = 1;
    spec['parallelism'] = 1;
  }
  setIfAbsent(spec, 'parallelism', 1);
  setIfAbsent(spec, 'backoffLimit', spec['backoffLimitPerIndex'] !== undefined && spec['backoffLimitPerIndex'] !== null ? MAX_INT32 : 6);
  const templateLabels = asRecord(asRecord(asRecord(spec['template'])?.['metadata'])?.['labels']);
  const meta = metaOf(obj);
  if (templateLabels !== undefined && Object.keys(asRecord(meta.labels) ?? {}).length === 0) meta.labels = { ...templateLabels } as Record<string, string>;
  setIfAbsent(spec, 'completionMode', 'NonIndexed');
  setIfAbsent(spec, 'suspend', false);
  setIfAbsent(spec, 'podReplacementPolicy', spec['podFailurePolicy'] !== undefined && spec['podFailurePolicy'] !== null ? 'Failed' : 'TerminatingOrFailed');
  defaultPodTemplate(spec['template']);
}

/** generateSelector: labels the template with the job's name and uid and selects on the uid. */
function generateSelector(obj: KubeObject): void {
  const spec = specOf(obj);
  if (spec['manualSelector'] === true) return;
  const template = asRecord(spec['template']) ?? {};
  spec['template'] = template;
  const tmeta = asRecord(template['metadata']) ?? {};
  template['metadata'] = tmeta;
  const labels = asRecord(tmeta['labels']) ?? {};
  tmeta['labels'] = labels;
  const name = asString(obj.metadata?.name) ?? '';
  const uid = asString(obj.metadata?.uid) ?? '';
  for (const key of JOB_NAME_LABELS) setIfAbsent(labels, key, name);
  for (const key of CONTROLLER_UID_LABELS) setIfAbsent(labels, key, uid);
  const selector = asRecord(spec['selector']) ?? {};
  spec['selector'] = selector;
  const matchLabels = asRecord(selector['matchLabels']) ?? {};
  selector['matchLabels'] = matchLabels;
  setIfAbsent(matchLabels, 'batch.kubernetes.io/controller-uid', uid);
}

function validateJobSpec(obj: KubeObject): FieldError[] {
  const spec = asRecord(obj['spec']) ?? {};
  const errs: FieldError[] = [];
  for (const key of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished']) {
    errs.push(...nonNegative(spec[key], SPEC.child(key)));
  }
  const mode = asString(spec['completionMode']) ?? '';
  if (mode !== '' && !['NonIndexed', 'Indexed'].includes(mode)) errs.push(notSupported(SPEC.child('completionMode'), mode, ['NonIndexed', 'Indexed']));
  if (mode === 'Indexed' && asNumber(spec['completions']) === undefined) {
    errs.push({ type: 'FieldValueRequired', field: 'spec.completions', badValue: '', detail: 'when completion mode is Indexed' });
  }
  errs.push(...validateSelectorAndTemplate(spec, SPEC, 'job'));
  errs.push(...validateWorkloadTemplate(spec, SPEC, ['OnFailure', 'Never']));
  return errs;
}

function validateJobUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = asRecord(obj['spec']) ?? {};
  const prev = asRecord(old['spec']) ?? {};
  return [
    ...validateJobSpec(obj),
    ...immutable(spec['selector'], prev['selector'], SPEC.child('selector')),
    ...immutable(spec['template'], prev['template'], SPEC.child('template')),
    ...immutable(spec['completionMode'], prev['completionMode'], SPEC.child('completionMode')),
    ...(spec['completionMode'] === 'Indexed' ? [] : immutable(spec['completions'], prev['completions'], SPEC.child('completions'))),
  ];
}

export function jobStrategy(): ResourceStrategy {
  return strategy({
    applyDefaults: defaultJob,
    decodeError: (obj) => podTemplateDecodeError(asRecord(obj['spec'])?.['template']),
    resetStatusOnCreate: true,
    generationSubject: specSubject,
    prepareForCreate: generateSelector,
    validate: validateJobSpec,
    validateUpdate: validateJobUpdate,
    selectableFields: (obj) => ({ 'status.successful': String(asNumber(asRecord(obj['status'])?.['succeeded']) ?? 0) }),
    defaultDeletePropagation: 'Orphan',
    deleteWarning: JOB_DELETE_WARNING,
  });
}
