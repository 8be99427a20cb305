/**
 * What admission decisions read of the cluster: a synchronous, read-only view
 * (`ClusterView`). The manager's caches implement it (kube/caches.ts); tests
 * and `plan` hand in plain objects. Pure: nothing here fetches anything.
 *
 * A view answers from what it holds. When it cannot answer without the API
 * server — an owner of a kind it does not cache, the target workload in a
 * version it does not watch, a pod an eviction names that its cache does not
 * show — it says which read would answer (`{ read }`), and the decision
 * passes that on as its own result: the caller makes the read, adds what it
 * found to the view, and asks again (webhook/view-reads.ts). So the rules that
 * walk an owner chain or look a pod up stay here, written once, and still
 * never cost an API round trip when the caches know the answer.
 */
import type { Whitelist } from '../api/whitelist.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import type { Lookup } from '../k8s/lookup.ts';
import type { KubeObject, Node, Pod } from '../k8s/types.ts';
import type { PodVersionOptions } from './pod-version.ts';
import type { NodeRequested } from './simulation-schedule.ts';

/** An object by apiVersion, kind and name (an owner reference, a targetRef). */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
}

/** A read from the API server that would answer what the view could not. */
export type ReadRequest =
  /** One object of a workload kind; `exactVersion`: in the ref's own version, not any served one. */
  | { kind: 'object'; namespace: string; ref: ObjectRef; exactVersion: boolean }
  /** One pod, as the API server has it now. */
  | { kind: 'pod'; namespace: string; name: string };

/**
 * A pod this manager's admission placed without reserving anything (an
 * unlimited subset), which its cache may not show yet (D21: such pods are
 * counted for their birth costs from the pods known, not from the status).
 */
export interface RecentPlacement {
  /** The pod's name, or the uid in its marker when it had no name yet. */
  key: string;
  subset: string;
  /** The pod's version (`podVersion`). */
  version: string;
}

/** The pods one WorkloadSpread placed, for one version (`core/placed-count.ts`). */
export interface PlacedTally {
  /** Active pods of the version marked in `subset`. */
  count(subset: string): number;
  /** Whether a pod marked in a subset of the WorkloadSpread (active or not) answers to `key`: its name, or its marker's uid. */
  shows(key: string): boolean;
}

/** What a view answers: a lookup, or the read that would answer it. */
export type ViewLookup<T> = Lookup<T> | { read: ReadRequest };

export interface ClusterView {
  /** The custom-workload whitelist in force (D6), or why it cannot be read. */
  whitelist(): Whitelist | { error: string };
  /** The WorkloadSpreads of a namespace in a stable order (by name), decoded. */
  workloadSpreads(namespace: string): readonly WorkloadSpread[];
  /** One WorkloadSpread (an `error` when the stored object cannot be decoded). */
  workloadSpread(namespace: string, name: string): Lookup<WorkloadSpread>;
  /**
   * One object of a workload kind (an owner on a pod's chain, or a target).
   * Group and kind identify the kind; with `exactVersion` only a copy in the
   * ref's version answers (the target is read by its real version, §5.1).
   */
  object(namespace: string, ref: ObjectRef, options?: { exactVersion?: boolean }): ViewLookup<KubeObject>;
  /** One pod (an eviction names only the pod). */
  pod(namespace: string, name: string): ViewLookup<Pod>;
  /**
   * One pod as the API server has it now (not as a cache may still show it):
   * the read made for this decision, or the read to make. A view that holds
   * the truth itself (tests, `plan`) leaves it out, and `pod` answers.
   */
  freshPod?(namespace: string, name: string): ViewLookup<Pod>;
  /**
   * One object as the API server has it now, the same way: admission reads
   * the target again when a pod finds no room at the replicas the cache shows
   * (the cache may not have seen the scale-out that created the pod). Once
   * read, `object` answers with that copy too. A view may answer with a read
   * another decision made while the cache has not moved since; with
   * `thisDecision` only a read made for this decision answers (one made
   * earlier can predate the scale-out that created this pod).
   */
  freshObject?(namespace: string, ref: ObjectRef, options?: { exactVersion?: boolean; thisDecision?: boolean }): ViewLookup<KubeObject>;
  /** Every node (the simulation schedule, D3). */
  nodes(): readonly Node[];
  /** The pods bound to a node (rebalancing's room check). */
  podsOnNode(nodeName: string): readonly Pod[];
  /**
   * What the pods bound to a node request (the simulation schedule, D3):
   * `requestedOnNode(podsOnNode(nodeName))`, which a cache may keep summed.
   */
  requestedOnNode(nodeName: string): NodeRequested;
  /** The pods whose marker names this WorkloadSpread and a subset, counted for one version (`placedKeys`). */
  placedTally(namespace: string, wsName: string, version: string, options: PodVersionOptions): PlacedTally;
  /** `RecentPlacement`s of the WorkloadSpread with this uid, in admission order. */
  recentPlacements(wsUid: string): readonly RecentPlacement[];
}

/** Whether a view answer is a lookup (as opposed to a read to make first). */
export function isRead<T>(answer: ViewLookup<T>): answer is { read: ReadRequest } {
  return 'read' in answer;
}
