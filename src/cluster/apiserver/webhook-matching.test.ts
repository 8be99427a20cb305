/**
 * Which webhooks a request reaches: one case per rule of upstream's matchers
 * (operations, groups, versions, resources with subresources and wildcards,
 * scope, namespace and object selectors, matchPolicy Equivalent), plus a
 * property: a `*` rule matches every main resource and no subresource.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { webhooksOf, type WebhookAccessor } from './webhook-configuration.ts';
import { isExemptFromWebhooks, ruleMatches, shouldCallHook, type MatchDeps, type MatchRequest } from './webhook-matching.ts';

function hook(fields: Record<string, unknown>): WebhookAccessor {
  const [h] = webhooksOf({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'cfg' }, webhooks: [{ name: 'h.example.com', ...fields }] }, false);
  assert.ok(h);
  return h;
}

const rule = (resources: string[], extra: Record<string, unknown> = {}) => ({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources, ...extra });

function req(over: Partial<MatchRequest> = {}): MatchRequest {
  return {
    operation: 'CREATE',
    resource: { group: '', version: 'v1', resource: 'pods' },
    subresource: '',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    namespace: 'team-a',
    object: { metadata: { name: 'p', labels: { app: 'web' } } },
    oldObject: undefined,
    ...over,
  };
}

const deps: MatchDeps = {
  namespaceLabels: (name) => (name === 'team-a' ? { found: true, labels: { 'kubernetes.io/metadata.name': 'team-a', env: 'prod' } } : { found: false }),
  equivalents: (r) =>
    r.group === 'example.com' && r.resource === 'widgets'
      ? [
          { resource: { group: 'example.com', version: 'v1', resource: 'widgets' }, kind: { group: 'example.com', version: 'v1', kind: 'Widget' } },
          { resource: { group: 'example.com', version: 'v2', resource: 'widgets' }, kind: { group: 'example.com', version: 'v2', kind: 'Widget' } },
        ]
      : [],
};

describe('rules', () => {
  const cases: [string, Record<string, unknown>, Partial<MatchRequest>, boolean][] = [
    ['exact resource', rule(['pods']), {}, true],
    ['other resource', rule(['configmaps']), {}, false],
    ['operation listed', rule(['pods'], { operations: ['CREATE', 'UPDATE'] }), {}, true],
    ['operation not listed', rule(['pods'], { operations: ['DELETE'] }), {}, false],
    ['group listed ("" is core)', rule(['pods'], { apiGroups: [''] }), {}, true],
    ['group not listed', rule(['pods'], { apiGroups: ['apps'] }), {}, false],
    ['version not listed', rule(['pods'], { apiVersions: ['v2'] }), {}, false],
    ['plain resource does not match a subresource', rule(['pods']), { subresource: 'status' }, false],
    ['resource/subresource', rule(['pods/status']), { subresource: 'status' }, true],
    ['resource/subresource does not match the main resource', rule(['pods/status']), {}, false],
    ['pods/eviction', rule(['pods/eviction']), { subresource: 'eviction' }, true],
    ['pods/* matches subresources', rule(['pods/*']), { subresource: 'binding' }, true],
    ['pods/* matches the main resource too (its sub part * matches "")', rule(['pods/*']), {}, true],
    ['pods/* does not match another resource', rule(['pods/*']), { resource: { group: '', version: 'v1', resource: 'nodes' } }, false],
    ['* matches main resources', rule(['*']), { resource: { group: 'apps', version: 'v1', resource: 'deployments' } }, true],
    ['* does not match subresources', rule(['*']), { subresource: 'status' }, false],
    ['*/scale', rule(['*/scale']), { resource: { group: 'apps', version: 'v1', resource: 'deployments' }, subresource: 'scale' }, true],
    ['*/scale is only scale', rule(['*/scale']), { subresource: 'status' }, false],
    ['*/* matches everything', rule(['*/*']), { subresource: 'eviction' }, true],
    ['*/* matches main resources', rule(['*/*']), {}, true],
    ['scope Namespaced, namespaced request', rule(['*'], { scope: 'Namespaced' }), {}, true],
    ['scope Namespaced, cluster request', rule(['*'], { scope: 'Namespaced' }), { resource: { group: '', version: 'v1', resource: 'nodes' }, namespace: '' }, false],
    ['scope Namespaced excludes namespaces (which carry their own name)', rule(['*'], { scope: 'Namespaced' }), { resource: { group: '', version: 'v1', resource: 'namespaces' }, namespace: 'x' }, false],
    ['scope Cluster, cluster request', rule(['*'], { scope: 'Cluster' }), { resource: { group: '', version: 'v1', resource: 'nodes' }, namespace: '' }, true],
    ['scope Cluster includes namespaces', rule(['*'], { scope: 'Cluster' }), { resource: { group: '', version: 'v1', resource: 'namespaces' }, namespace: 'x' }, true],
    ['scope Cluster, namespaced request', rule(['*'], { scope: 'Cluster' }), {}, false],
  ];
  for (const [name, r, over, expected] of cases) {
    test(name, () => assert.equal(ruleMatches(hook({ rules: [r] }).rules[0]!, req(over)), expected));
  }

  test('property: a * rule matches every main resource of every group and no subresource', () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);
    fc.assert(
      fc.property(name, name, fc.option(name, { nil: undefined }), (group, resource, sub) => {
        const r = req({ resource: { group, version: 'v1', resource }, subresource: sub ?? '' });
        return ruleMatches(hook({ rules: [rule(['*'])] }).rules[0]!, r) === (sub === undefined);
      }),
    );
  });
});

describe('selectors and policies', () => {
  const pods = [rule(['pods'])];
  test('namespaceSelector: labels of the request namespace', () => {
    assert.equal(shouldCallHook(hook({ rules: pods, namespaceSelector: { matchLabels: { env: 'prod' } } }), req(), deps).call, true);
    assert.equal(shouldCallHook(hook({ rules: pods, namespaceSelector: { matchLabels: { env: 'dev' } } }), req(), deps).call, false);
  });
  test('namespaceSelector: an unknown namespace is an error only when the rules match', () => {
    const h = hook({ rules: pods, namespaceSelector: { matchLabels: { env: 'prod' } } });
    assert.deepEqual(shouldCallHook(h, req({ namespace: 'ghost' }), deps), { call: 'error', failure: { kind: 'namespaceNotFound', namespace: 'ghost' } });
    assert.deepEqual(shouldCallHook(h, req({ namespace: 'ghost', operation: 'CREATE', resource: { group: '', version: 'v1', resource: 'secrets' } }), deps), { call: false });
  });
  test('namespaceSelector: cluster-scoped requests other than namespaces always match', () => {
    const h = hook({ rules: [rule(['nodes'])], namespaceSelector: { matchLabels: { env: 'dev' } } });
    assert.equal(shouldCallHook(h, req({ resource: { group: '', version: 'v1', resource: 'nodes' }, namespace: '' }), deps).call, true);
  });
  test('namespaceSelector: a Namespace CREATE is matched on its own labels', () => {
    const h = hook({ rules: [rule(['namespaces'])], namespaceSelector: { matchLabels: { team: 'x' } } });
    const create = req({ resource: { group: '', version: 'v1', resource: 'namespaces' }, namespace: 'new', object: { metadata: { name: 'new', labels: { team: 'x' } } } });
    assert.equal(shouldCallHook(h, create, deps).call, true);
  });
  test('objectSelector: the new object or the old one', () => {
    const h = hook({ rules: pods, objectSelector: { matchLabels: { app: 'web' } } });
    assert.equal(shouldCallHook(h, req(), deps).call, true);
    assert.equal(shouldCallHook(h, req({ object: { metadata: { labels: {} } }, oldObject: { metadata: { labels: { app: 'web' } } } }), deps).call, true);
    assert.equal(shouldCallHook(h, req({ object: { metadata: { labels: { app: 'db' } } } }), deps).call, false);
    assert.equal(shouldCallHook(h, req({ object: undefined }), deps).call, false, 'no object: a non-empty selector never matches');
  });
  test('matchPolicy Equivalent: another served version, called with that version; Exact: not called', () => {
    const widgets = [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }];
    const r = req({ resource: { group: 'example.com', version: 'v2', resource: 'widgets' }, kind: { group: 'example.com', version: 'v2', kind: 'Widget' } });
    const eq = shouldCallHook(hook({ rules: widgets }), r, deps);
    assert.ok(eq.call === true);
    assert.deepEqual([eq.invocation.resource.version, eq.invocation.kind.version], ['v1', 'v1']);
    assert.equal(shouldCallHook(hook({ rules: widgets, matchPolicy: 'Exact' }), r, deps).call, false);
  });
  test('the admission configuration kinds are exempt', () => {
    assert.equal(isExemptFromWebhooks({ group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingWebhookConfiguration' }), true);
    assert.equal(isExemptFromWebhooks({ group: '', version: 'v1', kind: 'Pod' }), false);
  });
});
