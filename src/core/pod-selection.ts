/**
 * Which WorkloadSpread (if any) a new pod belongs to: the pre-filters and the
 * matching loop of pod admission (spec §2.1 steps 5–9), the recursive owner
 * comparison (§2.2) and the targetFilter rule (§1.2 with DECISIONS D5).
 *
 * Start at `matchWorkloadSpreadForPod`. Owner objects are read through the
 * caller's `OwnerLookup` (a view of the caches, core/cluster-view.ts); an owner
 * the view cannot answer for ends the match with the read to make first, so
 * this stays pure and the chain is walked in one place.
 *
 * Invariants: groups are compared, versions never are (apps.kruise.io/v1alpha1
 * equals apps.kruise.io/v1beta1); of two WorkloadSpreads of one workload only
 * the one that takes precedence is considered (target-conflict.ts); an owner
 * that cannot be found fails the whole
 * admission (the reference's PR #1807: the workload controller retries), any
 * other per-WorkloadSpread problem only skips that WorkloadSpread.
 */
import { labelSelectorAsSelector } from '../k8s/label-selector.ts';
import { apiVersionGroup, controllerRef, isPodActive } from '../k8s/pod.ts';
import type { OwnerReference, Pod } from '../k8s/types.ts';
import type { TargetReference, WorkloadSpread } from '../api/workloadspread.ts';
import { isWhitelistedOwner, type Whitelist } from '../api/whitelist.ts';
import type { KubeObject } from '../k8s/types.ts';
import type { ObjectRef, ReadRequest, ViewLookup } from './cluster-view.ts';
import { activeWorkloadSpreads, isDeleting } from './target-conflict.ts';

/** Owner kinds whose pods admission considers, besides the whitelist (spec §2.1 step 7). */
export const SUPPORTED_WORKLOAD_KINDS: readonly { group: string; kind: string }[] = [
  { group: 'apps', kind: 'Deployment' },
  { group: 'apps.kruise.io', kind: 'CloneSet' },
  { group: 'apps', kind: 'ReplicaSet' },
  { group: 'batch', kind: 'Job' },
  { group: 'apps', kind: 'StatefulSet' },
  { group: 'apps.kruise.io', kind: 'StatefulSet' },
];

/** Whether pods owned by this group+kind are considered (built-in list, whitelist workloads and their subResources). */
export function isSupportedOwner(group: string, kind: string, whitelist: Whitelist): boolean {
  if (SUPPORTED_WORKLOAD_KINDS.some((w) => w.group === group && w.kind === kind)) return true;
  return isWhitelistedOwner(whitelist, group, kind);
}

/**
 * Whether the WorkloadSpread's targetFilter selects pods with these labels.
 * No targetFilter, or one without a selector, selects everything (D5: the
 * reference's admission selected nothing there while its controller selected
 * everything; one rule now serves both). An empty selector `{}` selects all.
 */
export function targetFilterSelectsPod(
  ws: WorkloadSpread,
  labels: Record<string, string> | undefined,
): { ok: true; selected: boolean } | { ok: false; error: string } {
  const filter = ws.spec.targetFilter;
  if (filter === undefined || filter === null) return { ok: true, selected: true };
  const selector = filter.selector;
  if (selector === undefined || selector === null) return { ok: true, selected: true };
  const converted = labelSelectorAsSelector(selector);
  if (!converted.ok) return { ok: false, error: converted.error };
  return { ok: true, selected: converted.selector.matches(labels ?? {}) };
}

/** An owner object by its reference, in the pod's namespace (a view of the caches). */
export type OwnerLookup = (ref: ObjectRef) => ViewLookup<KubeObject>;

export type ReferenceEqualResult =
  | { ok: true; equal: boolean }
  | { ok: false; notFound: boolean; error: string }
  /** A link of the chain is not in the view: read it, then ask again. */
  | { ok: false; read: ReadRequest };

/** Owner chains in real clusters are 2–3 links; this only stops a malformed cycle. */
const MAX_OWNER_DEPTH = 16;

/**
 * Whether `owner` (a controller ownerReference) is the target workload, or
 * leads to it through supported owners (pod → ReplicaSet → Deployment; pod →
 * whitelisted sub-resource → whitelisted parent). Spec §2.2.
 */
export function isReferenceEqual(
  target: TargetReference,
  owner: OwnerReference | undefined,
  lookup: OwnerLookup,
  whitelist: Whitelist,
): ReferenceEqualResult {
  return new OwnerChain(owner, lookup, whitelist).leadsTo(target);
}

/** One link of an owner chain: an owner reference with its group parsed. */
interface ChainLink {
  apiVersion: string;
  group: string;
  kind: string;
  name: string;
  /** `linkKey(group, kind, name)`. */
  key: string;
}

/** What a target and a chain link are compared by: group (not version), kind and name. */
function linkKey(group: string, kind: string, name: string): string {
  return `${group}\u0000${kind}\u0000${name}`;
}

type ChainStep = { link: ChainLink } | { end: ReferenceEqualResult };

/**
 * A pod's owner chain, walked once however many WorkloadSpreads ask about it
 * (a namespace may hold a hundred): link 0 is the pod's controller, each next
 * link the controller of the previous one, read through the lookup only when
 * a question needs it. The walk ends where §2.2's comparison would end it —
 * no owner, an unparsable apiVersion, an owner kind that is not supported,
 * an owner the view must read first or cannot find — and that end is the
 * answer for every target not met before it.
 */
export class OwnerChain {
  readonly #steps: ChainStep[] = [];
  readonly #owner: OwnerReference | undefined;
  readonly #lookup: OwnerLookup;
  readonly #whitelist: Whitelist;

  constructor(owner: OwnerReference | undefined, lookup: OwnerLookup, whitelist: Whitelist) {
    this.#owner = owner;
    this.#lookup = lookup;
    this.#whitelist = whitelist;
  }

  /** Whether `target` is on the chain (spec §2.2), walking it only as far as needed. */
  leadsTo(target: TargetReference): ReferenceEqualResult {
    const targetGv = apiVersionGroup(target.apiVersion);
    if (!targetGv.ok) return { ok: false, notFound: false, error: targetGv.error };
    return this.reaches(linkKey(targetGv.group, target.kind, target.name));
  }

  /** `leadsTo` for a target given by its `linkKey` (group already parsed). */
  reaches(key: string): ReferenceEqualResult {
    for (let depth = 0; ; depth++) {
      const step = this.#step(depth);
      if ('end' in step) return step.end;
      if (step.link.key === key) return { ok: true, equal: true };
    }
  }

  /** The keys of the links walked so far (all of them once `reaches` has answered anything but `equal`). */
  linkKeys(): string[] {
    const keys: string[] = [];
    for (const step of this.#steps) if ('link' in step) keys.push(step.link.key);
    return keys;
  }

  #step(depth: number): ChainStep {
    while (this.#steps.length <= depth) {
      const last = this.#steps[this.#steps.length - 1];
      if (last !== undefined && 'end' in last) return last;
      this.#steps.push(this.#advance(last?.link));
    }
    return this.#steps[depth] as ChainStep;
  }

  /** The link after `previous` (the pod's controller when there is none). */
  #advance(previous: ChainLink | undefined): ChainStep {
    let current: OwnerReference | undefined | null = this.#owner;
    if (previous !== undefined) {
      // Owner chains in real clusters are 2–3 links; this only stops a malformed cycle.
      if (this.#steps.length >= MAX_OWNER_DEPTH) return { end: { ok: true, equal: false } };
      if (!isSupportedOwner(previous.group, previous.kind, this.#whitelist)) return { end: { ok: true, equal: false } };
      const fetched = this.#lookup({ apiVersion: previous.apiVersion, kind: previous.kind, name: previous.name });
      if ('read' in fetched) return { end: { ok: false, read: fetched.read } };
      if ('notFound' in fetched) return { end: { ok: false, notFound: true, error: `${previous.kind} ${JSON.stringify(previous.name)} not found` } };
      if ('error' in fetched) return { end: { ok: false, notFound: false, error: fetched.error } };
      current = controllerRef(fetched.found);
    }
    if (current === undefined || current === null) return { end: { ok: true, equal: false } };
    const gv = apiVersionGroup(current.apiVersion);
    if (!gv.ok) return { end: { ok: false, notFound: false, error: gv.error } };
    return { link: { apiVersion: current.apiVersion, group: gv.group, kind: current.kind, name: current.name, key: linkKey(gv.group, current.kind, current.name) } };
  }
}

export type PodSkipReason = 'PodInactive' | 'NoControllerRef' | 'UnsupportedOwner';

export type WorkloadSpreadMatch =
  | { kind: 'skip'; reason: PodSkipReason }
  | { kind: 'matched'; ws: WorkloadSpread }
  | { kind: 'none' }
  | { kind: 'read'; read: ReadRequest }
  /** `message` is for the caller (only what its request said); `detail` is for the manager's log. */
  | { kind: 'error'; code: 500; message: string; detail: string };

/**
 * What a pod whose owner cannot be verified is told: only what its own
 * ownerReference says. Never the uid the cluster has (knowing it passes the
 * check), another link of the owner chain, or whether the owner exists — a
 * caller that cannot read the owner learns nothing about it.
 */
export function ownerMismatchMessage(owner: OwnerReference): string {
  return `the pod's ownerReference (${owner.kind} ${JSON.stringify(owner.name)}, uid ${JSON.stringify(owner.uid ?? '')}) does not match its owner, or the owner is not known yet; refused so that the workload controller retries`;
}

/**
 * The WorkloadSpread a new pod belongs to (spec §2.1 steps 5–9): the first in
 * list order that is not being deleted, whose targetRef is the pod's owner
 * (§2.2) and whose targetFilter selects the pod.
 */
export function matchWorkloadSpreadForPod(
  pod: Pod,
  workloadSpreads: readonly WorkloadSpread[],
  lookup: OwnerLookup,
  whitelist: Whitelist,
): WorkloadSpreadMatch {
  if (!isPodActive(pod)) return { kind: 'skip', reason: 'PodInactive' };
  const owner = controllerRef(pod);
  if (owner === undefined) return { kind: 'skip', reason: 'NoControllerRef' };
  const ownerGv = apiVersionGroup(owner.apiVersion);
  if (!ownerGv.ok || !isSupportedOwner(ownerGv.group, owner.kind, whitelist)) {
    return { kind: 'skip', reason: 'UnsupportedOwner' };
  }
  // One WorkloadSpread per workload: a duplicate that lost (older first, then by name) never places pods.
  const index = targetIndex(activeWorkloadSpreads(workloadSpreads));
  const chain = new OwnerChain(owner, lookup, whitelist);
  // In list order, as §2.1 asks; once the chain has been walked to an end that is no error, every
  // WorkloadSpread whose target is not one of its links is passed over, so only those whose target is
  // (found through the index) are visited — the work per pod does not grow with the namespace's list.
  let linked: number[] | undefined;
  let next = 0;
  for (let i = 0; i < index.order.length; i = linked === undefined ? i + 1 : (linked[next++] ?? index.order.length)) {
    const key = index.keys[i];
    if (key === undefined) continue; // being deleted, or a target that cannot be compared
    const ws = index.order[i] as WorkloadSpread;
    const reference = chain.reaches(key);
    if (!reference.ok) {
      if ('read' in reference) return { kind: 'read', read: reference.read };
      if (reference.notFound) return { kind: 'error', code: 500, message: ownerMismatchMessage(owner), detail: reference.error };
    }
    if (!reference.ok || !reference.equal) {
      if (linked === undefined) {
        // The chain ended without error: from here on only the WorkloadSpreads of its links can match.
        linked = index.after(chain.linkKeys(), i);
        next = 0;
      }
      continue;
    }
    const found = matchOnChain(ws, pod, owner, lookup);
    if (found !== undefined) return found;
  }
  return { kind: 'none' };
}

/**
 * §2.1 steps 8–9 for a WorkloadSpread whose target is on the pod's owner
 * chain: undefined when its targetFilter does not select the pod (the next
 * WorkloadSpread is asked), otherwise the match once the pod's owner is verified.
 */
export function matchOnChain(ws: WorkloadSpread, pod: Pod, owner: OwnerReference, lookup: OwnerLookup): WorkloadSpreadMatch | undefined {
  const selection = targetFilterSelectsPod(ws, pod.metadata?.labels);
  if (!selection.ok || !selection.selected) return undefined;
  const verified = verifyPodOwner(owner, lookup);
  if ('read' in verified) return { kind: 'read', read: verified.read };
  if (!verified.ok) return { kind: 'error', code: 500, message: ownerMismatchMessage(owner), detail: verified.error };
  return { kind: 'matched', ws };
}

/** The active WorkloadSpreads of a list in order, with their targets' keys and where each key is targeted. */
interface TargetIndex {
  order: readonly WorkloadSpread[];
  /** Per position: the target's `linkKey`, or undefined when the WorkloadSpread is being deleted or its target's apiVersion cannot be parsed. */
  keys: readonly (string | undefined)[];
  /** The positions after `position` whose target is one of `keys`, ascending. */
  after(keys: readonly string[], position: number): number[];
}

const targetIndexes = new WeakMap<readonly WorkloadSpread[], TargetIndex>();

/** Built once per frozen list (the caches hand out one per namespace until a WorkloadSpread changes); otherwise per call. */
function targetIndex(order: readonly WorkloadSpread[]): TargetIndex {
  const known = targetIndexes.get(order);
  if (known !== undefined) return known;
  const keys: (string | undefined)[] = [];
  const positions = new Map<string, number[]>();
  order.forEach((ws, i) => {
    const gv = apiVersionGroup(ws.spec.targetRef.apiVersion);
    const key = isDeleting(ws) || !gv.ok ? undefined : linkKey(gv.group, ws.spec.targetRef.kind, ws.spec.targetRef.name);
    keys.push(key);
    if (key === undefined) return;
    const list = positions.get(key);
    if (list === undefined) positions.set(key, [i]);
    else list.push(i);
  });
  const index: TargetIndex = {
    order,
    keys,
    after: (linkKeys, position) => {
      const out: number[] = [];
      for (const k of new Set(linkKeys)) for (const i of positions.get(k) ?? []) if (i > position) out.push(i);
      return out.sort((a, b) => a - b);
    },
  };
  if (Object.isFrozen(order)) targetIndexes.set(order, index);
  return index;
}

/**
 * The pod's controller must be the object the cluster has under that name:
 * found (a missing one fails closed, as §2.1 step 8 does for owner chains —
 * the workload controller retries once the cache has it) and with the uid the
 * pod's ownerReference names (the API server requires one). A request that
 * names a workload without knowing its uid — a review forged by someone who
 * can reach the webhook but cannot read the workload — reserves nothing.
 */
export function verifyPodOwner(owner: OwnerReference, lookup: OwnerLookup): { ok: true } | { ok: false; error: string } | { read: ReadRequest } {
  const label = `${owner.kind} ${JSON.stringify(owner.name)}`;
  const found = lookup({ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name });
  if ('read' in found) return { read: found.read };
  if ('notFound' in found) return { ok: false, error: `the pod's owner ${label} not found` };
  if ('error' in found) return { ok: false, error: found.error };
  const uid = found.found.metadata?.uid ?? '';
  if (owner.uid === undefined || owner.uid === '' || owner.uid !== uid) {
    // Not the uid found: saying it would hand it to whoever forged the reference (and it lands in events).
    return { ok: false, error: `the pod's ownerReference names ${label} with uid ${JSON.stringify(owner.uid ?? '')}, which is not the uid of the ${owner.kind} of that name (recreated under the same name, or not the owner at all)` };
  }
  return { ok: true };
}

