/**
 * events.k8s.io/v1 Events: the same objects as core/v1 Events, seen through
 * renamed fields (k8s.io/kubernetes/pkg/apis/events/v1/conversion.go), so an
 * event recorded with either API is listed by both (`kubectl describe` reads
 * core/v1). Storage keeps the core/v1 shape; this module converts both ways
 * and validates what events.k8s.io/v1 requires of a new event.
 */
import { required, root, type FieldError } from '../../../k8s/field-errors.ts';
import { asRecord, asString } from '../../../k8s/raw-json.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import type { ResourceConversion, ResourceStrategy } from '../resource-def.ts';
import { strategy } from './base.ts';

/** events.k8s.io/v1 name → core/v1 name, for the fields that differ. */
const RENAMED: ReadonlyArray<[string, string]> = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['reportingController', 'reportingComponent'],
];

function rename(obj: KubeObject, pairs: ReadonlyArray<[string, string]>, apiVersion: string): KubeObject {
  const out: KubeObject = {};
  const map = new Map(pairs);
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'apiVersion') out.apiVersion = apiVersion;
    else out[map.get(key) ?? key] = value;
  }
  if (out.apiVersion === undefined) out.apiVersion = apiVersion;
  return out;
}

export const EVENTS_V1_CONVERSION: ResourceConversion = {
  storage: { group: '', plural: 'events' },
  toStorage: (obj) => rename(obj, RENAMED, 'v1'),
  fromStorage: (obj) =>
    rename(
      obj,
      RENAMED.map(([a, b]) => [b, a]),
      'events.k8s.io/v1',
    ),
};

export function eventsV1Fields(obj: KubeObject): Record<string, string> {
  const regarding = asRecord(obj['regarding']) ?? {};
  const str = (v: unknown): string => asString(v) ?? '';
  return {
    'regarding.kind': str(regarding['kind']),
    'regarding.namespace': str(regarding['namespace']),
    'regarding.name': str(regarding['name']),
    'regarding.uid': str(regarding['uid']),
    'regarding.apiVersion': str(regarding['apiVersion']),
    'regarding.resourceVersion': str(regarding['resourceVersion']),
    'regarding.fieldPath': str(regarding['fieldPath']),
    reason: str(obj['reason']),
    reportingController: str(obj['reportingController']),
    type: str(obj['type']),
  };
}

function validateNewEvent(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  if (obj['eventTime'] === undefined || obj['eventTime'] === null) errs.push(required(root('eventTime')));
  for (const key of ['reportingController', 'reportingInstance', 'action', 'reason']) {
    if ((asString(obj[key]) ?? '') === '') errs.push(required(root(key)));
  }
  const type = asString(obj['type']) ?? '';
  if (type !== 'Normal' && type !== 'Warning') errs.push({ type: 'FieldValueInvalid', field: 'type', badValue: type, detail: 'has invalid value, must be one of Normal, Warning' });
  return errs;
}

export function eventsV1Strategy(): ResourceStrategy {
  return strategy({ allowCreateOnUpdate: true, validate: validateNewEvent, selectableFields: eventsV1Fields });
}
