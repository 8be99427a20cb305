/**
 * The admission chain: plug-ins that see every write after defaulting, in two
 * phases as in kube-apiserver: all mutating plug-ins (in `order`), then, after
 * the REST strategy prepared and validated the object, all validating ones.
 *
 * This is the hook the admission webhooks, Priority, ServiceAccount and the
 * other built-in plug-ins attach to (`ApiServerCore.admission.register`).
 * A mutating plug-in edits `attributes.object` in place or returns a
 * replacement; either phase rejects by returning `{ allowed: false, status }`.
 * A plug-in that throws fails the request with a 500, never the server.
 *
 * Attributes follow admission.Attributes: on CREATE the object has no uid
 * (and, with generateName, no name) yet; on DELETE `object` is undefined and
 * `oldObject` is the stored object; subresource writes carry the
 * subresource's own kind (Scale, Eviction, Binding).
 *
 * Reinvocation (k8s.io/apiserver/pkg/admission/reinvocation.go): when a
 * plug-in asks for it during the mutating phase (a webhook changed the
 * object), the whole mutating chain runs a second time, so built-in plug-ins
 * such as Priority see what webhooks did; plug-ins keep their own state for
 * that second pass in `attributes.reinvocation.values`.
 */
import type { KubeObject } from '../../k8s/types.ts';
import { internalError, ok, fail, type Result, type Status } from './errors.ts';
import type { GroupVersionKind, RequestContext, ResourceDef, UserInfo } from './resource-def.ts';

import type { AdmissionOperation } from '../../k8s/wire.ts';
export type { AdmissionOperation };

export interface AdmissionAttributes {
  operation: AdmissionOperation;
  /** The resource of the request (for a subresource: its parent). */
  resource: ResourceDef;
  subresource: string;
  /** The kind of `object` / `oldObject`. */
  kind: GroupVersionKind;
  namespace: string;
  name: string;
  /** The incoming object (mutable during the mutating phase); undefined on DELETE. */
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
  /** CreateOptions / UpdateOptions / DeleteOptions as the client sent them. */
  options: Record<string, unknown>;
  dryRun: boolean;
  user: UserInfo;
  /** Set by the chain during the mutating phase. */
  reinvocation?: ReinvocationContext;
}

/** State shared by the two passes of a reinvoked mutating chain. */
export interface ReinvocationContext {
  /** True during the second pass. */
  isReinvoke: boolean;
  /** A plug-in sets this to have the chain run once more. */
  shouldReinvoke: boolean;
  /** Per-plug-in state across passes, by plug-in name. */
  values: Map<string, unknown>;
}

export type AdmissionDecision =
  | { allowed: true; object?: KubeObject; warnings?: string[] }
  | { allowed: false; status: Status; warnings?: string[] };

export type AdmissionHook = (attributes: AdmissionAttributes) => AdmissionDecision | void | Promise<AdmissionDecision | void>;

export interface AdmissionPlugin {
  name: string;
  /** Lower runs first. NamespaceLifecycle is 0; built-ins 100-199; webhooks 500. */
  order?: number;
  mutate?: AdmissionHook;
  validate?: AdmissionHook;
}

export class AdmissionChain {
  #plugins: AdmissionPlugin[] = [];

  /** Adds a plug-in; returns a function that removes it. */
  register(plugin: AdmissionPlugin): () => void {
    this.#plugins.push(plugin);
    this.#plugins.sort((a, b) => (a.order ?? 100) - (b.order ?? 100));
    return () => {
      this.#plugins = this.#plugins.filter((p) => p !== plugin);
    };
  }

  plugins(): readonly AdmissionPlugin[] {
    return this.#plugins;
  }

  /** Runs every mutating hook in order, twice when a plug-in asks for reinvocation; answers the (possibly replaced) object. */
  async mutate(attributes: AdmissionAttributes, context: RequestContext): Promise<Result<KubeObject | undefined>> {
    const reinvocation = (attributes.reinvocation ??= { isReinvoke: false, shouldReinvoke: false, values: new Map() });
    const first = await this.#mutatePass(attributes, context);
    if (!first.ok || !reinvocation.shouldReinvoke || reinvocation.isReinvoke) return first;
    reinvocation.isReinvoke = true;
    return this.#mutatePass(attributes, context);
  }

  async #mutatePass(attributes: AdmissionAttributes, context: RequestContext): Promise<Result<KubeObject | undefined>> {
    for (const plugin of [...this.#plugins]) {
      if (plugin.mutate === undefined) continue;
      const decision = await runHook(plugin, plugin.mutate, attributes);
      if (!decision.ok) return decision;
      const d = decision.value;
      if (d === undefined) continue;
      if (d.warnings !== undefined) context.warnings.push(...d.warnings);
      if (!d.allowed) return fail(d.status);
      if (d.object !== undefined) attributes.object = d.object;
    }
    return ok(attributes.object);
  }

  /** Runs every validating hook in order; the first rejection wins. */
  async validate(attributes: AdmissionAttributes, context: RequestContext): Promise<Result<void>> {
    for (const plugin of [...this.#plugins]) {
      if (plugin.validate === undefined) continue;
      const decision = await runHook(plugin, plugin.validate, attributes);
      if (!decision.ok) return decision;
      const d = decision.value;
      if (d === undefined) continue;
      if (d.warnings !== undefined) context.warnings.push(...d.warnings);
      if (!d.allowed) return fail(d.status);
    }
    return ok(undefined);
  }
}

async function runHook(plugin: AdmissionPlugin, hook: AdmissionHook, attributes: AdmissionAttributes): Promise<Result<AdmissionDecision | undefined>> {
  try {
    const decision = await hook(attributes);
    return ok(decision ?? undefined);
  } catch (err) {
    return fail(internalError(`admission plugin ${JSON.stringify(plugin.name)} failed: ${err instanceof Error ? err.message : String(err)}`));
  }
}
