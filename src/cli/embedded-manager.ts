/**
 * The WorkloadSpread manager as a component of the embedded cluster (what
 * `workloadspread cluster` runs unless `--no-manager`): it installs the
 * WorkloadSpread and DomainDisruptionBudget CRDs and the manager's namespace
 * when they are missing,
 * waits until the CRD is served, then runs the real manager in-process
 * against the cluster's API server — webhooks on loopback, registered by URL
 * with the generated CA, accepting only the API server's client certificate
 * (the cluster's webhook client CA), one replica (no leader election) — so
 * `kubectl apply` of a WorkloadSpread and its workload just works.
 * Start at `embeddedManagerComponent`.
 */
import { domainDisruptionBudgetCrd, workloadSpreadCrd } from '../api/crd.ts';
import { describeError, isAlreadyExists } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import type { Logger } from '../client/logger.ts';
import { BUILTIN } from '../client/resources.ts';
import type { Controller, ControllerFactory } from '../cluster/index.ts';
import type { KubeObject } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import type { BindAddress } from '../manager/endpoints.ts';
import { startManager, type Manager } from '../manager/manager.ts';
import { DEFAULT_MANAGER_NAMESPACE } from './manager.ts';

export const EMBEDDED_MANAGER_NAME = 'workloadspread-manager';
/** How long to wait for a freshly created CRD to be served. */
const CRD_WAIT_MS = 30_000;

export interface EmbeddedManagerOptions {
  namespace?: string;
  /** The manager's log (default: the cluster's logger). */
  log?: Logger;
  /** `/metrics` on loopback (e.g. port 0); omitted: none. */
  metricsAddress?: BindAddress;
  healthAddress?: BindAddress;
  /** Called with the manager once it is ready. */
  onReady?: (manager: Manager) => void;
}

async function createIfMissing(client: KubeClient, ref: Parameters<KubeClient['create']>[0], obj: KubeObject): Promise<void> {
  try {
    await client.create(ref, obj);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/**
 * Creates the CRDs (if missing) and waits until WorkloadSpreads can be
 * listed; the manager's budget cache picks the DomainDisruptionBudget CRD
 * up by itself once it is served.
 */
async function ensureCrd(client: KubeClient): Promise<void> {
  await createIfMissing(client, BUILTIN.customresourcedefinitions, workloadSpreadCrd() as KubeObject);
  await createIfMissing(client, BUILTIN.customresourcedefinitions, domainDisruptionBudgetCrd() as KubeObject);
  const deadline = client.clock.now() + CRD_WAIT_MS;
  for (;;) {
    try {
      await client.list(WORKLOADSPREAD_REF, { limit: 1 });
      return;
    } catch (err) {
      if (client.clock.now() >= deadline) throw new Error(`the WorkloadSpread CRD is not served after ${CRD_WAIT_MS / 1000} s: ${describeError(err)}`);
      await client.clock.sleep(100);
    }
  }
}

export function embeddedManagerComponent(options: EmbeddedManagerOptions = {}): ControllerFactory {
  const namespace = options.namespace ?? DEFAULT_MANAGER_NAMESPACE;
  return {
    name: EMBEDDED_MANAGER_NAME,
    create: ({ client, clock, logger, webhookClientCa }): Controller => {
      let manager: Manager | undefined;
      return {
        name: EMBEDDED_MANAGER_NAME,
        start: async () => {
          await ensureCrd(client);
          await createIfMissing(client, BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
          manager = startManager({
            client,
            clock,
            log: options.log ?? logger,
            namespace,
            identity: EMBEDDED_MANAGER_NAME,
            webhook: { host: '127.0.0.1', port: 0, url: (own) => own, register: true, clientCaPem: webhookClientCa() },
            leaderElection: false,
            ...(options.metricsAddress === undefined ? {} : { metricsAddress: options.metricsAddress }),
            ...(options.healthAddress === undefined ? {} : { healthAddress: options.healthAddress }),
          });
          await manager.ready;
          options.onReady?.(manager);
        },
        stop: async () => {
          await manager?.stop();
        },
      };
    },
  };
}
