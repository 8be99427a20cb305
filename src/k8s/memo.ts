/**
 * A bounded memo of a pure function: answers by a text key, all forgotten
 * at once when `max` are held (the working sets it serves — timestamps of
 * one burst, a workload's affinity terms, its pods' markers — are far
 * smaller, so clearing beats tracking recency). Pure: no clock, no I/O.
 */
export function boundedMemo<A extends unknown[], V>(max: number, keyOf: (...args: A) => string, compute: (...args: A) => V): (...args: A) => V {
  const answers = new Map<string, V>();
  return (...args) => {
    const key = keyOf(...args);
    if (answers.has(key)) return answers.get(key) as V;
    const value = compute(...args);
    if (answers.size >= max) answers.clear();
    answers.set(key, value);
    return value;
  };
}
