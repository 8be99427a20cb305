import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { validateCustomResourceDefinition } from '../k8s/crd-schema/crd-validation.ts';
import type { KubeObject } from '../k8s/types.ts';
import { domainDisruptionBudgetCrd, generatedCrdFiles } from './crd.ts';
import { budgetKey } from './disruption-budget.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test navigation of generated JSON

describe('the DomainDisruptionBudget CRD (D14)', () => {
  const crd = domainDisruptionBudgetCrd() as Obj;
  const version = crd.spec.versions[0] as Obj;
  const schema = version.schema.openAPIV3Schema as Obj;
  const spec = schema.properties.spec as Obj;
  const domain = schema.properties.status.properties.domains.items as Obj;

  test('names, scope, version, status subresource', () => {
    assert.equal(crd.metadata.name, 'domaindisruptionbudgets.policy.workloadspread.io');
    assert.deepEqual(crd.spec.names, {
      kind: 'DomainDisruptionBudget',
      listKind: 'DomainDisruptionBudgetList',
      plural: 'domaindisruptionbudgets',
      singular: 'domaindisruptionbudget',
      shortNames: ['ddb'],
    });
    assert.equal(crd.spec.group, 'policy.workloadspread.io');
    assert.equal(crd.spec.scope, 'Namespaced');
    assert.deepEqual([version.name, version.served, version.storage], ['v1alpha1', true, true]);
    assert.deepEqual(version.subresources, { status: {} });
  });
  test('printer columns: Mode, Min/Max, Domains, Blocked, Age', () => {
    assert.deepEqual(
      version.additionalPrinterColumns.map((c: Obj) => [c.name, c.type, c.jsonPath]),
      [
        ['Mode', 'string', '.status.mode'],
        ['MinAvailable', 'string', '.spec.minAvailable'],
        ['MaxUnavailable', 'string', '.spec.maxUnavailable'],
        ['Domains', 'integer', '.status.domainCount'],
        ['Blocked', 'integer', '.status.blockedDomains'],
        ['Age', 'date', '.metadata.creationTimestamp'],
      ],
    );
  });
  test('the schema carries the API', () => {
    assert.deepEqual(spec.required, ['selector']);
    assert.equal(spec.properties.maxUnavailable['x-kubernetes-int-or-string'], true);
    assert.equal(spec.properties.minAvailable['x-kubernetes-int-or-string'], true);
    assert.equal(spec.properties.topologyKey.type, 'string');
    assert.deepEqual(spec.properties.workloadSpreadRef.required, ['name']);
    assert.equal(spec.properties.nodeSelectorTerm['x-kubernetes-map-type'], 'atomic');
    assert.deepEqual(spec.properties.unhealthyPodEvictionPolicy.enum, ['IfHealthyBudget', 'AlwaysAllow']);
    assert.deepEqual(domain.required, ['name', 'expectedPods', 'currentHealthy', 'desiredHealthy', 'disruptionsAllowed']);
    assert.deepEqual(domain.properties.disruptedPods.additionalProperties, { type: 'string', format: 'date-time' });
    assert.equal(schema.required, undefined, 'a missing spec is reported by validation, with its message');
  });
  test('it is generated into deploy/crds/ and safe for Kubernetes', () => {
    const file = generatedCrdFiles().find((f) => f.fileName === 'policy.workloadspread.io_domaindisruptionbudgets.yaml');
    assert.ok(file, 'generatedCrdFiles lists the budget CRD');
    assert.deepEqual(parse(file.content), crd);
    assert.deepEqual(validateCustomResourceDefinition(crd as KubeObject), []);
  });
});

test('budgetKey prints namespace/name', () => {
  assert.equal(budgetKey({ metadata: { namespace: 'shop', name: 'web' } }), 'shop/web');
  assert.equal(budgetKey({}), '/');
});
