import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../k8s/types.ts';
import { acceptNames } from './crd-names.ts';

const crd = (name: string, group: string, names: Record<string, unknown>, accepted?: Record<string, unknown>): KubeObject => ({
  metadata: { name },
  spec: { group, names },
  ...(accepted === undefined ? {} : { status: { acceptedNames: accepted } }),
});
const held = crd('widgets.example.com', 'example.com', {}, { plural: 'widgets', singular: 'widget', shortNames: ['wd'], kind: 'Widget', listKind: 'WidgetList' });

describe('acceptNames', () => {
  const cases: [string, Record<string, unknown>, string | undefined][] = [
    ['no conflict', { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' }, undefined],
    ['plural taken by a singular', { plural: 'widget', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' }, 'PluralConflict "widget" is already in use'],
    ['singular taken', { plural: 'gizmos', singular: 'widgets', kind: 'Gizmo', listKind: 'GizmoList' }, 'SingularConflict "widgets" is already in use'],
    ['short name taken', { plural: 'gizmos', singular: 'gizmo', shortNames: ['gz', 'wd'], kind: 'Gizmo', listKind: 'GizmoList' }, 'ShortNamesConflict "wd" is already in use'],
    ['kind taken', { plural: 'gizmos', singular: 'gizmo', kind: 'Widget', listKind: 'GizmoList' }, 'KindConflict "Widget" is already in use'],
    ['list kind taken', { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'WidgetList' }, 'ListKindConflict "WidgetList" is already in use'],
  ];
  for (const [name, names, want] of cases) {
    test(name, () => {
      const v = acceptNames(crd(`${String(names['plural'])}.example.com`, 'example.com', names), [held]);
      assert.equal(v.conflict === undefined ? undefined : `${v.conflict.reason} ${v.conflict.message}`, want);
    });
  }
  test('the same names in another group do not conflict', () => {
    assert.equal(acceptNames(crd('widgets.other.io', 'other.io', { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' }), [held]).conflict, undefined);
  });
  test('a CRD keeps the names it accepted before; the others it asks for are accepted', () => {
    const v = acceptNames(crd('gizmos.example.com', 'example.com', { plural: 'gizmos', singular: 'gizmo', shortNames: ['wd'], kind: 'Gizmo', listKind: 'GizmoList' }, { plural: 'gizmos', shortNames: ['wd'] }), [held]);
    assert.equal(v.conflict, undefined);
    assert.deepEqual(v.accepted, { plural: 'gizmos', singular: 'gizmo', shortNames: ['wd'], kind: 'Gizmo', listKind: 'GizmoList' });
  });
});
