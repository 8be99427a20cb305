/**
 * Authorization in the embedded API server, as kube-apiserver's authorizer chain decides it:
 * first the privileged group (`system:masters` may do everything, with no reason given), then
 * RBAC (rbac-authorizer.ts). Nothing else is in the chain: the built-in control loops of the
 * embedded cluster (scheduler, kubelet, workload controllers, garbage collection) and the
 * kubeconfig's admin all authenticate as members of `system:masters`, so the Node authorizer's
 * special cases have no one to serve.
 *
 * `Authorizer.authorize(attributes)` → allowed or not, with RBAC's reason (the attributes and the
 * 403 answer: authorization-attributes.ts).
 */
import { PRIVILEGED_GROUP, type AuthorizationAttributes, type Decision } from './authorization-attributes.ts';
import { RbacAuthorizer, type ResolvedRules } from './rbac-authorizer.ts';
import type { UserInfo } from './resource-def.ts';
import type { ObjectStore } from './storage.ts';

export function isPrivileged(user: UserInfo): boolean {
  return user.groups.includes(PRIVILEGED_GROUP);
}

/** The authorizer chain: privileged group, then RBAC. */
export class Authorizer {
  readonly rbac: RbacAuthorizer;

  constructor(store: ObjectStore) {
    this.rbac = new RbacAuthorizer(store);
  }

  authorize(a: AuthorizationAttributes): Decision {
    if (isPrivileged(a.user)) return { allowed: true, reason: '' };
    return this.rbac.authorize(a);
  }

  /**
   * What `user` may do in `namespace`, as SelfSubjectRulesReview lists it: RBAC's rules only
   * (the privileged group lists nothing upstream either; its members see cluster-admin's `*`).
   */
  rulesFor(user: UserInfo, namespace: string): ResolvedRules {
    return this.rbac.rulesFor(user, namespace);
  }
}
