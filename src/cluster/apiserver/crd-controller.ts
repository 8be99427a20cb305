/**
 * What apiextensions-apiserver's controllers do for a CustomResourceDefinition,
 * done synchronously as the CRD is written:
 *
 * - serve every served version as a generic resource (registered in the
 *   registry, so routing and discovery see it), with the status and scale
 *   subresources the version declares and the strategy the server core's
 *   `customResourceStrategy` hook returns (schema enforcement plugs in there);
 * - set `status.acceptedNames` and the NamesAccepted / Established conditions;
 * - on delete (the CRD strategy adds the `customresourcecleanup` finalizer):
 *   delete every instance, then remove the finalizer so the CRD goes away and
 *   its resources are unregistered.
 * Name conflicts within a group (crd-names.ts) leave a CRD unserved, with
 * NamesAccepted and Established false.
 */
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { ALL_VERBS } from './builtin-resources.ts';
import { acceptNames, type NamesVerdict } from './crd-names.ts';
import { deleteObject } from './delete.ts';
import { finalizersOf } from './object-meta.ts';
import type { ObjectOperations } from './operations.ts';
import type { RequestContext, ResourceConversion, ResourceDef, ResourceStrategy, ScaleSpec } from './resource-def.ts';
import { storageKey } from './resource-def.ts';
import type { ResourceRegistry } from './resources.ts';
import type { StoreEvent } from './storage.ts';
import { CRD_CLEANUP_FINALIZER, customResourceStrategy, storageVersionOf } from './strategies/extensions.ts';

export const CRD_RESOURCE = 'apiextensions.k8s.io/customresourcedefinitions';

/** Chooses the strategy of one served version of a CRD (the schema-enforcement hook). */
export type CustomResourceStrategyFactory = (crd: KubeObject, version: string, base: ResourceStrategy) => ResourceStrategy;

export interface CrdControllerDeps {
  ops: ObjectOperations;
  registry: ResourceRegistry;
  strategyFor: () => CustomResourceStrategyFactory;
  now: () => number;
  /** Runs async follow-up work as a tracked activity of the server's clock. */
  track: (label: string, fn: () => Promise<void>) => void;
  systemContext: () => RequestContext;
}

function names(crd: KubeObject): { group: string; plural: string; singular: string; kind: string; listKind: string; shortNames: string[]; categories: string[] } {
  const spec = asRecord(crd['spec']) ?? {};
  const n = asRecord(spec['names']) ?? {};
  const kind = asString(n['kind']) ?? '';
  const strings = (v: unknown) => (asArray(v) ?? []).filter((x): x is string => typeof x === 'string');
  return {
    group: asString(spec['group']) ?? '',
    plural: asString(n['plural']) ?? '',
    singular: asString(n['singular']) ?? kind.toLowerCase(),
    kind,
    listKind: asString(n['listKind']) ?? `${kind}List`,
    shortNames: strings(n['shortNames']),
    categories: strings(n['categories']),
  };
}

/** The ResourceDefs a CRD serves (one per served version). */
export function customResourceDefs(crd: KubeObject, strategyFor: CustomResourceStrategyFactory): ResourceDef[] {
  const spec = asRecord(crd['spec']) ?? {};
  const n = names(crd);
  const namespaced = asString(spec['scope']) !== 'Cluster';
  const versions = (asArray(spec['versions']) ?? []).map((v) => asRecord(v) ?? {});
  const storageVersion = storageVersionOf(crd);
  const conversion: ResourceConversion | undefined =
    versions.length > 1 && storageVersion !== undefined
      ? {
          storage: { group: n.group, plural: n.plural },
          toStorage: (obj) => ({ ...obj, apiVersion: `${n.group}/${storageVersion}` }),
          fromStorage: (obj) => obj,
        }
      : undefined;
  const defs: ResourceDef[] = [];
  for (const v of versions) {
    if (v['served'] !== true) continue;
    const version = asString(v['name']) ?? '';
    const subs = asRecord(v['subresources']) ?? {};
    const statusOn = asRecord(subs['status']) !== undefined;
    const scale = asRecord(subs['scale']);
    const subresources: ResourceDef['subresources'] = {};
    if (statusOn) subresources.status = true;
    if (scale !== undefined) {
      const s: ScaleSpec = { specReplicasPath: asString(scale['specReplicasPath']) ?? '.spec.replicas', statusReplicasPath: asString(scale['statusReplicasPath']) ?? '.status.replicas' };
      const selectorPath = asString(scale['labelSelectorPath']);
      if (selectorPath !== undefined) s.labelSelectorPath = selectorPath;
      subresources.scale = s;
    }
    const def: ResourceDef = {
      group: n.group,
      version,
      kind: n.kind,
      listKind: n.listKind,
      plural: n.plural,
      singular: n.singular,
      namespaced,
      shortNames: n.shortNames,
      categories: n.categories,
      verbs: ALL_VERBS,
      subresources,
      strategy: strategyFor(crd, version, customResourceStrategy({ statusSubresource: statusOn })),
      builtin: false,
    };
    const schema = asRecord(asRecord(v['schema'])?.['openAPIV3Schema']);
    if (schema !== undefined) def.openAPIV3Schema = schema;
    if (v['deprecated'] === true) def.deprecationWarning = asString(v['deprecationWarning']) ?? `${n.group}/${version} ${n.kind} is deprecated`;
    if (conversion !== undefined) {
      const served = `${n.group}/${version}`;
      def.conversion = { ...conversion, fromStorage: (obj) => ({ ...obj, apiVersion: served }) };
    }
    defs.push(def);
  }
  return defs;
}

function condition(type: string, reason: string, message: string, now: number, previous: unknown[]): Record<string, unknown> {
  const old = previous.map((c) => asRecord(c)).find((c) => c?.['type'] === type && c['status'] === 'True');
  return { type, status: 'True', lastTransitionTime: asString(old?.['lastTransitionTime']) ?? formatTime(now), reason, message };
}

function falseCondition(type: string, reason: string, message: string, now: number, previous: unknown[]): Record<string, unknown> {
  const old = previous.map((c) => asRecord(c)).find((c) => c?.['type'] === type && c['status'] === 'False');
  return { type, status: 'False', lastTransitionTime: asString(old?.['lastTransitionTime']) ?? formatTime(now), reason, message };
}

export class CrdController {
  readonly #deps: CrdControllerDeps;
  /** group/plural → the versions currently registered for it. */
  #served = new Map<string, string[]>();
  #cleanupScheduled = new Set<string>();

  constructor(deps: CrdControllerDeps) {
    this.#deps = deps;
  }

  /** Store listener: call with every store event. */
  onEvent(e: StoreEvent): void {
    if (e.resource === CRD_RESOURCE) {
      if (e.type === 'DELETED') {
        this.#unserve(e.object);
        // Names it held are free again: CRDs of its group that wanted them get another chance.
        const group = names(e.object).group;
        for (const other of this.#deps.ops.store.list(CRD_RESOURCE)) {
          const accepted = (asArray(asRecord(other.status)?.['conditions']) ?? []).some((c) => asRecord(c)?.['type'] === 'NamesAccepted' && asRecord(c)?.['status'] === 'True');
          if (names(other).group === group && !accepted) this.#reconcile(other);
        }
      } else this.#reconcile(e.object);
      return;
    }
    if (e.type === 'DELETED') {
      for (const crd of this.#deps.ops.store.list(CRD_RESOURCE)) {
        if (crd.metadata?.deletionTimestamp !== undefined && `${names(crd).group}/${names(crd).plural}` === e.resource) this.#scheduleCleanup(crd);
      }
    }
  }

  #reconcile(crd: KubeObject): void {
    const n = names(crd);
    const key = `${n.group}/${n.plural}`;
    const deleting = crd.metadata?.deletionTimestamp !== undefined;
    const verdict = deleting ? undefined : acceptNames(crd, this.#deps.ops.store.list(CRD_RESOURCE));
    // A CRD whose names conflict with another one of its group is not served (crd-names.ts).
    const defs = verdict?.conflict !== undefined ? [] : customResourceDefs(crd, this.#deps.strategyFor());
    const before = this.#served.get(key) ?? [];
    for (const version of before) if (!defs.some((d) => d.version === version)) this.#deps.registry.unregister(n.group, version, n.plural);
    for (const def of defs) this.#deps.registry.register(def);
    this.#served.set(key, defs.map((d) => d.version));
    if (verdict === undefined) {
      this.#scheduleCleanup(crd);
      return;
    }
    this.#establish(crd, verdict);
  }

  /** Writes acceptedNames and the NamesAccepted / Established conditions when they are not there yet. */
  #establish(crd: KubeObject, verdict: NamesVerdict): void {
    const status = asRecord(crd.status) ?? {};
    const previous = asArray(status['conditions']) ?? [];
    const now = this.#deps.now();
    const conflict = verdict.conflict;
    const conditions = [
      conflict === undefined ? condition('NamesAccepted', 'NoConflicts', 'no conflicts found', now, previous) : falseCondition('NamesAccepted', conflict.reason, conflict.message, now, previous),
      conflict === undefined
        ? condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted', now, previous)
        : falseCondition('Established', 'NotAccepted', 'not all names are accepted', now, previous),
      ...previous.filter((c) => !['NamesAccepted', 'Established'].includes(asString(asRecord(c)?.['type']) ?? '')),
    ];
    const next = { ...status, acceptedNames: verdict.accepted, conditions };
    if (JSON.stringify(next) === JSON.stringify(status)) return;
    const rv = asString(crd.metadata?.resourceVersion) ?? '';
    this.#deps.ops.store.update(CRD_RESOURCE, { ...crd, metadata: { ...crd.metadata }, status: next }, rv);
  }

  #unserve(crd: KubeObject): void {
    const n = names(crd);
    const key = `${n.group}/${n.plural}`;
    for (const version of this.#served.get(key) ?? []) this.#deps.registry.unregister(n.group, version, n.plural);
    this.#served.delete(key);
  }

  #scheduleCleanup(crd: KubeObject): void {
    const name = asString(crd.metadata?.name) ?? '';
    if (this.#cleanupScheduled.has(name)) return;
    this.#cleanupScheduled.add(name);
    this.#deps.track(`crd cleanup ${name}`, async () => {
      this.#cleanupScheduled.delete(name);
      await this.#cleanup(name);
    });
  }

  /** Deletes the instances of a terminating CRD; when none is left, removes its cleanup finalizer. */
  async #cleanup(name: string): Promise<void> {
    const { ops, registry } = this.#deps;
    const crdDef = registry.get('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
    const crd = ops.store.get(CRD_RESOURCE, '', name);
    if (crdDef === undefined || crd === undefined || !finalizersOf(crd).includes(CRD_CLEANUP_FINALIZER)) return;
    const n = names(crd);
    const def = registry.versionsOf(n.group, n.plural)[0];
    if (def !== undefined) {
      for (const item of ops.store.list(storageKey(def))) {
        if (item.metadata?.deletionTimestamp !== undefined) continue;
        await deleteObject(ops, def, asString(item.metadata?.namespace) ?? '', asString(item.metadata?.name) ?? '', { propagationPolicy: 'Background' }, this.#deps.systemContext());
      }
      if (ops.store.count(storageKey(def)) > 0) return;
    }
    await ops.updateWith(crdDef, '', name, this.#deps.systemContext(), '', {}, async (current) => {
      const next = structuredClone(current ?? crd);
      const meta = next.metadata ?? {};
      meta.finalizers = finalizersOf(next).filter((f) => f !== CRD_CLEANUP_FINALIZER);
      if (meta.finalizers.length === 0) delete meta.finalizers;
      next.metadata = meta;
      return { ok: true, value: next };
    }, 'never');
  }
}
