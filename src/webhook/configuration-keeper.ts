/**
 * `ConfigurationKeeper` (D22): keeps what the manager owns in its two webhook
 * configurations true, within moments of anything changing it — the leader
 * runs it (manager.ts).
 *
 * What it owns, and nothing else (the chart or `--register-webhooks` writes
 * the rest: URLs, services, rules, policies, other selector requirements):
 * - the `caBundle` of every webhook, when the manager knows the CA (its
 *   generated one, or `ca.crt` of `--cert-dir`); with a CA injector it is not
 *   touched;
 * - with the `namespaces` scope, the managed requirement of the pod webhooks'
 *   namespaceSelector (registration.ts): the namespaces that hold a
 *   WorkloadSpread, and for deletions and evictions a DomainDisruptionBudget;
 * - on API servers that evaluate `matchConditions` (1.28+), the pod DELETE
 *   webhook's condition `skip-terminating-pods`: the kubelet's final DELETE
 *   of a pod that is already terminating cannot change any bookkeeping, so
 *   the API server need not call (every deleted pod used to cost two
 *   reviews). Other conditions are left as they are.
 *
 * It is level-triggered: both configurations are watched (by name), and a
 * change to either, a WorkloadSpread or budget appearing in or leaving a
 * namespace, or a new CA queues a check of both; a check compares what is
 * stored with what is wanted and writes only a difference (an update with the
 * stored resourceVersion: a conflict is retried with back-off). So `helm
 * upgrade` resetting a selector, or someone deleting a caBundle, is repaired
 * as soon as the watch tells. A configuration that does not exist is left
 * alone (not installed, or being replaced). Start at `ConfigurationKeeper`.
 *
 * `NamespaceReach` closes most of the moment between a WorkloadSpread's
 * creation and the keeper's update: the WorkloadSpread (and budget)
 * validating webhook, on every replica, adds the namespace to the pod
 * webhooks' reach before it admits the object's creation, so the workload's
 * pods created after it already reach the webhook. It only ever adds; the
 * keeper removes namespaces that no longer hold anything.
 */
import type { Clock } from '../clock/clock.ts';
import { isConflict, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import { QueueLoop } from '../client/queue-loop.ts';
import type { Runnable } from '../client/runnable.ts';
import { BUILTIN, type ResourceRef } from '../client/resources.ts';
import { Informer } from '../client/store.ts';
import type { WatcherOptions } from '../client/watcher.ts';
import { deepEqual, isPlainObject } from '../k8s/json.ts';
import type { KubeObject } from '../k8s/types.ts';
import { excludedNamespaces, isManagedRequirement, namespacesRequirement, podWebhookNamespaces, WEBHOOK_NAMES, withManagedRequirement, type WebhookScopeKind } from './registration.ts';

type Webhook = Record<string, unknown>;

/**
 * Read-modify-write of one configuration's webhooks with optimistic
 * concurrency (conflicts re-read, up to 5 attempts); no write when `edit`
 * changes nothing. `missing` when the configuration does not exist.
 */
export async function updateWebhooks(client: KubeClient, ref: ResourceRef, name: string, edit: (webhook: Webhook) => Webhook): Promise<'updated' | 'unchanged' | 'missing'> {
  for (let attempt = 1; ; attempt++) {
    let config: KubeObject;
    try {
      config = await client.get(ref, name);
    } catch (err) {
      if (isNotFound(err)) return 'missing';
      throw err;
    }
    const next = editedWebhooks(config, edit);
    if (next === undefined) return 'unchanged';
    try {
      await client.update(ref, { ...config, webhooks: next });
      return 'updated';
    } catch (err) {
      if (isConflict(err) && attempt < 5) continue;
      throw err;
    }
  }
}

/** The configuration's webhooks after `edit`, or undefined when nothing changed. */
function editedWebhooks(config: KubeObject, edit: (webhook: Webhook) => Webhook): unknown[] | undefined {
  const webhooks = Array.isArray(config['webhooks']) ? (config['webhooks'] as unknown[]) : [];
  let changed = false;
  const next = webhooks.map((w) => {
    if (!isPlainObject(w)) return w;
    const edited = edit(w);
    if (edited !== w && !deepEqual(edited, w)) changed = true;
    return edited;
  });
  return changed ? next : undefined;
}

/** The pod DELETE webhook's condition: a pod already terminating (the kubelet's final DELETE) is not sent. */
export const SKIP_TERMINATING_CONDITION = Object.freeze({ name: 'skip-terminating-pods', expression: '!has(oldObject.metadata.deletionTimestamp)' });

/** `webhook` with our match condition (replacing one of the same name), other conditions kept. */
export function withSkipTerminating(webhook: Webhook): Webhook {
  const conditions = Array.isArray(webhook['matchConditions']) ? (webhook['matchConditions'] as unknown[]) : [];
  const ours = conditions.find((c) => isPlainObject(c) && c['name'] === SKIP_TERMINATING_CONDITION.name);
  if (isPlainObject(ours) && ours['expression'] === SKIP_TERMINATING_CONDITION.expression) return webhook;
  const others = conditions.filter((c) => !(isPlainObject(c) && c['name'] === SKIP_TERMINATING_CONDITION.name));
  return { ...webhook, matchConditions: [...others, { ...SKIP_TERMINATING_CONDITION }] };
}

/** Whether an API server of this version (`/version`'s major and minor, e.g. "1", "28+") evaluates webhook matchConditions (beta, on by default, since 1.28). */
export function supportsMatchConditions(version: { major?: unknown; minor?: unknown }): boolean {
  const major = Number.parseInt(String(version.major ?? ''), 10);
  const minor = Number.parseInt(String(version.minor ?? ''), 10);
  return major > 1 || (major === 1 && minor >= 28);
}

/** `webhook` with `caBundle` (base64) in its clientConfig. */
export function withCaBundle(webhook: Webhook, caBundle: string): Webhook {
  const clientConfig = isPlainObject(webhook['clientConfig']) ? webhook['clientConfig'] : {};
  return clientConfig['caBundle'] === caBundle ? webhook : { ...webhook, clientConfig: { ...clientConfig, caBundle } };
}

export interface ConfigurationKeeperOptions {
  client: KubeClient;
  clock: Clock;
  log?: Logger;
  mutatingName: string;
  validatingName: string;
  managerNamespace: string;
  scope: WebhookScopeKind;
  guardPodDeletion: boolean;
  /** The API server evaluates webhook matchConditions: the pod DELETE webhook skips terminating pods. */
  matchConditions: boolean;
  /** Namespaces holding a WorkloadSpread / a DomainDisruptionBudget now (the caches). */
  workloadSpreadNamespaces(): Iterable<string>;
  budgetNamespaces(): Iterable<string>;
  /** The CA bundle (PEM) the API server must trust; undefined: not ours to set. */
  caBundle(): string | undefined;
  /** Calls `changed` whenever one of the three inputs above may have changed; returns the unsubscribers. */
  subscribe(changed: () => void): (() => void)[];
  /** Resolves once the caches behind the inputs have synced. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  watcher?: Partial<Pick<WatcherOptions, 'metrics' | 'resyncMs'>>;
}

/** The pod webhooks' managed requirement per webhook name, for the namespaces scope. */
export function wantedRequirements(o: Pick<ConfigurationKeeperOptions, 'managerNamespace' | 'guardPodDeletion' | 'workloadSpreadNamespaces' | 'budgetNamespaces'>): Map<string, ReturnType<typeof namespacesRequirement>> {
  const scope = { kind: 'namespaces' as const, workloadSpreads: [...o.workloadSpreadNamespaces()], budgets: [...o.budgetNamespaces()] };
  const excluded = excludedNamespaces(o.managerNamespace);
  return new Map(Object.entries(podWebhookNamespaces(scope, o.guardPodDeletion)).map(([name, namespaces]) => [name, namespacesRequirement(namespaces, excluded)]));
}

/** `selector` with `namespace` added to its managed requirement (unchanged when it is there, or excluded). */
export function withNamespaceAdded(selector: unknown, namespace: string, excluded: readonly string[]): unknown {
  if (excluded.includes(namespace)) return selector;
  const expressions = isPlainObject(selector) && Array.isArray(selector['matchExpressions']) ? selector['matchExpressions'] : [];
  const managed = expressions.find(isManagedRequirement) as { operator?: unknown; values?: unknown } | undefined;
  const current = managed?.operator === 'In' && Array.isArray(managed.values) ? managed.values.filter((v): v is string => typeof v === 'string') : [];
  if (current.includes(namespace)) return selector;
  return withManagedRequirement(selector, namespacesRequirement([...current, namespace], excluded));
}

export interface NamespaceReachOptions {
  client: KubeClient;
  mutatingName: string;
  validatingName: string;
  managerNamespace: string;
  guardPodDeletion: boolean;
  /** The namespaces the manager caches (`--watch-namespaces`): no other joins the reach. Undefined: all. */
  watchNamespaces?: readonly string[];
  log?: Logger;
}

export class NamespaceReach {
  readonly #o: NamespaceReachOptions;

  constructor(options: NamespaceReachOptions) {
    this.#o = options;
  }

  /**
   * Makes the pod webhooks reach `namespace`, where an object of `kind` is
   * about to be created. Failures are logged, not thrown: the keeper adds the
   * namespace once the object is stored anyway.
   */
  async include(kind: 'workloadspread' | 'budget', namespace: string): Promise<void> {
    const o = this.#o;
    if (o.watchNamespaces !== undefined && !o.watchNamespaces.includes(namespace)) return;
    const scope = { kind: 'namespaces' as const, workloadSpreads: kind === 'workloadspread' ? [namespace] : [], budgets: kind === 'budget' ? [namespace] : [] };
    const reach = podWebhookNamespaces(scope, o.guardPodDeletion);
    const excluded = excludedNamespaces(o.managerNamespace);
    const edit = (w: Webhook): Webhook => {
      if ((reach[String(w['name'] ?? '')] ?? []).length === 0) return w;
      const selector = withNamespaceAdded(w['namespaceSelector'], namespace, excluded);
      return selector === w['namespaceSelector'] ? w : { ...w, namespaceSelector: selector };
    };
    const targets: [ResourceRef, string][] = [[BUILTIN.validatingwebhookconfigurations, o.validatingName]];
    if ((reach[WEBHOOK_NAMES.mutatePod] ?? []).length > 0) targets.unshift([BUILTIN.mutatingwebhookconfigurations, o.mutatingName]);
    for (const [ref, name] of targets) {
      try {
        const result = await updateWebhooks(o.client, ref, name, edit);
        if (result === 'updated') o.log?.info({ configuration: name, namespace }, `pod webhooks now reach namespace ${namespace}`);
      } catch (err) {
        o.log?.warn({ configuration: name, namespace, err: err instanceof Error ? err.message : String(err) }, 'could not add the namespace to the pod webhooks; the leader will');
      }
    }
  }
}

const KEYS = ['mutating', 'validating'] as const;
type Key = (typeof KEYS)[number];

export class ConfigurationKeeper implements Runnable {
  readonly name: string;
  readonly #o: ConfigurationKeeperOptions;
  readonly #log: Logger;
  readonly #informers: Record<Key, Informer<KubeObject>>;
  readonly #loop: QueueLoop;

  constructor(options: ConfigurationKeeperOptions) {
    this.#o = options;
    this.#log = options.log ?? silentLogger;
    const informer = (ref: ResourceRef, name: string) =>
      new Informer<KubeObject>({ client: options.client, ref, name: `${ref.resource}/${name}`, fieldSelector: `metadata.name=${name}`, log: this.#log, ...options.watcher });
    this.#informers = {
      mutating: informer(BUILTIN.mutatingwebhookconfigurations, options.mutatingName),
      validating: informer(BUILTIN.validatingwebhookconfigurations, options.validatingName),
    };
    this.#loop = new QueueLoop({
      name: 'webhook-configurations',
      clock: options.clock,
      log: this.#log,
      workers: 1,
      turnPerSync: true,
      resyncMs: 10 * 60_000,
      informers: KEYS.map((k) => this.#informers[k]),
      waitForSync: (signal) => options.waitForSync(signal),
      subscribe: (add) => {
        const all = () => add(KEYS);
        const watched = KEYS.flatMap((k) => {
          const one = () => add([k]);
          const store = this.#informers[k].store;
          return [store.onAdd(one), store.onUpdate(one), store.onDelete(one)];
        });
        return [...watched, ...options.subscribe(all)];
      },
      keys: () => KEYS,
      handle: (key) => this.#check(key as Key),
    });
    this.name = this.#loop.name;
  }

  /** Starts watching both configurations; resolves once they and the manager's caches have synced and the loop runs. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#loop.start(signal);
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** What the webhooks of a configuration should look like (only the fields this keeper owns). */
  #edit(): (webhook: Webhook) => Webhook {
    const pem = this.#o.caBundle();
    const caBundle = pem === undefined || pem === '' ? undefined : Buffer.from(pem, 'utf8').toString('base64');
    const requirements = this.#o.scope === 'namespaces' ? wantedRequirements(this.#o) : undefined;
    return (webhook) => {
      let out = caBundle === undefined ? webhook : withCaBundle(webhook, caBundle);
      if (this.#o.matchConditions && webhook['name'] === WEBHOOK_NAMES.validatePod) out = withSkipTerminating(out);
      const requirement = requirements?.get(String(webhook['name'] ?? ''));
      if (requirement !== undefined) {
        const selector = withManagedRequirement(out['namespaceSelector'], requirement);
        if (!deepEqual(selector, out['namespaceSelector'])) out = { ...out, namespaceSelector: selector };
      }
      return out;
    };
  }

  async #check(key: Key): Promise<void> {
    const name = key === 'mutating' ? this.#o.mutatingName : this.#o.validatingName;
    const stored = this.#informers[key].store.get(undefined, name);
    if (stored === undefined) return;
    const next = editedWebhooks(stored, this.#edit());
    if (next === undefined) return;
    const ref = key === 'mutating' ? BUILTIN.mutatingwebhookconfigurations : BUILTIN.validatingwebhookconfigurations;
    try {
      // The cache's copy carries its resourceVersion: a newer write makes this a conflict, and the queue tries again.
      await this.#o.client.update(ref, { ...stored, webhooks: next });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const selectors = next.filter(isPlainObject).map((w) => [w['name'], w['namespaceSelector']]);
    this.#log.info({ configuration: name, scope: this.#o.scope, selectors: JSON.stringify(selectors) }, 'webhook configuration repaired or brought up to date');
  }

  /** Runs one check of both configurations now (tests). */
  async checkNow(): Promise<void> {
    for (const k of KEYS) await this.#check(k);
  }
}
