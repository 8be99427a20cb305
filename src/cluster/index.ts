/**
 * The embedded Kubernetes' front door: the only module of src/cluster/ that
 * code outside the folder imports (`.dependency-cruiser.cjs`, rule
 * `cluster-door`). Everything else in the folder is internal and may change
 * shape freely.
 *
 * - `startCluster` runs an API server, the control loops and fake nodes on a
 *   clock; `EmbeddedCluster` is what it hands back (clients, kubeconfig, node
 *   operations, settle/advance, the API server's test controls).
 * - `startApiServer` runs the API server alone, for tests of a client that
 *   need no control loops.
 * - `defaultControllers`, `Controller`, `ControllerFactory`: the control
 *   loops a cluster runs and the contract for plugging in more (the CLI runs
 *   the manager as one).
 * - `Kubelet` plays fake nodes (k8s/node-specs.ts) against any API server
 *   (the simulator's `--live` backend); `KUBELET_VERSION` is the version
 *   they report.
 * - The types tests and benchmarks read from the API server's controls
 *   (`FaultHandle`, `ForbiddenRequest`, `RequestCount`).
 *
 * Certificates for loopback HTTPS are in the kit (client/loopback-certificates.ts).
 */
export { startCluster, type ClusterOptions, type EmbeddedCluster } from './cluster.ts';
export { startApiServer, type ApiServer, type ApiServerOptions } from './apiserver/server.ts';
export type { FaultHandle, ForbiddenRequest, RequestCount } from './apiserver/control.ts';
export { defaultControllers } from './controllers/registry.ts';
export type { Controller, ControllerFactory } from './controllers/component.ts';
export { Kubelet } from './controllers/kubelet.ts';
export { KUBELET_VERSION } from './nodes.ts';
