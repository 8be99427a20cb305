/**
 * The control loops `startCluster` runs unless told otherwise
 * (`defaultControllers()`), in start order. The kubelet is not in it: the
 * cluster owns it directly, because it registers the nodes the cluster is
 * asked for. The plug-in contract is component.ts.
 * Adding a controller: export a factory next to it and append it below.
 */
import { cloneSetController } from './cloneset.ts';
import type { ControllerFactory } from './component.ts';
import { deploymentController } from './deployment.ts';
import { disruptionController } from './disruption.ts';
import { garbageCollector } from './garbage-collector.ts';
import { jobController } from './job.ts';
import { nodeLifecycleController } from './node-lifecycle.ts';
import { replicaSetController } from './replicaset.ts';
import { schedulerController } from './scheduler.ts';
import { statefulSetController } from './statefulset.ts';

/**
 * The control loops a cluster runs by default (besides its kubelet), in start
 * order: kube-scheduler, then what kube-controller-manager runs, then
 * OpenKruise's CloneSet controller (which installs the CloneSet CRD).
 */
export function defaultControllers(): ControllerFactory[] {
  return [schedulerController, nodeLifecycleController, replicaSetController, deploymentController, statefulSetController, jobController, garbageCollector, disruptionController, cloneSetController];
}
