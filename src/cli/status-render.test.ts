/**
 * The rebalancer's lines of `workloadspread status` (D18): the setting, the
 * reason with since when and the pods to move, the message unless balanced,
 * one line per move in flight. The table itself is checked end to end in
 * status.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RebalanceView, WorkloadSpreadView } from './status-model.ts';
import { rebalanceLines, renderViews } from './status-render.ts';
import { createStyle, stripAnsi } from './style.ts';

const plain = createStyle(false);
const base: RebalanceView = { enabled: true, maxInFlight: 1, reason: null, message: null, since: null, pending: null, moves: [] };

describe('rebalanceLines', () => {
  test('not looked at yet', () => {
    assert.deepEqual(rebalanceLines(base, plain), ['Rebalancing: on (1 move at a time) — not looked at yet']);
  });

  test('moving: the reason, since when, pods to move, then each move in flight', () => {
    const lines = rebalanceLines({ ...base, maxInFlight: 2, reason: 'Moving', message: 'waiting for the replacement of pod ns/p9 (moved from subset b to subset a) to be Ready', since: '2026-01-01T00:05:00Z', pending: 1, moves: [{ pod: 'p9', from: 'b', to: 'a', evictedAt: '2026-01-01T00:05:00Z' }, { pod: 'p8', from: null, to: 'a', evictedAt: '2026-01-01T00:05:02Z' }] }, plain);
    assert.deepEqual(lines, [
      'Rebalancing: on (2 moves at a time) — Moving since 2026-01-01T00:05:00Z: 1 pod to move',
      '  waiting for the replacement of pod ns/p9 (moved from subset b to subset a) to be Ready',
      '  moving p9: b → a, evicted 2026-01-01T00:05:00Z',
      '  moving p8: (no subset) → a, evicted 2026-01-01T00:05:02Z',
    ]);
  });

  test('balanced: one line; blocked: the reason and why', () => {
    assert.deepEqual(rebalanceLines({ ...base, reason: 'Balanced', message: 'every pod is in the subset the spec wants it in', since: '2026-01-01T00:07:00Z', pending: 0 }, plain), ['Rebalancing: on (1 move at a time) — Balanced since 2026-01-01T00:07:00Z: 0 pods to move']);
    assert.deepEqual(rebalanceLines({ ...base, reason: 'NoRoom', message: 'subset zone-a wants more pods but none of its nodes can host one', since: '2026-01-01T00:00:40Z', pending: 2 }, plain), [
      'Rebalancing: on (1 move at a time) — NoRoom since 2026-01-01T00:00:40Z: 2 pods to move',
      '  subset zone-a wants more pods but none of its nodes can host one',
    ]);
  });

  test('an invalid annotation says so', () => {
    const lines = rebalanceLines({ ...base, enabled: false, maxInFlight: null, error: 'annotation workloadspread.io/rebalance is "yes": must be "true" or "false"', reason: 'InvalidSettings', message: 'annotation workloadspread.io/rebalance is "yes": must be "true" or "false"', pending: 0 }, plain);
    assert.equal(lines[0], 'Rebalancing: invalid: annotation workloadspread.io/rebalance is "yes": must be "true" or "false" — InvalidSettings: 0 pods to move');
  });
});

describe('control characters in what the cluster holds are shown, never obeyed', () => {
  const HOSTILE = 'a\u001b]0;pwned\u0007\u001b[2J\u009b';
  const VISIBLE = 'a\\x1b]0;pwned\\x07\\x1b[2J\\u009b';
  const view: WorkloadSpreadView = {
    namespace: `ns${HOSTILE}`,
    name: `ws${HOSTILE}`,
    target: { apiVersion: 'apps/v1', kind: 'Deployment', name: `web${HOSTILE}`, found: true, replicas: 3 },
    statusCurrent: true,
    subsets: [{ name: `zone${HOSTILE}`, limit: 2, minReplicas: null, pods: 1, ready: 1, pending: 0, missing: 1, creating: 0, deleting: 0, schedulable: { status: 'False', reason: `Why${HOSTILE}`, since: null }, deletionCost: null }],
    placed: 1,
    ready: 1,
    pods: [{ name: `p${HOSTILE}`, node: `n${HOSTILE}`, phase: 'Running', ready: true, subset: `zone${HOSTILE}`, deletionCost: null }],
    unassigned: [{ name: `q${HOSTILE}`, node: null, phase: 'Pending', ready: false, subset: null, reason: `because${HOSTILE}`, deletionCost: null }],
    problems: [`problem${HOSTILE}`],
    rebalance: { ...base, reason: 'NoRoom', message: `msg${HOSTILE}`, since: '2026-01-01T00:00:00Z', pending: 1, moves: [{ pod: `m${HOSTILE}`, from: null, to: `zone${HOSTILE}`, evictedAt: '2026-01-01T00:00:00Z' }] },
  };
  // eslint-disable-next-line no-control-regex
  const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
  for (const color of [false, true]) {
    test(`every name, reason and message (${color ? 'with' : 'without'} colour, -o wide)`, () => {
      const out = renderViews([view], createStyle(color), { wide: true });
      assert.doesNotMatch(stripAnsi(out), CONTROL, 'no control character but the line ends (and the colours asked for)');
      for (const what of ['ns', 'ws', 'web', 'zone', 'Why', 'p', 'n', 'q', 'because', 'problem', 'msg', 'm']) assert.ok(stripAnsi(out).includes(`${what}${VISIBLE}`), `${what} shown escaped`);
    });
  }
});
