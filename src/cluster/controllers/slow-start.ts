/**
 * `slowStartBatch` (k8s.io/kubernetes pkg/controller/replicaset): performs
 * `count` calls of `fn` in batches of 1, 2, 4, ... (doubling from
 * `initialBatchSize`, the last batch cut to what remains), every call of a
 * batch in parallel, and stops after the first batch in which any call
 * failed. A webhook or quota that rejects every pod therefore costs one call
 * per attempt instead of `count`.
 *
 * Answers how many calls succeeded and, when a batch failed, the error of the
 * lowest-indexed failed call of that batch (upstream takes whichever error
 * reached its channel first; the index keeps ours deterministic).
 */

export const SLOW_START_INITIAL_BATCH_SIZE = 1;

export interface SlowStartResult {
  successes: number;
  /** Calls made in each batch, in order (diagnostics and tests). */
  batches: number[];
  error?: unknown;
}

export async function slowStartBatch(count: number, initialBatchSize: number, fn: () => Promise<void>): Promise<SlowStartResult> {
  let remaining = Math.max(0, Math.floor(count));
  let successes = 0;
  const batches: number[] = [];
  for (let size = Math.min(remaining, Math.max(1, initialBatchSize)); size > 0; size = Math.min(2 * size, remaining)) {
    batches.push(size);
    const results = await Promise.allSettled(Array.from({ length: size }, () => fn()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    successes += results.filter((r) => r.status === 'fulfilled').length;
    if (failed !== undefined) return { successes, batches, error: failed.reason };
    remaining -= size;
  }
  return { successes, batches };
}
