/**
 * Table printers of the core/v1 kinds, reproducing the columns and cell
 * derivations of kubernetes/pkg/printers/internalversion: Pod (READY,
 * STATUS with upstream's precedence — init containers, waiting/terminated
 * reasons, Completed-but-running, Terminating, Unknown for unreachable
 * nodes —, RESTARTS with "(x ago)", wide IP/NODE/NOMINATED NODE/READINESS
 * GATES), Node (Ready/NotReady/Unknown + SchedulingDisabled, roles from
 * labels), Namespace, Event (core/v1 and events.k8s.io/v1), Service
 * (external IP and port strings), ConfigMap, Secret, ServiceAccount.
 * Start with `podPrinter`.
 */
import { parseTime } from '../../../k8s/time.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import { humanDuration } from '../../../k8s/human-duration.ts';
import { AGE_COLUMN, age, col, formatLabels, int, list, name, NAME_COLUMN, rec, since, str, type Cell, type Printer } from './columns.ts';

// ---- pods ----

function isRestartableInit(container: Record<string, unknown> | undefined): boolean {
  return container !== undefined && str(container['restartPolicy']) === 'Always';
}

function laterOf(current: number | undefined, timestamp: unknown): number | undefined {
  const t = parseTime(str(timestamp));
  if (t === undefined) return current;
  return current === undefined || t > current ? t : current;
}

function hasCondition(conditions: Record<string, unknown>[], type: string, status = 'True'): boolean {
  return conditions.some((c) => str(c['type']) === type && str(c['status']) === status);
}

/** READY, STATUS, RESTARTS of a pod: `printPod`'s derivation. */
export function podSummary(pod: KubeObject, now: number): { ready: string; status: string; restarts: string } {
  const spec = rec(pod['spec']);
  const status = rec(pod.status);
  const conditions = list(status['conditions']);
  const containers = list(spec['containers']);
  const initSpecs = list(spec['initContainers']);
  const initByName = new Map(initSpecs.map((c) => [str(c['name']), c]));
  let total = containers.length + initSpecs.filter(isRestartableInit).length;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart: number | undefined;
  let lastSidecarRestart: number | undefined;
  const phase = str(status['phase']);
  let reason = str(status['reason']) !== '' ? str(status['reason']) : phase;
  if (conditions.some((c) => str(c['type']) === 'PodScheduled' && str(c['reason']) === 'SchedulingGated')) reason = 'SchedulingGated';

  let initializing = false;
  const initStatuses = list(status['initContainerStatuses']);
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i] as Record<string, unknown>;
    restarts += int(cs['restartCount']);
    const lastTerminated = rec(rec(cs['lastState'])['terminated']);
    if (cs['lastState'] !== undefined && rec(cs['lastState'])['terminated'] !== undefined) lastRestart = laterOf(lastRestart, lastTerminated['finishedAt']);
    const sidecar = isRestartableInit(initByName.get(str(cs['name'])));
    if (sidecar) {
      sidecarRestarts += int(cs['restartCount']);
      if (rec(cs['lastState'])['terminated'] !== undefined) lastSidecarRestart = laterOf(lastSidecarRestart, lastTerminated['finishedAt']);
    }
    const state = rec(cs['state']);
    const terminated = state['terminated'] !== undefined ? rec(state['terminated']) : undefined;
    const waiting = state['waiting'] !== undefined ? rec(state['waiting']) : undefined;
    if (terminated !== undefined && int(terminated['exitCode']) === 0) continue;
    if (sidecar && cs['started'] === true) {
      if (cs['ready'] === true) ready++;
      continue;
    }
    if (terminated !== undefined) {
      if (str(terminated['reason']) === '') reason = int(terminated['signal']) !== 0 ? `Init:Signal:${int(terminated['signal'])}` : `Init:ExitCode:${int(terminated['exitCode'])}`;
      else reason = `Init:${str(terminated['reason'])}`;
    } else if (waiting !== undefined && str(waiting['reason']) !== '' && str(waiting['reason']) !== 'PodInitializing') {
      reason = `Init:${str(waiting['reason'])}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || hasCondition(conditions, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = list(status['containerStatuses']);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i] as Record<string, unknown>;
      restarts += int(cs['restartCount']);
      if (rec(cs['lastState'])['terminated'] !== undefined) lastRestart = laterOf(lastRestart, rec(rec(cs['lastState'])['terminated'])['finishedAt']);
      const state = rec(cs['state']);
      const waiting = state['waiting'] !== undefined ? rec(state['waiting']) : undefined;
      const terminated = state['terminated'] !== undefined ? rec(state['terminated']) : undefined;
      if (waiting !== undefined && str(waiting['reason']) !== '') reason = str(waiting['reason']);
      else if (terminated !== undefined && str(terminated['reason']) !== '') reason = str(terminated['reason']);
      else if (terminated !== undefined) reason = int(terminated['signal']) !== 0 ? `Signal:${int(terminated['signal'])}` : `ExitCode:${int(terminated['exitCode'])}`;
      else if (cs['ready'] === true && state['running'] !== undefined) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = hasCondition(conditions, 'Ready') ? 'Running' : 'NotReady';
  }

  if (pod.metadata?.deletionTimestamp !== undefined && str(status['reason']) === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata?.deletionTimestamp !== undefined && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  total = Math.max(total, 0);
  const restartText = restarts !== 0 && lastRestart !== undefined ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);
  return { ready: `${ready}/${total}`, status: reason, restarts: restartText };
}

export const podPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Ready', 'string', 'Ready containers of the pod over all of them.'),
    col('Status', 'string', 'Summary of the state of the pod and its containers.'),
    col('Restarts', 'string', 'Container restarts, and how long ago the last one was.'),
    AGE_COLUMN,
    col('IP', 'string', 'First IP address of the pod.', 1),
    col('Node', 'string', 'Node the pod is bound to.', 1),
    col('Nominated Node', 'string', 'Node the scheduler nominated after a preemption.', 1),
    col('Readiness Gates', 'string', 'Readiness gates that are true over all of them.', 1),
  ],
  cells: (pod, now) => {
    const s = podSummary(pod, now);
    const spec = rec(pod['spec']);
    const status = rec(pod.status);
    const ip = str(rec(list(status['podIPs'])[0])['ip']) || '<none>';
    const gates = list(spec['readinessGates']);
    let gateText = '<none>';
    if (gates.length > 0) {
      const conditions = list(status['conditions']);
      const passed = gates.filter((g) => {
        const c = conditions.find((x) => str(x['type']) === str(g['conditionType']));
        return c !== undefined && str(c['status']) === 'True';
      }).length;
      gateText = `${passed}/${gates.length}`;
    }
    return [name(pod), s.ready, s.status, s.restarts, age(pod, now), ip, str(spec['nodeName']) || '<none>', str(status['nominatedNodeName']) || '<none>', gateText];
  },
  conditions: (pod) => {
    const phase = str(rec(pod.status)['phase']);
    if (phase === 'Succeeded' || phase === 'Failed') return [{ type: 'Completed', status: 'True', reason: phase }];
    return undefined;
  },
};

// ---- nodes ----

function nodeRoles(labels: Record<string, unknown>): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(labels)) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role !== '') roles.add(role);
    } else if (k === 'kubernetes.io/role' && typeof v === 'string' && v !== '') {
      roles.add(v);
    }
  }
  return [...roles].sort();
}

function nodeAddress(node: KubeObject, type: string): string {
  return str(list(rec(node.status)['addresses']).find((a) => str(a['type']) === type)?.['address']) || '<none>';
}

export const nodePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Status', 'string', 'Readiness of the node, and whether it takes new pods.'),
    col('Roles', 'string', 'Roles of the node, from its node-role labels.'),
    AGE_COLUMN,
    col('Version', 'string', 'Kubelet version.'),
    col('Internal-IP', 'string', 'First internal address.', 1),
    col('External-IP', 'string', 'First external address.', 1),
    col('OS-Image', 'string', 'Operating system image.', 1),
    col('Kernel-Version', 'string', 'Kernel version.', 1),
    col('Container-Runtime', 'string', 'Container runtime and its version.', 1),
  ],
  cells: (node, now) => {
    const status = rec(node.status);
    const readyCondition = list(status['conditions']).find((c) => str(c['type']) === 'Ready');
    const parts: string[] = [];
    if (readyCondition !== undefined) parts.push(str(readyCondition['status']) === 'True' ? 'Ready' : 'NotReady');
    if (parts.length === 0) parts.push('Unknown');
    if (rec(node['spec'])['unschedulable'] === true) parts.push('SchedulingDisabled');
    const info = rec(status['nodeInfo']);
    const roles = nodeRoles(rec(node.metadata?.labels));
    return [
      name(node),
      parts.join(','),
      roles.length === 0 ? '<none>' : roles.join(','),
      age(node, now),
      str(info['kubeletVersion']),
      nodeAddress(node, 'InternalIP'),
      nodeAddress(node, 'ExternalIP'),
      str(info['osImage']) || '<unknown>',
      str(info['kernelVersion']) || '<unknown>',
      str(info['containerRuntimeVersion']) || '<unknown>',
    ];
  },
};

export const namespacePrinter: Printer = {
  columns: [NAME_COLUMN, col('Status', 'string', 'Lifecycle phase of the namespace.'), AGE_COLUMN],
  cells: (ns, now) => [name(ns), str(rec(ns.status)['phase']), age(ns, now)],
};

// ---- events ----

function microSince(timestamp: unknown, now: number): string {
  const t = parseTime(str(timestamp));
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}

/** Events of either API, read through the fields of core/v1. */
function eventCells(e: { lastTimestamp: unknown; firstTimestamp: unknown; eventTime: unknown; series: Record<string, unknown> | undefined; count: number; involved: Record<string, unknown>; type: string; reason: string; message: string; source: string; name: string }, now: number): Cell[] {
  const first = parseTime(str(e.firstTimestamp)) !== undefined ? since(e.firstTimestamp, now) : microSince(e.eventTime, now);
  let last = parseTime(str(e.lastTimestamp)) !== undefined ? since(e.lastTimestamp, now) : first;
  let count = e.count;
  if (e.series !== undefined) {
    last = microSince(e.series['lastObservedTime'], now);
    count = int(e.series['count']);
  } else if (count === 0) {
    count = 1;
  }
  const kind = str(e.involved['kind']).toLowerCase();
  const target = str(e.involved['name']) !== '' ? `${kind}/${str(e.involved['name'])}` : kind;
  return [last, e.type, e.reason, target, str(e.involved['fieldPath']), e.source, e.message.trim(), first, count, e.name];
}

const EVENT_COLUMNS = [
  col('Last Seen', 'string', 'Time since the event was last seen.'),
  col('Type', 'string', 'Normal or Warning.'),
  col('Reason', 'string', 'Why the event happened, in one word.'),
  col('Object', 'string', 'Object the event is about.'),
  col('Subobject', 'string', 'Part of the object the event is about.', 1),
  col('Source', 'string', 'Component that reported the event.', 1),
  col('Message', 'string', 'What happened.'),
  col('First Seen', 'string', 'Time since the event was first seen.', 1),
  col('Count', 'string', 'How many times it happened.', 1),
  { ...col('Name', 'string', 'Name of the event object.', 1), format: 'name' },
];

const joinSource = (component: string, instance: string) => (instance === '' ? component : `${component}, ${instance}`);

export const eventPrinter: Printer = {
  columns: EVENT_COLUMNS,
  cells: (e, now) => {
    const source = rec(e['source']);
    return eventCells(
      {
        lastTimestamp: e['lastTimestamp'],
        firstTimestamp: e['firstTimestamp'],
        eventTime: e['eventTime'],
        series: e['series'] === undefined || e['series'] === null ? undefined : rec(e['series']),
        count: int(e['count']),
        involved: rec(e['involvedObject']),
        type: str(e['type']),
        reason: str(e['reason']),
        message: str(e['message']),
        source: joinSource(str(source['component']) || str(e['reportingComponent']), str(source['host']) || str(e['reportingInstance'])),
        name: name(e),
      },
      now,
    );
  },
};

export const eventsV1Printer: Printer = {
  columns: EVENT_COLUMNS,
  cells: (e, now) => {
    const source = rec(e['deprecatedSource']);
    return eventCells(
      {
        lastTimestamp: e['deprecatedLastTimestamp'],
        firstTimestamp: e['deprecatedFirstTimestamp'],
        eventTime: e['eventTime'],
        series: e['series'] === undefined || e['series'] === null ? undefined : rec(e['series']),
        count: int(e['deprecatedCount']),
        involved: rec(e['regarding']),
        type: str(e['type']),
        reason: str(e['reason']),
        message: str(e['note']),
        source: joinSource(str(source['component']) || str(e['reportingController']), str(source['host']) || str(e['reportingInstance'])),
        name: name(e),
      },
      now,
    );
  },
};

// ---- services and configuration ----

function servicePorts(spec: Record<string, unknown>): string {
  const ports = list(spec['ports']).map((p) => {
    const protocol = str(p['protocol']) || 'TCP';
    const nodePort = int(p['nodePort']);
    return nodePort > 0 ? `${int(p['port'])}:${nodePort}/${protocol}` : `${int(p['port'])}/${protocol}`;
  });
  return ports.length === 0 ? '<none>' : ports.join(',');
}

function serviceExternalIP(svc: KubeObject): string {
  const spec = rec(svc['spec']);
  const external = (Array.isArray(spec['externalIPs']) ? spec['externalIPs'] : []).filter((x): x is string => typeof x === 'string');
  switch (str(spec['type'])) {
    case 'ExternalName':
      return str(spec['externalName']);
    case 'LoadBalancer': {
      const ingress = list(rec(rec(svc.status)['loadBalancer'])['ingress']).map((i) => str(i['ip']) || str(i['hostname'])).filter((x) => x !== '');
      const all = [...ingress, ...external];
      return all.length === 0 ? '<pending>' : all.join(',');
    }
    default:
      return external.length === 0 ? '<none>' : external.join(',');
  }
}

export const servicePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Type', 'string', 'How the service is exposed.'),
    col('Cluster-IP', 'string', 'Virtual IP of the service inside the cluster.'),
    col('External-IP', 'string', 'Addresses the service is reachable at from outside.'),
    col('Port(s)', 'string', 'Ports the service exposes.'),
    AGE_COLUMN,
    col('Selector', 'string', 'Labels of the pods the service routes to.', 1),
  ],
  cells: (svc, now) => {
    const spec = rec(svc['spec']);
    const ips = (Array.isArray(spec['clusterIPs']) ? spec['clusterIPs'] : [spec['clusterIP']]).filter((x): x is string => typeof x === 'string' && x !== '');
    return [name(svc), str(spec['type']), ips[0] ?? '<none>', serviceExternalIP(svc), servicePorts(spec), age(svc, now), formatLabels(spec['selector'])];
  },
};

const countKeys = (...maps: unknown[]) => maps.reduce<number>((n, m) => n + Object.keys(rec(m)).length, 0);

export const configMapPrinter: Printer = {
  columns: [NAME_COLUMN, col('Data', 'integer', 'Number of keys.'), AGE_COLUMN],
  cells: (cm, now) => [name(cm), countKeys(cm['data'], cm['binaryData']), age(cm, now)],
};

export const secretPrinter: Printer = {
  columns: [NAME_COLUMN, col('Type', 'string', 'Type of the secret.'), col('Data', 'integer', 'Number of keys.'), AGE_COLUMN],
  cells: (s, now) => [name(s), str(s['type']), countKeys(s['data'], s['stringData']), age(s, now)],
};

export const serviceAccountPrinter: Printer = {
  columns: [NAME_COLUMN, col('Secrets', 'integer', 'Number of secrets the account lists.'), AGE_COLUMN],
  cells: (sa, now) => [name(sa), list(sa['secrets']).length, age(sa, now)],
};

/** `formatEndpoints`: up to three `ip:port` entries, then "+ N more...". */
function formatEndpoints(subsets: Record<string, unknown>[]): string {
  if (subsets.length === 0) return '<none>';
  const shown: string[] = [];
  const max = 3;
  let count = 0;
  let more = false;
  const add = (entry: string) => {
    if (shown.length === max) more = true;
    else shown.push(entry);
  };
  for (const ss of subsets) {
    const addresses = list(ss['addresses']);
    const ports = list(ss['ports']);
    if (ports.length === 0) {
      count += addresses.length;
      for (const a of addresses) add(str(a['ip']));
      continue;
    }
    for (const p of ports) {
      count += addresses.length;
      for (const a of addresses) {
        const ip = str(a['ip']);
        add(`${ip.includes(':') ? `[${ip}]` : ip}:${int(p['port'])}`);
      }
    }
  }
  return more ? `${shown.join(',')} + ${count - max} more...` : shown.join(',');
}

export const endpointsPrinter: Printer = {
  columns: [NAME_COLUMN, col('Endpoints', 'string', 'Addresses and ports of the endpoints.'), AGE_COLUMN],
  cells: (ep, now) => [name(ep), formatEndpoints(list(ep['subsets'])), age(ep, now)],
};
