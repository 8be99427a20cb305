/**
 * `BudgetCache` and `BudgetStatusWriter` against the embedded API server:
 * what `budgetsIn` answers before the CRD exists (none: nothing to
 * enforce; and no list is even tried), once it is served but not listed (an error: the webhook fails
 * closed), and once listed (the budgets, by name); conditional status writes
 * (a stale copy conflicts, a fresh read resolves it, a gone budget is
 * NotFound and forgotten).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { domainDisruptionBudgetCrd } from '../api/crd.ts';
import { DDB_API_VERSION, DDB_KIND, type DomainDisruptionBudget } from '../api/disruption-budget.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import type { KubeObject } from '../k8s/types.ts';
import type { ClientTestBed } from '../testing/client-test-bed.ts';
import { settleUntil } from '../testing/eventually.ts';
import { BudgetCache } from './budget-cache.ts';
import { BudgetStatusWriter } from './budget-status-writer.ts';
import { createNamespace, createObject, startKubeTestBed, T0 } from '../testing/kube-bed.ts';

function ddb(namespace: string, name: string): KubeObject {
  return { apiVersion: DDB_API_VERSION, kind: DDB_KIND, metadata: { name, namespace }, spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 } };
}

describe('BudgetCache and BudgetStatusWriter against the API server', () => {
  let clock: VirtualClock;
  let bed: ClientTestBed;
  before(async () => {
    clock = new VirtualClock(T0);
    bed = await startKubeTestBed(clock, generateServingCertificate());
  });
  after(async () => {
    await bed?.close();
  });

  test('no CRD: no budgets (nothing to enforce); CRD installed: an error until listed, then the budgets by name', async () => {
    const cache = new BudgetCache({ client: bed.client, discoveryRecheckMs: 1_000, watcher: { backoff: { initialMs: 100, maxMs: 200 } } });
    cache.start();
    try {
      await settleUntil(clock, () => assert.equal(cache.served(), false), { maxMs: 10_000 });
      assert.deepEqual(cache.budgetsIn('shop'), { ok: true, budgets: [] });
      await clock.advance(5_000);
      assert.equal(bed.server.control.requestCount({ resource: 'domaindisruptionbudgets' }), 0, 'without the CRD the informer is not even started: no list retries');

      await createObject(bed, domainDisruptionBudgetCrd() as KubeObject);
      await clock.quiesce();
      assert.equal(await cache.checkDiscovery(), true);
      if (!cache.hasSynced()) assert.equal(cache.budgetsIn('shop').ok, false, 'served but not listed: fail closed');

      const ns = await createNamespace(bed, 'ddb');
      await createObject(bed, ddb(ns, 'zeta'));
      await createObject(bed, ddb(ns, 'alpha'));
      await settleUntil(clock, () => {
        const listed = cache.budgetsIn(ns);
        assert.ok(listed.ok);
        assert.deepEqual(listed.budgets.map((b) => b.metadata.name), ['alpha', 'zeta']);
      }, { maxMs: 120_000 });
    } finally {
      await cache.stop();
    }
  });

  test('status writes are conditional: a stale copy conflicts; a fresh read wins; a deleted budget is NotFound', async () => {
    const ns = await createNamespace(bed, 'ddbw');
    const created = await createObject<DomainDisruptionBudget & KubeObject>(bed, ddb(ns, 'per-zone'));
    const writer = new BudgetStatusWriter({ client: bed.client });
    const first = await writer.writeStatus(created, { observedGeneration: 1, domains: [] }, 'controller');
    assert.ok(first.ok);
    assert.equal(writer.freshest(created, ns, 'per-zone')?.metadata.resourceVersion, first.ws.metadata.resourceVersion, 'remembered: newer than the stale copy');

    const stale = await writer.writeStatus(created, { observedGeneration: 1, domainCount: 0 }, 'webhook');
    assert.equal(stale.ok, false);
    assert.equal(!stale.ok && stale.reason, 'Conflict');

    const fresh = await writer.getFresh(ns, 'per-zone');
    assert.ok(fresh.ok);
    assert.ok((await writer.writeStatus(fresh.ws, { observedGeneration: 1, domainCount: 0 }, 'webhook')).ok);

    const unversioned = await writer.writeStatus({ ...created, metadata: { ...created.metadata, resourceVersion: '' } }, {}, 'webhook');
    assert.equal(!unversioned.ok && unversioned.reason, 'Error', 'never an unconditional write');

    await bed.client.delete({ group: 'policy.workloadspread.io', version: 'v1alpha1', resource: 'domaindisruptionbudgets', kind: DDB_KIND, namespaced: true }, 'per-zone', { namespace: ns });
    const gone = await writer.getFresh(ns, 'per-zone');
    assert.equal(!gone.ok && gone.reason, 'NotFound');
    assert.equal(writer.state.lastWritten(ns, 'per-zone'), undefined, 'forgotten');
  });
});
