/**
 * Strategies of the API-extension kinds: Mutating/ValidatingWebhookConfiguration
 * (admissionregistration.k8s.io/v1), CustomResourceDefinition
 * (apiextensions.k8s.io/v1), and the generic strategy every custom resource
 * gets (k8s.io/apiextensions-apiserver/pkg/registry/customresource).
 *
 * CRD schema checks and custom-resource schema enforcement (structural
 * schemas, pruning, defaulting) are not here: they are plugged in by wrapping
 * these strategies (see `ApiServerCore.customResourceStrategy`).
 */
import { asArray, asRecord, asString } from '../../../k8s/raw-json.ts';
import { formatTime } from '../../../k8s/time.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import type { ResourceStrategy } from '../resource-def.ts';
import { metaOf } from '../object-meta.ts';
import { validateCustomResourceDefinition, validateCustomResourceDefinitionUpdate, validateStoredVersions } from '../../../k8s/crd-schema/crd-validation.ts';
import { setIfAbsent, specOf, specSubject, strategy } from './base.ts';
import { defaultWebhookConfiguration, validateWebhookConfiguration, webhookConfigurationDecodeError } from '../webhook-configuration.ts';

// ---- webhook configurations ----

export function webhookConfigurationStrategy(mutating: boolean): ResourceStrategy {
  return strategy({
    applyDefaults: (obj) => defaultWebhookConfiguration(obj, mutating),
    decodeError: webhookConfigurationDecodeError,
    generationSubject: (obj) => obj['webhooks'] ?? null,
    validate: (obj) => validateWebhookConfiguration(obj, mutating),
    validateUpdate: (obj, old) => validateWebhookConfiguration(obj, mutating, old),
  });
}

// ---- CustomResourceDefinition ----

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

export function storageVersionOf(crd: KubeObject): string | undefined {
  for (const v of asArray(asRecord(crd['spec'])?.['versions']) ?? []) {
    const version = asRecord(v);
    if (version?.['storage'] === true) return asString(version['name']);
  }
  return undefined;
}

function defaultCrd(obj: KubeObject): void {
  const spec = specOf(obj);
  const names = asRecord(spec['names']);
  const kind = asString(names?.['kind']) ?? '';
  if (names !== undefined && kind !== '') {
    setIfAbsent(names, 'singular', kind.toLowerCase());
    setIfAbsent(names, 'listKind', `${kind}List`);
  }
  setIfAbsent(spec, 'conversion', { strategy: 'None' });
}

export function customResourceDefinitionStrategy(): ResourceStrategy {
  return strategy({
    applyDefaults: defaultCrd,
    resetStatusOnCreate: true,
    allowUnconditionalUpdate: false,
    generationSubject: specSubject,
    prepareForCreate: (obj) => {
      const stored = storageVersionOf(obj);
      obj.status = { acceptedNames: { plural: '', kind: '' }, storedVersions: stored === undefined ? [] : [stored] };
    },
    prepareForUpdate: (obj) => {
      const stored = storageVersionOf(obj);
      const status = { ...(asRecord(obj.status) ?? {}) };
      const versions = (asArray(status['storedVersions']) ?? []).filter((v): v is string => typeof v === 'string');
      if (stored !== undefined && !versions.includes(stored)) status['storedVersions'] = [...versions, stored];
      obj.status = status;
    },
    prepareForDelete: (obj, ctx) => {
      const meta = metaOf(obj);
      const finalizers = (asArray(meta.finalizers) ?? []).filter((f): f is string => typeof f === 'string');
      if (!finalizers.includes(CRD_CLEANUP_FINALIZER)) meta.finalizers = [...finalizers, CRD_CLEANUP_FINALIZER];
      const status = { ...(asRecord(obj.status) ?? {}) };
      const conditions = (asArray(status['conditions']) ?? []).filter((c) => asRecord(c)?.['type'] !== 'Terminating');
      conditions.push({
        type: 'Terminating',
        status: 'True',
        lastTransitionTime: formatTime(ctx.now),
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      });
      status['conditions'] = conditions;
      obj.status = status;
    },
    validate: validateCustomResourceDefinition,
    validateUpdate: validateCustomResourceDefinitionUpdate,
    validateStatusUpdate: validateStoredVersions,
  });
}

// ---- custom resources ----

/**
 * The generic custom resource strategy: generation follows everything but
 * metadata (and status, when the status subresource is on); PUT needs a
 * resourceVersion; no defaults or validation beyond ObjectMeta until a schema
 * layer wraps it.
 */
export function customResourceStrategy(options: { statusSubresource: boolean }): ResourceStrategy {
  return strategy({
    resetStatusOnCreate: options.statusSubresource,
    allowUnconditionalUpdate: false,
    generationSubject: (obj) => {
      const rest: Record<string, unknown> = { ...obj };
      delete rest['metadata'];
      delete rest['apiVersion'];
      delete rest['kind'];
      if (options.statusSubresource) delete rest['status'];
      return rest;
    },
  });
}
