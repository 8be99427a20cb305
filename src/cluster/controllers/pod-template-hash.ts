/**
 * The `pod-template-hash` of a Deployment's ReplicaSet (k8s.io/kubernetes
 * pkg/controller ComputeHash): FNV-32a over the pod template, then the
 * collision count (when set) as 8 little-endian bytes, printed in decimal and
 * each digit mapped through the "safe" alphabet of apimachinery's
 * `rand.SafeEncodeString`, so the label never spells a word.
 *
 * Deliberate difference: upstream hashes a deep printing of the Go struct
 * (`hashutil.DeepHashObject`), which no JavaScript program can reproduce byte
 * for byte. We hash a canonical JSON of the template (object keys sorted,
 * `undefined` dropped). The hash is stable for a given template and changes
 * whenever the template does — the properties the Deployment controller relies
 * on — but its VALUES differ from a real cluster's for the same template.
 * Pure: no I/O.
 */

/** The label a Deployment adds to its ReplicaSets' selector, template and pods. */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** FNV-1a, 32 bits, continuing from `hash`. */
export function fnv32a(bytes: Uint8Array, hash = FNV32_OFFSET): number {
  let h = hash >>> 0;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, FNV32_PRIME) >>> 0;
  }
  return h >>> 0;
}

/** JSON with object keys sorted at every level; the same document always prints the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
}

/** apimachinery `rand.SafeEncodeString`: every character (here always a digit) through the alphabet by code point. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (const ch of s) out += SAFE_ALPHABET[(ch.codePointAt(0) ?? 0) % SAFE_ALPHABET.length];
  return out;
}

/** The pod-template-hash of `template` with the Deployment's `collisionCount` (omitted or undefined: not mixed in). */
export function computePodTemplateHash(template: unknown, collisionCount?: number): string {
  let hash = fnv32a(new TextEncoder().encode(canonicalJson(template ?? null)));
  if (collisionCount !== undefined && Number.isFinite(collisionCount)) {
    // Upstream writes a uint32 little-endian into an 8-byte buffer and hashes all 8 bytes.
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setUint32(0, collisionCount >>> 0, true);
    hash = fnv32a(bytes, hash);
  }
  return safeEncodeString(String(hash));
}
