/**
 * What the manager keeps of a pod in its cache (target ≤ 1 KiB of heap per
 * pod; `pod-transform.test.ts` measures it). A cluster has many more pods
 * than WorkloadSpreads, so the pod cache dominates the manager's memory.
 *
 * Kept, because some rule reads it:
 * - metadata: name, namespace, uid, resourceVersion, labels (version, target
 *   filter), ownerReferences (owner chains, workload pods), creation and
 *   deletion timestamps (activeness, ranking, rescheduling), and only the
 *   annotations we read: the marker and the deletion cost;
 * - spec.nodeName; the pod's effective cpu/memory requests (D3: what a node
 *   has left), kept as ONE summary container `{name: '', resources:
 *   {requests}}` so `podResourceRequests` reads the same totals from the
 *   trimmed pod as from the full one;
 * - status: phase, the Ready condition (status, lastTransitionTime: ranking)
 *   and the PodScheduled condition (status, reason: rescheduling), and the
 *   highest container restart count as ONE summary container status.
 * Everything else is dropped: a rule that needs the full pod (adoption
 * scoring compares the pod with the subset patch applied) GETs it from the
 * API server (`ManagerCaches.getFullPod`).
 *
 * Memory: values that repeat across pods (namespaces, owner references,
 * label maps, node names, phases, the PodScheduled condition, deletion
 * timestamps) are interned; values that are usually unique per pod (names,
 * uids, transition times) are not, since a pool entry would cost more than
 * it saves. The marker text is the copy core's memo of parsed markers keeps
 * (`canonicalMarkerText`): one per pod, not one more per watch event. Pods
 * of one ReplicaSet share one frozen labels object and one frozen
 * ownerReferences array. Shared objects are frozen, so a caller that
 * mutates a cached pod fails loudly instead of corrupting its neighbours
 * (cached objects must never be mutated anyway; see `Store`).
 * Objects are built as whole literals and arrays at their exact size: V8
 * keeps a literal's properties inside the object, but moves properties added
 * later to a separate array, and an array grown by push keeps room for ~17
 * elements (together ~200 bytes per pod).
 * Start at `trimPod`.
 */
import { MATCHED_WORKLOADSPREAD_ANNOTATION, POD_DELETION_COST_ANNOTATION } from '../api/keys.ts';
import { canonicalMarkerText } from '../core/marker.ts';
import { isPlainObject } from '../k8s/json.ts';
import { podResourceRequests } from '../k8s/pod.ts';
import type { Container, ContainerStatus, KubeObject, ObjectMeta, OwnerReference, Pod, PodCondition, PodStatus } from '../k8s/types.ts';


/**
 * A bounded pool of shared values: `string(s)` returns one canonical copy of
 * equal strings; `shared(key, make)` one canonical frozen object per key.
 * When the pool is full it starts over (values already handed out stay
 * valid; only future sharing restarts), so memory stays bounded even when
 * the interned fields turn out to be unique.
 */
export class Interner {
  readonly #values = new Map<string, unknown>();
  readonly #max: number;

  constructor(maxEntries = 50_000) {
    this.#max = maxEntries;
  }

  string(s: string): string {
    return this.shared(`s\u0000${s}`, () => s);
  }

  shared<T>(key: string, make: () => T): T {
    const known = this.#values.get(key);
    if (known !== undefined) return known as T;
    if (this.#values.size >= this.#max) this.#values.clear();
    const value = make();
    if (typeof value === 'object' && value !== null) deepFreeze(value);
    this.#values.set(key, value);
    return value;
  }

  get size(): number {
    return this.#values.size;
  }
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function stringMap(v: unknown): Record<string, string> | undefined {
  if (!isPlainObject(v)) return undefined;
  const out: Record<string, string> = {};
  let any = false;
  for (const [k, val] of Object.entries(v)) {
    if (typeof val === 'string') {
      out[k] = val;
      any = true;
    }
  }
  return any ? out : undefined;
}

function trimOwnerReferences(v: unknown, pool: Interner): OwnerReference[] | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const refs: OwnerReference[] = [];
  for (const r of v as unknown[]) {
    if (!isPlainObject(r)) continue;
    const ref: OwnerReference = { apiVersion: str(r['apiVersion']) ?? '', kind: str(r['kind']) ?? '', name: str(r['name']) ?? '', uid: str(r['uid']) ?? '' };
    if (r['controller'] === true) ref.controller = true;
    refs.push(ref);
  }
  if (refs.length === 0) return undefined;
  return pool.shared(`o\u0000${JSON.stringify(refs)}`, () => refs);
}

function trimMetadata(meta: unknown, pool: Interner): ObjectMeta {
  const m = isPlainObject(meta) ? meta : {};
  const name = str(m['name']);
  const ns = str(m['namespace']);
  const namespace = ns === undefined ? undefined : pool.string(ns);
  const uid = str(m['uid']);
  const resourceVersion = str(m['resourceVersion']);
  const creationTimestamp = str(m['creationTimestamp']);
  const deleted = str(m['deletionTimestamp']);
  const deletionTimestamp = deleted === undefined ? undefined : pool.string(deleted);
  const found = stringMap(m['labels']);
  const labels = found === undefined ? undefined : pool.shared(`l\u0000${JSON.stringify(found)}`, () => found);
  const annotations = keptAnnotations(m['annotations'], pool);
  const ownerReferences = trimOwnerReferences(m['ownerReferences'], pool);
  // The usual pod has all of these: one literal keeps them inside the object (see trimPod).
  if (name !== undefined && namespace !== undefined && uid !== undefined && resourceVersion !== undefined && creationTimestamp !== undefined && labels !== undefined && ownerReferences !== undefined && deletionTimestamp === undefined) {
    return annotations === undefined
      ? { name, namespace, uid, resourceVersion, creationTimestamp, labels, ownerReferences }
      : { name, namespace, uid, resourceVersion, creationTimestamp, labels, annotations, ownerReferences };
  }
  const out: ObjectMeta = {};
  if (name !== undefined) out.name = name;
  if (namespace !== undefined) out.namespace = namespace;
  if (uid !== undefined) out.uid = uid;
  if (resourceVersion !== undefined) out.resourceVersion = resourceVersion;
  if (creationTimestamp !== undefined) out.creationTimestamp = creationTimestamp;
  if (deletionTimestamp !== undefined) out.deletionTimestamp = deletionTimestamp;
  if (labels !== undefined) out.labels = labels;
  if (annotations !== undefined) out.annotations = annotations;
  if (ownerReferences !== undefined) out.ownerReferences = ownerReferences;
  return out;
}

/**
 * Only the annotations we read: the marker and the deletion cost. Pods whose
 * marker carries no uid (placed in a subset that keeps no reservation) and
 * whose cost is the same share one frozen annotations object — the pods of
 * one subset usually do; a marker with a uid is the pod's own, and so are its
 * annotations.
 */
function keptAnnotations(value: unknown, pool: Interner): Record<string, string> | undefined {
  if (!isPlainObject(value)) return undefined;
  const marker = value[MATCHED_WORKLOADSPREAD_ANNOTATION];
  const cost = value[POD_DELETION_COST_ANNOTATION];
  const m = typeof marker === 'string' ? canonicalMarkerText(marker) : undefined;
  const c = typeof cost === 'string' ? pool.string(cost) : undefined;
  if (m === undefined) return c === undefined ? undefined : pool.shared(`a\u0000\u0000${c}`, () => ({ [POD_DELETION_COST_ANNOTATION]: c }));
  // Built as one literal (marker first), so every such object has one shape.
  const make = (): Record<string, string> => (c === undefined ? { [MATCHED_WORKLOADSPREAD_ANNOTATION]: m } : { [MATCHED_WORKLOADSPREAD_ANNOTATION]: m, [POD_DELETION_COST_ANNOTATION]: c });
  return m.includes('"uid"') ? make() : pool.shared(`a\u0000${m}\u0000${c ?? ''}`, make);
}

/** The summary container carrying the pod's effective cpu/memory requests (none when it requests nothing). */
function requestSummary(pod: Pod, pool: Interner): Container[] {
  const requests = podResourceRequests(pod);
  if (requests.cpuMilli <= 0 && requests.memory <= 0) return pool.shared('c\u0000none', () => [] as Container[]);
  const key = `c\u0000${requests.cpuMilli}\u0000${requests.memory}`;
  return pool.shared(key, () => {
    const r: Record<string, string> = {};
    if (requests.cpuMilli > 0) r['cpu'] = `${requests.cpuMilli}m`;
    if (requests.memory > 0) r['memory'] = String(requests.memory);
    return [{ name: '', resources: { requests: r } }];
  });
}

function trimCondition(c: Record<string, unknown>, pool: Interner): PodCondition | undefined {
  const type = c['type'];
  if (type === 'Ready') {
    const status = str(c['status']) ?? '';
    const t = str(c['lastTransitionTime']);
    // Transition times are mostly unique per pod: only the time-less form is worth sharing.
    if (t === undefined) return pool.shared(`r\u0000${status}`, (): PodCondition => ({ type: 'Ready', status }));
    return { type: pool.string('Ready'), status: pool.string(status), lastTransitionTime: t };
  }
  if (type === 'PodScheduled') {
    const cond: PodCondition = { type: 'PodScheduled', status: str(c['status']) ?? '' };
    const reason = str(c['reason']);
    if (reason !== undefined) cond.reason = reason;
    return pool.shared(`p\u0000${cond.status}\u0000${reason ?? ''}`, () => cond);
  }
  return undefined;
}

function trimStatus(status: unknown, pool: Interner): PodStatus | undefined {
  if (!isPlainObject(status)) return undefined;
  const out: PodStatus = {};
  const phase = str(status['phase']);
  if (phase !== undefined) out.phase = pool.string(phase);
  const conditions: PodCondition[] = [];
  if (Array.isArray(status['conditions'])) {
    for (const c of status['conditions'] as unknown[]) {
      if (!isPlainObject(c)) continue;
      const kept = trimCondition(c, pool);
      if (kept !== undefined) conditions.push(kept);
    }
  }
  // slice(): an exact-size copy (an array grown by push keeps room for ~17 elements: ~130 bytes per pod).
  if (conditions.length > 0) out.conditions = conditions.slice();
  let restarts = 0;
  if (Array.isArray(status['containerStatuses'])) {
    for (const s of status['containerStatuses'] as unknown[]) {
      if (isPlainObject(s) && typeof s['restartCount'] === 'number' && s['restartCount'] > restarts) restarts = s['restartCount'];
    }
  }
  if (restarts > 0) {
    out.containerStatuses = pool.shared(`x\u0000${restarts}`, (): ContainerStatus[] => [{ name: '', ready: false, restartCount: restarts }]);
  }
  return out;
}

/**
 * The cached form of a pod. Tolerates any input: a malformed object becomes
 * a pod with whatever fields could be read.
 */
export function trimPod(raw: KubeObject, pool: Interner): Pod {
  const source = (isPlainObject(raw) ? raw : {}) as Pod;
  const spec = isPlainObject(source.spec) ? source.spec : undefined;
  const metadata = trimMetadata(source.metadata, pool);
  const containers = spec === undefined ? [] : requestSummary(source, pool);
  const nodeName = str(spec?.['nodeName']);
  const trimmedSpec: Pod['spec'] = nodeName !== undefined && nodeName !== '' ? { containers, nodeName: pool.string(nodeName) } : { containers };
  const status = trimStatus(source.status, pool);
  // Whole literals, not properties added one by one: an object literal keeps its properties inside
  // the object, while a property added past the literal's goes to a separate array (~48 bytes).
  return status === undefined ? { apiVersion: 'v1', kind: 'Pod', metadata, spec: trimmedSpec } : { apiVersion: 'v1', kind: 'Pod', metadata, spec: trimmedSpec, status };
}

/** A transform for `Store` that trims pods with one shared pool. */
export function podTransform(pool: Interner = new Interner()): (obj: KubeObject) => Pod {
  return (obj) => trimPod(obj, pool);
}

/** Drops `metadata.managedFields` (often the biggest part of an object, never read here). */
export function withoutManagedFields<T extends KubeObject>(obj: KubeObject): T {
  const meta = obj.metadata;
  if (!isPlainObject(meta) || !('managedFields' in meta)) return obj as T;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...obj, metadata: rest } as T;
}
