/**
 * The request pipeline of every write, in upstream's order
 * (k8s.io/apiserver/pkg/endpoints/handlers + registry/generic/registry/store.go):
 *
 * create: type checks → defaults → mutating admission → uid, creationTimestamp,
 *   generateName → PrepareForCreate + validation (422) → validating admission →
 *   store (409 AlreadyExists);
 * update/patch: read → new object (PUT body / patched current) → type checks →
 *   defaults → mutating admission → resourceVersion check (409 / 422) →
 *   PrepareForUpdate + validation → validating admission → no-op check (no
 *   write, no event) → store, retried from the top when a concurrent write won
 *   (so a patch re-applies to the fresh object, a stale PUT gets 409).
 * Updates that empty the finalizers of an object being deleted delete it.
 * `dryRun` runs everything and stores nothing.
 * Field ownership (`metadata.managedFields`, fields/managed-fields.ts) is
 * recorded on the decoded, defaulted object before mutating admission, as
 * upstream records it: what webhooks and strategies change is nobody's.
 *
 * Every method returns `Result`; nothing throws on bad input. Objects handed
 * out are the stored (immutable) instances: copy before editing.
 * Deletion lives in delete.ts, patch application in patch.ts, scale in scale.ts.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { Races } from '../../clock/races.ts';
import { formatTime } from '../../k8s/time.ts';
import { isPlainObject } from '../../k8s/json.ts';
import { asString } from '../../k8s/raw-json.ts';
import type { FieldError } from '../../k8s/field-errors.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { AdmissionChain, AdmissionOperation } from './admission.ts';
import { FieldManager, managerName } from './fields/managed-fields.ts';
import {
  alreadyExists,
  badRequest,
  conflict,
  fail,
  internalError,
  invalid,
  invalidWithMessage,
  notFound,
  ok,
  type GroupResource,
  type Result,
} from './errors.ts';
import { listObjects, type ListOptions, type ListResult } from './list.ts';
import {
  finalizersOf,
  isNoopWrite,
  metaDecodeError,
  metaOf,
  prepareCreate,
  prepareStatusUpdate,
  prepareUpdate,
  validateCreateMeta,
  validateUpdateMeta,
} from './object-meta.ts';
import { apiVersionOf, storageKey, type GroupVersionKind, type RequestContext, type ResourceDef, type StrategyContext } from './resource-def.ts';
import type { ResourceRegistry } from './resources.ts';
import type { ObjectStore } from './storage.ts';

export interface OperationsDeps {
  store: ObjectStore;
  registry: ResourceRegistry;
  admission: AdmissionChain;
  now(): number;
  /** Where generated names and uids come from (default: crypto randomness; race mode: the seed). */
  identities?: ObjectIdentities;
}

/** The generated parts of a new object's identity: the suffix of a generateName, the uid. */
export interface ObjectIdentities {
  nameSuffix(generateName: string): string;
  uid(): string;
}

export interface WriteOutcome {
  object: KubeObject;
  /** True when an update or apply created the object (HTTP 201). */
  created: boolean;
}

/** Options of an update beyond the new object. */
export interface CommitOptions {
  subresource: string;
  /** Admission attributes for the validating phase; defaults to the object itself. */
  admissionKind?: GroupVersionKind;
  admissionObject?: KubeObject;
  admissionOldObject?: KubeObject;
  options?: Record<string, unknown>;
  /** Replaces the strategy's PrepareForUpdate (subresources with their own strategy, e.g. namespaces/finalize). */
  prepare?: (next: KubeObject, current: KubeObject, ctx: StrategyContext) => void;
  /** Replaces the strategy's update validation (pods/binding may set spec.nodeName, which a pod update may not). */
  validate?: (next: KubeObject, current: KubeObject, ctx: StrategyContext) => FieldError[];
}

const MAX_UPDATE_ATTEMPTS = 16;
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The 5-character random suffix of generateName (apiserver's SimpleNameGenerator alphabet). */
export function randomNameSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return s;
}

const RANDOM_IDENTITIES: ObjectIdentities = { nameSuffix: () => randomNameSuffix(), uid: () => randomUUID() };

/**
 * Race mode: names and uids drawn from the race seed (a channel per
 * generateName, one for uids), so that a run under a seed creates the same
 * objects with the same names, and whatever orders objects by name or uid
 * (lists, tie-breaks) orders them the same way, run after run.
 */
export function seededIdentities(races: Races): ObjectIdentities {
  const hex = (digits: number): string => {
    let s = '';
    for (let i = 0; i < digits; i++) s += Math.floor(races.rank('uid') * 16).toString(16);
    return s;
  };
  return {
    nameSuffix: (generateName) => {
      let s = '';
      for (let i = 0; i < 5; i++) s += NAME_ALPHABET[Math.floor(races.rank(`name ${generateName}`) * NAME_ALPHABET.length)];
      return s;
    },
    // A version-4 layout, as crypto.randomUUID's.
    uid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[Math.floor(races.rank('uid') * 4)]}${hex(3)}-${hex(12)}`,
  };
}

export function groupResourceOf(def: ResourceDef): GroupResource {
  return { group: def.group, resource: def.plural };
}

export function kindOf(def: ResourceDef): GroupVersionKind {
  return { group: def.group, version: def.version, kind: def.kind };
}

/** The Go package upstream names in conversion errors (`core.Pod`, `apps.Deployment`). */
function internalPackage(group: string): string {
  return group === '' ? 'core' : (group.split('.')[0] ?? group);
}

export class ObjectOperations {
  readonly store: ObjectStore;
  readonly registry: ResourceRegistry;
  readonly admission: AdmissionChain;
  /** Records who owns which field on every write (managedFields) and runs server-side apply. */
  readonly fields = new FieldManager();
  readonly #now: () => number;
  readonly #identities: ObjectIdentities;
  /**
   * The fields of a decoded body its schema does not declare (`spec.foo`,
   * `spec.containers[0].bar`), for field validation; installed by the
   * schema layer (openapi/field-validation.ts). None when absent.
   */
  unknownFields: ((def: ResourceDef, obj: KubeObject, drop: boolean) => string[]) | undefined;

  constructor(deps: OperationsDeps) {
    this.store = deps.store;
    this.registry = deps.registry;
    this.admission = deps.admission;
    this.#now = deps.now;
    this.#identities = deps.identities ?? RANDOM_IDENTITIES;
    this.unknownFields = undefined;
  }

  now(): number {
    return this.#now();
  }

  /** The field manager a request writes as (`?fieldManager=`, else its User-Agent's product name). */
  managerOf(ctx: RequestContext): string {
    return managerName(ctx.fieldManager, ctx.userAgent);
  }

  /** A stored object as the resource serves it (conversion for events.k8s.io). */
  served(def: ResourceDef, stored: KubeObject): KubeObject {
    const obj = def.conversion === undefined ? stored : def.conversion.fromStorage(stored);
    return def.strategy.decorateStored === undefined ? obj : def.strategy.decorateStored(obj);
  }

  #toStorage(def: ResourceDef, obj: KubeObject): KubeObject {
    return def.conversion === undefined ? obj : def.conversion.toStorage(obj);
  }

  /** The current object, as served; undefined when absent. */
  current(def: ResourceDef, namespace: string, name: string): KubeObject | undefined {
    const stored = this.store.get(storageKey(def), def.namespaced ? namespace : '', name);
    return stored === undefined ? undefined : this.served(def, stored);
  }

  get(def: ResourceDef, namespace: string, name: string): Result<KubeObject> {
    const obj = this.current(def, namespace, name);
    return obj === undefined ? fail(notFound(groupResourceOf(def), name)) : ok(obj);
  }

  list(def: ResourceDef, namespace: string | undefined, options: ListOptions): Result<ListResult> {
    return listObjects(this.store, def, def.namespaced ? namespace : undefined, options, (o) => this.served(def, o));
  }

  // ---- decoding checks shared by create and update ----

  /**
   * The checks of decoding a body into the resource's kind: object shape,
   * apiVersion/kind (filled in when absent for built-ins), typed field shapes.
   */
  checkBody(def: ResourceDef, body: unknown): Result<KubeObject> {
    if (!isPlainObject(body)) {
      const shape = Array.isArray(body) ? 'array' : body === null ? 'null' : typeof body;
      return fail(badRequest(`the object provided is unrecognized (must be of type ${def.kind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${shape} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`));
    }
    const obj = structuredClone(body) as KubeObject;
    const apiVersion = asString(obj.apiVersion) ?? '';
    const kind = asString(obj.kind) ?? '';
    if (!def.builtin) {
      if (kind === '') return fail(badRequest(`Object 'Kind' is missing in '${JSON.stringify(body)}'`));
      if (apiVersion === '') return fail(badRequest(`Object 'apiVersion' is missing in '${JSON.stringify(body)}'`));
    }
    if (obj.apiVersion !== undefined && typeof obj.apiVersion !== 'string') return fail(badRequest(`json: cannot unmarshal ${typeof obj.apiVersion} into Go struct field .apiVersion of type string`));
    if (obj.kind !== undefined && typeof obj.kind !== 'string') return fail(badRequest(`json: cannot unmarshal ${typeof obj.kind} into Go struct field .kind of type string`));
    const expected = apiVersionOf(def);
    const effectiveKind = kind === '' ? def.kind : kind;
    const effectiveVersion = apiVersion === '' ? expected : apiVersion;
    if (effectiveVersion !== expected) {
      const slash = effectiveVersion.lastIndexOf('/');
      const group = slash >= 0 ? effectiveVersion.slice(0, slash) : '';
      const version = slash >= 0 ? effectiveVersion.slice(slash + 1) : effectiveVersion;
      if (group === def.group) {
        return fail(badRequest(`${effectiveKind} in version ${JSON.stringify(version)} cannot be handled as a ${def.kind}: no kind ${JSON.stringify(effectiveKind)} is registered for version ${JSON.stringify(effectiveVersion)} in scheme "pkg/api/legacyscheme/scheme.go:30"`));
      }
      return fail(badRequest(`the API version in the data (${effectiveVersion}) does not match the expected API version (${expected})`));
    }
    if (effectiveKind !== def.kind) {
      return fail(badRequest(`${effectiveKind} in version ${JSON.stringify(def.version)} cannot be handled as a ${def.kind}: converting (${def.version}.${effectiveKind}) to (${internalPackage(def.group)}.${def.kind}): unknown conversion`));
    }
    obj.apiVersion = expected;
    obj.kind = def.kind;
    const decodeError = metaDecodeError(obj) ?? def.strategy.decodeError?.(obj);
    if (decodeError !== undefined) return fail(badRequest(`${def.kind} in version ${JSON.stringify(def.version)} cannot be handled as a ${def.kind}: ${decodeError}`));
    return ok(obj);
  }

  /**
   * Server-side field validation of a decoded body (`?fieldValidation=`):
   * Strict answers 400 with the strict-decoding text, Warn adds one warning
   * per unknown field, Ignore says nothing; in every case the unknown fields
   * are dropped from `obj` (decoding into the typed object drops them). The
   * server's own writes (no directive) are not checked.
   */
  checkFields(def: ResourceDef, obj: KubeObject, ctx: RequestContext, describe: (unknown: string[]) => string = (u) => strictDecodingMessage(def, u)): Result<void> {
    if (ctx.fieldValidation === undefined || this.unknownFields === undefined) return ok(undefined);
    const unknown = this.unknownFields(def, obj, true);
    if (unknown.length === 0 || ctx.fieldValidation === 'Ignore') return ok(undefined);
    if (ctx.fieldValidation === 'Strict') return fail(badRequest(describe(unknown)));
    for (const field of unknown) {
      const warning = `unknown field ${JSON.stringify(field)}`;
      if (!ctx.warnings.includes(warning)) ctx.warnings.push(warning);
    }
    return ok(undefined);
  }

  // ---- create ----

  /**
   * POST: creates an object in `namespace` ('' for cluster-scoped resources).
   * `fieldsRecorded`: the body's managedFields are already final (an apply that creates).
   */
  async create(def: ResourceDef, namespace: string, body: unknown, ctx: RequestContext, options: Record<string, unknown> = {}, fieldsRecorded = false): Promise<Result<KubeObject>> {
    const checked = this.checkBody(def, body);
    if (!checked.ok) return checked;
    const fields = this.checkFields(def, checked.value, ctx);
    if (!fields.ok) return fields;
    let obj = checked.value;
    const ns = def.namespaced ? namespace : '';
    const meta = metaOf(obj);
    const bodyNs = asString(meta.namespace) ?? '';
    if (def.namespaced && bodyNs !== '' && bodyNs !== ns) return fail(badRequest('the namespace of the provided object does not match the namespace sent on the request'));
    if (def.namespaced) meta.namespace = ns;
    else delete meta.namespace;
    def.strategy.applyDefaults?.(obj);
    if (!fieldsRecorded) this.fields.update(def, undefined, obj, this.managerOf(ctx), '', this.#now());

    const mutated = await this.admission.mutate(this.#attributes('CREATE', def, '', ns, asString(obj.metadata?.name) ?? '', obj, undefined, ctx, options), ctx);
    if (!mutated.ok) return mutated;
    obj = mutated.value ?? obj;
    return this.#finishCreate(def, ns, obj, ctx, options);
  }

  /** Create after mutating admission: system fields, strategy, validation, validating admission, store. */
  async #finishCreate(def: ResourceDef, ns: string, obj: KubeObject, ctx: RequestContext, options: Record<string, unknown>): Promise<Result<KubeObject>> {
    const now = this.#now();
    const meta = metaOf(obj);
    meta.uid = this.#identities.uid();
    meta.creationTimestamp = formatTime(now);
    const resource = storageKey(def);
    const generateName = asString(meta.generateName) ?? '';
    if ((asString(meta.name) ?? '') === '' && generateName !== '') {
      let name = `${generateName}${this.#identities.nameSuffix(generateName)}`;
      for (let i = 0; i < 64 && this.store.get(resource, ns, name) !== undefined; i++) name = `${generateName}${this.#identities.nameSuffix(generateName)}`;
      meta.name = name;
    }
    if ((asString(meta.resourceVersion) ?? '') !== '') return fail(internalError('resourceVersion should not be set on objects to be created'));
    delete meta.resourceVersion;
    const sctx: StrategyContext = { now, subresource: '' };
    prepareCreate(def, obj, sctx);
    const name = asString(meta.name) ?? '';
    const errors = [...validateCreateMeta(def, obj), ...(def.strategy.validate?.(obj, sctx) ?? [])];
    if (errors.length > 0) return fail(invalid(def.kind, def.group, name, errors));
    const validated = await this.admission.validate(this.#attributes('CREATE', def, '', ns, name, obj, undefined, ctx, options), ctx);
    if (!validated.ok) return validated;
    if (ctx.dryRun) return ok(obj);
    const stored = this.store.create(resource, this.#toStorage(def, obj));
    if (!stored.ok) return fail(alreadyExists(groupResourceOf(def), name));
    return ok(this.served(def, stored.object));
  }

  // ---- update ----

  /** PUT of the main resource or of `/status`. */
  async update(def: ResourceDef, namespace: string, name: string, body: unknown, ctx: RequestContext, subresource = '', options: Record<string, unknown> = {}): Promise<Result<WriteOutcome>> {
    const checked = this.checkBody(def, body);
    if (!checked.ok) return checked;
    const fields = this.checkFields(def, checked.value, ctx);
    if (!fields.ok) return fields;
    const input = checked.value;
    const bodyName = asString(input.metadata?.name) ?? '';
    if (bodyName !== '' && bodyName !== name) return fail(badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`));
    return this.updateWith(def, namespace, name, ctx, subresource, options, async (current) => {
      const next = structuredClone(input);
      const meta = metaOf(next);
      if ((asString(meta.name) ?? '') === '') meta.name = name;
      if (current === undefined) delete meta.resourceVersion;
      return ok(next);
    });
  }

  /**
   * The update loop: `build` makes the new object from the current one (or
   * from nothing, for create-on-update and apply). Retries when another write
   * won the race between reading and storing. Unless `fieldsRecorded` (apply
   * records its own), the write's field ownership is recorded as an update.
   */
  async updateWith(
    def: ResourceDef,
    namespace: string,
    name: string,
    ctx: RequestContext,
    subresource: string,
    options: Record<string, unknown>,
    build: (current: KubeObject | undefined) => Promise<Result<KubeObject>>,
    createIfMissing: 'strategy' | 'always' | 'never' = 'strategy',
    fieldsRecorded = false,
  ): Promise<Result<WriteOutcome>> {
    const ns = def.namespaced ? namespace : '';
    for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
      const current = this.current(def, ns, name);
      if (current === undefined) {
        const mayCreate = subresource === '' && (createIfMissing === 'always' || (createIfMissing === 'strategy' && def.strategy.allowCreateOnUpdate));
        if (!mayCreate) return fail(notFound(groupResourceOf(def), name));
        const built = await build(undefined);
        if (!built.ok) return built;
        const created = await this.create(def, ns, built.value, ctx, options, fieldsRecorded);
        if (!created.ok) return created;
        return ok({ object: created.value, created: true });
      }
      const built = await build(current);
      if (!built.ok) return built;
      let next = built.value;
      const meta = metaOf(next);
      const bodyNs = asString(meta.namespace) ?? '';
      if (def.namespaced && bodyNs !== '' && bodyNs !== ns) return fail(badRequest('the namespace of the provided object does not match the namespace sent on the request'));
      if (def.namespaced) meta.namespace = ns;
      else delete meta.namespace;
      def.strategy.applyDefaults?.(next);
      if (!fieldsRecorded) this.fields.update(def, current, next, this.managerOf(ctx), subresource, this.#now());
      const mutated = await this.admission.mutate(this.#attributes('UPDATE', def, subresource, ns, name, next, current, ctx, options), ctx);
      if (!mutated.ok) return mutated;
      next = mutated.value ?? next;
      const result = await this.commitUpdate(def, current, next, ctx, { subresource, options });
      if (result === 'conflict') continue;
      if (!result.ok) return result;
      return ok({ object: result.value, created: false });
    }
    return fail(conflict(groupResourceOf(def), name));
  }

  /**
   * Everything after mutating admission: resourceVersion check, strategy,
   * validation, validating admission, no-op detection, store. `'conflict'`
   * means a concurrent write won: the caller re-reads and tries again.
   */
  async commitUpdate(def: ResourceDef, current: KubeObject, next: KubeObject, ctx: RequestContext, opts: CommitOptions): Promise<Result<KubeObject> | 'conflict'> {
    const name = asString(current.metadata?.name) ?? '';
    const ns = asString(current.metadata?.namespace) ?? '';
    const currentRv = asString(current.metadata?.resourceVersion) ?? '';
    const meta = metaOf(next);
    const requestedRv = asString(meta.resourceVersion) ?? '';
    if (requestedRv === '') {
      if (!def.strategy.allowUnconditionalUpdate) {
        return fail(invalidWithMessage(def.kind, def.group, name, 'metadata.resourceVersion', 'FieldValueInvalid', 'Invalid value: 0x0: must be specified for an update'));
      }
      meta.resourceVersion = currentRv;
    } else if (requestedRv !== currentRv) {
      return fail(conflict(groupResourceOf(def), name));
    }
    const sctx: StrategyContext = { now: this.#now(), subresource: opts.subresource };
    if (opts.prepare !== undefined) opts.prepare(next, current, sctx);
    else if (opts.subresource === 'status') prepareStatusUpdate(def, next, current, sctx);
    else prepareUpdate(def, next, current, sctx);
    const errors = validateUpdateMeta(next, current);
    if (opts.validate !== undefined) errors.push(...opts.validate(next, current, sctx));
    else if (opts.subresource === 'status') errors.push(...(def.strategy.validateStatusUpdate?.(next, current, sctx) ?? []));
    else errors.push(...(def.strategy.validateUpdate?.(next, current, sctx) ?? []));
    if (errors.length > 0) return fail(invalid(def.kind, def.group, name, errors));
    const attrs = this.#attributes('UPDATE', def, opts.subresource, ns, name, opts.admissionObject ?? next, opts.admissionOldObject ?? current, ctx, opts.options ?? {});
    if (opts.admissionKind !== undefined) attrs.kind = opts.admissionKind;
    const validated = await this.admission.validate(attrs, ctx);
    if (!validated.ok) return validated;
    if (isNoopWrite(next, current)) return ok(current);
    const resource = storageKey(def);
    if (this.#shouldDeleteDuringUpdate(def, next, current)) {
      // Upstream deletes straight from the stored state (one DELETED event, whose object still lists the finalizers).
      if (ctx.dryRun) return ok(current);
      const deleted = this.store.delete(resource, ns, name, currentRv);
      if (!deleted.ok) return deleted.reason === 'conflict' ? 'conflict' : fail(notFound(groupResourceOf(def), name));
      return ok(this.served(def, deleted.object));
    }
    if (ctx.dryRun) return ok(next);
    const stored = this.store.update(resource, this.#toStorage(def, next), currentRv);
    if (!stored.ok) return stored.reason === 'conflict' ? 'conflict' : fail(notFound(groupResourceOf(def), name));
    return ok(this.served(def, stored.object));
  }

  /** Store.shouldDeleteDuringUpdate: deleting, no finalizers left, and no grace period pending. */
  #shouldDeleteDuringUpdate(def: ResourceDef, next: KubeObject, current: KubeObject): boolean {
    if (next.metadata?.deletionTimestamp === undefined) return false;
    if (finalizersOf(next).length > 0 || def.strategy.deletionPending?.(next) === true) return false;
    return current.metadata?.deletionGracePeriodSeconds === 0;
  }

  // ---- admission attributes ----

  attributes(
    operation: AdmissionOperation,
    def: ResourceDef,
    subresource: string,
    namespace: string,
    name: string,
    object: KubeObject | undefined,
    oldObject: KubeObject | undefined,
    ctx: RequestContext,
    options: Record<string, unknown>,
  ) {
    return this.#attributes(operation, def, subresource, namespace, name, object, oldObject, ctx, options);
  }

  #attributes(
    operation: AdmissionOperation,
    def: ResourceDef,
    subresource: string,
    namespace: string,
    name: string,
    object: KubeObject | undefined,
    oldObject: KubeObject | undefined,
    ctx: RequestContext,
    options: Record<string, unknown>,
  ) {
    return { operation, resource: def, subresource, kind: kindOf(def), namespace, name, object, oldObject, options, dryRun: ctx.dryRun, user: ctx.user };
  }
}

/** The text of a strict decoding failure, as upstream's decoder reports it. */
export function strictDecodingMessage(def: ResourceDef, unknown: readonly string[]): string {
  return `${def.kind} in version ${JSON.stringify(def.version)} cannot be handled as a ${def.kind}: strict decoding error: ${unknown.map((u) => `unknown field ${JSON.stringify(u)}`).join(', ')}`;
}
