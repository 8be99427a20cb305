/**
 * What a request asks the authorizer, read as upstream's RequestInfoFactory reads it, and the 403
 * answer when it may not: the attributes of resource and non-resource requests (a list or watch
 * that selects one object with a `metadata.name` field selector is a request for that name, which
 * RBAC checks against `resourceNames`), the well-known users and groups, `forbiddenStatus`
 * worded as kube-apiserver words it.
 */
import { parseFieldSelector } from '../../k8s/field-selector.ts';
import { statusError, type Status } from './errors.ts';
import type { ResourceRequestInfo } from './request-info.ts';
import type { UserInfo } from './resource-def.ts';

/** The group whose members every request is allowed to (upstream's `user.SystemPrivilegedGroup`). */
export const PRIVILEGED_GROUP = 'system:masters';
export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';

export interface ResourceAttributes {
  user: UserInfo;
  verb: string;
  resourceRequest: true;
  /** API group ('' for core). */
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

export interface NonResourceAttributes {
  user: UserInfo;
  /** The HTTP method in lower case (`get`, `post`, ...). */
  verb: string;
  resourceRequest: false;
  path: string;
}

export type AuthorizationAttributes = ResourceAttributes | NonResourceAttributes;

export interface Decision {
  allowed: boolean;
  /** RBAC's reason: which binding allowed it, or why a role could not be read. */
  reason: string;
}

/**
 * The attributes of a resource request. A list or watch without a name in its path that
 * selects `metadata.name=<x>` (and nothing impossible) is authorized as a request for `<x>`.
 */
export function resourceAttributes(user: UserInfo, info: ResourceRequestInfo, query: URLSearchParams): ResourceAttributes {
  let name = info.name;
  if (name === '' && (info.verb === 'list' || info.verb === 'watch')) name = selectedName(query.get('fieldSelector') ?? '');
  return { user, verb: info.verb, resourceRequest: true, group: info.group, version: info.version, resource: info.resource, subresource: info.subresource, namespace: info.namespace, name };
}

/** `fields.Selector.RequiresExactMatch("metadata.name")`, if the name is a valid path segment. */
function selectedName(fieldSelector: string): string {
  if (fieldSelector === '') return '';
  const parsed = parseFieldSelector(fieldSelector);
  if (!parsed.ok) return '';
  const exact = parsed.requirements.find((r) => r.field === 'metadata.name' && r.op === '=');
  const name = exact?.value ?? '';
  return name === '.' || name === '..' || name.includes('/') || name.includes('%') ? '' : name;
}

function qualified(group: string, resource: string): string {
  return group === '' ? resource : `${resource}.${group}`;
}

/** `responsewriters.forbiddenMessage`. */
export function forbiddenMessage(a: AuthorizationAttributes): string {
  const who = JSON.stringify(a.user.username);
  if (!a.resourceRequest) return `User ${who} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  const where = a.namespace === '' ? 'at the cluster scope' : `in the namespace ${JSON.stringify(a.namespace)}`;
  return `User ${who} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.group)} ${where}`;
}

/** The 403 Status kube-apiserver answers (`errors.NewForbidden` of the request's group and resource). */
export function forbiddenStatus(a: AuthorizationAttributes, reason: string): Status {
  const why = reason === '' ? forbiddenMessage(a) : `${forbiddenMessage(a)}: ${reason}`;
  if (!a.resourceRequest) return statusError(403, 'Forbidden', `forbidden: ${why}`, {}, true);
  const subject = a.name === '' ? `${qualified(a.group, a.resource)} is forbidden` : `${qualified(a.group, a.resource)} ${JSON.stringify(a.name)} is forbidden`;
  const details: NonNullable<Status['details']> = {};
  if (a.name !== '') details.name = a.name;
  if (a.group !== '') details.group = a.group;
  details.kind = a.resource;
  return statusError(403, 'Forbidden', `${subject}: ${why}`, details, true);
}
