import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_KUBELET_DELAY_MS, DEFAULT_START_TIME_MS, formatProblems, parseScenario, scenarioFromValue, type Scenario } from './scenario.ts';
import { DEFAULT_SETTLE_TIMEOUT_MS } from './steps.ts';

const WS = `
  - apiVersion: apps.kruise.io/v1alpha1
    kind: WorkloadSpread
    metadata: {name: ws}
    spec:
      targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      subsets: [{name: a, maxReplicas: 2}, {name: b}]
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}}
`;

function parse(text: string): Scenario {
  const r = parseScenario(text);
  assert.ok(r.ok, r.ok ? '' : formatProblems(r.problems));
  return r.scenario;
}

/** The problems of a scenario made of `objects: WS` plus the given YAML. */
function problemsOf(yaml: string, objects = WS): string[] {
  const r = parseScenario(`objects:${objects}\n${yaml}`);
  assert.equal(r.ok, false, 'expected the scenario to be refused');
  return r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.message}`);
}

describe('parseScenario: the issue 6 format', () => {
  test('the example of the issue parses, with every step kind and expectation', () => {
    const s = parse(`
name: elastic-burst
cluster:
  kubeletDelay: 2s
  unschedulableRecoverySeconds: 300
nodes:
  - name: big-1
    labels: {topology.kubernetes.io/zone: zone-a}
    capacity: {cpu: "8", memory: 32Gi, pods: "110"}
    taints: [{key: k, value: v, effect: NoSchedule}]
    podsNeverStart: false
  - {namePrefix: normal-, count: 3}
  - {namePrefix: elastic, count: 2}
objects:${WS}
steps:
  - scale: {kind: Deployment, name: web, replicas: 6}
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}, data: {a: b}}
  - patch: {kind: WorkloadSpread, name: ws, patch: {spec: {subsets: []}}}
  - delete: {kind: Pod, name: web-abc}
  - delete: {kind: Pod, subset: b, count: 2}
  - evict: {pod: web-abc}
  - cordon: normal-2
  - uncordon: normal-2
  - deleteNode: normal-3
  - addNodes: [{name: extra-1}]
  - taint: {node: normal-1, key: k, value: v, effect: NoSchedule}
  - rollout: {kind: Deployment, name: web}
  - advance: 5m
  - settle: {}
  - expect:
      subsets: {a: 2, b: 4}
      unassigned: 0
      pods: 6
      costs: {a: [200], b: [100]}
      status: {a: {missingReplicas: 0, replicas: 2}}
      conditions: {a: {Schedulable: "False"}}
      events: [{reason: RecoverSchedulable}]
`);
    assert.equal(s.name, 'elastic-burst');
    assert.equal(s.cluster.kubeletDelayMs, 2_000);
    assert.equal(s.cluster.unschedulableRecoverySeconds, 300);
    assert.deepEqual(s.nodes.map((n) => n.name), ['big-1', 'normal-1', 'normal-2', 'normal-3', 'elastic-1', 'elastic-2']);
    assert.deepEqual(s.nodes[0], { name: 'big-1', labels: { 'topology.kubernetes.io/zone': 'zone-a' }, capacity: { cpu: '8', memory: '32Gi', pods: '110' }, taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }], podsNeverStart: false });
    assert.deepEqual(s.steps.map((x) => x.action.action), ['scale', 'apply', 'patch', 'delete', 'delete', 'evict', 'cordon', 'uncordon', 'deleteNode', 'addNodes', 'taint', 'rollout', 'advance', 'settle', 'expect']);
    assert.deepEqual(s.workloadSpreads, [{ namespace: 'default', name: 'ws' }]);
    const expect = s.steps[14]?.action;
    assert.ok(expect?.action === 'expect');
    assert.deepEqual(expect.expect.checks.map((c) => c.check), ['subsets', 'unassigned', 'pods', 'costs', 'status', 'conditions', 'events']);
    assert.deepEqual(expect.expect.workloadSpread, { namespace: 'default', name: 'ws' });
  });

  test('namePrefix with and without a trailing dash both give <prefix>-1..N; a plain string is a node name', () => {
    const s = parse(`nodes: [{namePrefix: normal-, count: 2}, {namePrefix: elastic, count: 2}, solo]\n`);
    assert.deepEqual(s.nodes.map((n) => n.name), ['normal-1', 'normal-2', 'elastic-1', 'elastic-2', 'solo']);
  });

  test('node fields: labels, capacity (numbers become quantities), taints, podsNeverStart, startDelay', () => {
    const s = parse(`nodes: [{name: n1, labels: {zone: a}, capacity: {cpu: 8, pods: "10"}, taints: [{key: k, effect: NoExecute}], podsNeverStart: true, unschedulable: true, startDelay: 5s}]\n`);
    assert.deepEqual(s.nodes[0], { name: 'n1', labels: { zone: 'a' }, capacity: { cpu: '8', pods: '10' }, taints: [{ key: 'k', effect: 'NoExecute' }], podsNeverStart: true, unschedulable: true, behaviour: { startDelayMs: 5_000 } });
  });

  test('defaults: cluster settings, namespace default, settle after actions but not after advance/settle/expect', () => {
    const s = parse(`objects:${WS}\nsteps:\n  - scale: {kind: Deployment, name: web, replicas: 1}\n  - advance: 1m\n  - expect: {pods: 1}\n  - settle: {timeout: 10m}\n`);
    assert.equal(s.cluster.kubeletDelayMs, DEFAULT_KUBELET_DELAY_MS);
    assert.equal(s.cluster.unschedulableRecoverySeconds, 300);
    assert.equal(s.cluster.guardPodDeletion, false);
    assert.equal(parse('cluster: {guardPodDeletion: true}\n').cluster.guardPodDeletion, true);
    assert.equal(s.cluster.startTimeMs, DEFAULT_START_TIME_MS);
    assert.deepEqual(s.objects.map((o) => o.metadata?.namespace), ['default', 'default']);
    assert.deepEqual(s.steps.map((x) => x.after), [{ settle: true, timeoutMs: DEFAULT_SETTLE_TIMEOUT_MS }, { settle: false }, { settle: false }, { settle: false }]);
    assert.deepEqual(s.steps[3]?.action, { action: 'settle', timeoutMs: 600_000 });
  });

  test('per-step options: settle false / with a timeout, expectFailure, description', () => {
    const s = parse(`objects:${WS}\nsteps:\n  - {scale: {kind: Deployment, name: web, replicas: 1}, settle: false}\n  - {scale: {kind: Deployment, name: web, replicas: 2}, settle: {timeout: 2m}, expectFailure: budget, description: why}\n  - {advance: 1s, settle: true}\n`);
    assert.deepEqual(s.steps[0]?.after, { settle: false });
    assert.deepEqual(s.steps[1]?.after, { settle: true, timeoutMs: 120_000 });
    assert.equal(s.steps[1]?.expectFailure, 'budget');
    assert.equal(s.steps[1]?.description, 'why');
    assert.deepEqual(s.steps[2]?.after, { settle: true, timeoutMs: DEFAULT_SETTLE_TIMEOUT_MS });
  });

  test('references: the kind gives the apiVersion (built-ins, WorkloadSpread, the scenario’s own kinds); cluster-scoped kinds lose the namespace', () => {
    const s = parse(`objects:${WS}\n  - {apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}\nsteps:\n  - delete: {kind: Widget, name: w}\n  - patch: {kind: Node, name: n1, patch: {metadata: {labels: {a: b}}}}\n  - patch: {kind: WorkloadSpread, name: ws, namespace: other, patch: {}}\n`);
    const targets = s.steps.map((x) => ('target' in x.action ? x.action.target : undefined));
    assert.deepEqual(targets, [
      { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', namespace: 'default' },
      { apiVersion: 'v1', kind: 'Node', name: 'n1', namespace: '' },
      { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', name: 'ws', namespace: 'other' },
    ]);
  });

  test('YAML 1.1: an unquoted False in conditions is the condition status "False"', () => {
    const s = parse(`objects:${WS}\nsteps:\n  - expect: {conditions: {a: {Schedulable: False}, b: {Schedulable: ~}}}\n`);
    const a = s.steps[0]?.action;
    assert.ok(a?.action === 'expect');
    assert.deepEqual(a.expect.checks[0], { check: 'conditions', conditions: { a: { Schedulable: 'False' }, b: { Schedulable: null } } });
  });

  test('JSON input works as well (YAML is a superset)', () => {
    const r = parseScenario(JSON.stringify({ name: 'j', nodes: ['n1'], steps: [{ advance: '1s' }] }));
    assert.ok(r.ok);
  });
});

describe('parseScenario: malformed scenarios name the field', () => {
  const cases: [string, string, string?][] = [
    ['steps:\n  - scale: {kind: Deployment, name: web, replicas: -1}', 'steps[0].scale.replicas: must be a non-negative integer, not number -1'],
    ['steps:\n  - scale: {kind: Deployment, name: web}', 'steps[0].scale.replicas: required (a non-negative integer)'],
    ['steps:\n  - scale: {kind: Deployment, name: web, replica: 2, replicas: 2}', 'steps[0].scale.replica: unknown field (did you mean replicas?); expected one of: apiVersion, kind, name, namespace, replicas'],
    ['steps:\n  - scale: {kind: Gadget, name: web, replicas: 1}', 'steps[0].scale.kind: unknown kind "Gadget": give its apiVersion too'],
    ['steps:\n  - advance: 30', 'steps[0].advance: must be a duration like 30s, 5m or 1h30m (write 30s or 30m)'],
    ['steps:\n  - advance: soon', 'steps[0].advance: must be a duration like 30s, 5m or 1h30m, not "soon"'],
    ['steps:\n  - settle: {timeout: 5}', 'steps[0].settle.timeout: must be a duration like 30s, 5m or 1h30m (write 5s or 5m)'],
    ['steps:\n  - jump: 1s', 'steps[0]: needs one action: scale, apply, patch, delete, evict'],
    ['steps:\n  - {advance: 1s, cordon: n1}', 'steps[0]: has 2 actions (advance, cordon); write one step per action'],
    ['steps:\n  - cordon: 3', 'steps[0].cordon: must be a string, not number 3'],
    ['steps:\n  - taint: {node: n1, key: k, effect: Sometimes}', 'steps[0].taint.effect: must be one of NoSchedule, PreferNoSchedule, NoExecute, not "Sometimes"'],
    ['steps:\n  - patch: {kind: Deployment, name: web, type: json, patch: {a: 1}}', 'steps[0].patch.patch: must be a list of JSON Patch operations'],
    ['steps:\n  - delete: {kind: Deployment, subset: a, count: 1}', 'steps[0].delete.kind: must be Pod when pods are chosen by subset'],
    ['steps:\n  - evict: {}', 'steps[0].evict: needs pod (a pod name) or subset (and count)'],
    ['steps:\n  - expect: {subsets: {a: two}}', 'steps[0].expect.subsets.a: must be a non-negative integer, not the string "two"'],
    ['steps:\n  - expect: {costs: {a: [1.5]}}', 'steps[0].expect.costs.a[0]: must be an integer deletion cost (or null: no annotation), not number 1.5'],
    ['steps:\n  - expect: {conditions: {a: {Schedulable: maybe}}}', 'steps[0].expect.conditions.a.Schedulable: must be "True", "False", "Unknown" or null (absent), not the string "maybe"'],
    ['steps:\n  - expect: {events: [{count: 1}]}', 'steps[0].expect.events[0]: needs at least one of reason, type, message, object'],
    ['steps:\n  - expect: {podFields: [{field: "spec.containers[", value: 1}]}', 'steps[0].expect.podFields[0].field: not a JSONPath'],
    ['steps:\n  - expect: {podFields: [{field: spec.nodeName}]}', 'steps[0].expect.podFields[0].value: required'],
    ['steps:\n  - expect: {pod: 3}', 'steps[0].expect.pod: unknown field (did you mean pods?)'],
    ['steps:\n  - expect: {rebalance: {pending: -1}}', 'steps[0].expect.rebalance.pending: must be a non-negative integer, not number -1'],
    ['steps:\n  - expect: {rebalance: {moved: 1}}', 'steps[0].expect.rebalance.moved: unknown field (did you mean moves?); expected one of: pending, moves, reason'],
    ['steps:\n  - expect: {}', 'steps[0].expect: needs at least one check'],
    ['steps:\n  - expect: {pods: 1, workloadSpread: other}', 'steps[0].expect.workloadSpread: the scenario creates no WorkloadSpread default/other'],
    ['steps:\n  - expectFailure: true\n    advance: 1s\n  - {advance: 1s, expectFailure: 3}', 'steps[1].expectFailure: must be true or a part of the expected error message, not number 3'],
    ['nodes:\n  - {namePrefix: n, count: 2}', 'nodes[0].namePrefix: must be a string, not the boolean false (quote it if you meant a string: YAML 1.1 reads y, n, yes, no, on, off as booleans)'],
    ['nodes:\n  - {name: Big_Node}', 'nodes[0]: invalid node name "Big_Node": must be a lowercase RFC 1123 subdomain'],
    ['nodes:\n  - {name: n1}\n  - {namePrefix: n1-, count: 0}\n  - n1', 'nodes[2]: duplicate node name n1'],
    ['nodes:\n  - {name: n1, capacity: {cpu: lots}}', 'nodes[0].capacity.cpu: must be a quantity such as 8, 500m or 32Gi, not "lots"'],
    ['nodes:\n  - {name: n1, namePrefix: x}', 'nodes[0]: give either name, or namePrefix and count'],
    ['nodes:\n  - {labels: {a: b}}', 'nodes[0]: needs name, or namePrefix and count'],
    ['nodes:\n  - {name: n1, taints: [{key: k}]}', 'nodes[0].taints[0].effect: required (a string)'],
    ['cluster: {kubeletDelay: 2}', 'cluster.kubeletDelay: must be a duration like 30s, 5m or 1h30m (write 2s or 2m)'],
    ['cluster: {unschedulableRecoverySeconds: 5}', 'cluster.unschedulableRecoverySeconds: must be at least 10'],
    ['cluster: {guardPodDeletion: maybe}', 'cluster.guardPodDeletion: must be true or false'],
    ['cluster: {startTime: yesterday}', 'cluster.startTime: must be an RFC 3339 time such as 2026-01-01T00:00:00Z'],
    ['cluster: {nodes: 3}', 'cluster.nodes: unknown field'],
    ['step: []', 'step: unknown field (did you mean steps?)'],
    ['steps:\n  - addNodes: [{name: web-1}, {name: web-1}]', 'steps[0].addNodes[1]: duplicate node name web-1'],
  ];
  for (const [yaml, want] of cases) {
    test(want, () => {
      const got = problemsOf(yaml);
      assert.ok(got.some((g) => g.startsWith(want)), `expected a problem starting with\n  ${want}\ngot\n  ${got.join('\n  ')}`);
    });
  }

  test('the total virtual time is bounded (7 days): 1,000 steps of advance 24h are refused at the step that passes it', () => {
    const steps = Array.from({ length: 1000 }, () => '  - advance: 24h').join('\n');
    assert.deepEqual(problemsOf(`steps:\n${steps}`, ''), [
      'steps[6].advance: the scenario may run for more than 168h (7 days) of virtual time: 168h30m by this step, counting the settle after the objects are applied (up to 30m), every advance and every settle and drain timeout (a step that settles waits up to 30m by default); shorten the waits or split the scenario',
    ]);
  });

  test('the bound counts the settle timeouts that steps get by default, and names the step', () => {
    const scale = Array.from({ length: 400 }, () => '  - scale: {kind: Deployment, name: web, replicas: 1}').join('\n');
    const got = problemsOf(`steps:\n${scale}`, '');
    assert.equal(got.length, 1);
    assert.match(got[0] ?? '', /^steps\[335\]\.settle: the scenario may run for more than 168h \(7 days\) of virtual time: 168h30m by this step/);
  });

  test('exactly 7 days of virtual time is accepted', () => {
    const steps = [...Array.from({ length: 6 }, () => '  - advance: 24h'), '  - advance: 23h30m'].join('\n');
    assert.equal(parseScenario(`objects:${WS}\nsteps:\n${steps}`).ok, true);
  });

  test('a bad capacity quantity is one problem, at its field', () => {
    assert.deepEqual(problemsOf('nodes:\n  - {name: n1, capacity: {cpu: lots, memory: 1Gi}}', ''), ['nodes[0].capacity.cpu: must be a quantity such as 8, 500m or 32Gi, not "lots"']);
  });

  test('objects need apiVersion, kind and metadata.name', () => {
    const got = problemsOf('', '\n  - {kind: Deployment, metadata: {}}\n  - [1]');
    assert.deepEqual(got, ['objects[0].apiVersion: required (a string)', 'objects[0].metadata.name: required (a string)', 'objects[1]: must be a mapping, not a list']);
  });

  test('expectations need a WorkloadSpread to be about: none in the scenario, or several without naming one', () => {
    assert.deepEqual(problemsOf('steps:\n  - expect: {pods: 1}', ''), ['steps[0].expect.workloadSpread: the scenario creates no WorkloadSpread']);
    const two = `${WS}  - {apiVersion: apps.kruise.io/v1alpha1, kind: WorkloadSpread, metadata: {name: ws2, namespace: team}, spec: {}}\n`;
    assert.deepEqual(problemsOf('steps:\n  - expect: {pods: 1}', two), ['steps[0].expect.workloadSpread: required: the scenario has 2 WorkloadSpreads (default/ws, team/ws2)']);
    const ok = parseScenario(`objects:${two}steps:\n  - expect: {pods: 1, workloadSpread: team/ws2}\n  - expect: {events: [{reason: X}]}\n`);
    assert.ok(ok.ok, ok.ok ? '' : formatProblems(ok.problems));
  });

  test('several documents, a list, or text that is not YAML are refused as a whole', () => {
    for (const [text, want] of [
      ['a: 1\n---\nb: 2\n', /exactly one YAML document, found 2/],
      ['- 1\n', /expected a Kubernetes object \(a mapping\), found a list/],
      ['a: [1\n', /not valid YAML/],
    ] as const) {
      const r = parseScenario(text);
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(formatProblems(r.problems), want);
    }
  });

  test('owned objects: an ownerReference without a uid names an object by kind and name (its apiVersion filled in); createPods makes pods it owns', () => {
    const s = parse(`
objects:
  - {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: train}, spec: {}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: train-ps-0, ownerReferences: [{kind: TFJob, name: train, controller: true}, {apiVersion: v1, kind: ConfigMap, name: c, uid: u-1}]}
    spec: {containers: [{name: m, image: i}]}
steps:
  - createPods: {owner: {kind: TFJob, name: train}, count: 3, template: {metadata: {labels: {role: worker}}}}
  - createPods: {owner: {kind: TFJob, name: train}}
`);
    assert.deepEqual(s.objects[1]?.metadata?.ownerReferences, [
      { kind: 'TFJob', name: 'train', controller: true, apiVersion: 'kubeflow.org/v1' },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u-1' },
    ]);
    const [three, one] = s.steps.map((st) => st.action);
    assert.deepEqual(three, {
      action: 'createPods',
      owner: { apiVersion: 'kubeflow.org/v1', kind: 'TFJob', name: 'train', namespace: 'default' },
      count: 3,
      template: { labels: { role: 'worker' }, annotations: {}, spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.9' }] } },
    });
    assert.equal(one?.action === 'createPods' ? one.count : undefined, 1);
    assert.deepEqual(s.steps.map((st) => st.after.settle), [true, true]);
  });

  test('owned objects: problems are named by field', () => {
    assert.deepEqual(
      problemsOf(`steps:
  - apply: {apiVersion: v1, kind: Pod, metadata: {name: p, ownerReferences: [{kind: Mystery, name: m}, {name: x}, {kind: Deployment, name: web, uuid: x}]}, spec: {}}
  - createPods: {owner: {kind: Deployment}, count: 1001, template: {metadata: {labels: {a: 1}, names: x}}}
`),
      [
        'steps[0].apply.metadata.ownerReferences[0].kind: unknown kind "Mystery": give its apiVersion too (or its uid)',
        'steps[0].apply.metadata.ownerReferences[1].kind: required (a string)',
        'steps[0].apply.metadata.ownerReferences[2].uuid: unknown field (did you mean uid?); expected one of: apiVersion, kind, name, uid, controller, blockOwnerDeletion',
        'steps[1].createPods.owner.name: required (a string)',
        'steps[1].createPods.count: must be at most 1000 (the simulator\'s bound on one workload\'s pods), not 1001',
        'steps[1].createPods.template.metadata.names: unknown field; expected one of: labels, annotations',
        'steps[1].createPods.template.metadata.labels.a: must be a string, not number 1',
      ],
    );
  });

  test('every problem is reported, not only the first', () => {
    const got = problemsOf('steps:\n  - scale: {kind: Deployment, name: web, replicas: -1}\n  - advance: x\n  - cordon: 1');
    assert.equal(got.length, 3);
  });

  test('never throws, whatever the document holds', () => {
    const value = fc.letrec((tie) => ({
      any: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string(), fc.array(tie('any'), { maxLength: 3 }), fc.dictionary(fc.constantFrom('name', 'nodes', 'objects', 'steps', 'cluster', 'scale', 'expect', 'kind', 'subsets', 'x'), tie('any'), { maxKeys: 4 })),
    })).any;
    fc.assert(
      fc.property(value, (v) => {
        const r = scenarioFromValue(v);
        if (!r.ok) for (const p of r.problems) assert.equal(typeof p.message, 'string');
      }),
      { numRuns: 500 },
    );
  });
});
