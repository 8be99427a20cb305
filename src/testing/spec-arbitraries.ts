/**
 * fast-check generators of WorkloadSpread specs for property tests: valid
 * subsets as users write them (limits all percentages or all counts, unset
 * subsets where validation allows them, minReplicas).
 */
import fc from 'fast-check';
import type { Subset } from '../api/workloadspread.ts';

/** 1–6 subsets; percentages sum to 100 (or less, with the last subset unset); counts below 40. */
export const specArb: fc.Arbitrary<Subset[]> = fc
  .record({
    percent: fc.boolean(),
    k: fc.integer({ min: 1, max: 6 }),
    values: fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 6, maxLength: 6 }),
    unset: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    mins: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 6, maxLength: 6 }),
  })
  .map(({ percent, k, values, unset, mins }) => {
    const subsets: Subset[] = [];
    if (percent) {
      // Percentages summing to 100, or less with the last subset unset; other subsets unset at random.
      const limited = Array.from({ length: k }, (_, i) => i).filter((i) => !(unset[i] ?? false) && !(i === k - 1 && (unset[5] ?? false)));
      const weights = limited.map((i) => (values[i] ?? 0) + 1);
      const total = weights.reduce((a, b) => a + b, 0);
      const shares = weights.map((w) => Math.max(1, Math.floor((w * (unset[k - 1] ? 90 : 100)) / total)));
      let sum = shares.reduce((a, b) => a + b, 0);
      if (!unset[k - 1] && shares.length > 0) shares[shares.length - 1]! += 100 - sum;
      sum = shares.reduce((a, b) => a + b, 0);
      for (let i = 0; i < k; i++) {
        const at = limited.indexOf(i);
        const subset: Subset = at < 0 ? { name: `s${i}` } : { name: `s${i}`, maxReplicas: `${shares[at]}%` };
        if ((mins[i] ?? 0) > 0 && at < 0) subset.minReplicas = mins[i]!;
        subsets.push(subset);
      }
      void sum;
    } else {
      for (let i = 0; i < k; i++) {
        const max = (values[i] ?? 0) % 40;
        const subset: Subset = unset[i] ? { name: `s${i}` } : { name: `s${i}`, maxReplicas: max };
        const min = mins[i] ?? 0;
        if (min > 0 && (unset[i] || min <= max)) subset.minReplicas = min;
        subsets.push(subset);
      }
    }
    return subsets;
  });

