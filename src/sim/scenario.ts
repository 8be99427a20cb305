/**
 * Scenario files (issue 6 §2, docs/scenarios.md): one YAML document with
 * `name`, `cluster` (settings), `nodes` (fake nodes), `objects` (applied in
 * order) and `steps`. `parseScenario` reads the text with YAML 1.1 rules (as
 * kubectl does, src/k8s/yaml.ts) and validates everything before anything
 * runs, answering either a `Scenario` or every problem found, each naming
 * its field (`steps[3].scale.replicas: must be a non-negative integer`).
 *
 * Invariants of a parsed scenario: node names are unique RFC 1123 names;
 * every object has apiVersion, kind and metadata.name, and a namespace
 * unless its kind is cluster-scoped; every reference in a step has an
 * apiVersion; every expectation names an existing WorkloadSpread of the
 * scenario. Steps are in steps.ts, expectations in expectations.ts. Pure.
 */
import { KIND as WS_KIND, GROUP as WS_GROUP } from '../api/workloadspread.ts';
import { DEFAULT_UNSCHEDULABLE_RECOVERY_SECONDS } from '../api/keys.ts';
import { expandNodeSpecs, type NodeSpec } from '../k8s/node-specs.ts';
import { deepClone, isPlainObject } from '../k8s/json.ts';
import { parseQuantityNanos } from '../k8s/quantity.ts';
import { parseTime } from '../k8s/time.ts';
import type { KubeObject, Taint } from '../k8s/types.ts';
import { parseManifests } from '../k8s/yaml.ts';
import { parseDuration } from '../k8s/duration.ts';
import { readOwnerReferences } from './owners.ts';
import type { WorkloadSpreadRef } from './expectations.ts';
import {
  child,
  item,
  readBoolean,
  readList,
  readMapping,
  readNonNegativeInt,
  readString,
  readStringMap,
  rejectUnknownKeys,
  Problems,
  type Problem,
} from './field-reader.ts';
import { builtinClusterScoped, builtinKinds, checkReplicaFields, checkScenarioVirtualTime, MAX_SCENARIO_NODES, parseSteps, TAINT_EFFECTS, type ParseContext, type Step } from './steps.ts';

export type { Problem } from './field-reader.ts';

/** The virtual clock starts here unless `cluster.startTime` says otherwise. */
export const DEFAULT_START_TIME_MS = Date.UTC(2026, 0, 1);
export const DEFAULT_KUBELET_DELAY_MS = 2_000;
/** `--kubeconfig` mode: the cluster counts as settled once nothing changed for this long. */
export const DEFAULT_QUIET_PERIOD_MS = 3_000;

export interface ScenarioCluster {
  /** Bound pods become Running and Ready after this (cluster default; a node may override). */
  kubeletDelayMs: number;
  /** The manager's unschedulable recovery window (D10). */
  unschedulableRecoverySeconds: number;
  /** The manager's `--guard-pod-deletion`: DomainDisruptionBudgets on pod DELETE too (embedded cluster only). */
  guardPodDeletion: boolean;
  /** How long a Job's pod runs before it succeeds (on the scenario's nodes). */
  jobPodDurationMs?: number;
  /** Upper bound of a deleted pod's shutdown (on the scenario's nodes). */
  podStopDelayMs?: number;
  /** Epoch ms the virtual clock starts at. */
  startTimeMs: number;
  /** `--kubeconfig` mode: how long nothing may change before a settle ends. */
  quietPeriodMs: number;
}

export interface Scenario {
  name: string;
  description?: string;
  cluster: ScenarioCluster;
  nodes: NodeSpec[];
  objects: KubeObject[];
  steps: Step[];
  /** Every WorkloadSpread the scenario creates (objects, then apply steps). */
  workloadSpreads: WorkloadSpreadRef[];
}

export type ScenarioResult = { ok: true; scenario: Scenario } | { ok: false; problems: Problem[] };

const TOP_KEYS = ['name', 'description', 'cluster', 'nodes', 'objects', 'steps'] as const;
const CLUSTER_KEYS = ['kubeletDelay', 'unschedulableRecoverySeconds', 'guardPodDeletion', 'jobPodDuration', 'podStopDelay', 'startTime', 'quietPeriod'] as const;
const NODE_KEYS = ['name', 'namePrefix', 'count', 'labels', 'capacity', 'taints', 'podsNeverStart', 'unschedulable', 'startDelay'] as const;

/** `path: message`, one per line. */
export function formatProblems(problems: readonly Problem[]): string {
  return problems.map((p) => (p.path === '' ? p.message : `${p.path}: ${p.message}`)).join('\n');
}

function readDurationField(map: Record<string, unknown>, key: string, path: string, problems: Problems): number | undefined {
  if (map[key] === undefined) return undefined;
  const d = parseDuration(map[key]);
  if (!d.ok) problems.add(child(path, key), d.error);
  return d.ok ? d.ms : undefined;
}

function readCluster(value: unknown, problems: Problems): ScenarioCluster {
  const cluster: ScenarioCluster = {
    kubeletDelayMs: DEFAULT_KUBELET_DELAY_MS,
    unschedulableRecoverySeconds: DEFAULT_UNSCHEDULABLE_RECOVERY_SECONDS,
    guardPodDeletion: false,
    startTimeMs: DEFAULT_START_TIME_MS,
    quietPeriodMs: DEFAULT_QUIET_PERIOD_MS,
  };
  if (value === undefined || value === null) return cluster;
  const map = readMapping(value, 'cluster', problems);
  if (map === undefined) return cluster;
  rejectUnknownKeys(map, CLUSTER_KEYS, 'cluster', problems);
  cluster.kubeletDelayMs = readDurationField(map, 'kubeletDelay', 'cluster', problems) ?? cluster.kubeletDelayMs;
  const job = readDurationField(map, 'jobPodDuration', 'cluster', problems);
  if (job !== undefined) cluster.jobPodDurationMs = job;
  const stop = readDurationField(map, 'podStopDelay', 'cluster', problems);
  if (stop !== undefined) cluster.podStopDelayMs = stop;
  cluster.quietPeriodMs = readDurationField(map, 'quietPeriod', 'cluster', problems) ?? cluster.quietPeriodMs;
  if (map['unschedulableRecoverySeconds'] !== undefined) {
    const n = readNonNegativeInt(map['unschedulableRecoverySeconds'], 'cluster.unschedulableRecoverySeconds', problems);
    if (n !== undefined && n < 10) problems.add('cluster.unschedulableRecoverySeconds', 'must be at least 10 (rescheduleCriticalSeconds is bounded by it minus 5)');
    else if (n !== undefined) cluster.unschedulableRecoverySeconds = n;
  }
  if (map['guardPodDeletion'] !== undefined) {
    const guard = readBoolean(map['guardPodDeletion'], 'cluster.guardPodDeletion', problems);
    if (guard !== undefined) cluster.guardPodDeletion = guard;
  }
  const start = map['startTime'];
  if (start !== undefined) {
    // YAML 1.1 reads an unquoted timestamp as a date.
    const ms = start instanceof Date ? start.getTime() : typeof start === 'string' ? parseTime(start) : undefined;
    if (ms === undefined || Number.isNaN(ms)) problems.add('cluster.startTime', 'must be an RFC 3339 time such as 2026-01-01T00:00:00Z');
    else cluster.startTimeMs = Math.floor(ms / 1000) * 1000;
  }
  return cluster;
}

function readTaints(value: unknown, path: string, problems: Problems): Taint[] | undefined {
  const list = readList(value, path, problems);
  if (list === undefined) return undefined;
  const taints: Taint[] = [];
  list.forEach((v, i) => {
    const p = item(path, i);
    const map = readMapping(v, p, problems);
    if (map === undefined) return;
    rejectUnknownKeys(map, ['key', 'value', 'effect'], p, problems);
    const key = readString(map['key'], child(p, 'key'), problems);
    const effect = readString(map['effect'], child(p, 'effect'), problems);
    if (effect !== undefined && !(TAINT_EFFECTS as readonly string[]).includes(effect)) problems.add(child(p, 'effect'), `must be one of ${TAINT_EFFECTS.join(', ')}, not ${JSON.stringify(effect)}`);
    const value = map['value'] === undefined ? undefined : readString(map['value'], child(p, 'value'), problems, { nonEmpty: false });
    if (key === undefined || effect === undefined || !(TAINT_EFFECTS as readonly string[]).includes(effect)) return;
    const taint: Taint = { key, effect: effect as Taint['effect'] };
    if (value !== undefined) taint.value = value;
    taints.push(taint);
  });
  return taints;
}

/** One entry of `nodes` (or `addNodes`): a name, or `namePrefix` + `count`; expanded to specs. */
function readNodeEntry(value: unknown, path: string, problems: Problems): NodeSpec[] {
  if (typeof value === 'string') return [{ name: value }];
  const map = readMapping(value, path, problems);
  if (map === undefined) return [];
  rejectUnknownKeys(map, NODE_KEYS, path, problems);
  const base: Omit<NodeSpec, 'name'> = {};
  if (map['labels'] !== undefined) {
    const labels = readStringMap(map['labels'], child(path, 'labels'), problems);
    if (labels !== undefined) base.labels = labels;
  }
  if (map['capacity'] !== undefined) {
    const capacity = readStringMap(map['capacity'], child(path, 'capacity'), problems, { numbers: true });
    let valid = true;
    for (const [resource, q] of Object.entries(capacity ?? {})) {
      const nanos = parseQuantityNanos(q);
      if (nanos !== undefined && nanos >= 0n) continue;
      problems.add(child(child(path, 'capacity'), resource), `must be a quantity such as 8, 500m or 32Gi, not ${JSON.stringify(q)}`);
      valid = false;
    }
    // A bad quantity is reported once, here, not again by the node check of readNodeList.
    if (capacity !== undefined && valid) base.capacity = capacity;
  }
  if (map['taints'] !== undefined) {
    const taints = readTaints(map['taints'], child(path, 'taints'), problems);
    if (taints !== undefined) base.taints = taints;
  }
  for (const flag of ['podsNeverStart', 'unschedulable'] as const) {
    if (map[flag] === undefined) continue;
    const b = readBoolean(map[flag], child(path, flag), problems);
    if (b !== undefined) base[flag] = b;
  }
  const startDelay = readDurationField(map, 'startDelay', path, problems);
  if (startDelay !== undefined) base.behaviour = { startDelayMs: startDelay };

  if (map['name'] !== undefined) {
    if (map['namePrefix'] !== undefined || map['count'] !== undefined) problems.add(path, 'give either name, or namePrefix and count');
    const name = readString(map['name'], child(path, 'name'), problems);
    return name === undefined ? [] : [{ ...base, name }];
  }
  if (map['namePrefix'] === undefined) {
    problems.add(path, 'needs name, or namePrefix and count');
    return [];
  }
  const prefix = readString(map['namePrefix'], child(path, 'namePrefix'), problems);
  const count = map['count'] === undefined ? 1 : readNonNegativeInt(map['count'], child(path, 'count'), problems);
  if (count !== undefined && count > MAX_SCENARIO_NODES) {
    problems.add(child(path, 'count'), `must be at most ${MAX_SCENARIO_NODES} (the simulator's bound on a scenario's nodes), not ${count}`);
    return [];
  }
  if (prefix === undefined || count === undefined) return [];
  // `namePrefix: normal-` and `namePrefix: normal` both give normal-1, normal-2, …
  const stem = prefix.endsWith('-') ? prefix : `${prefix}-`;
  return Array.from({ length: count }, (_, i) => ({ ...base, name: `${stem}${i + 1}` }));
}

/** A list of node entries, every node checked (name format, capacity) and unique within `taken`. */
function readNodeList(value: unknown, path: string, problems: Problems, taken: Set<string>): NodeSpec[] | undefined {
  const list = readList(value, path, problems);
  if (list === undefined) return undefined;
  const nodes: NodeSpec[] = [];
  list.forEach((v, i) => {
    for (const spec of readNodeEntry(v, item(path, i), problems)) {
      const checked = expandNodeSpecs([spec]);
      if (!checked.ok) problems.add(item(path, i), checked.error);
      else if (taken.has(spec.name)) problems.add(item(path, i), `duplicate node name ${spec.name}`);
      else if (taken.size >= MAX_SCENARIO_NODES) {
        problems.add(item(path, i), `more than ${MAX_SCENARIO_NODES} nodes in the scenario (the simulator's bound)`);
        return;
      } else {
        taken.add(spec.name);
        nodes.push(spec);
      }
    }
  });
  return nodes;
}

function readObject(value: unknown, path: string, problems: Problems, clusterScoped: ReadonlySet<string>): KubeObject | undefined {
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  const apiVersion = readString(map['apiVersion'], child(path, 'apiVersion'), problems);
  const kind = readString(map['kind'], child(path, 'kind'), problems);
  const metadata = readMapping(map['metadata'], child(path, 'metadata'), problems);
  const name = metadata === undefined ? undefined : readString(metadata['name'], child(child(path, 'metadata'), 'name'), problems);
  let namespace: string | undefined;
  if (metadata !== undefined && metadata['namespace'] !== undefined) namespace = readString(metadata['namespace'], child(child(path, 'metadata'), 'namespace'), problems);
  if (apiVersion === undefined || kind === undefined || metadata === undefined || name === undefined) return undefined;
  checkReplicaFields(map, path, problems);
  const object = deepClone(map) as KubeObject;
  const meta = { ...(object.metadata ?? {}) };
  if (clusterScoped.has(kind)) delete meta.namespace;
  else meta.namespace = namespace ?? 'default';
  object.metadata = meta;
  return object;
}

const isWorkloadSpread = (o: unknown): o is KubeObject =>
  isPlainObject(o) && o['kind'] === WS_KIND && typeof o['apiVersion'] === 'string' && o['apiVersion'].startsWith(`${WS_GROUP}/`);

/** What steps may refer to: the objects' kinds and WorkloadSpreads, read from the raw document before it is validated. */
function scanReferences(raw: Record<string, unknown>): { kinds: Map<string, string>; workloadSpreads: WorkloadSpreadRef[] } {
  const kinds = builtinKinds();
  const workloadSpreads: WorkloadSpreadRef[] = [];
  const applied = (Array.isArray(raw['steps']) ? raw['steps'] : []).map((s) => (isPlainObject(s) ? s['apply'] : undefined));
  for (const o of [...(Array.isArray(raw['objects']) ? raw['objects'] : []), ...applied]) {
    if (!isPlainObject(o) || typeof o['kind'] !== 'string' || typeof o['apiVersion'] !== 'string') continue;
    if (!kinds.has(o['kind'])) kinds.set(o['kind'], o['apiVersion']);
    if (!isWorkloadSpread(o)) continue;
    const meta = isPlainObject(o['metadata']) ? o['metadata'] : {};
    const name = typeof meta['name'] === 'string' ? meta['name'] : undefined;
    const namespace = typeof meta['namespace'] === 'string' && meta['namespace'] !== '' ? meta['namespace'] : 'default';
    if (name !== undefined && !workloadSpreads.some((w) => w.name === name && w.namespace === namespace)) workloadSpreads.push({ namespace, name });
  }
  return { kinds, workloadSpreads };
}

/** Validates an already-parsed document (a mapping from YAML or JSON). */
export function scenarioFromValue(value: unknown, options: { defaultName?: string } = {}): ScenarioResult {
  const problems = new Problems();
  const raw = readMapping(value, '', problems);
  if (raw === undefined) return { ok: false, problems: [{ path: '', message: 'a scenario is a mapping with name, nodes, objects and steps' }] };
  rejectUnknownKeys(raw, TOP_KEYS, '', problems);

  let name = options.defaultName ?? 'scenario';
  if (raw['name'] !== undefined) name = readString(raw['name'], 'name', problems) ?? name;
  const cluster = readCluster(raw['cluster'], problems);
  const taken = new Set<string>();
  const nodes = raw['nodes'] === undefined || raw['nodes'] === null ? [] : (readNodeList(raw['nodes'], 'nodes', problems, taken) ?? []);
  const clusterScoped = builtinClusterScoped();
  const refs = scanReferences(raw);
  const objects: KubeObject[] = [];
  if (raw['objects'] !== undefined && raw['objects'] !== null) {
    (readList(raw['objects'], 'objects', problems) ?? []).forEach((o, i) => {
      const obj = readObject(o, item('objects', i), problems, clusterScoped);
      if (obj !== undefined) readOwnerReferences(obj, item('objects', i), refs.kinds, problems);
      if (obj !== undefined) objects.push(obj);
    });
  }
  const ctx: ParseContext = {
    kinds: refs.kinds,
    clusterScoped,
    workloadSpreads: refs.workloadSpreads,
    // addNodes may not repeat a name of `nodes` or of an earlier addNodes.
    readNodes: (v, p, pr) => readNodeList(v, p, pr, taken),
    readObject: (v, p, pr) => {
      const obj = readObject(v, p, pr, clusterScoped);
      if (obj !== undefined) readOwnerReferences(obj, p, refs.kinds, pr);
      return obj;
    },
  };
  const steps = parseSteps(raw['steps'], ctx, problems);
  checkScenarioVirtualTime(steps, problems);
  const description = raw['description'] === undefined ? undefined : readString(raw['description'], 'description', problems, { nonEmpty: false });
  if (!problems.empty) return { ok: false, problems: problems.list };
  const scenario: Scenario = { name, cluster, nodes, objects, steps, workloadSpreads: refs.workloadSpreads };
  if (description !== undefined) scenario.description = description;
  return { ok: true, scenario };
}

/** Parses a scenario file's text (YAML 1.1 or JSON; exactly one document). */
export function parseScenario(text: string, options: { source?: string; defaultName?: string } = {}): ScenarioResult {
  const source = options.source ?? '<scenario>';
  const parsed = parseManifests(text, source);
  if (!parsed.ok) return { ok: false, problems: [{ path: '', message: parsed.error }] };
  if (parsed.documents.length !== 1) {
    return { ok: false, problems: [{ path: '', message: `${source}: a scenario file holds exactly one YAML document, found ${parsed.documents.length}` }] };
  }
  const doc = parsed.documents[0]?.object;
  return scenarioFromValue(doc, options.defaultName === undefined ? {} : { defaultName: options.defaultName });
}
