import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { memoryLogger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import type { KubeObject } from '../k8s/types.ts';
import { startClientTestBed, testBedCertificate, type ClientTestBed } from '../testing/client-test-bed.ts';
import { supportsMatchConditions, withNamespaceAdded, withSkipTerminating } from './configuration-keeper.ts';
import {
  containsFields,
  MUTATING_CONFIGURATION_NAME,
  namespacesRequirement,
  podWebhookNamespaces,
  registerWebhooks,
  VALIDATING_CONFIGURATION_NAME,
  WEBHOOK_NAMES,
  webhookConfigurations,
  withManagedRequirement,
  type WebhookConfigurations,
} from './registration.ts';

type Webhook = Record<string, unknown> & { name: string; clientConfig: Record<string, unknown>; rules: Record<string, unknown>[] };
const webhooks = (obj: KubeObject): Webhook[] => obj['webhooks'] as Webhook[];

describe('webhookConfigurations (pure)', () => {
  const url = webhookConfigurations({ managerNamespace: 'workloadspread-system', endpoint: { url: 'https://127.0.0.1:9443/' }, caBundle: 'PEM' });

  test('the mutating configuration: pods CREATE on /mutate-pod', () => {
    const [mpod] = webhooks(url.mutating);
    assert.equal(url.mutating.metadata?.name, MUTATING_CONFIGURATION_NAME);
    assert.equal(mpod?.name, WEBHOOK_NAMES.mutatePod);
    assert.deepEqual(mpod?.rules, [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }]);
    assert.equal(mpod?.clientConfig['url'], 'https://127.0.0.1:9443/mutate-pod');
  });

  test('the validating configuration: pods DELETE, pods/eviction CREATE, workloadspreads and domaindisruptionbudgets CREATE/UPDATE', () => {
    const hooks = webhooks(url.validating);
    assert.equal(url.validating.metadata?.name, VALIDATING_CONFIGURATION_NAME);
    assert.deepEqual(
      hooks.map((h) => [h.name, h.rules[0]?.['operations'], h.rules[0]?.['resources'], h.clientConfig['url']]),
      [
        [WEBHOOK_NAMES.validatePod, ['DELETE'], ['pods'], 'https://127.0.0.1:9443/validate-pod'],
        [WEBHOOK_NAMES.validatePodEviction, ['CREATE'], ['pods/eviction'], 'https://127.0.0.1:9443/validate-pod'],
        [WEBHOOK_NAMES.validateWorkloadSpread, ['CREATE', 'UPDATE'], ['workloadspreads'], 'https://127.0.0.1:9443/validate-apps-kruise-io-workloadspread'],
        [WEBHOOK_NAMES.validateDomainDisruptionBudget, ['CREATE', 'UPDATE'], ['domaindisruptionbudgets'], 'https://127.0.0.1:9443/validate-policy-workloadspread-io-domaindisruptionbudget'],
      ],
    );
    assert.deepEqual(hooks[2]?.rules[0]?.['apiGroups'], ['apps.kruise.io']);
    assert.deepEqual(hooks[3]?.rules[0]?.['apiGroups'], ['policy.workloadspread.io']);
    assert.deepEqual(hooks[3]?.['namespaceSelector'], {});
  });

  test('every webhook: Fail, NoneOnDryRun, v1 reviews, 10 s, the CA bundle base64-encoded', () => {
    for (const h of [...webhooks(url.mutating), ...webhooks(url.validating)]) {
      assert.equal(h['failurePolicy'], 'Fail', h.name);
      assert.equal(h['sideEffects'], 'NoneOnDryRun', h.name);
      assert.deepEqual(h['admissionReviewVersions'], ['v1'], h.name);
      assert.equal(h['timeoutSeconds'], 10, h.name);
      assert.equal(h.clientConfig['caBundle'], Buffer.from('PEM').toString('base64'), h.name);
    }
  });

  test("pod webhooks leave out the manager's namespace and kube-system; the WorkloadSpread webhook sees every namespace", () => {
    const selector = { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['workloadspread-system', 'kube-system'] }] };
    const [vpod, vevict, vws] = webhooks(url.validating);
    assert.deepEqual(webhooks(url.mutating)[0]?.['namespaceSelector'], selector);
    assert.deepEqual(vpod?.['namespaceSelector'], selector);
    assert.deepEqual(vevict?.['namespaceSelector'], selector);
    assert.deepEqual(vws?.['namespaceSelector'], {});
  });

  test('a service reference instead of a URL; no caBundle when none is given', () => {
    const svc = webhookConfigurations({ managerNamespace: 'kube-system', endpoint: { service: { name: 'workloadspread-webhook', namespace: 'kube-system' } } });
    const [mpod] = webhooks(svc.mutating);
    assert.deepEqual(mpod?.clientConfig, { service: { namespace: 'kube-system', name: 'workloadspread-webhook', path: '/mutate-pod', port: 443 } });
    assert.deepEqual(mpod?.['namespaceSelector'], { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }] });
  });

  test('D21: the pod DELETE webhook selects managed pods only, unless --guard-pod-deletion; evictions are never filtered', () => {
    const byName = (c: WebhookConfigurations) => new Map(webhooks(c.validating).map((h) => [h['name'], h['objectSelector']]));
    const plain = byName(url);
    assert.deepEqual(plain.get(WEBHOOK_NAMES.validatePod), { matchLabels: { 'workloadspread.io/managed': 'true' } });
    assert.deepEqual(plain.get(WEBHOOK_NAMES.validatePodEviction), {}, 'the API server would match it against the Eviction, not the pod');
    assert.deepEqual(webhooks(url.mutating)[0]?.['objectSelector'], {}, 'a new pod has no label yet');
    const guarded = byName(webhookConfigurations({ managerNamespace: 'ws-system', endpoint: { url: 'https://127.0.0.1:9443' }, guardPodDeletion: true }));
    assert.deepEqual(guarded.get(WEBHOOK_NAMES.validatePod), {});
  });

  test('containsFields ignores fields the server added, not changed ones', () => {
    assert.equal(containsFields({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 2 } }), true);
    assert.equal(containsFields({ a: 1 }, { a: 2 }), false);
    assert.equal(containsFields([{ a: 1, x: 0 }], [{ a: 1 }]), true);
    assert.equal(containsFields([{ a: 1 }, { a: 2 }], [{ a: 1 }]), false);
    // Selectors are compared whole: a stored selector with more in it is a change.
    assert.equal(containsFields({ objectSelector: { matchLabels: { x: 'y' } } }, { objectSelector: {} }), false);
    assert.equal(containsFields({ objectSelector: {} }, { objectSelector: {} }), true);
  });
});

describe('registerWebhooks against the API server', () => {
  const clock = new VirtualClock();
  let bed: ClientTestBed;
  before(async () => {
    bed = await startClientTestBed(clock, testBedCertificate());
  });
  after(async () => bed.close());

  test('creates, then is idempotent, then updates a changed endpoint and keeps a caBundle it does not own', async () => {
    const first = webhookConfigurations({ managerNamespace: 'ws-system', endpoint: { url: 'https://127.0.0.1:9443' } });
    assert.deepEqual(await registerWebhooks(bed.client, first), { mutating: 'created', validating: 'created' });
    const writes = (): number => bed.server.control.requestCount({ verb: 'update' }) + bed.server.control.requestCount({ verb: 'create' });
    const before = writes();
    assert.deepEqual(await registerWebhooks(bed.client, first), { mutating: 'unchanged', validating: 'unchanged' });
    assert.equal(writes(), before, 'no write when nothing changed');

    // The certificate manager set a caBundle meanwhile.
    const stored = await bed.client.get(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME);
    const hooks = webhooks(stored).map((h) => ({ ...h, clientConfig: { ...h.clientConfig, caBundle: 'Q0E=' } }));
    await bed.client.update(BUILTIN.mutatingwebhookconfigurations, { ...stored, webhooks: hooks });

    const moved = webhookConfigurations({ managerNamespace: 'ws-system', endpoint: { url: 'https://127.0.0.1:9555' } });
    assert.deepEqual(await registerWebhooks(bed.client, moved), { mutating: 'updated', validating: 'updated' });
    const after = await bed.client.get(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME);
    const [mpod] = webhooks(after);
    assert.equal(mpod?.clientConfig['url'], 'https://127.0.0.1:9555/mutate-pod');
    assert.equal(mpod?.clientConfig['caBundle'], 'Q0E=');
  });

  test('turning --guard-pod-deletion on and off rewrites the pod DELETE selector', async () => {
    const options = { managerNamespace: 'ws-guard', endpoint: { url: 'https://127.0.0.1:9443' } };
    await registerWebhooks(bed.client, webhookConfigurations(options));
    const selector = async () => webhooks(await bed.client.get(BUILTIN.validatingwebhookconfigurations, VALIDATING_CONFIGURATION_NAME)).find((h) => h['name'] === WEBHOOK_NAMES.validatePod)?.['objectSelector'];
    assert.deepEqual(await selector(), { matchLabels: { 'workloadspread.io/managed': 'true' } });
    assert.equal((await registerWebhooks(bed.client, webhookConfigurations({ ...options, guardPodDeletion: true }))).validating, 'updated');
    assert.deepEqual(await selector(), {});
    assert.equal((await registerWebhooks(bed.client, webhookConfigurations(options))).validating, 'updated');
    assert.deepEqual(await selector(), { matchLabels: { 'workloadspread.io/managed': 'true' } });
  });
});

describe('registration leaves installer-owned configurations alone', () => {
  const clock = new VirtualClock();
  let bed: ClientTestBed;
  before(async () => {
    bed = await startClientTestBed(clock, testBedCertificate());
  });
  after(async () => bed.close());

  for (const [owner, annotations] of [
    ['Helm release ws', { 'meta.helm.sh/release-name': 'ws', 'meta.helm.sh/release-namespace': 'ws-system' }],
    ['kubectl apply', { 'kubectl.kubernetes.io/last-applied-configuration': '{}' }],
  ] as const) {
    test(`a configuration of ${owner} keeps its service reference: no url beside it`, async () => {
      const installed = webhookConfigurations({ managerNamespace: 'ws-system', endpoint: { service: { name: 'workloadspread-webhook', namespace: 'ws-system' } } });
      for (const [ref, obj] of [[BUILTIN.mutatingwebhookconfigurations, installed.mutating], [BUILTIN.validatingwebhookconfigurations, installed.validating]] as const) {
        await bed.client.delete(ref, obj.metadata?.name ?? '').catch(() => undefined);
        await bed.client.create(ref, { ...obj, metadata: { ...obj.metadata, annotations } });
      }
      const log = memoryLogger();
      const byUrl = webhookConfigurations({ managerNamespace: 'ws-system', endpoint: { url: 'https://127.0.0.1:9443' } });
      assert.deepEqual(await registerWebhooks(bed.client, byUrl, log), { mutating: 'installer-owned', validating: 'installer-owned' });
      for (const hook of webhooks(await bed.client.get(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME))) {
        assert.equal(hook.clientConfig['url'], undefined);
        assert.deepEqual(hook.clientConfig['service'], { namespace: 'ws-system', name: 'workloadspread-webhook', path: '/mutate-pod', port: 443 });
      }
      assert.ok(log.lines.some((l) => l.level === 'warn' && l.message.includes(`belongs to ${owner}`)), JSON.stringify(log.lines));
    });
  }
});

describe('the namespaces scope: the managed requirement', () => {
  const NAME = 'kubernetes.io/metadata.name';
  test('namespacesRequirement: sorted, unique, excluded left out; DoesNotExist (no namespace) when none remains', () => {
    assert.deepEqual(namespacesRequirement(['b', 'a', 'b', '', 'kube-system'], ['kube-system']), { key: NAME, operator: 'In', values: ['a', 'b'] });
    assert.deepEqual(namespacesRequirement(['kube-system'], ['kube-system']), { key: NAME, operator: 'DoesNotExist' });
    assert.deepEqual(namespacesRequirement([]), { key: NAME, operator: 'DoesNotExist' });
  });

  test('withManagedRequirement replaces only the managed requirement, keeps the others and matchLabels, appends when absent', () => {
    const notIn = { key: NAME, operator: 'NotIn', values: ['kube-system'] };
    const mine = { key: 'team', operator: 'In', values: ['x'] };
    const managed = { key: NAME, operator: 'In', values: ['a'] };
    assert.deepEqual(withManagedRequirement({ matchLabels: { l: 'v' }, matchExpressions: [notIn, { key: NAME, operator: 'DoesNotExist' }, mine] }, managed), { matchLabels: { l: 'v' }, matchExpressions: [notIn, managed, mine] });
    assert.deepEqual(withManagedRequirement({ matchExpressions: [notIn] }, managed), { matchExpressions: [notIn, managed] });
    assert.deepEqual(withManagedRequirement(undefined, managed), { matchExpressions: [managed] });
    // A second managed requirement (written by hand) is dropped, not left to narrow the selector.
    assert.deepEqual(withManagedRequirement({ matchExpressions: [managed, { key: NAME, operator: 'In', values: ['z'] }] }, { key: NAME, operator: 'In', values: ['b'] }), { matchExpressions: [{ key: NAME, operator: 'In', values: ['b'] }] });
  });

  test('withNamespaceAdded adds to In, turns DoesNotExist into In, and leaves present or excluded namespaces alone', () => {
    const sel = (e: unknown) => ({ matchExpressions: [e] });
    assert.deepEqual(withNamespaceAdded(sel({ key: NAME, operator: 'In', values: ['b'] }), 'a', []), sel({ key: NAME, operator: 'In', values: ['a', 'b'] }));
    assert.deepEqual(withNamespaceAdded(sel({ key: NAME, operator: 'DoesNotExist' }), 'a', []), sel({ key: NAME, operator: 'In', values: ['a'] }));
    const same = sel({ key: NAME, operator: 'In', values: ['a'] });
    assert.equal(withNamespaceAdded(same, 'a', []), same);
    assert.equal(withNamespaceAdded(same, 'kube-system', ['kube-system']), same);
  });

  test('which pod webhooks see which namespaces; the configurations render the requirement after the exclusions', () => {
    const scope = { kind: 'namespaces' as const, workloadSpreads: ['ws'], budgets: ['ddb'] };
    assert.deepEqual(podWebhookNamespaces(scope, false), { [WEBHOOK_NAMES.mutatePod]: ['ws'], [WEBHOOK_NAMES.validatePod]: ['ws'], [WEBHOOK_NAMES.validatePodEviction]: ['ws', 'ddb'] });
    assert.deepEqual(podWebhookNamespaces(scope, true)[WEBHOOK_NAMES.validatePod], ['ws', 'ddb']);
    const built = webhookConfigurations({ managerNamespace: 'ops', endpoint: { url: 'https://h' }, scope });
    const hooks = [...webhooks(built.mutating), ...webhooks(built.validating)];
    const selectorOf = (name: string) => hooks.find((h) => h['name'] === name)?.['namespaceSelector'];
    assert.deepEqual(selectorOf(WEBHOOK_NAMES.mutatePod), { matchExpressions: [{ key: NAME, operator: 'NotIn', values: ['ops', 'kube-system'] }, { key: NAME, operator: 'In', values: ['ws'] }] });
    assert.deepEqual(selectorOf(WEBHOOK_NAMES.validatePodEviction), { matchExpressions: [{ key: NAME, operator: 'NotIn', values: ['ops', 'kube-system'] }, { key: NAME, operator: 'In', values: ['ddb', 'ws'] }] });
    assert.deepEqual(selectorOf(WEBHOOK_NAMES.validateWorkloadSpread), {});
  });
});

describe('the pod DELETE webhook\'s match condition', () => {
  test('added once, replacing a stale one of ours, others kept', () => {
    const ours = { name: 'skip-terminating-pods', expression: '!has(oldObject.metadata.deletionTimestamp)' };
    assert.deepEqual(withSkipTerminating({ name: 'w' })['matchConditions'], [ours]);
    const same = { name: 'w', matchConditions: [ours] };
    assert.equal(withSkipTerminating(same), same);
    const mine = { name: 'mine', expression: 'true' };
    assert.deepEqual(withSkipTerminating({ name: 'w', matchConditions: [{ name: 'skip-terminating-pods', expression: 'false' }, mine] })['matchConditions'], [mine, ours]);
  });

  test('API servers from 1.28 evaluate match conditions', () => {
    assert.equal(supportsMatchConditions({ major: '1', minor: '28' }), true);
    assert.equal(supportsMatchConditions({ major: '1', minor: '30+' }), true);
    assert.equal(supportsMatchConditions({ major: '1', minor: '27' }), false);
    assert.equal(supportsMatchConditions({ major: '', minor: '' }), false);
  });
});
