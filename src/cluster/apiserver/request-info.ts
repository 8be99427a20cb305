/**
 * What a request is about, read from its method, path and query the way
 * k8s.io/apiserver's RequestInfoFactory reads it:
 *
 *   /api/v1[/watch][/namespaces/<ns>]/<resource>[/<name>[/<subresource>]]
 *   /apis/<group>/<version>[/watch][/namespaces/<ns>]/<resource>[/<name>[/<subresource>]]
 *
 * `/api/v1/namespaces/<name>` is the Namespace itself (its `status` and
 * `finalize` subresources too). Anything shorter is discovery or another
 * non-resource path.
 */

export type ResourceVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceRequestInfo {
  kind: 'resource';
  group: string;
  version: string;
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
  verb: ResourceVerb;
}

export interface NonResourceRequestInfo {
  kind: 'nonResource';
  path: string;
}

export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function decodeSegment(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

export function parseRequestInfo(method: string, pathname: string, query: URLSearchParams): RequestInfo {
  const raw = pathname.split('/').filter((p) => p !== '');
  const parts: string[] = [];
  for (const p of raw) {
    const d = decodeSegment(p);
    if (d === undefined) return { kind: 'nonResource', path: pathname };
    parts.push(d);
  }
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1] as string;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] as string;
    version = parts[2] as string;
    rest = parts.slice(3);
  } else {
    return { kind: 'nonResource', path: pathname };
  }
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1] as string;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] as string)) rest = rest.slice(2);
  }
  if (rest.length === 0) return { kind: 'nonResource', path: pathname };
  const resource = rest[0] as string;
  const name = rest[1] ?? '';
  const subresource = rest.slice(2).join('/');
  const watchParam = query.get('watch');
  const isWatch = watchPath || watchParam === 'true' || watchParam === '1';
  let verb: ResourceVerb;
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = isWatch ? 'watch' : name === '' ? 'list' : 'get';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === '' ? 'deletecollection' : 'delete';
      break;
    default:
      verb = 'get';
  }
  return { kind: 'resource', group, version, namespace, resource, name, subresource, verb };
}
