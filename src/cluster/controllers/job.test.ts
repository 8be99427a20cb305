/**
 * The Job controller against the embedded API server on the virtual clock:
 * pod shape (labels, finalizer, owner), completion with `completions` and
 * `parallelism` (and the API's defaults when both are nil), scaling
 * parallelism down, failures with the 10 s back-off and `backoffLimit`,
 * `activeDeadlineSeconds`, Indexed completion, suspend/resume,
 * `ttlSecondsAfterFinished`, and the tracking finalizer of orphaned pods.
 * Pods are finished by the test (phase Succeeded/Failed through the status
 * subresource), standing in for the kubelet.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../clock/virtual-clock.ts';
import { BUILTIN } from '../../client/resources.ts';
import { Informer } from '../../client/store.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import { testBedCertificate, type ClientTestBed } from '../../testing/client-test-bed.ts';
import { freshNamespace, markPodReady, startControllerTestBed } from '../../testing/workload-controllers-bed.ts';
import { JobController } from './job.ts';
import { JOB_COMPLETION_INDEX, JOB_TRACKING_FINALIZER, jobView } from './job-state.ts';

const T0 = Date.UTC(2026, 0, 1);
let clock: VirtualClock;
let bed: ClientTestBed;
let controller: JobController;
let recorder: Informer<Pod>;
const added: { ns: string; name: string; at: number }[] = [];

before(async () => {
  clock = new VirtualClock(T0);
  bed = await startControllerTestBed(clock, testBedCertificate());
  controller = new JobController({ client: bed.client, clock });
  await controller.start();
  recorder = new Informer<Pod>({ client: bed.client, ref: BUILTIN.pods, resyncMs: 0, name: 'recorder' });
  recorder.store.onAdd((p) => added.push({ ns: p.metadata.namespace ?? '', name: p.metadata.name ?? '', at: clock.now() }));
  recorder.start();
  await clock.settle();
});

after(async () => {
  await recorder.stop();
  await controller.stop();
  await bed.close();
});

type Job = KubeObject & { spec: Record<string, unknown>; status?: Record<string, unknown> };

function pods(ns: string): Pod[] {
  const r = bed.server.control.list('v1', 'Pod', ns);
  assert.ok(r.ok);
  return r.value.items as Pod[];
}

const activePods = (ns: string): Pod[] => pods(ns).filter((p) => p.metadata.deletionTimestamp === undefined && !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''));

function getJob(ns: string, name = 'work'): Job | undefined {
  const r = bed.server.control.get('batch/v1', 'Job', ns, name);
  return r.ok ? (r.value as Job) : undefined;
}

function job(ns: string): Job {
  const j = getJob(ns);
  assert.ok(j, 'the job exists');
  return j;
}

const conditions = (j: Job): { type: string; status: string; reason?: string }[] => (j.status?.['conditions'] as { type: string; status: string; reason?: string }[] | undefined) ?? [];
const conditionTypes = (j: Job): string[] => conditions(j).map((c) => `${c.type}=${c.status}`);

async function createJob(ns: string, spec: Record<string, unknown>, name = 'work'): Promise<void> {
  const body = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: ns }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } }, ...spec } };
  await bed.client.create(BUILTIN.jobs, body, { namespace: ns });
}

/** The kubelet's last word on a pod: Succeeded or Failed, with the container's finish time. */
async function finish(pod: Pod, phase: 'Succeeded' | 'Failed'): Promise<void> {
  const at = formatTime(clock.now());
  const status = {
    phase,
    conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: at }],
    containerStatuses: [{ name: 'c', ready: false, restartCount: 0, image: 'busybox', imageID: '', state: { terminated: { exitCode: phase === 'Succeeded' ? 0 : 1, finishedAt: at } } }],
  };
  await bed.client.patchStatus(BUILTIN.pods, pod.metadata.name ?? '', { type: 'merge', body: { status } }, { namespace: pod.metadata.namespace ?? '' });
}

async function finishAll(ns: string, phase: 'Succeeded' | 'Failed', count = Infinity): Promise<void> {
  for (const p of activePods(ns).slice(0, count)) await finish(p, phase);
}

describe('job pods and completion', () => {
  test('pods carry the job labels, the tracking finalizer and a controller reference', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, { completions: 3, parallelism: 2 });
    await clock.settle();
    const j = job(ns);
    const list = pods(ns);
    assert.equal(list.length, 2);
    for (const p of list) {
      assert.match(p.metadata.name ?? '', /^work-[a-z0-9]{5}$/);
      assert.equal(p.metadata.labels?.['batch.kubernetes.io/job-name'], 'work');
      assert.equal(p.metadata.labels?.['job-name'], 'work');
      assert.equal(p.metadata.labels?.['batch.kubernetes.io/controller-uid'], j.metadata?.uid);
      assert.equal(p.metadata.labels?.['controller-uid'], j.metadata?.uid);
      assert.deepEqual(p.metadata.finalizers, [JOB_TRACKING_FINALIZER]);
      assert.equal(p.metadata.ownerReferences?.[0]?.kind, 'Job');
      assert.equal(p.metadata.ownerReferences?.[0]?.uid, j.metadata?.uid);
    }
    assert.equal(j.status?.['active'], 2);
    assert.equal(j.status?.['ready'], 0);
    assert.equal(j.status?.['terminating'], 0);
    const started = Date.parse(String(j.status?.['startTime']));
    assert.ok(started >= T0 && started <= clock.now());
    assert.deepEqual(j.status?.['uncountedTerminatedPods'], {});
  });

  test('completions 3 / parallelism 2: runs two, then one, then completes', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, { completions: 3, parallelism: 2 });
    await clock.settle();
    for (const p of activePods(ns)) await markPodReady(bed.client, p, clock.now());
    await clock.settle();
    assert.equal(job(ns).status?.['ready'], 2);
    await finishAll(ns, 'Succeeded');
    await clock.settle();
    assert.equal(activePods(ns).length, 1, 'only one completion is left');
    let j = job(ns);
    assert.equal(j.status?.['succeeded'], 2);
    assert.equal(j.status?.['active'], 1);
    assert.ok(pods(ns).filter((p) => p.status?.phase === 'Succeeded').every((p) => !(p.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER)), 'counted pods lose the finalizer');
    await finishAll(ns, 'Succeeded');
    await clock.settle();
    j = job(ns);
    assert.equal(j.status?.['succeeded'], 3);
    assert.equal(j.status?.['active'], undefined);
    assert.deepEqual(conditionTypes(j), ['SuccessCriteriaMet=True', 'Complete=True']);
    assert.equal(conditions(j)[1]?.reason, 'CompletionsReached');
    assert.equal(typeof j.status?.['completionTime'], 'string');
    assert.equal(pods(ns).length, 3);
  });

  test('no completions and no parallelism: the API defaults both to 1', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, {});
    await clock.settle();
    assert.equal(activePods(ns).length, 1);
    await finishAll(ns, 'Succeeded');
    await clock.settle();
    assert.deepEqual(conditionTypes(job(ns)), ['SuccessCriteriaMet=True', 'Complete=True']);
  });

  test('a nil parallelism counts as 1 (spec read defensively)', () => {
    assert.equal(jobView({ spec: {} }).parallelism, 1);
    assert.equal(jobView({ spec: { parallelism: null } }).parallelism, 1);
    assert.equal(jobView({ spec: { parallelism: 'x' } }).parallelism, 1);
    assert.equal(jobView({}).backoffLimit, 6);
  });

  test('work queue (parallelism without completions): one success ends it once the others finish', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, { completions: null, parallelism: 3 });
    await clock.settle();
    assert.equal(activePods(ns).length, 3);
    await finishAll(ns, 'Succeeded', 1);
    await clock.settle();
    assert.equal(activePods(ns).length, 2, 'after a success nothing new starts');
    assert.deepEqual(conditionTypes(job(ns)), []);
    await finishAll(ns, 'Succeeded');
    await clock.settle();
    assert.equal(job(ns).status?.['succeeded'], 3);
    assert.deepEqual(conditionTypes(job(ns)), ['SuccessCriteriaMet=True', 'Complete=True']);
  });

  test('lowering parallelism deletes the surplus pods', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, { completions: 10, parallelism: 3 });
    await clock.settle();
    assert.equal(activePods(ns).length, 3);
    await bed.client.patch(BUILTIN.jobs, 'work', { type: 'merge', body: { spec: { parallelism: 1 } } }, { namespace: ns });
    await clock.settle();
    assert.equal(activePods(ns).length, 1);
    assert.equal(job(ns).status?.['active'], 1);
    assert.equal(job(ns).status?.['failed'], undefined, 'pods removed for parallelism lose their finalizer first and are not counted');
  });
});

describe('expectations', () => {
  test('a slow pod watch does not make the Job create its pods twice', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    // Every pod watch that reconnects now is answered 5 s later: the controller is blind to its own pods meanwhile.
    const fault = bed.server.control.injectFault({ resource: 'pods', verb: 'watch', delayMs: 5000 });
    bed.server.control.cutWatches();
    await createJob(ns, { completions: 3, parallelism: 3 });
    await clock.advance(3000);
    assert.ok(fault.hits > 0, 'the pod watches were delayed');
    assert.equal(pods(ns).length, 3, 'the resync after the status write waits for the 3 creations to be observed');
    assert.equal(controller.expectations.satisfied(`${ns}/work`), false);
    fault.clear();
    await clock.settle();
    assert.equal(pods(ns).length, 3);
    assert.equal(controller.expectations.satisfied(`${ns}/work`), true);
    assert.equal(job(ns).status?.['active'], 3);
  });
});

describe('failures', () => {
  test('a failed pod is replaced after the 10 s back-off; past backoffLimit the Job fails', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, { completions: 1, backoffLimit: 1 });
    await clock.settle();
    const t = clock.now();
    await finishAll(ns, 'Failed');
    await clock.settle();
    const adds = added.filter((a) => a.ns === ns);
    assert.equal(adds.length, 2);
    assert.equal((adds[1]?.at ?? 0) - t, 10_000, 'the replacement waits DefaultJobPodFailureBackOff');
    assert.equal(job(ns).status?.['failed'], 1);
    assert.deepEqual(conditionTypes(job(ns)), []);
    await finishAll(ns, 'Failed');
    await clock.settle();
    const j = job(ns);
    assert.equal(j.status?.['failed'], 2);
    assert.deepEqual(conditionTypes(j), ['FailureTarget=True', 'Failed=True']);
    assert.equal(conditions(j)[1]?.reason, 'BackoffLimitExceeded');
    assert.equal(added.filter((a) => a.ns === ns).length, 2, 'no pod after the Job failed');
    assert.ok(pods(ns).every((p) => !(p.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER)));
  });

  test('the back-off doubles with consecutive failures', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, { completions: 1, backoffLimit: 5 });
    await clock.settle();
    const gaps: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = clock.now();
      await finishAll(ns, 'Failed');
      await clock.settle();
      const adds = added.filter((a) => a.ns === ns);
      gaps.push((adds[adds.length - 1]?.at ?? 0) - t);
    }
    assert.deepEqual(gaps, [10_000, 20_000, 40_000]);
  });

  test('activeDeadlineSeconds fails the Job and deletes its running pods', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    const t = clock.now();
    await createJob(ns, { completions: 2, parallelism: 2, activeDeadlineSeconds: 30 });
    await clock.settle();
    const j = job(ns);
    assert.deepEqual(conditionTypes(j), ['FailureTarget=True', 'Failed=True']);
    assert.equal(conditions(j)[1]?.reason, 'DeadlineExceeded');
    assert.equal(activePods(ns).length, 0);
    assert.equal(pods(ns).length, 0, 'finalizers removed, the deleted pods are gone');
    assert.ok(clock.now() - t >= 30_000);
    assert.equal(j.status?.['failed'], 2);
  });
});

describe('indexed jobs', () => {
  test('each pod runs one index; a failed index is retried; completedIndexes tracks successes', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, { completions: 3, parallelism: 3, completionMode: 'Indexed' });
    await clock.settle();
    const byIndex = new Map(pods(ns).map((p) => [p.metadata.annotations?.[JOB_COMPLETION_INDEX], p]));
    assert.deepEqual([...byIndex.keys()].sort(), ['0', '1', '2']);
    for (const [ix, p] of byIndex) {
      assert.match(p.metadata.name ?? '', new RegExp(`^work-${ix}-[a-z0-9]{5}$`));
      assert.equal(p.metadata.labels?.[JOB_COMPLETION_INDEX], ix);
      assert.equal(p.spec['hostname'], `work-${ix}`);
      const env = (p.spec.containers[0]?.['env'] as { name: string }[] | undefined) ?? [];
      assert.ok(env.some((e) => e.name === 'JOB_COMPLETION_INDEX'));
    }
    await finish(byIndex.get('1') as Pod, 'Succeeded');
    await finish(byIndex.get('0') as Pod, 'Failed');
    await clock.settle();
    assert.equal(job(ns).status?.['completedIndexes'], '1');
    const retried = activePods(ns).map((p) => p.metadata.annotations?.[JOB_COMPLETION_INDEX]).sort();
    assert.deepEqual(retried, ['0', '2'], 'index 0 comes back, index 1 is done');
    await finishAll(ns, 'Succeeded');
    await clock.settle();
    const j = job(ns);
    assert.equal(j.status?.['completedIndexes'], '0-2');
    assert.equal(j.status?.['succeeded'], 3);
    assert.equal(j.status?.['failed'], 1);
    assert.deepEqual(conditionTypes(j), ['SuccessCriteriaMet=True', 'Complete=True']);
  });
});

describe('suspend, TTL and orphans', () => {
  test('a suspended Job runs nothing; resuming starts it', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, { completions: 2, parallelism: 2, suspend: true });
    await clock.settle();
    assert.equal(pods(ns).length, 0);
    assert.deepEqual(conditionTypes(job(ns)), ['Suspended=True']);
    assert.equal(job(ns).status?.['startTime'], undefined);
    await bed.client.patch(BUILTIN.jobs, 'work', { type: 'merge', body: { spec: { suspend: false } } }, { namespace: ns });
    await clock.settle();
    assert.equal(activePods(ns).length, 2);
    assert.deepEqual(conditionTypes(job(ns)), ['Suspended=False']);
    assert.equal(typeof job(ns).status?.['startTime'], 'string');
    // Suspending again deletes the running pods.
    await bed.client.patch(BUILTIN.jobs, 'work', { type: 'merge', body: { spec: { suspend: true } } }, { namespace: ns });
    await clock.settle();
    assert.equal(activePods(ns).length, 0);
  });

  test('ttlSecondsAfterFinished deletes a finished Job after the delay', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, { completions: 1, ttlSecondsAfterFinished: 60 });
    await clock.settle();
    await finishAll(ns, 'Succeeded');
    await clock.settle();
    const j = job(ns);
    const done = Date.parse(String(j.status?.['completionTime']));
    assert.ok(!Number.isNaN(done));
    const deletedAt = Date.parse(String(job(ns).metadata?.deletionTimestamp));
    // Foreground deletion: without a garbage collector the Job stays, marked for deletion.
    assert.ok(deletedAt - done >= 60_000 && deletedAt - done < 62_000, `deleted ${deletedAt - done} ms after finishing`);
    assert.deepEqual(job(ns).metadata?.finalizers, ['foregroundDeletion']);
  });

  test('when the Job is deleted, its pods lose the tracking finalizer', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    await createJob(ns, { completions: 2, parallelism: 2 });
    await clock.settle();
    await bed.client.delete(BUILTIN.jobs, 'work', { namespace: ns, propagationPolicy: 'Background' });
    await clock.settle();
    assert.equal(getJob(ns), undefined);
    assert.equal(pods(ns).length, 2);
    assert.ok(pods(ns).every((p) => (p.metadata.finalizers ?? []).length === 0));
  });

  test('a matching orphan pod is adopted with the tracking finalizer instead of creating one', async () => {
    const ns = await freshNamespace(bed.client, 'job');
    const orphan = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'stray', namespace: ns, labels: { app: 'batch' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    await bed.client.create(BUILTIN.pods, orphan, { namespace: ns });
    await clock.settle();
    await createJob(ns, { completions: 1, parallelism: 1, manualSelector: true, selector: { matchLabels: { app: 'batch' } }, template: { metadata: { labels: { app: 'batch' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } });
    await clock.settle();
    assert.deepEqual(pods(ns).map((p) => p.metadata.name), ['stray']);
    const stray = pods(ns)[0];
    assert.equal(stray?.metadata.ownerReferences?.[0]?.kind, 'Job');
    assert.deepEqual(stray?.metadata.finalizers, [JOB_TRACKING_FINALIZER]);
    assert.equal(job(ns).status?.['active'], 1);
  });
});
