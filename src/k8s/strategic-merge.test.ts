import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { POD_PATCH_META, patchMetaForKind, strategicMergePatch, type PatchMeta } from './strategic-merge.ts';
import { createMergePatch } from './merge-patch.ts';
import { deepClone, deepEqual } from './json.ts';

function apply(original: unknown, patch: unknown, meta: PatchMeta = POD_PATCH_META): unknown {
  const r = strategicMergePatch(original, patch, meta);
  if (!r.ok) assert.fail(`unexpected error: ${r.error}`);
  return r.value;
}

function applyError(original: unknown, patch: unknown, meta: PatchMeta = POD_PATCH_META): string {
  const r = strategicMergePatch(original, patch, meta);
  if (r.ok) assert.fail(`expected an error, got ${JSON.stringify(r.value)}`);
  return r.error;
}

const podWith = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'p' }) => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec });
const names = (list: unknown): unknown[] => (list as { name?: unknown }[]).map((e) => e.name);

const twoContainers = () =>
  podWith({
    containers: [
      { name: 'a', image: 'a:1', resources: { requests: { cpu: '100m' } }, env: [{ name: 'X', value: '1' }, { name: 'Y', value: '2' }] },
      { name: 'b', image: 'b:1', ports: [{ containerPort: 80, name: 'http' }] },
    ],
  });

describe('Pod schema: containers merge by name', () => {
  test('a patched container keeps its place and its other fields', () => {
    const out = apply(twoContainers(), { spec: { containers: [{ name: 'b', image: 'b:2' }] } }) as { spec: { containers: { name: string; image: string }[] } };
    assert.deepEqual(names(out.spec.containers), ['a', 'b']);
    assert.deepEqual(out.spec.containers[1], { name: 'b', image: 'b:2', ports: [{ containerPort: 80, name: 'http' }] });
    assert.equal(out.spec.containers[0]?.image, 'a:1');
  });

  test('without $setElementOrder a new container goes first (upstream best effort)', () => {
    const out = apply(twoContainers(), { spec: { containers: [{ name: 'c', image: 'c' }] } }) as ReturnType<typeof twoContainers>;
    assert.deepEqual(names(out.spec.containers), ['c', 'a', 'b']);
  });

  test('$setElementOrder puts it where the client wants', () => {
    const patch = { spec: { '$setElementOrder/containers': [{ name: 'a' }, { name: 'c' }, { name: 'b' }], containers: [{ name: 'c', image: 'c' }] } };
    const out = apply(twoContainers(), patch) as ReturnType<typeof twoContainers>;
    assert.deepEqual(names(out.spec.containers), ['a', 'c', 'b']);
  });

  test('$setElementOrder alone reorders', () => {
    const out = apply(twoContainers(), { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } }) as { spec: { containers: { name: string; image: string }[] } };
    assert.deepEqual(names(out.spec.containers), ['b', 'a']);
    assert.equal(out.spec.containers[1]?.image, 'a:1');
  });

  test('env merges by name inside a container; resources merge as maps', () => {
    const patch = {
      spec: { containers: [{ name: 'a', env: [{ name: 'Y', value: '3' }, { name: 'Z', value: '4' }], resources: { limits: { cpu: '1' } } }] },
    };
    const out = apply(twoContainers(), patch) as { spec: { containers: { env: unknown; resources: unknown }[] } };
    assert.deepEqual(out.spec.containers[0]?.env, [
      { name: 'X', value: '1' },
      { name: 'Y', value: '3' },
      { name: 'Z', value: '4' },
    ]);
    assert.deepEqual(out.spec.containers[0]?.resources, { requests: { cpu: '100m' }, limits: { cpu: '1' } });
  });

  test('ports merge by containerPort', () => {
    const patch = { spec: { containers: [{ name: 'b', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }] }] } };
    const out = apply(twoContainers(), patch) as { spec: { containers: { ports: unknown }[] } };
    assert.deepEqual(out.spec.containers[1]?.ports, [{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }]);
  });

  test('$patch: delete removes the element with that key', () => {
    const out = apply(twoContainers(), { spec: { containers: [{ name: 'a', $patch: 'delete' }] } }) as ReturnType<typeof twoContainers>;
    assert.deepEqual(names(out.spec.containers), ['b']);
  });

  test('$patch: replace makes the other elements the whole list', () => {
    const out = apply(twoContainers(), { spec: { containers: [{ $patch: 'replace' }, { name: 'z', image: 'z' }] } }) as ReturnType<typeof twoContainers>;
    assert.deepEqual(out.spec.containers, [{ name: 'z', image: 'z' }]);
  });

  test('initContainers and ephemeralContainers merge the same way', () => {
    const original = podWith({ containers: [], initContainers: [{ name: 'i1', image: 'x' }] });
    const out = apply(original, { spec: { initContainers: [{ name: 'i1', image: 'y' }] } }) as { spec: { initContainers: unknown } };
    assert.deepEqual(out.spec.initContainers, [{ name: 'i1', image: 'y' }]);
  });
});

describe('Pod schema: other lists', () => {
  test('tolerations have no merge key: the list is replaced', () => {
    const original = podWith({ containers: [], tolerations: [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists' }] });
    const out = apply(original, { spec: { tolerations: [{ key: 'c', operator: 'Exists' }] } }) as { spec: { tolerations: unknown } };
    assert.deepEqual(out.spec.tolerations, [{ key: 'c', operator: 'Exists' }]);
  });

  test('node affinity terms are replaced, the affinity map merges', () => {
    const term = (zone: string) => ({ matchExpressions: [{ key: 'zone', operator: 'In', values: [zone] }] });
    const original = podWith({
      containers: [],
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term('a'), term('b')] } },
        podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] },
      },
    });
    const patch = { spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term('c')] } } } } };
    const out = apply(original, patch) as { spec: { affinity: Record<string, unknown> } };
    assert.deepEqual(out.spec.affinity, {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term('c')] } },
      podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] },
    });
  });

  test('topologySpreadConstraints merge by topologyKey', () => {
    const original = podWith({ containers: [], topologySpreadConstraints: [{ topologyKey: 'zone', maxSkew: 1 }, { topologyKey: 'host', maxSkew: 1 }] });
    const out = apply(original, { spec: { topologySpreadConstraints: [{ topologyKey: 'zone', maxSkew: 2 }] } }) as { spec: { topologySpreadConstraints: unknown } };
    assert.deepEqual(out.spec.topologySpreadConstraints, [
      { topologyKey: 'zone', maxSkew: 2 },
      { topologyKey: 'host', maxSkew: 1 },
    ]);
  });

  test('volumes merge by name, and $retainKeys clears the other volume sources', () => {
    const original = podWith({ containers: [], volumes: [{ name: 'v1', configMap: { name: 'c' } }, { name: 'v2', emptyDir: {} }] });
    const patch = { spec: { volumes: [{ name: 'v1', $retainKeys: ['name', 'secret'], secret: { secretName: 's' } }] } };
    const out = apply(original, patch) as { spec: { volumes: unknown } };
    assert.deepEqual(out.spec.volumes, [{ name: 'v1', secret: { secretName: 's' } }, { name: 'v2', emptyDir: {} }]);
  });

  test('status conditions merge by type', () => {
    const original = { ...podWith({ containers: [] }), status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'PodScheduled', status: 'True' }] } };
    const out = apply(original, { status: { conditions: [{ type: 'Ready', status: 'True' }] } }) as { status: { conditions: unknown } };
    assert.deepEqual(out.status.conditions, [
      { type: 'Ready', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ]);
  });
});

describe('metadata: maps, nulls, primitive merge lists', () => {
  const meta = { name: 'p', labels: { a: '1', b: '2' }, annotations: { x: 'y' }, finalizers: ['f1', 'f2'], ownerReferences: [{ uid: 'u1', name: 'rs', kind: 'ReplicaSet', apiVersion: 'apps/v1' }] };
  const original = () => podWith({ containers: [], nodeName: 'n1' }, deepClone(meta));

  const cases: [string, unknown, (out: { metadata: Record<string, unknown>; spec: Record<string, unknown> }) => void][] = [
    ['nested maps merge', { metadata: { labels: { c: '3' } } }, (o) => assert.deepEqual(o.metadata.labels, { a: '1', b: '2', c: '3' })],
    ['null deletes a key', { metadata: { labels: { a: null } } }, (o) => assert.deepEqual(o.metadata.labels, { b: '2' })],
    ['null deletes a field', { spec: { nodeName: null } }, (o) => assert.equal('nodeName' in o.spec, false)],
    ['null for an absent key is ignored', { metadata: { labels: { zzz: null } } }, (o) => assert.deepEqual(o.metadata.labels, { a: '1', b: '2' })],
    ['$patch: replace on a map', { metadata: { labels: { $patch: 'replace', only: 'me' } } }, (o) => assert.deepEqual(o.metadata.labels, { only: 'me' })],
    ['$patch: delete on a map', { metadata: { annotations: { $patch: 'delete' } } }, (o) => assert.deepEqual(o.metadata.annotations, {})],
    ['finalizers merge as a set (new first)', { metadata: { finalizers: ['f3', 'f1'] } }, (o) => assert.deepEqual(o.metadata.finalizers, ['f3', 'f1', 'f2'])],
    ['an empty merge list changes nothing', { metadata: { finalizers: [] } }, (o) => assert.deepEqual(o.metadata.finalizers, ['f1', 'f2'])],
    ['$setElementOrder on a primitive list', { metadata: { '$setElementOrder/finalizers': ['f1', 'f2', 'f3'], finalizers: ['f3'] } }, (o) => assert.deepEqual(o.metadata.finalizers, ['f1', 'f2', 'f3'])],
    ['$deleteFromPrimitiveList', { metadata: { '$deleteFromPrimitiveList/finalizers': ['f1', 'nope'] } }, (o) => assert.deepEqual(o.metadata.finalizers, ['f2'])],
    ['$deleteFromPrimitiveList on an absent list does nothing', { spec: { '$deleteFromPrimitiveList/nothing': ['x'] } }, (o) => assert.equal('nothing' in o.spec, false)],
    ['null finalizers remove the list', { metadata: { finalizers: null } }, (o) => assert.equal('finalizers' in o.metadata, false)],
    [
      'ownerReferences merge by uid',
      { metadata: { ownerReferences: [{ uid: 'u1', controller: true }] } },
      (o) => assert.deepEqual(o.metadata.ownerReferences, [{ uid: 'u1', name: 'rs', kind: 'ReplicaSet', apiVersion: 'apps/v1', controller: true }]),
    ],
    ['a type change replaces', { metadata: { labels: 'oops' } }, (o) => assert.equal(o.metadata.labels, 'oops')],
    [
      'new values are cleaned of nulls and directives',
      { spec: { newField: { a: null, b: 1, list: [null, { c: null, d: 2 }, { $patch: 'delete', e: 1 }] } } },
      (o) => assert.deepEqual(o.spec.newField, { b: 1, list: [null, { d: 2 }] }),
    ],
    ['$patch: delete on an absent map is a no-op', { spec: { affinity: { $patch: 'delete' } } }, (o) => assert.equal('affinity' in o.spec, false)],
    ['a null patch value for a whole section', { metadata: { annotations: null } }, (o) => assert.equal('annotations' in o.metadata, false)],
  ];
  for (const [name, patch, check] of cases) {
    test(name, () => check(apply(original(), patch) as { metadata: Record<string, unknown>; spec: Record<string, unknown> }));
  }

  test('the top-level $patch: delete empties the object; a null patch changes nothing', () => {
    assert.deepEqual(apply(original(), { $patch: 'delete' }), {});
    assert.deepEqual(apply(original(), null), original());
    assert.deepEqual(apply(null, { a: 1 }, {}), { a: 1 });
  });
});

describe('malformed patches are errors with upstream messages', () => {
  const pod = () => twoContainers();
  const cases: [string, unknown, string][] = [
    ['$patch: merge in a map', { spec: { $patch: 'merge', a: 'b' } }, 'unknown patch type: merge in map: map[$patch:merge a:b]'],
    ['$patch: merge in a list', { spec: { containers: [{ $patch: 'merge' }] } }, 'merging lists cannot yet be specified in the patch'],
    ['unknown $patch in a list', { spec: { containers: [{ name: 'a', $patch: 'bogus' }] } }, 'unknown patch type: bogus in map: map[$patch:bogus name:a]'],
    ['$patch: delete without the merge key', { spec: { containers: [{ $patch: 'delete' }] } }, 'map: map[$patch:delete] does not contain declared merge key: name'],
    ['an element without the merge key', { spec: { containers: [{ image: 'x' }] } }, 'map: map[image:x] does not contain declared merge key: name'],
    ['$retainKeys not a list', { metadata: { $retainKeys: 'name' } }, 'invalid patch format of retainKeys'],
    ['a patch key missing from $retainKeys', { metadata: { $retainKeys: ['name'], labels: { a: 'b' } } }, 'invalid patch format of retainKeys'],
    ['$deleteFromPrimitiveList without a slash', { metadata: { $deleteFromPrimitiveListfinalizers: ['a'] } }, 'invalid patch format of primitive list'],
    ['$setElementOrder without a slash', { spec: { $setElementOrdercontainers: [] } }, 'invalid patch format of setElementOrder list'],
    ['$setElementOrder not a list', { spec: { '$setElementOrder/containers': 'a' } }, 'expected a []interface {}, but received a string'],
    [
      'patch elements missing from $setElementOrder',
      { spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'c' }] } },
      "the order in patch list:\n[map[name:c]]\n doesn't match $setElementOrder list:\n[map[name:a]]",
    ],
    ['mixed element types', { spec: { containers: ['x'] } }, 'list element types are not identical: [[map[env:[map[name:X value:1] map[name:Y value:2]] image:a:1 name:a resources:map[requests:map[cpu:100m]]] map[image:b:1 name:b ports:[map[containerPort:80 name:http]]]] [x]]'],
    ['a non-object patch', ['x'], 'invalid JSON document'],
  ];
  for (const [name, patch, want] of cases) test(name, () => assert.equal(applyError(pod(), patch), want));

  test('a non-object original is an error', () => assert.equal(applyError([1], {}), 'invalid JSON document'));
  test('a list of lists', () => assert.equal(applyError(podWith({ containers: [] }), { spec: { containers: [['x']] } }), 'lists of lists are not supported'));
  test('a directive map for an absent field is dropped, not rejected (upstream)', () => {
    assert.deepEqual(apply(podWith({ containers: [] }), { metadata: { labels: { $patch: 'merge', a: 'b' } } }), podWith({ containers: [] }));
  });
});

describe('purity and kinds', () => {
  test('inputs are never mutated', () => {
    const original = twoContainers();
    const patch = { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'a', $patch: 'delete' }, { name: 'b', image: 'new' }] } };
    const o0 = deepClone(original);
    const p0 = deepClone(patch);
    apply(original, patch);
    assert.deepEqual(original, o0);
    assert.deepEqual(patch, p0);
  });

  test('patchMetaForKind: workloads merge their pod template containers by name', () => {
    const meta = patchMetaForKind('apps/v1', 'Deployment');
    assert.ok(meta);
    const deploy = { spec: { replicas: 1, template: { spec: { containers: [{ name: 'a', image: '1' }, { name: 'b', image: '1' }] } } } };
    const out = apply(deploy, { spec: { template: { spec: { containers: [{ name: 'b', image: '2' }] } } } }, meta) as typeof deploy;
    assert.deepEqual(out.spec.template.spec.containers, [{ name: 'a', image: '1' }, { name: 'b', image: '2' }]);
    const cron = patchMetaForKind('batch/v1', 'CronJob');
    assert.equal(cron?.fields?.spec?.fields?.jobTemplate?.fields?.spec?.fields?.template?.fields?.spec?.fields?.containers?.mergeKey, 'name');
  });

  test('patchMetaForKind: merge keys of other built-in kinds', () => {
    assert.equal(patchMetaForKind('v1', 'Service')?.fields?.spec?.fields?.ports?.mergeKey, 'port');
    assert.equal(patchMetaForKind('v1', 'Node')?.fields?.status?.fields?.addresses?.mergeKey, 'type');
    assert.equal(patchMetaForKind('v1', 'Node')?.fields?.spec?.fields?.taints, undefined);
    assert.equal(patchMetaForKind('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration')?.fields?.webhooks?.mergeKey, 'name');
    assert.equal(patchMetaForKind('policy/v1', 'PodDisruptionBudget')?.fields?.status?.fields?.conditions?.mergeKey, 'type');
    assert.ok(patchMetaForKind('v1', 'ConfigMap'));
    assert.ok(patchMetaForKind('coordination.k8s.io/v1', 'Lease'));
    assert.ok(patchMetaForKind('apiextensions.k8s.io/v1', 'CustomResourceDefinition'));
    assert.equal(patchMetaForKind('apps.kruise.io/v1alpha1', 'WorkloadSpread'), undefined);
    assert.equal(patchMetaForKind('v1', 'Bogus'), undefined);
  });
});

describe('properties', () => {
  // Documents whose objects never hold null (a patch cannot set null) and have no "$" keys.
  const { doc } = fc.letrec<{ value: unknown; arr: unknown[]; doc: Record<string, unknown> }>((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.string({ maxLength: 3 }), fc.integer(), fc.boolean(), tie('arr'), tie('doc')),
    arr: fc.array(fc.oneof(fc.string({ maxLength: 2 }), fc.integer()), { maxLength: 3 }),
    doc: fc.dictionary(fc.constantFrom('a', 'b', 'spec', 'labels'), tie('value'), { maxKeys: 4 }),
  }));

  test('without merge lists, the JSON merge patch between two documents reproduces the second', () => {
    fc.assert(
      fc.property(doc, doc, (original, modified) => {
        const value = apply(original, createMergePatch(original, modified), {});
        assert.ok(deepEqual(value, modified), `${JSON.stringify(value)} != ${JSON.stringify(modified)}`);
      }),
    );
  });

  test('merging a container list by name: every name appears once, patched fields win', () => {
    const container = fc.record({ name: fc.constantFrom<string>('a', 'b', 'c', 'd'), image: fc.constantFrom('1', '2', '3') });
    const uniqueContainers = fc.uniqueArray(container, { selector: (c) => c.name, maxLength: 4 });
    fc.assert(
      fc.property(uniqueContainers, uniqueContainers, (live, patched) => {
        const out = apply(podWith({ containers: live }), { spec: { containers: patched } }) as { spec: { containers: { name: string; image: string }[] } };
        const got = out.spec.containers;
        const expectedNames = new Set([...live, ...patched].map((c) => c.name));
        assert.deepEqual(new Set(got.map((c) => c.name)), expectedNames);
        assert.equal(got.length, expectedNames.size);
        for (const p of patched) assert.equal(got.find((c) => c.name === p.name)?.image, p.image);
        // live-only containers keep their relative order
        const liveOnly = live.filter((c) => !patched.some((p) => p.name === c.name)).map((c) => c.name);
        assert.deepEqual(got.map((c) => c.name).filter((n) => liveOnly.includes(n)), liveOnly);
      }),
    );
  });
});
