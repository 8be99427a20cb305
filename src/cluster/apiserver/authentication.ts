/**
 * Who a request is, as kube-apiserver's authentication and impersonation filters decide it.
 *
 * `authenticate(req)`:
 * - `Authorization: Bearer <token>` — a static token (the kubeconfig's admin, users tests add)
 *   or a ServiceAccount token this server issued (service-account-tokens.ts). A token neither
 *   knows, or a ServiceAccount token that no longer holds (expired, its ServiceAccount gone), is
 *   401 Unauthorized; it never falls back to anonymous;
 * - no bearer token: `system:anonymous` in `system:unauthenticated` (anonymous requests are on,
 *   as kube-apiserver's default `--anonymous-auth=true`; RBAC then decides what they may do);
 * - every authenticated user is also in `system:authenticated` (unless it names itself
 *   `system:unauthenticated`).
 *
 * `impersonate(req, user)`: the `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
 * `Impersonate-Extra-<key>` headers (kubectl's `--as`, `--as-group`, `--as-uid`) switch the
 * request to another user, each part authorized first with the `impersonate` verb on `users`
 * (or `serviceaccounts` in the account's namespace for `system:serviceaccount:<ns>:<name>`),
 * `groups`, `uids.authentication.k8s.io` and `userextras.authentication.k8s.io/<key>` — a
 * denial is the 403 of that check. Groups not given: a ServiceAccount gets its two groups; any
 * user but `system:anonymous` gets `system:authenticated` (unless the groups already name it or
 * `system:unauthenticated`); `system:anonymous` gets `system:unauthenticated`. Groups, uid or
 * extras without a user are refused (500, as upstream).
 */
import type { IncomingMessage } from 'node:http';
import { internalError, unauthorized, type Status } from './errors.ts';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, forbiddenStatus, UNAUTHENTICATED_GROUP, type ResourceAttributes } from './authorization-attributes.ts';
import type { Authorizer } from './authorization.ts';
import type { UserInfo } from './resource-def.ts';
import type { ServiceAccountTokens } from './service-account-tokens.ts';

export type Authenticated = { ok: true; user: UserInfo } | { ok: false; status: Status };

export const ANONYMOUS: UserInfo = Object.freeze({ username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] }) as UserInfo;

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const EXTRA_PREFIX = 'impersonate-extra-';

export interface AuthenticatorDeps {
  /** Bearer tokens and who they are (read at every request: tokens added later count). */
  tokens: ReadonlyMap<string, UserInfo>;
  serviceAccounts: ServiceAccountTokens;
  authorizer: Authorizer;
}

/** `serviceaccount.SplitUsername`: the namespace and name of `system:serviceaccount:<ns>:<name>`. */
function splitServiceAccount(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined;
  return { namespace: parts[0] as string, name: parts[1] as string };
}

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP) || user.groups.includes(UNAUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

export class Authenticator {
  readonly #deps: AuthenticatorDeps;
  /** Each user with `system:authenticated` added, once per user object (authorization caches by it). */
  readonly #withGroup = new WeakMap<UserInfo, UserInfo>();

  constructor(deps: AuthenticatorDeps) {
    this.#deps = deps;
  }

  authenticate(req: IncomingMessage): Authenticated {
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (m === null) return { ok: true, user: ANONYMOUS };
    const token = m[1] as string;
    const user = this.#deps.tokens.get(token) ?? this.#deps.serviceAccounts.authenticate(token);
    if (user === undefined || user === 'invalid') return { ok: false, status: unauthorized() };
    let complete = this.#withGroup.get(user);
    if (complete === undefined) this.#withGroup.set(user, (complete = withAuthenticatedGroup(user)));
    return { ok: true, user: complete };
  }

  /** The user the request acts as: `user` itself without impersonation headers. */
  impersonate(req: IncomingMessage, user: UserInfo): Authenticated {
    const headers = req.headersDistinct;
    const requestedUser = headers['impersonate-user']?.[0] ?? '';
    const requestedGroups = headers['impersonate-group'] ?? [];
    const requestedUid = headers['impersonate-uid']?.[0] ?? '';
    const extras: [string, string][] = [];
    for (const [name, values] of Object.entries(headers)) {
      if (!name.startsWith(EXTRA_PREFIX) || values === undefined) continue;
      let key = name.slice(EXTRA_PREFIX.length);
      try {
        key = decodeURIComponent(key);
      } catch {
        // Upstream records a malformed key as it came.
      }
      for (const v of values) extras.push([key, v]);
    }
    if (requestedUser === '') {
      if (requestedGroups.length > 0 || requestedUid !== '' || extras.length > 0) {
        return { ok: false, status: internalError('requested impersonation of groups, extra fields or a uid without impersonating a user') };
      }
      return { ok: true, user };
    }
    const check = (attrs: Omit<ResourceAttributes, 'user' | 'verb' | 'resourceRequest' | 'version'> & { version?: string }): Status | undefined => {
      const a: ResourceAttributes = { user, verb: 'impersonate', resourceRequest: true, version: attrs.version ?? 'v1', ...attrs };
      const decision = this.#deps.authorizer.authorize(a);
      return decision.allowed ? undefined : forbiddenStatus(a, decision.reason);
    };
    let groups: string[] = [];
    const account = splitServiceAccount(requestedUser);
    const denied =
      (account !== undefined
        ? check({ group: '', resource: 'serviceaccounts', subresource: '', namespace: account.namespace, name: account.name })
        : check({ group: '', resource: 'users', subresource: '', namespace: '', name: requestedUser })) ??
      requestedGroups.map((g) => check({ group: '', resource: 'groups', subresource: '', namespace: '', name: g })).find((s) => s !== undefined) ??
      extras.map(([k, v]) => check({ group: 'authentication.k8s.io', resource: 'userextras', subresource: k, namespace: '', name: v })).find((s) => s !== undefined) ??
      (requestedUid === '' ? undefined : check({ group: 'authentication.k8s.io', resource: 'uids', subresource: '', namespace: '', name: requestedUid }));
    if (denied !== undefined) return { ok: false, status: denied };
    if (account !== undefined && requestedGroups.length === 0) groups = ['system:serviceaccounts', `system:serviceaccounts:${account.namespace}`];
    groups.push(...requestedGroups);
    if (requestedUser !== ANONYMOUS_USER) {
      if (!groups.includes(AUTHENTICATED_GROUP) && !groups.includes(UNAUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
    } else if (!groups.includes(UNAUTHENTICATED_GROUP)) groups.push(UNAUTHENTICATED_GROUP);
    const acting: UserInfo = { username: requestedUser, groups };
    if (requestedUid !== '') acting.uid = requestedUid;
    if (extras.length > 0) {
      const extra: Record<string, string[]> = {};
      for (const [k, v] of extras) (extra[k] ??= []).push(v);
      acting.extra = extra;
    }
    return { ok: true, user: acting };
  }
}
