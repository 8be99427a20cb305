import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { admitDomainDisruptionBudget } from './ddb-validate.ts';
import { FakeCluster, fixtureReview, requestOf } from '../testing/admission-kit.ts';

const FIXTURE = 'domaindisruptionbudget-create.json';

function review(edit: (request: Record<string, unknown>, spec: Record<string, unknown>) => void = () => {}) {
  const r = fixtureReview(FIXTURE);
  const spec = (r.request['object'] as { spec: Record<string, unknown> }).spec;
  edit(r.request, spec);
  return requestOf(r);
}

describe('DomainDisruptionBudget CREATE/UPDATE admission (D14)', () => {
  const cluster = new FakeCluster();

  test('a valid budget is admitted', () => {
    assert.deepEqual(admitDomainDisruptionBudget(review(), cluster), { uid: '0f0e6c7a-1b52-4d56-9a8e-3a1c1a0b0005', allowed: true });
  });

  const bad: [string, (spec: Record<string, unknown>) => void, RegExp][] = [
    ['both maxUnavailable and minAvailable', (s) => (s['minAvailable'] = 2), /spec/],
    ['neither', (s) => delete s['maxUnavailable'], /spec/],
    ['two domain modes', (s) => (s['workloadSpreadRef'] = { name: 'web-spread' }), /spec/],
    ['an empty selector', (s) => (s['selector'] = {}), /spec\.selector/],
    ['a percent over 100%', (s) => (s['maxUnavailable'] = '150%'), /spec\.maxUnavailable/],
    ['an invalid label key', (s) => (s['topologyKey'] = 'not a key!'), /spec\.topologyKey/],
  ];
  for (const [name, edit, field] of bad) {
    test(`refused with 422 and field causes: ${name}`, () => {
      const response = admitDomainDisruptionBudget(review((_r, s) => edit(s)), cluster);
      assert.equal(response.allowed, false);
      assert.equal(response.status?.code, 422);
      assert.equal(response.status?.reason, 'Invalid');
      assert.match(response.status?.message ?? '', /^DomainDisruptionBudget\.policy\.workloadspread\.io "web-per-zone" is invalid: /);
      assert.match(response.status?.message ?? '', field);
      assert.ok((response.status?.details?.causes ?? []).length > 0);
    });
  }

  test('a workloadSpreadRef to a missing WorkloadSpread is admitted with a warning', () => {
    const response = admitDomainDisruptionBudget(
      review((_r, s) => {
        delete s['topologyKey'];
        s['workloadSpreadRef'] = { name: 'web-spread' };
      }),
      cluster,
    );
    assert.equal(response.allowed, true);
    assert.match(response.warnings?.[0] ?? '', /WorkloadSpread shop\/web-spread does not exist/);
  });

  test('UPDATE: the new object is validated, and other resources pass untouched', () => {
    const update = review((r, s) => {
      r['operation'] = 'UPDATE';
      r['oldObject'] = structuredClone(r['object']);
      s['maxUnavailable'] = '101%';
    });
    assert.equal(admitDomainDisruptionBudget(update, cluster).status?.code, 422);
    const other = review((r) => (r['resource'] = { group: 'apps', version: 'v1', resource: 'deployments' }));
    assert.equal(admitDomainDisruptionBudget(other, cluster).allowed, true);
  });
});
