/**
 * The manager's identity in the end-to-end tests: the chart's ServiceAccount with exactly the
 * chart's RBAC, so a request the chart does not grant is answered 403 in the tests as it would
 * be in a cluster.
 *
 * `ChartIdentities.tokenFor(settings)` installs, once per distinct set of RBAC options, what the
 * chart installs — a ServiceAccount, a ClusterRole and a Role with the rules of
 * src/cli/install-rbac.ts (`managerClusterRules` / `managerNamespaceRules` of `rbacOptions` of
 * the chart's values: the rules the chart renders, which a test keeps equal to the template),
 * their bindings — and returns a TokenRequest token of that ServiceAccount. The values follow
 * the manager's settings as an installer would set them: leader election on or off, cert-manager
 * (a `certDir`) or the generated Secret, the webhook scope, `rbac.customWorkloads`; a manager
 * with a Lease, Secret or whitelist ConfigMap of another name gets the same rules for that name.
 * The chart's defaults are the ServiceAccount `workloadspread-manager`; other option sets get
 * `workloadspread-manager-<n>` so tests sharing a cluster never widen each other's grants.
 * `ensureWebhookConfigurations()` creates the two webhook configurations as the chart renders
 * them when they are missing: the chart creates them, the manager (without `create` on them)
 * only updates ours.
 *
 * `forbidden()` lists what the API server refused these ServiceAccounts — a test fails on it
 * (manager-bed.ts asserts none when a manager stops and when the cluster stops).
 */
import { connectionFromToken, type Connection } from '../client/config.ts';
import { KubeClient } from '../client/http-client.ts';
import { BUILTIN } from '../client/resources.ts';
import { isNotFound } from '../client/errors.ts';
import type { ForbiddenRequest, EmbeddedCluster } from '../cluster/index.ts';
import type { KubeObject } from '../k8s/types.ts';
import { installObjects, rbacOptions } from '../cli/install-manifests.ts';
import { managerClusterRules, managerNamespaceRules, type CustomWorkloadAccess, type PolicyRule, type RbacOptions } from '../cli/install-rbac.ts';
import { defaultInstallValues, INSTALL_NAMES } from '../cli/install-values.ts';

/** What of a manager's settings changes the chart's RBAC. */
export interface ChartRbacSettings {
  namespace: string;
  leaderElection: boolean;
  /** cert-manager provides the certificates (the manager's `certDir`). */
  certManager: boolean;
  scope: 'namespaces' | 'cluster';
  customWorkloads: CustomWorkloadAccess[];
  leaseName?: string;
  secretName?: string;
  whitelistConfigMap?: string;
}

/** The chart's rules for these settings; `edit` may remove rules or verbs (the RBAC ablation test). */
export interface ChartRules {
  cluster: PolicyRule[];
  namespace: PolicyRule[];
}

const TOKEN_SECONDS = 10 * 365 * 24 * 3600;
const RBAC = 'rbac.authorization.k8s.io/v1';

export function chartRbacOptions(s: ChartRbacSettings): RbacOptions {
  const values = defaultInstallValues();
  values.leaderElection.enabled = s.leaderElection;
  values.certificates.certManager.enabled = s.certManager;
  values.webhook.scope = s.scope;
  values.rbac.customWorkloads = s.customWorkloads;
  const options = rbacOptions(values);
  if (s.leaseName !== undefined) options.leaseName = s.leaseName;
  if (s.secretName !== undefined) options.secretName = s.secretName;
  if (s.whitelistConfigMap !== undefined) options.whitelistConfigMapName = s.whitelistConfigMap;
  return options;
}

export function chartRules(s: ChartRbacSettings): ChartRules {
  const options = chartRbacOptions(s);
  return { cluster: managerClusterRules(options), namespace: managerNamespaceRules(options) };
}

export class ChartIdentities {
  readonly #cluster: EmbeddedCluster;
  readonly #identities = new Map<string, { name: string; token: Promise<string> }>();
  readonly #connections: Connection[] = [];
  #seq = 0;

  constructor(cluster: EmbeddedCluster) {
    this.#cluster = cluster;
  }

  /** The user names of the ServiceAccounts installed so far. */
  usernames(namespace: string): string[] {
    return [...this.#identities.values()].map((i) => `system:serviceaccount:${namespace}:${i.name}`);
  }

  /** The token of the ServiceAccount holding the chart's RBAC for `s` (installed on first use); `rules` replaces the chart's. */
  tokenFor(s: ChartRbacSettings, rules: ChartRules = chartRules(s)): Promise<string> {
    const key = JSON.stringify([chartRbacOptions(s), rules]);
    let identity = this.#identities.get(key);
    if (identity === undefined) {
      const chartDefaults = defaultSettings(s.namespace);
      const name = key === JSON.stringify([chartRbacOptions(chartDefaults), chartRules(chartDefaults)]) ? INSTALL_NAMES.manager : `${INSTALL_NAMES.manager}-${++this.#seq}`;
      identity = { name, token: this.#install(s.namespace, name, rules) };
      this.#identities.set(key, identity);
    }
    return identity.token;
  }

  /** A client that authenticates with `token` (closed by `close()`). */
  client(token: string, namespace: string, userAgent: string): KubeClient {
    const api = this.#cluster.apiServer;
    const result = connectionFromToken({ server: api.url, caPem: api.caPem, token, namespace, source: 'chart ServiceAccount' });
    if (!result.ok) throw new Error(`${result.error.source}: ${result.error.message}`);
    this.#connections.push(result.connection);
    return new KubeClient(result.connection, { clock: this.#cluster.clock, userAgent, fieldManager: 'workloadspread-embedded' });
  }

  /** The chart's webhook configurations, created when missing (the manager may only update them). */
  async ensureWebhookConfigurations(namespace: string): Promise<void> {
    const admin = this.#cluster.client;
    const objects = installObjects({ namespace, values: defaultInstallValues() });
    for (const [ref, kind] of [[BUILTIN.mutatingwebhookconfigurations, 'MutatingWebhookConfiguration'], [BUILTIN.validatingwebhookconfigurations, 'ValidatingWebhookConfiguration']] as const) {
      const wanted = objects.find((o) => o.kind === kind);
      if (wanted === undefined) throw new Error(`the chart renders no ${kind}`);
      try {
        await admin.get(ref, wanted.metadata?.name ?? '');
      } catch (err) {
        if (!isNotFound(err)) throw err;
        await admin.create(ref, wanted);
      }
    }
  }

  /** Requests refused to these ServiceAccounts since the last counter reset. */
  forbidden(namespace: string): ForbiddenRequest[] {
    const users = new Set(this.usernames(namespace));
    return this.#cluster.apiServer.control.forbiddenRequests().filter((f) => users.has(f.username));
  }

  close(): void {
    for (const c of this.#connections.splice(0)) c.close();
  }

  async #install(namespace: string, name: string, rules: ChartRules): Promise<string> {
    const control = this.#cluster.apiServer.control;
    const subjects = [{ kind: 'ServiceAccount', name, namespace }];
    const objects: KubeObject[] = [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
      { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name }, rules: rules.cluster },
      { apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects },
      { apiVersion: RBAC, kind: 'Role', metadata: { name, namespace }, rules: rules.namespace },
      { apiVersion: RBAC, kind: 'RoleBinding', metadata: { name, namespace }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects },
    ];
    for (const obj of objects) {
      const created = await control.create(obj);
      if (!created.ok) throw new Error(`cannot install the chart's ${obj.kind} ${name}: ${created.status.message ?? ''}`);
    }
    const answer = await this.#cluster.client.request<{ status?: { token?: string } }>({
      method: 'POST',
      path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: TOKEN_SECONDS } },
    });
    const token = answer.status?.token;
    if (token === undefined) throw new Error(`no token for the ServiceAccount ${namespace}/${name}`);
    return token;
  }
}

export function defaultSettings(namespace: string): ChartRbacSettings {
  return { namespace, leaderElection: true, certManager: false, scope: 'namespaces', customWorkloads: [] };
}

export function describeForbidden(list: readonly ForbiddenRequest[]): string {
  return list
    .map((f) => `${f.userAgent}: ${f.message}`)
    .filter((line, i, all) => all.indexOf(line) === i)
    .join('\n');
}
