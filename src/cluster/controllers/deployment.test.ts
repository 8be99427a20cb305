/**
 * The Deployment controller (with the ReplicaSet controller under it) against
 * the embedded API server on a virtual clock; a `PodStarter` makes pods ready
 * 5 s after they appear, except pods whose image starts with "bad" (a rollout
 * that never becomes available). Covered: ReplicaSets by pod-template-hash,
 * revision annotations, rolling updates under several maxSurge/maxUnavailable
 * settings watched from start to end, Recreate, proportional scaling of a
 * stuck rollout, pause, rollback reusing the old ReplicaSet, history cleanup,
 * the progress deadline, adoption, and `kubectl rollout status`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { BUILTIN } from '../../client/resources.ts';
import { Informer } from '../../client/store.ts';
import { isPodReady } from '../../k8s/pod.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import { testBedCertificate, type ClientTestBed } from '../../testing/client-test-bed.ts';
import { k8sTools } from '../../testing/k8s-tools.ts';
import { freshNamespace, PodStarter, podTemplate, startControllerTestBed } from '../../testing/workload-controllers-bed.ts';
import { DeploymentController } from './deployment.ts';
import { computePodTemplateHash } from './pod-template-hash.ts';
import { ReplicaSetController } from './replicaset.ts';

const T0 = Date.UTC(2026, 0, 1);
let clock: VirtualClock;
let bed: ClientTestBed;
let rsc: ReplicaSetController;
let dc: DeploymentController;
let starter: PodStarter;

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startControllerTestBed(clock, testBedCertificate());
  rsc = new ReplicaSetController({ client: bed.client, clock });
  dc = new DeploymentController({ client: bed.client, clock });
  rsc.start();
  dc.start();
  starter = new PodStarter(bed.client, clock, { readyAfterMs: 5000, filter: (p) => !(p.spec.containers[0]?.image ?? '').startsWith('bad') });
  await clock.settle();
});
after(async () => {
  await starter.stop();
  await dc.stop();
  await rsc.stop();
  await bed.close();
});

// ---- helpers ----

function list(apiVersion: string, kind: string, ns: string): KubeObject[] {
  const r = bed.server.control.list(apiVersion, kind, ns);
  assert.ok(r.ok);
  return r.value.items;
}
const replicaSets = (ns: string): KubeObject[] => list('apps/v1', 'ReplicaSet', ns).sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
const pods = (ns: string): Pod[] => list('v1', 'Pod', ns) as Pod[];

function getDeployment(ns: string, name = 'web'): KubeObject {
  const r = bed.server.control.get('apps/v1', 'Deployment', ns, name);
  assert.ok(r.ok);
  return r.value;
}
const statusOf = (obj: KubeObject): Record<string, unknown> => (obj['status'] ?? {}) as Record<string, unknown>;
const spec = (obj: KubeObject): Record<string, unknown> => (obj['spec'] ?? {}) as Record<string, unknown>;
const replicasOf = (rs: KubeObject): number => Number(spec(rs)['replicas'] ?? 0);
const imageOf = (rs: KubeObject): string => ((spec(rs)['template'] as { spec: { containers: { image: string }[] } }).spec.containers[0]?.image ?? '');
const condition = (obj: KubeObject, type: string): Record<string, unknown> | undefined =>
  ((statusOf(obj)['conditions'] ?? []) as Record<string, unknown>[]).find((c) => c['type'] === type);
const scalingEvents = (ns: string): string[] =>
  list('events.k8s.io/v1', 'Event', ns)
    .filter((e) => e['reason'] === 'ScalingReplicaSet')
    .sort((a, b) => Number(a.metadata?.resourceVersion) - Number(b.metadata?.resourceVersion))
    .map((e) => String(e['note']));

function rsByImage(ns: string, image: string): KubeObject {
  const rs = replicaSets(ns).find((r) => imageOf(r) === image);
  assert.ok(rs !== undefined, `a ReplicaSet with image ${image}`);
  return rs;
}

interface DeploySpec {
  replicas: number;
  image?: string;
  strategy?: Record<string, unknown>;
  progressDeadlineSeconds?: number;
  revisionHistoryLimit?: number;
  paused?: boolean;
  annotations?: Record<string, string>;
}

async function deploy(ns: string, s: DeploySpec, name = 'web'): Promise<KubeObject> {
  const body: Record<string, unknown> = { replicas: s.replicas, selector: { matchLabels: { app: name } }, template: podTemplate({ app: name }, { image: s.image ?? 'v1' }) };
  if (s.strategy !== undefined) body['strategy'] = s.strategy;
  if (s.progressDeadlineSeconds !== undefined) body['progressDeadlineSeconds'] = s.progressDeadlineSeconds;
  if (s.revisionHistoryLimit !== undefined) body['revisionHistoryLimit'] = s.revisionHistoryLimit;
  if (s.paused !== undefined) body['paused'] = s.paused;
  const metadata: Record<string, unknown> = { name, namespace: ns };
  if (s.annotations !== undefined) metadata['annotations'] = s.annotations;
  return bed.client.create(BUILTIN.deployments, { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec: body }, { namespace: ns });
}

async function patchSpec(ns: string, body: Record<string, unknown>, name = 'web'): Promise<void> {
  await bed.client.patch(BUILTIN.deployments, name, { type: 'merge', body: { spec: body } }, { namespace: ns });
}
const setImage = (ns: string, image: string): Promise<void> => patchSpec(ns, { template: { spec: { containers: [{ name: 'app', image }] } } });

/** Follows a namespace through watches: the largest sum of ReplicaSet sizes and the fewest ready pods ever seen. */
class RolloutMonitor {
  maxTotal = 0;
  minReady = Number.POSITIVE_INFINITY;
  /** Pod-template-hash values of pods that existed at the same moment, at most. */
  maxVersionsAtOnce = 0;
  readonly #rs: Informer;
  readonly #pods: Informer<Pod>;

  constructor(ns: string) {
    this.#rs = new Informer({ client: bed.client, ref: BUILTIN.replicasets, namespace: ns, resyncMs: 0 });
    this.#pods = new Informer<Pod>({ client: bed.client, ref: BUILTIN.pods, namespace: ns, resyncMs: 0 });
    const onRS = () => {
      this.maxTotal = Math.max(this.maxTotal, this.#rs.store.list().reduce((n, rs) => n + replicasOf(rs), 0));
    };
    const onPod = () => {
      const all = this.#pods.store.list();
      this.minReady = Math.min(this.minReady, all.filter((p) => isPodReady(p) && p.metadata.deletionTimestamp === undefined).length);
      this.maxVersionsAtOnce = Math.max(this.maxVersionsAtOnce, new Set(all.map((p) => p.metadata.labels?.['pod-template-hash'])).size);
    };
    for (const [store, fn] of [[this.#rs.store, onRS], [this.#pods.store, onPod]] as const) {
      store.onAdd(fn);
      store.onUpdate(fn);
      store.onDelete(fn);
    }
    this.#rs.start();
    this.#pods.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.#rs.stop(), this.#pods.stop()]);
  }
}

// ---- tests ----

describe('ReplicaSets of a Deployment', () => {
  test('named <deployment>-<pod-template-hash>, the hash label on selector, template and pods; revision and replica annotations; status and conditions', async () => {
    const ns = await freshNamespace(bed.client);
    const d = await deploy(ns, { replicas: 3, annotations: { team: 'blue', 'kubectl.kubernetes.io/last-applied-configuration': '{}' } });
    await clock.settle();
    const hash = computePodTemplateHash(spec(d)['template']);
    const [rs, ...others] = replicaSets(ns);
    assert.ok(rs !== undefined);
    assert.equal(others.length, 0);
    assert.equal(rs.metadata?.name, `web-${hash}`);
    assert.deepEqual(rs.metadata?.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: d.metadata?.uid, controller: true, blockOwnerDeletion: true }]);
    assert.deepEqual(spec(rs)['selector'], { matchLabels: { app: 'web', 'pod-template-hash': hash } });
    assert.deepEqual(rs.metadata?.labels, { app: 'web', 'pod-template-hash': hash });
    assert.deepEqual(rs.metadata?.annotations, {
      team: 'blue',
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '3',
      'deployment.kubernetes.io/max-replicas': '4',
    });
    const ps = pods(ns);
    assert.equal(ps.length, 3);
    for (const p of ps) assert.equal(p.metadata.labels?.['pod-template-hash'], hash);
    const after = getDeployment(ns);
    assert.equal(after.metadata?.annotations?.['deployment.kubernetes.io/revision'], '1');
    const status = statusOf(after);
    assert.deepEqual({ ...status, conditions: undefined }, { observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3, conditions: undefined });
    assert.deepEqual(
      (status['conditions'] as Record<string, unknown>[]).map((c) => [c['type'], c['status'], c['reason'], c['message']]),
      [
        ['Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'],
        ['Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "web-${hash}" has successfully progressed.`],
      ],
    );
    assert.deepEqual(scalingEvents(ns), [`Scaled up replica set web-${hash} to 3 from 0`]);
  });

  test('a matching orphan ReplicaSet is adopted', async () => {
    const ns = await freshNamespace(bed.client);
    const template = podTemplate({ app: 'web' }, { image: 'v1' });
    await bed.client.create(BUILTIN.replicasets, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'stray', namespace: ns, labels: { app: 'web' } }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template } }, { namespace: ns });
    await clock.settle();
    const d = await deploy(ns, { replicas: 2, image: 'v2' });
    await clock.settle();
    const stray = replicaSets(ns).find((r) => r.metadata?.name === 'stray');
    assert.equal(stray?.metadata?.ownerReferences?.[0]?.uid, d.metadata?.uid);
    assert.equal(replicasOf(stray ?? {}), 0, 'an old ReplicaSet of the Deployment, scaled away by the rollout');
    assert.equal(replicasOf(rsByImage(ns, 'v2')), 2);
  });
});

describe('RollingUpdate', () => {
  const replicas = 10;
  const cases: { strategy: Record<string, unknown> | undefined; surge: number; unavailable: number }[] = [
    { strategy: undefined, surge: 3, unavailable: 2 }, // defaults 25%/25%: surge rounds up, unavailable down
    { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } }, surge: 0, unavailable: 1 },
    { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2, maxUnavailable: 0 } }, surge: 2, unavailable: 0 },
    { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '50%', maxUnavailable: '10%' } }, surge: 5, unavailable: 1 },
    { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '1%', maxUnavailable: '1%' } }, surge: 1, unavailable: 0 },
    { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '0%', maxUnavailable: '5%' } }, surge: 0, unavailable: 1 }, // both round to 0 → 1 unavailable
  ];
  for (const c of cases) {
    const label = c.strategy === undefined ? 'defaults' : JSON.stringify((c.strategy as { rollingUpdate: unknown }).rollingUpdate);
    test(`${label}: at most ${replicas + c.surge} replicas and at least ${replicas - c.unavailable} ready during the whole rollout`, async () => {
      const ns = await freshNamespace(bed.client);
      await deploy(ns, c.strategy === undefined ? { replicas } : { replicas, strategy: c.strategy });
      await clock.settle();
      const monitor = new RolloutMonitor(ns);
      await clock.quiesce();
      await setImage(ns, 'v2');
      await clock.settle();
      await monitor.stop();
      assert.equal(monitor.maxTotal, replicas + c.surge, 'the surge is used, never exceeded');
      assert.equal(monitor.minReady, replicas - c.unavailable, 'availability dips by maxUnavailable, never more');
      assert.equal(replicasOf(rsByImage(ns, 'v1')), 0);
      assert.equal(statusOf(rsByImage(ns, 'v2'))['availableReplicas'], replicas);
      assert.equal(pods(ns).length, replicas);
      const d = getDeployment(ns);
      assert.equal(d.metadata?.annotations?.['deployment.kubernetes.io/revision'], '2');
      assert.equal(condition(d, 'Progressing')?.['reason'], 'NewReplicaSetAvailable');
    });
  }

  test('maxSurge 1, maxUnavailable 0: one new pod at a time, each old one removed once its replacement is available', async () => {
    const ns = await freshNamespace(bed.client);
    await deploy(ns, { replicas: 3, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } });
    await clock.settle();
    const start = clock.now();
    await setImage(ns, 'v2');
    await clock.settle();
    const oldName = rsByImage(ns, 'v1').metadata?.name ?? '';
    const newName = rsByImage(ns, 'v2').metadata?.name ?? '';
    assert.deepEqual(scalingEvents(ns).slice(1), [
      `Scaled up replica set ${newName} to 1 from 0`,
      `Scaled down replica set ${oldName} to 2 from 3`,
      `Scaled up replica set ${newName} to 2 from 1`,
      `Scaled down replica set ${oldName} to 1 from 2`,
      `Scaled up replica set ${newName} to 3 from 2`,
      `Scaled down replica set ${oldName} to 0 from 1`,
    ]);
    // Three waves of 5 s (plus, at most, a few rate-limited retries after write conflicts).
    assert.ok(clock.now() - start >= 15_000 && clock.now() - start < 16_000, `took ${clock.now() - start} ms`);
  });
});

describe('availability', () => {
  test('minReadySeconds is copied to the ReplicaSets, and the rollout waits for new pods to be available, not just ready', async () => {
    const ns = await freshNamespace(bed.client);
    await deploy(ns, { replicas: 1, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } });
    await clock.settle();
    await patchSpec(ns, { minReadySeconds: 10 });
    await clock.settle();
    assert.equal(spec(rsByImage(ns, 'v1'))['minReadySeconds'], 10);
    await setImage(ns, 'v2');
    await clock.advance(5_000 + 9_000);
    // The new pod is ready since 5 s in (stored to the second), but available only once ready for more than 10 s.
    assert.equal(replicasOf(rsByImage(ns, 'v1')), 1);
    assert.equal(statusOf(rsByImage(ns, 'v2'))['readyReplicas'], 1);
    await clock.settle();
    assert.equal(replicasOf(rsByImage(ns, 'v1')), 0);
    assert.equal(spec(rsByImage(ns, 'v2'))['minReadySeconds'], 10);
  });

  test('a rollout away from a template that never became ready completes: unhealthy old replicas are removed first', async () => {
    const ns = await freshNamespace(bed.client);
    await deploy(ns, { replicas: 4, image: 'bad-v1' });
    await clock.settle();
    assert.equal(statusOf(getDeployment(ns))['availableReplicas'], undefined);
    await setImage(ns, 'v2');
    await clock.settle();
    // Without the clean-up the old set could never shrink: nothing is available to spare.
    assert.equal(replicasOf(rsByImage(ns, 'bad-v1')), 0);
    assert.equal(statusOf(rsByImage(ns, 'v2'))['availableReplicas'], 4);
  });
});

describe('stale ReplicaSet status', () => {
  test('an old set whose status still counts replicas it no longer has is never scaled up by the clean-up of unhealthy replicas', async () => {
    const ns = await freshNamespace(bed.client);
    // The ReplicaSet controller stays off: the test writes the ReplicaSets' statuses, stale on purpose.
    await rsc.stop();
    try {
      const rsStatus = (image: string, s: Record<string, number>) => bed.client.patchStatus(BUILTIN.replicasets, rsByImage(ns, image).metadata?.name ?? '', { type: 'merge', body: { status: s } }, { namespace: ns });
      await deploy(ns, { replicas: 4, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } });
      await clock.settle();
      await rsStatus('v1', { replicas: 4, readyReplicas: 4, availableReplicas: 4 });
      await clock.settle();
      await setImage(ns, 'v2');
      await clock.settle();
      assert.deepEqual([replicasOf(rsByImage(ns, 'v1')), replicasOf(rsByImage(ns, 'v2'))], [3, 2]);
      // v1's status has not caught up with its scale-down (4 available of 3); v2's two pods become available.
      await rsStatus('v2', { replicas: 2, readyReplicas: 2, availableReplicas: 2 });
      await clock.settle();
      assert.equal(replicasOf(rsByImage(ns, 'v1')), 3, 'not scaled up to 4 by a negative "clean-up"');
      const v1Name = rsByImage(ns, 'v1').metadata?.name ?? '';
      assert.deepEqual(scalingEvents(ns).filter((e) => e.startsWith(`Scaled up replica set ${v1Name}`)), [`Scaled up replica set ${v1Name} to 4 from 0`], 'only its creation');
      // Once v1's status is current, the rollout goes on.
      await rsStatus('v1', { replicas: 3, readyReplicas: 3, availableReplicas: 3 });
      await clock.settle();
      assert.equal(replicasOf(rsByImage(ns, 'v1')), 1);
    } finally {
      rsc = new ReplicaSetController({ client: bed.client, clock });
      rsc.start();
      await clock.settle();
    }
  });
});

describe('hash collisions', () => {
  test('a foreign ReplicaSet holding the name makes the Deployment bump collisionCount and use another hash', async () => {
    const ns = await freshNamespace(bed.client);
    const template = podTemplate({ app: 'web' }, { image: 'v1' });
    // Create the Deployment paused to learn its stored template, squat the name, then let it go.
    const d = await deploy(ns, { replicas: 1, paused: true });
    const hash = computePodTemplateHash(spec(d)['template']);
    await bed.client.create(BUILTIN.replicasets, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: `web-${hash}`, namespace: ns }, spec: { replicas: 0, selector: { matchLabels: { squat: 'yes' } }, template: { ...template, metadata: { labels: { squat: 'yes' } } } } }, { namespace: ns });
    await patchSpec(ns, { paused: false });
    await clock.settle();
    const after = getDeployment(ns);
    assert.equal(statusOf(after)['collisionCount'], 1);
    const mine = replicaSets(ns).filter((r) => r.metadata?.ownerReferences?.[0]?.uid === d.metadata?.uid);
    assert.deepEqual(mine.map((r) => r.metadata?.name), [`web-${computePodTemplateHash(spec(d)['template'], 1)}`]);
    assert.equal(statusOf(after)['availableReplicas'], 1);
  });
});

describe('Recreate', () => {
  test('old pods are all gone before the new ReplicaSet is created and scaled up', async () => {
    const ns = await freshNamespace(bed.client);
    await deploy(ns, { replicas: 3, strategy: { type: 'Recreate' } });
    await clock.settle();
    const monitor = new RolloutMonitor(ns);
    await clock.quiesce();
    await setImage(ns, 'v2');
    await clock.settle();
    await monitor.stop();
    assert.equal(monitor.maxVersionsAtOnce, 1, 'never pods of both templates at once');
    assert.equal(monitor.minReady, 0);
    const oldName = rsByImage(ns, 'v1').metadata?.name ?? '';
    const newName = rsByImage(ns, 'v2').metadata?.name ?? '';
    assert.deepEqual(scalingEvents(ns).slice(1), [`Scaled down replica set ${oldName} to 0 from 3`, `Scaled up replica set ${newName} to 3 from 0`]);
    assert.equal(statusOf(getDeployment(ns))['availableReplicas'], 3);
  });
});

describe('proportional scaling', () => {
  test('scaling a stuck rollout shares the change between the ReplicaSets by size (upstream GetProportion)', async () => {
    const ns = await freshNamespace(bed.client);
    await deploy(ns, { replicas: 10, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } } });
    await clock.settle();
    await setImage(ns, 'bad-v2');
    await clock.settle();
    // Stuck: the old set gave up maxUnavailable, the new one holds the rest of the surge and never becomes ready.
    assert.deepEqual([replicasOf(rsByImage(ns, 'v1')), replicasOf(rsByImage(ns, 'bad-v2'))], [8, 5]);
    await patchSpec(ns, { replicas: 20 });
    await clock.settle();
    // 10 more fit (20 + 3 − 13): 8·23/13 → 14 (+6), 5·23/13 → 9 (+4); then the rollout is stuck again (23 = 20 + 3).
    assert.deepEqual([replicasOf(rsByImage(ns, 'v1')), replicasOf(rsByImage(ns, 'bad-v2'))], [14, 9]);
    const oldName = rsByImage(ns, 'v1').metadata?.name ?? '';
    const newName = rsByImage(ns, 'bad-v2').metadata?.name ?? '';
    const before = scalingEvents(ns).length;
    await patchSpec(ns, { replicas: 5 });
    await clock.settle();
    // 15 fewer (5 + 3 − 23), the larger set first: 14·8/23 → 5 (−9), 9·8/23 → 3 (−6) ...
    assert.deepEqual(scalingEvents(ns).slice(before, before + 2), [`Scaled down replica set ${oldName} to 5 from 14`, `Scaled down replica set ${newName} to 3 from 9`]);
    // ... after which the rollout goes on at the new size: 2 more old replicas may go (5 − 2 available suffice), 2 new ones come.
    assert.deepEqual([replicasOf(rsByImage(ns, 'v1')), replicasOf(rsByImage(ns, 'bad-v2'))], [3, 5]);
    for (const rs of replicaSets(ns)) assert.deepEqual([rs.metadata?.annotations?.['deployment.kubernetes.io/desired-replicas'], rs.metadata?.annotations?.['deployment.kubernetes.io/max-replicas']], ['5', '8']);
  });

  test('a paused Deployment scales but does not roll out; resuming rolls out', async () => {
    const ns = await freshNamespace(bed.client);
    await deploy(ns, { replicas: 2 });
    await clock.settle();
    await patchSpec(ns, { paused: true });
    await setImage(ns, 'v2');
    await patchSpec(ns, { replicas: 4 });
    await clock.settle();
    assert.equal(replicaSets(ns).length, 1, 'no new ReplicaSet while paused');
    assert.equal(replicasOf(rsByImage(ns, 'v1')), 4);
    assert.deepEqual([condition(getDeployment(ns), 'Progressing')?.['status'], condition(getDeployment(ns), 'Progressing')?.['reason']], ['Unknown', 'DeploymentPaused']);
    await patchSpec(ns, { paused: false });
    await clock.settle();
    assert.equal(replicasOf(rsByImage(ns, 'v2')), 4);
    assert.equal(replicasOf(rsByImage(ns, 'v1')), 0);
    assert.equal(condition(getDeployment(ns), 'Progressing')?.['reason'], 'NewReplicaSetAvailable');
  });
});

describe('revisions and history', () => {
  test('rolling back to an earlier template reuses its ReplicaSet and records the revision history', async () => {
    const ns = await freshNamespace(bed.client);
    await deploy(ns, { replicas: 2 });
    await clock.settle();
    const v1 = rsByImage(ns, 'v1');
    await setImage(ns, 'v2');
    await clock.settle();
    assert.equal(rsByImage(ns, 'v2').metadata?.annotations?.['deployment.kubernetes.io/revision'], '2');
    await setImage(ns, 'v1');
    await clock.settle();
    const back = rsByImage(ns, 'v1');
    assert.equal(back.metadata?.uid, v1.metadata?.uid, 'the same ReplicaSet');
    assert.equal(replicaSets(ns).length, 2);
    assert.equal(back.metadata?.annotations?.['deployment.kubernetes.io/revision'], '3');
    assert.equal(back.metadata?.annotations?.['deployment.kubernetes.io/revision-history'], '1');
    assert.equal(getDeployment(ns).metadata?.annotations?.['deployment.kubernetes.io/revision'], '3');
    await setImage(ns, 'v2');
    await clock.settle();
    await setImage(ns, 'v1');
    await clock.settle();
    assert.equal(rsByImage(ns, 'v1').metadata?.annotations?.['deployment.kubernetes.io/revision'], '5');
    assert.equal(rsByImage(ns, 'v1').metadata?.annotations?.['deployment.kubernetes.io/revision-history'], '1,3');
    assert.equal(rsByImage(ns, 'v2').metadata?.annotations?.['deployment.kubernetes.io/revision-history'], '2');
  });

  test('old ReplicaSets beyond revisionHistoryLimit are deleted, oldest revision first', async () => {
    const ns = await freshNamespace(bed.client);
    await deploy(ns, { replicas: 1, revisionHistoryLimit: 1 });
    await clock.settle();
    for (const image of ['v2', 'v3', 'v4']) {
      await setImage(ns, image);
      await clock.settle();
    }
    assert.deepEqual(replicaSets(ns).map(imageOf).sort(), ['v3', 'v4']);
  });
});

describe('progress deadline', () => {
  test('a rollout without progress for progressDeadlineSeconds is reported ProgressDeadlineExceeded, and settle() stops there', async () => {
    const ns = await freshNamespace(bed.client);
    await deploy(ns, { replicas: 2, progressDeadlineSeconds: 60 });
    await clock.settle();
    await setImage(ns, 'bad-v2');
    const start = clock.now();
    const settled = await clock.settle();
    assert.equal(settled.quiescent, true);
    const cond = condition(getDeployment(ns), 'Progressing');
    assert.deepEqual([cond?.['status'], cond?.['reason']], ['False', 'ProgressDeadlineExceeded']);
    assert.match(String(cond?.['message']), /^ReplicaSet "web-\w+" has timed out progressing\.$/);
    // The last progress was the scale-up at `start` (stored to the second); checked 1 s after the 60 s deadline, as upstream.
    assert.equal(clock.now(), Math.floor(start / 1000) * 1000 + 61_000);
    assert.equal(condition(getDeployment(ns), 'Available')?.['status'], 'True', 'the old pods still serve');
  });
});

const KUBECTL = k8sTools().kubectl;

describe('kubectl rollout status', () => {
  test('reports a finished rollout and a rollout past its deadline', async () => {
    const ns = await freshNamespace(bed.client);
    const dir = mkdtempSync(join(tmpdir(), 'ws-rollout-'));
    try {
      await bed.server.writeKubeconfig(join(dir, 'kubeconfig'), ns);
      const kubectl = (...args: string[]) =>
        new Promise<{ code: number; out: string }>((resolve) => {
          execFile(KUBECTL, ['--cache-dir', join(dir, 'cache'), ...args], { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir }, timeout: 60_000 }, (err, stdout, stderr) =>
            resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, out: `${stdout}${stderr}` }),
          );
        });
      await deploy(ns, { replicas: 2, progressDeadlineSeconds: 30 });
      await clock.settle();
      const done = await kubectl('rollout', 'status', 'deployment/web', '--timeout=20s');
      assert.equal(done.code, 0, done.out);
      assert.match(done.out, /deployment "web" successfully rolled out/);
      await setImage(ns, 'bad-v2');
      await clock.settle();
      const stuck = await kubectl('rollout', 'status', 'deployment/web', '--timeout=20s');
      assert.notEqual(stuck.code, 0);
      assert.match(stuck.out, /deployment "web" exceeded its progress deadline/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
