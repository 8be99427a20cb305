/**
 * Strategies of the rbac.authorization.k8s.io/v1 kinds: Role, ClusterRole, RoleBinding and
 * ClusterRoleBinding (k8s.io/kubernetes/pkg/registry/rbac, defaults of pkg/apis/rbac/v1,
 * validation of pkg/apis/rbac/validation), and the RBAC objects every cluster starts with.
 * The API server enforces them (rbac-authorizer.ts). Left out: the escalation checks that
 * refuse an unprivileged user a Role or binding granting more than it holds (the `escalate`
 * and `bind` verbs) — every writer of RBAC objects here is an admin of `system:masters`.
 * ClusterRole aggregation (`aggregationRule`) is filled in by clusterrole-aggregation.ts.
 */
import { invalid, notSupported, required, root, type FieldError, type FieldPath } from '../../../k8s/field-errors.ts';
import { validateLabelSelector, type NameRule } from '../../../k8s/meta-validation.ts';
import { asArray, asRecord, asString } from '../../../k8s/raw-json.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import type { ResourceStrategy } from '../resource-def.ts';
import { strategy } from './base.ts';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** `path.IsValidPathSegmentName`: RBAC names may be anything that fits in one URL path segment. */
export const nameIsPathSegment: NameRule = (name, prefix) => {
  const msgs: string[] = [];
  if (!prefix && (name === '.' || name === '..')) msgs.push(`may not be '${name}'`);
  for (const bad of ['/', '%']) if (name.includes(bad)) msgs.push(`may not contain '${bad}'`);
  return msgs;
};

const strings = (v: unknown): unknown[] => asArray(v) ?? [];

/** `ValidatePolicyRule`. */
function validatePolicyRule(rule: Record<string, unknown>, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (strings(rule['verbs']).length === 0) errs.push(required(path.child('verbs'), 'verbs must contain at least one value'));
  const nonResourceURLs = strings(rule['nonResourceURLs']);
  if (nonResourceURLs.length > 0) {
    if (namespaced) errs.push(invalid(path.child('nonResourceURLs'), nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
    if (strings(rule['apiGroups']).length > 0 || strings(rule['resources']).length > 0 || strings(rule['resourceNames']).length > 0) {
      errs.push(invalid(path.child('nonResourceURLs'), nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }
  if (strings(rule['apiGroups']).length === 0) errs.push(required(path.child('apiGroups'), 'resource rules must supply at least one api group'));
  if (strings(rule['resources']).length === 0) errs.push(required(path.child('resources'), 'resource rules must supply at least one resource'));
  return errs;
}

function validateRules(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  strings(obj['rules']).forEach((r, i) => errs.push(...validatePolicyRule(asRecord(r) ?? {}, namespaced, root('rules').index(i))));
  return errs;
}

function validateAggregationRule(obj: KubeObject): FieldError[] {
  const rule = asRecord(obj['aggregationRule']);
  if (rule === undefined) return [];
  const path = root('aggregationRule', 'clusterRoleSelectors');
  const selectors = strings(rule['clusterRoleSelectors']);
  if (selectors.length === 0) return [required(path, 'at least one clusterRoleSelector required if aggregationRule is non-nil')];
  return selectors.flatMap((s, i) => validateLabelSelector(s, path.index(i)));
}

/** `ValidateRoleBindingSubject`. */
function validateSubject(subject: Record<string, unknown>, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = asString(subject['name']) ?? '';
  const apiGroup = asString(subject['apiGroup']) ?? '';
  const kind = asString(subject['kind']) ?? '';
  if (name === '') errs.push(required(path.child('name')));
  switch (kind) {
    case 'ServiceAccount':
      if (name !== '') for (const msg of serviceAccountNameProblems(name)) errs.push(invalid(path.child('name'), name, msg));
      if (apiGroup !== '') errs.push(notSupported(path.child('apiGroup'), apiGroup, ['']));
      if (!namespaced && (asString(subject['namespace']) ?? '') === '') errs.push(required(path.child('namespace')));
      break;
    case 'User':
    case 'Group':
      if (name === '') errs.push(invalid(path.child('name'), name, `${kind.toLowerCase()} name cannot be empty`));
      if (apiGroup !== RBAC_GROUP) errs.push(notSupported(path.child('apiGroup'), apiGroup, [RBAC_GROUP]));
      break;
    default:
      errs.push(notSupported(path.child('kind'), kind, ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

/** ServiceAccount names are DNS subdomains. */
function serviceAccountNameProblems(name: string): string[] {
  const ok = name.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name);
  return ok ? [] : ["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"];
}

function validateBinding(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = asRecord(obj['roleRef']) ?? {};
  const refPath = root('roleRef');
  const apiGroup = asString(ref['apiGroup']) ?? '';
  if (apiGroup !== RBAC_GROUP) errs.push(notSupported(refPath.child('apiGroup'), apiGroup, [RBAC_GROUP]));
  const kind = asString(ref['kind']) ?? '';
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(kind)) errs.push(notSupported(refPath.child('kind'), kind, kinds));
  const name = asString(ref['name']) ?? '';
  if (name === '') errs.push(required(refPath.child('name')));
  else for (const msg of nameIsPathSegment(name, false)) errs.push(invalid(refPath.child('name'), name, msg));
  strings(obj['subjects']).forEach((s, i) => errs.push(...validateSubject(asRecord(s) ?? {}, namespaced, root('subjects').index(i))));
  return errs;
}

/** v1 defaults: roleRef.apiGroup and the apiGroup of User and Group subjects. */
function defaultBinding(obj: KubeObject): void {
  const ref = asRecord(obj['roleRef']);
  if (ref !== undefined && (asString(ref['apiGroup']) ?? '') === '') ref['apiGroup'] = RBAC_GROUP;
  for (const s of strings(obj['subjects'])) {
    const subject = asRecord(s);
    if (subject === undefined || (asString(subject['apiGroup']) ?? '') !== '') continue;
    if (subject['kind'] === 'User' || subject['kind'] === 'Group') subject['apiGroup'] = RBAC_GROUP;
  }
}

/** The roleRef of a binding cannot change (delete and recreate the binding instead). */
function roleRefUnchanged(obj: KubeObject, old: KubeObject): FieldError[] {
  return JSON.stringify(obj['roleRef'] ?? null) === JSON.stringify(old['roleRef'] ?? null) ? [] : [invalid(root('roleRef'), obj['roleRef'] ?? null, 'cannot change roleRef')];
}

export function roleStrategy(): ResourceStrategy {
  const validate = (obj: KubeObject) => validateRules(obj, true);
  return strategy({ nameRule: nameIsPathSegment, validate, validateUpdate: validate });
}

export function clusterRoleStrategy(): ResourceStrategy {
  const validate = (obj: KubeObject) => [...validateRules(obj, false), ...validateAggregationRule(obj)];
  return strategy({ nameRule: nameIsPathSegment, validate, validateUpdate: validate });
}

export function roleBindingStrategy(namespaced: boolean): ResourceStrategy {
  const validate = (obj: KubeObject) => validateBinding(obj, namespaced);
  return strategy({
    nameRule: nameIsPathSegment,
    applyDefaults: defaultBinding,
    validate,
    validateUpdate: (obj, old) => [...validate(obj), ...roleRefUnchanged(obj, old)],
  });
}

const BOOTSTRAP_META = { labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' }, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } };

function clusterRole(name: string, rules: Record<string, unknown>[]): { plural: string; object: KubeObject } {
  return { plural: 'clusterroles', object: { apiVersion: `${RBAC_GROUP}/v1`, kind: 'ClusterRole', metadata: { name, ...BOOTSTRAP_META }, rules } };
}

function groupBinding(name: string, groups: string[]): { plural: string; object: KubeObject } {
  return {
    plural: 'clusterrolebindings',
    object: {
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name, ...BOOTSTRAP_META },
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name },
      subjects: groups.map((g) => ({ apiGroup: RBAC_GROUP, kind: 'Group', name: g })),
    },
  };
}

const PUBLIC_INFO_URLS = ['/livez', '/readyz', '/healthz', '/version', '/version/'];

/**
 * The RBAC objects every cluster starts with, as kube-apiserver bootstraps them: `cluster-admin`
 * (everything) bound to `system:masters`, which the kubeconfig's admin and the embedded control
 * loops belong to; `system:discovery` (health, version, OpenAPI and API discovery) and
 * `system:basic-user` (the self-reviews behind `kubectl auth can-i` and `auth whoami`) bound to
 * every authenticated user; `system:public-info-viewer` (health and version) bound to everyone,
 * anonymous requests included. (Upstream bootstraps more — admin, edit, view and the roles of
 * its own controllers; they are not created here.)
 */
export const BOOTSTRAP_RBAC: readonly { plural: string; object: KubeObject }[] = [
  clusterRole('cluster-admin', [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
  ]),
  clusterRole('system:discovery', [{ nonResourceURLs: [...PUBLIC_INFO_URLS, '/openapi', '/openapi/*', '/api', '/api/*', '/apis', '/apis/*'], verbs: ['get'] }]),
  clusterRole('system:basic-user', [
    { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
  ]),
  clusterRole('system:public-info-viewer', [{ nonResourceURLs: PUBLIC_INFO_URLS, verbs: ['get'] }]),
  groupBinding('cluster-admin', ['system:masters']),
  groupBinding('system:discovery', ['system:authenticated']),
  groupBinding('system:basic-user', ['system:authenticated']),
  groupBinding('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
];
