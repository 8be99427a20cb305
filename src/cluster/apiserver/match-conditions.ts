/**
 * Admission webhooks' `matchConditions` (admissionregistration.k8s.io/v1, GA
 * in Kubernetes 1.30): CEL expressions a request must satisfy for a webhook to
 * be called, compiled and evaluated as kube-apiserver does
 * (k8s.io/apiserver/pkg/admission/plugin/cel, .../webhook/matchconditions),
 * with @marcbachmann/cel-js as the CEL implementation (ADR 0012).
 *
 * - The environment: `object` and `oldObject` (dyn; null when the operation
 *   has none), `request` (kubernetes.AdmissionRequest: kind, resource,
 *   subResource, requestKind, requestResource, requestSubResource, name,
 *   namespace, operation, userInfo, dryRun, options; a field it does not
 *   declare does not compile), `namespaceObject` (null for webhooks; dyn
 *   here, so its fields are not type checked), `authorizer` and `authorizer.requestResource` (the Authz
 *   library over this server's authorizer); optional types, homogeneous
 *   aggregate literals, cross-type numeric comparisons, the strings
 *   extension functions cel-js has.
 * - Compiling (`compileMatchCondition`): parse, type check, and the result
 *   must be exactly bool (`must evaluate to bool but got dyn` otherwise). A
 *   function of a Kubernetes CEL library this server lacks (quantity, url,
 *   ip, cidr, format, sets, regex find, the lists library, some strings
 *   functions) does not compile, with a message naming the library; neither
 *   does a function cel-js adds that Kubernetes does not have (`cel.bind`,
 *   `bytes.hex()`, ...), so what compiles here compiles on a real server.
 *   Errors read like cel-go's: `compilation failed: ERROR: <input>:1:5: ...`
 *   and the line with a caret.
 * - Values: JSON objects are read through read-only views, nothing is
 *   copied: integers are int (int64, as the unstructured conversion gives),
 *   other numbers double, objects maps, arrays lists.
 * - Cost: every evaluated expression node costs one unit. One expression may
 *   spend `PER_CALL_COST_LIMIT` (upstream's PerCallLimit; beyond it
 *   `operation cancelled: actual cost limit exceeded`), all conditions of one
 *   webhook for one request `MATCH_CONDITIONS_COST_BUDGET`
 *   (RuntimeCELCostBudgetMatchConditions). The units approximate cel-go's
 *   (which also weighs string and list sizes); they bound runaway
 *   comprehensions.
 * - Matching (`evaluateMatchConditions`): every condition is evaluated; a
 *   false one skips the webhook (the first false, in order, is reported);
 *   all true calls it; errors and no false leave it to failurePolicy (Fail:
 *   an error, Ignore: skipped), as upstream's matcher.
 *
 * Start with `compileMatchCondition` and `evaluateMatchConditions`.
 */
import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../k8s/name-formats.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { AuthorizationAttributes, Decision } from './authorization-attributes.ts';
import type { UserInfo } from './resource-def.ts';

export const MAX_MATCH_CONDITIONS = 64;
/** celconfig.PerCallLimit: the cost one expression may spend in one evaluation. */
export const PER_CALL_COST_LIMIT = 1_000_000;
/** celconfig.RuntimeCELCostBudgetMatchConditions: the cost of all conditions of one webhook for one request. */
export const MATCH_CONDITIONS_COST_BUDGET = 2_500_000;

const COST_LIMIT_EXCEEDED = 'operation cancelled: actual cost limit exceeded';
const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

export interface MatchConditionSpec {
  name: string;
  expression: string;
}

// ---- values ----

const INT64_BOUND = 2 ** 63;
const refuse = (): boolean => false;
const viewHandler: ProxyHandler<object> = {
  get(target, key, receiver) {
    if (typeof key !== 'string' || !Object.hasOwn(target, key) || (key === 'length' && Array.isArray(target))) return Reflect.get(target, key, receiver);
    return celValue((target as Record<string, unknown>)[key]);
  },
  set: refuse,
  defineProperty: refuse,
  deleteProperty: refuse,
  setPrototypeOf: refuse,
};

/**
 * A JSON value as CEL sees it: integers (within int64) as int (bigint), other
 * numbers as double, objects and arrays as read-only views whose members
 * convert the same way when read.
 */
export function celValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) && v < INT64_BOUND && v >= -INT64_BOUND ? BigInt(v) : v;
  if (v === undefined) return null;
  if (v === null || typeof v !== 'object') return v;
  // A new view per read: short-lived, cheaper than remembering views in a WeakMap.
  return new Proxy(v, viewHandler);
}

// ---- the request (BuildRequestType) ----

/*
 * The request's object types are classes of their own, so cel-js takes the
 * values as they are instead of converting a map on every evaluation. A field
 * left undefined is absent: `has()` is false and reading it fails with
 * `no such key`, as for the unstructured request upstream.
 */
class GroupVersionKindValue {
  constructor(
    readonly group: string,
    readonly version: string,
    readonly kind: string,
  ) {}
}

class GroupVersionResourceValue {
  constructor(
    readonly group: string,
    readonly version: string,
    readonly resource: string,
  ) {}
}

class UserInfoValue {
  username: string | undefined;
  uid: string | undefined;
  groups: unknown;
  extra: unknown;
}

class AdmissionRequestValue {
  kind: GroupVersionKindValue | undefined;
  resource: GroupVersionResourceValue | undefined;
  subResource: string | undefined;
  requestKind: GroupVersionKindValue | undefined;
  requestResource: GroupVersionResourceValue | undefined;
  requestSubResource: string | undefined;
  name: string | undefined;
  namespace: string | undefined;
  operation: string | undefined;
  userInfo: UserInfoValue | undefined;
  dryRun: boolean | undefined;
  options: unknown;
}

function gvkValue(v: unknown): GroupVersionKindValue | undefined {
  const r = v as Record<string, unknown> | null | undefined;
  if (r === null || typeof r !== 'object') return undefined;
  return new GroupVersionKindValue(String(r['group'] ?? ''), String(r['version'] ?? ''), String(r['kind'] ?? ''));
}

function gvrValue(v: unknown): GroupVersionResourceValue | undefined {
  const r = v as Record<string, unknown> | null | undefined;
  if (r === null || typeof r !== 'object') return undefined;
  return new GroupVersionResourceValue(String(r['group'] ?? ''), String(r['version'] ?? ''), String(r['resource'] ?? ''));
}

const optionalString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The `request` variable from AdmissionRequest JSON. */
function requestValue(json: Record<string, unknown>): AdmissionRequestValue {
  const r = new AdmissionRequestValue();
  r.kind = gvkValue(json['kind']);
  r.resource = gvrValue(json['resource']);
  r.subResource = optionalString(json['subResource']);
  r.requestKind = gvkValue(json['requestKind']);
  r.requestResource = gvrValue(json['requestResource']);
  r.requestSubResource = optionalString(json['requestSubResource']);
  r.name = optionalString(json['name']);
  r.namespace = optionalString(json['namespace']);
  r.operation = optionalString(json['operation']);
  const user = json['userInfo'] as Record<string, unknown> | undefined;
  if (user !== null && typeof user === 'object') {
    const u = new UserInfoValue();
    u.username = optionalString(user['username']);
    u.uid = optionalString(user['uid']);
    if (user['groups'] !== undefined) u.groups = celValue(user['groups']);
    if (user['extra'] !== undefined) u.extra = celValue(user['extra']);
    r.userInfo = u;
  }
  if (typeof json['dryRun'] === 'boolean') r.dryRun = json['dryRun'];
  if (json['options'] !== undefined) r.options = celValue(json['options']);
  return r;
}

// ---- the authorizer (library.Authz) ----

/** What the server's authorizer decides (authorization.ts: `system:masters`, then RBAC). */
export type Authorize = (attributes: AuthorizationAttributes) => Decision;

class AuthorizerValue {
  constructor(
    readonly authorize: Authorize,
    readonly user: UserInfo,
    /** Read as `authorizer.requestResource`; the compiler allows it on the `authorizer` variable only. */
    readonly requestResource: ResourceCheckValue | null,
  ) {}
}

class PathCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly path: string,
  ) {}
}

class GroupCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly group: string,
  ) {}
}

class ResourceCheckValue {
  subresource = '';
  namespace = '';
  name = '';
  fieldSelector = '';
  labelSelector = '';
  constructor(
    readonly groupCheck: GroupCheckValue,
    readonly resource: string,
  ) {}

  with(change: Partial<Pick<ResourceCheckValue, 'subresource' | 'namespace' | 'name' | 'fieldSelector' | 'labelSelector'>>): ResourceCheckValue {
    const next = new ResourceCheckValue(this.groupCheck, this.resource);
    Object.assign(next, { subresource: this.subresource, namespace: this.namespace, name: this.name, fieldSelector: this.fieldSelector, labelSelector: this.labelSelector }, change);
    return next;
  }
}

class DecisionValue {
  constructor(
    readonly allowed: boolean,
    readonly reason: string,
  ) {}
}

function resourceCheckDecision(check: ResourceCheckValue, verb: string): DecisionValue {
  const authorizer = check.groupCheck.authorizer;
  // Selectors narrow nothing in RBAC: the attributes carry the resource and name only.
  const d = authorizer.authorize({
    user: authorizer.user,
    verb,
    resourceRequest: true,
    group: check.groupCheck.group,
    version: '*',
    resource: check.resource,
    subresource: check.subresource,
    namespace: check.namespace,
    name: check.name,
  });
  return new DecisionValue(d.allowed, d.reason);
}

/** The authorizer of a service account (serviceaccount.ServiceAccountInfo.UserInfo). */
function serviceAccountUser(namespace: string, name: string): UserInfo {
  return { username: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] };
}

// ---- the environment ----

const TYPE = {
  gvk: 'kubernetes.GroupVersionKind',
  gvr: 'kubernetes.GroupVersionResource',
  userInfo: 'kubernetes.UserInfo',
  request: 'kubernetes.AdmissionRequest',
  authorizer: 'kubernetes.authorization.Authorizer',
  pathCheck: 'kubernetes.authorization.PathCheck',
  groupCheck: 'kubernetes.authorization.GroupCheck',
  resourceCheck: 'kubernetes.authorization.ResourceCheck',
  decision: 'kubernetes.authorization.Decision',
} as const;

function notEmpty(value: string, what: string): void {
  if (value.trim() === '') throw new Error(`${what} must not be empty`);
}

function buildEnvironment(): Environment {
  const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: true, unlistedVariablesAreDyn: false });
  // BuildRequestType (uid, object and oldObject are not part of it).
  env.registerType(TYPE.gvk, { ctor: GroupVersionKindValue, fields: { group: 'string', version: 'string', kind: 'string' } });
  env.registerType(TYPE.gvr, { ctor: GroupVersionResourceValue, fields: { group: 'string', version: 'string', resource: 'string' } });
  env.registerType(TYPE.userInfo, { ctor: UserInfoValue, fields: { username: 'string', uid: 'string', groups: 'list<string>', extra: 'map<string, list<string>>' } });
  env.registerType(TYPE.request, {
    ctor: AdmissionRequestValue,
    fields: {
      kind: TYPE.gvk,
      resource: TYPE.gvr,
      subResource: 'string',
      requestKind: TYPE.gvk,
      requestResource: TYPE.gvr,
      requestSubResource: 'string',
      name: 'string',
      namespace: 'string',
      operation: 'string',
      userInfo: TYPE.userInfo,
      dryRun: 'bool',
      options: 'dyn',
    },
  });
  // library.Authz (and AuthzSelectors): receiver-only types.
  env.registerType(TYPE.resourceCheck, { ctor: ResourceCheckValue, fields: {} });
  env.registerType(TYPE.pathCheck, { ctor: PathCheckValue, fields: {} });
  env.registerType(TYPE.groupCheck, { ctor: GroupCheckValue, fields: {} });
  env.registerType(TYPE.decision, { ctor: DecisionValue, fields: {} });
  env.registerType(TYPE.authorizer, { ctor: AuthorizerValue, fields: { requestResource: TYPE.resourceCheck } });

  env.registerVariable('object', 'dyn');
  env.registerVariable('oldObject', 'dyn');
  env.registerVariable('request', TYPE.request);
  // Upstream declares it as kubernetes.Namespace and binds null for webhooks; as dyn, null behaves
  // the same at run time (has() false, a field an error), but its fields are not type checked.
  env.registerVariable('namespaceObject', 'dyn');
  env.registerVariable('authorizer', TYPE.authorizer);

  env.registerFunction(`${TYPE.authorizer}.path(string): ${TYPE.pathCheck}`, (a: AuthorizerValue, path: string) => {
    notEmpty(path, 'path');
    return new PathCheckValue(a, path);
  });
  env.registerFunction(`${TYPE.authorizer}.group(string): ${TYPE.groupCheck}`, (a: AuthorizerValue, group: string) => new GroupCheckValue(a, group));
  env.registerFunction(`${TYPE.authorizer}.serviceAccount(string, string): ${TYPE.authorizer}`, (a: AuthorizerValue, namespace: string, name: string) => {
    if (isDNS1123Subdomain(name).length > 0) throw new Error('Invalid service account name');
    if (isDNS1123Label(namespace).length > 0) throw new Error('Invalid service account namespace');
    return new AuthorizerValue(a.authorize, serviceAccountUser(namespace, name), null);
  });
  env.registerFunction(`${TYPE.groupCheck}.resource(string): ${TYPE.resourceCheck}`, (g: GroupCheckValue, resource: string) => {
    notEmpty(resource, 'resource');
    return new ResourceCheckValue(g, resource);
  });
  for (const field of ['subresource', 'namespace', 'name', 'fieldSelector', 'labelSelector'] as const) {
    env.registerFunction(`${TYPE.resourceCheck}.${field}(string): ${TYPE.resourceCheck}`, (r: ResourceCheckValue, value: string) => r.with({ [field]: value }));
  }
  env.registerFunction(`${TYPE.resourceCheck}.check(string): ${TYPE.decision}`, (r: ResourceCheckValue, verb: string) => resourceCheckDecision(r, verb));
  env.registerFunction(`${TYPE.pathCheck}.check(string): ${TYPE.decision}`, (p: PathCheckValue, verb: string) => {
    const d = p.authorizer.authorize({ user: p.authorizer.user, verb, resourceRequest: false, path: p.path });
    return new DecisionValue(d.allowed, d.reason);
  });
  env.registerFunction(`${TYPE.decision}.allowed(): bool`, (d: DecisionValue) => d.allowed);
  env.registerFunction(`${TYPE.decision}.reason(): string`, (d: DecisionValue) => d.reason);
  // This server's authorizer does not fail.
  env.registerFunction(`${TYPE.decision}.errored(): bool`, () => false);
  env.registerFunction(`${TYPE.decision}.error(): string`, () => '');
  // The global form of the standard library's matches(), which cel-js has only as a method.
  env.registerFunction('matches(string, string): bool', (s: string, re: string) => {
    try {
      return new RegExp(re).test(s);
    } catch {
      throw new Error(`Invalid regular expression: ${re}`);
    }
  });
  return env;
}

let sharedEnvironment: Environment | undefined;
function environment(): Environment {
  sharedEnvironment ??= buildEnvironment();
  return sharedEnvironment;
}

// ---- the AST (cel-js internals, pinned version) ----

/** What this module reads of a cel-js AST node. */
interface AstNode {
  op: string;
  args: unknown;
  start: number;
  meta: { alternate?: unknown; macro?: unknown };
  evaluate(ev: unknown, ast: unknown, ctx: unknown): unknown;
}

function isAstNode(v: unknown, nodeClass: Function): v is AstNode {
  return v instanceof nodeClass;
}

/** The nodes a node's arguments hold (names, literals and the like are skipped). */
function childNodes(node: AstNode, nodeClass: Function, out: AstNode[] = []): AstNode[] {
  const visit = (v: unknown): void => {
    if (isAstNode(v, nodeClass)) out.push(v);
    else if (Array.isArray(v)) v.forEach(visit);
  };
  visit(node.args);
  return out;
}

/** Functions of Kubernetes' CEL environment that cel-js does not have, and their library. */
const KUBERNETES_ONLY_FUNCTIONS: Record<string, string> = {
  quantity: 'Kubernetes quantity library',
  isQuantity: 'Kubernetes quantity library',
  url: 'Kubernetes URL library',
  isURL: 'Kubernetes URL library',
  ip: 'Kubernetes IP address library',
  isIP: 'Kubernetes IP address library',
  cidr: 'Kubernetes CIDR library',
  isCIDR: 'Kubernetes CIDR library',
  find: 'Kubernetes regex library',
  findAll: 'Kubernetes regex library',
  isSorted: 'Kubernetes lists library',
  sum: 'Kubernetes lists library',
  min: 'Kubernetes lists library',
  max: 'Kubernetes lists library',
  charAt: 'CEL strings extension',
  replace: 'CEL strings extension',
  format: 'CEL strings extension',
  ofNonZeroValue: 'CEL optional types library',
};

/** Receivers that name a Kubernetes CEL library (`sets.contains(...)`, `format.dns1123Label()`). */
const KUBERNETES_ONLY_NAMESPACES: Record<string, string> = {
  sets: 'CEL sets extension',
  strings: 'CEL strings extension',
  format: 'Kubernetes format library',
};

/** Methods cel-js has that Kubernetes' environment does not declare. */
const CEL_JS_ONLY_METHODS = new Set(['at', 'base64', 'hex', 'json', 'string', 'bind']);

interface CompileProblem {
  summary: string;
  start: number;
}

/** The first thing (by position) the expression may not call or select here; undefined when nothing. */
function unsupportedUse(root: AstNode, nodeClass: Function): CompileProblem | undefined {
  let first: CompileProblem | undefined;
  const report = (summary: string, start: number): void => {
    if (first === undefined || start < first.start) first = { summary, start };
  };
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop() as AstNode;
    stack.push(...childNodes(node, nodeClass));
    const args = node.args as unknown[];
    if (node.op === 'call' && typeof args[0] === 'string') {
      const library = KUBERNETES_ONLY_FUNCTIONS[args[0]];
      if (library !== undefined) report(`function '${args[0]}' of the ${library} is not supported by the embedded API server`, node.start);
    }
    if (node.op === 'rcall' && typeof args[0] === 'string') {
      const receiver = args[1];
      const receiverName = isAstNode(receiver, nodeClass) && receiver.op === 'id' && typeof receiver.args === 'string' ? receiver.args : undefined;
      const namespace = receiverName === undefined ? undefined : KUBERNETES_ONLY_NAMESPACES[receiverName];
      const library = KUBERNETES_ONLY_FUNCTIONS[args[0]];
      if (namespace !== undefined) report(`function '${receiverName}.${args[0]}' of the ${namespace} is not supported by the embedded API server`, node.start);
      else if (library !== undefined) report(`function '${args[0]}' of the ${library} is not supported by the embedded API server`, node.start);
      else if (CEL_JS_ONLY_METHODS.has(args[0])) report(`undeclared reference to '${args[0]}' (in container '')`, node.start);
    }
    // `authorizer.requestResource` is a variable of its own upstream, not a field of every authorizer.
    if ((node.op === '.' || node.op === '.?') && args[1] === 'requestResource') {
      const receiver = args[0];
      if (!(isAstNode(receiver, nodeClass) && receiver.op === 'id' && receiver.args === 'authorizer')) report(`type '${TYPE.authorizer}' does not support field selection`, node.start);
    }
  }
  return first;
}

/** The meter of the evaluation running now (evaluation is synchronous). */
interface Meter {
  used: number;
  limit: number;
  exceeded: boolean;
}
let activeMeter: Meter | undefined;
const costExceeded = new Error(COST_LIMIT_EXCEEDED);

/**
 * Makes every node of a checked expression charge one unit to the active
 * meter before it evaluates. A node resolves its evaluation on first use and
 * stores it on itself; the wrapper lets it, then puts itself back in front.
 * Returns how many nodes it wrapped.
 */
function meterNodes(root: AstNode, nodeClass: Function): number {
  const seen = new Set<unknown>();
  let wrapped = 0;
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) {
      v.forEach(visit);
      return;
    }
    if (isAstNode(v, nodeClass)) {
      wrap(v);
      visit(v.args);
      visit(v.meta.alternate);
      visit(v.meta.macro);
      return;
    }
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) return;
    for (const value of Object.values(v as Record<string, unknown>)) visit(value);
  };
  const wrap = (node: AstNode): void => {
    const first = Object.getPrototypeOf(node).evaluate as AstNode['evaluate'];
    let resolved: AstNode['evaluate'] | undefined;
    const metered = function (this: AstNode, ev: unknown, ast: unknown, ctx: unknown): unknown {
      const meter = activeMeter;
      if (meter !== undefined && ++meter.used > meter.limit) {
        meter.exceeded = true;
        throw costExceeded;
      }
      if (resolved !== undefined) return resolved.call(node, ev, ast, ctx);
      try {
        return first.call(node, ev, ast, ctx);
      } finally {
        resolved = node.evaluate === metered ? undefined : node.evaluate;
        node.evaluate = metered;
      }
    };
    node.evaluate = metered;
    wrapped++;
  };
  visit(root);
  return wrapped;
}

// ---- compiling ----

/** A compiled condition: evaluates with an activation and a cost limit. */
export interface CompiledExpression {
  readonly expression: string;
  /** The variables it reads (`request` and `authorizer` are built only when read). */
  readonly reads: ReadonlySet<string>;
  evaluate(activation: Record<string, unknown>, costLimit: number): Evaluation;
}

/** The identifiers an expression names (variables, iteration variables and namespaces alike). */
function identifiers(root: AstNode, nodeClass: Function): Set<string> {
  const out = new Set<string>();
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop() as AstNode;
    if (node.op === 'id' && typeof node.args === 'string') out.add(node.args);
    stack.push(...childNodes(node, nodeClass));
  }
  return out;
}

export type Evaluation = { ok: true; value: boolean; cost: number } | { ok: false; error: string; cost: number };

export type CompileResult = { ok: true; compiled: CompiledExpression } | { ok: false; error: string };

/** cel-go's issue text: `ERROR: <input>:line:column: message`, the line, a caret under the column. */
function issueText(expression: string, problem: CompileProblem): string {
  const before = expression.slice(0, Math.max(0, Math.min(problem.start, expression.length)));
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = before.length - lineStart + 1;
  const text = expression.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${column}: ${problem.summary}\n | ${text}\n | ${'.'.repeat(column - 1)}^`;
}

/** A cel-js error as a compile problem, in cel-go's words where they differ. */
function problemOf(err: unknown): CompileProblem {
  const e = err as { summary?: unknown; message?: unknown; range?: { start?: unknown } };
  let summary = typeof e.summary === 'string' ? e.summary : String(e.message ?? err);
  const unknownVariable = /^Unknown variable: (.*)$/.exec(summary);
  if (unknownVariable !== null) summary = `undeclared reference to '${unknownVariable[1]}' (in container '')`;
  const undefinedField = /^No such key: (.*)$/.exec(summary);
  if (undefinedField !== null) summary = `undefined field '${undefinedField[1]}'`;
  // cel-js has indexOf/lastIndexOf for strings only; on lists they come from the Kubernetes lists library.
  const listFunction = /^found no matching overload for 'list(?:<[^']*>)?\.(indexOf|lastIndexOf)\(/.exec(summary);
  if (listFunction !== null) summary = `function '${listFunction[1]}' of the ${KUBERNETES_ONLY_FUNCTIONS['isSorted']} is not supported by the embedded API server`;
  return { summary, start: typeof e.range?.start === 'number' ? e.range.start : 0 };
}

/** cel-js type names as cel-go prints them. */
function celGoTypeName(type: string): string {
  if (type === 'list') return 'list(dyn)';
  if (type === 'map') return 'map(dyn, dyn)';
  if (type === 'null') return 'null_type';
  return type.replace(/optional</g, 'optional_type<').replace(/</g, '(').replace(/>/g, ')');
}

/** A runtime error in cel-go's words where they differ. */
function runtimeMessage(err: unknown): string {
  const e = err as { summary?: unknown; message?: unknown };
  const text = typeof e.summary === 'string' ? e.summary : typeof e.message === 'string' ? e.message.split('\n')[0] ?? '' : String(err);
  const noSuchKey = /^No such key: (.*)$/.exec(text);
  return noSuchKey !== null ? `no such key: ${noSuchKey[1]}` : text;
}

class Program implements CompiledExpression {
  constructor(
    readonly expression: string,
    readonly reads: ReadonlySet<string>,
    private readonly run: ParseResult,
  ) {}

  evaluate(activation: Record<string, unknown>, costLimit: number): Evaluation {
    const meter: Meter = { used: 0, limit: costLimit, exceeded: false };
    const outer = activeMeter;
    activeMeter = meter;
    try {
      const value: unknown = this.run(activation);
      // A quantifier may have absorbed the cost error of an iteration: the meter remembers.
      if (meter.exceeded) return { ok: false, error: COST_LIMIT_EXCEEDED, cost: meter.used };
      if (typeof value !== 'boolean') return { ok: false, error: `no such overload: expected bool, got ${typeof value}`, cost: meter.used };
      return { ok: true, value, cost: meter.used };
    } catch (err) {
      return { ok: false, error: meter.exceeded ? COST_LIMIT_EXCEEDED : runtimeMessage(err), cost: meter.used };
    } finally {
      activeMeter = outer;
    }
  }
}

/**
 * CompileCELExpression for a match condition: the error is the detail
 * upstream's validation reports (`compilation failed: ...`, or
 * `must evaluate to bool but got <type>`).
 */
export function compileMatchCondition(expression: string): CompileResult {
  const env = environment();
  let parsed: ParseResult;
  try {
    parsed = env.parse(expression);
  } catch (err) {
    return { ok: false, error: `compilation failed: ${issueText(expression, problemOf(err))}` };
  }
  const root = parsed.ast as unknown as AstNode;
  const nodeClass = Object.getPrototypeOf(root).constructor as Function;
  const unsupported = unsupportedUse(root, nodeClass);
  if (unsupported !== undefined) return { ok: false, error: `compilation failed: ${issueText(expression, unsupported)}` };
  const checked = parsed.check();
  if (!checked.valid) return { ok: false, error: `compilation failed: ${issueText(expression, problemOf(checked.error))}` };
  if (checked.type !== 'bool') return { ok: false, error: `must evaluate to bool but got ${celGoTypeName(checked.type ?? 'dyn')}` };
  const reads = identifiers(root, nodeClass);
  if (meterNodes(root, nodeClass) === 0) throw new Error('cel-js AST not recognized: cannot meter the cost of match conditions');
  return { ok: true, compiled: new Program(expression, reads, parsed) };
}

// ---- matching ----

/** The compiled conditions of one webhook (compiled once per configuration version). */
export interface CompiledMatchConditions {
  conditions: { name: string; expression: string; result: CompileResult }[];
  readsRequest: boolean;
  readsAuthorizer: boolean;
}

export function compileMatchConditions(specs: readonly MatchConditionSpec[]): CompiledMatchConditions {
  const conditions = specs.map((s) => ({ name: s.name, expression: s.expression, result: compileMatchCondition(s.expression) }));
  const reads = (name: string) => conditions.some((c) => c.result.ok && c.result.compiled.reads.has(name));
  return { conditions, readsRequest: reads('request'), readsAuthorizer: reads('authorizer') };
}

/** What a request carries into the conditions. */
export interface MatchConditionInput {
  /** The objects as the webhook would receive them (undefined: null in CEL). */
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
  /** The `request` variable: AdmissionRequest as JSON, without uid, object and oldObject (built when read). */
  request: () => Record<string, unknown>;
  user: UserInfo;
  /** What `authorizer.requestResource` checks. */
  requestResource: { group: string; resource: string; subresource: string; namespace: string; name: string };
  authorize: Authorize;
}

export type MatchOutcome = { kind: 'call' } | { kind: 'skip'; failedCondition?: string } | { kind: 'error'; message: string };

function activationOf(compiled: CompiledMatchConditions, input: MatchConditionInput): Record<string, unknown> {
  const activation: Record<string, unknown> = { object: celValue(input.object ?? null), oldObject: celValue(input.oldObject ?? null), namespaceObject: null };
  if (compiled.readsRequest) activation['request'] = requestValue(input.request());
  if (compiled.readsAuthorizer) {
    const authorizer = new AuthorizerValue(input.authorize, input.user, null);
    const rr = input.requestResource;
    const requestResource = new ResourceCheckValue(new GroupCheckValue(authorizer, rr.group), rr.resource).with({ subresource: rr.subresource, namespace: rr.namespace, name: rr.name });
    activation['authorizer'] = new AuthorizerValue(input.authorize, input.user, requestResource);
  }
  return activation;
}

/** utilerrors.NewAggregate(...).Error(): one message as is, several (deduplicated) in brackets. */
function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}

/**
 * matchconditions.matcher.Match: evaluates every condition (within the cost
 * budget), then decides: a false condition skips the webhook, errors without
 * a false one follow the failure policy, otherwise the webhook is called.
 */
export function evaluateMatchConditions(compiled: CompiledMatchConditions, input: MatchConditionInput, failurePolicy: 'Fail' | 'Ignore'): MatchOutcome {
  const activation = activationOf(compiled, input);
  let remaining = MATCH_CONDITIONS_COST_BUDGET;
  const results: { name: string; value?: boolean; error?: string }[] = [];
  for (const c of compiled.conditions) {
    if (!c.result.ok) {
      results.push({ name: c.name, error: `compilation error: ${c.result.error}` });
      continue;
    }
    const evaluation = c.result.compiled.evaluate(activation, PER_CALL_COST_LIMIT);
    if (evaluation.cost > remaining) return failurePolicy === 'Fail' ? { kind: 'error', message: OUT_OF_BUDGET } : { kind: 'skip' };
    remaining -= evaluation.cost;
    results.push(evaluation.ok ? { name: c.name, value: evaluation.value } : { name: c.name, error: `expression '${c.expression}' resulted in error: ${evaluation.error}` });
  }
  const errors: string[] = [];
  for (const r of results) {
    if (r.error !== undefined) errors.push(r.error);
    if (r.value === false) return { kind: 'skip', failedCondition: r.name };
  }
  if (errors.length > 0) return failurePolicy === 'Fail' ? { kind: 'error', message: aggregate(errors) } : { kind: 'skip' };
  return { kind: 'call' };
}
