/**
 * The pod status a kubelet (1.32) reports at each stage of a pod's life on a
 * node, as pure functions of the pod, the stage and the clock:
 *
 *   creating    Pending; containers waiting `ContainerCreating` (init
 *               containers `PodInitializing`); PodReadyToStartContainers False
 *   running     Running; containers running (sidecars too), init containers
 *               terminated `Completed`; Ready once the readiness delay passed
 *   terminated  Succeeded / Failed; containers terminated with the given
 *               reason and exit code; Ready False `PodCompleted` / `PodFailed`
 *
 * Conditions the kubelet owns (PodReadyToStartContainers, Initialized,
 * ContainersReady, Ready) are recomputed; every other condition (PodScheduled,
 * readiness gates, DisruptionTarget…) is kept as found. A condition keeps its
 * lastTransitionTime while its status does not change. Ready also requires
 * every `readinessGates` condition to be True, as upstream.
 * Identifiers are derived, not random: containerID = sha256(pod uid, name,
 * restarts), imageID = sha256(image), so a run can be replayed.
 */
import { createHash } from 'node:crypto';
import { deepEqual } from '../../k8s/json.ts';
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import { formatTime } from '../../k8s/time.ts';
import type { Pod, PodCondition } from '../../k8s/types.ts';

export const KUBELET_CONDITIONS = ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'] as const;

export type PodStage =
  | { kind: 'creating' }
  | { kind: 'running'; startedAt: number; ready: boolean }
  | { kind: 'terminated'; phase: 'Succeeded' | 'Failed'; startedAt: number | undefined; finishedAt: number; exitCode: number; reason: string };

export interface StatusContext {
  now: number;
  hostIP: string;
  /** Empty until the sandbox has an address. */
  podIP: string;
  /** When the kubelet first acknowledged the pod (status.startTime). */
  startTime: number;
}

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

/** The image reference as a container runtime reports it ("nginx:1.25" → "docker.io/library/nginx:1.25"). */
export function normalizeImage(image: string): string {
  if (image === '') return image;
  let name = image;
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  if (slash < 0) name = `docker.io/library/${name}`;
  else if (!first.includes('.') && !first.includes(':') && first !== 'localhost') name = `docker.io/${name}`;
  const lastSlash = name.lastIndexOf('/');
  const tail = name.slice(lastSlash + 1);
  if (!tail.includes(':') && !name.includes('@')) name += ':latest';
  return name;
}

export function imageIdOf(image: string): string {
  const normalized = normalizeImage(image);
  const repo = normalized.replace(/[:@][^/]*$/, '');
  return `${repo}@sha256:${sha(normalized)}`;
}

export function containerIdOf(podUid: string, container: string, restarts = 0): string {
  return `containerd://${sha(`${podUid}/${container}/${restarts}`)}`;
}

interface ContainerSpec {
  name: string;
  image: string;
  sidecar: boolean;
}

function containersOf(list: unknown): ContainerSpec[] {
  return (asArray(list) ?? []).map((c) => {
    const r = asRecord(c) ?? {};
    return { name: asString(r['name']) ?? '', image: asString(r['image']) ?? '', sidecar: r['restartPolicy'] === 'Always' };
  });
}

function terminatedState(uid: string, c: ContainerSpec, startedAt: number | undefined, finishedAt: number, exitCode: number, reason: string): Record<string, unknown> {
  const terminated: Record<string, unknown> = { exitCode, reason, finishedAt: formatTime(finishedAt), containerID: containerIdOf(uid, c.name) };
  if (startedAt !== undefined) terminated['startedAt'] = formatTime(startedAt);
  return { terminated };
}

function containerStatus(uid: string, c: ContainerSpec, state: Record<string, unknown>, ready: boolean, started: boolean, withId: boolean): Record<string, unknown> {
  const s: Record<string, unknown> = { name: c.name, image: normalizeImage(c.image), imageID: withId ? imageIdOf(c.image) : '', lastState: {}, ready, restartCount: 0, started, state };
  if (withId) s['containerID'] = containerIdOf(uid, c.name);
  return s;
}

function condition(type: string, status: boolean, now: number, previous: PodCondition | undefined, reason?: string, message?: string): PodCondition {
  const value = status ? 'True' : 'False';
  const c: PodCondition = { type, status: value, lastProbeTime: null, lastTransitionTime: previous?.status === value && previous.lastTransitionTime !== undefined ? previous.lastTransitionTime : formatTime(now) };
  if (reason !== undefined) c.reason = reason;
  if (message !== undefined) c.message = message;
  return c;
}

/** Why Ready is False because of readiness gates, or undefined when every gate is True. */
function readinessGateProblem(pod: Pod, conditions: PodCondition[]): string | undefined {
  for (const gate of asArray(pod.spec?.['readinessGates']) ?? []) {
    const type = asString(asRecord(gate)?.['conditionType']) ?? '';
    const c = conditions.find((x) => x.type === type);
    if (c === undefined) return `corresponding condition of pod readiness gate "${type}" does not exist.`;
    if (c.status !== 'True') return `the status of pod readiness gate "${type}" is not "True", but ${c.status}`;
  }
  return undefined;
}

/** The full `status` of `pod` at `stage`, keeping what the kubelet does not own. */
export function podStatusAt(pod: Pod, stage: PodStage, ctx: StatusContext): Record<string, unknown> {
  const uid = pod.metadata?.uid ?? '';
  const previous = (asRecord(pod.status) ?? {}) as Record<string, unknown>;
  const oldConditions = (asArray(previous['conditions']) ?? []) as PodCondition[];
  const prev = (type: string) => oldConditions.find((c) => asRecord(c)?.['type'] === type);
  const containers = containersOf(pod.spec?.containers);
  const inits = containersOf(pod.spec?.initContainers);
  const names = (list: ContainerSpec[]) => `[${list.map((c) => c.name).join(' ')}]`;
  const now = ctx.now;

  let phase: string;
  let containerStatuses: Record<string, unknown>[];
  let initStatuses: Record<string, unknown>[];
  let sandboxReady: boolean;
  let initialized: boolean;
  let containersReady: boolean;
  let notReadyReason: string;
  switch (stage.kind) {
    case 'creating':
      phase = 'Pending';
      sandboxReady = false;
      initialized = inits.length === 0;
      containersReady = false;
      notReadyReason = 'ContainersNotReady';
      initStatuses = inits.map((c) => containerStatus(uid, c, { waiting: { reason: 'PodInitializing' } }, false, false, false));
      containerStatuses = containers.map((c) => containerStatus(uid, c, { waiting: { reason: inits.length > 0 ? 'PodInitializing' : 'ContainerCreating' } }, false, false, false));
      break;
    case 'running': {
      phase = 'Running';
      sandboxReady = true;
      initialized = true;
      containersReady = stage.ready;
      notReadyReason = 'ContainersNotReady';
      const running = { running: { startedAt: formatTime(stage.startedAt) } };
      initStatuses = inits.map((c) =>
        c.sidecar ? containerStatus(uid, c, running, stage.ready, true, true) : containerStatus(uid, c, terminatedState(uid, c, stage.startedAt, stage.startedAt, 0, 'Completed'), true, false, true),
      );
      containerStatuses = containers.map((c) => containerStatus(uid, c, running, stage.ready, true, true));
      break;
    }
    case 'terminated': {
      phase = stage.phase;
      sandboxReady = false;
      initialized = true;
      containersReady = false;
      notReadyReason = stage.phase === 'Succeeded' ? 'PodCompleted' : 'PodFailed';
      const state = (c: ContainerSpec) => terminatedState(uid, c, stage.startedAt, stage.finishedAt, stage.exitCode, stage.reason);
      initStatuses = inits.map((c) =>
        c.sidecar ? containerStatus(uid, c, state(c), false, false, true) : containerStatus(uid, c, terminatedState(uid, c, stage.startedAt, stage.startedAt ?? stage.finishedAt, 0, 'Completed'), true, false, true),
      );
      containerStatuses = containers.map((c) => containerStatus(uid, c, state(c), false, false, true));
      break;
    }
  }

  const others = oldConditions.filter((c) => !(KUBELET_CONDITIONS as readonly string[]).includes(asString(asRecord(c)?.['type']) ?? ''));
  const unready = notReadyReason === 'ContainersNotReady' ? `containers with unready status: ${names(containers)}` : undefined;
  const containersReadyCondition = containersReady ? condition('ContainersReady', true, now, prev('ContainersReady')) : condition('ContainersReady', false, now, prev('ContainersReady'), notReadyReason, unready);
  let readyCondition = containersReady ? condition('Ready', true, now, prev('Ready')) : condition('Ready', false, now, prev('Ready'), notReadyReason, unready);
  const gateProblem = containersReady ? readinessGateProblem(pod, others) : undefined;
  if (gateProblem !== undefined) readyCondition = condition('Ready', false, now, prev('Ready'), 'ReadinessGatesNotReady', gateProblem);
  const initializedCondition = initialized
    ? condition('Initialized', true, now, prev('Initialized'))
    : condition('Initialized', false, now, prev('Initialized'), 'ContainersNotInitialized', `containers with incomplete status: ${names(inits.filter((c) => !c.sidecar))}`);
  const conditions = [condition('PodReadyToStartContainers', sandboxReady, now, prev('PodReadyToStartContainers')), initializedCondition, readyCondition, containersReadyCondition, ...others];

  const status: Record<string, unknown> = { ...previous, phase, conditions, hostIP: ctx.hostIP, hostIPs: [{ ip: ctx.hostIP }], startTime: formatTime(ctx.startTime), containerStatuses };
  if (inits.length > 0) status['initContainerStatuses'] = initStatuses;
  else delete status['initContainerStatuses'];
  if (ctx.podIP !== '' && stage.kind !== 'creating') {
    status['podIP'] = ctx.podIP;
    status['podIPs'] = [{ ip: ctx.podIP }];
  }
  // A pod-level reason/message (e.g. a previous eviction) belongs to the pod's previous life.
  delete status['reason'];
  delete status['message'];
  return status;
}

/** Whether writing `next` would change the pod's status (timestamps of unchanged conditions are kept, so a no-op compares equal). */
export function statusChanged(pod: Pod, next: Record<string, unknown>): boolean {
  return !deepEqual(pod.status ?? {}, next);
}
