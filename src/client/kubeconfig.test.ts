/**
 * The kubeconfig model without I/O: reading a document (fields named in errors, relative paths
 * resolved against the file), merging a $KUBECONFIG list (first definition wins), and selecting the
 * context, cluster and user with kubectl's overrides in clientcmd's precedence.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeKubeconfigs, readKubeconfig, selectSettings, type ConnectionOverrides, type Kubeconfig } from './kubeconfig.ts';

const CA = '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n';

function read(doc: unknown, path?: string): Kubeconfig {
  const r = readKubeconfig(doc, path);
  if (!r.ok) assert.fail(r.error);
  return r.config;
}

const base = {
  clusters: [
    { name: 'prod', cluster: { server: 'https://prod:6443', 'certificate-authority-data': Buffer.from(CA).toString('base64'), 'tls-server-name': 'api.prod' } },
    { name: 'dev', cluster: { server: 'https://dev:6443', 'certificate-authority': 'ca/dev.crt' } },
  ],
  users: [
    { name: 'admin', user: { token: 'admin-token', as: 'someone', 'as-groups': ['g0'] } },
    { name: 'certs', user: { 'client-certificate': 'certs/me.crt', 'client-key-data': Buffer.from('KEY').toString('base64') } },
  ],
  contexts: [
    { name: 'prod', context: { cluster: 'prod', user: 'admin', namespace: 'web' } },
    { name: 'dev', context: { cluster: 'dev', user: 'certs' } },
  ],
  'current-context': 'prod',
};

function select(config: Kubeconfig, o: ConnectionOverrides = {}) {
  const r = selectSettings(config, o);
  if (!r.ok) assert.fail(r.error);
  return r.settings;
}

function selectError(config: Kubeconfig, o: ConnectionOverrides = {}): string {
  const r = selectSettings(config, o);
  assert.equal(r.ok, false);
  return (r as { error: string }).error;
}

describe('reading a kubeconfig', () => {
  test('data fields are decoded; relative file paths are resolved against the file', () => {
    const c = read(base, '/home/me/.kube/config');
    assert.equal(c.clusters.get('prod')?.certificateAuthorityData, CA);
    assert.equal(c.clusters.get('dev')?.certificateAuthority, '/home/me/.kube/ca/dev.crt');
    assert.equal(c.users.get('certs')?.clientCertificate, '/home/me/.kube/certs/me.crt');
    assert.equal(c.users.get('certs')?.clientKeyData, 'KEY');
    assert.deepEqual(c.users.get('admin')?.impersonate, { user: 'someone', groups: ['g0'], extra: {} });
  });

  test('an exec plugin: its command relative to the file when it has a path, looked up on PATH otherwise', () => {
    const exec = (command: string) => read({ users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command, interactiveMode: 'Never' } } }] }, '/cfg/config').users.get('u')?.exec?.command;
    assert.equal(exec('./bin/get-token'), '/cfg/bin/get-token');
    assert.equal(exec('aws'), 'aws');
  });

  const errors: [string, unknown, RegExp][] = [
    ['a cluster without a server', { clusters: [{ name: 'x', cluster: {} }] }, /^clusters\[0\]\.cluster\.server is missing$/],
    ['an entry without a name', { users: [{ user: {} }] }, /^users\[0\]\.name is missing$/],
    ['a list that is not one', { contexts: { a: 1 } }, /^contexts must be a list$/],
    ['data that is not base64', { clusters: [{ name: 'x', cluster: { server: 'https://x', 'certificate-authority-data': '%%%' } }] }, /certificate-authority-data is not base64/],
    ['a certificate given twice', { users: [{ name: 'u', user: { 'client-certificate': 'a', 'client-certificate-data': 'YQ==' } }] }, /client-certificate and client-certificate-data are both set/],
    ['an exec apiVersion that is gone', { users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1alpha1', command: 'x' } } }] }, /users\[0\]\.user\.exec\.apiVersion must be one of client\.authentication\.k8s\.io\/v1, client\.authentication\.k8s\.io\/v1beta1/],
    ['exec v1 without interactiveMode', { users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'x' } } }] }, /interactiveMode is required/],
    ['a boolean that is not', { clusters: [{ name: 'x', cluster: { server: 'https://x', 'insecure-skip-tls-verify': 'yes' } }] }, /insecure-skip-tls-verify must be true or false/],
  ];
  for (const [name, doc, pattern] of errors) {
    test(name, () => {
      const r = readKubeconfig(doc);
      assert.equal(r.ok, false);
      assert.match((r as { error: string }).error, pattern);
    });
  }

  test('$KUBECONFIG: the first file to define a name or a current-context wins', () => {
    const first = read({ clusters: [{ name: 'c', cluster: { server: 'https://first' } }], 'current-context': '' });
    const second = read({ clusters: [{ name: 'c', cluster: { server: 'https://second' } }, { name: 'd', cluster: { server: 'https://d' } }], 'current-context': 'from-second' });
    const merged = mergeKubeconfigs([first, second]);
    assert.equal(merged.clusters.get('c')?.server, 'https://first');
    assert.equal(merged.clusters.get('d')?.server, 'https://d');
    assert.equal(merged.currentContext, 'from-second');
  });
});

describe('selecting with kubectl\'s overrides', () => {
  const config = read(base, '/k/config');

  test('the current context: its cluster, user and namespace', () => {
    const s = select(config);
    assert.deepEqual([s.contextName, s.clusterName, s.userName, s.namespace, s.cluster.server, s.user.token], ['prod', 'prod', 'admin', 'web', 'https://prod:6443', 'admin-token']);
  });

  test('--context, then --cluster and --user replace the context\'s; -n its namespace; no namespace means default', () => {
    assert.deepEqual([select(config, { context: 'dev' }).namespace, select(config, { context: 'dev' }).clusterName], ['default', 'dev']);
    const s = select(config, { cluster: 'dev', user: 'certs', namespace: 'ops' });
    assert.deepEqual([s.contextName, s.clusterName, s.userName, s.namespace], ['prod', 'dev', 'certs', 'ops']);
  });

  test('--server replaces the server and drops the file\'s tls-server-name unless --tls-server-name is given', () => {
    assert.equal(select(config).cluster.tlsServerName, 'api.prod');
    const s = select(config, { server: 'https://other:443' });
    assert.deepEqual([s.cluster.server, s.cluster.tlsServerName, s.cluster.certificateAuthorityData], ['https://other:443', undefined, CA]);
    assert.equal(select(config, { server: 'https://other:443', tlsServerName: 'api' }).cluster.tlsServerName, 'api');
  });

  test('--insecure-skip-tls-verify clears the file\'s CA; --certificate-authority replaces it and clears skip-verify', () => {
    const insecure = select(config, { insecureSkipTlsVerify: true }).cluster;
    assert.deepEqual([insecure.insecureSkipTlsVerify, insecure.certificateAuthorityData, insecure.certificateAuthority], [true, undefined, undefined]);
    const ca = select(config, { certificateAuthority: '/etc/ca.crt' }).cluster;
    assert.deepEqual([ca.insecureSkipTlsVerify, ca.certificateAuthorityData, ca.certificateAuthority], [false, undefined, '/etc/ca.crt']);
  });

  test('--token, --client-certificate/--client-key and --as/--as-group/--as-uid replace the user\'s', () => {
    const s = select(config, { token: 't2', impersonateUser: 'alice', impersonateGroups: ['a', 'b'], impersonateUid: 'u1' });
    assert.deepEqual([s.user.token, s.user.impersonate], ['t2', { user: 'alice', uid: 'u1', groups: ['a', 'b'], extra: {} }]);
    const certs = select(config, { context: 'dev', clientCertificate: '/x.crt', clientKey: '/x.key' }).user;
    assert.deepEqual([certs.clientCertificate, certs.clientCertificateData, certs.clientKey, certs.clientKeyData], ['/x.crt', undefined, '/x.key', undefined]);
  });

  test('--server alone is enough: no kubeconfig at all', () => {
    const empty = read({});
    const s = select(empty, { server: 'https://h:6443', token: 't' });
    assert.deepEqual([s.cluster.server, s.user.token, s.namespace], ['https://h:6443', 't', 'default']);
    assert.match(selectError(empty), /no current-context/);
  });

  test('names that are not in the kubeconfig are errors naming them', () => {
    assert.equal(selectError(config, { context: 'x' }), 'context "x" is not in the kubeconfig');
    assert.equal(selectError(config, { cluster: 'x' }), 'cluster "x" is not in the kubeconfig');
    assert.equal(selectError(config, { user: 'x' }), 'user "x" is not in the kubeconfig');
  });
});
