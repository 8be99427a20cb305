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
import { duplicate, invalid, notSupported, required, root, type FieldError, type FieldPath } from '../../../k8s/field-errors.ts';
import { validateLabelSelector } from '../../../k8s/meta-validation.ts';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../k8s/name-formats.ts';
import { asArray, asNumber, asRecord, asString } from '../../../k8s/raw-json.ts';
import { formatTime } from '../../../k8s/time.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import type { ResourceStrategy } from '../resource-def.ts';
import { metaOf } from '../object-meta.ts';
import { immutable, setIfAbsent, specOf, specSubject, strategy } from './base.ts';
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

function validateCrd(obj: KubeObject): FieldError[] {
  const spec = asRecord(obj['spec']) ?? {};
  const path = root('spec');
  const errs: FieldError[] = [];
  const group = asString(spec['group']) ?? '';
  if (group === '') errs.push(required(path.child('group')));
  else if (isDNS1123Subdomain(group).length > 0 || !group.includes('.')) errs.push(invalid(path.child('group'), group, 'should be a domain with at least one dot'));
  const names = asRecord(spec['names']) ?? {};
  const namesPath = path.child('names');
  const plural = asString(names['plural']) ?? '';
  if (plural === '') errs.push(required(namesPath.child('plural')));
  else for (const msg of isDNS1123Label(plural)) errs.push(invalid(namesPath.child('plural'), plural, msg));
  if ((asString(names['kind']) ?? '') === '') errs.push(required(namesPath.child('kind')));
  if ((asString(names['listKind']) ?? '') === '') errs.push(required(namesPath.child('listKind')));
  const name = asString(obj.metadata?.name) ?? '';
  if (plural !== '' && group !== '' && name !== `${plural}.${group}`) {
    errs.push(invalid(root('metadata', 'name'), name, 'must be spec.names.plural+"."+spec.group'));
  }
  const scope = asString(spec['scope']) ?? '';
  if (scope === '') errs.push(required(path.child('scope')));
  else if (!['Namespaced', 'Cluster'].includes(scope)) errs.push(notSupported(path.child('scope'), scope, ['Cluster', 'Namespaced']));
  const versions = asArray(spec['versions']) ?? [];
  if (versions.length === 0) errs.push(invalid(path.child('versions'), [], 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  let storage = 0;
  versions.forEach((v, i) => {
    const version = asRecord(v) ?? {};
    const vp = path.child('versions').index(i);
    const vname = asString(version['name']) ?? '';
    if (vname === '') errs.push(required(vp.child('name')));
    else {
      for (const msg of isDNS1123Label(vname)) errs.push(invalid(vp.child('name'), vname, msg));
      if (seen.has(vname)) errs.push(duplicate(vp.child('name'), vname));
    }
    seen.add(vname);
    if (version['storage'] === true) storage++;
  });
  if (versions.length > 0 && storage !== 1) errs.push(invalid(path.child('versions'), versions, 'must have exactly one version marked as storage version'));
  return errs;
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
    validate: validateCrd,
    validateUpdate: (obj, old) => {
      const spec = asRecord(obj['spec']) ?? {};
      const prev = asRecord(old['spec']) ?? {};
      return [...validateCrd(obj), ...immutable(spec['group'], prev['group'], root('spec', 'group'))];
    },
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
