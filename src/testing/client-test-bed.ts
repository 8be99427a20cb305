/**
 * Test support for `src/client/`: the embedded API server on a (virtual)
 * clock and a `KubeClient` connected to it over loopback HTTPS through the
 * same kubeconfig path production uses. Not used by production code.
 */
import type { Clock } from '../clock/clock.ts';
import { connectionFromKubeconfigText, type Connection } from '../client/config.ts';
import { KubeClient, type KubeClientOptions } from '../client/http-client.ts';
import { generateServingCertificate, type ServingCertificate } from '../client/loopback-certificates.ts';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../cluster/index.ts';

export interface ClientTestBed {
  server: ApiServer;
  connection: Connection;
  client: KubeClient;
  /** Another client on the same server (a second manager replica, a test's own writes). */
  newClient(options?: Partial<KubeClientOptions>): Promise<KubeClient>;
  close(): Promise<void>;
}

/** One certificate per test file keeps server start-up fast. */
export function testBedCertificate(): ServingCertificate {
  return generateServingCertificate();
}

export async function startClientTestBed(
  clock: Clock,
  certificate: ServingCertificate,
  options: Partial<ApiServerOptions> & { client?: Partial<KubeClientOptions> } = {},
): Promise<ClientTestBed> {
  const { client: clientOptions, ...serverOptions } = options;
  const server = await startApiServer({ clock, certificate, ...serverOptions });
  const connections: Connection[] = [];
  const connect = async (extra: Partial<KubeClientOptions> = {}): Promise<KubeClient> => {
    const result = await connectionFromKubeconfigText(server.kubeconfig(), { source: 'test bed' });
    if (!result.ok) throw new Error(`${result.error.source}: ${result.error.message}`);
    connections.push(result.connection);
    return new KubeClient(result.connection, { clock, ...clientOptions, ...extra });
  };
  const client = await connect();
  return {
    server,
    connection: client.connection,
    client,
    newClient: connect,
    close: async () => {
      for (const c of connections) c.close();
      await server.close();
    },
  };
}
