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
import { generateServingCertificate } from './loopback-certificates.ts';
import { startApiServer, type ApiServer } from '../cluster/index.ts';
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

describe('what kubectl does without a client library: certificates, impersonation, token files, exec plugins, overrides', () => {
  /** An HTTPS server that asks for a client certificate (signed by its client CA) and answers what it received. */
  interface Echo {
    url: string;
    caPem: string;
    client: { certPem: string; keyPem: string };
    seen: { headers: Record<string, string[]>; peer: string | undefined }[];
    close(): Promise<void>;
  }
  let echo: Echo;
  let plain: { url: string; seen: Record<string, string[]>[]; close(): Promise<void> };

  before(async () => {
    const { createServer } = await import('node:https');
    const { createServer: createHttpServer } = await import('node:http');
    const { createCertificateAuthority, issueServingCertificate } = await import('./loopback-certificates.ts');
    const { issueClientCertificate } = await import('./tls-certificates.ts');
    const serving = issueServingCertificate(createCertificateAuthority('echo-ca'));
    const clientCa = createCertificateAuthority('echo-client-ca');
    const client = issueClientCertificate(clientCa, 'alice', (await import('../clock/clock.ts')).realClock().now(), 1);
    const seen: Echo['seen'] = [];
    const server = createServer({ key: serving.keyPem, cert: serving.certPem, ca: clientCa.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
      const socket = req.socket as import('node:tls').TLSSocket;
      const peer = socket.authorized ? (socket.getPeerCertificate().subject?.CN as string | undefined) : undefined;
      seen.push({ headers: req.headersDistinct as Record<string, string[]>, peer });
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ kind: 'Namespace', metadata: { name: 'default' } }));
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    echo = {
      url: `https://127.0.0.1:${(server.address() as { port: number }).port}`,
      caPem: serving.caPem,
      client,
      seen,
      close: () => new Promise((done) => server.close(() => done())),
    };
    const plainSeen: Record<string, string[]>[] = [];
    const http = createHttpServer((req, res) => {
      plainSeen.push(req.headersDistinct as Record<string, string[]>);
      res.setHeader('Content-Type', 'application/json');
      res.end('{}');
    });
    await new Promise<void>((ready) => http.listen(0, '127.0.0.1', ready));
    plain = { url: `http://127.0.0.1:${(http.address() as { port: number }).port}`, seen: plainSeen, close: () => new Promise((done) => http.close(() => done())) };
  });
  after(async () => {
    await echo?.close();
    await plain?.close();
  });

  async function get(connection: Connection): Promise<void> {
    await new KubeClient(connection, { clock }).get(BUILTIN.namespaces, 'default');
  }

  function echoConfig(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
    return stringify({
      clusters: [{ name: 'echo', cluster: { server: echo.url, 'certificate-authority-data': Buffer.from(echo.caPem).toString('base64'), ...cluster } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'echo', context: { cluster: 'echo', user: 'u' } }],
      'current-context': 'echo',
    });
  }

  test('client certificate and key files, relative to the kubeconfig: the server sees the certificate', async () => {
    mkdirSync(join(dir, 'certs'), { recursive: true });
    writeFileSync(join(dir, 'certs', 'alice.crt'), echo.client.certPem);
    writeFileSync(join(dir, 'certs', 'alice.key'), echo.client.keyPem);
    const path = file('mtls.yaml', echoConfig({ 'client-certificate': 'certs/alice.crt', 'client-key': 'certs/alice.key' }));
    await get(connected(await loadConnection({ kubeconfig: path })));
    assert.equal(echo.seen.at(-1)?.peer, 'alice');
    assert.equal(echo.seen.at(-1)?.headers['authorization'], undefined);
    const missing = failure(await loadConnection({ kubeconfig: file('mtls-missing.yaml', echoConfig({ 'client-certificate': 'certs/nope.crt', 'client-key': 'certs/alice.key' })) }));
    assert.match(missing.message, /cannot read the client certificate file .*certs\/nope\.crt: no such file/);
  });

  test('impersonation: every group is its own Impersonate-Group header; --as/--as-group/--as-uid win over the kubeconfig\'s', async () => {
    const text = echoConfig({ token: 't', as: 'from-file', 'as-groups': ['f1'], 'as-user-extra': { 'scopes.example.com': ['s1', 's2'] } });
    await get(connected(await connectionFromKubeconfigText(text)));
    let h = echo.seen.at(-1)?.headers ?? {};
    assert.deepEqual([h['impersonate-user'], h['impersonate-group'], h['impersonate-extra-scopes.example.com'], h['authorization']], [['from-file'], ['f1'], ['s1', 's2'], ['Bearer t']]);
    await get(connected(await connectionFromKubeconfigText(text, { overrides: { impersonateUser: 'alice', impersonateGroups: ['a', 'b'], impersonateUid: 'u-1' } })));
    h = echo.seen.at(-1)?.headers ?? {};
    assert.deepEqual([h['impersonate-user'], h['impersonate-group'], h['impersonate-uid']], [['alice'], ['a', 'b'], ['u-1']]);
    assert.match(failure(await connectionFromKubeconfigText(echoConfig({ 'as-groups': ['g'] }))).message, /needs a user to impersonate/);
  });

  test('--server and --token with no kubeconfig anywhere; --insecure-skip-tls-verify instead of the CA', async () => {
    const c = connected(await loadConnection({ env: {}, homeDir: join(dir, 'no-home'), serviceAccountPrefix: join(dir, 'no-sa'), overrides: { server: echo.url, token: 'flag-token', insecureSkipTlsVerify: true } }));
    assert.equal(c.source, 'flags');
    await get(c);
    assert.deepEqual(echo.seen.at(-1)?.headers['authorization'], ['Bearer flag-token']);
    const untrusted = connected(await loadConnection({ env: {}, homeDir: join(dir, 'no-home'), serviceAccountPrefix: join(dir, 'no-sa'), overrides: { server: echo.url, token: 't' } }));
    await assert.rejects(get(untrusted), /certificate|verify/i);
  });

  test('a plain http:// server gets the impersonation headers but no credentials, as client-go', async () => {
    const text = stringify({ clusters: [{ name: 'p', cluster: { server: plain.url } }], users: [{ name: 'u', user: { token: 'secret', as: 'bob' } }], contexts: [{ name: 'p', context: { cluster: 'p', user: 'u' } }], 'current-context': 'p' });
    const c = connected(await connectionFromKubeconfigText(text));
    await new KubeClient(c, { clock }).request({ method: 'GET', path: '/version' });
    assert.deepEqual([plain.seen.at(-1)?.['authorization'], plain.seen.at(-1)?.['impersonate-user']], [undefined, ['bob']]);
  });

  test('a token file is read again once a minute has passed (projected tokens rotate)', async () => {
    const tokenFile = file('token', 'first\n');
    const c = connected(await connectionFromKubeconfigText(echoConfig({ tokenFile }), { clock }));
    assert.equal((await c.headers())['Authorization'], 'Bearer first');
    writeFileSync(tokenFile, 'second\n');
    assert.equal((await c.headers())['Authorization'], 'Bearer first', 'within the minute: the token read');
    await clock.advance(60_000);
    assert.equal((await c.headers())['Authorization'], 'Bearer second');
  });

  test('exec plugins: KUBERNETES_EXEC_INFO with the cluster, the token reused until it expires, a client certificate, failures named', async () => {
    const counter = file('exec-count', '0');
    const expiry = new Date(clock.now() + 5 * 60_000).toISOString();
    const script = file(
      'exec-counting.mjs',
      `import { readFileSync, writeFileSync } from 'node:fs';
const n = Number(readFileSync(${JSON.stringify(counter)}, 'utf8')) + 1;
writeFileSync(${JSON.stringify(counter)}, String(n));
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
const status = { token: 'tok-' + n + '-' + info.spec.interactive + '-' + info.spec.cluster.server + '-' + process.env.EXTRA, expirationTimestamp: ${JSON.stringify(expiry)} };
if (process.argv[2] === 'cert') Object.assign(status, { clientCertificateData: ${JSON.stringify(echo.client.certPem)}, clientKeyData: ${JSON.stringify(echo.client.keyPem)} });
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));`,
    );
    const exec = (args: string[]) => ({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [script, ...args], env: [{ name: 'EXTRA', value: 'x' }], provideClusterInfo: true, interactiveMode: 'Never' } });
    const c = connected(await connectionFromKubeconfigText(echoConfig(exec([])), { clock, stdinIsTTY: false }));
    const want = (n: number) => `Bearer tok-${n}-false-${echo.url}-x`;
    assert.equal((await c.headers())['Authorization'], want(1));
    assert.equal((await c.headers())['Authorization'], want(1), 'reused before it expires');
    await clock.advance(5 * 60_000);
    assert.equal((await c.headers())['Authorization'], want(2), 'run again once expired');

    const withCert = connected(await connectionFromKubeconfigText(echoConfig(exec(['cert'])), { clock, stdinIsTTY: false }));
    await get(withCert);
    assert.equal(echo.seen.at(-1)?.peer, 'alice', 'the certificate the plugin gave is presented');

    const missing = failure(await connectionFromKubeconfigText(echoConfig({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'no-such-credential-plugin', interactiveMode: 'Never', installHint: 'install it with: brew install it' } })));
    assert.match(missing.message, /exec plugin "no-such-credential-plugin" not found\ninstall it with: brew install it/);
    const failing = file('exec-fails.mjs', 'process.exit(3);');
    assert.match(failure(await connectionFromKubeconfigText(echoConfig({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [failing], interactiveMode: 'Never' } }))).message, /failed \(exit code 3\)/);
    const wrongVersion = file('exec-v1beta1.mjs', `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token: 't' } }));`);
    assert.match(failure(await connectionFromKubeconfigText(echoConfig({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [wrongVersion], interactiveMode: 'Never' } }))).message, /configured for client\.authentication\.k8s\.io\/v1 but answered "client\.authentication\.k8s\.io\/v1beta1"/);
    const always = failure(await connectionFromKubeconfigText(echoConfig({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [script], interactiveMode: 'Always' } }), { stdinIsTTY: false }));
    assert.match(always.message, /needs a terminal/);
  });

  test('YAML 1.1 as kubectl reads it: insecure-skip-tls-verify: yes is true', async () => {
    const text = echoConfig({ token: 't' }).replace(/certificate-authority-data: .*/, 'insecure-skip-tls-verify: yes');
    await get(connected(await connectionFromKubeconfigText(text)));
    assert.deepEqual(echo.seen.at(-1)?.headers['authorization'], ['Bearer t']);
  });

  test('proxy-url is refused by name rather than ignored', async () => {
    assert.match(failure(await connectionFromKubeconfigText(echoConfig({ token: 't' }, { 'proxy-url': 'http://proxy:3128' }))).message, /cluster "echo": proxy-url is not supported/);
  });
});
