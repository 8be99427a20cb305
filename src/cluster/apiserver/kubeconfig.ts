/**
 * The kubeconfig of an embedded API server: one cluster (server URL + CA
 * data), one user (bearer token), one context, current. Readable by kubectl,
 * client-node's `KubeConfig.loadFromString` and the manager.
 */
import { stringify } from 'yaml';

export interface KubeconfigInput {
  server: string;
  caPem: string;
  token: string;
  /** Cluster and context name (the user is `<name>-admin`). */
  name?: string;
  namespace?: string;
}

export const DEFAULT_KUBECONFIG_NAME = 'workloadspread-embedded';

export function renderKubeconfig(input: KubeconfigInput): string {
  const name = input.name ?? DEFAULT_KUBECONFIG_NAME;
  const user = `${name}-admin`;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: input.server, 'certificate-authority-data': Buffer.from(input.caPem, 'utf8').toString('base64') } }],
    users: [{ name: user, user: { token: input.token } }],
    contexts: [{ name, context: { cluster: name, user, namespace: input.namespace ?? 'default' } }],
    'current-context': name,
    preferences: {},
  });
}
