/**
 * What the admission handlers read from the cluster, as one interface the
 * manager fills from `src/kube/` (the informer caches, the workload resolver
 * and the whitelist source), and tests fill from plain objects.
 *
 * Everything here is a cache read except for kinds the manager does not
 * cache (`ownerLookup`, `targetWorkload` fetch those through the API) — admission must not cost
 * API round trips per pod beyond the status write (D13).
 * Lookups report "not found" and "failed" apart, because the reference treats
 * them differently (§2.1 step 8, §3.3, §3.4).
 */
import type { WhitelistReadError } from '../api/validation.ts';
import type { Whitelist } from '../api/whitelist.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { NodeRequested } from '../core/simulation-schedule.ts';
import type { OwnerLookup } from '../core/pod-selection.ts';
import type { KubeObject, Node, OwnerReference, Pod } from '../k8s/types.ts';
import type { EngineEvent } from '../core/events.ts';

export type Lookup<T> = { found: T } | { notFound: true } | { error: string };

export interface AdmissionSources {
  /** The custom-workload whitelist in force (D6), or why it cannot be read. */
  whitelist(): Whitelist | WhitelistReadError;
  /** The WorkloadSpreads of a namespace, from the informer cache, in a stable order. */
  workloadSpreads(namespace: string): readonly WorkloadSpread[];
  /** One WorkloadSpread from the informer cache. */
  workloadSpread(namespace: string, name: string): Lookup<WorkloadSpread>;
  /**
   * Core's synchronous `OwnerLookup` for a pod whose controller is `owner`,
   * prepared by walking the chain of supported owners (cache first; a kind the
   * manager does not cache is fetched once).
   */
  ownerLookup(namespace: string, owner: OwnerReference | undefined): Promise<OwnerLookup>;
  /** A pod from the cache (eviction reviews carry only its name). */
  pod(namespace: string, name: string): Lookup<Pod>;
  /** A pod straight from the API server (a cache miss: just created, or gone). */
  freshPod(namespace: string, name: string): Promise<Lookup<Pod>>;
  /** The target workload of a WorkloadSpread, by its real group and version. */
  targetWorkload(namespace: string, targetRef: { apiVersion: string; kind: string; name: string }): Promise<Lookup<KubeObject>>;
  /** Nodes, for the simulation schedule (D3). */
  nodes(): readonly Node[];
  /** What the pods already bound to a node request (D3). */
  requestedOnNode(nodeName: string): NodeRequested;
}

/** Where admission reports user-facing events (a kube EventRecorder in the manager). */
export interface AdmissionEvents {
  record(ws: WorkloadSpread, event: EngineEvent): void;
}
