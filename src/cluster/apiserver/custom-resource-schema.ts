/**
 * Schema enforcement for custom resources, plugged into the server core through its extension points:
 *
 * - `core.customResourceStrategy` wraps the strategy of every served CRD
 *   version: pruning and defaulting on every decoded body (before
 *   admission) and again after mutating admission (what webhooks add is
 *   pruned and defaulted too), defaulting of objects read back, and schema
 *   validation (k8s/crd-schema/validator.ts, prepared once per schema), list-type uniqueness and
 *   embedded-resource checks on create, update and status update (the
 *   CustomResourceDefinition resource itself is validated by
 *   crd-validation.ts, through its strategy).
 * Start at `installCustomResourceSchemas`.
 */
import type { FieldError } from '../../k8s/field-errors.ts';
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { ApiServerHost } from './extension-host.ts';
import type { ResourceStrategy, StrategyContext } from './resource-def.ts';
import { defaultResource, hasDefaults, needsDefaults } from '../../k8s/crd-schema/defaults.ts';
import { validateEmbeddedResources } from '../../k8s/crd-schema/embedded.ts';
import { validateListTypes } from '../../k8s/crd-schema/list-type.ts';
import { pruneResource } from '../../k8s/crd-schema/prune.ts';
import { asSchema, type Schema } from '../../k8s/crd-schema/structural.ts';
import { compileSchema, type SchemaValidator } from '../../k8s/crd-schema/validator.ts';

/** The `openAPIV3Schema` of one version of a CRD. */
export function versionSchema(crd: KubeObject, version: string): Schema | undefined {
  for (const v of asArray(asRecord(crd['spec'])?.['versions']) ?? []) {
    const rec = asRecord(v);
    if (asString(rec?.['name']) === version) return asSchema(asRecord(rec?.['schema'])?.['openAPIV3Schema']);
  }
  return undefined;
}

/** Compiled validators by schema text: a CRD is re-read on every change of its status; its schema rarely changes. */
export class ValidatorCache {
  readonly #byText = new Map<string, SchemaValidator>();
  readonly #limit: number;

  constructor(limit = 256) {
    this.#limit = limit;
  }

  get(schema: Schema | undefined): SchemaValidator {
    if (schema === undefined) return compileSchema(undefined);
    const key = JSON.stringify(schema);
    let v = this.#byText.get(key);
    if (v === undefined) {
      v = compileSchema(schema);
      if (this.#byText.size >= this.#limit) {
        const oldest = this.#byText.keys().next().value;
        if (oldest !== undefined) this.#byText.delete(oldest);
      }
      this.#byText.set(key, v);
    }
    return v;
  }
}

/** Prunes and defaults a decoded custom resource in place. */
export function normalizeCustomResource(obj: KubeObject, schema: Schema | undefined): string[] {
  const removed = pruneResource(obj, schema);
  defaultResource(obj, schema);
  return removed;
}

/** Wraps a custom resource version's strategy with its schema. */
export function schemaStrategy(schema: Schema | undefined, validator: SchemaValidator, base: ResourceStrategy): ResourceStrategy {
  if (schema === undefined) return base;
  const check = (obj: KubeObject): FieldError[] => [...validator.validate(obj), ...validateListTypes(obj, schema), ...validateEmbeddedResources(obj, schema)];
  const strategy: ResourceStrategy = {
    ...base,
    applyDefaults: (obj) => {
      base.applyDefaults?.(obj);
      normalizeCustomResource(obj, schema);
    },
    prepareForCreate: (obj, ctx) => {
      base.prepareForCreate?.(obj, ctx);
      normalizeCustomResource(obj, schema);
    },
    prepareForUpdate: (obj, old, ctx) => {
      base.prepareForUpdate?.(obj, old, ctx);
      normalizeCustomResource(obj, schema);
    },
    prepareForStatusUpdate: (obj, old, ctx) => {
      base.prepareForStatusUpdate?.(obj, old, ctx);
      normalizeCustomResource(obj, schema);
    },
    validate: (obj: KubeObject, ctx: StrategyContext) => [...(base.validate?.(obj, ctx) ?? []), ...check(obj)],
    validateUpdate: (obj, old, ctx) => [...(base.validateUpdate?.(obj, old, ctx) ?? []), ...check(obj)],
    validateStatusUpdate: (obj, old, ctx) => [...(base.validateStatusUpdate?.(obj, old, ctx) ?? []), ...check(obj)],
  };
  if (hasDefaults(schema)) {
    // Reads clone only the objects a default is missing from (lists of thousands stay cheap).
    strategy.decorateStored = (stored) => {
      if (!needsDefaults(stored, schema)) return stored;
      const copy = structuredClone(stored);
      defaultResource(copy, schema);
      return copy;
    };
  }
  return strategy;
}

/** Installs schema enforcement and CRD validation on a server core. */
export function installCustomResourceSchemas(core: ApiServerHost): void {
  const cache = new ValidatorCache();
  const previous = core.customResourceStrategy;
  core.customResourceStrategy = (crd, version, base) => {
    const schema = versionSchema(crd, version);
    return schemaStrategy(schema, cache.get(schema), previous(crd, version, base));
  };
}
