/**
 * Micro-benchmark: what a webhook's matchConditions cost the embedded API
 * server per call, next to matching a webhook without them.
 *
 * Run:  node --import tsx bench/match-conditions.ts [calls=200000]
 *
 * Prints (figures only, no assertions), for a pod DELETE of a realistic
 * running pod (~1.8 KB of JSON):
 * - compiling one expression (done once per configuration version);
 * - `shouldCallHook` for a webhook without conditions (rules, selectors);
 * - the same webhook with one condition, `!has(oldObject.metadata.deletionTimestamp)`
 *   (the manager's pod DELETE webhook), and with three conditions reading the
 *   request, the object and the authorizer;
 * - the difference per call, in µs.
 * Everything runs in this process on the real clock; the figures are per call
 * of the matching code (the webhook call itself, HTTPS, is not included: see
 * bench/apiserver-admission.ts for end-to-end figures).
 */
import { Authorizer } from '../src/cluster/apiserver/authorization.ts';
import { ObjectStore } from '../src/cluster/apiserver/storage.ts';
import { compileMatchCondition, compileMatchConditions, evaluateMatchConditions, type CompiledMatchConditions, type MatchConditionInput } from '../src/cluster/apiserver/match-conditions.ts';
import { webhooksOf, type WebhookAccessor } from '../src/cluster/apiserver/webhook-configuration.ts';
import { shouldCallHook, type MatchDeps, type MatchRequest } from '../src/cluster/apiserver/webhook-matching.ts';

const CALLS = Number(process.argv[2] ?? 200_000);
const authorizer = new Authorizer(new ObjectStore());

const runningPod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-7d9f8c-abcde',
    generateName: 'web-7d9f8c-',
    namespace: 'team-a',
    uid: '0f8e1b2c-1111-2222-3333-444455556666',
    resourceVersion: '12345',
    creationTimestamp: '2026-01-01T00:00:00Z',
    labels: { app: 'web', 'pod-template-hash': '7d9f8c' },
    annotations: { 'kruise.io/workloadspread': '{"name":"ws","subset":"zone-a"}' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8c', uid: 'aaaa', controller: true, blockOwnerDeletion: true }],
  },
  spec: {
    containers: [{ name: 'app', image: 'nginx:1.25', resources: { requests: { cpu: '100m', memory: '128Mi' } }, ports: [{ containerPort: 8080, protocol: 'TCP' }] }],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    serviceAccountName: 'default',
    nodeName: 'node-1',
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
    priority: 0,
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }], podIP: '10.1.0.5', qosClass: 'Burstable' },
};

function hookWith(matchConditions: { name: string; expression: string }[]): WebhookAccessor {
  const [hook] = webhooksOf(
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'bench' },
      webhooks: [
        {
          name: 'pods.bench.example.com',
          rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['team-a', 'team-b'] }] },
          matchConditions,
        },
      ],
    },
    false,
  );
  if (hook === undefined) throw new Error('no webhook');
  return hook;
}

const req: MatchRequest = {
  operation: 'DELETE',
  resource: { group: '', version: 'v1', resource: 'pods' },
  subresource: '',
  kind: { group: '', version: 'v1', kind: 'Pod' },
  namespace: 'team-a',
  object: undefined,
  oldObject: runningPod,
};

const input: MatchConditionInput = {
  object: undefined,
  oldObject: runningPod,
  request: () => ({
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    requestKind: { group: '', version: 'v1', kind: 'Pod' },
    requestResource: { group: '', version: 'v1', resource: 'pods' },
    name: runningPod.metadata.name,
    namespace: 'team-a',
    operation: 'DELETE',
    userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller', groups: ['system:serviceaccounts', 'system:authenticated'] },
    dryRun: false,
    options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' },
  }),
  // The embedded cluster's controllers run as system:masters: the authorizer allows them before RBAC.
  user: { username: 'system:serviceaccount:kube-system:replicaset-controller', groups: ['system:masters', 'system:serviceaccounts', 'system:authenticated'] },
  requestResource: { group: '', resource: 'pods', subresource: '', namespace: 'team-a', name: runningPod.metadata.name },
  authorize: (attributes) => authorizer.authorize(attributes),
};

function depsFor(compiled: CompiledMatchConditions | undefined): MatchDeps {
  return {
    namespaceLabels: (name) => ({ found: true, labels: { 'kubernetes.io/metadata.name': name } }),
    equivalents: () => [],
    matchConditions: (invocation) => {
      if (compiled === undefined) throw new Error('no conditions expected');
      return evaluateMatchConditions(compiled, input, invocation.hook.failurePolicy);
    },
  };
}

/** ns per iteration of `fn`, best of 5 rounds after a warm-up. */
function measure(fn: () => unknown, n: number): number {
  for (let i = 0; i < Math.min(n, 20_000); i++) fn();
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / n);
  }
  return best;
}

const notTerminating = [{ name: 'not-terminating', expression: '!has(oldObject.metadata.deletionTimestamp)' }];
const three = [
  { name: 'not-terminating', expression: '!has(oldObject.metadata.deletionTimestamp)' },
  { name: 'controller', expression: "request.userInfo.username.startsWith('system:serviceaccount:') && request.operation == 'DELETE'" },
  { name: 'owned', expression: "oldObject.metadata.ownerReferences.exists(r, r.controller && r.kind == 'ReplicaSet') && authorizer.requestResource.check('delete').allowed()" },
];

const compileNs = measure(() => compileMatchCondition(notTerminating[0]!.expression), Math.max(1, Math.floor(CALLS / 20)));
const plainHook = hookWith([]);
const oneHook = hookWith(notTerminating);
const threeHook = hookWith(three);
const plainDeps = depsFor(undefined);
const oneDeps = depsFor(compileMatchConditions(oneHook.matchConditions));
const threeDeps = depsFor(compileMatchConditions(threeHook.matchConditions));
const check = (hook: WebhookAccessor, deps: MatchDeps, expected: boolean) => {
  const call = shouldCallHook(hook, req, deps).call;
  if (call !== expected) throw new Error(`${hook.matchConditions.length} conditions: expected call ${expected}, got ${String(call)}`);
};
check(plainHook, plainDeps, true);
check(oneHook, oneDeps, true);
check(threeHook, threeDeps, true);
const terminating = { ...req, oldObject: { ...runningPod, metadata: { ...runningPod.metadata, deletionTimestamp: '2026-01-01T00:00:30Z' } } };
if (shouldCallHook(oneHook, terminating, { ...oneDeps, matchConditions: (i) => evaluateMatchConditions(compileMatchConditions(i.hook.matchConditions), { ...input, oldObject: terminating.oldObject }, 'Fail') }).call !== false) {
  throw new Error('a terminating pod should not be called');
}

const plainNs = measure(() => shouldCallHook(plainHook, req, plainDeps), CALLS);
const oneNs = measure(() => shouldCallHook(oneHook, req, oneDeps), CALLS);
const threeNs = measure(() => shouldCallHook(threeHook, req, threeDeps), CALLS);

const us = (ns: number) => (ns / 1000).toFixed(2).padStart(7);
console.log(`pod DELETE of a running pod (${JSON.stringify(runningPod).length} bytes of JSON), ${CALLS} calls per row, best of 5`);
console.log(`compile one expression (once per configuration version)   ${us(compileNs)} µs`);
console.log(`match a webhook without conditions                         ${us(plainNs)} µs/call`);
console.log(`match a webhook with one condition (!has(deletionTimestamp)) ${us(oneNs)} µs/call   (+${us(oneNs - plainNs).trim()} µs)`);
console.log(`match a webhook with three conditions (request, object, authorizer) ${us(threeNs)} µs/call   (+${us(threeNs - plainNs).trim()} µs)`);
