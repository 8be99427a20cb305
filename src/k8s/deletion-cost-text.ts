/**
 * A set of `controller.kubernetes.io/pod-deletion-cost` values written for
 * people, the same way in every table and report (the simulator's, `plan`,
 * the demo). Pure.
 */

/**
 * Costs as `-200,100`, `-` when there are none, `none` standing for pods
 * without the annotation; more than three distinct values (balanced costs,
 * D17, give one per pod) as their range: `2147480044…2147483644 (4 values)`.
 */
export function showCosts(costs: readonly (number | null)[]): string {
  if (costs.length === 0) return '-';
  const none = costs.includes(null) ? ['none'] : [];
  const known = costs.filter((c): c is number => c !== null);
  if (known.length <= 3) return [...none, ...known.map(String)].join(',');
  return [...none, `${known[0]}…${known[known.length - 1]} (${known.length} values)`].join(',');
}
