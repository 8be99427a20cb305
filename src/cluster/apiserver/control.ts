/**
 * The programmatic control of an embedded API server, for tests, the
 * simulator and the simulated control plane:
 *
 * - `cutWatches()` ends every open watch stream (clients see EOF and resume);
 * - `compact()` drops the watch history (resuming from older versions → 410);
 * - `injectFault({...})` answers matching requests with an error and/or after
 *   a delay on the server's clock; `clearFaults()`;
 * - `requestCount({...})` / `requestCounts()` / `resetCounters()` count
 *   resource requests by group, resource, subresource, verb and user agent
 *   (the sum, or the whole breakdown); `webhookCallCounts()` counts the
 *   admission webhook calls the server sent, by webhook, URL path,
 *   operation and resource, and `onWebhookCall(...)` shows each call with its
 *   objects (say, to split them by the pod's labels); `resetCounters()`
 *   zeroes both;
 * - `get` / `list` / `create` / `update` / `patch` / `delete`: in-process
 *   writes through the same pipeline as HTTP (strategies, admission, watch
 *   events), as the system user; errors are returned as data;
 * - `extensions()` lists what is plugged in (admission plug-ins,
 *   subresource handlers, routes, formatters);
 * - `forbiddenRequests({...})` lists the requests answered 403 (who, with
 *   which user agent, what they asked and the message), oldest first, until
 *   `resetCounters()` — a test asserting none went to a component finds the
 *   RBAC rule it lacks;
 * - `registerServiceEndpoint(...)` tells where a webhook's service reference
 *   leads (there is no service network); `addUser(...)` adds a bearer token
 *   that authenticates as another user (as seen in AdmissionReview userInfo;
 *   RBAC decides what it may do unless it is in `system:masters`);
 * - `setWebhookClientCredentials(...)`: the client certificate presented to
 *   webhooks, by kubeconfig user name (`*`, `host:port`, `*.ns.svc`), as in
 *   kube-apiserver's admission kubeconfig.
 */
import type { KubeObject } from '../../k8s/types.ts';
import { asString } from '../../k8s/raw-json.ts';
import type { AuthorizationAttributes } from './authorization-attributes.ts';
import type { ApiServerCore } from './core.ts';
import { deleteObject, type DeleteOptions, type DeleteOutcome } from './delete.ts';
import {
  conflict,
  expired,
  fail,
  genericServerResponse,
  internalError,
  notFound,
  resourceNotFound,
  statusError,
  tooManyRequests,
  type Result,
  type Status,
} from './errors.ts';
import type { ListOptions, ListResult } from './list.ts';
import type { WriteOutcome } from './operations.ts';
import { patchObject } from './patch.ts';
import type { ResourceVerb } from './request-info.ts';
import { randomBytes } from 'node:crypto';
import type { RequestContext, ResourceDef, UserInfo } from './resource-def.ts';
import { updateScale } from './scale.ts';
import type { WebhookCall, WebhookCallObserver } from './admission-webhooks.ts';
import type { ClientCredentials } from './webhook-client-auth.ts';

export interface FaultSpec {
  /** Resource plural (`pods`), or `*` for any. */
  resource: string;
  /** API verb (`create`, `list`, `watch`, `patch`...), or `*`. */
  verb: ResourceVerb | '*';
  group?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** HTTP code to answer with (409, 429, 500, ...); omit for latency only. */
  status?: number;
  message?: string;
  /** How many matching requests are affected (default: all until cleared). */
  times?: number;
  /** Delay before the request is served (or failed), on the server's clock. */
  delayMs?: number;
  /** For 429: the Retry-After the answer carries. */
  retryAfterSeconds?: number;
}

export interface FaultHandle {
  readonly spec: FaultSpec;
  /** Matching requests served by this fault so far. */
  readonly hits: number;
  clear(): void;
}

export interface RequestKey {
  group: string;
  resource: string;
  verb: string;
  subresource: string;
  namespace: string;
  name: string;
  /** The User-Agent header ('' when absent). */
  userAgent: string;
}

/** One line of `requestCounts()`: resource requests with the same group, resource, subresource, verb and user agent. */
export interface RequestCount {
  group: string;
  resource: string;
  /** '' for the resource itself. */
  subresource: string;
  /** The API verb (`create`, `update`, `patch`, `delete`, `get`, `list`, `watch`, ...). */
  verb: string;
  userAgent: string;
  count: number;
}

/** One line of `webhookCallCounts()`. */
export type WebhookCallCount = Pick<WebhookCall, 'webhook' | 'mutating' | 'path' | 'operation' | 'group' | 'resource' | 'subresource'> & { count: number };

/** One request answered 403 Forbidden. */
export interface ForbiddenRequest {
  username: string;
  groups: string[];
  userAgent: string;
  verb: string;
  /** Resource requests: API group, resource, subresource, namespace and name ('' when none). */
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** Non-resource requests: the path ('' for resource requests). */
  path: string;
  /** The Status message the client got. */
  message: string;
}

/** At most this many forbidden requests are kept (the oldest go first). */
const MAX_FORBIDDEN_KEPT = 1000;

export interface RequestFilter {
  resource?: string;
  verb?: string;
  subresource?: string;
  group?: string;
  userAgent?: string;
}

interface FaultState {
  spec: FaultSpec;
  remaining: number;
  hits: number;
}

export class ApiServerControl {
  readonly #core: ApiServerCore;
  readonly #cutWatches: () => number;
  readonly #users: Map<string, UserInfo>;
  #faults: FaultState[] = [];
  #counts = new Map<string, RequestCount>();
  #webhookCalls = new Map<string, WebhookCallCount>();
  #forbidden: ForbiddenRequest[] = [];

  constructor(core: ApiServerCore, cutWatches: () => number, users: Map<string, UserInfo> = new Map()) {
    this.#core = core;
    this.#cutWatches = cutWatches;
    this.#users = users;
    core.webhooks.observeCalls((call) => {
      const k = [call.webhook, call.mutating, call.path, call.operation, call.group, call.resource, call.subresource].join('\u0000');
      const line = this.#webhookCalls.get(k);
      if (line !== undefined) line.count++;
      else {
        const { webhook, mutating, path, operation, group, resource, subresource } = call;
        this.#webhookCalls.set(k, { webhook, mutating, path, operation, group, resource, subresource, count: 1 });
      }
    });
  }

  /**
   * Where the webhooks whose `clientConfig.service` names this service are
   * called (e.g. `https://127.0.0.1:8443`); without `port`, any port of it.
   * Returns a function that removes the registration.
   */
  registerServiceEndpoint(service: { namespace: string; name: string; port?: number }, url: string): () => void {
    return this.#core.webhooks.registerServiceEndpoint(service, url);
  }

  /**
   * The client certificate the API server presents to the webhooks whose
   * `host:port` the kubeconfig user `name` matches (`*` for every webhook);
   * undefined removes it.
   */
  setWebhookClientCredentials(name: string, credentials: ClientCredentials | undefined): void {
    this.#core.webhooks.clientCredentials.set(name, credentials);
  }

  /** A bearer token (given or random) that authenticates as `user`; returns the token. */
  addUser(user: UserInfo, token: string = randomBytes(24).toString('hex')): string {
    this.#users.set(token, user);
    return token;
  }

  /** Ends every open watch stream; returns how many were open. */
  cutWatches(): number {
    return this.#cutWatches();
  }

  /** Drops the event history: watches and continue tokens from older versions answer 410. */
  compact(): void {
    this.#core.store.compact();
  }

  /** The current global resourceVersion. */
  get resourceVersion(): string {
    return String(this.#core.store.resourceVersion);
  }

  injectFault(spec: FaultSpec): FaultHandle {
    const state: FaultState = { spec, remaining: spec.times ?? Number.POSITIVE_INFINITY, hits: 0 };
    this.#faults.push(state);
    return {
      spec,
      get hits() {
        return state.hits;
      },
      clear: () => {
        this.#faults = this.#faults.filter((f) => f !== state);
      },
    };
  }

  clearFaults(): void {
    this.#faults = [];
  }

  /** Counts resource requests; all filters are optional. */
  requestCount(filter: RequestFilter = {}): number {
    return this.requestCounts(filter).reduce((sum, line) => sum + line.count, 0);
  }

  /** Resource requests since the last reset, one line per group, resource, subresource, verb and user agent (most first). */
  requestCounts(filter: RequestFilter = {}): RequestCount[] {
    const out: RequestCount[] = [];
    for (const line of this.#counts.values()) {
      if (filter.resource !== undefined && filter.resource !== line.resource) continue;
      if (filter.verb !== undefined && filter.verb !== line.verb) continue;
      if (filter.subresource !== undefined && filter.subresource !== line.subresource) continue;
      if (filter.group !== undefined && filter.group !== line.group) continue;
      if (filter.userAgent !== undefined && filter.userAgent !== line.userAgent) continue;
      out.push({ ...line });
    }
    return out.sort((x, y) => y.count - x.count);
  }

  /** Admission webhook calls sent since the last reset (failed ones included), one line per webhook, path, operation and resource (most first). */
  webhookCallCounts(): WebhookCallCount[] {
    return [...this.#webhookCalls.values()].map((line) => ({ ...line })).sort((x, y) => y.count - x.count);
  }

  /**
   * Shows every webhook call to `observer` as it is sent, with the objects
   * as the webhook receives them (do not modify them); returns a function
   * that stops it.
   */
  onWebhookCall(observer: WebhookCallObserver): () => void {
    return this.#core.webhooks.observeCalls(observer);
  }

  /** Zeroes the request and webhook call counts and forgets the forbidden requests. */
  resetCounters(): void {
    this.#counts.clear();
    this.#webhookCalls.clear();
    this.#forbidden = [];
  }

  /** Requests answered 403 since the last reset (at most the last 1,000), oldest first; filters are optional. */
  forbiddenRequests(filter: { username?: string; userAgent?: string } = {}): ForbiddenRequest[] {
    return this.#forbidden.filter((f) => (filter.username === undefined || f.username === filter.username) && (filter.userAgent === undefined || f.userAgent === filter.userAgent)).map((f) => ({ ...f, groups: [...f.groups] }));
  }

  /** Called by the HTTP layer for every request its authorizer refused. */
  recordForbidden(a: AuthorizationAttributes, userAgent: string, message: string): void {
    const resource = a.resourceRequest
      ? { group: a.group, resource: a.resource, subresource: a.subresource, namespace: a.namespace, name: a.name, path: '' }
      : { group: '', resource: '', subresource: '', namespace: '', name: '', path: a.path };
    this.#forbidden.push({ username: a.user.username, groups: [...a.user.groups], userAgent, verb: a.verb, ...resource, message });
    if (this.#forbidden.length > MAX_FORBIDDEN_KEPT) this.#forbidden.splice(0, this.#forbidden.length - MAX_FORBIDDEN_KEPT);
  }

  /** Called by the HTTP layer for every resource request. */
  recordRequest(key: RequestKey): void {
    const k = [key.group, key.resource, key.verb, key.subresource, key.userAgent].join('\u0000');
    const line = this.#counts.get(k);
    if (line !== undefined) line.count++;
    else this.#counts.set(k, { group: key.group, resource: key.resource, subresource: key.subresource, verb: key.verb, userAgent: key.userAgent, count: 1 });
  }

  /** The fault a request meets (consuming one of its `times`), if any. */
  takeFault(key: RequestKey): FaultSpec | undefined {
    for (const f of this.#faults) {
      const s = f.spec;
      if (f.remaining <= 0) continue;
      if (s.resource !== '*' && s.resource !== key.resource) continue;
      if (s.verb !== '*' && s.verb !== key.verb) continue;
      if (s.group !== undefined && s.group !== key.group) continue;
      if (s.subresource !== undefined && s.subresource !== key.subresource) continue;
      if (s.namespace !== undefined && s.namespace !== key.namespace) continue;
      if (s.name !== undefined && s.name !== key.name) continue;
      f.remaining--;
      f.hits++;
      return s;
    }
    return undefined;
  }

  /** The Status an injected fault answers with. */
  faultStatus(spec: FaultSpec, key: RequestKey): Status | undefined {
    if (spec.status === undefined) return undefined;
    const gr = { group: key.group, resource: key.resource };
    switch (spec.status) {
      case 409:
        return spec.message === undefined ? conflict(gr, key.name) : conflict(gr, key.name, spec.message);
      case 404:
        return key.name === '' ? resourceNotFound() : notFound(gr, key.name);
      case 410:
        return expired(spec.message ?? 'too old resource version');
      case 429:
        return tooManyRequests(spec.message ?? 'Too many requests, please try again later.', spec.retryAfterSeconds ?? 1);
      case 500:
        return internalError(spec.message ?? 'injected fault');
      case 503:
        return statusError(503, 'ServiceUnavailable', spec.message ?? 'the server is currently unable to handle the request');
      default:
        return genericServerResponse(spec.status, spec.message ?? '', gr, key.name);
    }
  }

  // ---- in-process access ----

  #def(apiVersion: string, kind: string): Result<ResourceDef> {
    const def = this.#core.resourceFor(apiVersion, kind);
    return def === undefined ? fail(statusError(404, 'NotFound', `no resource serves ${kind} in ${apiVersion}`)) : { ok: true, value: def };
  }

  #ctx(dryRun = false): RequestContext {
    return this.#core.systemContext(dryRun);
  }

  get(apiVersion: string, kind: string, namespace: string, name: string): Result<KubeObject> {
    const def = this.#def(apiVersion, kind);
    if (!def.ok) return def;
    const r = this.#core.ops.get(def.value, namespace, name);
    return r.ok ? { ok: true, value: structuredClone(r.value) } : r;
  }

  list(apiVersion: string, kind: string, namespace?: string, options: ListOptions = {}): Result<ListResult> {
    const def = this.#def(apiVersion, kind);
    if (!def.ok) return def;
    const r = this.#core.ops.list(def.value, namespace, options);
    return r.ok ? { ok: true, value: { ...r.value, items: r.value.items.map((i) => structuredClone(i)) } } : r;
  }

  async create(obj: KubeObject, options: { dryRun?: boolean } = {}): Promise<Result<KubeObject>> {
    const def = this.#def(asString(obj.apiVersion) ?? '', asString(obj.kind) ?? '');
    if (!def.ok) return def;
    const r = await this.#core.ops.create(def.value, asString(obj.metadata?.namespace) ?? '', obj, this.#ctx(options.dryRun));
    return r.ok ? { ok: true, value: structuredClone(r.value) } : r;
  }

  /** PUT of the object (or of its `status`). */
  async update(obj: KubeObject, options: { subresource?: 'status'; dryRun?: boolean } = {}): Promise<Result<WriteOutcome>> {
    const def = this.#def(asString(obj.apiVersion) ?? '', asString(obj.kind) ?? '');
    if (!def.ok) return def;
    const r = await this.#core.ops.update(def.value, asString(obj.metadata?.namespace) ?? '', asString(obj.metadata?.name) ?? '', obj, this.#ctx(options.dryRun), options.subresource ?? '');
    return r.ok ? { ok: true, value: { ...r.value, object: structuredClone(r.value.object) } } : r;
  }

  async patch(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
    patchType: string,
    body: unknown,
    options: { subresource?: string; fieldManager?: string; dryRun?: boolean } = {},
  ): Promise<Result<WriteOutcome>> {
    const def = this.#def(apiVersion, kind);
    if (!def.ok) return def;
    const ctx = this.#ctx(options.dryRun);
    if (options.fieldManager !== undefined) ctx.fieldManager = options.fieldManager;
    const r =
      options.subresource === 'scale'
        ? await updateScale(this.#core.ops, def.value, namespace, name, body, patchType, ctx)
        : await patchObject(this.#core.ops, def.value, namespace, name, { patchType, body, subresource: options.subresource ?? '', ...(options.fieldManager !== undefined ? { fieldManager: options.fieldManager } : {}) }, ctx);
    return r.ok ? { ok: true, value: { ...r.value, object: structuredClone(r.value.object) } } : r;
  }

  async delete(apiVersion: string, kind: string, namespace: string, name: string, options: DeleteOptions & { dryRun?: boolean } = {}): Promise<Result<DeleteOutcome>> {
    const def = this.#def(apiVersion, kind);
    if (!def.ok) return def;
    const { dryRun, ...opts } = options;
    return deleteObject(this.#core.ops, def.value, namespace, name, opts, this.#ctx(dryRun));
  }

  /** What is plugged into the server. */
  extensions(): { admission: string[]; subresources: string[]; routes: string[]; formatters: number } {
    const subresources: string[] = [];
    for (const d of this.#core.registry.all()) {
      for (const name of Object.keys(d.subresources.handlers ?? {})) subresources.push(`${d.group === '' ? '' : `${d.group}/`}${d.plural}/${name}`);
    }
    return {
      admission: this.#core.admission.plugins().map((p) => p.name),
      subresources,
      routes: this.#core.routes.map((r) => r.prefix),
      formatters: this.#core.formatters.length,
    };
  }
}
