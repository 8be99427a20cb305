/**
 * "Who am I and what may I do": the create-only review resources, answered from the server's own
 * authorizer (authorization.ts: `system:masters`, then RBAC), so they tell the truth about it.
 *
 * - `authorization.k8s.io/v1` SelfSubjectAccessReview (`kubectl auth can-i VERB RESOURCE`): may
 *   the requesting user do this? SubjectAccessReview: may the user, groups, uid and extra of its
 *   spec do it (taken as given: no group is added)? LocalSubjectAccessReview: the same in the
 *   namespace of the request, which the spec's resource namespace must name.
 *   `status.allowed` with RBAC's reason (`RBAC: allowed by ClusterRoleBinding "x" of ...`);
 *   `denied` is never set, as RBAC never denies, it only does not allow;
 * - SelfSubjectRulesReview (`kubectl auth can-i --list`): the RBAC rules that apply to the user in
 *   a namespace (cluster-wide ones included); a binding to a missing role shows as
 *   `evaluationError`;
 * - `authentication.k8s.io/v1` SelfSubjectReview (`kubectl auth whoami`).
 * Nothing is stored; the request comes back with its status filled in, as upstream's REST
 * handlers (`rest.Creater` without a store) answer.
 */
import { invalid, root, type FieldError } from '../../k8s/field-errors.ts';
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { AuthorizationAttributes } from './authorization-attributes.ts';
import type { Authorizer } from './authorization.ts';
import { badRequest, fail, invalid as invalidStatus, ok, type Result } from './errors.ts';
import type { RequestContext, ResourceDef, UserInfo } from './resource-def.ts';
import { strategy } from './strategies/base.ts';

const AUTHORIZATION_GROUP = 'authorization.k8s.io';

/** `ValidateSelfSubjectAccessReview` / `ValidateSubjectAccessReview`: exactly one of the two attribute kinds, and for SubjectAccessReview a user or a group. */
function validateAccessReview(obj: KubeObject, kind: 'self' | 'subject' | 'local'): FieldError[] {
  const errs: FieldError[] = [];
  const meta = asRecord(obj.metadata) ?? {};
  const extraMeta = Object.entries(meta).filter(([k, v]) => !(k === 'creationTimestamp' && v === null) && !(kind === 'local' && k === 'namespace'));
  if (extraMeta.length > 0) errs.push(invalid(root('metadata'), meta, 'must be empty'));
  const spec = asRecord(obj['spec']) ?? {};
  const resource = asRecord(spec['resourceAttributes']);
  const nonResource = asRecord(spec['nonResourceAttributes']);
  const path = root('spec');
  if (kind !== 'self' && (asString(spec['user']) ?? '') === '' && (asArray(spec['groups']) ?? []).length === 0) {
    errs.push(invalid(path.child('user'), asString(spec['user']) ?? '', 'at least one of user or group must be specified'));
  }
  if (kind === 'local' && nonResource !== undefined) errs.push(invalid(path.child('nonResourceAttributes'), nonResource, 'disallowed on this kind of request'));
  else if (resource !== undefined && nonResource !== undefined) errs.push(invalid(path.child('nonResourceAttributes'), nonResource, 'cannot be specified in combination with resourceAttributes'));
  if (resource === undefined && nonResource === undefined) errs.push(invalid(path.child('resourceAttributes'), null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (kind === 'local' && resource !== undefined && (asString(resource['namespace']) ?? '') !== (asString(meta['namespace']) ?? '')) {
    errs.push(invalid(path.child('resourceAttributes', 'namespace'), asString(resource['namespace']) ?? '', 'must match metadata.namespace'));
  }
  return errs;
}

/** Upstream serializes the zero ObjectMeta of these answers as `{"creationTimestamp": null}`. */
const ZERO_META = { creationTimestamp: null } as unknown as NonNullable<KubeObject['metadata']>;

function answer(obj: KubeObject, fields: Record<string, unknown>, meta: NonNullable<KubeObject['metadata']> = ZERO_META): KubeObject {
  return { apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '', metadata: meta, ...fields };
}

/** `authorizationutil.ResourceAttributesFrom` / `NonResourceAttributesFrom`. */
function attributesOf(user: UserInfo, spec: Record<string, unknown>): AuthorizationAttributes {
  const s = (r: Record<string, unknown>, k: string) => asString(r[k]) ?? '';
  const resource = asRecord(spec['resourceAttributes']);
  if (resource !== undefined) {
    return {
      user,
      verb: s(resource, 'verb'),
      resourceRequest: true,
      group: s(resource, 'group'),
      version: s(resource, 'version'),
      resource: s(resource, 'resource'),
      subresource: s(resource, 'subresource'),
      namespace: s(resource, 'namespace'),
      name: s(resource, 'name'),
    };
  }
  const nonResource = asRecord(spec['nonResourceAttributes']) ?? {};
  return { user, verb: s(nonResource, 'verb'), resourceRequest: false, path: s(nonResource, 'path') };
}

function status(authorizer: Authorizer, a: AuthorizationAttributes): Record<string, unknown> {
  const decision = authorizer.authorize(a);
  const out: Record<string, unknown> = { allowed: decision.allowed };
  if (decision.reason !== '') out['reason'] = decision.reason;
  return out;
}

/** The user a SubjectAccessReview asks about, as its spec gives it. */
function specUser(spec: Record<string, unknown>): UserInfo {
  const user: UserInfo = { username: asString(spec['user']) ?? '', groups: (asArray(spec['groups']) ?? []).filter((g): g is string => typeof g === 'string') };
  const uid = asString(spec['uid']) ?? '';
  if (uid !== '') user.uid = uid;
  const extra = asRecord(spec['extra']);
  if (extra !== undefined) user.extra = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, (asArray(v) ?? []).filter((x): x is string => typeof x === 'string')]));
  return user;
}

function review(group: string, kind: string, plural: string, namespaced: boolean, create: NonNullable<ResourceDef['virtualCreate']>): ResourceDef {
  return {
    group,
    version: 'v1',
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ['create'],
    subresources: {},
    strategy: strategy(),
    builtin: true,
    virtualCreate: (obj, ctx, namespace) => create({ ...obj, apiVersion: `${group}/v1`, kind }, ctx, namespace),
  };
}

/** The review resources, in upstream's discovery order (authentication before authorization). */
export function accessReviewResources(authorizer: Authorizer): ResourceDef[] {
  const accessReview = (kind: 'self' | 'subject' | 'local', name: string) => (obj: KubeObject, ctx: RequestContext, namespace: string): Result<KubeObject> => {
    if (kind === 'local') {
      if (namespace === '') return fail(badRequest('namespace is required on this type: '));
      const metaNs = asString(asRecord(obj.metadata)?.['namespace']) ?? '';
      if (metaNs !== '' && metaNs !== namespace) return fail(badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`));
      obj = { ...obj, metadata: { ...(asRecord(obj.metadata) ?? {}), namespace } };
    }
    const errs = validateAccessReview(obj, kind);
    if (errs.length > 0) return fail(invalidStatus(name, AUTHORIZATION_GROUP, '', errs));
    const spec = asRecord(obj['spec']) ?? {};
    const user = kind === 'self' ? ctx.user : specUser(spec);
    const meta = kind === 'local' ? ({ namespace, creationTimestamp: null } as unknown as NonNullable<KubeObject['metadata']>) : ZERO_META;
    return ok(answer(obj, { spec: obj['spec'] ?? {}, status: status(authorizer, attributesOf(user, spec)) }, meta));
  };
  const selfSubjectRulesReview = (obj: KubeObject, ctx: RequestContext): Result<KubeObject> => {
    const namespace = asString(asRecord(obj['spec'])?.['namespace']) ?? '';
    if (namespace === '') return fail(badRequest('no namespace on request'));
    return ok(answer(obj, { spec: obj['spec'] ?? {}, status: authorizer.rulesFor(ctx.user, namespace) }));
  };
  const selfSubjectReview = (obj: KubeObject, ctx: RequestContext): Result<KubeObject> => {
    const userInfo: Record<string, unknown> = { username: ctx.user.username };
    if (ctx.user.uid !== undefined) userInfo['uid'] = ctx.user.uid;
    userInfo['groups'] = ctx.user.groups;
    if (ctx.user.extra !== undefined) userInfo['extra'] = ctx.user.extra;
    return ok(answer(obj, { status: { userInfo } }));
  };
  return [
    review('authentication.k8s.io', 'SelfSubjectReview', 'selfsubjectreviews', false, selfSubjectReview),
    review(AUTHORIZATION_GROUP, 'LocalSubjectAccessReview', 'localsubjectaccessreviews', true, accessReview('local', 'LocalSubjectAccessReview')),
    review(AUTHORIZATION_GROUP, 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', false, accessReview('self', 'SelfSubjectAccessReview')),
    review(AUTHORIZATION_GROUP, 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', false, selfSubjectRulesReview),
    review(AUTHORIZATION_GROUP, 'SubjectAccessReview', 'subjectaccessreviews', false, accessReview('subject', 'SubjectAccessReview')),
  ];
}
