/**
 * Webhook configurations as the API server takes them: upstream's defaults
 * and its 422 messages for the common mistakes, over HTTP with client-node;
 * and the parsed form the dispatcher uses.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { base64Problem, webhooksOf } from './webhook-configuration.ts';
import { expectStatus, startTestCluster, testCertificate, type TestCluster } from '../../testing/apiserver-bed.ts';

let c: TestCluster;
let admission: k8s.AdmissionregistrationV1Api;

before(async () => {
  c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
  admission = c.kc.makeApiClient(k8s.AdmissionregistrationV1Api);
});
after(async () => {
  await c.close();
});

const good = (): Record<string, unknown> => ({
  name: 'pods.hooks.example.com',
  admissionReviewVersions: ['v1'],
  sideEffects: 'None',
  clientConfig: { url: 'https://127.0.0.1:9443/mutate' },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
});

async function rejected(webhook: Record<string, unknown>, extra: Record<string, unknown>[] = []): Promise<string> {
  const s = await expectStatus(() =>
    admission.createMutatingWebhookConfiguration({ body: { metadata: { name: 'bad' }, webhooks: [webhook, ...extra] as unknown as k8s.V1MutatingWebhook[] } }),
  );
  assert.equal(s.code, 422, s.message);
  return (s.message ?? '').replace('MutatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid: ', '');
}

describe('validation (422 with upstream messages)', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['name with two segments', { name: 'hooks.example' }, 'webhooks[0].name: Invalid value: "hooks.example": should be a domain with at least three segments separated by dots'],
    ['name missing', { name: '' }, 'webhooks[0].name: Required value'],
    [
      'name not a DNS subdomain',
      { name: 'Pods.Example.com' },
      `webhooks[0].name: Invalid value: "Pods.Example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ],
    ['no clientConfig', { clientConfig: {} }, 'webhooks[0].clientConfig: Required value: exactly one of url or service is required'],
    ['url and service', { clientConfig: { url: 'https://a.example.com', service: { name: 's', namespace: 'n' } } }, 'webhooks[0].clientConfig: Required value: exactly one of url or service is required'],
    ['http url', { clientConfig: { url: 'http://a.example.com/x' } }, `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`],
    ['url with a query', { clientConfig: { url: 'https://a.example.com/x?y=1' } }, 'webhooks[0].clientConfig.url: Invalid value: "y=1": query parameters are not permitted in the URL'],
    ['service without namespace', { clientConfig: { service: { name: 's' } } }, 'webhooks[0].clientConfig.service.namespace: Required value: service namespace is required'],
    // Upstream drops the first character before splitting, whatever it is: hence the second error.
    [
      'service path without /',
      { clientConfig: { service: { name: 's', namespace: 'n', path: 'x' } } },
      `[webhooks[0].clientConfig.service.path: Invalid value: "x": must start with a '/', webhooks[0].clientConfig.service.path: Invalid value: "x": segment[0] may not be empty]`,
    ],
    ['service path with an empty segment', { clientConfig: { service: { name: 's', namespace: 'n', path: '/a//b' } } }, 'webhooks[0].clientConfig.service.path: Invalid value: "/a//b": segment[1] may not be empty'],
    ['bad failurePolicy', { failurePolicy: 'Sometimes' }, 'webhooks[0].failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"'],
    ['bad matchPolicy', { matchPolicy: 'Loose' }, 'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"'],
    ['sideEffects missing', { sideEffects: undefined }, 'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun'],
    ['sideEffects Some', { sideEffects: 'Some' }, 'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'],
    ['timeout too long', { timeoutSeconds: 31 }, 'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds'],
    ['reinvocationPolicy', { reinvocationPolicy: 'Always' }, 'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"'],
    ['admissionReviewVersions missing', { admissionReviewVersions: [] }, 'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1'],
    ['admissionReviewVersions without v1', { admissionReviewVersions: ['v2'] }, 'webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1'],
    ['rule without operations', { rules: [{ operations: [], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }, 'webhooks[0].rules[0].operations: Required value'],
    ['rule with a bad operation', { rules: [{ operations: ['PATCH'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }, 'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"'],
    ['rule with a bad scope', { rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Global' }] }, 'webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"'],
  ];
  for (const [name, patch, message] of cases) {
    test(name, async () => {
      const webhook = { ...good(), ...patch };
      for (const [k, v] of Object.entries(patch)) if (v === undefined) delete webhook[k];
      assert.equal(await rejected(webhook), message);
    });
  }
  test('duplicate webhook names', async () => {
    assert.equal(await rejected(good(), [good()]), 'webhooks[1].name: Duplicate value: "pods.hooks.example.com"');
  });
  test('a caBundle that is not base64 is a decode error (400)', async () => {
    const s = await expectStatus(() =>
      admission.createMutatingWebhookConfiguration({ body: { metadata: { name: 'b64' }, webhooks: [{ ...good(), clientConfig: { url: 'https://a.example.com', caBundle: 'not base64!' } }] as unknown as k8s.V1MutatingWebhook[] } }),
    );
    assert.equal(s.code, 400);
    assert.match(s.message ?? '', /illegal base64 data at input byte 3$/);
  });
});

describe('matchConditions (422 with upstream paths and messages)', () => {
  const mc = (...conditions: { name: string; expression: string }[]) => ({ ...good(), matchConditions: conditions });
  const cases: [string, Record<string, unknown>, string][] = [
    ['name missing', mc({ name: '', expression: 'true' }), 'webhooks[0].matchConditions[0].name: Required value'],
    [
      'name not a qualified name',
      mc({ name: 'not ok!', expression: 'true' }),
      `webhooks[0].matchConditions[0].name: Invalid value: "not ok!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    ],
    ['duplicate names', mc({ name: 'a', expression: 'true' }, { name: 'a', expression: 'false' }), 'webhooks[0].matchConditions[1].name: Duplicate value: "a"'],
    ['expression missing', mc({ name: 'a', expression: '  ' }), 'webhooks[0].matchConditions[0].expression: Required value'],
    [
      'expression that does not compile',
      mc({ name: 'a', expression: 'object.metadata.name ==' }),
      'webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:24: Unexpected token: EOF\n | object.metadata.name ==\n | .......................^',
    ],
    [
      'an undeclared variable (webhooks have no params)',
      mc({ name: 'a', expression: 'params.x == 1' }),
      "webhooks[0].matchConditions[0].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
    ],
    [
      'a field AdmissionRequest does not have',
      mc({ name: 'a', expression: 'request.uid == "x"' }),
      "webhooks[0].matchConditions[0].expression: Invalid value: \"request.uid == \\\"x\\\"\": compilation failed: ERROR: <input>:1:9: undefined field 'uid'\n | request.uid == \"x\"\n | ........^",
    ],
    ['an expression that is not bool', mc({ name: 'a', expression: 'object.metadata.name' }), 'webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name": must evaluate to bool but got dyn'],
    ['an int expression', mc({ name: 'a', expression: '1 + 2' }), 'webhooks[0].matchConditions[0].expression: Invalid value: "1 + 2": must evaluate to bool but got int'],
    [
      'a Kubernetes CEL library this server lacks',
      mc({ name: 'a', expression: 'quantity("1Gi").isGreaterThan(quantity("1Mi"))' }),
      `webhooks[0].matchConditions[0].expression: Invalid value: "quantity(\\"1Gi\\").isGreaterThan(quantity(\\"1Mi\\"))": compilation failed: ERROR: <input>:1:1: function 'quantity' of the Kubernetes quantity library is not supported by the embedded API server\n | quantity("1Gi").isGreaterThan(quantity("1Mi"))\n | ^`,
    ],
    [
      'indexOf of a list (Kubernetes lists library)',
      mc({ name: 'a', expression: '[1, 2].indexOf(2) == 1' }),
      `webhooks[0].matchConditions[0].expression: Invalid value: "[1, 2].indexOf(2) == 1": compilation failed: ERROR: <input>:1:1: function 'indexOf' of the Kubernetes lists library is not supported by the embedded API server\n | [1, 2].indexOf(2) == 1\n | ^`,
    ],
    [
      'a cel-js function Kubernetes does not have',
      mc({ name: 'a', expression: 'cel.bind(n, object.metadata.name, n == "x")' }),
      `webhooks[0].matchConditions[0].expression: Invalid value: "cel.bind(n, object.metadata.name, n == \\"x\\")": compilation failed: ERROR: <input>:1:1: undeclared reference to 'bind' (in container '')\n | cel.bind(n, object.metadata.name, n == "x")\n | ^`,
    ],
  ];
  for (const [name, webhook, message] of cases) {
    test(name, async () => assert.equal(await rejected(webhook), message));
  }

  test('at most 64 conditions', async () => {
    const many = Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' }));
    assert.equal(await rejected(mc(...many)), 'webhooks[0].matchConditions: Too many: 65: must have at most 64 items');
    const r = await admission.createMutatingWebhookConfiguration({ body: { metadata: { name: 'sixty-four' }, webhooks: [mc(...many.slice(0, 64))] as unknown as k8s.V1MutatingWebhook[] } });
    assert.equal(r.webhooks?.[0]?.matchConditions?.length, 64);
  });

  test('every variable of the webhook environment compiles; the conditions are kept and parsed', async () => {
    const conditions = [
      { name: 'not-terminating', expression: '!has(oldObject.metadata.deletionTimestamp)' },
      { name: 'example.com/by-operation', expression: 'request.operation == "DELETE" && request.userInfo.username != "system:admin"' },
      { name: 'with_object', expression: 'object == null || object.metadata.name.startsWith("web-")' },
      { name: 'authz', expression: 'authorizer.requestResource.check("delete").allowed() && authorizer.group("apps").resource("deployments").namespace("x").check("get").allowed()' },
      { name: 'optional', expression: 'oldObject.?metadata.?labels.?app.orValue("") != "db"' },
    ];
    await admission.createValidatingWebhookConfiguration({ body: { metadata: { name: 'with-conditions' }, webhooks: [mc(...conditions)] as unknown as k8s.V1ValidatingWebhook[] } });
    const stored = c.server.control.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', '', 'with-conditions');
    assert.ok(stored.ok);
    assert.deepEqual(webhooksOf(stored.value, false)[0]?.matchConditions, conditions);
  });

  test('an update is validated when it changes the conditions', async () => {
    await admission.createMutatingWebhookConfiguration({ body: { metadata: { name: 'upd' }, webhooks: [mc({ name: 'a', expression: 'true' })] as unknown as k8s.V1MutatingWebhook[] } });
    const s = await expectStatus(() =>
      admission.patchMutatingWebhookConfiguration(
        { name: 'upd', body: [{ op: 'replace', path: '/webhooks/0/matchConditions/0/expression', value: 'object.spec' }] },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
      ),
    );
    assert.equal(s.code, 422);
    assert.match(s.message ?? '', /webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "object\.spec": must evaluate to bool but got dyn/);
  });

  test('a non-string expression is a decode error (400)', async () => {
    const s = await expectStatus(() =>
      admission.createMutatingWebhookConfiguration({ body: { metadata: { name: 'typed' }, webhooks: [{ ...good(), matchConditions: [{ name: 'a', expression: true }] }] as unknown as k8s.V1MutatingWebhook[] } }),
    );
    assert.equal(s.code, 400);
    assert.match(s.message ?? '', /cannot unmarshal boolean into Go struct field MatchCondition\.webhooks\.matchConditions\.expression of type string/);
  });
});

describe('defaults and parsing', () => {
  test('a valid configuration is defaulted and parsed for the dispatcher', async () => {
    await admission.createValidatingWebhookConfiguration({
      body: { metadata: { name: 'ok' }, webhooks: [{ ...good(), clientConfig: { service: { name: 's', namespace: 'n', path: '/v' }, caBundle: Buffer.from('PEM').toString('base64') } }] as unknown as k8s.V1ValidatingWebhook[] },
    });
    const stored = c.server.control.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', '', 'ok');
    assert.ok(stored.ok);
    const [h] = webhooksOf(stored.value, false);
    assert.ok(h);
    assert.deepEqual(
      [h.uid, h.failurePolicy, h.matchPolicy, h.timeoutSeconds, h.reinvocationPolicy, h.namespaceSelector.ok && h.namespaceSelector.selector.empty],
      ['ok/pods.hooks.example.com/0', 'Fail', 'Equivalent', 10, 'Never', true],
    );
    assert.deepEqual(h.clientConfig, { service: { namespace: 'n', name: 's', port: 443, path: '/v' }, caPem: 'PEM' });
    assert.equal(h.rules[0]?.scope, '*');
  });
  test('base64 checks follow Go', () => {
    assert.equal(base64Problem('QUJD'), undefined);
    assert.equal(base64Problem('QUI='), undefined);
    assert.equal(base64Problem('QU=D'), 2);
    assert.equal(base64Problem('QUJ'), 3);
  });
});
