import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { barCells, barScale, podsOverLimit, renderBar, type BarCounts } from './bars.ts';
import { createStyle, padVisible, stripAnsi, visibleWidth, wantsColor } from './style.ts';

const plain = createStyle(false);
const color = createStyle(true);

describe('bars: one cell per pod while everything fits', () => {
  const cases: [string, BarCounts, string][] = [
    ['ready pods fill from the left, free quota follows', { ready: 2, notReady: 0, limit: 4 }, '██··'],
    ['not-ready pods after the ready ones', { ready: 1, notReady: 2, limit: 4 }, '█▒▒·'],
    ['a full subset has no free cells', { ready: 4, notReady: 0, limit: 4 }, '████'],
    ['unlimited: only the pods, padded', { ready: 3, notReady: 0, limit: null }, '███ '],
    ['an empty subset with quota: all free', { ready: 0, notReady: 0, limit: 4 }, '····'],
    ['limit 0: nothing', { ready: 0, notReady: 0, limit: 0 }, '    '],
  ];
  const scale = barScale([{ ready: 4, notReady: 0, limit: 4 }], 20);
  for (const [name, counts, expected] of cases) test(name, () => assert.equal(renderBar(counts, scale, plain), expected));

  test('the scale is the largest of limits and pod counts', () => {
    assert.deepEqual(barScale([{ ready: 2, notReady: 0, limit: 6 }, { ready: 9, notReady: 0, limit: null }], 20), { podsPerCell: 1, cells: 9 });
  });
});

describe('bars: above the limit', () => {
  test('pods above the limit are red; the same glyphs without colour', () => {
    const counts = { ready: 5, notReady: 0, limit: 3 };
    const scale = barScale([counts], 20);
    assert.equal(renderBar(counts, scale, plain), '█████');
    assert.equal(renderBar(counts, scale, color), '\u001b[32m███\u001b[39m\u001b[31m██\u001b[39m');
  });
});

describe('bars: scaled when pods outnumber the cells', () => {
  test('150 pods in 20 cells: 8 pods per cell, the largest bar fills the width', () => {
    const scale = barScale([{ ready: 150, notReady: 0, limit: null }, { ready: 100, notReady: 0, limit: 100 }], 20);
    assert.deepEqual(scale, { podsPerCell: 8, cells: 19 });
    assert.equal(renderBar({ ready: 150, notReady: 0, limit: null }, scale, plain), '█'.repeat(19));
    assert.equal(renderBar({ ready: 100, notReady: 0, limit: 100 }, scale, plain), `${'█'.repeat(13)}${' '.repeat(6)}`);
  });

  test('one pod never vanishes into rounding', () => {
    const scale = barScale([{ ready: 200, notReady: 0, limit: null }], 20);
    assert.equal(stripAnsi(renderBar({ ready: 1, notReady: 0, limit: null }, scale, plain)).trim(), '█');
  });

  test('property: every bar of a scale is exactly `cells` wide, in or out of colour', () => {
    const counts = fc.record({ ready: fc.nat(500), notReady: fc.nat(500), limit: fc.option(fc.nat(500), { nil: null }) });
    fc.assert(
      fc.property(fc.array(counts, { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 40 }), (bars, max) => {
        const scale = barScale(bars, max);
        assert.ok(scale.cells <= max);
        for (const b of bars) {
          assert.equal(visibleWidth(renderBar(b, scale, color)), scale.cells);
          assert.equal(stripAnsi(renderBar(b, scale, color)), renderBar(b, scale, plain));
        }
      }),
    );
  });

  test('property: with one pod per cell, the cells count ready, not-ready and free exactly', () => {
    fc.assert(
      fc.property(fc.nat(20), fc.nat(20), fc.nat(40), (ready, notReady, limit) => {
        const counts = { ready, notReady, limit };
        const cells = barCells(counts, barScale([counts], 100));
        const count = (...kinds: string[]) => cells.filter((c) => kinds.includes(c)).length;
        assert.equal(count('ready', 'surplusReady'), ready);
        assert.equal(count('notReady', 'surplusNotReady'), notReady);
        assert.equal(count('free'), Math.max(0, limit - ready - notReady));
        assert.equal(count('surplusReady', 'surplusNotReady'), Math.max(0, ready + notReady - limit));
      }),
    );
  });
});

describe('style', () => {
  test('--no-color wins; otherwise the environment decides', () => {
    assert.deepEqual([wantsColor(false, true), wantsColor(true, true), wantsColor(undefined, true), wantsColor(undefined, false)], [false, true, true, false]);
  });
  test('padding counts visible columns, not escape bytes', () => {
    assert.equal(stripAnsi(padVisible(color.red('ab'), 4)), 'ab  ');
  });
  test('pods over limit', () => assert.deepEqual([podsOverLimit(3, 4), podsOverLimit(3, null)], ['3/4', '3']));
});
