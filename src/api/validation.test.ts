import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatFieldError, type FieldError } from '../k8s/field-errors.ts';
import {
  rescheduleCriticalSecondsBound,
  validateTargetConflict,
  validateTargetRefPermitted,
  validateWorkloadSpread,
  validateWorkloadSpreadSpec,
  validateWorkloadSpreadUpdate,
} from './validation.ts';
import { EMPTY_WHITELIST, type Whitelist } from './whitelist.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixtures are raw JSON that tests reshape freely
type Json = any;

const texts = (errors: FieldError[]): string[] => errors.map(formatFieldError);

const zoneTerm = (zone: string) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] });

/** The reference's demo WorkloadSpread: a CloneSet, subsets of 50 / 50 / unlimited. */
function demo(): Json {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'workloadspread', namespace: 'default' },
    spec: {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'demo' },
      subsets: [
        { name: 'subset-a', maxReplicas: 50, requiredNodeSelectorTerm: zoneTerm('zone-a'), tolerations: [{ key: 'ecs', operator: 'Exists' }], patch: { metadata: { annotations: { subset: 'subset-a' } } } },
        { name: 'subset-b', maxReplicas: 50, requiredNodeSelectorTerm: zoneTerm('zone-b'), tolerations: [{ key: 'ecs', operator: 'Exists' }], patch: { metadata: { annotations: { subset: 'subset-b' } } } },
        { name: 'subset-c', requiredNodeSelectorTerm: zoneTerm('zone-c') },
      ],
    },
  };
}

function variant(mutate: (ws: Json) => void): Json {
  const ws = demo();
  mutate(ws);
  return ws;
}

const maxes = (values: unknown[]) => (ws: Json) => {
  ws.spec.subsets = values.map((maxReplicas, i) => (maxReplicas === undefined ? { name: `s${i}` } : { name: `s${i}`, maxReplicas }));
};

const adaptive = (crit: number | undefined, subsets: unknown[]) => (ws: Json) => {
  maxes(subsets)(ws);
  ws.spec.scheduleStrategy = { type: 'Adaptive', adaptive: crit === undefined ? {} : { rescheduleCriticalSeconds: crit } };
};

const check = (ws: unknown, options = {}) => texts(validateWorkloadSpread(ws, options));

describe('accepted examples of spec §7', () => {
  const cases: [string, Json][] = [
    ['the demo (ints and nil mixed)', demo()],
    ['ints and nil mixed, Fixed', variant((ws) => { maxes([50, undefined])(ws); ws.spec.scheduleStrategy = { type: 'Fixed' }; })],
    ['[50%, 50%]', variant(maxes(['50%', '50%']))],
    ['[50%, 50%, nil] Adaptive crit 30', variant(adaptive(30, ['50%', '50%', undefined]))],
    ['a single subset with no selectors at all', variant((ws) => { ws.spec.subsets = [{ name: 'only' }]; })],
    ['StatefulSet apps/v1 with int max', variant((ws) => { ws.spec.targetRef = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'demo' }; })],
    ['StatefulSet apps.kruise.io/v1alpha1 with int max', variant((ws) => { ws.spec.targetRef = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'StatefulSet', name: 'demo' }; })],
    ['StatefulSet apps.kruise.io/v1beta1 with int max', variant((ws) => { ws.spec.targetRef = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'demo' }; })],
    ['Adaptive n=2 crit 30', variant(adaptive(30, [5, undefined]))],
    ['Deployment with preferred terms', variant((ws) => {
      ws.spec.targetRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' };
      ws.spec.subsets[0].preferredNodeSelectorTerms = [{ weight: 20, preference: zoneTerm('zone-a') }];
    })],
    ['Job with percentages summing to 100', variant((ws) => { ws.spec.targetRef = { apiVersion: 'batch/v1', kind: 'Job', name: 'j' }; maxes(['50%', '50%'])(ws); })],
    ['#7: Adaptive with every maxReplicas nil', variant(adaptive(30, [undefined, undefined]))],
    ['#7: Adaptive with only the last maxReplicas nil', variant(adaptive(30, [3, 4, undefined]))],
    ['#7: Adaptive without rescheduleCriticalSeconds', variant(adaptive(undefined, [undefined]))],
    ['D5: targetFilter with replicasPathList and no selector', variant((ws) => { ws.spec.targetFilter = { replicasPathList: ['spec.replicas'] }; })],
    ['targetFilter with a valid selector', variant((ws) => { ws.spec.targetFilter = { selector: { matchLabels: { role: 'worker' } } }; })],
    ['D2: minReplicas ≤ maxReplicas', variant((ws) => { ws.spec.subsets[0].minReplicas = 50; })],
    ['D2: minReplicas with a percentage maxReplicas is not compared', variant((ws) => { maxes(['10%', undefined])(ws); ws.spec.subsets[0].minReplicas = 1000; })],
    ['D2: minReplicas on an unlimited subset', variant((ws) => { ws.spec.subsets[2].minReplicas = 3; })],
    ['custom kinds are not judged without a whitelist', variant((ws) => { ws.spec.targetRef = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'r' }; })],
    ['unknown fields are ignored (pruned by the server)', variant((ws) => { ws.spec.extra = 1; ws.spec.subsets[0].foo = 'bar'; })],
    ['nulls are absent', variant((ws) => { ws.spec.scheduleStrategy = null; ws.spec.subsets[2].maxReplicas = null; })],
    ['maxReplicas 0 is a valid int', variant(maxes([0, undefined]))],
    ['"0%" is a valid percentage', variant(maxes(['0%', '100%']))],
  ];
  for (const [name, ws] of cases) test(name, () => assert.deepEqual(check(ws), []));
});

describe('rejected: one case per rule, with its path and message', () => {
  const ref = (apiVersion: string, kind: string) => (ws: Json) => { ws.spec.targetRef = { apiVersion, kind, name: 'demo' }; };
  const cases: [string, Json, string[]][] = [
    ['V1 targetRef missing', variant((ws) => { delete ws.spec.targetRef; }), ['spec.targetRef: Required value: no targetRef defined in WorkloadSpread']],
    ['V1+V9 spec missing', variant((ws) => { delete ws.spec; }), [
      'spec.targetRef: Required value: no targetRef defined in WorkloadSpread',
      'spec.subsets: Required value: subsets number must >= 1 in WorkloadSpread',
    ]],
    ['V2 empty apiVersion', variant((ws) => { ws.spec.targetRef.apiVersion = ''; }), [
      'spec.targetRef: Invalid value: {"apiVersion":"","kind":"CloneSet","name":"demo"}: empty TargetReference is not valid for WorkloadSpread.',
    ]],
    ['V2 empty name', variant((ws) => { ws.spec.targetRef.name = ''; }), [
      'spec.targetRef: Invalid value: {"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":""}: empty TargetReference is not valid for WorkloadSpread.',
    ]],
    ['V3 CloneSet outside apps.kruise.io', variant(ref('apps/v1', 'CloneSet')), ['spec.targetRef: Invalid value: {"apiVersion":"apps/v1","kind":"CloneSet","name":"demo"}: TargetReference is not valid for CloneSet.']],
    ['V3 unparseable apiVersion', variant(ref('a/b/c', 'CloneSet')), ['spec.targetRef: Invalid value: {"apiVersion":"a/b/c","kind":"CloneSet","name":"demo"}: TargetReference is not valid for CloneSet.']],
    ['V4 Deployment outside apps', variant(ref('apps.kruise.io/v1alpha1', 'Deployment')), ['spec.targetRef: Invalid value: {"apiVersion":"apps.kruise.io/v1alpha1","kind":"Deployment","name":"demo"}: TargetReference is not valid for Deployment.']],
    ['V5 ReplicaSet outside apps', variant(ref('extensions/v1beta1', 'ReplicaSet')), ['spec.targetRef: Invalid value: {"apiVersion":"extensions/v1beta1","kind":"ReplicaSet","name":"demo"}: TargetReference is not valid for ReplicaSet.']],
    ['V6 Job outside batch', variant(ref('apps/v1', 'Job')), ['spec.targetRef: Invalid value: {"apiVersion":"apps/v1","kind":"Job","name":"demo"}: TargetReference is not valid for Job.']],
    ['V7 StatefulSet in rollouts.kruise.io/v2', variant(ref('rollouts.kruise.io/v2', 'StatefulSet')), ['spec.targetRef: Invalid value: {"apiVersion":"rollouts.kruise.io/v2","kind":"StatefulSet","name":"demo"}: TargetReference is not valid for StatefulSet.']],
    ['V9 no subsets', variant((ws) => { ws.spec.subsets = []; }), ['spec.subsets: Required value: subsets number must >= 1 in WorkloadSpread']],
    ['V10 empty subset name', variant((ws) => { ws.spec.subsets[1].name = ''; }), ['spec.subsets[1].name: Invalid value: ""']],
    ['V11 duplicate subset name (the later one)', variant((ws) => { ws.spec.subsets[2].name = 'subset-a'; }), ['spec.subsets[2].name: Invalid value: "subset-a": duplicated subset name subset-a']],
    ['V12 required term: Exists with values', variant((ws) => { ws.spec.subsets[0].requiredNodeSelectorTerm = { matchExpressions: [{ key: 'k', operator: 'Exists', values: ['v'] }] }; }), [
      "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ]],
    ['V12 required term: matchFields only metadata.name', variant((ws) => { ws.spec.subsets[0].requiredNodeSelectorTerm = { matchFields: [{ key: 'spec.unschedulable', operator: 'In', values: ['x'] }] }; }), [
      'spec.subsets[0].requiredNodeSelectorTerm.matchFields[0].key: Invalid value: "spec.unschedulable": not a valid field selector key',
    ]],
    ['V13 preferred term weight', variant((ws) => { ws.spec.subsets[1].preferredNodeSelectorTerms = [{ weight: 0, preference: zoneTerm('z') }]; }), [
      'spec.subsets[1].preferredNodeSelectorTerms[0].weight: Invalid value: 0: must be in the range 1-100',
    ]],
    ['V13 preferred term preference', variant((ws) => { ws.spec.subsets[1].preferredNodeSelectorTerms = [{ weight: 1, preference: { matchExpressions: [{ key: 'k', operator: 'DoesNotExist', values: ['v'] }] } }]; }), [
      "spec.subsets[1].preferredNodeSelectorTerms[0].preference.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ]],
    ['V14 toleration effect', variant((ws) => { ws.spec.subsets[0].tolerations = [{ key: 'ecs', operator: 'Exists', effect: 'Sometimes' }]; }), [
      'spec.subsets[0].tolerations[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ]],
    ['V14 toleration: empty key needs Exists', variant((ws) => { ws.spec.subsets[0].tolerations = [{ operator: 'Equal', value: 'x' }]; }), [
      'spec.subsets[0].tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
    ]],
    ['V16 mixed types (and validation stops there)', variant((ws) => { maxes([50, '50%', 3])(ws); ws.spec.subsets[2].name = 's0'; }), [
      'spec.subsets[1].maxReplicas: Invalid value: "50%": the maxReplicas type of all subsets must be the same',
    ]],
    ['V17 StatefulSet with a percentage', variant((ws) => { ref('apps/v1', 'StatefulSet')(ws); maxes(['50%', undefined])(ws); }), [
      'spec.subsets[0].maxReplicas: Invalid value: "50%": the maxReplicas type must be Int for StatefulSet',
    ]],
    ['V18 -100', variant(maxes([-100, undefined])), ['spec.subsets[0].maxReplicas: Invalid value: -100: maxReplicas is not valid for subset']],
    ['V18 "-1%"', variant(maxes(['-1%', undefined])), ['spec.subsets[0].maxReplicas: Invalid value: "-1%": maxReplicas is not valid for subset']],
    ['V18 "0.2%"', variant(maxes(['0.2%', undefined])), ['spec.subsets[0].maxReplicas: Invalid value: "0.2%": maxReplicas is not valid for subset']],
    ['V18 "50.2%"', variant(maxes(['50.2%', undefined])), ['spec.subsets[0].maxReplicas: Invalid value: "50.2%": maxReplicas is not valid for subset']],
    ['V18 a string without %', variant(maxes(['50', undefined])), ['spec.subsets[0].maxReplicas: Invalid value: "50": maxReplicas is not valid for subset']],
    ['V19 40% + 70% → error at [1]', variant(maxes(['40%', '70%'])), ["spec.subsets[1].maxReplicas: Invalid value: \"70%\": the sum of all subsets' maxReplicas exceeds 100%"]],
    ['V20 sum < 100 with the last set → error at [0]', variant(maxes(['30%', '30%'])), [
      'spec.subsets[0].maxReplicas: Invalid value: "30%": maxReplicas sum of all subsets must equal 100% when type is specified as percent',
    ]],
    ['V22 adaptive with type Fixed', variant((ws) => { ws.spec.subsets[2].maxReplicas = undefined; ws.spec.scheduleStrategy = { type: 'Fixed', adaptive: {} }; }), [
      'spec.scheduleStrategy.type: Invalid value: "Fixed": the scheduleStrategy\'s type must be adaptive when using adaptive scheduleStrategy',
    ]],
    ['V22 adaptive without a type', variant((ws) => { ws.spec.scheduleStrategy = { adaptive: { rescheduleCriticalSeconds: 10 } }; }), [
      'spec.scheduleStrategy.type: Invalid value: "": the scheduleStrategy\'s type must be adaptive when using adaptive scheduleStrategy',
    ]],
    ['V23 adaptive with the last maxReplicas set', variant(adaptive(30, [5, 6])), [
      "spec.scheduleStrategy.adaptive: Invalid value: 6: the last subset's maxReplicas must be not specified when using adaptive scheduleStrategy",
    ]],
    ['V24 negative', variant(adaptive(-1, [5, undefined])), [
      'spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds: Invalid value: -1: rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > 295 is not permitted',
    ]],
    ['D2 minReplicas above an int maxReplicas', variant((ws) => { ws.spec.subsets[0].minReplicas = 51; }), ['spec.subsets[0].minReplicas: Invalid value: 51: must be less than or equal to maxReplicas (50)']],
    ['metadata.name must be a DNS subdomain (other rules still run)', variant((ws) => { ws.metadata.name = 'Bad_Name'; ws.spec.subsets[1].name = ''; }), [
      "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      'spec.subsets[1].name: Invalid value: ""',
    ]],
  ];
  for (const [name, ws, want] of cases) test(name, () => assert.deepEqual(check(ws), want));

  test('V21 (semantic rule) rejects an unknown strategy type', () => {
    assert.deepEqual(texts(validateWorkloadSpreadSpec({ ...demo().spec, scheduleStrategy: { type: 'Spread' } })), [
      'spec.scheduleStrategy.type: Invalid value: "Spread": ScheduleStrategy\'s type is not valid',
    ]);
  });
  test('V21 through validateWorkloadSpread is caught by the CRD enum first', () => {
    assert.deepEqual(check(variant((ws) => { ws.spec.scheduleStrategy = { type: 'Spread' }; })), [
      'spec.scheduleStrategy.type: Unsupported value: "Spread": supported values: "Adaptive", "Fixed", ""',
    ]);
  });
  test('V25 a targetFilter selector that does not convert', () => {
    const errors = validateWorkloadSpread(variant((ws) => { ws.spec.targetFilter = { selector: { matchExpressions: [{ key: 'role', operator: 'In', values: [] }] } }; }));
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.field, 'spec.targetFilter');
    assert.equal(errors[0]?.type, 'FieldValueInvalid');
    assert.match(errors[0]?.detail ?? '', /values set can't be empty/);
    assert.deepEqual(errors[0]?.badValue, { selector: { matchExpressions: [{ key: 'role', operator: 'In', values: [] }] } });
  });
});

describe('V24 bound (D10)', () => {
  const cases: [number, number, number][] = [
    [1, 300, 2147483647],
    [2, 300, 295],
    [3, 300, 147],
    [4, 300, 98],
    [5, 300, 73],
    [2, 600, 595],
    [3, 600, 297],
    [4, 600, 198],
  ];
  for (const [n, window, bound] of cases) {
    test(`n=${n}, window ${window}s → ${bound}`, () => {
      assert.equal(rescheduleCriticalSecondsBound(n, window), bound);
      const subsets = [...Array.from({ length: n - 1 }, (_, i) => i + 1), undefined];
      const options = { unschedulableRecoverySeconds: window };
      assert.deepEqual(check(variant(adaptive(bound, subsets)), options), [], 'the bound itself is accepted');
      if (bound < 2147483647) {
        assert.deepEqual(check(variant(adaptive(bound + 1, subsets)), options), [
          `spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds: Invalid value: ${bound + 1}: rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > ${bound} is not permitted`,
        ]);
      }
    });
  }
  test('the default window is 300 s', () => assert.equal(rescheduleCriticalSecondsBound(3), 147));
  test('the bound never grows with more subsets', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 5, max: 100_000 }), (n, w) => {
      assert.ok(rescheduleCriticalSecondsBound(n + 1, w) <= rescheduleCriticalSecondsBound(n, w));
    }));
  });
});

describe('structural check comes first', () => {
  const cases: [string, Json, string[]][] = [
    ['subsets must be a list', variant((ws) => { ws.spec.subsets = { a: 1 }; }), ['spec.subsets: Invalid value: "object": spec.subsets in body must be of type array: "object"']],
    ['maxReplicas must be an int or a string', variant((ws) => { ws.spec.subsets[0].maxReplicas = true; }), [
      'spec.subsets[0].maxReplicas: Invalid value: "boolean": spec.subsets[0].maxReplicas in body must be of type integer,string: "boolean"',
    ]],
    ['maxReplicas 1.5 is not an int', variant((ws) => { ws.spec.subsets[0].maxReplicas = 1.5; }), [
      'spec.subsets[0].maxReplicas: Invalid value: "number": spec.subsets[0].maxReplicas in body must be of type integer,string: "number"',
    ]],
    ['minReplicas is an integer', variant((ws) => { ws.spec.subsets[0].minReplicas = 'two'; }), [
      'spec.subsets[0].minReplicas: Invalid value: "string": spec.subsets[0].minReplicas in body must be of type integer: "string"',
    ]],
    ['D2 minReplicas ≥ 0 (schema minimum)', variant((ws) => { ws.spec.subsets[0].minReplicas = -1; }), [
      'spec.subsets[0].minReplicas: Invalid value: -1: spec.subsets[0].minReplicas in body should be greater than or equal to 0',
    ]],
    ['targetRef fields are required by the schema', variant((ws) => { delete ws.spec.targetRef.name; }), ['spec.targetRef.name: Required value']],
    ['subset name is required by the schema', variant((ws) => { delete ws.spec.subsets[1].name; }), ['spec.subsets[1].name: Required value']],
    ['semantic rules do not run on a broken object', variant((ws) => { ws.spec.subsets[1].name = 'subset-a'; ws.spec.subsets[0].tolerations = 'x'; }), [
      'spec.subsets[0].tolerations: Invalid value: "string": spec.subsets[0].tolerations in body must be of type array: "string"',
    ]],
    ['metadata must be an object', variant((ws) => { ws.metadata = 'x'; }), ['metadata: Invalid value: "string": metadata in body must be of type object: "string"']],
    ['status timestamps are date-times', variant((ws) => { ws.status = { subsetStatuses: [{ name: 'a', replicas: 1, missingReplicas: 0, creatingPods: { p: 'yesterday' } }] }; }), [
      'status.subsetStatuses[0].creatingPods.p: Invalid value: "yesterday": status.subsetStatuses[0].creatingPods.p in body must be of type date-time: "yesterday"',
    ]],
    ['not an object at all', 'ws', ['[]: Invalid value: "string": must be of type object: "string"']],
    ['null', null, ['[]: Invalid value: "null": must be of type object: "null"']],
  ];
  for (const [name, ws, want] of cases) test(name, () => assert.deepEqual(check(ws), want));

  test('never throws, whatever the input', () => {
    fc.assert(fc.property(fc.anything(), (value) => { validateWorkloadSpread(value); }));
    fc.assert(fc.property(fc.jsonValue(), (spec) => { validateWorkloadSpread({ metadata: { name: 'x' }, spec }); }));
    fc.assert(
      fc.property(fc.array(fc.record({ name: fc.string(), maxReplicas: fc.option(fc.oneof(fc.integer(), fc.string()), { nil: undefined }) }), { maxLength: 6 }), (subsets) => {
        const errors = validateWorkloadSpread(variant((ws) => { ws.spec.subsets = subsets; }));
        assert.ok(Array.isArray(errors));
      }),
    );
  });
});

describe('V8 and the whitelist', () => {
  const rollout = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'r' };
  const whitelist: Whitelist = { workloads: [{ group: 'argoproj.io', version: 'v1alpha1', kind: 'Rollout', subResources: [], replicasPath: 'spec.replicas' }] };
  test('a custom kind not in the whitelist is not permitted', () => {
    assert.deepEqual(texts(validateTargetRefPermitted(rollout, EMPTY_WHITELIST)), [
      'spec.targetRef: Invalid value: {"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","name":"r"}: TargetReference\'s GroupKind is not permitted.',
    ]);
  });
  test('a whitelisted kind is permitted, whatever its version', () => {
    assert.deepEqual(validateTargetRefPermitted(rollout, whitelist), []);
    assert.deepEqual(validateTargetRefPermitted({ ...rollout, apiVersion: 'argoproj.io/v1' }, whitelist), []);
  });
  test('a sub-resource is not a permitted target', () => {
    const wl: Whitelist = { workloads: [{ group: 'g.io', version: 'v1', kind: 'Set', subResources: [{ group: 'g.io', version: 'v1', kind: 'Item' }], replicasPath: '' }] };
    assert.equal(validateTargetRefPermitted({ apiVersion: 'g.io/v1', kind: 'Item', name: 'x' }, wl).length, 1);
  });
  test('a config map read error is an InternalError (and the kind is then not permitted)', () => {
    assert.deepEqual(texts(validateTargetRefPermitted(rollout, { error: 'configmaps "workloadspread-configuration" is forbidden' })), [
      'spec.targetRef: Internal error: configmaps "workloadspread-configuration" is forbidden',
      'spec.targetRef: Invalid value: {"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","name":"r"}: TargetReference\'s GroupKind is not permitted.',
    ]);
  });
  test('built-in kinds are judged without the whitelist (V3–V7)', () => {
    assert.deepEqual(validateTargetRefPermitted({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, EMPTY_WHITELIST), []);
    assert.equal(validateTargetRefPermitted({ apiVersion: 'v1', kind: 'Deployment', name: 'd' }, EMPTY_WHITELIST).length, 1);
  });
  test('V8 also runs inside the spec rules when a whitelist is given', () => {
    const spec = { ...demo().spec, targetRef: rollout };
    assert.deepEqual(validateWorkloadSpreadSpec(spec), []);
    assert.equal(validateWorkloadSpreadSpec(spec, { whitelist: EMPTY_WHITELIST }).length, 1);
  });
});

describe('V26 conflicts', () => {
  const ws = (name: string, apiVersion: string, kind: string, target: string) => ({ metadata: { name }, spec: { targetRef: { apiVersion, kind, name: target }, subsets: [] } });
  const me = ws('a', 'apps/v1', 'Deployment', 'web');
  test('another WorkloadSpread on the same group+kind+name conflicts (versions may differ)', () => {
    assert.deepEqual(texts(validateTargetConflict(me, [ws('b', 'apps/v1beta1', 'Deployment', 'web')])), [
      'spec.targetRef: Invalid value: {"apiVersion":"apps/v1","kind":"Deployment","name":"web"}: ws.spec.targetRef is in conflict with other WorkloadSpread b',
    ]);
  });
  test('itself (same name) is skipped, other targets do not conflict, only the first conflict is reported', () => {
    assert.deepEqual(validateTargetConflict(me, [me, ws('c', 'apps/v1', 'Deployment', 'api'), ws('d', 'apps.kruise.io/v1alpha1', 'Deployment', 'web')]), []);
    assert.equal(validateTargetConflict(me, [ws('b', 'apps/v1', 'Deployment', 'web'), ws('c', 'apps/v1', 'Deployment', 'web')]).length, 1);
  });
  test('a WorkloadSpread without targetRef conflicts with nothing', () => {
    assert.deepEqual(validateTargetConflict({ metadata: { name: 'x' }, spec: {} }, [me]), []);
  });
});

describe('V27 updates', () => {
  const old = demo();
  test('changing the version of the target is allowed', () => {
    assert.deepEqual(validateWorkloadSpreadUpdate(old, variant((ws) => { ws.spec.targetRef.apiVersion = 'apps.kruise.io/v1beta1'; })), []);
  });
  const changes: [string, (ws: Json) => void][] = [
    ['group', (ws) => { ws.spec.targetRef.apiVersion = 'apps/v1'; }],
    ['kind', (ws) => { ws.spec.targetRef.kind = 'StatefulSet'; }],
    ['name', (ws) => { ws.spec.targetRef.name = 'other'; }],
  ];
  for (const [what, mutate] of changes) {
    test(`changing the target's ${what} is not`, () => {
      const errors = validateWorkloadSpreadUpdate(old, variant(mutate));
      assert.equal(errors.length, 1);
      assert.equal(errors[0]?.field, 'spec.targetRef');
      assert.equal(errors[0]?.detail, 'change TargetReference is not permitted for WorkloadSpread');
    });
  }
  test('metadata.name is immutable', () => {
    assert.deepEqual(texts(validateWorkloadSpreadUpdate(old, variant((ws) => { ws.metadata.name = 'renamed'; }))), ['metadata.name: Invalid value: "renamed": field is immutable']);
  });
});

describe('D18: the rebalancing annotations', () => {
  const annotated = (annotations: Record<string, unknown>, kind?: string) =>
    variant((ws) => {
      ws.metadata.annotations = annotations;
      if (kind !== undefined) ws.spec.targetRef = { apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1', kind, name: 'demo' };
    });

  test('accepted: absent, "true", "false", and a max-in-flight from 1 to 100', () => {
    for (const a of [{}, { 'workloadspread.io/rebalance': 'true' }, { 'workloadspread.io/rebalance': 'false' }, { 'workloadspread.io/rebalance': 'true', 'workloadspread.io/rebalance-max-in-flight': '1' }, { 'workloadspread.io/rebalance': 'true', 'workloadspread.io/rebalance-max-in-flight': '100' }]) {
      assert.deepEqual(check(annotated(a)), [], JSON.stringify(a));
    }
  });

  test('an unknown value names the annotation and the value', () => {
    assert.deepEqual(check(annotated({ 'workloadspread.io/rebalance': 'yes' })), ['metadata.annotations[workloadspread.io/rebalance]: Invalid value: "yes": must be "true" or "false"']);
    assert.deepEqual(check(annotated({ 'workloadspread.io/rebalance': 'True' })), ['metadata.annotations[workloadspread.io/rebalance]: Invalid value: "True": must be "true" or "false"']);
  });

  test('max-in-flight must be an integer from 1 to 100', () => {
    for (const bad of ['0', '101', '-1', '1.5', 'two', '', ' 1', '99999999999']) {
      assert.deepEqual(check(annotated({ 'workloadspread.io/rebalance': 'true', 'workloadspread.io/rebalance-max-in-flight': bad })), [`metadata.annotations[workloadspread.io/rebalance-max-in-flight]: Invalid value: ${JSON.stringify(bad)}: must be an integer from 1 to 100`], bad);
    }
  });

  test('never for StatefulSet or Job targets', () => {
    for (const kind of ['StatefulSet', 'Job']) {
      assert.deepEqual(check(annotated({ 'workloadspread.io/rebalance': 'true' }, kind)), [`metadata.annotations[workloadspread.io/rebalance]: Invalid value: "true": rebalancing is not supported for ${kind} targets: their pods are not replaced by a ReplicaSet-like controller`]);
      assert.deepEqual(check(annotated({ 'workloadspread.io/rebalance': 'false' }, kind)), [], 'switched off explicitly is fine');
    }
  });

  test('annotation errors do not hide the spec rules', () => {
    const ws = annotated({ 'workloadspread.io/rebalance': 'on' });
    ws.spec.subsets[0].maxReplicas = -1;
    const got = check(ws);
    assert.equal(got.length, 2, got.join('\n'));
    assert.match(got[0] ?? '', /workloadspread.io\/rebalance/);
  });
});
