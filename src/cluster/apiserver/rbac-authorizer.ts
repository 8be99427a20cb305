/**
 * kube-apiserver's RBAC authorizer (plugin/pkg/auth/authorizer/rbac) over the stored Roles,
 * ClusterRoles, RoleBindings and ClusterRoleBindings.
 *
 * A request is allowed when a rule of a role bound to the user allows it: ClusterRoleBindings
 * everywhere, RoleBindings in the request's namespace. A binding applies through a `User`
 * subject with the user's name, a `Group` subject among the user's groups, or a `ServiceAccount`
 * subject whose `system:serviceaccount:<ns>:<name>` is the user's name (a RoleBinding's subject
 * without a namespace means the binding's own). A rule allows when the verb, the API group, the
 * resource (`pods`, `pods/eviction`, `*`, `*\/scale`) and — when it lists any — the resource name
 * match, or, for non-resource requests, the verb and the path (`/healthz`, `/apis/*`, `*`).
 * Rules are additive: nothing is denied explicitly. A binding to a missing role contributes
 * nothing, and its error becomes the reason of a denial (`RBAC: clusterrole... not found`), as
 * upstream reports it.
 *
 * Fast on every request: bindings are indexed by subject (user names and group names) and the
 * rules that apply to one (user, groups, namespace) are resolved once; decisions are cached per
 * (user, groups, verb, group, resource, subresource, namespace, name) or path. Any change to an
 * RBAC object drops the index and both caches (the store notifies inside the write, so the next
 * request sees the change).
 */
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { AuthorizationAttributes, Decision } from './authorization-attributes.ts';
import type { UserInfo } from './resource-def.ts';
import type { ObjectStore } from './storage.ts';

const RBAC = 'rbac.authorization.k8s.io';
export const RBAC_STORAGE = {
  roles: `${RBAC}/roles`,
  roleBindings: `${RBAC}/rolebindings`,
  clusterRoles: `${RBAC}/clusterroles`,
  clusterRoleBindings: `${RBAC}/clusterrolebindings`,
} as const;

/** A stored PolicyRule with its lists always present. */
export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

/** One rule that applies to a user, and the binding that grants it (`ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`). */
interface GrantedRule {
  rule: PolicyRule;
  source: string;
}

interface Resolution {
  rules: GrantedRule[];
  /** Roles that bindings name and that do not exist. */
  errors: string[];
}

/** What SelfSubjectRulesReview reports. */
export interface ResolvedRules {
  resourceRules: Record<string, unknown>[];
  nonResourceRules: Record<string, unknown>[];
  incomplete: boolean;
  evaluationError?: string;
}

interface Binding {
  name: string;
  namespace: string;
  roleKind: string;
  roleName: string;
  subjects: { kind: string; name: string; namespace: string }[];
}

interface Index {
  /** ClusterRoleBindings by subject key (`u:<user name>`, `g:<group>`). */
  cluster: Map<string, Binding[]>;
  /** RoleBindings by namespace, then subject key. */
  namespaced: Map<string, Map<string, Binding[]>>;
}

/** Decisions cached at most; the cache starts over when full (names make the key space open-ended). */
const MAX_CACHED_DECISIONS = 50_000;
const MAX_CACHED_RESOLUTIONS = 5_000;

const strings = (v: unknown): string[] => (asArray(v) ?? []).filter((s): s is string => typeof s === 'string');

export function policyRule(raw: unknown): PolicyRule {
  const r = asRecord(raw) ?? {};
  return { verbs: strings(r['verbs']), apiGroups: strings(r['apiGroups']), resources: strings(r['resources']), resourceNames: strings(r['resourceNames']), nonResourceURLs: strings(r['nonResourceURLs']) };
}

export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

function bindingOf(obj: KubeObject, namespace: string): Binding {
  const ref = asRecord(obj['roleRef']) ?? {};
  return {
    name: asString(obj.metadata?.name) ?? '',
    namespace,
    roleKind: asString(ref['kind']) ?? '',
    roleName: asString(ref['name']) ?? '',
    subjects: (asArray(obj['subjects']) ?? []).map((s) => {
      const subject = asRecord(s) ?? {};
      return { kind: asString(subject['kind']) ?? '', name: asString(subject['name']) ?? '', namespace: asString(subject['namespace']) ?? '' };
    }),
  };
}

/** The key a subject is indexed by ('' when it can apply to no one); a ServiceAccount is its user name. */
function subjectKey(subject: Binding['subjects'][number], bindingNamespace: string): string {
  switch (subject.kind) {
    case 'User':
      return `u:${subject.name}`;
    case 'Group':
      return `g:${subject.name}`;
    case 'ServiceAccount': {
      const ns = subject.namespace === '' ? bindingNamespace : subject.namespace;
      return ns === '' ? '' : `u:${serviceAccountUsername(ns, subject.name)}`;
    }
    default:
      return '';
  }
}

function userKeys(user: UserInfo): Set<string> {
  return new Set([`u:${user.username}`, ...user.groups.map((g) => `g:${g}`)]);
}

function describeSubject(subject: Binding['subjects'][number], bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') return `ServiceAccount ${JSON.stringify(`${subject.name}/${subject.namespace === '' ? bindingNamespace : subject.namespace}`)}`;
  return `${subject.kind} ${JSON.stringify(subject.name)}`;
}

function describeBinding(b: Binding, subject: Binding['subjects'][number]): string {
  const kind = b.namespace === '' ? 'ClusterRoleBinding' : 'RoleBinding';
  const name = b.namespace === '' ? b.name : `${b.name}/${b.namespace}`;
  return `${kind} ${JSON.stringify(name)} of ${b.roleKind} ${JSON.stringify(b.roleName)} to ${describeSubject(subject, b.namespace)}`;
}

// ---- rule matching (rbacv1helpers) ----

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === '*' || v === verb);
}

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  return rule.resources.some((r) => r === '*' || r === combined || (subresource !== '' && r === `*/${subresource}`));
}

export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.resourceRequest) {
    return rule.nonResourceURLs.some((u) => u === '*' || u === a.path || (u.endsWith('*') && a.path.startsWith(u.replace(/\*+$/, ''))));
  }
  const combined = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  return (
    rule.apiGroups.some((g) => g === '*' || g === a.group) &&
    resourceMatches(rule, combined, a.subresource) &&
    (rule.resourceNames.length === 0 || rule.resourceNames.includes(a.name))
  );
}

export class RbacAuthorizer {
  readonly #store: ObjectStore;
  #index: Index | undefined;
  readonly #resolutions = new Map<string, Resolution>();
  /** Decisions by user key, then by request. */
  readonly #decisions = new Map<string, Map<string, Decision>>();
  #decisionCount = 0;
  readonly #userKeys = new WeakMap<UserInfo, string>();

  constructor(store: ObjectStore) {
    this.#store = store;
    for (const resource of Object.values(RBAC_STORAGE)) store.watch(resource, undefined, undefined, () => this.#invalidate());
  }

  authorize(a: AuthorizationAttributes): Decision {
    const userKey = this.#userKey(a.user);
    let forUser = this.#decisions.get(userKey);
    if (forUser === undefined) this.#decisions.set(userKey, (forUser = new Map()));
    const key = a.resourceRequest ? `${a.verb}\u0000${a.group}\u0000${a.resource}\u0000${a.subresource}\u0000${a.namespace}\u0000${a.name}` : `${a.verb}\u0000\u0000${a.path}`;
    const cached = forUser.get(key);
    if (cached !== undefined) return cached;
    const decision = this.#decide(a);
    if (++this.#decisionCount > MAX_CACHED_DECISIONS) {
      this.#decisions.clear();
      this.#decisionCount = 1;
      this.#decisions.set(userKey, (forUser = new Map()));
    }
    forUser.set(key, decision);
    return decision;
  }

  /** The cache key of a user (name and groups), remembered per UserInfo object. */
  #userKey(user: UserInfo): string {
    let key = this.#userKeys.get(user);
    if (key === undefined) {
      key = `${user.username}\u0000${user.groups.join('\u0001')}`;
      this.#userKeys.set(user, key);
    }
    return key;
  }

  #decide(a: AuthorizationAttributes): Decision {
    const namespace = a.resourceRequest ? a.namespace : '';
    const resolution = this.#resolve(a.user, namespace);
    for (const granted of resolution.rules) {
      if (ruleAllows(a, granted.rule)) return { allowed: true, reason: `RBAC: allowed by ${granted.source}` };
    }
    return { allowed: false, reason: resolution.errors.length === 0 ? '' : `RBAC: ${aggregate(resolution.errors)}` };
  }

  /** RBAC's RulesFor: every rule that applies to `user` in `namespace` (cluster-wide ones included). */
  rulesFor(user: UserInfo, namespace: string): ResolvedRules {
    const resolution = this.#resolve(user, namespace);
    const resourceRules: Record<string, unknown>[] = [];
    const nonResourceRules: Record<string, unknown>[] = [];
    for (const { rule } of resolution.rules) {
      if (rule.resources.length > 0) {
        const r: Record<string, unknown> = { verbs: rule.verbs };
        if (rule.apiGroups.length > 0) r['apiGroups'] = rule.apiGroups;
        r['resources'] = rule.resources;
        if (rule.resourceNames.length > 0) r['resourceNames'] = rule.resourceNames;
        resourceRules.push(r);
      }
      if (rule.nonResourceURLs.length > 0) nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs });
    }
    const out: ResolvedRules = { resourceRules, nonResourceRules, incomplete: false };
    if (resolution.errors.length > 0) out.evaluationError = aggregate(resolution.errors);
    return out;
  }

  #invalidate(): void {
    this.#index = undefined;
    this.#resolutions.clear();
    this.#decisions.clear();
    this.#decisionCount = 0;
  }

  #resolve(user: UserInfo, namespace: string): Resolution {
    const key = `${this.#userKey(user)}\u0000${namespace}`;
    const cached = this.#resolutions.get(key);
    if (cached !== undefined) return cached;
    const index = (this.#index ??= this.#buildIndex());
    const keys = userKeys(user);
    const resolution: Resolution = { rules: [], errors: [] };
    const visit = (candidates: Map<string, Binding[]> | undefined) => {
      if (candidates === undefined) return;
      const bindings = new Set<Binding>();
      for (const k of keys) for (const b of candidates.get(k) ?? []) bindings.add(b);
      for (const b of [...bindings].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))) {
        const subject = b.subjects.find((s) => keys.has(subjectKey(s, b.namespace)));
        if (subject === undefined) continue;
        const rules = this.#roleRules(b);
        if (typeof rules === 'string') {
          resolution.errors.push(rules);
          continue;
        }
        const source = describeBinding(b, subject);
        for (const rule of rules) resolution.rules.push({ rule, source });
      }
    };
    visit(index.cluster);
    if (namespace !== '') visit(index.namespaced.get(namespace));
    if (this.#resolutions.size >= MAX_CACHED_RESOLUTIONS) this.#resolutions.clear();
    this.#resolutions.set(key, resolution);
    return resolution;
  }

  /** The rules of the role a binding names, or the error upstream reports for it. */
  #roleRules(b: Binding): PolicyRule[] | string {
    if (b.roleKind === 'ClusterRole') {
      const role = this.#store.get(RBAC_STORAGE.clusterRoles, '', b.roleName);
      return role === undefined ? `clusterrole.${RBAC} ${JSON.stringify(b.roleName)} not found` : (asArray(role['rules']) ?? []).map(policyRule);
    }
    if (b.roleKind === 'Role' && b.namespace !== '') {
      const role = this.#store.get(RBAC_STORAGE.roles, b.namespace, b.roleName);
      return role === undefined ? `role.${RBAC} ${JSON.stringify(b.roleName)} not found` : (asArray(role['rules']) ?? []).map(policyRule);
    }
    return `unsupported role reference kind: ${JSON.stringify(b.roleKind)}`;
  }

  #buildIndex(): Index {
    const index: Index = { cluster: new Map(), namespaced: new Map() };
    const add = (into: Map<string, Binding[]>, b: Binding) => {
      for (const s of b.subjects) {
        const k = subjectKey(s, b.namespace);
        if (k === '') continue;
        const list = into.get(k);
        if (list === undefined) into.set(k, [b]);
        else if (!list.includes(b)) list.push(b);
      }
    };
    for (const obj of this.#store.list(RBAC_STORAGE.clusterRoleBindings)) add(index.cluster, bindingOf(obj, ''));
    for (const obj of this.#store.list(RBAC_STORAGE.roleBindings)) {
      const ns = asString(obj.metadata?.namespace) ?? '';
      let forNs = index.namespaced.get(ns);
      if (forNs === undefined) index.namespaced.set(ns, (forNs = new Map()));
      add(forNs, bindingOf(obj, ns));
    }
    return index;
  }
}

/** `utilerrors.NewAggregate(errs).Error()`: one error as is, several in brackets. */
function aggregate(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}
