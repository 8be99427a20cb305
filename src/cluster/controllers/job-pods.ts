/**
 * The pods of a Job, as the Job controller writes them.
 *
 * `jobPod`: the pod a Job creates (upstream's manageJob + controller.GetPodFromTemplate):
 * the template's labels, annotations and finalizers, plus the
 * `batch.kubernetes.io/job-tracking` finalizer and a controller reference.
 * An Indexed Job's pod also gets its completion index as annotation and label
 * (`batch.kubernetes.io/job-completion-index`), as hostname `<job>-<index>`,
 * as the JOB_COMPLETION_INDEX variable of every container, and a name
 * `<job>-<index>-<random>` (the prefix cut so the index always fits). Pure.
 *
 * `claimJobPods` (getPodsForJob): adoption of matching orphans — adding the
 * tracking finalizer with the owner reference, once the Job is re-read live —
 * and release of owned pods that stopped matching; `removeTrackingFinalizer`
 * and `deletePods` are the writes the tracking and finishing steps make.
 */
import { isNotFound } from '../../client/errors.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { BUILTIN } from '../../client/resources.ts';
import { deepClone } from '../../k8s/json.ts';
import type { Selector } from '../../k8s/label-selector.ts';
import { ownerReferenceFor } from '../../k8s/owner.ts';
import { isPodReady } from '../../k8s/pod.ts';
import { asArray, asRecord } from '../../k8s/raw-json.ts';
import type { KubeObject, Pod } from '../../k8s/types.ts';
import { claimDecision } from './controller-ref-manager.ts';
import { isTerminating, JOB_COMPLETION_INDEX, JOB_COMPLETION_INDEX_ENV, JOB_TRACKING_FINALIZER } from './job-state.ts';

/** generateName leaves 5 random characters to a 63-character label. */
const MAX_GENERATE_NAME = 58;

export function jobPod(job: KubeObject, index: number | undefined): Pod {
  const jobName = job.metadata?.name ?? '';
  const template = deepClone(asRecord(asRecord(job['spec'])?.['template']) ?? {});
  const tmeta = asRecord(template['metadata']) ?? {};
  const spec = asRecord(template['spec']) ?? {};
  const labels = { ...(asRecord(tmeta['labels']) ?? {}) } as Record<string, string>;
  const annotations = { ...(asRecord(tmeta['annotations']) ?? {}) } as Record<string, string>;
  const finalizers = (asArray(tmeta['finalizers']) ?? []).filter((f): f is string => typeof f === 'string');
  if (!finalizers.includes(JOB_TRACKING_FINALIZER)) finalizers.push(JOB_TRACKING_FINALIZER);
  let generateName = `${jobName}-`;
  if (index !== undefined) {
    annotations[JOB_COMPLETION_INDEX] = String(index);
    labels[JOB_COMPLETION_INDEX] = String(index);
    spec['hostname'] = `${jobName}-${index}`;
    const suffix = `-${index}-`;
    generateName = jobName.length + suffix.length > MAX_GENERATE_NAME ? `${jobName.slice(0, MAX_GENERATE_NAME - suffix.length)}${suffix}` : `${jobName}${suffix}`;
    for (const field of ['containers', 'initContainers']) {
      for (const c of asArray(spec[field]) ?? []) {
        const container = asRecord(c);
        if (container === undefined) continue;
        const env = (asArray(container['env']) ?? []).slice();
        if (!env.some((e) => asRecord(e)?.['name'] === JOB_COMPLETION_INDEX_ENV)) {
          env.push({ name: JOB_COMPLETION_INDEX_ENV, valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX}']` } } });
        }
        container['env'] = env;
      }
    }
  }
  const metadata: Pod['metadata'] = {
    generateName,
    namespace: job.metadata?.namespace ?? '',
    labels,
    finalizers,
    ownerReferences: [ownerReferenceFor({ ...job, apiVersion: 'batch/v1', kind: 'Job' })],
  };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: spec as Pod['spec'] };
}

const uidOf = (obj: KubeObject): string => obj.metadata?.uid ?? '';

/** getPodsForJob: of `candidates` (the Job's pods and its namespace's orphans), those it owns after adopting and releasing. */
export async function claimJobPods(client: KubeClient, job: KubeObject, selector: Selector, candidates: readonly Pod[]): Promise<Pod[]> {
  const ns = job.metadata?.namespace ?? '';
  const claimed: Pod[] = [];
  let recheck: Promise<void> | undefined;
  for (const pod of candidates) {
    const action = claimDecision(pod, job, selector.matches(pod.metadata?.labels));
    const name = pod.metadata?.name ?? '';
    try {
      if (action === 'claimed') claimed.push(pod);
      else if (action === 'release') {
        const body = { metadata: { ownerReferences: [{ $patch: 'delete', uid: uidOf(job) }], uid: uidOf(pod) } };
        await client.patch(BUILTIN.pods, name, { type: 'strategic', body }, { namespace: ns });
      } else if (action === 'adopt') {
        recheck ??= recheckJob(client, job);
        await recheck;
        const body = { metadata: { ownerReferences: [ownerReferenceFor({ ...job, apiVersion: 'batch/v1', kind: 'Job' })], uid: uidOf(pod), finalizers: [JOB_TRACKING_FINALIZER] } };
        await client.patch(BUILTIN.pods, name, { type: 'strategic', body }, { namespace: ns });
        // Counted as carrying the finalizer from now on, as upstream does for adopted pods.
        claimed.push({ ...pod, metadata: { ...pod.metadata, finalizers: [...(pod.metadata.finalizers ?? []), JOB_TRACKING_FINALIZER] } });
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return claimed;
}

/** RecheckDeletionTimestamp: a Job deleted or replaced since the cache saw it adopts nothing. */
async function recheckJob(client: KubeClient, job: KubeObject): Promise<void> {
  const ns = job.metadata?.namespace ?? '';
  const fresh = await client.get(BUILTIN.jobs, job.metadata?.name ?? '', { namespace: ns });
  if (uidOf(fresh) !== uidOf(job)) throw new Error(`original Job ${ns}/${job.metadata?.name ?? ''} is gone: got uid ${uidOf(fresh)}, wanted ${uidOf(job)}`);
  if (isTerminating(fresh)) throw new Error(`Job ${ns}/${job.metadata?.name ?? ''} has just been deleted`);
}

/** removeTrackingFinalizerPatch: a strategic merge that deletes the one finalizer, whatever else is there. */
export function removeTrackingFinalizer(client: KubeClient, pod: KubeObject): Promise<unknown> {
  const body = { metadata: { [`$deleteFromPrimitiveList/finalizers`]: [JOB_TRACKING_FINALIZER] } };
  return client.patch(BUILTIN.pods, pod.metadata?.name ?? '', { type: 'strategic', body }, { namespace: pod.metadata?.namespace ?? '' });
}

/** deleteActivePods: plain DELETEs (a pod already gone counts as deleted); the finalizers stay for the tracking step. */
export async function deletePods(client: KubeClient, pods: readonly Pod[]): Promise<{ deleted: number; deletedReady: number; error?: unknown }> {
  let deleted = 0;
  let deletedReady = 0;
  let error: unknown;
  await Promise.all(
    pods.map(async (pod) => {
      try {
        await client.delete(BUILTIN.pods, pod.metadata?.name ?? '', { namespace: pod.metadata?.namespace ?? '' });
        deleted++;
      } catch (err) {
        if (isNotFound(err)) deleted++;
        else error ??= err;
      }
      if (isPodReady(pod)) deletedReady++;
    }),
  );
  return error === undefined ? { deleted, deletedReady } : { deleted, deletedReady, error };
}
