/**
 * Conformance: the built-in admission plug-ins a pod meets before the
 * webhooks — ServiceAccount, Priority and DefaultTolerationSeconds — with the
 * fields and error texts a real API server gives, through client-node.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { expectStatus, pod, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

let c: TestCluster;
let counter = 0;

before(async () => {
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
});
after(async () => {
  await c.close();
});

async function namespace(): Promise<string> {
  const ns = `builtin-${++counter}`;
  await c.core.createNamespace({ body: { metadata: { name: ns } } });
  return ns;
}

async function priorityClass(name: string, value: number, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await c.server.control.create({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value, ...extra });
  assert.ok(r.ok, r.ok ? '' : r.status.message);
}

const withSpec = (ns: string, name: string, spec: Partial<k8s.V1PodSpec>): k8s.V1Pod => ({ ...pod(name, { namespace: ns }), spec: { containers: [{ name: 'app', image: 'nginx:1.25' }], ...spec } });

describe('ServiceAccount', () => {
  test('a pod gets the default account, its alias, and the projected token volume mounted in every container', async () => {
    const ns = await namespace();
    const created = await c.core.createNamespacedPod({
      namespace: ns,
      body: withSpec(ns, 'p', { initContainers: [{ name: 'init', image: 'busybox' }], containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y' }] }),
    });
    assert.equal(created.spec?.serviceAccountName, 'default');
    assert.equal(created.spec?.serviceAccount, 'default');
    const volume = created.spec?.volumes?.find((v) => v.name.startsWith('kube-api-access-'));
    assert.ok(volume, 'a kube-api-access volume');
    assert.match(volume.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.deepEqual(JSON.parse(JSON.stringify(volume.projected)), {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    for (const container of [...(created.spec?.initContainers ?? []), ...(created.spec?.containers ?? [])]) {
      assert.deepEqual(JSON.parse(JSON.stringify(container.volumeMounts)), [{ name: volume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }], container.name);
    }
  });

  test('automountServiceAccountToken: false (on the pod or the account) mounts nothing; a container with its own mount there is left alone', async () => {
    const ns = await namespace();
    const off = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'off', { automountServiceAccountToken: false }) });
    assert.equal(off.spec?.volumes, undefined);
    await c.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'quiet' }, automountServiceAccountToken: false, imagePullSecrets: [{ name: 'registry' }] } });
    const quiet = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'quiet', { serviceAccountName: 'quiet' }) });
    assert.equal(quiet.spec?.volumes, undefined);
    assert.deepEqual(quiet.spec?.imagePullSecrets?.map((s) => s.name), ['registry'], "the account's pull secrets are copied");
    const own = await c.core.createNamespacedPod({
      namespace: ns,
      body: withSpec(ns, 'own', {
        volumes: [{ name: 'mine', emptyDir: {} }],
        containers: [
          { name: 'a', image: 'x', volumeMounts: [{ name: 'mine', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] },
          { name: 'b', image: 'x' },
        ],
      }),
    });
    assert.deepEqual(own.spec?.containers[0]?.volumeMounts?.map((m) => m.name), ['mine']);
    assert.match(own.spec?.containers[1]?.volumeMounts?.[0]?.name ?? '', /^kube-api-access-/);
  });

  test('a missing account is 403 with upstream text; the deprecated serviceAccount field is honoured', async () => {
    const ns = await namespace();
    const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'p', { serviceAccountName: 'ghost' }) }));
    assert.equal(s.code, 403);
    assert.equal(s.message, `pods "p" is forbidden: error looking up service account ${ns}/ghost: serviceaccount "ghost" not found`);
    await c.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'legacy' } } });
    const legacy = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'legacy', { serviceAccount: 'legacy' }) });
    assert.deepEqual([legacy.spec?.serviceAccountName, legacy.spec?.serviceAccount], ['legacy', 'legacy']);
  });

  test('a pod created right after its namespace finds the default account', async () => {
    const ns = `fresh-${++counter}`;
    await c.core.createNamespace({ body: { metadata: { name: ns } } });
    const created = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'first', {}) });
    assert.equal(created.spec?.serviceAccountName, 'default');
  });
});

describe('Priority', () => {
  test('no class: priority 0 and PreemptLowerPriority; a class: its value and policy; system classes exist', async () => {
    const ns = await namespace();
    const plain = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'plain', {}) });
    assert.deepEqual([plain.spec?.priorityClassName, plain.spec?.priority, plain.spec?.preemptionPolicy], [undefined, 0, 'PreemptLowerPriority']);
    await priorityClass(`${ns}-batch`, 50, { preemptionPolicy: 'Never' });
    const batch = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'batch', { priorityClassName: `${ns}-batch` }) });
    assert.deepEqual([batch.spec?.priority, batch.spec?.preemptionPolicy], [50, 'Never']);
    const critical = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'critical', { priorityClassName: 'system-cluster-critical' }) });
    assert.equal(critical.spec?.priority, 2000000000);
    const node = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'node', { priorityClassName: 'system-node-critical' }) });
    assert.equal(node.spec?.priority, 2000001000);
  });

  test('errors: unknown class, a priority that differs, a preemption policy that differs (403)', async () => {
    const ns = await namespace();
    await priorityClass(`${ns}-mid`, 500);
    const cases: [string, Partial<k8s.V1PodSpec>, string][] = [
      ['unknown', { priorityClassName: 'nope' }, 'pods "unknown" is forbidden: no PriorityClass with name nope was found'],
      [
        'given',
        { priorityClassName: `${ns}-mid`, priority: 7 },
        'pods "given" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 500 from the given PriorityClass name',
      ],
      [
        'policy',
        { priorityClassName: `${ns}-mid`, preemptionPolicy: 'Never' },
        'pods "policy" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name',
      ],
    ];
    for (const [name, spec, message] of cases) {
      const s = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, name, spec) }));
      assert.deepEqual([s.code, s.reason, s.message], [403, 'Forbidden', message], name);
    }
    const same = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'same', { priorityClassName: `${ns}-mid`, priority: 500 }) });
    assert.equal(same.spec?.priority, 500, 'a priority equal to the class value is accepted');
    const generated = await expectStatus(() => c.core.createNamespacedPod({ namespace: ns, body: { metadata: { generateName: 'gen-' }, spec: { priorityClassName: 'nope', containers: [{ name: 'a', image: 'x' }] } } }));
    assert.equal(generated.message, 'pods "gen-" is forbidden: no PriorityClass with name nope was found');
  });

  test('the globalDefault class applies to pods without one; only one class may be the default', async () => {
    const ns = await namespace();
    await priorityClass(`${ns}-default`, 300, { globalDefault: true });
    try {
      const p = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'p', {}) });
      assert.deepEqual([p.spec?.priorityClassName, p.spec?.priority], [`${ns}-default`, 300]);
      const s = await expectStatus(() => c.server.control.create({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: `${ns}-other` }, value: 1, globalDefault: true }).then((r) => (r.ok ? r.value : Promise.reject({ code: r.status.code, body: r.status }))));
      assert.equal(s.code, 403);
      assert.equal(s.message, `priorityclasses.scheduling.k8s.io "${ns}-other" is forbidden: PriorityClass ${ns}-default is already marked as default. Only one default can exist`);
    } finally {
      await c.server.control.delete('scheduling.k8s.io/v1', 'PriorityClass', '', `${ns}-default`);
    }
  });

  test('an update that leaves out priority keeps it', async () => {
    const ns = await namespace();
    await priorityClass(`${ns}-p`, 42);
    const created = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'p', { priorityClassName: `${ns}-p` }) });
    const spec = { ...created.spec } as k8s.V1PodSpec;
    delete spec.priority;
    const updated = await c.core.replaceNamespacedPod({ name: 'p', namespace: ns, body: { ...created, spec, metadata: { ...created.metadata, labels: { touched: 'yes' } } } });
    assert.deepEqual([updated.metadata?.labels?.['touched'], updated.spec?.priority], ['yes', 42]);
  });
});

describe('DefaultTolerationSeconds', () => {
  test('not-ready and unreachable NoExecute tolerations of 300 s are added unless already tolerated', async () => {
    const ns = await namespace();
    const plain = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'plain', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoSchedule' }] }) });
    assert.deepEqual(JSON.parse(JSON.stringify(plain.spec?.tolerations)), [
      { key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
    const own = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'own', { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }] }) });
    assert.deepEqual(own.spec?.tolerations?.map((t) => `${t.key}:${t.tolerationSeconds}`), ['node.kubernetes.io/unreachable:10', 'node.kubernetes.io/not-ready:300']);
    const everything = await c.core.createNamespacedPod({ namespace: ns, body: withSpec(ns, 'all', { tolerations: [{ operator: 'Exists' }] }) });
    assert.deepEqual(JSON.parse(JSON.stringify(everything.spec?.tolerations)), [{ operator: 'Exists' }], 'an empty key and effect tolerate both');
  });
});
