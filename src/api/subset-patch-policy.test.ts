import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatFieldError, root } from '../k8s/field-errors.ts';
import { POD_PATCH_META, strategicMergePatch } from '../k8s/strategic-merge.ts';
import { forbiddenPodChanges, patchableMetadata, subsetPatchPolicyErrors } from './subset-patch-policy.ts';

const at = root('spec', 'subsets').index(0).child('patch');
const fields = (patch: unknown, allowPrivileged = false): string[] => subsetPatchPolicyErrors(patch, at, { allowPrivileged }).map((e) => e.field);

describe('D20: what a subset patch may change (validation)', () => {
  test('identity and ownership are refused whatever the flag, each named', () => {
    const patch = {
      metadata: { name: 'x', generateName: 'x-', namespace: 'kube-system', uid: 'u', resourceVersion: '1', ownerReferences: [], finalizers: ['f'], deletionTimestamp: 't', deletionGracePeriodSeconds: 0, labels: { ok: 'yes' } },
      spec: { nodeName: 'n1' },
    };
    const expected = ['name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'ownerReferences', 'finalizers', 'deletionTimestamp', 'deletionGracePeriodSeconds'].map((f) => `spec.subsets[0].patch.metadata.${f}`);
    expected.push('spec.subsets[0].patch.spec.nodeName');
    assert.deepEqual(fields(patch), expected);
    assert.deepEqual(fields(patch, true), expected);
    const ns = subsetPatchPolicyErrors({ metadata: { namespace: 'kube-system' } }, at)[0];
    assert.ok(ns);
    assert.equal(formatFieldError(ns), "spec.subsets[0].patch.metadata.namespace: Forbidden: a subset patch may not change the pod's metadata.namespace (it would change what the pod is or who owns it)");
  });

  test('directives that replace or prune the metadata are refused; null metadata too', () => {
    assert.deepEqual(fields({ $patch: 'replace', metadata: { labels: {} } }), ['spec.subsets[0].patch.$patch']);
    assert.deepEqual(fields({ metadata: { $patch: 'replace', labels: {} } }), ['spec.subsets[0].patch.metadata.$patch']);
    assert.deepEqual(fields({ metadata: { $retainKeys: ['labels'] } }), ['spec.subsets[0].patch.metadata.$retainKeys']);
    assert.deepEqual(fields({ metadata: null }), ['spec.subsets[0].patch.metadata']);
  });

  test('privilege-bearing fields need --allow-privileged-subset-patches, and the message says so', () => {
    const patch = {
      spec: {
        serviceAccountName: 'admin',
        automountServiceAccountToken: true,
        hostNetwork: true,
        hostPID: true,
        hostIPC: true,
        securityContext: { runAsUser: 0 },
        containers: [{ name: 'main', securityContext: { privileged: true, capabilities: { add: ['NET_ADMIN'] } }, ports: [{ containerPort: 80, hostPort: 80 }] }],
        volumes: [{ name: 'root', hostPath: { path: '/' } }],
      },
    };
    assert.deepEqual(fields(patch), [
      'spec.subsets[0].patch.spec.serviceAccountName',
      'spec.subsets[0].patch.spec.automountServiceAccountToken',
      'spec.subsets[0].patch.spec.hostNetwork',
      'spec.subsets[0].patch.spec.hostPID',
      'spec.subsets[0].patch.spec.hostIPC',
      'spec.subsets[0].patch.spec.securityContext',
      'spec.subsets[0].patch.spec.containers[0].securityContext.privileged',
      'spec.subsets[0].patch.spec.containers[0].securityContext.capabilities.add',
      'spec.subsets[0].patch.spec.containers[0].ports[0].hostPort',
      'spec.subsets[0].patch.spec.volumes[0].hostPath',
    ]);
    assert.deepEqual(fields(patch, true), []);
    const e = subsetPatchPolicyErrors({ spec: { hostNetwork: true } }, at)[0];
    assert.ok(e);
    assert.match(formatFieldError(e), /spec\.subsets\[0\]\.patch\.spec\.hostNetwork: Forbidden: .*--allow-privileged-subset-patches/);
  });

  test('what spreading needs stays allowed: labels, annotations, image, env, resources, priorityClassName, dropping capabilities, a read-only root', () => {
    const patch = {
      metadata: { labels: { zone: 'a' }, annotations: { a: 'b' } },
      spec: {
        priorityClassName: 'high',
        containers: [{ name: 'main', image: 'app:arm64', env: [{ name: 'ZONE', value: 'a' }], resources: { requests: { cpu: '1' } }, securityContext: { readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } } }],
      },
    };
    assert.deepEqual(fields(patch), []);
  });
});

describe('D20: a pod before and after a patch (injection)', () => {
  const pod = {
    metadata: { name: 'web-1', namespace: 'prod', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true }], labels: { app: 'web' } },
    spec: { serviceAccountName: 'web', containers: [{ name: 'main', image: 'app:1', securityContext: { runAsNonRoot: true } }] },
  };
  const apply = (patch: unknown) => {
    const r = strategicMergePatch(pod, patch, POD_PATCH_META);
    assert.ok(r.ok);
    return r.value;
  };

  test('labels and the image change nothing protected', () => {
    assert.deepEqual(forbiddenPodChanges(pod, apply({ metadata: { labels: { zone: 'a' } }, spec: { containers: [{ name: 'main', image: 'app:arm64' }] } })), []);
  });

  test('the namespace, a directive that replaces the metadata, the node and ownership are caught', () => {
    assert.deepEqual(forbiddenPodChanges(pod, apply({ metadata: { namespace: 'kube-system' } })), ['metadata.namespace']);
    assert.deepEqual(forbiddenPodChanges(pod, apply({ metadata: { $patch: 'replace', labels: { app: 'web' } } })), ['metadata.name', 'metadata.namespace', 'metadata.ownerReferences']);
    assert.deepEqual(forbiddenPodChanges(pod, apply({ spec: { nodeName: 'n1' } })), ['spec.nodeName']);
  });

  test('privileged changes are caught unless allowed; a new privileged container too', () => {
    const patched = apply({ spec: { serviceAccountName: 'admin', containers: [{ name: 'main', securityContext: { privileged: true } }, { name: 'side', image: 'x', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }] } });
    assert.deepEqual(forbiddenPodChanges(pod, patched), ['spec.serviceAccountName', 'spec.containers[main].securityContext', 'spec.containers[side].securityContext']);
    assert.deepEqual(forbiddenPodChanges(pod, patched, { allowPrivileged: true }), []);
  });

  test('adoption copies only the patchable metadata', () => {
    assert.deepEqual(patchableMetadata({ name: 'x', namespace: 'y', ownerReferences: [], finalizers: ['f'], $patch: 'replace', labels: { a: 'b' }, annotations: { c: 'd' } }), { labels: { a: 'b' }, annotations: { c: 'd' } });
  });
});
