/**
 * The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plug-ins
 * (k8s.io/apiserver/pkg/admission/plugin/webhook/{mutating,validating}):
 *
 * - mutating: every matching webhook of every MutatingWebhookConfiguration,
 *   configurations in name order, webhooks in their order, one at a time;
 *   each returned JSON patch is applied to the object the next one sees
 *   (then scheme defaults run again); a webhook that changed the object makes
 *   the whole mutating chain run once more (built-in plug-ins included), and
 *   in that second pass the `reinvocationPolicy: IfNeeded` webhooks called
 *   before the change are called again;
 * - validating: every matching webhook of every ValidatingWebhookConfiguration,
 *   called in parallel as upstream does; when several fail, the first in
 *   configuration order is reported (upstream reports whichever it collected
 *   first, so any of them is a valid answer);
 * - failures to call a webhook (connection, timeout, bad answer) honour
 *   `failurePolicy`: Fail → 500 `failed calling webhook "<name>": ...`,
 *   Ignore → skipped; a denial, a dry-run the webhook cannot take
 *   (`sideEffects` Unknown/Some) and a patch that does not apply always fail
 *   the request;
 * - `matchConditions` are evaluated after the rules and selectors matched,
 *   with `object`/`oldObject` as the webhook would receive them and the
 *   request's attributes; each webhook's conditions are compiled once per
 *   configuration version (`matchConditionCompilations` counts them). An
 *   evaluation error under Fail is a 403 `<resource> "<name>" is forbidden:
 *   expression '...' resulted in error: ...`. Mutating webhooks are matched
 *   one at a time, just before each is called, so conditions and object
 *   selectors see what the webhooks before them changed.
 *
 * Race mode (`deps.races`): a call waits a random delay on the clock before
 * it is sent and again after its answer arrived (latency of the network and
 * of the webhook's server), drawn per webhook.
 *
 * Webhooks are never called for the admission configuration kinds
 * themselves. Service references resolve through `registerServiceEndpoint`
 * (the control API). Start with `mutatingPlugin` / `validatingPlugin`.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import { deepEqual, isPlainObject } from '../../k8s/json.ts';
import { asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { Authorizer } from './authorization.ts';
import type { AdmissionAttributes, AdmissionDecision, AdmissionPlugin } from './admission.ts';
import {
  applyWebhookPatch,
  buildAdmissionReview,
  isEmptyPatch,
  operationOptions,
  readWebhookAnswer,
  reviewVersionFor,
  verifyAdmissionResponse,
  webhookRejection,
  type CheckedWebhookResponse,
} from './admission-review.ts';
import { badRequest, forbidden, internalError, notFound, type Status } from './errors.ts';
import { compileMatchConditions, evaluateMatchConditions, type CompiledMatchConditions, type MatchConditionInput } from './match-conditions.ts';
import type { ObjectOperations } from './operations.ts';
import { apiVersionOf, type GroupVersionKind, type ResourceDef } from './resource-def.ts';
import type { ResourceRegistry } from './resources.ts';
import { SCALE_KIND } from './scale.ts';
import type { ObjectStore } from './storage.ts';
import { postToWebhook, webhookAgent, webhookTarget, type ServiceResolution } from './webhook-client.ts';
import { WebhookThread, type TimedWebhookCallResult } from './webhook-thread.ts';
import { WebhookClientCredentials } from './webhook-client-auth.ts';
import { webhooksOf, type ServiceReference, type WebhookAccessor } from './webhook-configuration.ts';
import { isExemptFromWebhooks, shouldCallHook, type MatchDeps, type MatchFailure, type MatchRequest, type WebhookInvocation } from './webhook-matching.ts';

export const MUTATING_WEBHOOK_PLUGIN = 'MutatingAdmissionWebhook';
export const VALIDATING_WEBHOOK_PLUGIN = 'ValidatingAdmissionWebhook';
/** Upstream puts the webhooks after every built-in plug-in. */
export const MUTATING_WEBHOOK_ORDER = 500;
export const VALIDATING_WEBHOOK_ORDER = 510;

const MUTATING_CONFIGS = 'admissionregistration.k8s.io/mutatingwebhookconfigurations';
const VALIDATING_CONFIGS = 'admissionregistration.k8s.io/validatingwebhookconfigurations';
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];

export interface AdmissionWebhooksDeps {
  ops: ObjectOperations;
  registry: ResourceRegistry;
  store: ObjectStore;
  clock: Clock;
  /** Race mode: a random delay before each call and after its answer. */
  races?: Races | undefined;
  /** The server's authorizer, which matchConditions' `authorizer` variable asks. */
  authorizer: Authorizer;
  /** Calls go out from a worker thread of their own and are timed there (webhook-thread.ts); default: from this thread. */
  webhookThread?: boolean;
}

/**
 * One webhook call the server is about to send (after matching, dry-run and
 * client-config checks, i.e. what reaches the wire), for counting
 * (`ApiServerControl.webhookCallCounts`; upstream's
 * `apiserver_admission_webhook_request_total`).
 */
export interface WebhookCall {
  /** The webhook's name in its configuration. */
  webhook: string;
  mutating: boolean;
  /** The path of the URL the review is posted to (`/mutate-pod`; `/` for a service without one). */
  path: string;
  operation: string;
  /** The request's resource (for a subresource: its parent). */
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** The objects as sent to this webhook: `object` undefined on DELETE, `oldObject` undefined on CREATE. */
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
}

/**
 * What an observer of a call learns once it is over: how long the webhook
 * took to answer, and whether it did. Clock ms from sending to the answer;
 * with the webhook thread, the wall ms that thread measured.
 */
export interface WebhookCallEnd {
  durationMs: number;
  answered: boolean;
}

/** Sees a call before it is sent; may return a function to hear how it ended. */
export type WebhookCallObserver = (call: WebhookCall) => void | ((end: WebhookCallEnd) => void);

/** The outcome of calling one webhook. */
type CallOutcome =
  | { kind: 'answered'; response: CheckedWebhookResponse }
  /** upstream's ErrCallingWebhook: subject to failurePolicy. */
  | { kind: 'callFailed'; reason: string }
  /** Fails the request whatever the failure policy. */
  | { kind: 'rejected'; status: Status };

/** Per-request memory of the mutating webhooks across the two passes of the chain. */
class ReinvokeMemory {
  lastOutput: KubeObject | undefined;
  previouslyInvoked = new Set<string>();
  toReinvoke = new Set<string>();

  requireReinvokingPreviouslyInvoked(): void {
    for (const uid of this.previouslyInvoked) this.toReinvoke.add(uid);
    this.previouslyInvoked.clear();
  }
}

function endpointKey(namespace: string, name: string, port?: number): string {
  return port === undefined ? `${namespace}/${name}` : `${namespace}/${name}:${port}`;
}

export class AdmissionWebhooks {
  readonly #deps: AdmissionWebhooksDeps;
  readonly #endpoints = new Map<string, string>();
  readonly #agent = webhookAgent();
  readonly #thread: WebhookThread | undefined;
  readonly #cache = new Map<string, { rv: string; hooks: WebhookAccessor[] }>();
  /** Compiled matchConditions, by webhook accessor: they live as long as the configuration version they came from. */
  readonly #compiledConditions = new WeakMap<WebhookAccessor, CompiledMatchConditions>();
  #matchConditionCompilations = 0;
  /** The client certificates presented to webhooks (the admission kubeconfig's users): webhook-client-auth.ts. */
  readonly clientCredentials = new WebhookClientCredentials();
  readonly #observers = new Set<WebhookCallObserver>();

  constructor(deps: AdmissionWebhooksDeps) {
    this.#deps = deps;
    this.#thread = deps.webhookThread === true ? new WebhookThread() : undefined;
  }

  /**
   * Where a service reference of a webhook leads (`https://127.0.0.1:PORT`);
   * without `port`, any port of the service. Returns a function that removes it.
   */
  registerServiceEndpoint(service: { namespace: string; name: string; port?: number }, url: string): () => void {
    const key = endpointKey(service.namespace, service.name, service.port);
    this.#endpoints.set(key, url);
    return () => {
      if (this.#endpoints.get(key) === url) this.#endpoints.delete(key);
    };
  }

  resolveService(ref: ServiceReference): ServiceResolution {
    const origin = this.#endpoints.get(endpointKey(ref.namespace, ref.name, ref.port)) ?? this.#endpoints.get(endpointKey(ref.namespace, ref.name));
    if (origin !== undefined) return { ok: true, origin };
    if (this.#deps.store.get('/services', ref.namespace, ref.name) === undefined) return { ok: false, error: `service ${JSON.stringify(ref.name)} not found` };
    return { ok: false, error: `no endpoints available for service ${JSON.stringify(ref.name)}` };
  }

  /**
   * Tells `observer` about every webhook call before it is sent
   * (synchronously), and, if it returns a function, how the call ended;
   * returns a function that stops it.
   */
  observeCalls(observer: WebhookCallObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** How many match-condition expressions the dispatcher has compiled (each once per configuration version). */
  get matchConditionCompilations(): number {
    return this.#matchConditionCompilations;
  }

  /** Closes the kept-alive connections to webhook servers (and stops the webhook thread). */
  async close(): Promise<void> {
    this.#agent.destroy();
    await this.#thread?.close();
  }

  /** The webhooks of every configuration of one kind, configurations in name order. */
  hooks(mutating: boolean): WebhookAccessor[] {
    const resource = mutating ? MUTATING_CONFIGS : VALIDATING_CONFIGS;
    const out: WebhookAccessor[] = [];
    const seen = new Set<string>();
    for (const config of this.#deps.store.list(resource)) {
      const key = `${resource}/${asString(config.metadata?.name) ?? ''}`;
      seen.add(key);
      const rv = asString(config.metadata?.resourceVersion) ?? '';
      let cached = this.#cache.get(key);
      if (cached === undefined || cached.rv !== rv) {
        cached = { rv, hooks: webhooksOf(config, mutating) };
        this.#cache.set(key, cached);
      }
      out.push(...cached.hooks);
    }
    for (const key of [...this.#cache.keys()]) if (key.startsWith(`${resource}/`) && !seen.has(key)) this.#cache.delete(key);
    return out;
  }

  mutatingPlugin(): AdmissionPlugin {
    return { name: MUTATING_WEBHOOK_PLUGIN, order: MUTATING_WEBHOOK_ORDER, mutate: (a) => this.#mutate(a) };
  }

  validatingPlugin(): AdmissionPlugin {
    return { name: VALIDATING_WEBHOOK_PLUGIN, order: VALIDATING_WEBHOOK_ORDER, validate: (a) => this.#validate(a) };
  }

  // ---- matching ----

  #matchRequest(a: AdmissionAttributes): MatchRequest {
    return {
      operation: a.operation,
      resource: { group: a.resource.group, version: a.resource.version, resource: a.resource.plural },
      subresource: a.subresource,
      kind: a.kind,
      namespace: this.#requestNamespace(a),
      object: a.object,
      oldObject: a.oldObject,
    };
  }

  /** The admission namespace: a Namespace's own name for requests about namespaces. */
  #requestNamespace(a: AdmissionAttributes): string {
    if (a.resource.group === '' && a.resource.plural === 'namespaces') {
      return a.name !== '' ? a.name : (asString(a.object?.metadata?.name) ?? '');
    }
    return a.namespace;
  }

  #matchDeps(a: AdmissionAttributes): MatchDeps {
    return {
      matchConditions: (invocation) => evaluateMatchConditions(this.#conditionsOf(invocation.hook), this.#conditionInput(a, invocation), invocation.hook.failurePolicy),
      namespaceLabels: (name) => {
        const ns = this.#deps.store.get('/namespaces', '', name);
        if (ns === undefined) return { found: false };
        const labels = asRecord(ns.metadata?.labels) ?? {};
        return { found: true, labels: labels as Record<string, string> };
      },
      equivalents: (resource, subresource) =>
        this.#deps.registry
          .versionsOf(resource.group, resource.resource)
          .filter((d) => d.version !== resource.version)
          .map((d) => ({ resource: { group: d.group, version: d.version, resource: d.plural }, kind: subresourceKind(d, subresource) })),
    };
  }

  /** A webhook's compiled conditions, compiled on first use. */
  #conditionsOf(hook: WebhookAccessor): CompiledMatchConditions {
    let compiled = this.#compiledConditions.get(hook);
    if (compiled === undefined) {
      compiled = compileMatchConditions(hook.matchConditions);
      this.#matchConditionCompilations += hook.matchConditions.length;
      this.#compiledConditions.set(hook, compiled);
    }
    return compiled;
  }

  /**
   * What the conditions see: the objects in the version the webhook is
   * called with, the request (CreateAdmissionRequest: the invocation's kind,
   * the request's resource) and the user.
   */
  #conditionInput(a: AdmissionAttributes, invocation: WebhookInvocation): MatchConditionInput {
    const def = a.resource;
    const sameVersion = invocation.resource.version === def.version && invocation.resource.group === def.group;
    const inVersion = (o: KubeObject | undefined) => (o === undefined || sameVersion ? o : toVersion(def, a.subresource, o, invocation.resource.version));
    const namespace = this.#requestNamespace(a);
    return {
      object: inVersion(a.object),
      oldObject: inVersion(a.oldObject),
      request: () => conditionRequest(a, invocation, namespace),
      user: a.user,
      requestResource: { group: def.group, resource: def.plural, subresource: a.subresource, namespace, name: a.name },
      authorize: (attributes) => this.#deps.authorizer.authorize(attributes),
    };
  }

  /** How a matching failure fails the request. */
  #failureStatus(a: AdmissionAttributes, f: MatchFailure): Status {
    if (f.kind === 'namespaceNotFound') return notFound({ group: '', resource: 'namespaces' }, f.namespace);
    if (f.kind === 'matchConditions') return forbidden({ group: a.resource.group, resource: a.resource.plural }, a.name, f.message);
    return internalError(f.error);
  }

  #invocations(a: AdmissionAttributes, mutating: boolean): { ok: true; hooks: WebhookInvocation[] } | { ok: false; status: Status } {
    const req = this.#matchRequest(a);
    const deps = this.#matchDeps(a);
    const out: WebhookInvocation[] = [];
    for (const hook of this.hooks(mutating)) {
      const m = shouldCallHook(hook, req, deps);
      if (m.call === false) continue;
      if (m.call === 'error') return { ok: false, status: this.#failureStatus(a, m.failure) };
      out.push(m.invocation);
    }
    return { ok: true, hooks: out };
  }

  // ---- calling one webhook ----

  async #call(invocation: WebhookInvocation, a: AdmissionAttributes, object: KubeObject | undefined, oldObject: KubeObject | undefined): Promise<CallOutcome> {
    const hook = invocation.hook;
    if (a.dryRun) {
      if (hook.sideEffects === '') return { kind: 'callFailed', reason: 'Webhook SideEffects is nil' };
      if (!NO_SIDE_EFFECTS.includes(hook.sideEffects)) return { kind: 'rejected', status: badRequest(`admission webhook ${JSON.stringify(hook.name)} does not support dry run`) };
    }
    const apiVersion = reviewVersionFor(hook.admissionReviewVersions);
    if (apiVersion === undefined) return { kind: 'callFailed', reason: 'could not create admission objects: webhook does not accept known AdmissionReview versions' };
    const caPem = hook.clientConfig.caPem;
    if (caPem !== undefined && !caPem.includes('-----BEGIN CERTIFICATE-----')) {
      return { kind: 'callFailed', reason: 'could not get REST client: unable to load root certificates: unable to parse bytes as PEM block' };
    }
    const target = webhookTarget(hook, (ref) => this.resolveService(ref));
    if (!target.ok) return { kind: 'callFailed', reason: `failed to call webhook: Post ${JSON.stringify(target.url)}: ${target.error}` };
    const uid = randomUUID();
    const review = buildAdmissionReview(apiVersion, uid, a, invocation, { object, oldObject }, this.#requestNamespace(a));
    const url = target.target.display;
    const credentials = this.clientCredentials.resolve(target.target.credentialsKey);
    const ends: ((end: WebhookCallEnd) => void)[] = [];
    if (this.#observers.size > 0) {
      const call: WebhookCall = {
        webhook: hook.name,
        mutating: hook.mutating,
        path: target.target.url.pathname,
        operation: a.operation,
        group: a.resource.group,
        resource: a.resource.plural,
        subresource: a.subresource,
        namespace: this.#requestNamespace(a),
        name: a.name,
        object,
        oldObject,
      };
      for (const observe of this.#observers) {
        const end = observe(call);
        if (end !== undefined) ends.push(end);
      }
    }
    await this.#raceDelay(`${hook.name} request`);
    const sentAt = this.#deps.clock.now();
    const post = {
      clock: this.#deps.clock,
      caPem,
      ...(credentials === undefined ? {} : { clientCertificate: credentials }),
      timeoutMs: hook.timeoutSeconds * 1000,
      label: `admission webhook ${hook.name}`,
    };
    const body = JSON.stringify(review);
    const answer: TimedWebhookCallResult = this.#thread === undefined ? await postToWebhook(target.target, body, { ...post, agent: this.#agent }) : await this.#thread.post(target.target, body, post);
    for (const end of ends) end({ durationMs: answer.elapsedMs ?? this.#deps.clock.now() - sentAt, answered: answer.ok });
    await this.#raceDelay(`${hook.name} response`);
    if (!answer.ok) return { kind: 'callFailed', reason: `failed to call webhook: Post ${JSON.stringify(url)}: ${answer.error}` };
    const read = readWebhookAnswer(answer.status, answer.contentType, answer.body);
    if (!read.ok) return { kind: 'callFailed', reason: `failed to call webhook: ${read.error}` };
    const verified = verifyAdmissionResponse(apiVersion, uid, hook.mutating, read.review);
    if (!verified.ok) return { kind: 'callFailed', reason: `received invalid webhook response: ${verified.error}` };
    return { kind: 'answered', response: verified.response };
  }

  /** Race mode: waits the delay drawn for `channel` on the clock. */
  async #raceDelay(channel: string): Promise<void> {
    const ms = this.#deps.races?.delay('webhook', channel) ?? 0;
    if (ms > 0) await this.#deps.clock.sleep(ms, undefined, { name: 'admission webhook race delay' });
  }

  /** A call failure under the webhook's failure policy: the Status to fail with, or undefined to go on. */
  #failurePolicy(hook: WebhookAccessor, reason: string): Status | undefined {
    if (hook.failurePolicy === 'Ignore') return undefined;
    return internalError(`failed calling webhook ${JSON.stringify(hook.name)}: ${reason}`);
  }

  // ---- mutating ----

  async #mutate(a: AdmissionAttributes): Promise<AdmissionDecision | undefined> {
    if (isExemptFromWebhooks(a.kind) || this.hooks(true).length === 0) return undefined;
    const reinvocation = a.reinvocation;
    let memory = reinvocation?.values.get(MUTATING_WEBHOOK_PLUGIN) as ReinvokeMemory | undefined;
    if (memory === undefined) {
      memory = new ReinvokeMemory();
      reinvocation?.values.set(MUTATING_WEBHOOK_PLUGIN, memory);
    }
    const isReinvoke = reinvocation?.isReinvoke === true;
    // Built-in plug-ins changed the object since the webhooks last saw it: every IfNeeded webhook runs again.
    if (isReinvoke && !deepEqual(memory.lastOutput, a.object)) memory.requireReinvokingPreviouslyInvoked();
    const warnings: string[] = [];
    try {
      const deps = this.#matchDeps(a);
      for (const candidate of this.hooks(true)) {
        // Matched just before the call, against the object as the webhooks before this one left it.
        const m = shouldCallHook(candidate, this.#matchRequest(a), deps);
        if (m.call === false) continue;
        if (m.call === 'error') return { allowed: false, status: this.#failureStatus(a, m.failure), warnings };
        const invocation = m.invocation;
        const hook = invocation.hook;
        // A webhook is never called for the first time during reinvocation.
        if (isReinvoke && !memory.toReinvoke.has(hook.uid)) continue;
        const step = await this.#mutateOnce(invocation, a, warnings);
        if (step.changed) {
          memory.requireReinvokingPreviouslyInvoked();
          if (reinvocation !== undefined) reinvocation.shouldReinvoke = true;
        }
        if (hook.reinvocationPolicy === 'IfNeeded') memory.previouslyInvoked.add(hook.uid);
        if (step.status !== undefined) return { allowed: false, status: step.status, warnings };
      }
      return a.object === undefined ? { allowed: true, warnings } : { allowed: true, object: a.object, warnings };
    } finally {
      memory.lastOutput = a.object === undefined ? undefined : structuredClone(a.object);
    }
  }

  /** Calls one mutating webhook and applies its patch to `a.object`. */
  async #mutateOnce(invocation: WebhookInvocation, a: AdmissionAttributes, warnings: string[]): Promise<{ changed: boolean; status?: Status }> {
    const hook = invocation.hook;
    const def = a.resource;
    const sent = a.object === undefined ? undefined : toVersion(def, a.subresource, a.object, invocation.resource.version);
    const sentOld = a.oldObject === undefined ? undefined : toVersion(def, a.subresource, a.oldObject, invocation.resource.version);
    const outcome = await this.#call(invocation, a, sent, sentOld);
    if (outcome.kind === 'rejected') return { changed: false, status: outcome.status };
    if (outcome.kind === 'callFailed') {
      const status = this.#failurePolicy(hook, outcome.reason);
      return status === undefined ? { changed: false } : { changed: false, status };
    }
    const response = outcome.response;
    for (const w of response.warnings) if (!warnings.includes(w)) warnings.push(w);
    if (!response.allowed) return { changed: false, status: webhookRejection(hook.name, response.result) };
    if (response.patch === undefined || isEmptyPatch(response.patch)) return { changed: false };
    if (sent === undefined) {
      return { changed: false, status: internalError(`admission webhook ${JSON.stringify(hook.name)} attempted to modify the object, which is not supported for this operation`) };
    }
    if (response.patchType !== 'JSONPatch') {
      const status = this.#failurePolicy(hook, `unsupported patch type ${JSON.stringify(response.patchType)}`);
      return status === undefined ? { changed: false } : { changed: false, status };
    }
    const patched = applyWebhookPatch(sent, response.patch);
    if (!patched.ok) return { changed: false, status: internalError(patched.error) };
    // What the webhook changed, judged in the version it was sent (before the object goes back and is defaulted).
    const changed = !deepEqual(sent, patched.object);
    // applyWebhookPatch answered a copy of its own: its version is set in place instead of copying it again.
    const back = intoVersion(def, a.subresource, patched.object, def.version);
    const decoded = this.#decodeAndDefault(def, a.subresource, a.kind, back);
    if (typeof decoded === 'string') return { changed: false, status: internalError(decoded) };
    a.object = decoded;
    return { changed };
  }

  /** The decode-and-default step upstream runs on a patched object; an error text when it does not decode. */
  #decodeAndDefault(def: ResourceDef, subresource: string, kind: GroupVersionKind, obj: KubeObject): KubeObject | string {
    if (!isPlainObject(obj)) return 'the patched object is not a JSON object';
    const ownKind = (subresource === '' || subresource === 'status') && kind.kind === def.kind;
    if (!ownKind) return obj;
    const checked = this.#deps.ops.checkBody(def, obj);
    if (!checked.ok) return checked.status.message ?? 'the patched object could not be decoded';
    def.strategy.applyDefaults?.(checked.value);
    return checked.value;
  }

  // ---- validating ----

  async #validate(a: AdmissionAttributes): Promise<AdmissionDecision | undefined> {
    if (isExemptFromWebhooks(a.kind)) return undefined;
    const matched = this.#invocations(a, false);
    if (!matched.ok) return { allowed: false, status: matched.status };
    if (matched.hooks.length === 0) return undefined;
    const def = a.resource;
    const outcomes = await Promise.all(
      matched.hooks.map(async (invocation) => {
        const object = a.object === undefined ? undefined : toVersion(def, a.subresource, a.object, invocation.resource.version);
        const oldObject = a.oldObject === undefined ? undefined : toVersion(def, a.subresource, a.oldObject, invocation.resource.version);
        return { invocation, outcome: await this.#call(invocation, a, object, oldObject) };
      }),
    );
    const warnings: string[] = [];
    let failure: Status | undefined;
    for (const { invocation, outcome } of outcomes) {
      let status: Status | undefined;
      if (outcome.kind === 'rejected') status = outcome.status;
      else if (outcome.kind === 'callFailed') status = this.#failurePolicy(invocation.hook, outcome.reason);
      else {
        for (const w of outcome.response.warnings) if (!warnings.includes(w)) warnings.push(w);
        if (!outcome.response.allowed) status = webhookRejection(invocation.hook.name, outcome.response.result);
      }
      failure ??= status;
    }
    return failure === undefined ? { allowed: true, warnings } : { allowed: false, status: failure, warnings };
  }
}

/**
 * The `request` variable of match conditions (cel.CreateAdmissionRequest
 * as JSON): no uid, object or oldObject; `kind` is the one the webhook is
 * called with, `resource` the request's; empty strings are left out, as
 * `omitempty` leaves them out upstream.
 */
function conditionRequest(a: AdmissionAttributes, invocation: WebhookInvocation, namespace: string): Record<string, unknown> {
  const resource = { group: a.resource.group, version: a.resource.version, resource: a.resource.plural };
  const request: Record<string, unknown> = {
    kind: { group: invocation.kind.group, version: invocation.kind.version, kind: invocation.kind.kind },
    resource,
    requestKind: { group: a.kind.group, version: a.kind.version, kind: a.kind.kind },
    requestResource: resource,
    operation: a.operation,
    dryRun: a.dryRun,
    options: operationOptions(a),
  };
  if (a.subresource !== '') {
    request['subResource'] = a.subresource;
    request['requestSubResource'] = a.subresource;
  }
  if (a.name !== '') request['name'] = a.name;
  if (namespace !== '') request['namespace'] = namespace;
  const userInfo: Record<string, unknown> = {};
  if (a.user.username !== '') userInfo['username'] = a.user.username;
  if (a.user.uid !== undefined && a.user.uid !== '') userInfo['uid'] = a.user.uid;
  if (a.user.groups.length > 0) userInfo['groups'] = a.user.groups;
  if (a.user.extra !== undefined && Object.keys(a.user.extra).length > 0) userInfo['extra'] = a.user.extra;
  request['userInfo'] = userInfo;
  return request;
}

/** The kind a subresource of `def` speaks. */
function subresourceKind(def: ResourceDef, subresource: string): GroupVersionKind {
  if (subresource === '' || subresource === 'status') return { group: def.group, version: def.version, kind: def.kind };
  if (subresource === 'scale') return SCALE_KIND;
  return def.subresources.handlers?.[subresource]?.kind ?? { group: def.group, version: def.version, kind: def.kind };
}

/**
 * The object in another served version of its resource. Custom resources
 * without a conversion webhook differ only in apiVersion; subresource kinds
 * (Scale, Eviction) are the same in every version of the parent.
 */
function toVersion(def: ResourceDef, subresource: string, obj: KubeObject, version: string): KubeObject {
  return intoVersion(def, subresource, structuredClone(obj), version);
}

/** `toVersion` of an object the caller owns: changed in place, not copied. */
function intoVersion(def: ResourceDef, subresource: string, owned: KubeObject, version: string): KubeObject {
  if (def.builtin || (subresource !== '' && subresource !== 'status')) return owned;
  owned.apiVersion = apiVersionOf({ group: def.group, version });
  return owned;
}
