/**
 * Mutating/ValidatingWebhookConfiguration (admissionregistration.k8s.io/v1):
 * the scheme defaults, the create/update validation with upstream's messages
 * (k8s.io/kubernetes/pkg/apis/admissionregistration/validation), and the
 * parsed form the dispatcher works with (`webhooksOf`, one `WebhookAccessor`
 * per entry of `webhooks`).
 *
 * Invariants: parsing never throws, whatever is stored; a webhook's `uid`
 * (`<configuration>/<webhook>/<index>`) is what reinvocation remembers it by.
 * `matchConditions` are validated as upstream does (at most 64, names
 * qualified and unique, expressions that compile to bool: match-conditions.ts);
 * on update only when they changed. Start with `webhooksOf` and
 * `validateWebhookConfiguration`.
 */
import { duplicate, invalid, notSupported, required, root, tooMany, type FieldError, type FieldPath } from '../../k8s/field-errors.ts';
import { deepEqual } from '../../k8s/json.ts';
import { labelSelectorAsSelector, type Selector } from '../../k8s/label-selector.ts';
import { validateLabelSelector } from '../../k8s/meta-validation.ts';
import { isDNS1035Label, isDNS1123Subdomain, isQualifiedName, isValidPortNum } from '../../k8s/name-formats.ts';
import { asArray, asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject, LabelSelector } from '../../k8s/types.ts';
import { compileMatchCondition, MAX_MATCH_CONDITIONS, type MatchConditionSpec } from './match-conditions.ts';

export type FailurePolicy = 'Fail' | 'Ignore';
export type MatchPolicy = 'Exact' | 'Equivalent';
export type ReinvocationPolicy = 'Never' | 'IfNeeded';

export interface WebhookRule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope: string;
}

export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port: number;
}

export interface WebhookClientConfig {
  url?: string;
  service?: ServiceReference;
  /** The caBundle, base64-decoded (PEM text); undefined means the system trust store. */
  caPem?: string;
}

/** One webhook of a configuration, as the dispatcher uses it. */
export interface WebhookAccessor {
  uid: string;
  name: string;
  configurationName: string;
  mutating: boolean;
  rules: WebhookRule[];
  failurePolicy: FailurePolicy;
  matchPolicy: MatchPolicy;
  /** An unparsable selector is kept as its error: the webhook then fails like upstream's (500). */
  namespaceSelector: { ok: true; selector: Selector } | { ok: false; error: string };
  objectSelector: { ok: true; selector: Selector } | { ok: false; error: string };
  sideEffects: string;
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  reinvocationPolicy: ReinvocationPolicy;
  clientConfig: WebhookClientConfig;
  /** CEL conditions the request must meet (compiled by the dispatcher, once per configuration version). */
  matchConditions: MatchConditionSpec[];
}

export const DEFAULT_TIMEOUT_SECONDS = 10;
const ACCEPTED_REVIEW_VERSIONS = ['v1', 'v1beta1'];
const NO_SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun'];
const SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const URL_FORM = '; desired format: https://host[/path]';

// ---- defaults (SetDefaults_ValidatingWebhook / SetDefaults_MutatingWebhook, v1) ----

function setIfAbsent(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

export function defaultWebhookConfiguration(obj: KubeObject, mutating: boolean): void {
  for (const hook of asArray(obj['webhooks']) ?? []) {
    const h = asRecord(hook);
    if (h === undefined) continue;
    setIfAbsent(h, 'failurePolicy', 'Fail');
    setIfAbsent(h, 'matchPolicy', 'Equivalent');
    setIfAbsent(h, 'namespaceSelector', {});
    setIfAbsent(h, 'objectSelector', {});
    setIfAbsent(h, 'timeoutSeconds', DEFAULT_TIMEOUT_SECONDS);
    if (mutating) setIfAbsent(h, 'reinvocationPolicy', 'Never');
    for (const rule of asArray(h['rules']) ?? []) {
      const r = asRecord(rule);
      if (r !== undefined) setIfAbsent(r, 'scope', '*');
    }
    const service = asRecord(asRecord(h['clientConfig'])?.['service']);
    if (service !== undefined) setIfAbsent(service, 'port', 443);
  }
}

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** The typed-decode checks: `caBundle` ([]byte travels as base64), matchConditions' strings. */
export function webhookConfigurationDecodeError(obj: KubeObject): string | undefined {
  for (const hook of asArray(obj['webhooks']) ?? []) {
    for (const condition of asArray(asRecord(hook)?.['matchConditions']) ?? []) {
      const c = asRecord(condition);
      if (c === undefined) continue;
      for (const field of ['name', 'expression']) {
        const v = c[field];
        if (v !== undefined && v !== null && typeof v !== 'string') return `json: cannot unmarshal ${jsonType(v)} into Go struct field MatchCondition.webhooks.matchConditions.${field} of type string`;
      }
    }
    const bundle = asRecord(asRecord(hook)?.['clientConfig'])?.['caBundle'];
    if (bundle === undefined || bundle === null) continue;
    if (typeof bundle !== 'string') return 'json: cannot unmarshal into Go struct field WebhookClientConfig.webhooks.clientConfig.caBundle of type []uint8';
    const bad = base64Problem(bundle);
    if (bad !== undefined) return `illegal base64 data at input byte ${bad}`;
  }
  return undefined;
}

/** The index of the first byte Go's StdEncoding refuses, or undefined when the text decodes. */
export function base64Problem(text: string): number | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '=') {
      const rest = text.slice(i);
      if (!/^={1,2}$/.test(rest) || text.length % 4 !== 0) return i;
      return undefined;
    }
    if (!/[A-Za-z0-9+/\r\n]/.test(c)) return i;
  }
  return text.replace(/[\r\n]/g, '').length % 4 === 0 ? undefined : text.length;
}

// ---- validation ----

function strings(value: unknown): string[] {
  return (asArray(value) ?? []).map((v) => (typeof v === 'string' ? v : String(v)));
}

/** utilvalidation.IsFullyQualifiedName: a DNS subdomain with at least three segments. */
function validateFullyQualifiedName(name: string, path: FieldPath): FieldError[] {
  if (name === '') return [required(path)];
  const problems = isDNS1123Subdomain(name);
  if (problems.length > 0) return [invalid(path, name, problems.join(','))];
  if (name.split('.').length < 3) return [invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

function validateResources(resources: string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(required(path));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let plainResource = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(required(path.index(i)));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      plainResource = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res)) errs.push(invalid(path.index(i), resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub)) errs.push(invalid(path.index(i), resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) errs.push(invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && plainResource) errs.push(invalid(path, resources, "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

function validateRule(rule: unknown, path: FieldPath): FieldError[] {
  const r = asRecord(rule) ?? {};
  const errs: FieldError[] = [];
  const operations = strings(r['operations']);
  if (operations.length === 0) errs.push(required(path.child('operations')));
  if (operations.length > 1 && operations.includes('*')) errs.push(invalid(path.child('operations'), operations, "if '*' is present, must not specify other operations"));
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(notSupported(path.child('operations').index(i), op, OPERATIONS));
  });
  const groups = strings(r['apiGroups']);
  if (groups.length === 0) errs.push(required(path.child('apiGroups')));
  if (groups.length > 1 && groups.includes('*')) errs.push(invalid(path.child('apiGroups'), groups, "if '*' is present, must not specify other API groups"));
  const versions = strings(r['apiVersions']);
  if (versions.length === 0) errs.push(required(path.child('apiVersions')));
  if (versions.length > 1 && versions.includes('*')) errs.push(invalid(path.child('apiVersions'), versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(required(path.child('apiVersions').index(i)));
  });
  errs.push(...validateResources(strings(r['resources']), path.child('resources')));
  const scope = asString(r['scope']);
  if (scope !== undefined && !SCOPES.includes(scope)) errs.push(notSupported(path.child('scope'), scope, SCOPES));
  return errs;
}

function validateUrl(url: string, path: FieldPath): FieldError[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch (err) {
    return [required(path, `url must be a valid URL: ${err instanceof Error ? err.message : String(err)}${URL_FORM}`)];
  }
  const errs: FieldError[] = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') errs.push(invalid(path, scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (u.host === '') errs.push(invalid(path, u.host, `host must be specified${URL_FORM}`));
  if (u.username !== '' || u.password !== '') errs.push(invalid(path, u.password === '' ? u.username : `${u.username}:${u.password}`, 'user information is not permitted in the URL'));
  if (u.hash !== '') errs.push(invalid(path, u.hash.slice(1), 'fragments are not permitted in the URL'));
  if (u.search !== '') errs.push(invalid(path, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return errs;
}

function validateService(service: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if ((asString(service['name']) ?? '') === '') errs.push(required(path.child('name'), 'service name is required'));
  if ((asString(service['namespace']) ?? '') === '') errs.push(required(path.child('namespace'), 'service namespace is required'));
  const port = asNumber(service['port']) ?? 443;
  const portErrs = isValidPortNum(port);
  if (portErrs.length > 0) errs.push(invalid(path.child('port'), port, `port is not valid: ${portErrs.join(', ')}`));
  const urlPath = asString(service['path']);
  if (urlPath === undefined || urlPath === '' || urlPath === '/') return errs;
  if (urlPath === '//') return [...errs, invalid(path.child('path'), urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) errs.push(invalid(path.child('path'), urlPath, "must start with a '/'"));
  let rest = urlPath.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step === '') {
      errs.push(invalid(path.child('path'), urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const failure of isDNS1123Subdomain(step)) errs.push(invalid(path.child('path'), urlPath, `segment[${i}]: ${failure}`));
  });
  return errs;
}

function validateReviewVersions(versions: string[], path: FieldPath): FieldError[] {
  if (versions.length === 0) return [required(path, `must specify one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalid(path.index(i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const msg of isDNS1035Label(v)) errs.push(invalid(path.index(i), v, msg));
  });
  if (!versions.some((v) => ACCEPTED_REVIEW_VERSIONS.includes(v))) errs.push(invalid(path, versions, `must include at least one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`));
  return errs;
}

function validateWebhook(hook: unknown, path: FieldPath, mutating: boolean, requireNoSideEffects: boolean, validateConditions: boolean): FieldError[] {
  const h = asRecord(hook) ?? {};
  const errs = validateFullyQualifiedName(asString(h['name']) ?? '', path.child('name'));
  (asArray(h['rules']) ?? []).forEach((rule, i) => errs.push(...validateRule(rule, path.child('rules').index(i))));
  const failurePolicy = asString(h['failurePolicy']);
  if (failurePolicy !== undefined && !['Fail', 'Ignore'].includes(failurePolicy)) errs.push(notSupported(path.child('failurePolicy'), failurePolicy, ['Fail', 'Ignore']));
  const matchPolicy = asString(h['matchPolicy']);
  if (matchPolicy !== undefined && !['Equivalent', 'Exact'].includes(matchPolicy)) errs.push(notSupported(path.child('matchPolicy'), matchPolicy, ['Equivalent', 'Exact']));
  const sideEffects = asString(h['sideEffects']);
  if (sideEffects === undefined) errs.push(required(path.child('sideEffects'), `must specify one of ${NO_SIDE_EFFECT_CLASSES.join(', ')}`));
  else {
    if (!SIDE_EFFECT_CLASSES.includes(sideEffects)) errs.push(notSupported(path.child('sideEffects'), sideEffects, SIDE_EFFECT_CLASSES));
    if (requireNoSideEffects && !NO_SIDE_EFFECT_CLASSES.includes(sideEffects)) errs.push(notSupported(path.child('sideEffects'), sideEffects, NO_SIDE_EFFECT_CLASSES));
  }
  const timeout = asNumber(h['timeoutSeconds']);
  if (timeout !== undefined && (timeout > 30 || timeout < 1)) errs.push(invalid(path.child('timeoutSeconds'), timeout, 'the timeout value must be between 1 and 30 seconds'));
  errs.push(...validateLabelSelector(h['namespaceSelector'], path.child('namespaceSelector')));
  errs.push(...validateLabelSelector(h['objectSelector'], path.child('objectSelector')));
  const cc = asRecord(h['clientConfig']) ?? {};
  const ccPath = path.child('clientConfig');
  const url = asString(cc['url']);
  const service = asRecord(cc['service']);
  if ((url === undefined) === (service === undefined)) errs.push(required(ccPath, 'exactly one of url or service is required'));
  else if (url !== undefined) errs.push(...validateUrl(url, ccPath.child('url')));
  else if (service !== undefined) errs.push(...validateService(service, ccPath.child('service')));
  if (mutating) {
    const reinvocation = asString(h['reinvocationPolicy']);
    if (reinvocation !== undefined && !['IfNeeded', 'Never'].includes(reinvocation)) errs.push(notSupported(path.child('reinvocationPolicy'), reinvocation, ['IfNeeded', 'Never']));
  }
  if (validateConditions) errs.push(...validateMatchConditions(matchConditionsOf(h['matchConditions']), path.child('matchConditions')));
  return errs;
}

function matchConditionsOf(value: unknown): MatchConditionSpec[] {
  return (asArray(value) ?? []).map((c) => {
    const r = asRecord(c) ?? {};
    return { name: asString(r['name']) ?? '', expression: asString(r['expression']) ?? '' };
  });
}

/** validateMatchConditions / validateMatchCondition (webhooks: no params, an authorizer). */
function validateMatchConditions(conditions: MatchConditionSpec[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS) errs.push(tooMany(path, conditions.length, MAX_MATCH_CONDITIONS));
  const names = new Set<string>();
  conditions.forEach((c, i) => {
    const p = path.index(i);
    const expression = c.expression.trim();
    if (expression === '') errs.push(required(p.child('expression')));
    else {
      const compiled = compileMatchCondition(expression);
      if (!compiled.ok) errs.push(invalid(p.child('expression'), expression, compiled.error));
    }
    if (c.name === '') errs.push(required(p.child('name')));
    else for (const msg of isQualifiedName(c.name)) errs.push(invalid(p.child('name'), c.name, msg));
    if (c.name !== '') {
      if (names.has(c.name)) errs.push(duplicate(p.child('name'), c.name));
      else names.add(c.name);
    }
  });
  return errs;
}

/**
 * ignore{Mutating,Validating}WebhookMatchConditions: an update that keeps
 * the number of webhooks and every webhook's matchConditions does not
 * validate them again.
 */
function matchConditionsUnchanged(hooks: unknown[], oldHooks: unknown[]): boolean {
  if (hooks.length !== oldHooks.length) return false;
  const conditions = (h: unknown) => {
    const list = asArray(asRecord(h)?.['matchConditions']);
    return list === undefined || list.length === 0 ? undefined : list;
  };
  return hooks.every((h, i) => deepEqual(conditions(h), conditions(oldHooks[i])));
}

/**
 * Validation of a whole configuration. On update, webhooks that already had
 * `Unknown`/`Some` side effects keep them (upstream only insists on None or
 * NoneOnDryRun for objects that complied before), and unchanged
 * matchConditions are not validated again.
 */
export function validateWebhookConfiguration(obj: KubeObject, mutating: boolean, old?: KubeObject): FieldError[] {
  const oldHooks = old === undefined ? undefined : (asArray(old['webhooks']) ?? []);
  const requireNoSideEffects =
    oldHooks === undefined || oldHooks.every((h) => NO_SIDE_EFFECT_CLASSES.includes(asString(asRecord(h)?.['sideEffects']) ?? ''));
  const hooks = asArray(obj['webhooks']) ?? [];
  const validateConditions = oldHooks === undefined || !matchConditionsUnchanged(hooks, oldHooks);
  const errs: FieldError[] = [];
  const names = new Set<string>();
  hooks.forEach((hook, i) => {
    const path = root('webhooks').index(i);
    errs.push(...validateWebhook(hook, path, mutating, requireNoSideEffects, validateConditions));
    errs.push(...validateReviewVersions(strings(asRecord(hook)?.['admissionReviewVersions']), path.child('admissionReviewVersions')));
    const name = asString(asRecord(hook)?.['name']) ?? '';
    if (name !== '') {
      if (names.has(name)) errs.push(duplicate(path.child('name'), name));
      else names.add(name);
    }
  });
  return errs;
}

// ---- parsing for the dispatcher ----

function parseRule(rule: unknown): WebhookRule {
  const r = asRecord(rule) ?? {};
  return {
    operations: strings(r['operations']),
    apiGroups: strings(r['apiGroups']),
    apiVersions: strings(r['apiVersions']),
    resources: strings(r['resources']),
    scope: asString(r['scope']) ?? '*',
  };
}

function parseSelector(value: unknown): WebhookAccessor['namespaceSelector'] {
  // An absent selector is defaulted to {} (match everything), never to nil.
  if (value === undefined || value === null) return labelSelectorAsSelector({});
  return labelSelectorAsSelector(value as LabelSelector);
}

function decodeCaBundle(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return Buffer.from(value, 'base64').toString('utf8');
}

function parseClientConfig(value: unknown): WebhookClientConfig {
  const cc = asRecord(value) ?? {};
  const out: WebhookClientConfig = {};
  const url = asString(cc['url']);
  if (url !== undefined) out.url = url;
  const service = asRecord(cc['service']);
  if (service !== undefined) {
    const ref: ServiceReference = { namespace: asString(service['namespace']) ?? '', name: asString(service['name']) ?? '', port: asNumber(service['port']) ?? 443 };
    const path = asString(service['path']);
    if (path !== undefined) ref.path = path;
    out.service = ref;
  }
  const ca = decodeCaBundle(cc['caBundle']);
  if (ca !== undefined) out.caPem = ca;
  return out;
}

/** The webhooks of a stored configuration, in their order. */
export function webhooksOf(config: KubeObject, mutating: boolean): WebhookAccessor[] {
  const configurationName = asString(config.metadata?.name) ?? '';
  return (asArray(config['webhooks']) ?? []).map((hook, index) => {
    const h = asRecord(hook) ?? {};
    const name = asString(h['name']) ?? '';
    const timeout = asNumber(h['timeoutSeconds']);
    return {
      uid: `${configurationName}/${name}/${index}`,
      name,
      configurationName,
      mutating,
      rules: (asArray(h['rules']) ?? []).map(parseRule),
      failurePolicy: asString(h['failurePolicy']) === 'Ignore' ? 'Ignore' : 'Fail',
      matchPolicy: asString(h['matchPolicy']) === 'Exact' ? 'Exact' : 'Equivalent',
      namespaceSelector: parseSelector(h['namespaceSelector']),
      objectSelector: parseSelector(h['objectSelector']),
      sideEffects: asString(h['sideEffects']) ?? '',
      timeoutSeconds: timeout === undefined || timeout <= 0 ? DEFAULT_TIMEOUT_SECONDS : Math.min(timeout, 30),
      admissionReviewVersions: strings(h['admissionReviewVersions']),
      reinvocationPolicy: asString(h['reinvocationPolicy']) === 'IfNeeded' ? 'IfNeeded' : 'Never',
      clientConfig: parseClientConfig(h['clientConfig']),
      matchConditions: matchConditionsOf(h['matchConditions']),
    };
  });
}
