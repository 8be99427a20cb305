/**
 * The Deployment's new ReplicaSet and its revision (k8s.io/kubernetes
 * pkg/controller/deployment sync.go getNewReplicaSet and
 * getAllReplicaSetsAndSyncRevision):
 * - the set whose template equals the Deployment's (ignoring the hash label)
 *   is the new one: its annotations (copied ones, revision = highest old
 *   revision + 1 with the history of a reused set, replica counts) and
 *   minReadySeconds are synced, then the Deployment's revision and a first
 *   Progressing condition (FoundNewReplicaSet);
 * - otherwise, when asked, `<name>-<pod-template-hash>` is created at the
 *   size a rollout allows (NewReplicaSetCreated, a ScalingReplicaSet event).
 *   AlreadyExists with a set that is not ours or not equal is a hash
 *   collision: `status.collisionCount` goes up and the sync fails, so the next
 *   one hashes differently; other failures set ReplicaSetCreateError.
 * Status writes keep the resourceVersion the server answered (a later write
 * in the same sync would otherwise conflict, which upstream retries).
 */
import type { Clock } from '../../clock/clock.ts';
import { ApiError, describeError, isAlreadyExists } from '../../client/errors.ts';
import type { EventRecorder } from '../../client/event-recorder.ts';
import type { KubeClient } from '../../client/http-client.ts';
import type { Logger } from '../../client/logger.ts';
import { BUILTIN } from '../../client/resources.ts';
import { controllerRef, ownerReferenceFor } from '../../k8s/owner.ts';
import { asNumber, asRecord } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { PROGRESSING, REASON, getCondition, newCondition, setCondition, statusOf, wireStatus } from './deployment-status.ts';
import {
  REVISION_ANNOTATION,
  annotationsOf,
  equalIgnoreHash,
  findNewReplicaSet,
  findOldReplicaSets,
  maxRevision,
  newRSNewReplicas,
  progressDeadlineSeconds,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  specOf,
} from './deployment-util.ts';
import { computePodTemplateHash, POD_TEMPLATE_HASH_LABEL } from './pod-template-hash.ts';

export interface NewReplicaSetDeps {
  client: KubeClient;
  clock: Clock;
  recorder: EventRecorder | undefined;
  log: Logger;
  /** The cached ReplicaSet, for the already-exists path of creation. */
  cachedReplicaSet(namespace: string, name: string): KubeObject | undefined;
}

const ns = (obj: KubeObject): string => obj.metadata?.namespace ?? '';
const nameOf = (obj: KubeObject): string => obj.metadata?.name ?? '';

export class NewReplicaSetSync {
  readonly #deps: NewReplicaSetDeps;

  constructor(deps: NewReplicaSetDeps) {
    this.#deps = deps;
  }

  get #now(): number {
    return this.#deps.clock.now();
  }

  #event(d: KubeObject, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.#deps.recorder?.record(d, { type, reason, note, action: reason === 'ScalingReplicaSet' ? 'Scale' : 'Sync' });
  }

  /** PUT the Deployment's status (annotations travel too, as upstream's UpdateStatus); keeps the new resourceVersion. */
  async updateStatus(d: KubeObject): Promise<void> {
    const body = { ...d, status: wireStatus(statusOf(d)) };
    const updated = await this.#deps.client.updateStatus<KubeObject>(BUILTIN.deployments, body);
    const meta = (d.metadata ??= {});
    if (updated.metadata?.resourceVersion !== undefined) meta.resourceVersion = updated.metadata.resourceVersion;
  }

  #setStatus(d: KubeObject, status: unknown): void {
    d['status'] = status;
  }

  /** getAllReplicaSetsAndSyncRevision: the new set (maybe created) and every old one. */
  async allReplicaSets(d: KubeObject, rsList: KubeObject[], create: boolean): Promise<{ newRS: KubeObject | undefined; oldRSs: KubeObject[] }> {
    const { all } = findOldReplicaSets(d, rsList);
    const newRS = await this.#newReplicaSet(d, rsList, all, create);
    return { newRS, oldRSs: all };
  }

  async #newReplicaSet(d: KubeObject, rsList: KubeObject[], oldRSs: KubeObject[], create: boolean): Promise<KubeObject | undefined> {
    const existing = findNewReplicaSet(d, rsList);
    const newRevision = maxRevision(oldRSs) + 1;
    const deadline = progressDeadlineSeconds(d);
    if (existing !== undefined) {
      const copy = structuredClone(existing);
      const annotationsUpdated = setNewReplicaSetAnnotations(d, copy, newRevision, true);
      const minReady = asNumber(specOf(d)['minReadySeconds']) ?? 0;
      if (annotationsUpdated || (asNumber(specOf(copy)['minReadySeconds']) ?? 0) !== minReady) {
        const spec = (copy['spec'] = { ...specOf(copy) });
        if (minReady === 0) delete spec['minReadySeconds'];
        else spec['minReadySeconds'] = minReady;
        return this.#deps.client.update<KubeObject>(BUILTIN.replicasets, copy);
      }
      let needsUpdate = setDeploymentRevision(d, annotationsOf(copy)[REVISION_ANNOTATION] ?? '');
      const status = statusOf(d);
      if (deadline !== undefined && getCondition(status, PROGRESSING) === undefined) {
        setCondition(status, newCondition(PROGRESSING, 'True', REASON.foundNewReplicaSet, `Found new replica set "${nameOf(copy)}"`, this.#now));
        this.#setStatus(d, status);
        needsUpdate = true;
      }
      if (needsUpdate) await this.updateStatus(d);
      return copy;
    }
    if (!create) return undefined;
    return this.#createNewReplicaSet(d, oldRSs, newRevision, deadline);
  }

  /** The ReplicaSet a Deployment would create now: template and selector with the hash label, size 0. */
  #replicaSetFor(d: KubeObject): KubeObject {
    const spec = specOf(d);
    const template = structuredClone(asRecord(spec['template']) ?? {});
    const collisionCount = asNumber(statusOf(d).collisionCount);
    const hash = computePodTemplateHash(template, collisionCount);
    const tmeta = (template['metadata'] = { ...(asRecord(template['metadata']) ?? {}) });
    const labels = { ...((asRecord(tmeta['labels']) as Record<string, string> | undefined) ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
    tmeta['labels'] = labels;
    const selector = structuredClone(asRecord(spec['selector']) ?? {});
    selector['matchLabels'] = { ...(asRecord(selector['matchLabels']) ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
    const rsSpec: Record<string, unknown> = { replicas: 0, selector, template };
    const minReady = asNumber(spec['minReadySeconds']) ?? 0;
    if (minReady !== 0) rsSpec['minReadySeconds'] = minReady;
    return {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: `${nameOf(d)}-${hash}`, namespace: ns(d), ownerReferences: [ownerReferenceFor(d)], labels: { ...labels } },
      spec: rsSpec,
    };
  }

  async #createNewReplicaSet(d: KubeObject, oldRSs: KubeObject[], newRevision: number, deadline: number | undefined): Promise<KubeObject> {
    const newRS = this.#replicaSetFor(d);
    const count = newRSNewReplicas(d, [...oldRSs, newRS], newRS);
    if (!count.ok) throw new Error(count.error);
    specOf(newRS)['replicas'] = count.value;
    setNewReplicaSetAnnotations(d, newRS, newRevision, false);
    let created: KubeObject;
    let alreadyExists = false;
    try {
      created = await this.#deps.client.create<KubeObject>(BUILTIN.replicasets, newRS, { namespace: ns(d) });
    } catch (err) {
      if (isAlreadyExists(err)) {
        const rs = this.#deps.cachedReplicaSet(ns(d), nameOf(newRS));
        if (rs === undefined) throw err;
        if (controllerRef(rs)?.uid === d.metadata?.uid && equalIgnoreHash(specOf(d)['template'], specOf(rs)['template'])) {
          created = structuredClone(rs);
          alreadyExists = true;
        } else {
          // A different template hashed to the same name: change the hash input and try again next sync.
          const status = statusOf(d);
          status.collisionCount = (asNumber(status.collisionCount) ?? 0) + 1;
          this.#setStatus(d, status);
          await this.updateStatus(d).then(
            () => this.#deps.log.info({ deployment: `${ns(d)}/${nameOf(d)}`, collisionCount: status.collisionCount }, 'found a hash collision, bumping collisionCount'),
            () => undefined,
          );
          throw err;
        }
      } else if (err instanceof ApiError && (err.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating')) {
        throw err;
      } else {
        const msg = `Failed to create new replica set "${nameOf(newRS)}": ${describeError(err)}`;
        if (deadline !== undefined) {
          const status = statusOf(d);
          setCondition(status, newCondition(PROGRESSING, 'False', REASON.failedRSCreate, msg, this.#now));
          this.#setStatus(d, status);
          await this.updateStatus(d).catch(() => undefined);
        }
        this.#event(d, 'Warning', REASON.failedRSCreate, msg);
        throw err;
      }
    }
    if (!alreadyExists && count.value > 0) this.#event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${nameOf(created)} to ${count.value} from 0`);
    let needsUpdate = setDeploymentRevision(d, String(newRevision));
    if (!alreadyExists && deadline !== undefined) {
      const status = statusOf(d);
      setCondition(status, newCondition(PROGRESSING, 'True', REASON.newReplicaSetCreated, `Created new replica set "${nameOf(created)}"`, this.#now));
      this.#setStatus(d, status);
      needsUpdate = true;
    }
    if (needsUpdate) await this.updateStatus(d);
    return created;
  }
}
