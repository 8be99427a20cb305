/**
 * The DefaultTolerationSeconds admission plug-in
 * (k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds): pods
 * (CREATE and UPDATE, not subresources) that do not already tolerate the
 * `node.kubernetes.io/not-ready` / `node.kubernetes.io/unreachable` NoExecute
 * taints get a toleration of 300 s for each, so their pods are evicted five
 * minutes after a node goes bad. A toleration with an empty key or an empty
 * effect counts as tolerating them.
 */
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { AdmissionPlugin } from './admission.ts';

export const DEFAULT_TOLERATION_SECONDS_PLUGIN = 'DefaultTolerationSeconds';
export const DEFAULT_TOLERATION_SECONDS_ORDER = 140;
export const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const DEFAULT_TOLERATION_SECONDS = 300;

/** Whether a toleration covers the NoExecute taint with `key`, in the plug-in's loose sense. */
function covers(toleration: Record<string, unknown>, key: string): boolean {
  const k = asString(toleration['key']) ?? '';
  const effect = asString(toleration['effect']) ?? '';
  return (k === key || k === '') && (effect === 'NoExecute' || effect === '');
}

export function defaultTolerationSecondsAdmission(seconds = DEFAULT_TOLERATION_SECONDS): AdmissionPlugin {
  return {
    name: DEFAULT_TOLERATION_SECONDS_PLUGIN,
    order: DEFAULT_TOLERATION_SECONDS_ORDER,
    mutate: (a) => {
      if (a.subresource !== '' || a.resource.group !== '' || a.resource.plural !== 'pods' || a.object === undefined) return undefined;
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return undefined;
      const spec = asRecord(a.object['spec']);
      if (spec === undefined) return undefined;
      const tolerations = (asArray(spec['tolerations']) ?? []).map(asRecord).filter((t): t is Record<string, unknown> => t !== undefined);
      const added: Record<string, unknown>[] = [];
      for (const key of [TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE]) {
        if (!tolerations.some((t) => covers(t, key))) added.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
      }
      if (added.length > 0) spec['tolerations'] = [...(asArray(spec['tolerations']) ?? []), ...added];
      return undefined;
    },
  };
}
