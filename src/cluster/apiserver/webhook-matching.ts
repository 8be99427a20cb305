/**
 * Which webhooks a request goes to, as k8s.io/apiserver/pkg/admission/plugin/webhook
 * decides it (generic.ShouldCallHook, predicates/namespace, predicates/object,
 * predicates/rules):
 *
 * 1. namespaceSelector — labels of the request's namespace (of the object
 *    itself for a Namespace CREATE/UPDATE); cluster-scoped requests other than
 *    namespaces always match; an unknown namespace is a 404, reported only
 *    when the webhook's rules match too;
 * 2. objectSelector — labels of the new object or of the old one (either is
 *    enough); a request without objects never matches a non-empty selector;
 * 3. rules — operation, group, version, resource/subresource (`pods`,
 *    `pods/status`, `pods/` + `*`, `*`, and a `*` resource with `/scale` or
 *    `/` + `*`) and scope;
 * 4. with matchPolicy Equivalent, the same rules against the other served
 *    versions of the same group/resource: the webhook is then called with the
 *    object converted to that version;
 * 5. matchConditions (CEL), last, for a webhook that matched all of the
 *    above: a false condition skips it, an evaluation error under
 *    failurePolicy Fail fails the request (403), under Ignore skips it.
 *
 * Pure functions over plain inputs; the dispatcher supplies namespace labels,
 * the equivalent resources and the evaluation of match conditions. Start at
 * `shouldCallHook`.
 */
import type { Selector } from '../../k8s/label-selector.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { MatchOutcome } from './match-conditions.ts';
import type { GroupVersionKind } from './resource-def.ts';
import type { WebhookAccessor, WebhookRule } from './webhook-configuration.ts';

import type { GroupVersionResource } from '../../k8s/wire.ts';
export type { GroupVersionResource };

/** What matching needs to know about a request. */
export interface MatchRequest {
  operation: string;
  resource: GroupVersionResource;
  subresource: string;
  kind: GroupVersionKind;
  /** The request namespace; for Namespace objects, the namespace's own name. */
  namespace: string;
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
}

/** Which resource and kind a webhook is called with. */
export interface WebhookInvocation {
  hook: WebhookAccessor;
  resource: GroupVersionResource;
  subresource: string;
  kind: GroupVersionKind;
}

export type NamespaceLabels = { found: true; labels: Record<string, string> } | { found: false };

export interface MatchDeps {
  namespaceLabels(name: string): NamespaceLabels;
  /** Other served versions of the request's group/resource, with the kind the subresource speaks in each. */
  equivalents(resource: GroupVersionResource, subresource: string): { resource: GroupVersionResource; kind: GroupVersionKind }[];
  /** The webhook's matchConditions for this invocation, under its failure policy (asked only when it has some). */
  matchConditions(invocation: WebhookInvocation): MatchOutcome;
}

/** Why a webhook could not be matched: upstream answers these as errors (404, 500, or 403 for match conditions). */
export type MatchFailure = { kind: 'namespaceNotFound'; namespace: string } | { kind: 'badSelector'; error: string } | { kind: 'matchConditions'; message: string };

export type MatchResult = { call: false } | { call: true; invocation: WebhookInvocation } | { call: 'error'; failure: MatchFailure };

export function isNamespaceResource(r: GroupVersionResource): boolean {
  return r.group === '' && r.resource === 'namespaces';
}

function exactOrWildcard(items: readonly string[], requested: string): boolean {
  return items.some((i) => i === '*' || i === requested);
}

function scopeMatches(scope: string, req: MatchRequest): boolean {
  if (scope === '*' || scope === '') return true;
  const namespaceObject = isNamespaceResource(req.resource) && req.resource.version === 'v1';
  if (scope === 'Namespaced') return !namespaceObject && req.namespace !== '';
  if (scope === 'Cluster') return namespaceObject || req.namespace === '';
  return false;
}

function resourceMatches(resources: readonly string[], resource: string, subresource: string): boolean {
  return resources.some((entry) => {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? '' : entry.slice(slash + 1);
    return (res === '*' || res === resource) && (sub === '*' || sub === subresource);
  });
}

/** rules.Matcher.Matches for one rule. */
export function ruleMatches(rule: WebhookRule, req: MatchRequest, resource: GroupVersionResource = req.resource): boolean {
  const r = { ...req, resource };
  return (
    scopeMatches(rule.scope, r) &&
    rule.operations.some((op) => op === '*' || op === req.operation) &&
    exactOrWildcard(rule.apiGroups, resource.group) &&
    exactOrWildcard(rule.apiVersions, resource.version) &&
    resourceMatches(rule.resources, resource.resource, req.subresource)
  );
}

function labelsOf(obj: KubeObject | undefined): Record<string, string> | undefined {
  const labels = obj?.metadata?.labels;
  return labels !== null && typeof labels === 'object' ? (labels as Record<string, string>) : {};
}

type NamespaceMatch = { matches: boolean; failure?: MatchFailure };

/** predicates/namespace: the webhook's namespaceSelector against the request's namespace. */
export function matchNamespaceSelector(hook: WebhookAccessor, req: MatchRequest, deps: MatchDeps): NamespaceMatch {
  const namespaceRequest = isNamespaceResource(req.resource);
  if (req.namespace === '' && !namespaceRequest) return { matches: true };
  if (!hook.namespaceSelector.ok) return { matches: false, failure: { kind: 'badSelector', error: hook.namespaceSelector.error } };
  const selector: Selector = hook.namespaceSelector.selector;
  if (selector.empty) return { matches: true };
  if (namespaceRequest && req.subresource === '' && (req.operation === 'CREATE' || req.operation === 'UPDATE')) {
    return { matches: selector.matches(labelsOf(req.object)) };
  }
  const ns = deps.namespaceLabels(req.namespace);
  if (!ns.found) return { matches: false, failure: { kind: 'namespaceNotFound', namespace: req.namespace } };
  return { matches: selector.matches(ns.labels) };
}

/** predicates/object: the new object's labels or the old object's. */
export function matchObjectSelector(hook: WebhookAccessor, req: MatchRequest): NamespaceMatch {
  if (!hook.objectSelector.ok) return { matches: false, failure: { kind: 'badSelector', error: hook.objectSelector.error } };
  const selector = hook.objectSelector.selector;
  if (selector.empty) return { matches: true };
  const matches = (o: KubeObject | undefined) => o !== undefined && selector.matches(labelsOf(o));
  return { matches: matches(req.object) || matches(req.oldObject) };
}

/** generic.Webhook.ShouldCallHook. */
export function shouldCallHook(hook: WebhookAccessor, req: MatchRequest, deps: MatchDeps): MatchResult {
  const ns = matchNamespaceSelector(hook, req, deps);
  if (!ns.matches && ns.failure === undefined) return { call: false };
  const obj = matchObjectSelector(hook, req);
  if (!obj.matches && obj.failure === undefined) return { call: false };

  let invocation: WebhookInvocation | undefined;
  if (hook.rules.some((rule) => ruleMatches(rule, req))) {
    invocation = { hook, resource: req.resource, subresource: req.subresource, kind: req.kind };
  } else if (hook.matchPolicy === 'Equivalent') {
    const equivalents = deps.equivalents(req.resource, req.subresource).filter((e) => e.resource.version !== req.resource.version || e.resource.group !== req.resource.group);
    // Earlier rules first, then the equivalents in the order the server lists them.
    outer: for (const rule of hook.rules) {
      for (const e of equivalents) {
        if (ruleMatches(rule, req, e.resource)) {
          invocation = { hook, resource: e.resource, subresource: req.subresource, kind: e.kind };
          break outer;
        }
      }
    }
  }
  if (invocation === undefined) return { call: false };
  if (ns.failure !== undefined) return { call: 'error', failure: ns.failure };
  if (obj.failure !== undefined) return { call: 'error', failure: obj.failure };
  if (hook.matchConditions.length > 0) {
    const outcome = deps.matchConditions(invocation);
    if (outcome.kind === 'error') return { call: 'error', failure: { kind: 'matchConditions', message: outcome.message } };
    if (outcome.kind === 'skip') return { call: false };
  }
  return { call: true, invocation };
}

/**
 * rules.IsExemptAdmissionConfigurationResource: webhooks are never called
 * for the objects that configure admission, so a broken webhook cannot lock
 * itself in.
 */
export function isExemptFromWebhooks(kind: GroupVersionKind): boolean {
  return (
    kind.group === 'admissionregistration.k8s.io' &&
    ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding'].includes(
      kind.kind,
    )
  );
}
