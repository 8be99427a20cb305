/**
 * `workloadspread validate` against issue 14's findings 3, 5 and 7, repeated
 * as written: a subset patch that changes what the pod is, numbers and sizes
 * beyond what the API holds, and an unknown field the API server's strict
 * field validation rejects.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SUBSETS } from '../api/keys.ts';
import { validateWorkloadSpread } from '../api/validation.ts';
import { formatFieldError } from '../k8s/field-errors.ts';
import { captureIo } from '../testing/cli-io.ts';
import { main } from './main.ts';

async function validate(text: string, ...flags: string[]) {
  const io = captureIo({ 'ws.yaml': text });
  const code = await main(['validate', '-f', 'ws.yaml', ...flags], io);
  return { code, out: io.stdout + io.stderr };
}

function spread(subsets: string, extra = ''): string {
  return `apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: ws, namespace: default${extra}}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  subsets:
${subsets}`;
}

describe('finding 3: a subset patch can change what the pod is (validate)', () => {
  const patched = (patch: string) => spread(`    - name: a\n      maxReplicas: 2\n      patch: ${patch}\n    - name: b\n`);

  test('metadata.namespace and metadata.name are refused, whatever the flag', async () => {
    for (const flags of [[], ['--allow-privileged-subset-patches']]) {
      const r = await validate(patched('{metadata: {namespace: kube-system, name: other}}'), ...flags);
      assert.equal(r.code, 1, r.out);
      assert.match(r.out, /spec\.subsets\[0\]\.patch\.metadata\.namespace: Forbidden: a subset patch may not change the pod's metadata\.namespace/);
      assert.match(r.out, /spec\.subsets\[0\]\.patch\.metadata\.name: Forbidden/);
    }
  });

  test('privileged, hostNetwork and serviceAccountName are refused naming the flag, and accepted with it', async () => {
    const patch = '{spec: {serviceAccountName: admin, hostNetwork: true, containers: [{name: main, securityContext: {privileged: true}}]}}';
    const refused = await validate(patched(patch));
    assert.equal(refused.code, 1, refused.out);
    for (const field of ['spec.serviceAccountName', 'spec.hostNetwork', 'spec.containers\\[0\\]\\.securityContext\\.privileged']) {
      assert.match(refused.out, new RegExp(`spec\\.subsets\\[0\\]\\.patch\\.${field}: Forbidden: .*--allow-privileged-subset-patches`));
    }
    const allowed = await validate(patched(patch), '--allow-privileged-subset-patches');
    assert.equal(allowed.code, 0, allowed.out);
  });

  test('the image stays patchable (a spread across CPU architectures needs it)', async () => {
    const r = await validate(patched('{spec: {containers: [{name: main, image: "app:arm64"}]}}'));
    assert.equal(r.code, 0, r.out);
  });
});

describe('finding 5: numbers and sizes (validate)', () => {
  test('maxReplicas 1e30 is refused (an int-or-string holds an int32); so is a percentage above 100%', async () => {
    const huge = await validate(spread('    - {name: a, maxReplicas: 1e30}\n    - {name: b}\n'));
    assert.equal(huge.code, 1, huge.out);
    assert.match(huge.out, /spec\.subsets\[0\]\.maxReplicas: Invalid value: 1e\+30: spec\.subsets\[0\]\.maxReplicas in body should be less than or equal to 2147483647 \(int32\)/);
    const justAbove = await validate(spread('    - {name: a, maxReplicas: 2147483648}\n    - {name: b}\n'));
    assert.equal(justAbove.code, 1, justAbove.out);
    const percent = await validate(spread('    - {name: a, maxReplicas: "1000%"}\n'));
    assert.equal(percent.code, 1, percent.out);
    assert.match(percent.out, /spec\.subsets\[0\]\.maxReplicas: Invalid value: "1000%": a percentage maxReplicas must be from 0% to 100%/);
  });

  test('minReplicas and rescheduleCriticalSeconds beyond int32 are refused', async () => {
    const r = await validate(spread('    - {name: a, maxReplicas: 2, minReplicas: 5000000000}\n    - {name: b}\n'));
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /spec\.subsets\[0\]\.minReplicas: Invalid value: 5000000000: .*less than or equal to 2147483647 \(int32\)/);
  });

  test(`1,000 subsets are refused: at most ${MAX_SUBSETS}`, async () => {
    const many = Array.from({ length: 1000 }, (_, i) => `    - {name: s${i}, maxReplicas: 1}\n`).join('');
    const r = await validate(spread(many));
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, new RegExp(`spec\\.subsets: Too many: 1000: must have at most ${MAX_SUBSETS} items`));
    const ok = Array.from({ length: MAX_SUBSETS }, (_, i) => `    - {name: s${i}, maxReplicas: 1}\n`).join('');
    assert.equal((await validate(spread(ok))).code, 0);
  });

  test('a WorkloadSpread with a 100 MB annotation is not valid (annotations hold at most 256 KiB)', () => {
    const ws = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread', metadata: { name: 'ws', annotations: { big: 'x'.repeat(100 * 1024 * 1024) } }, spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a' }] } };
    assert.deepEqual(validateWorkloadSpread(ws).map(formatFieldError), ['metadata.annotations: Too long: may not be more than 262144 bytes']);
  });

  test('through the command: a 300 KiB annotation, bad label values and a bad namespace', async () => {
    const r = await validate(spread('    - {name: a}\n', `, annotations: {big: "${'x'.repeat(300 * 1024)}"}, labels: {"a b": "c"}`).replace('namespace: default', 'namespace: Not_A_Namespace'));
    assert.equal(r.code, 1);
    assert.match(r.out, /metadata\.annotations: Too long: may not be more than 262144 bytes/);
    assert.match(r.out, /metadata\.labels: Invalid value: "a b"/);
    assert.match(r.out, /metadata\.namespace: Invalid value: "Not_A_Namespace"/);
  });
});

describe('finding 7: validate accepts an unknown field (maxReplica)', () => {
  test('an unknown field is an error, printed as the API server\'s strict field validation prints it', async () => {
    const r = await validate(spread('    - {name: a, maxReplica: 3}\n    - {name: b}\n'));
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /- unknown field "spec\.subsets\[0\]\.maxReplica"/);
  });

  test('unknown fields anywhere the schema lists fields: spec, targetRef, metadata, status', async () => {
    const text = `apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: ws, labelz: {a: b}}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: x}
  subset: []
  subsets: [{name: a}]
status: {observedGeneration: 1, foo: 1}
`;
    const r = await validate(text);
    assert.equal(r.code, 1);
    for (const f of ['metadata.labelz', 'spec.targetRef.namespace', 'spec.subset', 'status.foo']) assert.match(r.out, new RegExp(`unknown field "${f.replace(/\./g, '\\.')}"`));
  });

  test('a subset patch stays free-form (preserve-unknown-fields): any field of a pod is accepted there', async () => {
    const r = await validate(spread('    - name: a\n      patch: {metadata: {labels: {x: y}}, spec: {anythingNew: {nested: true}}}\n'));
    assert.equal(r.code, 0, r.out);
  });

  test('DomainDisruptionBudgets are strict too', async () => {
    const io = captureIo({
      'b.yaml': 'apiVersion: policy.workloadspread.io/v1alpha1\nkind: DomainDisruptionBudget\nmetadata: {name: b}\nspec: {selector: {matchLabels: {app: web}}, maxUnavailable: 1, maxUnavailible: 2}\n',
    });
    const code = await main(['validate', '-f', 'b.yaml'], io);
    assert.equal(code, 1);
    assert.match(io.stdout, /unknown field "spec\.maxUnavailible"/);
  });
});
