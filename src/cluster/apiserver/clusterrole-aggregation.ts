/**
 * ClusterRole aggregation, as kube-controller-manager's clusterrole-aggregation controller does
 * it, run by the server itself: a ClusterRole with an `aggregationRule` gets, as its `rules`,
 * the rules of every other ClusterRole whose labels match one of its `clusterRoleSelectors`
 * (in name order, each rule once), written back whenever any ClusterRole changes — so RBAC, the
 * access reviews and `kubectl get clusterrole -o yaml` all see the aggregated rules.
 */
import { isPlainObject, deepEqual } from '../../k8s/json.ts';
import { labelsMatch } from '../../k8s/label-selector.ts';
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject, LabelSelector } from '../../k8s/types.ts';
import type { ObjectOperations } from './operations.ts';
import { RBAC_STORAGE } from './rbac-authorizer.ts';
import type { RequestContext } from './resource-def.ts';
import type { ResourceRegistry } from './resources.ts';
import type { StoreEvent } from './storage.ts';

export interface ClusterRoleAggregationDeps {
  ops: ObjectOperations;
  registry: ResourceRegistry;
  track: (label: string, fn: () => Promise<void>) => void;
  systemContext: () => RequestContext;
}

export class ClusterRoleAggregation {
  readonly #deps: ClusterRoleAggregationDeps;
  #queued = false;

  constructor(deps: ClusterRoleAggregationDeps) {
    this.#deps = deps;
  }

  onEvent(e: StoreEvent): void {
    if (e.resource !== RBAC_STORAGE.clusterRoles || this.#queued) return;
    this.#queued = true;
    this.#deps.track('clusterrole aggregation', async () => {
      this.#queued = false;
      await this.#reconcile();
    });
  }

  async #reconcile(): Promise<void> {
    const { ops, registry } = this.#deps;
    const def = registry.get('rbac.authorization.k8s.io', 'v1', 'clusterroles');
    if (def === undefined) return;
    const roles = ops.store.list(RBAC_STORAGE.clusterRoles);
    for (const role of roles) {
      const rule = asRecord(role['aggregationRule']);
      if (rule === undefined) continue;
      const selectors = (asArray(rule['clusterRoleSelectors']) ?? []).filter(isPlainObject) as LabelSelector[];
      const name = asString(role.metadata?.name) ?? '';
      const rules: unknown[] = [];
      for (const other of roles) {
        if (asString(other.metadata?.name) === name) continue;
        const labels = (asRecord(other.metadata?.labels) ?? {}) as Record<string, string>;
        if (!selectors.some((s) => labelsMatch(s, labels))) continue;
        for (const r of asArray(other['rules']) ?? []) if (!rules.some((have) => deepEqual(have, r))) rules.push(r);
      }
      if (deepEqual(asArray(role['rules']) ?? [], rules)) continue;
      const next: KubeObject = { ...structuredClone(role), rules: structuredClone(rules) };
      // A conflict means someone wrote meanwhile: that write queues another pass.
      await ops.update(def, '', name, next, this.#deps.systemContext());
    }
  }
}
