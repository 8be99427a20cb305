/**
 * Wires admission into a server core, in kube-apiserver's plug-in order
 * (NamespaceLifecycle 0 is the core's own): ServiceAccount 110, Priority 130,
 * DefaultTolerationSeconds 140, MutatingAdmissionWebhook 500,
 * ValidatingAdmissionWebhook 510; and replaces the basic `pods/eviction` and
 * `pods/binding` handlers with the full ones (budgets, preconditions).
 * Called once from the core's constructor.
 */
import type { ApiServerHost } from './extension-host.ts';
import { AdmissionWebhooks } from './admission-webhooks.ts';
import { BindingHandler } from './binding.ts';
import { defaultTolerationSecondsAdmission } from './default-toleration-seconds.ts';
import { EvictionHandler } from './eviction.ts';
import { priorityAdmission } from './priority-admission.ts';
import { serviceAccountAdmission } from './service-account-admission.ts';

export function installAdmission(core: ApiServerHost): AdmissionWebhooks {
  core.admission.register(serviceAccountAdmission(core.store));
  core.admission.register(priorityAdmission(core.store));
  core.admission.register(defaultTolerationSecondsAdmission());
  const webhooks = new AdmissionWebhooks({ ops: core.ops, registry: core.registry, store: core.store, clock: core.clock, authorizer: core.authorizer, races: core.races, webhookThread: core.webhookThread });
  core.admission.register(webhooks.mutatingPlugin());
  core.admission.register(webhooks.validatingPlugin());
  core.registry.setSubresourceHandler('', 'v1', 'pods', 'eviction', new EvictionHandler({ ops: core.ops, registry: core.registry, systemContext: () => core.systemContext() }));
  core.registry.setSubresourceHandler('', 'v1', 'pods', 'binding', new BindingHandler(core.ops));
  return webhooks;
}
