/**
 * Connection settings: explicit kubeconfig, $KUBECONFIG lists, ~/.kube/config,
 * the in-cluster service account, exec plugins, basic auth, context choice,
 * and errors that name the file and the problem. Each working connection is
 * proven by a request to the embedded API server.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { stringify } from 'yaml';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { generateServingCertificate } from '../cluster/apiserver/certs.ts';
import { startApiServer, type ApiServer } from '../cluster/apiserver/server.ts';
import { connectionFromCluster, connectionFromKubeconfigText, connectionFromToken, loadConnection, SERVICE_ACCOUNT_DIR, type ConfigResult, type Connection } from './config.ts';
import { KubeClient } from './http-client.ts';
import { BUILTIN } from './resources.ts';

let clock: VirtualClock;
let server: ApiServer;
let dir: string;
const opened: Connection[] = [];

before(async () => {
  clock = new VirtualClock(Date.UTC(2026, 0, 1));
  server = await startApiServer({ clock, certificate: generateServingCertificate(), users: { 'exec-token': { username: 'exec-user', groups: ['system:masters'] } } });
  dir = mkdtempSync(join(tmpdir(), 'ws-config-'));
});
after(async () => {
  for (const c of opened) c.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

function connected(result: ConfigResult): Connection {
  if (!result.ok) assert.fail(`${result.error.source}: ${result.error.message}`);
  opened.push(result.connection);
  return result.connection;
}

async function works(connection: Connection): Promise<void> {
  const client = new KubeClient(connection, { clock });
  const ns = await client.get<{ metadata: { name: string } }>(BUILTIN.namespaces, 'default');
  assert.equal(ns.metadata.name, 'default');
}

function failure(result: ConfigResult): { source: string; message: string } {
  assert.equal(result.ok, false, 'expected a configuration error');
  return (result as { ok: false; error: { source: string; message: string } }).error;
}

/** A kubeconfig for the embedded server with a custom user entry. */
function kubeconfig(user: Record<string, unknown>, extra: { namespace?: string; context?: string } = {}): string {
  const name = extra.context ?? 'embedded';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: server.url, 'certificate-authority-data': Buffer.from(server.caPem).toString('base64') } }],
    users: [{ name: 'u', user }],
    contexts: [{ name, context: { cluster: 'c', user: 'u', ...(extra.namespace !== undefined ? { namespace: extra.namespace } : {}) } }],
    'current-context': name,
  });
}

describe('loading a kubeconfig', () => {
  test('an explicit --kubeconfig path wins; the namespace comes from the context', async () => {
    const path = file('explicit.yaml', server.kubeconfig('team-a'));
    const c = connected(await loadConnection({ kubeconfig: path, env: { KUBECONFIG: '/nonexistent' }, homeDir: '/nonexistent' }));
    assert.equal(c.namespace, 'team-a');
    assert.equal(c.source, path);
    assert.equal(c.server, server.url);
    await works(c);
  });

  test('$KUBECONFIG: the first file, with later files merged; --context picks any merged context', async () => {
    const first = file('first.yaml', kubeconfig({ token: server.token }, { context: 'one' }));
    const second = file('second.yaml', kubeconfig({ token: server.token }, { context: 'two', namespace: 'from-second' }).replace(/name: c\b/g, 'name: c2').replace(/cluster: c\b/, 'cluster: c2').replace(/name: u\b/g, 'name: u2').replace(/user: u\b/, 'user: u2'));
    const env = { KUBECONFIG: [first, second].join(delimiter) };
    const c1 = connected(await loadConnection({ env, homeDir: '/nonexistent' }));
    assert.equal(c1.namespace, 'default', 'no namespace in the context → default');
    await works(c1);
    const c2 = connected(await loadConnection({ env, context: 'two', homeDir: '/nonexistent' }));
    assert.equal(c2.namespace, 'from-second');
    await works(c2);
  });

  test('~/.kube/config when nothing else is given', async () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(join(home, '.kube', 'config'), server.kubeconfig('home-ns'));
    const c = connected(await loadConnection({ env: {}, homeDir: home }));
    assert.equal(c.namespace, 'home-ns');
    await works(c);
  });

  test('the embedded cluster hands its kubeconfig as text', async () => {
    const c = connected(await connectionFromKubeconfigText(server.kubeconfig(), { source: 'embedded' }));
    assert.equal(c.source, 'embedded');
    assert.equal((await c.headers())['Authorization'], `Bearer ${server.token}`);
    await works(c);
  });

  test('an exec credential plugin supplies the token', async () => {
    const script = file('exec-plugin.mjs', `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'exec-token' } }));`);
    const text = kubeconfig({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [script], interactiveMode: 'Never' } });
    const c = connected(await connectionFromKubeconfigText(text));
    assert.equal((await c.headers())['Authorization'], 'Bearer exec-token');
    await works(c);
  });

  test('basic auth and impersonation become headers', async () => {
    const c = connected(await connectionFromKubeconfigText(kubeconfig({ username: 'admin', password: 's3cret', as: 'someone' })));
    const h = await c.headers();
    assert.equal(h['Authorization'], `Basic ${Buffer.from('admin:s3cret').toString('base64')}`);
    assert.equal(h['Impersonate-User'], 'someone');
  });

  test('an http:// server gets a plain agent (client-node requires insecure-skip-tls-verify for it)', async () => {
    const text = kubeconfig({ token: 't' }).replace(server.url, 'http://127.0.0.1:1').replace('certificate-authority-data:', 'insecure-skip-tls-verify: true\n      certificate-authority-data:');
    const c = connected(await connectionFromKubeconfigText(text));
    assert.ok(c.agent instanceof HttpAgent);
  });
});

describe('connectionFromToken (what a CA + bearer-token kubeconfig says, without parsing one)', () => {
  test('talks to the server with the CA and the token; namespace default unless given', async () => {
    const c = connected(connectionFromToken({ server: `${server.url}/`, caPem: server.caPem, token: server.token, source: 'test' }));
    assert.equal(c.server, server.url);
    assert.equal(c.namespace, 'default');
    await works(c);
    assert.equal(connected(connectionFromToken({ server: server.url, caPem: server.caPem, token: server.token, namespace: 'team', source: 'test' })).namespace, 'team');
  });

  test('a wrong token is refused by the server (401); a CA that did not sign the server certificate fails TLS', async () => {
    const client = new KubeClient(connected(connectionFromToken({ server: server.url, caPem: server.caPem, token: 'wrong', source: 'test' })), { clock });
    await assert.rejects(client.get(BUILTIN.namespaces, 'default'), /401|Unauthorized/);
    const other = generateServingCertificate().caPem;
    const untrusted = new KubeClient(connected(connectionFromToken({ server: server.url, caPem: other, token: server.token, source: 'test' })), { clock });
    await assert.rejects(untrusted.get(BUILTIN.namespaces, 'default'), /certificate|self.signed|verify/i);
  });

  test('bad server URLs are configuration errors naming the source', () => {
    assert.deepEqual(failure(connectionFromToken({ server: 'not a url', caPem: '', token: 't', source: 'mine' })), { source: 'mine', message: 'invalid server URL "not a url"' });
    assert.deepEqual(failure(connectionFromToken({ server: 'http://127.0.0.1:1', caPem: '', token: 't', source: 'mine' })), { source: 'mine', message: 'unsupported server scheme http:' });
  });
});

describe('in-cluster', () => {
  function serviceAccount(prefix: string, files: Record<string, string>): void {
    const sa = join(prefix, SERVICE_ACCOUNT_DIR);
    mkdirSync(sa, { recursive: true });
    for (const [name, content] of Object.entries(files)) writeFileSync(join(sa, name), content);
  }
  const env = () => ({ KUBERNETES_SERVICE_HOST: server.host, KUBERNETES_SERVICE_PORT: String(server.port) });

  test('token file, CA and namespace file of the service account', async () => {
    const prefix = join(dir, 'sa-ok');
    serviceAccount(prefix, { token: server.token, 'ca.crt': server.caPem, namespace: 'kruise-system' });
    const c = connected(await loadConnection({ env: env(), homeDir: '/nonexistent', serviceAccountPrefix: prefix }));
    assert.equal(c.source, 'in-cluster');
    assert.equal(c.namespace, 'kruise-system');
    assert.equal(c.server, server.url);
    await works(c);
    assert.equal(process.env['KUBERNETES_SERVICE_HOST'], undefined, 'the process environment is left as it was');
  });

  test('a kubeconfig wins over the service account', async () => {
    const prefix = join(dir, 'sa-shadowed');
    serviceAccount(prefix, { token: 'wrong', 'ca.crt': server.caPem });
    const path = file('wins.yaml', server.kubeconfig());
    const c = connected(await loadConnection({ env: { ...env(), KUBECONFIG: path }, serviceAccountPrefix: prefix }));
    assert.equal(c.source, path);
  });

  test('errors: no service host, a missing CA', async () => {
    const prefix = join(dir, 'sa-noca');
    serviceAccount(prefix, { token: 't' });
    assert.match(failure(await connectionFromCluster({ env: {}, serviceAccountPrefix: prefix })).message, /KUBERNETES_SERVICE_HOST/);
    const noCa = failure(await connectionFromCluster({ env: env(), serviceAccountPrefix: prefix }));
    assert.equal(noCa.source, join(prefix, SERVICE_ACCOUNT_DIR, 'ca.crt'));
  });
});

describe('configuration errors name the file and the problem', () => {
  test('a missing file', async () => {
    const e = failure(await loadConnection({ kubeconfig: join(dir, 'nope.yaml') }));
    assert.equal(e.source, join(dir, 'nope.yaml'));
    assert.match(e.message, /does not exist/);
  });

  test('a file that is not a kubeconfig', async () => {
    const path = file('broken.yaml', 'clusters:\n  - name: x\n    cluster: {}\n');
    const e = failure(await loadConnection({ kubeconfig: path }));
    assert.equal(e.source, path);
    assert.match(e.message, /cannot read the kubeconfig: clusters\[0\]\.cluster\.server is missing/);
  });

  test('invalid YAML', async () => {
    const path = file('yaml.yaml', 'clusters: [\n');
    assert.match(failure(await loadConnection({ kubeconfig: path })).message, /cannot read the kubeconfig/);
  });

  const cases: [string, string, RegExp][] = [
    ['no current-context', stringify({ clusters: [], users: [], contexts: [] }), /no current-context/],
    ['an undefined current context', stringify({ clusters: [], users: [], contexts: [], 'current-context': 'ghost' }), /current context "ghost" is not defined/],
    ['an undefined cluster', stringify({ clusters: [], users: [{ name: 'u', user: {} }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }), /names cluster "c", which is not defined/],
    ['an undefined user', stringify({ clusters: [{ name: 'c', cluster: { server: 'https://h' } }], users: [], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }), /names user "u", which is not defined/],
    ['a bad server URL', stringify({ clusters: [{ name: 'c', cluster: { server: 'not a url' } }], users: [{ name: 'u', user: {} }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }), /invalid server URL "not a url"/],
  ];
  for (const [name, text, pattern] of cases) {
    test(name, async () => {
      const e = failure(await connectionFromKubeconfigText(text, { source: 'case.yaml' }));
      assert.equal(e.source, 'case.yaml');
      assert.match(e.message, pattern);
    });
  }

  test('an unknown --context', async () => {
    assert.match(failure(await connectionFromKubeconfigText(server.kubeconfig(), { context: 'nope' })).message, /context "nope" is not in the kubeconfig/);
  });

  test('nothing found anywhere says what was tried', async () => {
    const e = failure(await loadConnection({ env: {}, homeDir: join(dir, 'empty-home'), serviceAccountPrefix: join(dir, 'no-sa') }));
    assert.match(e.message, /\$KUBECONFIG not set/);
    assert.match(e.message, /empty-home\/\.kube\/config does not exist/);
    assert.match(e.message, /not running in a cluster/);
  });
});
