/**
 * Which webhooks a request reaches: one case per rule of upstream's matchers
 * (operations, groups, versions, resources with subresources and wildcards,
 * scope, namespace and object selectors, matchPolicy Equivalent, match
 * conditions last), plus a property: a `*` rule matches every main resource
 * and no subresource. Upstream's matcher semantics for matchConditions
 * (first false wins, errors and failurePolicy, cost limits) are checked on
 * evaluateMatchConditions itself.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileMatchConditions, evaluateMatchConditions, MATCH_CONDITIONS_COST_BUDGET, PER_CALL_COST_LIMIT, type MatchConditionInput, type MatchOutcome } from './match-conditions.ts';
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
  matchConditions: () => {
    throw new Error('no match conditions expected');
  },
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

function conditionInput(over: Partial<MatchConditionInput> = {}): MatchConditionInput {
  return {
    object: { metadata: { name: 'p', labels: { app: 'web' } }, spec: { replicas: 3, ratio: 0.5, items: Array.from({ length: 1000 }, (_, i) => i) } },
    oldObject: undefined,
    request: () => ({ operation: 'CREATE', userInfo: { username: 'alice', groups: ['devs'] }, dryRun: false, options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' } }),
    user: { username: 'alice', groups: ['devs'] },
    requestResource: { group: '', resource: 'pods', subresource: '', namespace: 'team-a', name: 'p' },
    authorize: () => ({ allowed: true, reason: '' }),
    ...over,
  };
}

function outcome(expressions: string[], failurePolicy: 'Fail' | 'Ignore' = 'Fail', input = conditionInput()): MatchOutcome {
  const compiled = compileMatchConditions(expressions.map((expression, i) => ({ name: `c${i}`, expression })));
  return evaluateMatchConditions(compiled, input, failurePolicy);
}

describe('matchConditions', () => {
  const pods = [rule(['pods'])];
  const withConditions = (evaluated: string[], answer: MatchOutcome): MatchDeps => ({
    ...deps,
    matchConditions: (invocation) => {
      evaluated.push(invocation.hook.name);
      return answer;
    },
  });

  test('evaluated last, only for a webhook whose rules and selectors matched', () => {
    const evaluated: string[] = [];
    const conditions = { matchConditions: [{ name: 'never', expression: 'false' }] };
    const d = withConditions(evaluated, { kind: 'skip' });
    assert.equal(shouldCallHook(hook({ rules: [rule(['configmaps'])], ...conditions }), req(), d).call, false);
    assert.equal(shouldCallHook(hook({ rules: pods, namespaceSelector: { matchLabels: { env: 'dev' } }, ...conditions }), req(), d).call, false);
    assert.deepEqual(evaluated, [], 'rules or selectors decided first');
    assert.equal(shouldCallHook(hook({ rules: pods, ...conditions }), req(), d).call, false);
    assert.deepEqual(evaluated, ['h.example.com']);
    assert.equal(shouldCallHook(hook({ rules: pods }), req(), d).call, true, 'no conditions: nothing to evaluate');
    assert.deepEqual(evaluated, ['h.example.com']);
  });

  test('call, skip and error outcomes become the match result', () => {
    const h = hook({ rules: pods, matchConditions: [{ name: 'x', expression: 'true' }] });
    assert.equal(shouldCallHook(h, req(), withConditions([], { kind: 'call' })).call, true);
    assert.deepEqual(shouldCallHook(h, req(), withConditions([], { kind: 'skip', failedCondition: 'x' })), { call: false });
    assert.deepEqual(shouldCallHook(h, req(), withConditions([], { kind: 'error', message: 'boom' })), { call: 'error', failure: { kind: 'matchConditions', message: 'boom' } });
  });

  test('all true calls; any false skips and names the first false condition, even next to errors', () => {
    assert.deepEqual(outcome(['object.metadata.name == "p"', 'has(object.metadata.labels)']), { kind: 'call' });
    assert.deepEqual(outcome(['true', 'object.metadata.name == "q"', 'false']), { kind: 'skip', failedCondition: 'c1' });
    assert.deepEqual(outcome(['object.nope == 1', 'false'], 'Fail'), { kind: 'skip', failedCondition: 'c1' }, 'a false condition wins over an error');
  });

  test('an error without a false condition: Fail fails with upstream message, Ignore skips', () => {
    assert.deepEqual(outcome(['true', 'object.nope == 1'], 'Fail'), { kind: 'error', message: "expression 'object.nope == 1' resulted in error: no such key: nope" });
    assert.deepEqual(outcome(['true', 'object.nope == 1'], 'Ignore'), { kind: 'skip' });
    assert.deepEqual(outcome(['object.a == 1', 'object.b == 1'], 'Fail'), {
      kind: 'error',
      message: "[expression 'object.a == 1' resulted in error: no such key: a, expression 'object.b == 1' resulted in error: no such key: b]",
    });
  });

  test('values: integers are int, other numbers double, null objects have no fields', () => {
    assert.deepEqual(outcome(['type(object.spec.replicas) == int', 'object.spec.replicas + 1 == 4', 'type(object.spec.ratio) == double', 'object.spec.ratio < 1']), { kind: 'call' });
    assert.deepEqual(outcome(['oldObject == null', '!has(oldObject.metadata)']), { kind: 'call' }, 'has() of a field of null is false');
    assert.deepEqual(outcome(['has(oldObject.metadata.deletionTimestamp)']), { kind: 'error', message: "expression 'has(oldObject.metadata.deletionTimestamp)' resulted in error: no such key: metadata" });
  });

  test('request and authorizer variables', () => {
    assert.deepEqual(outcome(['request.operation == "CREATE"', 'request.userInfo.username == "alice"', '"devs" in request.userInfo.groups', 'request.options.kind == "CreateOptions"', '!request.dryRun']), { kind: 'call' });
    assert.deepEqual(outcome(['!has(request.name)']), { kind: 'call' }, 'empty fields are absent (omitempty)');
    assert.deepEqual(outcome(['authorizer.group("").resource("pods").namespace("team-a").check("create").allowed()', 'authorizer.requestResource.check("delete").reason() == ""']), { kind: 'call' });
    const denied = conditionInput({ authorize: (attrs) => ({ allowed: attrs.verb !== 'delete' || attrs.user.username !== 'alice', reason: 'no deletes for alice' }) });
    assert.deepEqual(outcome(['authorizer.requestResource.check("delete").allowed()'], 'Fail', denied), { kind: 'skip', failedCondition: 'c0' });
    assert.deepEqual(outcome(['authorizer.serviceAccount("ns", "robot").group("").resource("pods").check("delete").allowed()'], 'Fail', denied), { kind: 'call' }, 'checked as the service account');
  });

  test('a runaway comprehension stops at the per-expression cost limit', () => {
    const runaway = 'object.spec.items.all(x, object.spec.items.all(y, object.spec.items.all(z, true)))';
    assert.deepEqual(outcome([runaway]), { kind: 'error', message: `expression '${runaway}' resulted in error: operation cancelled: actual cost limit exceeded` });
    assert.deepEqual(outcome([runaway], 'Ignore'), { kind: 'skip' });
    // An error inside exists() is absorbed when another element is true; the exceeded limit is not.
    const absorbed = 'object.spec.items.exists(x, object.spec.items.all(y, object.spec.items.all(z, true)) || x == 999)';
    assert.deepEqual(outcome([absorbed]), { kind: 'error', message: `expression '${absorbed}' resulted in error: operation cancelled: actual cost limit exceeded` });
  });

  test('the conditions of one webhook share a cost budget', () => {
    assert.ok(MATCH_CONDITIONS_COST_BUDGET < 3 * PER_CALL_COST_LIMIT);
    const expensive = 'object.spec.items.all(x, object.spec.items.all(y, true))';
    assert.deepEqual(outcome([expensive, expensive, expensive, 'false']), { kind: 'error', message: 'validation failed due to running out of cost budget, no further validation rules will be run' });
    assert.deepEqual(outcome([expensive, expensive, expensive, 'false'], 'Ignore'), { kind: 'skip' });
    assert.deepEqual(outcome([expensive, 'false']).kind, 'skip', 'within the budget: the false condition decides');
  });
});
