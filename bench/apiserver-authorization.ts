/**
 * Benchmark: the embedded API server's authorizer (src/cluster/apiserver/authorization.ts), the
 * check every request pays, in-process (no HTTP).
 *
 * Run:  node --import tsx bench/apiserver-authorization.ts [namespaces=1000] [decisions=200000]
 *
 * The store holds the bootstrap roles, the chart's ClusterRole and Role bound to the manager's
 * ServiceAccount, and one Role + RoleBinding (to a user of its own) in each of `namespaces`
 * namespaces. Prints (figures only, no assertions) ns per decision for:
 * - the admin (`system:masters`: allowed before RBAC is asked);
 * - the manager's ServiceAccount patching pods of distinct names (each decision new: the rules
 *   resolved for the user and namespace are reused, the decision cache misses);
 * - the same request again and again (decision cache hits);
 * - the first request after an RBAC object changed (index, rules and decisions rebuilt).
 */
import { Authorizer } from '../src/cluster/apiserver/authorization.ts';
import type { AuthorizationAttributes } from '../src/cluster/apiserver/authorization-attributes.ts';
import { ObjectStore } from '../src/cluster/apiserver/storage.ts';
import { BOOTSTRAP_RBAC } from '../src/cluster/apiserver/strategies/rbac.ts';
import { RBAC_STORAGE } from '../src/cluster/apiserver/rbac-authorizer.ts';
import { managerClusterRules, managerNamespaceRules } from '../src/cli/install-rbac.ts';
import { rbacOptions } from '../src/cli/install-manifests.ts';
import { defaultInstallValues } from '../src/cli/install-values.ts';
import type { KubeObject } from '../src/k8s/types.ts';
import type { UserInfo } from '../src/cluster/apiserver/resource-def.ts';

const NAMESPACES = Number(process.argv[2] ?? 1000);
const DECISIONS = Number(process.argv[3] ?? 200_000);
const RBAC = 'rbac.authorization.k8s.io/v1';
const SA = { kind: 'ServiceAccount', name: 'workloadspread-manager', namespace: 'workloadspread-system' };

const store = new ObjectStore();
const put = (resource: string, obj: KubeObject) => store.create(resource, { ...obj, metadata: { ...obj.metadata, resourceVersion: '' } });
for (const { plural, object } of BOOTSTRAP_RBAC) put(`rbac.authorization.k8s.io/${plural}`, object);
const options = rbacOptions(defaultInstallValues());
put(RBAC_STORAGE.clusterRoles, { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: 'workloadspread-manager' }, rules: managerClusterRules(options) });
put(RBAC_STORAGE.clusterRoleBindings, { apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name: 'workloadspread-manager' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'workloadspread-manager' }, subjects: [SA] });
put(RBAC_STORAGE.roles, { apiVersion: RBAC, kind: 'Role', metadata: { name: 'workloadspread-manager', namespace: 'workloadspread-system' }, rules: managerNamespaceRules(options) });
for (let i = 0; i < NAMESPACES; i++) {
  const namespace = `team-${i}`;
  put(RBAC_STORAGE.roles, { apiVersion: RBAC, kind: 'Role', metadata: { name: 'dev', namespace }, rules: [{ apiGroups: ['', 'apps'], resources: ['pods', 'deployments'], verbs: ['*'] }] });
  put(RBAC_STORAGE.roleBindings, { apiVersion: RBAC, kind: 'RoleBinding', metadata: { name: 'dev', namespace }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'dev' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `dev-${i}` }] });
}
const authorizer = new Authorizer(store);

const admin: UserInfo = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };
const manager: UserInfo = { username: 'system:serviceaccount:workloadspread-system:workloadspread-manager', groups: ['system:serviceaccounts', 'system:serviceaccounts:workloadspread-system', 'system:authenticated'] };
const patchPod = (user: UserInfo, i: number): AuthorizationAttributes => ({ user, verb: 'patch', resourceRequest: true, group: '', version: 'v1', resource: 'pods', subresource: '', namespace: `team-${i % NAMESPACES}`, name: `web-${i}` });

function measure(label: string, n: number, attrs: (i: number) => AuthorizationAttributes, before?: (i: number) => void): void {
  let allowed = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    before?.(i);
    if (authorizer.authorize(attrs(i)).allowed) allowed++;
  }
  const ns = Number(process.hrtime.bigint() - start) / n;
  console.log(`${label.padEnd(58)} ${ns.toFixed(0).padStart(8)} ns/decision  (${allowed}/${n} allowed)`);
}

console.log(`authorizer: ${NAMESPACES} namespaces with a Role and RoleBinding each, the chart's RBAC, ${DECISIONS} decisions per line`);
for (let round = 0; round < 2; round++) {
  console.log(round === 0 ? '(warm-up)' : '(measured)');
  measure('admin (system:masters)', DECISIONS, (i) => patchPod(admin, i));
  measure('manager patches pods, a new name each time', DECISIONS, (i) => patchPod(manager, i));
  measure('manager patches the same pod again', DECISIONS, () => patchPod(manager, 0));
  let rv = 0;
  const touch = () => {
    const cr = store.get(RBAC_STORAGE.clusterRoles, '', 'workloadspread-manager') as KubeObject;
    store.update(RBAC_STORAGE.clusterRoles, { ...cr, metadata: { ...cr.metadata, labels: { touched: String(++rv) } } }, cr.metadata?.resourceVersion ?? '');
  };
  measure('after every RBAC change (index and caches rebuilt)', Math.min(DECISIONS, 2_000), (i) => patchPod(manager, i), touch);
}
