/**
 * The CustomResourceDefinition of OpenKruise's CloneSet
 * (`clonesets.apps.kruise.io`, version v1alpha1), as the embedded cluster
 * serves it when its CloneSet controller runs — a cluster "with Kruise
 * installed". Like Kruise's own CRD it has the status subresource and the
 * scale subresource (`spec.replicas`, `status.replicas`,
 * `status.labelSelector`), the short name `clone` and Kruise's print
 * columns. Its schema is smaller than Kruise's generated one: the pod
 * template, selector, lifecycle and volume claim templates are kept as
 * given (preserve-unknown-fields), the strategy fields are typed. The
 * `default`s stand in for Kruise's defaulting webhook (replicas 1,
 * revisionHistoryLimit 10, updateStrategy.type ReCreate, partition 0,
 * maxUnavailable 20 %, maxSurge 0).
 * `ensureCloneSetCrd` creates it unless a CRD of that name exists (a
 * scenario may bring Kruise's own).
 */
import { isAlreadyExists, isNotFound } from '../../client/errors.ts';
import type { KubeClient } from '../../client/http-client.ts';
import { BUILTIN, type ResourceRef } from '../../client/resources.ts';
import type { KubeObject } from '../../k8s/types.ts';

export const CLONESET_CRD_NAME = 'clonesets.apps.kruise.io';
export const CLONESET_REF: ResourceRef = Object.freeze({ group: 'apps.kruise.io', version: 'v1alpha1', resource: 'clonesets', kind: 'CloneSet', namespaced: true });

const intOrString = (description: string, extra: Record<string, unknown> = {}) => ({ description, anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true, ...extra });
const kept = (description: string) => ({ description, type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
const counter = (description: string) => ({ description, type: 'integer', format: 'int32' });

const specSchema = {
  type: 'object',
  required: ['selector', 'template'],
  properties: {
    replicas: { description: 'Desired number of pods.', type: 'integer', format: 'int32', minimum: 0, default: 1 },
    selector: kept('Label query over the pods the CloneSet owns; must match the template labels.'),
    template: kept('The pod template.'),
    volumeClaimTemplates: { description: 'PVC templates (the embedded cluster has no storage: kept, not acted on).', type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    minReadySeconds: { description: 'Seconds a pod must be ready to count as available.', type: 'integer', format: 'int32', minimum: 0 },
    revisionHistoryLimit: { description: 'Old ControllerRevisions kept.', type: 'integer', format: 'int32', minimum: 0, default: 10 },
    lifecycle: kept('Lifecycle hooks (not acted on by the embedded controller).'),
    scaleStrategy: {
      description: 'How pods are scaled.',
      type: 'object',
      properties: {
        podsToDelete: { description: 'Pods to delete first; names of pods that are gone are removed by the controller.', type: 'array', items: { type: 'string' } },
        maxUnavailable: intOrString('Unavailable pods at most while scaling out (default: no limit).'),
        disablePVCReuse: { type: 'boolean' },
      },
    },
    updateStrategy: {
      description: 'How pods are updated to a new revision.',
      type: 'object',
      default: {},
      properties: {
        type: { description: 'ReCreate (default), InPlaceIfPossible or InPlaceOnly; in-place updates are done as recreates here.', type: 'string', enum: ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'], default: 'ReCreate' },
        partition: intOrString('Pods (or percent of replicas, rounded up) kept at the current revision.', { default: 0 }),
        maxUnavailable: intOrString('Unavailable pods at most during the update (default 20%).', { default: '20%' }),
        maxSurge: intOrString('Pods above replicas during the update (default 0).', { default: 0 }),
        paused: { type: 'boolean' },
        priorityStrategy: kept('Update priority (not acted on by the embedded controller).'),
        scatterStrategy: { description: 'Update scatter (not acted on by the embedded controller).', type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        inPlaceUpdateStrategy: kept('In-place update options (not acted on).'),
      },
    },
  },
};

const statusSchema = {
  type: 'object',
  properties: {
    observedGeneration: { type: 'integer', format: 'int64' },
    replicas: counter('Active pods.'),
    readyReplicas: counter('Ready pods.'),
    availableReplicas: counter('Pods ready for at least minReadySeconds.'),
    updatedReplicas: counter('Pods at the update revision.'),
    updatedReadyReplicas: counter('Ready pods at the update revision.'),
    updatedAvailableReplicas: counter('Available pods at the update revision.'),
    expectedUpdatedReplicas: counter('Pods that should be at the update revision (replicas − partition).'),
    updateRevision: { type: 'string' },
    currentRevision: { type: 'string' },
    collisionCount: counter('Hash collisions of ControllerRevision names.'),
    labelSelector: { description: 'The selector as a string, for the scale subresource.', type: 'string' },
    conditions: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  },
};

const column = (name: string, jsonPath: string, type: string, description: string, priority?: number) => ({ name, jsonPath, type, description, ...(priority === undefined ? {} : { priority }) });

export function cloneSetCrd(): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CLONESET_CRD_NAME, labels: { 'app.kubernetes.io/part-of': 'workloadspread-embedded' } },
    spec: {
      group: 'apps.kruise.io',
      scope: 'Namespaced',
      names: { plural: 'clonesets', singular: 'cloneset', kind: 'CloneSet', listKind: 'CloneSetList', shortNames: ['clone'] },
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' } },
          additionalPrinterColumns: [
            column('DESIRED', '.spec.replicas', 'integer', 'The desired number of pods.'),
            column('UPDATED', '.status.updatedReplicas', 'integer', 'The number of pods updated.'),
            column('UPDATED_READY', '.status.updatedReadyReplicas', 'integer', 'The number of pods updated and ready.'),
            column('UPDATED_AVAILABLE', '.status.updatedAvailableReplicas', 'integer', 'The number of pods updated and available.'),
            column('READY', '.status.readyReplicas', 'integer', 'The number of pods ready.'),
            column('TOTAL', '.status.replicas', 'integer', 'The number of currently all pods.'),
            column('AGE', '.metadata.creationTimestamp', 'date', 'Time since the CloneSet was created.'),
            column('CONTAINERS', '.spec.template.spec.containers[*].name', 'string', 'The containers of the pod template.', 1),
            column('IMAGES', '.spec.template.spec.containers[*].image', 'string', 'The images of the pod template.', 1),
            column('SELECTOR', '.status.labelSelector', 'string', 'The label selector.', 1),
          ],
          schema: { openAPIV3Schema: { type: 'object', properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec: specSchema, status: statusSchema } } },
        },
      ],
    },
  };
}

/** Creates the CloneSet CRD unless one of that name exists; true when this call created it. */
export async function ensureCloneSetCrd(client: KubeClient): Promise<boolean> {
  try {
    await client.get(BUILTIN.customresourcedefinitions, CLONESET_CRD_NAME);
    return false;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    await client.create(BUILTIN.customresourcedefinitions, cloneSetCrd());
    return true;
  } catch (err) {
    if (isAlreadyExists(err)) return false;
    throw err;
  }
}
