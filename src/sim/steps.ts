/**
 * The `steps:` of a scenario: what each action means, how it is read from
 * YAML, and whether the cluster settles after it by default.
 *
 * A step is a mapping with exactly one action key (`scale`, `apply`,
 * `patch`, `delete`, `evict`, `drain`, `cordon`, `uncordon`, `deleteNode`,
 * `addNodes`, `taint`, `untaint`, `rollout`, `createPods`, `advance`,
 * `settle`, `expect`; `drain` is in drain.ts, `createPods` in owners.ts)
 * and optional common keys: `settle` (false, true or `{timeout}`: what to do
 * after the action), `expectFailure` (true or a message substring: the
 * action must be refused, e.g. an eviction a budget forbids) and
 * `description` (shown in reports). A step holding only `settle` is the
 * settle action.
 *
 * Extending: a new action is one entry in `ACTIONS` (its parser and
 * default settling) plus its effect in actions.ts; the shape of a step
 * does not change. Pure.
 */
import { DDB_API_VERSION, DDB_KIND } from '../api/disruption-budget.ts';
import { API_VERSION as WS_API_VERSION, KIND as WS_KIND } from '../api/workloadspread.ts';
import { apiVersionOf, BUILTIN } from '../client/resources.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { KubeObject, Taint } from '../k8s/types.ts';
import type { NodeSpec } from '../k8s/node-specs.ts';
import { parseDrain, type DrainAction } from './drain.ts';
import { readPodTemplate, type CreatePodsAction } from './owners.ts';
import { parseDuration } from '../k8s/duration.ts';
import { parseExpectations, type ExpectSpec, type WorkloadSpreadRef } from './expectations.ts';
import { child, describeType, item, readList, readMapping, readNonNegativeInt, readString, rejectUnknownKeys, type Problems } from './field-reader.ts';

/**
 * Bounds of a scenario (docs/scenarios.md "Bounds"), checked when it is
 * parsed, before anything runs: the simulator replays every timer on the
 * way, so virtual time costs real CPU (about 4 s per virtual hour for a
 * small cluster on a busy 2-CPU machine), and every pod is a real object in
 * the embedded API server.
 */
export const MAX_VIRTUAL_DURATION_MS = 24 * 3600_000;
/**
 * Virtual time a whole scenario may take at most: the settle after the objects are applied, every
 * `advance`, and every settle and drain timeout (what a step may wait in the worst case, when the
 * cluster never goes quiet) added up. A week of a small cluster replays in about 10 minutes of CPU.
 */
export const MAX_SCENARIO_VIRTUAL_TIME_MS = 7 * 24 * 3600_000;
/** Replicas (and a Job's parallelism or completions) one workload may ask for. */
export const MAX_SCENARIO_REPLICAS = 1_000;
/** Fake nodes in a scenario, `nodes` and every `addNodes` together. */
export const MAX_SCENARIO_NODES = 500;

/** `24h` for messages. */
export function durationText(ms: number): string {
  return ms % 3600_000 === 0 ? `${ms / 3600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`;
}

/** A duration of virtual time within `MAX_VIRTUAL_DURATION_MS`, or a problem at `path`. */
function boundedDuration(value: unknown, path: string, problems: Problems): number | undefined {
  const d = parseDuration(value);
  if (!d.ok) {
    problems.add(path, d.error);
    return undefined;
  }
  if (d.ms > MAX_VIRTUAL_DURATION_MS) {
    problems.add(path, `must be at most ${durationText(MAX_VIRTUAL_DURATION_MS)} of virtual time, not ${durationText(d.ms)} (the simulator replays every timer on the way; split a longer wait into several steps)`);
    return undefined;
  }
  return d.ms;
}

/** A replica count within `MAX_SCENARIO_REPLICAS`, or a problem at `path`. */
export function boundedReplicas(value: unknown, path: string, problems: Problems): number | undefined {
  const n = readNonNegativeInt(value, path, problems);
  if (n !== undefined && n > MAX_SCENARIO_REPLICAS) {
    problems.add(path, `must be at most ${MAX_SCENARIO_REPLICAS} (the simulator's bound on one workload's pods), not ${n}`);
    return undefined;
  }
  return n;
}

/** The replica-like fields of a workload (`spec.replicas`, a Job's `spec.parallelism` and `spec.completions`). */
export const REPLICA_FIELDS = ['replicas', 'parallelism', 'completions'] as const;

/** Problems for replica-like numbers over the bound in an object's (or a merge patch's) `spec`. */
export function checkReplicaFields(obj: unknown, path: string, problems: Problems): void {
  if (!isPlainObject(obj) || !isPlainObject(obj['spec'])) return;
  const spec = obj['spec'];
  for (const field of REPLICA_FIELDS) {
    const value = spec[field];
    if (typeof value === 'number' && value > MAX_SCENARIO_REPLICAS) boundedReplicas(value, child(child(path, 'spec'), field), problems);
  }
}

/** How long `settle` waits by default (virtual time on the embedded cluster); also the settle after the objects are applied. */
export const DEFAULT_SETTLE_TIMEOUT_MS = 30 * 60_000;

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  /** '' for cluster-scoped kinds. */
  namespace: string;
}

/** Pods chosen by subset (for delete and evict): the first `count` active pods of the subset, by name. */
export interface SubsetPods {
  workloadSpread: WorkloadSpreadRef;
  subset: string;
  count: number;
}

export type PodChoice = { by: 'name'; namespace: string; name: string } | ({ by: 'subset' } & SubsetPods);

export type StepAction =
  | { action: 'scale'; target: ObjectRef; replicas: number }
  | { action: 'apply'; object: KubeObject }
  | { action: 'patch'; target: ObjectRef; patch: unknown; patchType: 'merge' | 'strategic' | 'json' }
  | { action: 'delete'; target: ObjectRef }
  | { action: 'delete'; pods: SubsetPods }
  | { action: 'evict'; pods: PodChoice }
  | DrainAction
  | { action: 'cordon' | 'uncordon' | 'deleteNode'; node: string }
  | { action: 'addNodes'; nodes: NodeSpec[] }
  | { action: 'taint'; node: string; taint: Taint }
  | { action: 'untaint'; node: string; key: string; effect?: string }
  | { action: 'rollout'; target: ObjectRef }
  | CreatePodsAction
  | { action: 'advance'; ms: number }
  | { action: 'settle'; timeoutMs: number }
  | { action: 'expect'; expect: ExpectSpec };

export type ActionName = StepAction['action'];

export type SettlePolicy = { settle: false } | { settle: true; timeoutMs: number };

export interface Step {
  /** Position in `steps` (0-based, as in `steps[3]`). */
  index: number;
  action: StepAction;
  /** What happens after the action. */
  after: SettlePolicy;
  /** The action must fail (true), or fail with a message containing this text. */
  expectFailure?: true | string;
  description?: string;
}

/** What step parsers need to know about the rest of the scenario. */
export interface ParseContext {
  /** kind → apiVersion, for references that give only a kind (built-ins, WorkloadSpread, the scenario's own objects). */
  kinds: ReadonlyMap<string, string>;
  /** Kinds served without a namespace. */
  clusterScoped: ReadonlySet<string>;
  /** Every WorkloadSpread the scenario creates (objects and apply steps). */
  workloadSpreads: readonly WorkloadSpreadRef[];
  /** Reads node specs (shared with the top-level `nodes`). */
  readNodes(value: unknown, path: string, problems: Problems): NodeSpec[] | undefined;
  /** Reads a Kubernetes object (shared with `objects`). */
  readObject(value: unknown, path: string, problems: Problems): KubeObject | undefined;
}

interface ActionDefinition {
  /** Settle after this action unless the step says otherwise. */
  settles: boolean;
  parse(value: unknown, path: string, ctx: ParseContext, problems: Problems): StepAction | undefined;
}

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

/** The built-in kinds a reference may name without an apiVersion. */
export function builtinKinds(): Map<string, string> {
  const kinds = new Map<string, string>();
  for (const ref of Object.values(BUILTIN)) if (!kinds.has(ref.kind)) kinds.set(ref.kind, apiVersionOf(ref));
  kinds.set(WS_KIND, WS_API_VERSION);
  kinds.set(DDB_KIND, DDB_API_VERSION);
  return kinds;
}

export function builtinClusterScoped(): Set<string> {
  const out = new Set<string>(['ClusterRole', 'ClusterRoleBinding', 'PersistentVolume', 'StorageClass']);
  for (const ref of Object.values(BUILTIN)) if (!ref.namespaced) out.add(ref.kind);
  return out;
}

/** `{kind, name, namespace?, apiVersion?}` → a reference, the apiVersion filled in from the kind. */
function readObjectRef(map: Record<string, unknown>, path: string, ctx: ParseContext, problems: Problems, extra: readonly string[] = []): ObjectRef | undefined {
  rejectUnknownKeys(map, ['apiVersion', 'kind', 'name', 'namespace', ...extra], path, problems);
  const kind = readString(map['kind'], child(path, 'kind'), problems);
  const name = readString(map['name'], child(path, 'name'), problems);
  const namespace = map['namespace'] === undefined ? 'default' : readString(map['namespace'], child(path, 'namespace'), problems);
  let apiVersion: string | undefined;
  if (map['apiVersion'] !== undefined) apiVersion = readString(map['apiVersion'], child(path, 'apiVersion'), problems);
  else if (kind !== undefined) {
    apiVersion = ctx.kinds.get(kind);
    if (apiVersion === undefined) problems.add(child(path, 'kind'), `unknown kind ${JSON.stringify(kind)}: give its apiVersion too`);
  }
  if (kind === undefined || name === undefined || namespace === undefined || apiVersion === undefined) return undefined;
  return { apiVersion, kind, name, namespace: ctx.clusterScoped.has(kind) ? '' : namespace };
}

/** `workloadSpread: name` (or `namespace/name`), defaulting to the scenario's only WorkloadSpread. */
export function readWorkloadSpreadRef(value: unknown, path: string, ctx: ParseContext, problems: Problems): WorkloadSpreadRef | undefined {
  if (value === undefined) {
    const only = ctx.workloadSpreads.length === 1 ? ctx.workloadSpreads[0] : undefined;
    if (only !== undefined) return only;
    problems.add(path, ctx.workloadSpreads.length === 0 ? 'the scenario creates no WorkloadSpread' : `required: the scenario has ${ctx.workloadSpreads.length} WorkloadSpreads (${ctx.workloadSpreads.map((w) => `${w.namespace}/${w.name}`).join(', ')})`);
    return undefined;
  }
  const text = readString(value, path, problems);
  if (text === undefined) return undefined;
  const slash = text.indexOf('/');
  const ref = slash < 0 ? { namespace: 'default', name: text } : { namespace: text.slice(0, slash), name: text.slice(slash + 1) };
  if (!ctx.workloadSpreads.some((w) => w.namespace === ref.namespace && w.name === ref.name)) {
    problems.add(path, `the scenario creates no WorkloadSpread ${ref.namespace}/${ref.name}`);
    return undefined;
  }
  return ref;
}

function readSubsetPods(map: Record<string, unknown>, path: string, ctx: ParseContext, problems: Problems): SubsetPods | undefined {
  const ws = readWorkloadSpreadRef(map['workloadSpread'], child(path, 'workloadSpread'), ctx, problems);
  const subset = readString(map['subset'], child(path, 'subset'), problems);
  const count = map['count'] === undefined ? 1 : readNonNegativeInt(map['count'], child(path, 'count'), problems);
  if (ws === undefined || subset === undefined || count === undefined) return undefined;
  return { workloadSpread: ws, subset, count };
}

function readNodeName(value: unknown, path: string, problems: Problems): string | undefined {
  if (isPlainObject(value) && Object.keys(value).length === 1 && typeof value['node'] === 'string') return readString(value['node'], child(path, 'node'), problems);
  return readString(value, path, problems);
}

function readTaint(map: Record<string, unknown>, path: string, problems: Problems, needEffect: boolean): { key?: string; value?: string; effect?: string } {
  const key = readString(map['key'], child(path, 'key'), problems);
  const out: { key?: string; value?: string; effect?: string } = {};
  if (key !== undefined) out.key = key;
  if (map['value'] !== undefined) {
    const value = readString(map['value'], child(path, 'value'), problems, { nonEmpty: false });
    if (value !== undefined) out.value = value;
  }
  if (map['effect'] !== undefined || needEffect) {
    const effect = readString(map['effect'], child(path, 'effect'), problems);
    if (effect !== undefined && !(TAINT_EFFECTS as readonly string[]).includes(effect)) problems.add(child(path, 'effect'), `must be one of ${TAINT_EFFECTS.join(', ')}, not ${JSON.stringify(effect)}`);
    else if (effect !== undefined) out.effect = effect;
  }
  return out;
}

const nodeAction = (action: 'cordon' | 'uncordon' | 'deleteNode'): ActionDefinition => ({
  settles: true,
  parse: (value, path, _ctx, problems) => {
    const node = readNodeName(value, path, problems);
    return node === undefined ? undefined : { action, node };
  },
});

/** Every action a step can take. */
export const ACTIONS: Readonly<Record<ActionName, ActionDefinition>> = {
  scale: {
    settles: true,
    parse: (value, path, ctx, problems) => {
      const map = readMapping(value, path, problems);
      if (map === undefined) return undefined;
      const target = readObjectRef(map, path, ctx, problems, ['replicas']);
      const replicas = boundedReplicas(map['replicas'], child(path, 'replicas'), problems);
      return target === undefined || replicas === undefined ? undefined : { action: 'scale', target, replicas };
    },
  },
  apply: {
    settles: true,
    parse: (value, path, ctx, problems) => {
      const object = ctx.readObject(value, path, problems);
      return object === undefined ? undefined : { action: 'apply', object };
    },
  },
  patch: {
    settles: true,
    parse: (value, path, ctx, problems) => {
      const map = readMapping(value, path, problems);
      if (map === undefined) return undefined;
      const target = readObjectRef(map, path, ctx, problems, ['patch', 'type']);
      const type = map['type'] === undefined ? 'merge' : map['type'];
      if (type !== 'merge' && type !== 'strategic' && type !== 'json') {
        problems.add(child(path, 'type'), `must be merge, strategic or json, not ${describeType(type)}`);
        return undefined;
      }
      const patch = map['patch'];
      if (type === 'json' ? !Array.isArray(patch) : !isPlainObject(patch)) {
        problems.add(child(path, 'patch'), type === 'json' ? 'must be a list of JSON Patch operations' : `must be a mapping (a ${type} patch), not ${describeType(patch)}`);
        return undefined;
      }
      if (Array.isArray(patch)) {
        patch.forEach((op, i) => {
          const field = isPlainObject(op) && typeof op['path'] === 'string' ? REPLICA_FIELDS.find((f) => op['path'] === `/spec/${f}`) : undefined;
          if (field !== undefined && typeof (op as Record<string, unknown>)['value'] === 'number') boundedReplicas((op as Record<string, unknown>)['value'], child(item(child(path, 'patch'), i), 'value'), problems);
        });
      } else checkReplicaFields(patch, child(path, 'patch'), problems);
      return target === undefined ? undefined : { action: 'patch', target, patch, patchType: type };
    },
  },
  delete: {
    settles: true,
    parse: (value, path, ctx, problems) => {
      const map = readMapping(value, path, problems);
      if (map === undefined) return undefined;
      if (map['subset'] !== undefined || map['count'] !== undefined) {
        rejectUnknownKeys(map, ['kind', 'subset', 'count', 'workloadSpread'], path, problems);
        if (map['kind'] !== 'Pod') problems.add(child(path, 'kind'), 'must be Pod when pods are chosen by subset');
        const pods = readSubsetPods(map, path, ctx, problems);
        return pods === undefined ? undefined : { action: 'delete', pods };
      }
      const target = readObjectRef(map, path, ctx, problems);
      return target === undefined ? undefined : { action: 'delete', target };
    },
  },
  evict: {
    settles: true,
    parse: (value, path, ctx, problems) => {
      const map = readMapping(value, path, problems);
      if (map === undefined) return undefined;
      if (map['pod'] !== undefined) {
        rejectUnknownKeys(map, ['pod', 'namespace'], path, problems);
        const name = readString(map['pod'], child(path, 'pod'), problems);
        const namespace = map['namespace'] === undefined ? 'default' : readString(map['namespace'], child(path, 'namespace'), problems);
        return name === undefined || namespace === undefined ? undefined : { action: 'evict', pods: { by: 'name', name, namespace } };
      }
      if (map['subset'] === undefined) {
        problems.add(path, 'needs pod (a pod name) or subset (and count)');
        return undefined;
      }
      rejectUnknownKeys(map, ['subset', 'count', 'workloadSpread'], path, problems);
      const pods = readSubsetPods(map, path, ctx, problems);
      return pods === undefined ? undefined : { action: 'evict', pods: { by: 'subset', ...pods } };
    },
  },
  drain: { settles: true, parse: (value, path, _ctx, problems) => parseDrain(value, path, problems) },
  cordon: nodeAction('cordon'),
  uncordon: nodeAction('uncordon'),
  deleteNode: nodeAction('deleteNode'),
  addNodes: {
    settles: true,
    parse: (value, path, ctx, problems) => {
      const nodes = ctx.readNodes(value, path, problems);
      return nodes === undefined ? undefined : { action: 'addNodes', nodes };
    },
  },
  taint: {
    settles: true,
    parse: (value, path, _ctx, problems) => {
      const map = readMapping(value, path, problems);
      if (map === undefined) return undefined;
      rejectUnknownKeys(map, ['node', 'key', 'value', 'effect'], path, problems);
      const node = readString(map['node'], child(path, 'node'), problems);
      const t = readTaint(map, path, problems, true);
      if (node === undefined || t.key === undefined || t.effect === undefined) return undefined;
      const taint: Taint = { key: t.key, effect: t.effect as Taint['effect'] };
      if (t.value !== undefined) taint.value = t.value;
      return { action: 'taint', node, taint };
    },
  },
  untaint: {
    settles: true,
    parse: (value, path, _ctx, problems) => {
      const map = readMapping(value, path, problems);
      if (map === undefined) return undefined;
      rejectUnknownKeys(map, ['node', 'key', 'effect'], path, problems);
      const node = readString(map['node'], child(path, 'node'), problems);
      const t = readTaint(map, path, problems, false);
      if (node === undefined || t.key === undefined) return undefined;
      return t.effect === undefined ? { action: 'untaint', node, key: t.key } : { action: 'untaint', node, key: t.key, effect: t.effect };
    },
  },
  rollout: {
    settles: true,
    parse: (value, path, ctx, problems) => {
      const map = readMapping(value, path, problems);
      if (map === undefined) return undefined;
      const target = readObjectRef(map, path, ctx, problems);
      return target === undefined ? undefined : { action: 'rollout', target };
    },
  },
  createPods: {
    settles: true,
    parse: (value, path, ctx, problems) => {
      const map = readMapping(value, path, problems);
      if (map === undefined) return undefined;
      rejectUnknownKeys(map, ['owner', 'count', 'template'], path, problems);
      const ownerMap = readMapping(map['owner'], child(path, 'owner'), problems);
      const owner = ownerMap === undefined ? undefined : readObjectRef(ownerMap, child(path, 'owner'), ctx, problems);
      const count = map['count'] === undefined ? 1 : boundedReplicas(map['count'], child(path, 'count'), problems);
      const template = readPodTemplate(map['template'], child(path, 'template'), problems);
      if (owner === undefined || count === undefined || template === undefined) return undefined;
      return { action: 'createPods', owner, count, template };
    },
  },
  advance: {
    settles: false,
    parse: (value, path, _ctx, problems) => {
      const ms = boundedDuration(value, path, problems);
      return ms === undefined ? undefined : { action: 'advance', ms };
    },
  },
  settle: {
    settles: false,
    parse: (value, path, _ctx, problems) => {
      const timeoutMs = readSettleTimeout(value ?? {}, path, problems);
      return timeoutMs === undefined ? undefined : { action: 'settle', timeoutMs };
    },
  },
  expect: {
    settles: false,
    parse: (value, path, ctx, problems) => {
      const expect = parseExpectations(value, path, problems, (v, p) => readWorkloadSpreadRef(v, p, ctx, problems));
      return expect === undefined ? undefined : { action: 'expect', expect };
    },
  },
};

const COMMON_KEYS = ['settle', 'expectFailure', 'description'] as const;

/** `{}` or `{timeout: 10m}` → the timeout in ms. */
function readSettleTimeout(value: unknown, path: string, problems: Problems): number | undefined {
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  rejectUnknownKeys(map, ['timeout'], path, problems);
  if (map['timeout'] === undefined) return DEFAULT_SETTLE_TIMEOUT_MS;
  return boundedDuration(map['timeout'], child(path, 'timeout'), problems);
}

function readAfter(value: unknown, path: string, problems: Problems, byDefault: boolean): SettlePolicy | undefined {
  if (value === undefined) return byDefault ? { settle: true, timeoutMs: DEFAULT_SETTLE_TIMEOUT_MS } : { settle: false };
  if (value === false) return { settle: false };
  if (value === true) return { settle: true, timeoutMs: DEFAULT_SETTLE_TIMEOUT_MS };
  const timeoutMs = readSettleTimeout(value, path, problems);
  return timeoutMs === undefined ? undefined : { settle: true, timeoutMs };
}

/** Reads one step (`steps[i]`). */
export function parseStep(value: unknown, index: number, ctx: ParseContext, problems: Problems): Step | undefined {
  const path = item('steps', index);
  const map = readMapping(value, path, problems);
  if (map === undefined) return undefined;
  const names = Object.keys(ACTIONS) as ActionName[];
  let actionKeys = Object.keys(map).filter((k) => (names as string[]).includes(k) && k !== 'settle');
  // A step whose only action-like key is `settle` is the settle action itself.
  if (actionKeys.length === 0 && map['settle'] !== undefined) actionKeys = ['settle'];
  const unknown = Object.keys(map).filter((k) => !(names as string[]).includes(k) && !(COMMON_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0) rejectUnknownKeys(Object.fromEntries(unknown.map((k) => [k, map[k]])), [...names, ...COMMON_KEYS], path, problems);
  if (actionKeys.length !== 1) {
    problems.add(path, actionKeys.length === 0 ? `needs one action: ${names.join(', ')}` : `has ${actionKeys.length} actions (${actionKeys.join(', ')}); write one step per action`);
    return undefined;
  }
  const name = actionKeys[0] as ActionName;
  const def = ACTIONS[name];
  const action = def.parse(map[name], child(path, name), ctx, problems);
  const isSettleAction = name === 'settle';
  const after = isSettleAction ? ({ settle: false } as const) : readAfter(map['settle'], child(path, 'settle'), problems, def.settles);
  const step: Step | undefined = action === undefined || after === undefined ? undefined : { index, action, after };
  const expectFailure = map['expectFailure'];
  if (expectFailure !== undefined && expectFailure !== false) {
    if (expectFailure !== true && (typeof expectFailure !== 'string' || expectFailure === '')) problems.add(child(path, 'expectFailure'), `must be true or a part of the expected error message, not ${describeType(expectFailure)}`);
    else if (step !== undefined) step.expectFailure = expectFailure;
  }
  if (map['description'] !== undefined) {
    const d = readString(map['description'], child(path, 'description'), problems);
    if (d !== undefined && step !== undefined) step.description = d;
  }
  return step;
}

/** `168h30m` for messages. */
function hoursText(ms: number): string {
  const h = Math.floor(ms / 3600_000);
  const rest = ms - h * 3600_000;
  return rest === 0 ? `${h}h` : `${h}h${durationText(rest)}`;
}

/**
 * The bound on a scenario's total virtual time (MAX_SCENARIO_VIRTUAL_TIME_MS): one problem, at the
 * field of the first step that takes the worst case past it.
 */
export function checkScenarioVirtualTime(steps: readonly Step[], problems: Problems): void {
  let total = DEFAULT_SETTLE_TIMEOUT_MS;
  for (const step of steps) {
    const path = item('steps', step.index);
    const waits: [string, number][] = [];
    const a = step.action;
    if (a.action === 'advance') waits.push([child(path, 'advance'), a.ms]);
    else if (a.action === 'settle') waits.push([child(path, 'settle'), a.timeoutMs]);
    else if (a.action === 'drain') waits.push([child(child(path, 'drain'), 'timeout'), a.timeoutMs]);
    if (step.after.settle) waits.push([child(path, 'settle'), step.after.timeoutMs]);
    for (const [field, ms] of waits) {
      total += ms;
      if (total <= MAX_SCENARIO_VIRTUAL_TIME_MS) continue;
      problems.add(
        field,
        `the scenario may run for more than ${hoursText(MAX_SCENARIO_VIRTUAL_TIME_MS)} (7 days) of virtual time: ${hoursText(total)} by this step, counting the settle after the objects are applied (up to ${durationText(DEFAULT_SETTLE_TIMEOUT_MS)}), every advance and every settle and drain timeout (a step that settles waits up to ${durationText(DEFAULT_SETTLE_TIMEOUT_MS)} by default); shorten the waits or split the scenario`,
      );
      return;
    }
  }
}

export function parseSteps(value: unknown, ctx: ParseContext, problems: Problems): Step[] {
  if (value === undefined || value === null) return [];
  const list = readList(value, 'steps', problems);
  if (list === undefined) return [];
  const steps: Step[] = [];
  list.forEach((v, i) => {
    const step = parseStep(v, i, ctx, problems);
    if (step !== undefined) steps.push(step);
  });
  return steps;
}
