/**
 * The secure metrics endpoint (`secureMetrics`, `--metrics-secure`) of a real manager against
 * the embedded cluster, run as the chart's ServiceAccount with the chart's RBAC for
 * `metrics.secure`: HTTPS only (a self-signed certificate for localhost and 127.0.0.1);
 * no token or a token the API server does not know → 401, a ServiceAccount without a grant →
 * 403, with `get` on the non-resource URL /metrics → 200 and the metrics; decisions reused for
 * 10 s (two API requests per scrape at most, none within the TTL, one TokenReview for a burst),
 * a removed grant honoured once they expire; the profiles under /debug/pprof/ — authorized on
 * their own path, a CPU profile of N virtual seconds (a .cpuprofile Chrome DevTools reads: nodes,
 * samples, timeDeltas), a heap snapshot (a .heapsnapshot: snapshot.meta, nodes, edges,
 * strings), one at a time (409), `seconds` checked (400); 404 with profiling off and on a plain
 * endpoint. A manager without either of the chart's review rules answers 500 and is refused by
 * the API server: both rules are needed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { BUILTIN } from '../client/resources.ts';
import { chartRules } from '../testing/chart-identity.ts';
import { eventually } from '../testing/eventually.ts';
import { chartSettings, httpGet, onClock, startManagerCluster, startTestManager, stopOnClock, type ManagerCluster, type TestManager } from '../testing/manager-bed.ts';

const RBAC = 'rbac.authorization.k8s.io/v1';
const MONITORING = 'monitoring';

interface Answer {
  code: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  /** The names the server's certificate covers. */
  altNames: string;
}

/** GET over HTTPS without verifying the (self-signed) certificate; real I/O, no clock time passes. */
function get(url: string, token?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: 'GET', agent: false, rejectUnauthorized: false, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      const altNames = (res.socket as TLSSocket).getPeerCertificate().subjectaltname ?? '';
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ code: res.statusCode ?? 0, headers: res.headers, body, text: body.length < 1_000_000 ? body.toString('utf8') : '', altNames });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

let env: ManagerCluster;
let secure: TestManager;
let url: string;
/** Tokens of ServiceAccounts in `monitoring`: no grant, /metrics, /metrics and the profiles. */
const tokens: Record<'stranger' | 'prometheus' | 'profiler', string> = { stranger: '', prometheus: '', profiler: '' };

async function serviceAccountWith(name: string, nonResourceURLs: string[] | undefined, verbs = ['get']): Promise<string> {
  const control = env.cluster.apiServer.control;
  const objects: Record<string, unknown>[] = [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: MONITORING } }];
  if (nonResourceURLs !== undefined) {
    objects.push(
      { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: `${name}-reader` }, rules: [{ nonResourceURLs, verbs }] },
      {
        apiVersion: RBAC,
        kind: 'ClusterRoleBinding',
        metadata: { name: `${name}-reader` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${name}-reader` },
        subjects: [{ kind: 'ServiceAccount', name, namespace: MONITORING }],
      },
    );
  }
  for (const obj of objects) {
    const created = await control.create(obj);
    assert.ok(created.ok, JSON.stringify(!created.ok && created.status));
  }
  const answer = await env.cluster.client.request<{ status: { token: string } }>({ method: 'POST', path: `/api/v1/namespaces/${MONITORING}/serviceaccounts/${name}/token`, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 86_400 } } });
  return answer.status.token;
}

/** The manager's reviews so far. */
function reviews(manager: TestManager): { tokenReviews: number; accessReviews: number } {
  const userAgent = `workloadspread-manager/${manager.name}`;
  const control = env.cluster.apiServer.control;
  return {
    tokenReviews: control.requestCount({ resource: 'tokenreviews', verb: 'create', userAgent }),
    accessReviews: control.requestCount({ resource: 'subjectaccessreviews', verb: 'create', userAgent }),
  };
}

before(async () => {
  env = await startManagerCluster();
  await env.cluster.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: MONITORING } });
  tokens.stranger = await serviceAccountWith('stranger', undefined);
  tokens.prometheus = await serviceAccountWith('prometheus', ['/metrics']);
  tokens.profiler = await serviceAccountWith('profiler', ['/metrics', '/debug/pprof/*']);
  secure = await startTestManager(env, { name: 'secure-0', secureMetrics: {} });
  url = secure.manager.endpoints().metrics ?? '';
});
after(async () => {
  if (secure !== undefined) await stopOnClock(env, secure.manager);
  await env?.stop();
});

describe('/metrics over HTTPS behind TokenReview and SubjectAccessReview', () => {
  test('HTTPS with a self-signed certificate for localhost and 127.0.0.1; plain HTTP gets nothing', async () => {
    assert.match(url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const answer = await get(`${url}/metrics`);
    assert.match(answer.altNames, /DNS:localhost/);
    assert.match(answer.altNames, /IP Address:127\.0\.0\.1/);
    await assert.rejects(httpGet(`${url.replace('https:', 'http:')}/metrics`));
  });

  test('no token, or one the API server does not know: 401; a ServiceAccount without a grant: 403; with get on /metrics: 200 and the metrics', async () => {
    const none = await get(`${url}/metrics`);
    assert.equal(none.code, 401);
    assert.equal(none.text, 'Unauthorized\n');
    const bad = await get(`${url}/metrics`, 'not-a-token');
    assert.equal(bad.code, 401);
    assert.equal(bad.text, 'Unauthorized\n');
    const stranger = await get(`${url}/metrics`, tokens.stranger);
    assert.equal(stranger.code, 403);
    assert.equal(stranger.text, `Authorization denied for user system:serviceaccount:${MONITORING}:stranger\n`);
    const prometheus = await get(`${url}/metrics`, tokens.prometheus);
    assert.equal(prometheus.code, 200, prometheus.text);
    assert.match(String(prometheus.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(prometheus.text, /^# TYPE controller_runtime_reconcile_total counter$/m);
    // A path nothing serves is 404 to an authenticated caller (not authorized: no review for it), 401 to others.
    assert.equal((await get(`${url}/nothing`, tokens.prometheus)).code, 404);
    assert.equal((await get(`${url}/nothing`)).code, 401);
  });

  test('decisions are reused for 10 s: at most two API requests per scrape, none within the TTL, one review for a burst; a removed grant is honoured once they expire', async () => {
    const token = await serviceAccountWith('scraper', ['/metrics']);
    const before = reviews(secure);
    assert.equal((await get(`${url}/metrics`, token)).code, 200);
    assert.deepEqual(reviews(secure), { tokenReviews: before.tokenReviews + 1, accessReviews: before.accessReviews + 1 }, 'the first scrape asks both');
    for (let i = 0; i < 3; i++) assert.equal((await get(`${url}/metrics`, token)).code, 200);
    assert.deepEqual(reviews(secure), { tokenReviews: before.tokenReviews + 1, accessReviews: before.accessReviews + 1 }, 'scrapes within 10 s ask nothing');
    await env.clock.advance(15_000);
    assert.equal((await get(`${url}/metrics`, token)).code, 200);
    assert.deepEqual(reviews(secure), { tokenReviews: before.tokenReviews + 2, accessReviews: before.accessReviews + 2 }, 'a scrape 15 s later asks both again');

    // A burst with a token not seen yet: one TokenReview, one SubjectAccessReview.
    const fresh = await serviceAccountWith('burst', ['/metrics']);
    const burstBefore = reviews(secure);
    const codes = await Promise.all(Array.from({ length: 8 }, () => get(`${url}/metrics`, fresh).then((a) => a.code)));
    assert.deepEqual(codes, Array(8).fill(200));
    assert.deepEqual(reviews(secure), { tokenReviews: burstBefore.tokenReviews + 1, accessReviews: burstBefore.accessReviews + 1 });

    // Denials are cached too: a bad token retried costs one review.
    const badBefore = reviews(secure).tokenReviews;
    for (let i = 0; i < 3; i++) assert.equal((await get(`${url}/metrics`, 'still-not-a-token')).code, 401);
    assert.equal(reviews(secure).tokenReviews, badBefore + 1);

    assert.ok((await env.cluster.apiServer.control.delete(RBAC, 'ClusterRoleBinding', '', 'scraper-reader')).ok);
    assert.equal((await get(`${url}/metrics`, token)).code, 200, 'the cached decision holds until it expires');
    await env.clock.advance(10_000);
    assert.equal((await get(`${url}/metrics`, token)).code, 403);
  });
});

describe('profiles under /debug/pprof/', () => {
  test('authorized on their own path: a grant for /metrics is not one for the profiles', async () => {
    const denied = await get(`${url}/debug/pprof/profile?seconds=1`, tokens.prometheus);
    assert.equal(denied.code, 403);
    assert.equal((await get(`${url}/debug/pprof/heap`)).code, 401);
  });

  test('a CPU profile of N seconds on the clock, as a .cpuprofile Chrome DevTools reads', async () => {
    const started = env.clock.now();
    const answer = await onClock(env, get(`${url}/debug/pprof/profile?seconds=3`, tokens.profiler));
    assert.equal(answer.code, 200, answer.text);
    assert.ok(env.clock.now() - started >= 3_000, 'the profile waited 3 s on the clock');
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.match(String(answer.headers['content-disposition']), /^attachment; filename="workloadspread-manager-\d{8}T\d{6}Z\.cpuprofile"$/);
    const profile = JSON.parse(answer.text) as { nodes: { id: number; callFrame: { functionName: string } }[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };
    assert.ok(profile.nodes.length > 0 && profile.nodes[0]?.callFrame.functionName === '(root)', 'a call tree from (root)');
    assert.ok(profile.endTime > profile.startTime);
    assert.equal(profile.samples.length, profile.timeDeltas.length);
    const ids = new Set(profile.nodes.map((n) => n.id));
    assert.ok(profile.samples.every((s) => ids.has(s)), 'every sample names a node');
  });

  test('one profile at a time (409); seconds from 1 to 300 (400); HEAD is not a way to take one (405)', async () => {
    const lines = () => secure.log.lines.filter((l) => l.message === 'CPU profile started').length;
    const startedBefore = lines();
    const running = get(`${url}/debug/pprof/profile?seconds=5`, tokens.profiler);
    await eventually(() => assert.equal(lines(), startedBefore + 1), { timeoutMs: 10_000 });
    const second = await get(`${url}/debug/pprof/profile?seconds=1`, tokens.profiler);
    assert.equal(second.code, 409);
    assert.equal(second.text, 'a CPU profile is being taken; one profile at a time\n');
    assert.equal((await get(`${url}/debug/pprof/heap`, tokens.profiler)).code, 409);
    assert.equal((await onClock(env, running)).code, 200);

    for (const [seconds, text] of [['0', '"0"'], ['301', '"301"'], ['1.5', '"1.5"'], ['soon', '"soon"']]) {
      const r = await get(`${url}/debug/pprof/profile?seconds=${seconds}`, tokens.profiler);
      assert.equal(r.code, 400);
      assert.equal(r.text, `seconds must be an integer from 1 to 300, got ${text}\n`);
    }
    const head = (token: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpsRequest(`${url}/debug/pprof/heap`, { method: 'HEAD', agent: false, rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    // HEAD is authorized as the verb `head`, which a grant of `get` does not cover; allowed, it is still no way to take one.
    assert.equal(await head(tokens.profiler), 403);
    assert.equal(await head(await serviceAccountWith('header', ['/debug/pprof/*'], ['get', 'head'])), 405);
  });

  test('a heap snapshot, as a .heapsnapshot Chrome DevTools reads', async () => {
    const answer = await get(`${url}/debug/pprof/heap`, tokens.profiler);
    assert.equal(answer.code, 200);
    assert.match(String(answer.headers['content-disposition']), /^attachment; filename="workloadspread-manager-\d{8}T\d{6}Z\.heapsnapshot"$/);
    const snapshot = JSON.parse(answer.body.toString('utf8')) as { snapshot: { meta: { node_fields: string[]; edge_fields: string[] }; node_count: number; edge_count: number }; nodes: number[]; edges: number[]; strings: string[] };
    assert.ok(snapshot.snapshot.meta.node_fields.includes('self_size'));
    assert.equal(snapshot.nodes.length, snapshot.snapshot.node_count * snapshot.snapshot.meta.node_fields.length);
    assert.equal(snapshot.edges.length, snapshot.snapshot.edge_count * snapshot.snapshot.meta.edge_fields.length);
    assert.ok(snapshot.strings.includes('DelegatedAuth'), 'the manager\'s own classes are in it');
  });
});

describe('when the profiles are not served, and without the chart\'s review rules', () => {
  test('profiling off: 404 to a caller allowed everything; a plain endpoint has no profiles and no authentication', async () => {
    const off = await startTestManager(env, { name: 'secure-1', secureMetrics: { profiling: false } });
    try {
      const base = off.manager.endpoints().metrics ?? '';
      assert.equal((await get(`${base}/debug/pprof/profile?seconds=1`, tokens.profiler)).code, 404);
      assert.equal((await get(`${base}/debug/pprof/heap`, tokens.profiler)).code, 404);
      assert.equal((await get(`${base}/metrics`, tokens.profiler)).code, 200);
    } finally {
      await stopOnClock(env, off.manager);
    }
    const plain = await startTestManager(env, { name: 'plain-0' });
    try {
      const base = plain.manager.endpoints().metrics ?? '';
      assert.match(base, /^http:\/\//);
      assert.equal((await httpGet(`${base}/debug/pprof/profile?seconds=1`)).code, 404);
      assert.equal((await httpGet(`${base}/debug/pprof/heap`)).code, 404);
      assert.equal((await httpGet(`${base}/metrics`)).code, 200);
    } finally {
      await stopOnClock(env, plain.manager);
    }
  });

  test('without create on tokenreviews (the default chart rules): 500 and the API server refuses the review — the rule is needed', async () => {
    const rules = chartRules(chartSettings({}));
    const bare = await startTestManager(env, { name: 'secure-bare', secureMetrics: {}, rbac: { rules } });
    try {
      const answer = await get(`${bare.manager.endpoints().metrics ?? ''}/metrics`, tokens.prometheus);
      assert.equal(answer.code, 500);
      assert.equal(answer.text, 'Authentication failed\n');
      const refused = env.cluster.apiServer.control.forbiddenRequests({ userAgent: 'workloadspread-manager/secure-bare' });
      assert.deepEqual(refused.map((f) => f.message), [`tokenreviews.authentication.k8s.io is forbidden: User "${refused[0]?.username ?? ''}" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope`]);
      assert.ok(bare.log.lines.some((l) => l.level === 'error' && l.message === 'metrics endpoint: authentication failed (TokenReview)'));
    } finally {
      await stopOnClock(env, bare.manager, { allowForbidden: true });
      // Expected refusals: the cluster's final check is about the chart's own rules.
      env.cluster.apiServer.control.resetCounters();
    }
  });

  test('without create on subjectaccessreviews (the chart\'s secure rules minus that one): 500 naming the user, and the API server refuses the review — the rule is needed', async () => {
    const full = chartRules(chartSettings({ secureMetrics: {} }));
    const rules = { ...full, cluster: full.cluster.filter((r) => !r.resources.includes('subjectaccessreviews')) };
    assert.equal(rules.cluster.length, full.cluster.length - 1, 'the secure rules hold one for subjectaccessreviews');
    const partial = await startTestManager(env, { name: 'secure-partial', secureMetrics: {}, rbac: { rules } });
    try {
      const answer = await get(`${partial.manager.endpoints().metrics ?? ''}/metrics`, tokens.prometheus);
      assert.equal(answer.code, 500);
      assert.equal(answer.text, `Authorization for user system:serviceaccount:${MONITORING}:prometheus failed\n`);
      const refused = env.cluster.apiServer.control.forbiddenRequests({ userAgent: 'workloadspread-manager/secure-partial' });
      assert.deepEqual(refused.map((f) => f.message), [`subjectaccessreviews.authorization.k8s.io is forbidden: User "${refused[0]?.username ?? ''}" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`]);
    } finally {
      await stopOnClock(env, partial.manager, { allowForbidden: true });
      env.cluster.apiServer.control.resetCounters();
    }
  });
});
