/**
 * Taints and tolerations with the semantics of k8s.io/api core/v1
 * Toleration.ToleratesTaint and component-helpers' FindMatchingUntoleratedTaint:
 * an empty toleration effect matches every effect, an empty key matches every
 * key, an empty operator means Equal (values compared exactly), Exists ignores
 * the value, and any other operator tolerates nothing. Pure; never throws on
 * missing fields.
 */
import type { Taint, Toleration } from './types.ts';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function tolerationToleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t === null || typeof t !== 'object' || taint === null || typeof taint !== 'object') return false;
  const effect = str(t.effect);
  if (effect !== '' && effect !== str(taint.effect)) return false;
  const key = str(t.key);
  if (key !== '' && key !== str(taint.key)) return false;
  switch (str(t.operator)) {
    case '':
    case 'Equal':
      return str(t.value) === str(taint.value);
    case 'Exists':
      return true;
    default:
      return false;
  }
}

export function tolerationsTolerateTaint(tolerations: Toleration[] | undefined, taint: Taint): boolean {
  if (!Array.isArray(tolerations)) return false;
  return tolerations.some((t) => tolerationToleratesTaint(t, taint));
}

/** The first taint (among those passing `filter`) that no toleration tolerates; undefined when all are tolerated. */
export function findUntoleratedTaint(
  taints: Taint[] | undefined,
  tolerations: Toleration[] | undefined,
  filter?: (t: Taint) => boolean,
): Taint | undefined {
  if (!Array.isArray(taints)) return undefined;
  for (const taint of taints) {
    if (taint === null || typeof taint !== 'object') continue;
    if (filter !== undefined && !filter(taint)) continue;
    if (!tolerationsTolerateTaint(tolerations, taint)) return taint;
  }
  return undefined;
}

/** The filter the scheduler's TaintToleration plugin uses: only NoSchedule and NoExecute taints block placement. */
export const isSchedulingTaint = (t: Taint): boolean => t.effect === 'NoSchedule' || t.effect === 'NoExecute';
