/**
 * What every simulated control-plane component needs to talk like a real one:
 * its own user agent (`workloadspread-embedded/<component>`, so every write in
 * the API server's logs and request counters is attributable) and an event
 * recorder reporting as that component.
 *
 * A client that already carries an embedded user agent is used as given (the
 * cluster harness may build one per component); any other is re-created on
 * the same connection with the component's user agent. Components cache
 * objects without managedFields, as kube-controller-manager and
 * kube-scheduler do.
 */
import type { Clock } from '../../clock/clock.ts';
import { EventRecorder } from '../../client/event-recorder.ts';
import { KubeClient } from '../../client/http-client.ts';
import type { Logger } from '../../client/logger.ts';

export const EMBEDDED_USER_AGENT_PREFIX = 'workloadspread-embedded/';

export function componentClient(client: KubeClient, clock: Clock, component: string): KubeClient {
  if (client.userAgent.startsWith(EMBEDDED_USER_AGENT_PREFIX) && client.clock === clock) return client;
  const options: ConstructorParameters<typeof KubeClient>[1] = { clock, userAgent: `${EMBEDDED_USER_AGENT_PREFIX}${component}`, watchWithoutManagedFields: true };
  if (client.fieldManager !== undefined) options.fieldManager = client.fieldManager;
  return new KubeClient(client.connection, options);
}

export function componentRecorder(client: KubeClient, component: string, log: Logger | undefined): EventRecorder {
  return new EventRecorder({ client, reportingController: component, reportingInstance: `${component}-embedded`, ...(log !== undefined ? { log } : {}) });
}
