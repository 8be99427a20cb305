/**
 * The manager's webhook configurations (`--register-webhooks`):
 * `webhookConfigurations()` builds the MutatingWebhookConfiguration (pods
 * CREATE) and the ValidatingWebhookConfiguration (pods DELETE, pods/eviction
 * CREATE, WorkloadSpread and DomainDisruptionBudget CREATE/UPDATE) as plain objects — a pure function,
 * so the Helm chart renders exactly what the manager registers — and
 * `registerWebhooks()` creates or updates them.
 *
 * Choices: `failurePolicy: Fail` everywhere (placement and quota must not be
 * skipped silently), `sideEffects: NoneOnDryRun` (dry runs reach the webhooks
 * and leave no reservation), `admissionReviewVersions: [v1]`, a 10 s timeout,
 * and for the pod webhooks a namespaceSelector that leaves out the manager's
 * own namespace and kube-system, so the manager can never block its own pods
 * or the control plane's. With the `namespaces` scope (the default), the pod
 * webhooks' selector (D22) also names the namespaces that hold a WorkloadSpread (or,
 * for deletions and evictions, a DomainDisruptionBudget) in one managed
 * requirement, `kubernetes.io/metadata.name In [...]` (`DoesNotExist`, which
 * no namespace matches, while there is none): pods elsewhere never reach the
 * manager, so they are created while it is down and cost the API server no
 * call. The leader keeps that requirement current (configuration-keeper.ts);
 * every other requirement of the selector is left as it is. The pod DELETE webhook selects only pods carrying
 * `workloadspread.io/managed=true` (D21) unless `--guard-pod-deletion` asks
 * for every deletion. Every field the API server would default is set,
 * so comparing what is stored with what is wanted needs no guessing.
 *
 * Registration never rewrites a configuration an installer owns — one Helm
 * manages (`meta.helm.sh/release-name`) or `kubectl apply` wrote
 * (`kubectl.kubernetes.io/last-applied-configuration`): pointing such a
 * configuration's webhooks at a URL would leave the installer's next apply
 * with both `url` and `service`, which the API server refuses (the chart has
 * `webhook.url` for a URL). The manager then keeps only its own fields there
 * (configuration-keeper.ts).
 */
import { describeError, isAlreadyExists, isConflict, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { BUILTIN, type ResourceRef } from '../client/resources.ts';
import { DDB_GROUP, DDB_PLURAL, DDB_VERSION } from '../api/disruption-budget.ts';
import { GROUP, PLURAL, VERSION } from '../api/workloadspread.ts';
import { MANAGED_LABEL, MANAGED_LABEL_VALUE } from '../api/keys.ts';
import { deepEqual, isPlainObject } from '../k8s/json.ts';
import type { KubeObject } from '../k8s/types.ts';
import { MUTATE_POD_PATH, MUTATING_CONFIGURATION_NAME, VALIDATE_DDB_PATH, VALIDATE_POD_PATH, VALIDATE_WORKLOADSPREAD_PATH, VALIDATING_CONFIGURATION_NAME } from './names.ts';

export { MUTATING_CONFIGURATION_NAME, VALIDATING_CONFIGURATION_NAME };

export const WEBHOOK_NAMES = Object.freeze({
  mutatePod: 'mpod.workloadspread.io',
  validatePod: 'vpod.workloadspread.io',
  validatePodEviction: 'vpodeviction.workloadspread.io',
  validateWorkloadSpread: 'vworkloadspread.workloadspread.io',
  validateDomainDisruptionBudget: 'vdomaindisruptionbudget.workloadspread.io',
});

/** `--webhook-url` (a manager outside the cluster) or the Service in front of the manager. */
export type WebhookEndpoint = { url: string } | { service: { name: string; namespace: string; port?: number } };

/** The label every namespace carries with its own name (set by the API server since Kubernetes 1.22). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * Which namespaces' pods reach the pod webhooks: every namespace but the
 * excluded ones (`cluster`, the reference's reach), or only those holding a
 * WorkloadSpread or DomainDisruptionBudget (`namespaces`).
 */
export type WebhookScope =
  | { kind: 'cluster' }
  | { kind: 'namespaces'; workloadSpreads: readonly string[]; budgets: readonly string[] };

export const WEBHOOK_SCOPES = ['namespaces', 'cluster'] as const;
export type WebhookScopeKind = (typeof WEBHOOK_SCOPES)[number];

/**
 * Watching some namespaces only works with the namespaces scope: the cluster
 * scope would send every namespace's pods to a manager that cannot see their
 * WorkloadSpreads. Worded with the caller's names for the two settings.
 */
export function watchNamespacesScopeProblem(watchSetting: string, namespacesScope: string): string {
  return `${watchSetting} needs ${namespacesScope}: the cluster scope sends every namespace's pods to the manager`;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/**
 * The managed requirement for a set of namespaces: `In` those (sorted, the
 * excluded ones left out), or `DoesNotExist` when none remains — no
 * namespace lacks its name label, and `In` needs at least one value.
 */
export function namespacesRequirement(namespaces: Iterable<string>, excluded: Iterable<string> = []): LabelSelectorRequirement {
  const skip = new Set(excluded);
  const values = [...new Set(namespaces)].filter((n) => n !== '' && !skip.has(n)).sort();
  return values.length === 0 ? { key: NAMESPACE_NAME_LABEL, operator: 'DoesNotExist' } : { key: NAMESPACE_NAME_LABEL, operator: 'In', values };
}

/** Whether a requirement is the managed one (the name label with `In` or `DoesNotExist`). */
export function isManagedRequirement(e: unknown): boolean {
  return isPlainObject(e) && e['key'] === NAMESPACE_NAME_LABEL && (e['operator'] === 'In' || e['operator'] === 'DoesNotExist');
}

/**
 * `selector` with its managed requirement replaced by `managed` (appended
 * when there is none); every other requirement and `matchLabels` are kept.
 */
export function withManagedRequirement(selector: unknown, managed: LabelSelectorRequirement): Record<string, unknown> {
  const base = isPlainObject(selector) ? selector : {};
  const expressions = Array.isArray(base['matchExpressions']) ? base['matchExpressions'] : [];
  const at = expressions.findIndex(isManagedRequirement);
  const next = at < 0 ? [...expressions, managed] : expressions.map((e, i) => (i === at ? managed : e)).filter((e, i) => i <= at || !isManagedRequirement(e));
  return { ...base, matchExpressions: next };
}

/** The pod webhooks, and the namespaces each must see under the `namespaces` scope. */
export function podWebhookNamespaces(scope: Extract<WebhookScope, { kind: 'namespaces' }>, guardPodDeletion: boolean): Record<string, readonly string[]> {
  return {
    [WEBHOOK_NAMES.mutatePod]: scope.workloadSpreads,
    // Deletions change WorkloadSpread bookkeeping; with --guard-pod-deletion, budgets check them too.
    [WEBHOOK_NAMES.validatePod]: guardPodDeletion ? [...scope.workloadSpreads, ...scope.budgets] : scope.workloadSpreads,
    [WEBHOOK_NAMES.validatePodEviction]: [...scope.workloadSpreads, ...scope.budgets],
  };
}

export interface WebhookConfigurationOptions {
  /** The manager's namespace: its pods are never sent to the pod webhooks. */
  managerNamespace: string;
  endpoint: WebhookEndpoint;
  /** PEM of the CA that signed the serving certificate; omitted, the configurations carry none (a cert controller fills it). */
  caBundle?: string;
  timeoutSeconds?: number;
  labels?: Record<string, string>;
  /**
   * `--guard-pod-deletion`: disruption budgets check plain pod DELETEs too,
   * of any pod a budget selects, so every pod deletion must reach the
   * manager. Otherwise the pod DELETE webhook selects only pods carrying
   * `workloadspread.io/managed=true` (D21).
   */
  guardPodDeletion?: boolean;
  /** Default `cluster` (every namespace but the excluded ones). */
  scope?: WebhookScope;
}

export interface WebhookConfigurations {
  mutating: KubeObject;
  validating: KubeObject;
}

function clientConfig(options: WebhookConfigurationOptions, path: string): Record<string, unknown> {
  const config: Record<string, unknown> =
    'url' in options.endpoint
      ? { url: `${options.endpoint.url.replace(/\/+$/, '')}${path}` }
      : { service: { namespace: options.endpoint.service.namespace, name: options.endpoint.service.name, path, port: options.endpoint.service.port ?? 443 } };
  if (options.caBundle !== undefined && options.caBundle !== '') config['caBundle'] = Buffer.from(options.caBundle, 'utf8').toString('base64');
  return config;
}

/** Namespaces whose pods never reach the pod webhooks: the manager's own and kube-system. */
export function excludedNamespaces(managerNamespace: string): string[] {
  return [...new Set([managerNamespace, 'kube-system'])].filter((n) => n !== '');
}

function podNamespaceSelector(options: WebhookConfigurationOptions, name: string): Record<string, unknown> {
  const excluded = excludedNamespaces(options.managerNamespace);
  const selector = { matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: 'NotIn', values: excluded }] };
  const scope = options.scope;
  if (scope === undefined || scope.kind === 'cluster') return selector;
  return withManagedRequirement(selector, namespacesRequirement(podWebhookNamespaces(scope, options.guardPodDeletion === true)[name] ?? [], excluded));
}

function rule(operations: string[], apiGroups: string[], apiVersions: string[], resources: string[]): Record<string, unknown> {
  return { operations, apiGroups, apiVersions, resources, scope: 'Namespaced' };
}

/**
 * Pods a WorkloadSpread placed or adopted carry the managed label; deleting
 * any other pod changes no bookkeeping, so the API server need not ask.
 */
export const MANAGED_POD_SELECTOR = Object.freeze({ matchLabels: Object.freeze({ [MANAGED_LABEL]: MANAGED_LABEL_VALUE }) });

function webhook(options: WebhookConfigurationOptions, name: string, path: string, rules: Record<string, unknown>[], podWebhook: boolean, objectSelector: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    clientConfig: clientConfig(options, path),
    rules,
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    namespaceSelector: podWebhook ? podNamespaceSelector(options, name) : {},
    objectSelector,
    sideEffects: 'NoneOnDryRun',
    timeoutSeconds: options.timeoutSeconds ?? 10,
    admissionReviewVersions: ['v1'],
  };
}

/** The two configurations, as the manager registers them and the Helm chart ships them. */
export function webhookConfigurations(options: WebhookConfigurationOptions): WebhookConfigurations {
  const metadata = (name: string): Record<string, unknown> => ({ name, labels: { 'app.kubernetes.io/name': 'workloadspread', ...(options.labels ?? {}) } });
  const mutatePod = { ...webhook(options, WEBHOOK_NAMES.mutatePod, MUTATE_POD_PATH, [rule(['CREATE'], [''], ['v1'], ['pods'])], true), reinvocationPolicy: 'Never' };
  return {
    mutating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: metadata(MUTATING_CONFIGURATION_NAME),
      webhooks: [mutatePod],
    },
    validating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: metadata(VALIDATING_CONFIGURATION_NAME),
      webhooks: [
        webhook(options, WEBHOOK_NAMES.validatePod, VALIDATE_POD_PATH, [rule(['DELETE'], [''], ['v1'], ['pods'])], true, options.guardPodDeletion === true ? {} : structuredClone(MANAGED_POD_SELECTOR)),
        // No objectSelector on evictions: the API server matches it against the
        // Eviction object (which has no labels of the pod), not the pod.
        webhook(options, WEBHOOK_NAMES.validatePodEviction, VALIDATE_POD_PATH, [rule(['CREATE'], [''], ['v1'], ['pods/eviction'])], true),
        webhook(options, WEBHOOK_NAMES.validateWorkloadSpread, VALIDATE_WORKLOADSPREAD_PATH, [rule(['CREATE', 'UPDATE'], [GROUP], [VERSION], [PLURAL])], false),
        webhook(options, WEBHOOK_NAMES.validateDomainDisruptionBudget, VALIDATE_DDB_PATH, [rule(['CREATE', 'UPDATE'], [DDB_GROUP], [DDB_VERSION], [DDB_PLURAL])], false),
      ],
    },
  };
}

/**
 * Selectors are ours in full: a stored selector with more in it than wanted
 * (say the managed-pod selector after `--guard-pod-deletion` was turned on)
 * must be replaced, not taken as containing the wanted `{}`.
 */
const WHOLE_FIELDS = new Set(['objectSelector', 'namespaceSelector']);

/**
 * Whether every field of `want` is present with an equal value in `have`
 * (fields the server added are ignored; selectors compare whole).
 */
export function containsFields(have: unknown, want: unknown): boolean {
  if (Array.isArray(want)) {
    return Array.isArray(have) && have.length === want.length && want.every((w, i) => containsFields(have[i], w));
  }
  if (isPlainObject(want)) {
    if (!isPlainObject(have)) return false;
    return Object.entries(want).every(([k, v]) => (WHOLE_FIELDS.has(k) ? deepEqual(have[k] ?? {}, v) : containsFields(have[k], v)));
  }
  return have === want;
}

/**
 * The webhooks to store: ours, keeping the stored `caBundle` when ours has
 * none (the certificate manager owns it).
 */
function mergeWebhooks(stored: unknown, wanted: unknown): unknown[] {
  const have = Array.isArray(stored) ? stored : [];
  const want = Array.isArray(wanted) ? wanted : [];
  return want.map((w) => {
    if (!isPlainObject(w)) return w;
    const prev = have.find((h) => isPlainObject(h) && h['name'] === w['name']);
    const prevConfig = isPlainObject(prev) && isPlainObject(prev['clientConfig']) ? prev['clientConfig'] : {};
    const config = isPlainObject(w['clientConfig']) ? w['clientConfig'] : {};
    if (config['caBundle'] === undefined && typeof prevConfig['caBundle'] === 'string') {
      return { ...w, clientConfig: { ...config, caBundle: prevConfig['caBundle'] } };
    }
    return w;
  });
}

/** Who installed a stored configuration, when an installer owns it (Helm, `kubectl apply`). */
export function configurationOwner(stored: KubeObject): string | undefined {
  const annotations = stored.metadata?.annotations ?? {};
  const release = annotations['meta.helm.sh/release-name'];
  if (typeof release === 'string' && release !== '') return `Helm release ${release}`;
  if (typeof annotations['kubectl.kubernetes.io/last-applied-configuration'] === 'string') return 'kubectl apply';
  return undefined;
}

export type RegistrationResult = 'created' | 'updated' | 'unchanged' | 'installer-owned';

async function apply(client: KubeClient, ref: ResourceRef, wanted: KubeObject, log: Logger): Promise<RegistrationResult> {
  const name = wanted.metadata?.name ?? '';
  for (let attempt = 1; ; attempt++) {
    let stored: KubeObject | undefined;
    try {
      stored = await client.get(ref, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      if (stored === undefined) {
        await client.create(ref, wanted);
        log.info({ configuration: name }, 'webhook configuration created');
        return 'created';
      }
      const owner = configurationOwner(stored);
      if (owner !== undefined) {
        log.warn({ configuration: name, owner }, `webhook configuration ${name} belongs to ${owner}: --register-webhooks leaves it as installed (the manager keeps only its caBundle and namespaces); with the Helm chart, set webhook.url instead`);
        return 'installer-owned';
      }
      const webhooks = mergeWebhooks(stored['webhooks'], wanted['webhooks']);
      const labels = { ...(stored.metadata?.labels ?? {}), ...(wanted.metadata?.labels ?? {}) };
      if (containsFields(stored['webhooks'], webhooks) && containsFields(stored.metadata?.labels ?? {}, labels)) return 'unchanged';
      await client.update(ref, { ...stored, metadata: { ...stored.metadata, labels }, webhooks });
      log.info({ configuration: name }, 'webhook configuration updated');
      return 'updated';
    } catch (err) {
      if ((isConflict(err) || isAlreadyExists(err)) && attempt < 5) continue;
      throw new Error(`cannot register ${wanted.kind ?? ''} ${name}: ${describeError(err)}`, { cause: err });
    }
  }
}

/** Creates or updates both configurations; idempotent (no write when they already match); an installer-owned one is left alone. */
export async function registerWebhooks(client: KubeClient, configurations: WebhookConfigurations, log: Logger = silentLogger): Promise<{ mutating: RegistrationResult; validating: RegistrationResult }> {
  const mutating = await apply(client, BUILTIN.mutatingwebhookconfigurations, configurations.mutating, log);
  const validating = await apply(client, BUILTIN.validatingwebhookconfigurations, configurations.validating, log);
  return { mutating, validating };
}
