/**
 * What the embedded API server knows about one resource: its names (for
 * routing and discovery), its subresources and its REST strategy (what create
 * and update do to an object, upstream's `rest.RESTCreateStrategy` & co.).
 *
 * These are the extension points other parts plug into:
 * - a `ResourceDef` is registered in the `ResourceRegistry` (resources.ts):
 *   built-in kinds at start, custom resources when a CRD is stored;
 * - a `ResourceStrategy` decides defaults, preparation, validation and
 *   generation; `ResourceStrategy` functions mutate the object they are given
 *   (always a private copy) and return field errors as data;
 * - a `SubresourceHandler` serves anything beyond `status` and `scale`
 *   (`pods/eviction`, `pods/binding`, ...).
 * Types only; the generic behaviour lives in operations.ts.
 */
import type { FieldError } from '../../k8s/field-errors.ts';
import type { NameRule } from '../../k8s/meta-validation.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { Result, Status } from './errors.ts';

import type { GroupVersionKind } from '../../k8s/wire.ts';
export type { GroupVersionKind };

/** The scale subresource of a kind (upstream: CRD `subresources.scale`; hard-wired for apps/v1 workloads). */
export interface ScaleSpec {
  /** JSON path such as `.spec.replicas`. */
  specReplicasPath: string;
  statusReplicasPath: string;
  /** Path of the selector: a string (custom resources) or a structured selector (built-ins). */
  labelSelectorPath?: string;
}

/** Who is asking. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** Per-request facts every operation receives. */
export interface RequestContext {
  user: UserInfo;
  dryRun: boolean;
  /** `?fieldManager=`: the manager managedFields record the write under. */
  fieldManager?: string;
  /** The request's User-Agent: without `fieldManager`, writes are recorded under its part before the first `/`. */
  userAgent?: string;
  /** Warnings to send back as `Warning: 299 - "..."` headers (admission, deprecations). */
  warnings: string[];
  /**
   * `?fieldValidation=`: what to do with fields the schema does not know
   * (Strict → 400, Warn → a warning each, Ignore). Absent for the server's
   * own writes, which are not checked.
   */
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
}

export interface StrategyContext {
  /** Epoch ms of the request, from the server's clock. */
  now: number;
  /** '' for the main resource, 'status' for the status subresource. */
  subresource: string;
}

export interface ResourceStrategy {
  /** The rule `metadata.name` must follow, when it is not a DNS subdomain (RBAC objects: any path segment). */
  nameRule?: NameRule;
  /** Scheme defaulting: runs on every decoded body (create, update, patch result) before admission. */
  applyDefaults?(obj: KubeObject): void;
  /** The typed-decode check ("cannot unmarshal string into ..."): a message when the JSON shape is wrong. */
  decodeError?(obj: KubeObject): string | undefined;
  /** Kind-specific part of PrepareForCreate (generic: generation, status reset). */
  prepareForCreate?(obj: KubeObject, ctx: StrategyContext): void;
  /** Kind-specific part of PrepareForUpdate for the main resource (generic: keep status, bump generation). */
  prepareForUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): void;
  /** Kind-specific part of the status strategy's PrepareForUpdate (generic: keep everything but metadata and status). */
  prepareForStatusUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): void;
  /** Validation on create, beyond the generic ObjectMeta checks. */
  validate?(obj: KubeObject, ctx: StrategyContext): FieldError[];
  /** Validation on update of the main resource, beyond the generic ObjectMeta update checks. */
  validateUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): FieldError[];
  /** Validation on update of the status subresource. */
  validateStatusUpdate?(obj: KubeObject, old: KubeObject, ctx: StrategyContext): FieldError[];
  /**
   * The part of the object whose change bumps `metadata.generation`; absent for
   * kinds without a generation (Pods, ConfigMaps...). Status writes never bump it.
   */
  generationSubject?(obj: KubeObject): unknown;
  /** Whether a create clears `.status` (true for most kinds with a status subresource; not for Nodes). */
  resetStatusOnCreate: boolean;
  /** PUT of a missing object creates it (Services, Leases, Events...). */
  allowCreateOnUpdate: boolean;
  /** PUT without `metadata.resourceVersion` is accepted (false for custom resources and CRDs). */
  allowUnconditionalUpdate: boolean;
  /**
   * Graceful deletion (`RESTGracefulDeleteStrategy.CheckGracefulDelete`): the
   * grace period in seconds for this delete, given the requested one; absent
   * for kinds that are deleted immediately.
   */
  gracePeriodSeconds?(obj: KubeObject, requested: number | undefined): number;
  /**
   * Kind-specific preparation of a delete, on a private copy, before the
   * generic finalizer logic (Namespaces turn Terminating, CRDs get their
   * cleanup finalizer).
   */
  prepareForDelete?(obj: KubeObject, ctx: StrategyContext): void;
  /** Something besides metadata.finalizers still holds the object (a Namespace's spec.finalizers). */
  deletionPending?(obj: KubeObject): boolean;
  /**
   * Read-time decoration of a stored object (custom resources get the schema
   * defaults added to their CRD after they were stored). Returns the object
   * itself when nothing changes, so cached serializations stay shared.
   */
  decorateStored?(obj: KubeObject): KubeObject;
  /** Fields a `fieldSelector` may use beyond `metadata.name` and `metadata.namespace`. */
  selectableFields?(obj: KubeObject): Record<string, string>;
  /** Delete answers with the object (Pods, ServiceAccounts) rather than a Success Status. */
  returnDeletedObject: boolean;
  /**
   * The garbage-collection policy of a delete that names none (upstream's
   * `DefaultGarbageCollectionPolicy`): `Orphan` for batch/v1 Jobs, which then
   * also warn. Absent means Background.
   */
  defaultDeletePropagation?: 'Orphan' | 'Background';
  /** A warning returned with every delete (e.g. the Job orphaning notice). */
  deleteWarning?: string;
}

/** One `kind: X` answer of a subresource handler: an object or a Status, with the HTTP code. */
export interface SubresourceResponse {
  code: number;
  body: KubeObject | Status;
}

export interface SubresourceRequest {
  verb: 'get' | 'create' | 'update' | 'patch' | 'delete';
  resource: ResourceDef;
  subresource: string;
  namespace: string;
  name: string;
  /** The decoded request body (JSON or YAML), when there is one. */
  body: unknown;
  /** PATCH content type. */
  patchType?: string;
  query: URLSearchParams;
  context: RequestContext;
}

export interface SubresourceHandler {
  /** Verbs listed in discovery (`get`, `create`, `update`, `patch`). */
  verbs: string[];
  /** The kind the subresource speaks, when it differs from the parent (Scale, Eviction, Binding). */
  kind?: GroupVersionKind;
  handle(request: SubresourceRequest): Promise<Result<SubresourceResponse>>;
}

export interface ResourceDef {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
  subresources: {
    status?: boolean;
    scale?: ScaleSpec;
    /** Any other subresource, by name (`eviction`, `binding`). */
    handlers?: Record<string, SubresourceHandler>;
  };
  strategy: ResourceStrategy;
  /**
   * A compiled-in kind: list items carry no apiVersion/kind (typed lists drop
   * them) and strategic merge patch uses `patchMetaForKind`. False for custom
   * resources (unstructured: items keep apiVersion/kind; no strategic merge).
   */
  builtin: boolean;
  /**
   * A resource stored as another one (events.k8s.io/v1 Events live as core/v1
   * Events): the storage it shares and the conversions to and from it.
   */
  conversion?: ResourceConversion;
  /** A warning every request to this resource gets (a CRD version marked `deprecated`). */
  deprecationWarning?: string;
  /** A custom resource version's `openAPIV3Schema`: list and map types for field ownership. */
  openAPIV3Schema?: Record<string, unknown>;
  /**
   * A create-only resource without storage (upstream's `rest.Creater` of the access reviews):
   * a POST is answered 201 with what this returns, and nothing is stored. `namespace`: the
   * request's ('' for cluster-scoped resources).
   */
  virtualCreate?(obj: KubeObject, ctx: RequestContext, namespace: string): Result<KubeObject>;
}

export interface ResourceConversion {
  storage: { group: string; plural: string };
  toStorage(obj: KubeObject): KubeObject;
  fromStorage(obj: KubeObject): KubeObject;
}

/** `apps/v1` or `v1`. */
export function apiVersionOf(def: { group: string; version: string }): string {
  return def.group === '' ? def.version : `${def.group}/${def.version}`;
}

/** Storage is per group and plural: versions of one resource share it; converted resources use their storage's. */
export function storageKey(def: { group: string; plural: string; conversion?: ResourceConversion }): string {
  const target = def.conversion?.storage ?? def;
  return `${target.group}/${target.plural}`;
}
