/**
 * The ReplicaSet controller against the embedded API server on a virtual
 * clock (no scheduler or kubelet: tests create and start pods themselves):
 * pods from the template, the scale-down order (one case per upstream rule,
 * the losing pod better on every later rule so each case proves precedence),
 * slow-start batches and a webhook that fails closed, burst limits,
 * expectations under a delayed watch, adoption and release, and status.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { BUILTIN } from '../../client/resources.ts';
import { testBedCertificate, type ClientTestBed } from '../../testing/client-test-bed.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject, OwnerReference, Pod } from '../../k8s/types.ts';
import { statusError } from '../apiserver/errors.ts';
import { freshNamespace, markPodReady, PodStarter, podTemplate, startControllerTestBed } from '../../testing/workload-controllers-bed.ts';
import { ReplicaSetController } from './replicaset.ts';
import type { SlowStartResult } from './slow-start.ts';

const T0 = Date.UTC(2026, 0, 1);
let clock: VirtualClock;
let bed: ClientTestBed;
let rsc: ReplicaSetController;
let starter: PodStarter;
const rounds: { key: string; result: SlowStartResult; admittedSoFar: number }[] = [];
/** Pod creations seen by the admission chain, per namespace. */
const admitted = new Map<string, number>();
/** Namespace → predicate on the n-th pod creation (1-based) that refuses it. */
const refuse = new Map<string, (n: number) => boolean>();

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startControllerTestBed(clock, testBedCertificate());
  bed.server.core.admission.register({
    name: 'test-pod-gate',
    validate: (a) => {
      if (a.operation !== 'CREATE' || a.resource.plural !== 'pods' || a.subresource !== '') return;
      const n = (admitted.get(a.namespace) ?? 0) + 1;
      admitted.set(a.namespace, n);
      if (refuse.get(a.namespace)?.(n) === true) return { allowed: false, status: statusError(403, 'Forbidden', 'admission webhook "gate.test" denied the request: pod refused') };
      return undefined;
    },
  });
  rsc = sharedController();
  rsc.start();
  starter = new PodStarter(bed.client, clock, { filter: (p) => p.metadata.labels?.['start'] === 'yes' });
  await clock.settle();
});
after(async () => {
  await starter.stop();
  await rsc.stop();
  await bed.close();
});

// ---- helpers ----

function list(apiVersion: string, kind: string, ns: string): KubeObject[] {
  const r = bed.server.control.list(apiVersion, kind, ns);
  assert.ok(r.ok);
  return r.value.items;
}
const pods = (ns: string): Pod[] => list('v1', 'Pod', ns) as Pod[];
const activePods = (ns: string): Pod[] => pods(ns).filter((p) => p.metadata.deletionTimestamp === undefined);
const names = (ps: readonly KubeObject[]): string[] => ps.map((p) => p.metadata?.name ?? '').sort();

function getRS(ns: string, name: string): KubeObject {
  const r = bed.server.control.get('apps/v1', 'ReplicaSet', ns, name);
  assert.ok(r.ok);
  return r.value;
}
const rsStatus = (ns: string, name: string): Record<string, unknown> => (getRS(ns, name)['status'] ?? {}) as Record<string, unknown>;

interface RSOptions {
  labels?: Record<string, string>;
  templateLabels?: Record<string, string>;
  owner?: OwnerReference;
  minReadySeconds?: number;
}

async function createRS(ns: string, name: string, replicas: number, options: RSOptions = {}): Promise<KubeObject> {
  const selector = options.labels ?? { app: name };
  const spec: Record<string, unknown> = { replicas, selector: { matchLabels: selector }, template: podTemplate(options.templateLabels ?? selector) };
  if (options.minReadySeconds !== undefined) spec['minReadySeconds'] = options.minReadySeconds;
  const metadata: Record<string, unknown> = { name, namespace: ns };
  if (options.owner !== undefined) metadata['ownerReferences'] = [options.owner];
  return bed.client.create(BUILTIN.replicasets, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata, spec });
}

async function scaleRS(ns: string, name: string, replicas: number): Promise<void> {
  await bed.client.scale(BUILTIN.replicasets, name, replicas, { namespace: ns });
}

interface PodShape {
  node?: string;
  phase?: 'Pending' | 'Running' | 'Unknown';
  /** Ready since this long ago (ms); false = not ready. */
  readyFor?: number | false;
  restarts?: number;
  cost?: number;
  labels?: Record<string, string>;
}

/** A pod made by hand (an orphan the set will adopt); its status comes from `setPodStatus`. */
async function createPod(ns: string, name: string, shape: PodShape): Promise<Pod> {
  const metadata: Record<string, unknown> = { name, namespace: ns, labels: shape.labels ?? { app: 'web' } };
  if (shape.cost !== undefined) metadata['annotations'] = { 'controller.kubernetes.io/pod-deletion-cost': String(shape.cost) };
  const spec: Record<string, unknown> = { containers: [{ name: 'app', image: 'nginx' }] };
  if (shape.node !== '') spec['nodeName'] = shape.node ?? 'n1';
  return bed.client.create<Pod>(BUILTIN.pods, { apiVersion: 'v1', kind: 'Pod', metadata, spec }, { namespace: ns });
}

/** The status a kubelet would have written: phase, readiness since `readyFor` ms before now, restarts. */
async function setPodStatus(pod: Pod, shape: PodShape): Promise<void> {
  const readyFor = shape.readyFor ?? 3_600_000;
  const phase = shape.phase ?? 'Running';
  const at = { namespace: pod.metadata.namespace ?? '' };
  if (readyFor !== false) {
    await markPodReady(bed.client, pod, clock.now() - readyFor, { restartCount: shape.restarts ?? 0 });
    if (phase !== 'Running') await bed.client.patchStatus(BUILTIN.pods, pod.metadata.name ?? '', { type: 'merge', body: { status: { phase } } }, at);
    return;
  }
  const status = {
    phase,
    conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: formatTime(clock.now()) }],
    containerStatuses: [{ name: 'app', ready: false, restartCount: shape.restarts ?? 0, image: 'nginx', imageID: '' }],
  };
  await bed.client.patchStatus(BUILTIN.pods, pod.metadata.name ?? '', { type: 'merge', body: { status } }, at);
}

async function makePod(ns: string, name: string, shape: PodShape): Promise<Pod> {
  const pod = await createPod(ns, name, shape);
  await setPodStatus(pod, shape);
  return pod;
}

function sharedController(): ReplicaSetController {
  return new ReplicaSetController({ client: bed.client, clock, onCreateRound: (key, result) => rounds.push({ key, result, admittedSoFar: admitted.get(key.split('/')[0] ?? '') ?? 0 }) });
}

/** Runs `fn` with a controller of its own in place of the shared one (only one may run at a time). */
async function withOwnController(options: Partial<ConstructorParameters<typeof ReplicaSetController>[0]>, fn: (c: ReplicaSetController) => Promise<void>): Promise<void> {
  await rsc.stop();
  const own = new ReplicaSetController({ client: bed.client, clock, ...options });
  own.start();
  try {
    await clock.quiesce();
    await fn(own);
  } finally {
    await own.stop();
    rsc = sharedController();
    rsc.start();
    await clock.settle();
  }
}

const ownedBy = (p: KubeObject, owner: KubeObject): boolean => (p.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.uid === owner.metadata?.uid);

// ---- tests ----

describe('pods from the template', () => {
  test('generateName, labels, annotations and spec come from the template; the controller reference blocks owner deletion', async () => {
    const ns = await freshNamespace(bed.client);
    const template = podTemplate({ app: 'web', tier: 'front' }, { annotations: { note: 'hello' }, image: 'nginx:9' });
    const rs = await bed.client.create(BUILTIN.replicasets, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web', namespace: ns }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template } });
    await clock.settle();
    const ps = pods(ns);
    assert.equal(ps.length, 3);
    for (const p of ps) {
      assert.match(p.metadata.name ?? '', /^web-[a-z0-9]{5}$/);
      assert.equal(p.metadata.generateName, 'web-');
      assert.deepEqual(p.metadata.labels, { app: 'web', tier: 'front' });
      assert.equal(p.metadata.annotations?.['note'], 'hello');
      assert.equal(p.spec.containers[0]?.image, 'nginx:9');
      assert.deepEqual(p.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: rs.metadata?.uid, controller: true, blockOwnerDeletion: true }]);
    }
    const events = list('events.k8s.io/v1', 'Event', ns).filter((e) => e['reason'] === 'SuccessfulCreate');
    assert.deepEqual(events.map((e) => e['note']).sort(), names(ps).map((n) => `Created pod: ${n}`));
    assert.equal(events[0]?.['reportingController'], 'replicaset-controller');
  });
});

describe('scale-down order: one upstream rule per case', () => {
  // `loser` is worse on the rule under test and better (or equal) on every later rule.
  const cases: { rule: string; loser: PodShape; winner: PodShape; related?: boolean }[] = [
    { rule: 'unassigned before assigned', loser: { node: '' }, winner: { restarts: 5, readyFor: 60_000 } },
    { rule: 'Pending before Running', loser: { phase: 'Pending', readyFor: false }, winner: { readyFor: false, restarts: 5 } },
    { rule: 'Unknown before Running', loser: { phase: 'Unknown', readyFor: false }, winner: { readyFor: false, restarts: 5 } },
    { rule: 'not ready before ready', loser: { readyFor: false }, winner: { cost: -10, restarts: 5, readyFor: 60_000 } },
    { rule: 'lower pod-deletion-cost first', loser: { cost: -5 }, winner: { cost: 10, restarts: 5, readyFor: 60_000 } },
    { rule: 'more related pods on the same node first', loser: { node: 'n2' }, winner: { node: 'n1', restarts: 5, readyFor: 60_000 }, related: true },
    { rule: 'ready for a shorter time first', loser: { readyFor: 60_000 }, winner: { readyFor: 7_200_000, restarts: 5 } },
    { rule: 'more restarts first', loser: { restarts: 3 }, winner: { restarts: 0 } },
    { rule: 'newer first', loser: {}, winner: {} },
  ];
  for (const c of cases) {
    test(c.rule, async () => {
      const ns = await freshNamespace(bed.client);
      const owner: OwnerReference = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: `deploy-${ns}`, controller: true };
      if (c.related) {
        // A sibling set of the same owner with two pods on n2.
        await makePod(ns, 'other-1', { node: 'n2', labels: { app: 'other' } });
        await makePod(ns, 'other-2', { node: 'n2', labels: { app: 'other' } });
        await createRS(ns, 'other', 2, { labels: { app: 'other' }, owner });
      }
      // The loser is created an hour before the winner, so it is the older one (better on the last rule) —
      // except in the age case, where it must be the newer.
      const [first, second] = c.rule === 'newer first' ? (['winner', 'loser'] as const) : (['loser', 'winner'] as const);
      const older = await createPod(ns, first, c[first]);
      await clock.advance(3_600_000);
      const newer = await createPod(ns, second, c[second]);
      // Statuses last, so "ready for" is measured from the same instant for both.
      await setPodStatus(older, c[first]);
      await setPodStatus(newer, c[second]);
      const rs = await createRS(ns, 'web', 2, { labels: { app: 'web' }, owner });
      await clock.settle();
      assert.deepEqual(names(activePods(ns).filter((p) => ownedBy(p, rs))), ['loser', 'winner'], 'both pods adopted, none created');
      await scaleRS(ns, 'web', 1);
      await clock.settle();
      assert.deepEqual(names(activePods(ns).filter((p) => p.metadata.labels?.['app'] === 'web')), ['winner']);
      const deleted = list('events.k8s.io/v1', 'Event', ns).filter((e) => e['reason'] === 'SuccessfulDelete');
      assert.deepEqual(deleted.map((e) => e['note']), ['Deleted pod: loser']);
    });
  }
});

describe('creation in slow-start batches', () => {
  // Every creation from the n-th on is refused: the first round stops after the batch holding the n-th call.
  const cases = [
    { refuseFrom: 1, batches: [1], created: 0 },
    { refuseFrom: 2, batches: [1, 2], created: 1 },
    { refuseFrom: 3, batches: [1, 2], created: 2 },
    { refuseFrom: 4, batches: [1, 2, 4], created: 3 },
    { refuseFrom: 8, batches: [1, 2, 4, 8], created: 7 },
    { refuseFrom: 16, batches: [1, 2, 4, 8, 5], created: 15 },
  ];
  for (const c of cases) {
    test(`creations refused from call ${c.refuseFrom}: batches ${c.batches.join(', ')}`, async () => {
      const ns = await freshNamespace(bed.client);
      refuse.set(ns, (n) => n >= c.refuseFrom);
      await createRS(ns, 'web', 20);
      await clock.quiesce();
      const first = rounds.find((r) => r.key === `${ns}/web`);
      assert.ok(first !== undefined);
      assert.deepEqual(first.result.batches, c.batches);
      assert.equal(first.result.successes, c.created);
      const calls = c.batches.reduce((a, b) => a + b, 0);
      assert.equal(first.admittedSoFar, calls, 'the API server saw exactly the calls of those batches');
      assert.equal(pods(ns).length, c.created);
      refuse.delete(ns);
    });
  }

  test('a webhook that refuses every pod costs one call per attempt, with exponential back-off; ReplicaFailure reports it until it lets pods through', async () => {
    const ns = await freshNamespace(bed.client);
    refuse.set(ns, () => true);
    await createRS(ns, 'web', 5);
    await clock.advance(10 * 60_000);
    const calls = admitted.get(ns) ?? 0;
    // 5 ms doubling reaches 10 minutes after ~17 retries; a spinning controller would make thousands of calls.
    assert.ok(calls >= 10 && calls <= 25, `calls in 10 minutes: ${calls}`);
    assert.ok(rounds.filter((r) => r.key === `${ns}/web`).every((r) => r.result.batches.length === 1 && r.result.batches[0] === 1));
    const cond = (rsStatus(ns, 'web')['conditions'] as Record<string, unknown>[] | undefined)?.[0];
    assert.equal(cond?.['type'], 'ReplicaFailure');
    assert.equal(cond?.['status'], 'True');
    assert.equal(cond?.['reason'], 'FailedCreate');
    assert.match(String(cond?.['message']), /denied the request/);
    const failed = list('events.k8s.io/v1', 'Event', ns).filter((e) => e['reason'] === 'FailedCreate');
    assert.equal(failed.length, 1, 'one event series');
    assert.ok(((failed[0]?.['series'] as { count?: number } | undefined)?.count ?? 1) > 1);
    refuse.delete(ns);
    await clock.advance(30 * 60_000);
    assert.equal(pods(ns).length, 5);
    assert.equal(rsStatus(ns, 'web')['conditions'], undefined);
  });

  test('a webhook outage mid-burst: once it is over the set reaches its replicas by itself, no later than the outage lasted', async () => {
    const ns = await freshNamespace(bed.client);
    const outageMs = 60_000;
    let outageEnds: number | undefined;
    // Creations 1–22 pass; from the 23rd the webhook refuses everything for a minute.
    refuse.set(ns, (n) => {
      if (n === 23) outageEnds = clock.now() + outageMs;
      return outageEnds !== undefined && clock.now() < outageEnds;
    });
    await createRS(ns, 'web', 40, { labels: { app: 'web', start: 'yes' } });
    await clock.advance(outageMs / 2);
    assert.equal(activePods(ns).length, 22, 'the outage stopped the burst');
    // Meanwhile the 22 pods became ready: events that ran the set again, and failed again.
    assert.ok(outageEnds !== undefined);
    await clock.advance(outageEnds - clock.now());
    // Nothing touches the set from here on: only its own retries can finish the job.
    await clock.advance(outageMs);
    assert.equal(activePods(ns).length, 40, 'the retry came within the outage\'s length after it ended');
    refuse.delete(ns);
  });

  test('at most burstReplicas pods per round; the rest once the first are observed', async () => {
    const ns = await freshNamespace(bed.client);
    const local: SlowStartResult[] = [];
    await withOwnController({ burstReplicas: 3, onCreateRound: (key, r) => key.startsWith(`${ns}/`) && local.push(r) }, async () => {
      await createRS(ns, 'web', 7);
      await clock.settle();
    });
    assert.deepEqual(local.map((r) => r.successes), [3, 3, 1]);
    assert.equal(pods(ns).length, 7);
  });
});

describe('expectations', () => {
  test('a delayed pod watch does not make the controller create the same replicas twice', async () => {
    const ns = await freshNamespace(bed.client);
    const createsBefore = bed.server.control.requestCount({ resource: 'pods', verb: 'create' });
    // A controller whose pod watch is answered only a minute after it asks: blind to its own pods meanwhile.
    const blind = bed.server.control.injectFault({ resource: 'pods', verb: 'watch', delayMs: 60_000, times: 1 });
    await withOwnController({}, async (own) => {
      await createRS(ns, 'web', 3);
      await clock.quiesce();
      assert.equal(blind.hits, 1);
      assert.equal(pods(ns).length, 3);
      assert.equal(own.expectations.get(`${ns}/web`)?.add, 3, 'three creations expected, none observed');
      // Something else makes the set sync again while the watch is still blind.
      await bed.client.patch(BUILTIN.replicasets, 'web', { type: 'merge', body: { metadata: { annotations: { poke: '1' } } } }, { namespace: ns });
      await clock.advance(30_000);
      assert.equal(pods(ns).length, 3, 'no second round while the creations are unobserved');
      await clock.settle();
      assert.equal(pods(ns).length, 3);
      assert.equal(own.expectations.satisfied(`${ns}/web`), true);
    });
    assert.equal(bed.server.control.requestCount({ resource: 'pods', verb: 'create' }) - createsBefore, 3);
  });
});

describe('adoption and release', () => {
  test('a matching orphan is adopted, a pod of another controller ignored, a pod that stops matching released and replaced', async () => {
    const ns = await freshNamespace(bed.client);
    await makePod(ns, 'orphan', { labels: { app: 'web', extra: 'x' } });
    const foreign = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'someone', uid: 'someone-else', controller: true };
    await bed.client.create(BUILTIN.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'foreign', namespace: ns, labels: { app: 'web' }, ownerReferences: [foreign] }, spec: { containers: [{ name: 'app', image: 'nginx' }] } }, { namespace: ns });
    const rs = await createRS(ns, 'web', 2);
    await clock.settle();
    const byName = new Map(pods(ns).map((p) => [p.metadata.name ?? '', p]));
    assert.equal(byName.size, 3, 'the orphan plus one created pod, and the foreign pod');
    assert.deepEqual(byName.get('orphan')?.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: rs.metadata?.uid, controller: true, blockOwnerDeletion: true }]);
    assert.deepEqual(byName.get('foreign')?.metadata.ownerReferences, [foreign]);
    await bed.client.patch(BUILTIN.pods, 'orphan', { type: 'merge', body: { metadata: { labels: { app: 'elsewhere' } } } }, { namespace: ns });
    await clock.settle();
    const after = pods(ns);
    // Our API server keeps the emptied list where Go would omit it: either means no owner.
    assert.deepEqual(after.find((p) => p.metadata.name === 'orphan')?.metadata.ownerReferences ?? [], [], 'released');
    assert.equal(after.filter((p) => ownedBy(p, rs)).length, 2, 'replaced');
  });
});

describe('status', () => {
  test('replicas, fullyLabeledReplicas, readyReplicas, availableReplicas after minReadySeconds, observedGeneration', async () => {
    const ns = await freshNamespace(bed.client);
    // The orphan lacks the template's labels: counted, not fully labeled, and never started.
    await makePod(ns, 'orphan', { labels: { app: 'web' }, readyFor: false, node: '' });
    await createRS(ns, 'web', 3, { labels: { app: 'web' }, templateLabels: { app: 'web', start: 'yes', tier: 'front' }, minReadySeconds: 10 });
    await clock.quiesce();
    assert.deepEqual(rsStatus(ns, 'web'), { replicas: 3, fullyLabeledReplicas: 2, observedGeneration: 1 });
    await clock.advance(2_000);
    // The two created pods are ready (the starter starts pods labeled start=yes after 1 s), not yet available.
    assert.deepEqual(rsStatus(ns, 'web'), { replicas: 3, fullyLabeledReplicas: 2, readyReplicas: 2, observedGeneration: 1 });
    await clock.advance(9_000);
    assert.equal(rsStatus(ns, 'web')['availableReplicas'], undefined, 'ready for 10 s is not more than minReadySeconds');
    await clock.settle();
    assert.deepEqual(rsStatus(ns, 'web'), { replicas: 3, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2, observedGeneration: 1 });
    // The unready orphan goes first.
    await scaleRS(ns, 'web', 2);
    await clock.settle();
    assert.equal(getRS(ns, 'web').metadata?.generation, 2);
    assert.deepEqual(rsStatus(ns, 'web'), { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2, observedGeneration: 2 });
  });
});
