/**
 * The Priority admission plug-in (k8s.io/kubernetes/plugin/pkg/admission/priority):
 *
 * - pods CREATE: `spec.priorityClassName` → `spec.priority` (and
 *   `spec.preemptionPolicy`) from the PriorityClass; a pod without a class
 *   gets the `globalDefault` class (the lowest value when several claim it) or
 *   priority 0 with PreemptLowerPriority; an unknown class is 403
 *   `no PriorityClass with name <x> was found`; a priority (or policy) given
 *   in the pod that differs from the class's is 403 too;
 * - pods UPDATE: a priority or policy left out keeps the stored one;
 * - PriorityClass CREATE/UPDATE (validation phase): at most one globalDefault.
 *
 * It runs in the mutating chain before the webhooks and again when a webhook
 * changed the object (chain reinvocation), so a webhook that switches the
 * class and drops `spec.priority` gets the new class's priority (the fix of
 * OpenKruise #1607 relies on this). Subresources are ignored.
 */
import { asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.ts';
import { forbidden, type Status } from './errors.ts';
import type { ObjectStore } from './storage.ts';

export const PRIORITY_PLUGIN = 'Priority';
export const PRIORITY_ORDER = 130;
const PRIORITY_CLASSES = 'scheduling.k8s.io/priorityclasses';
/** scheduling.DefaultPriorityWhenNoDefaultClassExists */
const DEFAULT_PRIORITY = 0;

/** The name admission errors use: the request's, else the object's name or generateName, else "Unknown". */
export function admissionSubjectName(a: AdmissionAttributes): string {
  if (a.name !== '') return a.name;
  const meta = a.object?.metadata;
  if (meta === undefined) return 'Unknown';
  return asString(meta.name) || asString(meta.generateName) || 'Unknown';
}

/** admission.NewForbidden: `<resource> "<name>" is forbidden: <why>`. */
export function admissionForbidden(a: AdmissionAttributes, why: string): Status {
  return forbidden({ group: a.resource.group, resource: a.resource.plural }, admissionSubjectName(a), why);
}

interface ResolvedClass {
  name: string;
  value: number;
  preemptionPolicy: string | undefined;
}

function defaultClass(store: ObjectStore): KubeObject | undefined {
  let best: KubeObject | undefined;
  for (const pc of store.list(PRIORITY_CLASSES)) {
    if (pc['globalDefault'] !== true) continue;
    if (best === undefined || (asNumber(best['value']) ?? 0) > (asNumber(pc['value']) ?? 0)) best = pc;
  }
  return best;
}

function resolved(pc: KubeObject): ResolvedClass {
  return { name: asString(pc.metadata?.name) ?? '', value: asNumber(pc['value']) ?? 0, preemptionPolicy: asString(pc['preemptionPolicy']) };
}

function admitPodCreate(store: ObjectStore, a: AdmissionAttributes, pod: KubeObject): Status | undefined {
  const spec = asRecord(pod['spec']) ?? {};
  pod['spec'] = spec;
  const className = asString(spec['priorityClassName']) ?? '';
  let cls: ResolvedClass;
  if (className === '') {
    const dpc = defaultClass(store);
    cls = dpc === undefined ? { name: '', value: DEFAULT_PRIORITY, preemptionPolicy: 'PreemptLowerPriority' } : resolved(dpc);
    if (cls.name !== '') spec['priorityClassName'] = cls.name;
  } else {
    const pc = store.get(PRIORITY_CLASSES, '', className);
    if (pc === undefined) return admissionForbidden(a, `no PriorityClass with name ${className} was found`);
    cls = resolved(pc);
  }
  const given = asNumber(spec['priority']);
  if (given !== undefined && given !== cls.value) {
    return admissionForbidden(a, `the integer value of priority (${given}) must not be provided in pod spec; priority admission controller computed ${cls.value} from the given PriorityClass name`);
  }
  spec['priority'] = cls.value;
  if (cls.preemptionPolicy !== undefined) {
    const givenPolicy = asString(spec['preemptionPolicy']);
    if (givenPolicy !== undefined && givenPolicy !== cls.preemptionPolicy) {
      return admissionForbidden(
        a,
        `the string value of PreemptionPolicy (${givenPolicy}) must not be provided in pod spec; priority admission controller computed ${cls.preemptionPolicy} from the given PriorityClass name`,
      );
    }
    spec['preemptionPolicy'] = cls.preemptionPolicy;
  }
  return undefined;
}

function admitPodUpdate(pod: KubeObject, old: KubeObject | undefined): void {
  const spec = asRecord(pod['spec']);
  const oldSpec = asRecord(old?.['spec']);
  if (spec === undefined || oldSpec === undefined) return;
  // The plug-in set these on create; an update that leaves them out keeps them (validation forbids changing them).
  if (spec['priority'] === undefined && oldSpec['priority'] !== undefined) spec['priority'] = oldSpec['priority'];
  if (spec['preemptionPolicy'] === undefined && oldSpec['preemptionPolicy'] !== undefined) spec['preemptionPolicy'] = oldSpec['preemptionPolicy'];
}

function validatePriorityClass(store: ObjectStore, a: AdmissionAttributes): Status | undefined {
  const pc = a.object;
  if (pc === undefined || pc['globalDefault'] !== true) return undefined;
  const dpc = defaultClass(store);
  if (dpc === undefined) return undefined;
  const dpcName = asString(dpc.metadata?.name) ?? '';
  if (a.operation === 'CREATE' || (a.operation === 'UPDATE' && dpcName !== (asString(pc.metadata?.name) ?? ''))) {
    return admissionForbidden(a, `PriorityClass ${dpcName} is already marked as default. Only one default can exist`);
  }
  return undefined;
}

export function priorityAdmission(store: ObjectStore): AdmissionPlugin {
  return {
    name: PRIORITY_PLUGIN,
    order: PRIORITY_ORDER,
    mutate: (a) => {
      if (a.subresource !== '' || a.resource.group !== '' || a.resource.plural !== 'pods' || a.object === undefined) return undefined;
      if (a.operation === 'CREATE') {
        const status = admitPodCreate(store, a, a.object);
        return status === undefined ? undefined : { allowed: false, status };
      }
      if (a.operation === 'UPDATE') admitPodUpdate(a.object, a.oldObject);
      return undefined;
    },
    validate: (a) => {
      if (a.subresource !== '' || a.resource.group !== 'scheduling.k8s.io' || a.resource.plural !== 'priorityclasses') return undefined;
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return undefined;
      const status = validatePriorityClass(store, a);
      return status === undefined ? undefined : { allowed: false, status };
    },
  };
}
