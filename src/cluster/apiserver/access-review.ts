/**
 * "Who am I and what may I do": the create-only review resources kubectl's `auth` commands use.
 *
 * - `authorization.k8s.io/v1` SelfSubjectAccessReview (`kubectl auth can-i VERB RESOURCE`) and
 *   SelfSubjectRulesReview (`kubectl auth can-i --list`);
 * - `authentication.k8s.io/v1` SelfSubjectReview (`kubectl auth whoami`).
 *
 * Authorization in the embedded API server: every authenticated request is allowed (its users
 * are the one admin identity of the kubeconfig and what tests configure, all in
 * `system:masters`), i.e. upstream's AlwaysAllow authorizer. RBAC objects are stored, not
 * enforced. The reviews answer from that same authorizer, so they tell the truth about this
 * server: every access review is allowed (no reason, as AlwaysAllow gives none), and the rules
 * review lists `*` on every resource and non-resource URL. Nothing is stored; the request
 * comes back with its status filled in, as upstream's REST handlers (`rest.Creater` without a
 * store) answer.
 */
import { invalid, root, type FieldError } from '../../k8s/field-errors.ts';
import { asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { badRequest, fail, invalid as invalidStatus, ok, type Result } from './errors.ts';
import type { RequestContext, ResourceDef, UserInfo } from './resource-def.ts';
import { strategy } from './strategies/base.ts';

/** The decision of the embedded server's authorizer (AlwaysAllow): allowed, with no reason. */
export function authorize(_user: UserInfo, _attributes: Record<string, unknown>): { allowed: boolean; reason: string } {
  return { allowed: true, reason: '' };
}

/** What `user` may do in `namespace`, as the authorizer's RulesFor lists it. */
export function rulesFor(_user: UserInfo, _namespace: string): { resourceRules: Record<string, unknown>[]; nonResourceRules: Record<string, unknown>[]; incomplete: boolean } {
  return {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  };
}

/** `ValidateSelfSubjectAccessReview`: empty metadata, exactly one of the two attribute kinds. */
function validateAccessReview(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const meta = asRecord(obj.metadata) ?? {};
  if (Object.entries(meta).some(([k, v]) => !(k === 'creationTimestamp' && v === null))) errs.push(invalid(root('metadata'), meta, 'must be empty'));
  const spec = asRecord(obj['spec']) ?? {};
  const resource = asRecord(spec['resourceAttributes']);
  const nonResource = asRecord(spec['nonResourceAttributes']);
  const path = root('spec');
  if (resource !== undefined && nonResource !== undefined) errs.push(invalid(path.child('nonResourceAttributes'), nonResource, 'cannot be specified in combination with resourceAttributes'));
  if (resource === undefined && nonResource === undefined) errs.push(invalid(path.child('resourceAttributes'), null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  return errs;
}

/** Upstream serializes the zero ObjectMeta of these answers as `{"creationTimestamp": null}`. */
const ZERO_META = { creationTimestamp: null } as unknown as NonNullable<KubeObject['metadata']>;

function answer(obj: KubeObject, fields: Record<string, unknown>): KubeObject {
  return { apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '', metadata: ZERO_META, ...fields };
}

function selfSubjectAccessReview(obj: KubeObject, ctx: RequestContext): Result<KubeObject> {
  const errs = validateAccessReview(obj);
  if (errs.length > 0) return fail(invalidStatus('SelfSubjectAccessReview', 'authorization.k8s.io', '', errs));
  const spec = asRecord(obj['spec']) ?? {};
  const decision = authorize(ctx.user, asRecord(spec['resourceAttributes']) ?? asRecord(spec['nonResourceAttributes']) ?? {});
  const status: Record<string, unknown> = { allowed: decision.allowed };
  if (!decision.allowed) status['denied'] = true;
  if (decision.reason !== '') status['reason'] = decision.reason;
  return ok(answer(obj, { spec: obj['spec'] ?? {}, status }));
}

function selfSubjectRulesReview(obj: KubeObject, ctx: RequestContext): Result<KubeObject> {
  const namespace = asString(asRecord(obj['spec'])?.['namespace']) ?? '';
  if (namespace === '') return fail(badRequest('no namespace on request'));
  return ok(answer(obj, { spec: obj['spec'] ?? {}, status: rulesFor(ctx.user, namespace) }));
}

function selfSubjectReview(obj: KubeObject, ctx: RequestContext): Result<KubeObject> {
  const userInfo: Record<string, unknown> = { username: ctx.user.username };
  if (ctx.user.uid !== undefined) userInfo['uid'] = ctx.user.uid;
  userInfo['groups'] = ctx.user.groups;
  if (ctx.user.extra !== undefined) userInfo['extra'] = ctx.user.extra;
  return ok(answer(obj, { status: { userInfo } }));
}

function review(group: string, kind: string, plural: string, create: NonNullable<ResourceDef['virtualCreate']>): ResourceDef {
  return {
    group,
    version: 'v1',
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced: false,
    shortNames: [],
    categories: [],
    verbs: ['create'],
    subresources: {},
    strategy: strategy(),
    builtin: true,
    virtualCreate: (obj, ctx) => create({ ...obj, apiVersion: `${group}/v1`, kind }, ctx),
  };
}

/** The review resources, in upstream's discovery order (authentication before authorization). */
export function accessReviewResources(): ResourceDef[] {
  return [
    review('authentication.k8s.io', 'SelfSubjectReview', 'selfsubjectreviews', selfSubjectReview),
    review('authorization.k8s.io', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', selfSubjectAccessReview),
    review('authorization.k8s.io', 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', selfSubjectRulesReview),
  ];
}
