/**
 * The marker annotation `apps.kruise.io/matched-workloadspread` (spec §1.5):
 * which WorkloadSpread and subset a pod was placed in, and the uid reserved for
 * it when the pod had no name yet at admission.
 *
 * Read like Go's encoding/json reads it into a struct: keys match
 * case-insensitively (an exact-case key wins over a folded one), anything that
 * is not an object of strings is "no marker". Written with the exact key order
 * name, subset, uid (uid omitted when empty), byte for byte as Kruise writes it.
 * `markedSubset` is the one test of "this pod was placed by this WorkloadSpread,
 * in this subset" that grouping, adoption, status views and plans share.
 *
 * Beside the marker, a pod placed or adopted carries the label
 * `workloadspread.io/managed=true` (D21): labels, unlike annotations, can be
 * selected on, and the pod DELETE webhook is registered with an
 * objectSelector on it, so deletions of other pods never reach the manager.
 */
import { MANAGED_LABEL, MANAGED_LABEL_VALUE, MATCHED_WORKLOADSPREAD_ANNOTATION } from '../api/keys.ts';
import type { KubeObject } from '../k8s/types.ts';
import { boundedMemo } from '../k8s/memo.ts';

export interface Marker {
  name: string;
  subset: string;
  /** Generated at admission for pods created without a name (generateName). */
  uid?: string;
}

const FIELDS = ['name', 'subset', 'uid'] as const;

/**
 * Parsed marker values by their text: a marker is read for every pod on
 * every reconcile and admission count, and parsing dominated the manager's
 * CPU in a 1,000-pod burst. The markers are frozen, so the memo cannot be
 * changed through what callers get. Each parsed marker keeps the text it was
 * parsed from (the memo's key) under `TEXT`, not enumerable, so it is neither
 * copied nor compared with the marker's fields (`canonicalMarkerText`).
 */
const TEXT = Symbol('marker text');

const parseMarkerMemo = boundedMemo(
  100_000,
  (value: string) => value,
  (value: string): Readonly<Marker> | undefined => {
    const parsed = parseMarkerText(value);
    return parsed === undefined ? undefined : Object.freeze(parsed);
  },
);

const intern = boundedMemo(10_000, (text: string) => text, (text: string) => text);

/** Parses a marker value; undefined when it is not valid JSON of the marker's shape. */
export function parseMarker(value: string | undefined): Readonly<Marker> | undefined {
  if (value === undefined || value === '') return undefined;
  return parseMarkerMemo(value);
}

/**
 * The copy of a marker text the memo keeps: a cache that stores it instead
 * of the copy each watch event brings holds every pod's marker text once
 * (a marker with a uid is unique to its pod, so the memo's key and the
 * cached pod's annotation would otherwise be two copies of it). A text that
 * is not a valid marker is its own copy.
 */
export function canonicalMarkerText(value: string): string {
  if (value === '') return value;
  return (parseMarkerMemo(value) as { readonly [TEXT]: string } | undefined)?.[TEXT] ?? value;
}

function parseMarkerText(value: string): Marker | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const found: Partial<Record<(typeof FIELDS)[number], string>> = {};
  const exact = new Set<string>();
  for (const [key, v] of Object.entries(raw as Record<string, unknown>)) {
    const field = FIELDS.find((f) => f === key.toLowerCase());
    if (field === undefined) continue;
    if (v === null) continue; // Go leaves the field unset for null
    if (typeof v !== 'string') return undefined; // a type error fails the whole unmarshal
    if (key === field) {
      found[field] = v;
      exact.add(field);
    } else if (!exact.has(field)) {
      found[field] = v;
    }
  }
  // The names repeat across every pod of a WorkloadSpread: one string each, not one per parsed marker.
  // One literal per form, the text in it, then made not enumerable: every field stays inside the
  // object, where a property added afterwards would take a separate property array (40 bytes more per pod).
  const name = intern(found.name ?? '');
  const subset = intern(found.subset ?? '');
  const marker: Marker & { [TEXT]: string } = found.uid !== undefined && found.uid !== '' ? { name, subset, uid: found.uid, [TEXT]: value } : { name, subset, [TEXT]: value };
  Object.defineProperty(marker, TEXT, { enumerable: false });
  return marker;
}

/** Serializes a marker exactly as the reference does. */
export function formatMarker(marker: Marker): string {
  const parts = [`"name":${JSON.stringify(marker.name)}`, `"subset":${JSON.stringify(marker.subset)}`];
  if (marker.uid !== undefined && marker.uid !== '') parts.push(`"uid":${JSON.stringify(marker.uid)}`);
  return `{${parts.join(',')}}`;
}

/**
 * The marker of an object (pod), if it carries a valid one: the parsed
 * marker of its text (one per distinct text; a string keeps its hash once
 * computed, so a cached pod's marker is found without hashing it again).
 */
export function readMarker(obj: KubeObject): Readonly<Marker> | undefined {
  const annotations: unknown = obj.metadata?.annotations;
  if (annotations === null || typeof annotations !== 'object') return undefined;
  const text = (annotations as Record<string, unknown>)[MATCHED_WORKLOADSPREAD_ANNOTATION];
  return typeof text === 'string' ? parseMarker(text) : undefined;
}

/**
 * The subset a pod's marker places it in for the WorkloadSpread `wsName`:
 * undefined when the pod has no valid marker, a marker of another
 * WorkloadSpread, or one without a subset (spec §4.3 step 3: such pods are
 * candidates for adoption, not members).
 */
export function markedSubset(obj: KubeObject, wsName: string): string | undefined {
  const marker = readMarker(obj);
  return marker !== undefined && marker.name === wsName && marker.subset !== '' ? marker.subset : undefined;
}

/** Whether the pod carries `workloadspread.io/managed=true`. */
export function hasManagedLabel(obj: KubeObject): boolean {
  return obj.metadata?.labels?.[MANAGED_LABEL] === MANAGED_LABEL_VALUE;
}
