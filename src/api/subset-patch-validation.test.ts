import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatFieldError, root, type FieldError } from '../k8s/field-errors.ts';
import type { KubeObject } from '../k8s/types.ts';
import { QUANTITY_FORMAT_ERROR } from '../k8s/validation.ts';
import { podTemplateForPatches, subsetPatchErrors, validateSubsetPatches } from './subset-patch-validation.ts';
import { validateWorkloadSpreadFull } from './validation.ts';
import { EMPTY_WHITELIST } from './whitelist.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixtures are raw JSON that tests reshape freely
type Json = any;

const texts = (errors: FieldError[]): string[] => errors.map(formatFieldError);

const template = (mounts: unknown[] = []) => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'main', image: 'nginx', volumeMounts: mounts }] },
});

function workload(apiVersion: string, kind: string, extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion, kind, metadata: { name: 'demo', namespace: 'default' }, spec: { replicas: 3, template: template(), ...extra } };
}

function ws(apiVersion: string, kind: string, patches: unknown[]): Json {
  return {
    metadata: { name: 'ws', namespace: 'default' },
    spec: {
      targetRef: { apiVersion, kind, name: 'demo' },
      subsets: patches.map((patch, i) => (patch === undefined ? { name: `s${i}` } : { name: `s${i}`, patch })),
    },
  };
}

const deployment = workload('apps/v1', 'Deployment');
const envPatch = { spec: { containers: [{ name: 'main', env: [{ name: 'ZONE', value: 'a' }] }] } };

describe('V15: patches are validated against the workload pod template', () => {
  const cases: [string, Json, KubeObject | undefined, string[] | RegExp][] = [
    ['a valid patch', ws('apps/v1', 'Deployment', [envPatch, undefined]), deployment, []],
    ['#13: the workload does not exist yet → nothing validated', ws('apps/v1', 'Deployment', [{ spec: { containers: 'x' } }]), undefined, []],
    ['a custom kind → nothing validated', ws('argoproj.io/v1alpha1', 'Rollout', [{ spec: { containers: 'x' } }]), workload('argoproj.io/v1alpha1', 'Rollout'), []],
    ['a bad env name', ws('apps/v1', 'Deployment', [{ spec: { containers: [{ name: 'main', env: [{ name: '1X' }] }] } }]), deployment,
      /^spec\.subsets\[0\]\.patch\.spec\.containers\[0\]\.env\[0\]\.name: Invalid value: "1X": a valid environment variable name/],
    ['a new container without an image', ws('apps/v1', 'Deployment', [{ spec: { containers: [{ name: 'sidecar' }] } }]), deployment,
      /^spec\.subsets\[0\]\.patch\.spec\.containers\[\d\]\.image: Required value$/],
    ['a mount of a volume that does not exist', ws('apps/v1', 'Deployment', [{ spec: { containers: [{ name: 'main', volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }] } }]), deployment,
      ['spec.subsets[0].patch.spec.containers[0].volumeMounts[0].name: Not found: "cache"']],
    ['an invalid label in the patch metadata', ws('apps/v1', 'Deployment', [{ metadata: { labels: { subset: 'a b' } } }]), deployment,
      /^spec\.subsets\[0\]\.patch\.labels: Invalid value: "a b": a valid label must be an empty string/],
    ['an invalid priorityClassName', ws('apps/v1', 'Deployment', [{ spec: { priorityClassName: 'High' } }]), deployment,
      /^spec\.subsets\[0\]\.patch\.spec\.priorityClassName: Invalid value: "High": a lowercase RFC 1123 subdomain/],
    ['a malformed quantity → failed to unmarshal', ws('apps/v1', 'Deployment', [{ spec: { containers: [{ name: 'main', resources: { limits: { cpu: 'two' } } }] } }]), deployment,
      [`spec.subsets[0].patch: Invalid value: {"spec":{"containers":[{"name":"main","resources":{"limits":{"cpu":"two"}}}]}}: failed to unmarshal: ${QUANTITY_FORMAT_ERROR}`]],
    ['a wrong type → failed to unmarshal', ws('apps/v1', 'Deployment', [{ spec: { containers: 'x' } }]), deployment,
      ['spec.subsets[0].patch: Invalid value: {"spec":{"containers":"x"}}: failed to unmarshal: json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container']],
    ['a bad directive → failed to merge patch', ws('apps/v1', 'Deployment', [{ spec: { containers: [{ $patch: 'delete' }] } }]), deployment,
      ['spec.subsets[0].patch: Invalid value: {"spec":{"containers":[{"$patch":"delete"}]}}: failed to merge patch: map: map[$patch:delete] does not contain declared merge key: name']],
    ['each subset is reported at its own index', ws('apps/v1', 'Deployment', [envPatch, { spec: { dnsPolicy: 'X' } }]), deployment,
      ['spec.subsets[1].patch.spec.dnsPolicy: Unsupported value: "X": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"']],
    ['ReplicaSet, Job and StatefulSet templates are used too', ws('batch/v1', 'Job', [{ spec: { restartPolicy: 'Sometimes' } }]), workload('batch/v1', 'Job'),
      ['spec.subsets[0].patch.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']],
    ['#12: an Advanced StatefulSet (apps.kruise.io/v1beta1) is validated', ws('apps.kruise.io/v1beta1', 'StatefulSet', [{ spec: { containers: [{ name: 'main', image: '' }] } }]),
      workload('apps.kruise.io/v1beta1', 'StatefulSet'), /containers\[0\]\.image: Required value$/],
  ];
  for (const [name, spread, target, want] of cases) {
    test(name, () => {
      const got = texts(validateSubsetPatches(spread, target));
      if (want instanceof RegExp) {
        assert.equal(got.length, 1, JSON.stringify(got));
        assert.match(got[0] as string, want);
      } else {
        assert.deepEqual(got, want);
      }
    });
  }
});

describe('#11: volumeClaimTemplates become volumes before validation', () => {
  const mountsData = { template: template([{ name: 'data', mountPath: '/data' }]), volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }] };
  for (const [apiVersion, kind] of [['apps.kruise.io/v1alpha1', 'CloneSet'], ['apps/v1', 'StatefulSet'], ['apps.kruise.io/v1beta1', 'StatefulSet']] as const) {
    test(`${kind} (${apiVersion}): a template mounting its claim validates`, () => {
      assert.deepEqual(validateSubsetPatches(ws(apiVersion, kind, [envPatch]), workload(apiVersion, kind, mountsData)), []);
    });
  }
  test('without the conversion the same mount would be "Not found" (a Deployment has no claim templates)', () => {
    assert.deepEqual(texts(validateSubsetPatches(ws('apps/v1', 'Deployment', [envPatch]), workload('apps/v1', 'Deployment', mountsData))), [
      'spec.subsets[0].patch.spec.containers[0].volumeMounts[0].name: Not found: "data"',
    ]);
  });
  test('a claim replaces a same-named template volume and the workload is not mutated', () => {
    const cloneSet = workload('apps.kruise.io/v1alpha1', 'CloneSet', {
      template: { spec: { containers: [{ name: 'main', image: 'x' }], volumes: [{ name: 'data', emptyDir: {} }, { name: 'tmp', emptyDir: {} }] } },
      volumeClaimTemplates: [{ metadata: { name: 'data' } }, { metadata: { name: 'logs' } }],
    });
    const before = JSON.stringify(cloneSet);
    const result = podTemplateForPatches({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'demo' }, cloneSet);
    assert.deepEqual(result?.['spec'], {
      containers: [{ name: 'main', image: 'x' }],
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
        { name: 'tmp', emptyDir: {} },
        { name: 'logs', persistentVolumeClaim: { claimName: 'logs' } },
      ],
    });
    assert.equal(JSON.stringify(cloneSet), before);
  });
  test('subsetPatchErrors on its own', () => {
    assert.deepEqual(subsetPatchErrors({}, template(), root('p')), []);
  });
});

describe('validateWorkloadSpreadFull: everything in the reference order', () => {
  const spread = (): Json => ({
    metadata: { name: 'ws', namespace: 'default' },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'demo' },
      subsets: [
        { name: 'a', maxReplicas: 2, tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }], patch: { spec: { containers: [{ name: 'main', image: '' }] } } },
        { name: 'a' },
      ],
    },
  });
  test('subset rules with their patch errors in place, then conflicts, then update rules', () => {
    const old = { ...spread(), metadata: { name: 'ws', namespace: 'default' }, spec: { ...spread().spec, targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'old' } } };
    const other = { metadata: { name: 'other' }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'demo' } } };
    assert.deepEqual(texts(validateWorkloadSpreadFull(spread(), { whitelist: EMPTY_WHITELIST, workload: deployment, others: [other], old })), [
      "spec.subsets[0].tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
      'spec.subsets[0].patch.spec.containers[0].image: Required value',
      'spec.subsets[1].name: Invalid value: "a": duplicated subset name a',
      'spec.targetRef: Invalid value: {"apiVersion":"apps/v1","kind":"Deployment","name":"demo"}: ws.spec.targetRef is in conflict with other WorkloadSpread other',
      'spec.targetRef: Invalid value: {"apiVersion":"apps/v1","kind":"Deployment","name":"demo"}: change TargetReference is not permitted for WorkloadSpread',
    ]);
  });
  test('a valid object with every context is accepted', () => {
    const valid = spread();
    valid.spec.subsets = [{ name: 'a', maxReplicas: 2, patch: envPatch }, { name: 'b' }];
    assert.deepEqual(validateWorkloadSpreadFull(valid, { whitelist: EMPTY_WHITELIST, workload: deployment, others: [valid], old: valid }), []);
  });
  test('V8 runs with the whitelist; the recovery window is honoured', () => {
    const custom = spread();
    custom.spec.targetRef = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'r' };
    custom.spec.subsets = [{ name: 'a', maxReplicas: 1 }, { name: 'b' }];
    custom.spec.scheduleStrategy = { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 400 } };
    assert.deepEqual(texts(validateWorkloadSpreadFull(custom, { whitelist: EMPTY_WHITELIST, others: [], unschedulableRecoverySeconds: 600 })), [
      'spec.targetRef: Invalid value: {"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","name":"r"}: TargetReference\'s GroupKind is not permitted.',
    ]);
  });
  test('a structurally broken object gets only its structural errors', () => {
    const broken = spread();
    broken.spec.subsets = 'nope';
    assert.deepEqual(texts(validateWorkloadSpreadFull(broken, { whitelist: EMPTY_WHITELIST, workload: deployment, others: [] })), [
      'spec.subsets: Invalid value: "string": spec.subsets in body must be of type array: "string"',
    ]);
  });
});
