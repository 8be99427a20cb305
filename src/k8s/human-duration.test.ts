import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { humanDuration, shortHumanDuration } from './human-duration.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

test('humanDuration: one case per band', () => {
  const cases: [number, string][] = [
    [-3 * S, '<invalid>'],
    [-1 * S, '0s'],
    [0, '0s'],
    [59 * S, '59s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [3 * M + 20 * S, '3m20s'],
    [10 * M + 5 * S, '10m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [5 * H + 3 * M, '5h3m'],
    [8 * H + 30 * M, '8h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [3 * D + 4 * H, '3d4h'],
    [8 * D + 5 * H, '8d'],
    [400 * D, '400d'],
    [2 * 365 * D + 30 * D, '2y30d'],
    [3 * 365 * D, '3y'],
    [9 * 365 * D + 3 * D, '9y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms}ms`);
});

test('shortHumanDuration: one unit', () => {
  const cases: [number, string][] = [
    [30 * S, '30s'],
    [90 * S, '1m'],
    [90 * M, '1h'],
    [30 * H, '1d'],
    [400 * D, '1y'],
  ];
  for (const [ms, want] of cases) assert.equal(shortHumanDuration(ms), want);
});

test('property: under two minutes every second prints as itself', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 119 }), (s) => {
      assert.equal(humanDuration(s * S), `${s}s`);
    }),
  );
});
