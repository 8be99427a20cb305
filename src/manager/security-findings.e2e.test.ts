/**
 * Issue 14's findings, repeated as written against the real manager on the
 * embedded cluster, each now failing safely:
 * 1. forged reviews sent straight to the webhook port (with client
 *    authentication: refused at the handshake; without it: they cannot push
 *    a subset over its limit, and a forged creation reserves nothing);
 * 2. endless and oversized bodies on the manager's metrics and health
 *    endpoints and on the embedded API server;
 * 3. a subset patch that changes the pod's namespace (refused by the webhook,
 *    and a stored one is not applied: no pod lands in kube-system);
 * 4. two WorkloadSpreads created at the same moment for one workload, 30
 *    times: one counts, the other is marked and ignored;
 * 5. maxReplicas 1e30 and 1,000 subsets refused by the cluster;
 * 6. a client offering only CBC suites refused by the embedded API server.
 * (Findings 3, 5 and 7 through `workloadspread validate`: src/cli/validate-findings.test.ts.)
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { describeError } from '../client/errors.ts';
import { BUILTIN } from '../client/resources.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { tlsHandshake, uploadUntilStopped } from '../testing/hostile-client.ts';
import { countBySubset, deployment, podsOf, readSpread, workloadSpreadObject, zoneTerm } from '../testing/webhook-bed.ts';
import { onClock, startManagerCluster, startTestManager, stopOnClock, type ManagerCluster, type TestManager } from '../testing/manager-bed.ts';

const active = (pods: Pod[]) => pods.filter((p) => p.metadata.deletionTimestamp === undefined && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');

/** POSTs an AdmissionReview straight to a webhook server, as someone on the network would (no client certificate). */
function forge(url: string, path: string, request_: Record<string, unknown>, cert?: { cert: string; key: string }): Promise<{ status: number; allowed?: boolean | undefined; message?: string | undefined }> {
  const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' }, ...request_ } });
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', rejectUnauthorized: false, agent: false, headers: { 'content-type': 'application/json' }, ...(cert ?? {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          const review = JSON.parse(text) as { response?: { allowed?: boolean; status?: { message?: string } } };
          resolve({ status: res.statusCode ?? 0, allowed: review.response?.allowed, message: review.response?.status?.message });
        } catch {
          resolve({ status: res.statusCode ?? 0 });
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

let seq = 0;
const reviewUid = () => `forged-${++seq}`;

describe('issue 14 findings end to end', () => {
  let env: ManagerCluster;
  before(async () => {
    env = await startManagerCluster({ budgetCrd: true });
  });
  after(async () => {
    await env?.stop();
  });

  /** a (max 20) and b (unlimited), one zone each, over Deployment `web`. */
  async function limitedSpread(ns: string, replicas: number): Promise<void> {
    await env.cluster.client.create(
      WORKLOADSPREAD_REF,
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 20 },
          { name: 'b', requiredNodeSelectorTerm: zoneTerm('b') },
        ],
      }),
    );
    await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', replicas));
    await env.cluster.settle();
  }

  async function scale(ns: string, replicas: number): Promise<void> {
    await env.cluster.client.patch(BUILTIN.deployments, 'web', { type: 'merge', body: { spec: { replicas } } }, { namespace: ns });
  }

  describe('finding 1: anyone who can reach the webhook port can break the limits', () => {
    test('without client authentication: 20 forged DELETE reviews of the running pods (copied with their uids) do not let the next scale-up put 40 pods into a subset limited to 20', async () => {
      const m: TestManager = await startTestManager(env, { name: 'open', clientAuth: false, leaderElection: false });
      try {
        const warnings = m.log.lines.filter((l) => l.level === 'warn' && /does not authenticate its callers/.test(l.message));
        assert.equal(warnings.length, 1, 'one warning at start without client authentication');
        const ns = await env.namespace('forged-delete');
        await limitedSpread(ns, 20);
        const pods = active(await podsOf(env.cluster.client, ns));
        assert.deepEqual(countBySubset(pods), { a: 20 });
        const url = m.manager.endpoints().webhook ?? '';
        const answers = await onClock(
          env,
          Promise.all(
            pods.map((p) =>
              forge(url, '/validate-pod', { uid: reviewUid(), kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, namespace: ns, name: p.metadata.name, operation: 'DELETE', oldObject: p, object: null }),
            ),
          ),
        );
        assert.ok(answers.every((a) => a.allowed === true), JSON.stringify(answers.slice(0, 2)));
        // The next scale-up, right away (the bookings are at most seconds old).
        await scale(ns, 40);
        await env.cluster.settle();
        const after = active(await podsOf(env.cluster.client, ns));
        const counts = countBySubset(after);
        assert.equal(counts['a'], 20, `no pod above a's limit: ${JSON.stringify(counts)}`);
        assert.equal(after.length, 40);
        const ws: WorkloadSpread = await readSpread(env.cluster.client, ns, 'spread');
        assert.deepEqual(ws.status?.subsetStatuses?.map((s) => [s.name, s.replicas]), [['a', 20], ['b', 20]]);
      } finally {
        await stopOnClock(env, m.manager);
      }
    });

    test('without client authentication: 75 forged CREATE reviews that do not know the ReplicaSet\'s uid reserve nothing; a pod that does not exist is not booked', async () => {
      const m = await startTestManager(env, { name: 'open-create', clientAuth: false, leaderElection: false });
      try {
        const ns = await env.namespace('forged-create');
        await limitedSpread(ns, 0);
        const rs = (await env.cluster.client.list<KubeObject>(BUILTIN.replicasets, { namespace: ns })).items[0];
        assert.ok(rs);
        const url = m.manager.endpoints().webhook ?? '';
        const podOf = (uid: string) => ({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { generateName: 'web-', namespace: ns, labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata?.name, uid, controller: true }] },
          spec: { containers: [{ name: 'main', image: 'nginx' }] },
        });
        const answers = await onClock(
          env,
          Promise.all(
            Array.from({ length: 75 }, () =>
              forge(url, '/mutate-pod', { uid: reviewUid(), kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, namespace: ns, operation: 'CREATE', object: podOf('guessed-uid'), oldObject: null }),
            ),
          ),
        );
        assert.ok(answers.every((a) => a.allowed === false && /uid "guessed-uid"/.test(a.message ?? '')), JSON.stringify(answers[0]));
        const deleteOfNobody = await onClock(
          env,
          forge(url, '/validate-pod', {
            uid: reviewUid(),
            kind: { group: '', version: 'v1', kind: 'Pod' },
            resource: { group: '', version: 'v1', resource: 'pods' },
            namespace: ns,
            name: 'web-made-up',
            operation: 'DELETE',
            oldObject: { ...podOf(rs.metadata?.uid ?? ''), metadata: { name: 'web-made-up', namespace: ns, uid: 'made-up', annotations: { 'apps.kruise.io/matched-workloadspread': '{"name":"spread","subset":"a"}' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata?.name, uid: rs.metadata?.uid, controller: true }] } },
            object: null,
          }),
        );
        assert.equal(deleteOfNobody.allowed, true);
        const ws: WorkloadSpread = await readSpread(env.cluster.client, ns, 'spread');
        const versions = Object.values(ws.status?.versionedSubsetStatuses ?? {}).flat();
        assert.deepEqual(versions.flatMap((s) => [...Object.keys(s.creatingPods ?? {}), ...Object.keys(s.deletingPods ?? {})]), [], 'nothing reserved, nothing booked');
        await scale(ns, 25);
        await env.cluster.settle();
        assert.deepEqual(countBySubset(active(await podsOf(env.cluster.client, ns))), { a: 20, b: 5 }, 'real pods fill the limited subset first');
      } finally {
        await stopOnClock(env, m.manager);
      }
    });

    test('with client authentication: a review without the API server\'s certificate is refused at the handshake, while the API server\'s calls place pods (the authenticated path end to end); no warning', async () => {
      const m = await startTestManager(env, { name: 'closed', leaderElection: false });
      try {
        assert.equal(m.log.lines.filter((l) => /does not authenticate its callers/.test(l.message)).length, 0);
        const url = m.manager.endpoints().webhook ?? '';
        await assert.rejects(forge(url, '/mutate-pod', { uid: reviewUid(), operation: 'CREATE' }), (err) => /socket hang up|ECONNRESET|certificate|alert/i.test(describeError(err)));
        const ns = await env.namespace('authenticated');
        await limitedSpread(ns, 24);
        assert.deepEqual(countBySubset(active(await podsOf(env.cluster.client, ns))), { a: 20, b: 4 });
      } finally {
        await stopOnClock(env, m.manager);
      }
    });
  });

  describe('finding 2: a chunked request body is never cut off (manager endpoints, embedded API server)', () => {
    test('the metrics and health endpoints close an endless upload after answering; a 10 GB Content-Length gets 413', async () => {
      const m = await startTestManager(env, { name: 'bodies', leaderElection: false });
      try {
        const ends = m.manager.endpoints();
        for (const base of [ends.metrics ?? '', ends.health ?? '']) {
          const endless = await uploadUntilStopped(base, { method: 'GET', path: base === ends.metrics ? '/metrics' : '/healthz', keepSending: true });
          assert.ok(endless.closedByServer, `${base}: closed`);
          assert.ok(endless.bytesSent < 64 * 1024 * 1024, `${base}: ${endless.bytesSent} bytes sent`);
          const declared = await uploadUntilStopped(base, { method: 'POST', path: '/healthz', contentLength: 10 * 1024 ** 3, keepSending: true });
          assert.equal(declared.status, 413);
          assert.ok(declared.bytesSent < 64 * 1024 * 1024);
        }
      } finally {
        await stopOnClock(env, m.manager);
      }
    });

    test('the embedded API server answers an endless chunked create 413 and closes the connection; a 10 GB Content-Length too', async () => {
      const server = env.cluster.apiServer;
      const path = '/api/v1/namespaces/default/configmaps';
      const endless = await uploadUntilStopped(server.url, { path, ca: server.caPem, token: server.token, keepSending: true });
      assert.equal(endless.status, 413);
      assert.ok(endless.closedByServer);
      assert.ok(endless.bytesSent < 64 * 1024 * 1024, `${endless.bytesSent} bytes sent`);
      const declared = await uploadUntilStopped(server.url, { path, ca: server.caPem, contentLength: 10 * 1024 ** 3, keepSending: true });
      assert.equal(declared.status, 413, 'refused before authentication is even looked at');
      assert.match(declared.body, /"reason":"RequestEntityTooLarge"/);
      const anonymous = await uploadUntilStopped(server.url, { path, ca: server.caPem, keepSending: true });
      assert.equal(anonymous.status, 403, 'the anonymous user may not create ConfigMaps');
      assert.ok(anonymous.closedByServer && anonymous.bytesSent < 64 * 1024 * 1024, 'an unauthorized endless upload is not read on either');
    });
  });

  describe('finding 3: a subset patch can change what the pod is', () => {
    test('the webhook refuses metadata.namespace and metadata.name, and hostNetwork/serviceAccountName/privileged unless the manager allows them', async () => {
      const m = await startTestManager(env, { name: 'patches', leaderElection: false });
      try {
        const ns = await env.namespace('patch-refused');
        const create = (patch: Record<string, unknown>) =>
          env.cluster.client.create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, `p-${++seq}`, { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: `w-${seq}` }, subsets: [{ name: 'a', patch }] }));
        await assert.rejects(create({ metadata: { namespace: 'kube-system' } }), /spec\.subsets\[0\]\.patch\.metadata\.namespace: Forbidden/);
        await assert.rejects(create({ metadata: { name: 'x' } }), /spec\.subsets\[0\]\.patch\.metadata\.name: Forbidden/);
        for (const spec of [{ hostNetwork: true }, { serviceAccountName: 'admin' }, { containers: [{ name: 'main', securityContext: { privileged: true } }] }]) {
          await assert.rejects(create({ spec }), /Forbidden: .*--allow-privileged-subset-patches/);
        }
        await create({ spec: { containers: [{ name: 'main', image: 'nginx:arm64' }] } });
      } finally {
        await stopOnClock(env, m.manager);
      }
    });

    test('a WorkloadSpread stored before the rule with metadata.namespace: kube-system places pods in their own namespace, without the patch, with a Warning; the ReplicaSet does not stall', async () => {
      const ns = await env.namespace('patch-stored');
      // Stored while no webhook validated it (the configurations of the managers stopped before are removed; the next one registers them again).
      for (const ref of [BUILTIN.validatingwebhookconfigurations, BUILTIN.mutatingwebhookconfigurations]) {
        for (const c of (await env.cluster.client.list<KubeObject>(ref)).items) await env.cluster.client.delete(ref, c.metadata?.name ?? '');
      }
      await env.clock.quiesce();
      await env.cluster.client.create(
        WORKLOADSPREAD_REF,
        workloadSpreadObject(ns, 'spread', {
          targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          subsets: [{ name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 2, patch: { metadata: { namespace: 'kube-system', labels: { moved: 'yes' } } } }, { name: 'b' }],
        }),
      );
      const m = await startTestManager(env, { name: 'stored-patch', leaderElection: false });
      try {
        await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 3));
        await env.cluster.settle();
        const pods = active(await podsOf(env.cluster.client, ns));
        assert.equal(pods.length, 3);
        assert.deepEqual(countBySubset(pods), { a: 2, b: 1 });
        assert.ok(pods.every((p) => p.metadata.labels?.['moved'] === undefined));
        const inKubeSystem = (await env.cluster.client.list<Pod>(BUILTIN.pods, { namespace: 'kube-system' })).items.filter((p) => p.metadata.name?.startsWith('web-'));
        assert.deepEqual(inKubeSystem, []);
        const events = (await env.cluster.client.list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'SubsetPatchRefused');
        assert.ok(events.length > 0 && /changes metadata\.namespace/.test(String(events[0]?.['note'] ?? '')), JSON.stringify(events[0]));
      } finally {
        await stopOnClock(env, m.manager);
      }
    });
  });

  describe('finding 4: two WorkloadSpreads on one workload', () => {
    test('created at the same moment, 30 times: whichever were accepted, exactly one counts (the older, then the name), the other is marked DuplicateTarget with a Warning, and every pod is placed by the one that counts', async (t) => {
      const m = await startTestManager(env, { name: 'duplicates', leaderElection: false });
      let bothAccepted = 0;
      try {
        for (let i = 0; i < 30; i++) {
          const ns = await env.namespace(`dup${i}`);
          await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 0));
          await env.clock.quiesce();
          const spec = (max: number): WorkloadSpread['spec'] => ({
            targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
            subsets: [{ name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: max }, { name: 'b', requiredNodeSelectorTerm: zoneTerm('b') }],
          });
          // Names in both orders of the alphabet, so neither the name nor the order of creation alone decides every try.
          const [first, second] = i % 2 === 0 ? ['zeta', 'alpha'] : ['alpha', 'zeta'];
          const results = await Promise.allSettled([
            env.cluster.client.create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, first as string, spec(1))),
            env.cluster.client.create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, second as string, spec(2))),
          ]);
          const accepted = results.filter((r) => r.status === 'fulfilled').length;
          assert.ok(accepted >= 1, JSON.stringify(results));
          for (const r of results) if (r.status === 'rejected') assert.match(describeError(r.reason), /in conflict with other WorkloadSpread/);
          if (accepted === 2) bothAccepted++;
          await env.cluster.settle();
          await scale(ns, 4);
          await env.cluster.settle();

          const spreads = (await env.cluster.client.list<WorkloadSpread>(WORKLOADSPREAD_REF, { namespace: ns })).items;
          const ordered = [...spreads].sort((x, y) => (x.metadata?.creationTimestamp ?? '').localeCompare(y.metadata?.creationTimestamp ?? '') || (x.metadata?.name ?? '').localeCompare(y.metadata?.name ?? ''));
          const winner = ordered[0] as WorkloadSpread;
          const duplicate = (w: WorkloadSpread) => (w.status?.conditions ?? []).some((c) => c.type === 'DuplicateTarget' && c.status === 'True');
          assert.equal(duplicate(winner), false, `try ${i}: the winner ${winner.metadata?.name} is not marked`);
          for (const loser of ordered.slice(1)) {
            assert.equal(duplicate(loser), true, `try ${i}: ${loser.metadata?.name} is marked DuplicateTarget`);
            assert.equal(loser.status?.subsetStatuses, undefined);
          }
          const pods = active(await podsOf(env.cluster.client, ns));
          assert.equal(pods.length, 4);
          for (const p of pods) {
            const marker = JSON.parse(p.metadata.annotations?.['apps.kruise.io/matched-workloadspread'] ?? '{}') as { name?: string };
            assert.equal(marker.name, winner.metadata?.name, `try ${i}: ${p.metadata.name} placed by the winner`);
          }
          const max = winner.metadata?.name === first ? 1 : 2;
          assert.deepEqual(countBySubset(pods), { a: max, b: 4 - max }, `try ${i}: the winner's limits`);
          if (ordered.length === 2) {
            const warnings = (await env.cluster.client.list<KubeObject>(BUILTIN.eventsV1, { namespace: ns })).items.filter((e) => e['reason'] === 'DuplicateTarget' && e['type'] === 'Warning');
            assert.ok(warnings.length > 0, `try ${i}: a DuplicateTarget Warning`);
            // Deleting the winner hands the workload to the duplicate.
            if (i === 0) {
              await env.cluster.client.delete(WORKLOADSPREAD_REF, winner.metadata?.name ?? '', { namespace: ns });
              await env.cluster.settle();
              const taken = await readSpread(env.cluster.client, ns, ordered[1]?.metadata?.name ?? '');
              assert.equal(duplicate(taken), false, 'the duplicate counts once the winner is gone');
              assert.ok((taken.status?.subsetStatuses ?? []).length === 2);
            }
          }
        }
        t.diagnostic(`both WorkloadSpreads accepted in ${bothAccepted} of 30 tries`);
      } finally {
        await stopOnClock(env, m.manager);
      }
    });
  });

  describe('finding 5: numbers and sizes (the cluster)', () => {
    test('maxReplicas 1e30 and 1,000 subsets are refused with the field named', async () => {
      const m = await startTestManager(env, { name: 'numbers', leaderElection: false });
      try {
        const ns = await env.namespace('numbers');
        const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
        await assert.rejects(env.cluster.client.create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, 'huge', { targetRef: target, subsets: [{ name: 'a', maxReplicas: 1e30 }, { name: 'b' }] })), /spec\.subsets\[0\]\.maxReplicas/);
        const many = Array.from({ length: 1000 }, (_, i) => ({ name: `s${i}`, maxReplicas: 1 }));
        await assert.rejects(env.cluster.client.create(WORKLOADSPREAD_REF, workloadSpreadObject(ns, 'many', { targetRef: target, subsets: many })), /spec\.subsets: Too many: 1000: must have at most 100 items/);
      } finally {
        await stopOnClock(env, m.manager);
      }
    });
  });

  describe('finding 6: TLS 1.2 also offers CBC suites without forward secrecy (embedded API server)', () => {
    test('a client offering only AES128-SHA or AES256-SHA256 is refused; ECDHE + GCM is served; a modern client gets TLS 1.3', async () => {
      const server = env.cluster.apiServer;
      for (const cipher of ['AES128-SHA', 'AES256-SHA256', 'ECDHE-RSA-AES128-SHA']) {
        const out = await tlsHandshake(server.port, { ca: server.caPem, ciphers: cipher, maxVersion: 'TLSv1.2' });
        assert.equal(out.ok, false, `${cipher}: negotiated ${out.cipher ?? ''}`);
      }
      const gcm = await tlsHandshake(server.port, { ca: server.caPem, ciphers: 'ECDHE-RSA-AES128-GCM-SHA256', maxVersion: 'TLSv1.2' });
      assert.deepEqual([gcm.ok, gcm.protocol], [true, 'TLSv1.2']);
      const modern = await tlsHandshake(server.port, { ca: server.caPem });
      assert.deepEqual([modern.ok, modern.protocol], [true, 'TLSv1.3']);
    });
  });
});

