/**
 * The Pod strategy (k8s.io/kubernetes/pkg/registry/core/pod/strategy.go):
 * scheme defaults, status `{phase: Pending, qosClass}` on create, the pod
 * update rules (the spec is immutable but for images, activeDeadlineSeconds,
 * added tolerations and removed scheduling gates), the status strategy
 * (owner references kept), graceful deletion (`CheckGracefulDelete`) and the
 * selectable fields of `GetAttrs`.
 * Pods carry no metadata.generation in Kubernetes 1.32.
 */
import { deepEqual } from '../../../k8s/json.ts';
import { forbidden, invalid, root, type FieldError } from '../../../k8s/field-errors.ts';
import { podTemplateDecodeError } from '../../../k8s/pod-decode.ts';
import { validatePodSpec } from '../../../k8s/pod-validation.ts';
import { parseQuantityNanos } from '../../../k8s/quantity.ts';
import { asArray, asNumber, asRecord, asString } from '../../../k8s/raw-json.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import { defaultPod } from '../pod-defaults.ts';
import { metaOf } from '../object-meta.ts';
import { strategy } from './base.ts';
import type { ResourceStrategy } from '../resource-def.ts';

const QOS_RESOURCES = ['cpu', 'memory'];

/** qos.GetPodQOS: BestEffort without requests/limits, Guaranteed when cpu and memory limits equal requests everywhere. */
export function podQOSClass(spec: unknown): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const s = asRecord(spec) ?? {};
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let guaranteed = true;
  for (const list of [s['initContainers'], s['containers']]) {
    for (const container of asArray(list) ?? []) {
      const resources = asRecord(asRecord(container)?.['resources']);
      for (const [name, q] of Object.entries(asRecord(resources?.['requests']) ?? {})) {
        const v = typeof q === 'string' || typeof q === 'number' ? parseQuantityNanos(q) : undefined;
        if (QOS_RESOURCES.includes(name) && v !== undefined && v > 0n) requests.set(name, (requests.get(name) ?? 0n) + v);
      }
      const found = new Set<string>();
      for (const [name, q] of Object.entries(asRecord(resources?.['limits']) ?? {})) {
        const v = typeof q === 'string' || typeof q === 'number' ? parseQuantityNanos(q) : undefined;
        if (QOS_RESOURCES.includes(name) && v !== undefined && v > 0n) {
          found.add(name);
          limits.set(name, (limits.get(name) ?? 0n) + v);
        }
      }
      if (!QOS_RESOURCES.every((r) => found.has(r))) guaranteed = false;
    }
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, v] of requests) if (limits.get(name) !== v) guaranteed = false;
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,' +
  '`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** ValidatePodUpdate's spec rule: copy the mutable fields over and require the rest to be equal. */
export function validatePodSpecUpdate(next: KubeObject, prev: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const newSpec = structuredClone(asRecord(next['spec']) ?? {});
  const oldSpec = asRecord(prev['spec']) ?? {};
  for (const key of ['containers', 'initContainers']) {
    const newList = asArray(newSpec[key]);
    const oldList = asArray(oldSpec[key]);
    if (newList === undefined || oldList === undefined || newList.length !== oldList.length) continue;
    newList.forEach((c, i) => {
      const nc = asRecord(c);
      const oc = asRecord(oldList[i]);
      if (nc !== undefined && oc !== undefined) nc['image'] = oc['image'];
    });
  }
  const newDeadline = asNumber(newSpec['activeDeadlineSeconds']);
  const oldDeadline = asNumber(oldSpec['activeDeadlineSeconds']);
  if (oldDeadline !== undefined && newDeadline === undefined) {
    errs.push(forbidden(root('spec', 'activeDeadlineSeconds'), 'must not update from a positive integer to nil value'));
  } else if (oldDeadline !== undefined && newDeadline !== undefined && newDeadline > oldDeadline) {
    errs.push(invalid(root('spec', 'activeDeadlineSeconds'), newDeadline, 'must be less than or equal to previous value'));
  }
  if (oldDeadline === undefined) delete newSpec['activeDeadlineSeconds'];
  else newSpec['activeDeadlineSeconds'] = oldDeadline;
  // Tolerations may only be added: every old toleration must still be there.
  const newTolerations = asArray(newSpec['tolerations']) ?? [];
  const oldTolerations = asArray(oldSpec['tolerations']) ?? [];
  if (oldTolerations.every((t) => newTolerations.some((n) => deepEqual(n, t)))) {
    if (oldSpec['tolerations'] === undefined) delete newSpec['tolerations'];
    else newSpec['tolerations'] = oldSpec['tolerations'];
  }
  // Scheduling gates may only be removed.
  const newGates = asArray(newSpec['schedulingGates']) ?? [];
  const oldGates = asArray(oldSpec['schedulingGates']) ?? [];
  if (newGates.every((g) => oldGates.some((o) => deepEqual(o, g)))) {
    if (oldSpec['schedulingGates'] === undefined) delete newSpec['schedulingGates'];
    else newSpec['schedulingGates'] = oldSpec['schedulingGates'];
  }
  if (!deepEqual(newSpec, oldSpec)) errs.push(forbidden(root('spec'), POD_UPDATE_FORBIDDEN));
  return errs;
}

/** podStrategy.CheckGracefulDelete: the requested period, else the pod's; 0 when unscheduled or finished. */
export function podGracePeriod(pod: KubeObject, requested: number | undefined): number {
  const spec = asRecord(pod['spec']) ?? {};
  let period = requested ?? asNumber(spec['terminationGracePeriodSeconds']) ?? 0;
  if ((asString(spec['nodeName']) ?? '') === '') period = 0;
  const phase = asString(asRecord(pod['status'])?.['phase']);
  if (phase === 'Failed' || phase === 'Succeeded') period = 0;
  if (period < 0) period = 1;
  return period;
}

function podFields(pod: KubeObject): Record<string, string> {
  const spec = asRecord(pod['spec']) ?? {};
  const status = asRecord(pod['status']) ?? {};
  return {
    'spec.nodeName': asString(spec['nodeName']) ?? '',
    'spec.restartPolicy': asString(spec['restartPolicy']) ?? '',
    'spec.schedulerName': asString(spec['schedulerName']) ?? '',
    'spec.serviceAccountName': asString(spec['serviceAccountName']) ?? '',
    'spec.hostNetwork': spec['hostNetwork'] === true ? 'true' : 'false',
    'status.phase': asString(status['phase']) ?? '',
    'status.podIP': asString(status['podIP']) ?? '',
    'status.nominatedNodeName': asString(status['nominatedNodeName']) ?? '',
  };
}

export function podStrategy(): ResourceStrategy {
  return strategy({
    applyDefaults: (obj) => defaultPod(obj),
    decodeError: (obj) => podTemplateDecodeError({ spec: obj['spec'] }),
    resetStatusOnCreate: true,
    prepareForCreate: (obj) => {
      obj.status = { phase: 'Pending', qosClass: podQOSClass(obj['spec']) };
    },
    prepareForStatusUpdate: (obj, old) => {
      // The status endpoint may not touch owner references (old kubelets corrupted them) nor start a deletion.
      const meta = metaOf(obj);
      if (old.metadata?.ownerReferences === undefined) delete meta.ownerReferences;
      else meta.ownerReferences = old.metadata.ownerReferences;
      delete meta.deletionTimestamp;
    },
    validate: (obj) => validatePodSpec(obj['spec'], root('spec')),
    validateUpdate: (obj, old) => [...validatePodSpec(obj['spec'], root('spec')), ...validatePodSpecUpdate(obj, old)],
    gracePeriodSeconds: podGracePeriod,
    selectableFields: podFields,
    returnDeletedObject: true,
  });
}
