/**
 * Table printers of the workload and cluster kinds (kubernetes/pkg/printers/
 * internalversion): Deployment (READY UP-TO-DATE AVAILABLE + wide
 * CONTAINERS IMAGES SELECTOR), ReplicaSet, StatefulSet, Job (STATUS
 * COMPLETIONS DURATION), ControllerRevision, PodDisruptionBudget, Lease,
 * PriorityClass, webhook configurations; and `printerFor`, the registry of
 * every built-in printer by group and kind.
 */
import { humanDuration } from '../../../k8s/human-duration.ts';
import { parseTime } from '../../../k8s/time.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import { AGE_COLUMN, age, col, containerCells, DEFAULT_PRINTER, formatSelector, int, list, name, NAME_COLUMN, rec, str, templateSpec, type Printer } from './columns.ts';
import { configMapPrinter, endpointsPrinter, eventPrinter, eventsV1Printer, namespacePrinter, nodePrinter, podPrinter, secretPrinter, serviceAccountPrinter, servicePrinter } from './printers-core.ts';

const CONTAINERS = col('Containers', 'string', 'Names of the containers of the pod template.', 1);
const IMAGES = col('Images', 'string', 'Images of the containers of the pod template.', 1);
const SELECTOR = col('Selector', 'string', 'Label selector of the pods.', 1);

const specOf = (o: KubeObject) => rec(o['spec']);
const statusOf = (o: KubeObject) => rec(o.status);
const desired = (o: KubeObject) => int(specOf(o)['replicas']);

export const deploymentPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Ready', 'string', 'Ready replicas over desired replicas.'),
    col('Up-to-date', 'integer', 'Replicas running the latest pod template.'),
    col('Available', 'integer', 'Replicas available to users.'),
    AGE_COLUMN,
    CONTAINERS,
    IMAGES,
    SELECTOR,
  ],
  cells: (d, now) => {
    const st = statusOf(d);
    const [containers, images] = containerCells(templateSpec(d));
    return [name(d), `${int(st['readyReplicas'])}/${desired(d)}`, int(st['updatedReplicas']), int(st['availableReplicas']), age(d, now), containers, images, formatSelector(specOf(d)['selector'])];
  },
};

export const replicaSetPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Desired', 'integer', 'Desired replicas.'),
    col('Current', 'integer', 'Replicas that exist.'),
    col('Ready', 'integer', 'Ready replicas.'),
    AGE_COLUMN,
    CONTAINERS,
    IMAGES,
    SELECTOR,
  ],
  cells: (rs, now) => {
    const st = statusOf(rs);
    const [containers, images] = containerCells(templateSpec(rs));
    return [name(rs), desired(rs), int(st['replicas']), int(st['readyReplicas']), age(rs, now), containers, images, formatSelector(specOf(rs)['selector'])];
  },
};

export const statefulSetPrinter: Printer = {
  columns: [NAME_COLUMN, col('Ready', 'string', 'Ready replicas over desired replicas.'), AGE_COLUMN, CONTAINERS, IMAGES],
  cells: (ss, now) => {
    const [containers, images] = containerCells(templateSpec(ss));
    return [name(ss), `${int(statusOf(ss)['readyReplicas'])}/${desired(ss)}`, age(ss, now), containers, images];
  },
};

function jobStatus(job: KubeObject): string {
  const conditions = list(statusOf(job)['conditions']);
  const has = (type: string) => conditions.some((c) => str(c['type']) === type && str(c['status']) === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (job.metadata?.deletionTimestamp !== undefined) return 'Terminating';
  if (has('Suspended')) return 'Suspended';
  if (has('FailureTarget')) return 'FailureTarget';
  if (has('SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

export const jobPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Status', 'string', 'Where the job is in its life.'),
    col('Completions', 'string', 'Succeeded pods over desired completions.'),
    col('Duration', 'string', 'How long the job ran or has been running.'),
    AGE_COLUMN,
    CONTAINERS,
    IMAGES,
    SELECTOR,
  ],
  cells: (job, now) => {
    const spec = specOf(job);
    const st = statusOf(job);
    const succeeded = int(st['succeeded']);
    let completions: string;
    if (typeof spec['completions'] === 'number') completions = `${succeeded}/${int(spec['completions'])}`;
    else {
      const parallelism = int(spec['parallelism']);
      completions = parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
    }
    const start = parseTime(str(st['startTime']));
    const end = parseTime(str(st['completionTime']));
    const duration = start === undefined ? '' : humanDuration((end ?? now) - start);
    const [containers, images] = containerCells(templateSpec(job));
    return [name(job), jobStatus(job), completions, duration, age(job, now), containers, images, formatSelector(spec['selector'])];
  },
};

export const controllerRevisionPrinter: Printer = {
  columns: [NAME_COLUMN, col('Controller', 'string', 'Controller of the revision.'), col('Revision', 'integer', 'Revision number.'), AGE_COLUMN],
  cells: (cr, now) => {
    const owner = (cr.metadata?.ownerReferences ?? []).find((o) => o.controller === true);
    let controller = '<none>';
    if (owner !== undefined) {
      const slash = owner.apiVersion.indexOf('/');
      const group = slash >= 0 ? owner.apiVersion.slice(0, slash) : '';
      controller = `${owner.kind.toLowerCase()}${group === '' ? '' : `.${group}`}/${owner.name}`;
    }
    return [name(cr), controller, int(cr['revision']), age(cr, now)];
  },
};

function intOrStringText(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return v;
  return 'N/A';
}

export const pdbPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Min Available', 'string', 'Pods that must stay available.'),
    col('Max Unavailable', 'string', 'Pods that may be unavailable.'),
    col('Allowed Disruptions', 'integer', 'Disruptions allowed now.'),
    AGE_COLUMN,
  ],
  cells: (pdb, now) => [name(pdb), intOrStringText(specOf(pdb)['minAvailable']), intOrStringText(specOf(pdb)['maxUnavailable']), int(statusOf(pdb)['disruptionsAllowed']), age(pdb, now)],
};

export const leasePrinter: Printer = {
  columns: [NAME_COLUMN, col('Holder', 'string', 'Identity of the holder of the lease.'), AGE_COLUMN],
  cells: (l, now) => [name(l), str(specOf(l)['holderIdentity']), age(l, now)],
};

export const priorityClassPrinter: Printer = {
  columns: [NAME_COLUMN, col('Value', 'integer', 'Priority of the pods of this class.'), col('Global-Default', 'boolean', 'Whether pods without a class get this one.'), AGE_COLUMN],
  cells: (pc, now) => [name(pc), int(pc['value']), pc['globalDefault'] === true, age(pc, now)],
};

export const webhookConfigurationPrinter: Printer = {
  columns: [NAME_COLUMN, col('Webhooks', 'integer', 'Number of webhooks.'), AGE_COLUMN],
  cells: (w, now) => [name(w), list(w['webhooks']).length, age(w, now)],
};

/** Users, Groups, ServiceAccounts of a binding's subjects (`SubjectsStrings`). */
function subjectCells(binding: KubeObject): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const serviceAccounts: string[] = [];
  for (const s of list(binding['subjects'])) {
    const subjectName = str(s['name']);
    if (str(s['kind']) === 'User') users.push(subjectName);
    else if (str(s['kind']) === 'Group') groups.push(subjectName);
    else if (str(s['kind']) === 'ServiceAccount') serviceAccounts.push(str(s['namespace']) === '' ? subjectName : `${str(s['namespace'])}/${subjectName}`);
  }
  return [users.join(', '), groups.join(', '), serviceAccounts.join(', ')];
}

export const roleBindingPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Role', 'string', 'Role to which this binding refers.'),
    AGE_COLUMN,
    col('Users', 'string', 'Users in the binding.', 1),
    col('Groups', 'string', 'Groups in the binding.', 1),
    col('ServiceAccounts', 'string', 'ServiceAccounts in the binding.', 1),
  ],
  cells: (b, now) => [name(b), `${str(rec(b['roleRef'])['kind'])}/${str(rec(b['roleRef'])['name'])}`, age(b, now), ...subjectCells(b)],
};

const PRINTERS: Record<string, Printer> = {
  '/Pod': podPrinter,
  '/Node': nodePrinter,
  '/Namespace': namespacePrinter,
  '/Event': eventPrinter,
  'events.k8s.io/Event': eventsV1Printer,
  '/Service': servicePrinter,
  '/Endpoints': endpointsPrinter,
  '/ConfigMap': configMapPrinter,
  '/Secret': secretPrinter,
  '/ServiceAccount': serviceAccountPrinter,
  'apps/Deployment': deploymentPrinter,
  'apps/ReplicaSet': replicaSetPrinter,
  'apps/StatefulSet': statefulSetPrinter,
  'apps/ControllerRevision': controllerRevisionPrinter,
  'batch/Job': jobPrinter,
  'policy/PodDisruptionBudget': pdbPrinter,
  'coordination.k8s.io/Lease': leasePrinter,
  'scheduling.k8s.io/PriorityClass': priorityClassPrinter,
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': webhookConfigurationPrinter,
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': webhookConfigurationPrinter,
  'rbac.authorization.k8s.io/RoleBinding': roleBindingPrinter,
  'rbac.authorization.k8s.io/ClusterRoleBinding': roleBindingPrinter,
};

/** The printer of a built-in kind; NAME + CREATED AT for kinds upstream prints no table for (CRDs among them). */
export function printerFor(group: string, kind: string): Printer {
  return PRINTERS[`${group}/${kind}`] ?? DEFAULT_PRINTER;
}
