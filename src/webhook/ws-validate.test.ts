import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseWhitelist } from '../api/whitelist.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { KubeObject } from '../k8s/types.ts';
import { admitWorkloadSpread } from './ws-validate.ts';
import { deploymentChain, FakeCluster, fixtureReview, requestOf } from '../testing/admission-kit.ts';

type Review = ReturnType<typeof fixtureReview>;
const wsOf = (r: Review): WorkloadSpread => r.request['object'] as WorkloadSpread;

async function validate(cluster: FakeCluster, edit: (r: Review) => void = () => {}) {
  const r = fixtureReview('workloadspread-create.json');
  edit(r);
  return admitWorkloadSpread(requestOf(r), { view: cluster, reads: cluster });
}

const withDeployment = (): FakeCluster => {
  const cluster = new FakeCluster();
  cluster.objects.push(...deploymentChain());
  return cluster;
};

describe('WorkloadSpread CREATE/UPDATE admission (spec §7)', () => {
  test('the fixture (20/30/50 %, Deployment exists) is allowed', async () => {
    assert.deepEqual(await validate(withDeployment()), { uid: '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0004', allowed: true });
  });

  test('every field error is listed: 422 Invalid with the field paths as causes', async () => {
    const response = await validate(withDeployment(), (r) => {
      const ws = wsOf(r);
      ws.spec.subsets[1]!.name = 'zone-a';
      ws.spec.scheduleStrategy = { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 500 } };
    });
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 422);
    assert.equal(response.status?.reason, 'Invalid');
    assert.match(response.status?.message ?? '', /^WorkloadSpread\.apps\.kruise\.io "web-spread" is invalid: \[/);
    const fields = response.status?.details?.causes?.map((c) => c.field) ?? [];
    assert.ok(fields.includes('spec.subsets[1].name'), fields.join(','));
    assert.ok(fields.includes('spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds'), fields.join(','));
    assert.equal(response.status?.details?.kind, 'WorkloadSpread');
    assert.equal(response.status?.details?.group, 'apps.kruise.io');
  });

  test('D18: the rebalancing annotations are validated, each error naming the annotation and the value', async () => {
    const annotate = (annotations: Record<string, string>) => (r: Review) => void (wsOf(r).metadata.annotations = annotations);
    assert.equal((await validate(withDeployment(), annotate({ 'workloadspread.io/rebalance': 'true', 'workloadspread.io/rebalance-max-in-flight': '3' }))).allowed, true);
    const refused = await validate(withDeployment(), annotate({ 'workloadspread.io/rebalance': 'on', 'workloadspread.io/rebalance-max-in-flight': '0' }));
    assert.equal(refused.status?.code, 422);
    assert.deepEqual(refused.status?.details?.causes?.map((c) => [c.field, c.message]), [
      ['metadata.annotations[workloadspread.io/rebalance]', 'Invalid value: "on": must be "true" or "false"'],
      ['metadata.annotations[workloadspread.io/rebalance-max-in-flight]', 'Invalid value: "0": must be an integer from 1 to 100'],
    ]);
  });

  test('V19: percentages over 100 % are refused', async () => {
    const response = await validate(withDeployment(), (r) => void (wsOf(r).spec.subsets[2]!.maxReplicas = '60%'));
    assert.equal(response.status?.code, 422);
    assert.match(response.status?.message ?? '', /spec\.subsets\[2\]\.maxReplicas/);
  });

  test('V15: a patch is validated against the workload template; a missing workload skips it (user-issues #13)', async () => {
    const badPatch = (r: Review) => void (wsOf(r).spec.subsets[0]!.patch = { spec: { containers: [{ name: 'main', image: '' }] } });
    const refused = await validate(withDeployment(), badPatch);
    assert.equal(refused.status?.code, 422);
    assert.ok(refused.status?.details?.causes?.some((c) => c.field.startsWith('spec.subsets[0].patch')), JSON.stringify(refused.status));
    assert.equal((await validate(new FakeCluster(), badPatch)).allowed, true);
  });

  test('a workload that cannot be read: allowed, with a warning that the patches were not checked', async () => {
    const cluster = withDeployment();
    cluster.targetError = 'connection refused';
    const response = await validate(cluster);
    assert.equal(response.allowed, true);
    assert.match(response.warnings?.[0] ?? '', /could not be read \(connection refused\); subset patches were not checked/);
  });

  test('V26: another WorkloadSpread of the namespace already targets the workload', async () => {
    const cluster = withDeployment();
    const other = wsOf(fixtureReview('workloadspread-create.json'));
    other.metadata.name = 'first';
    cluster.spreads.push(other);
    const response = await validate(cluster);
    assert.equal(response.status?.code, 422);
    assert.match(response.status?.message ?? '', /in conflict with other WorkloadSpread first/);
  });

  test('V27: UPDATE may not change the target', async () => {
    const response = await validate(withDeployment(), (r) => {
      r.request['operation'] = 'UPDATE';
      const old = structuredClone(wsOf(r));
      old.spec.targetRef.name = 'api';
      r.request['oldObject'] = old;
    });
    assert.equal(response.status?.code, 422);
    assert.match(response.status?.message ?? '', /change TargetReference is not permitted/);
  });

  test('V8: a custom kind needs the whitelist; an unreadable whitelist is a 500 InternalError only when it matters', async () => {
    const custom = (r: Review) => void (wsOf(r).spec.targetRef = { apiVersion: 'games.example.com/v1', kind: 'GameServerSet', name: 'gs' });
    const cluster = new FakeCluster();
    assert.equal((await validate(cluster, custom)).status?.code, 422);
    const listed = parseWhitelist(JSON.stringify({ workloads: [{ Group: 'games.example.com', Kind: 'GameServerSet', replicasPath: 'spec.replicas' }] }));
    assert.ok(listed.ok);
    cluster.whitelistValue = listed.whitelist;
    assert.equal((await validate(cluster, custom)).allowed, true);
    cluster.whitelistValue = { error: 'config map unreadable' };
    const broken = await validate(cluster, custom);
    assert.equal(broken.status?.code, 500);
    assert.equal(broken.status?.reason, 'InternalError');
    assert.equal(broken.status?.message, "Internal error occurred: the manager's custom workload whitelist cannot be read", 'what the config map read said is not the caller\'s');
    assert.equal((await validate(withDeploymentAndBrokenWhitelist())).allowed, true, 'built-in targets do not need the whitelist');
  });

  test('not a WorkloadSpread request, or not CREATE/UPDATE → allowed; an object that is not one → 400', async () => {
    assert.equal((await validate(withDeployment(), (r) => void (r.request['resource'] = { group: '', version: 'v1', resource: 'pods' }))).allowed, true);
    assert.equal((await validate(withDeployment(), (r) => void (r.request['operation'] = 'DELETE'))).allowed, true);
    assert.equal((await validate(withDeployment(), (r) => void (r.request['object'] = 7))).status?.code, 400);
  });

  test('a structurally broken object gets its structural errors, never a crash', async () => {
    const response = await validate(withDeployment(), (r) => void ((r.request['object'] as KubeObject)['spec'] = { subsets: 'nope' }));
    assert.equal(response.status?.code, 422);
  });
});

function withDeploymentAndBrokenWhitelist(): FakeCluster {
  const cluster = withDeployment();
  cluster.whitelistValue = { error: 'config map unreadable' };
  return cluster;
}
