/**
 * The disruption budgets of a scenario's namespaces, listed through the
 * client as records (core/budget-records.ts): both kinds, and no
 * DomainDisruptionBudgets where the cluster does not serve the kind.
 */
import { DDB_API_VERSION, DDB_KIND } from '../api/names.ts';
import { isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { BUILTIN, type ResourceRef } from '../client/resources.ts';
import { budgetRecords, type BudgetRecord } from '../core/budget-records.ts';
import type { KubeObject } from '../k8s/types.ts';

async function listIn(client: KubeClient, ref: ResourceRef, namespaces: readonly string[]): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const namespace of namespaces) {
    try {
      out.push(...(await client.list<KubeObject>(ref, { namespace })).items);
    } catch (err) {
      // A namespace the scenario has not created (yet), or a kind that went away.
      if (!isNotFound(err)) throw err;
    }
  }
  return out;
}

/** Lists both kinds of budget in the namespaces (DomainDisruptionBudgets only where the cluster serves them). */
export async function listBudgets(client: KubeClient, namespaces: readonly string[]): Promise<BudgetRecord[]> {
  const ddb = await client.resources.resolve(DDB_API_VERSION, DDB_KIND);
  const ddbs = ddb.ok ? await listIn(client, ddb.ref, namespaces) : [];
  return budgetRecords(ddbs, await listIn(client, BUILTIN.poddisruptionbudgets, namespaces));
}
