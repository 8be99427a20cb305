/**
 * The order of objects by `metadata.name` (byte order, as the caches list
 * them). One module-level comparator for every sort by name: V8 keeps a
 * closure's optimized code only while a closure holds it, so a comparator
 * written inline at each call is compiled again after each full GC.
 */
export function byName(a: { metadata?: { name?: string } }, b: { metadata?: { name?: string } }): number {
  const x = a.metadata?.name ?? '';
  const y = b.metadata?.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}
