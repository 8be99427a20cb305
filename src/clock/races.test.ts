/**
 * Race mode's randomness (races.ts) and the virtual clock's same-instant
 * order under it: a seed gives the same draws every time, channel by
 * channel whatever the other channels drew; different seeds give different
 * draws; delays stay within the profile; and timers due at the same instant
 * fire in an order the seed decides, (time, creation) without a seed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_RACE_SEED, RACE_PROFILE, seededRaces, type RaceKind } from './races.ts';
import { VirtualClock } from './virtual-clock.ts';

const T0 = Date.UTC(2026, 0, 1);
const KINDS: RaceKind[] = ['watch', 'sync', 'webhook'];

const draws = (seed: number, kind: RaceKind, channel: string, n: number): number[] => {
  const races = seededRaces(seed);
  return Array.from({ length: n }, () => races.delay(kind, channel));
};

describe('seededRaces', () => {
  test('the same seed draws the same delays, channel by channel', () => {
    for (const kind of KINDS) assert.deepEqual(draws(7, kind, 'replicaset-controller', 200), draws(7, kind, 'replicaset-controller', 200));
  });

  test("a channel's draws do not depend on what other channels drew before", () => {
    const alone = draws(7, 'watch', 'manager pods #1', 50);
    const races = seededRaces(7);
    const mixed: number[] = [];
    for (let i = 0; i < 50; i++) {
      for (let j = 0; j < i % 4; j++) races.delay('watch', 'scheduler pods #1');
      races.delay('sync', 'manager pods #1'); // same name, other kind: another channel
      mixed.push(races.delay('watch', 'manager pods #1'));
    }
    assert.deepEqual(mixed, alone);
  });

  test('different seeds and different channels draw differently', () => {
    assert.notDeepEqual(draws(1, 'watch', 'a', 50), draws(2, 'watch', 'a', 50));
    assert.notDeepEqual(draws(1, 'watch', 'a', 50), draws(1, 'watch', 'b', 50));
    const r1 = seededRaces(1);
    const r2 = seededRaces(2);
    assert.notDeepEqual(
      Array.from({ length: 20 }, () => r1.rank('sleep')),
      Array.from({ length: 20 }, () => r2.rank('sleep')),
    );
  });

  test('delays are whole milliseconds within the profile: no delay, short ones and the occasional stall', () => {
    for (const kind of KINDS) {
      const p = RACE_PROFILE[kind];
      const all = Array.from({ length: 40 }, (_, seed) => draws(seed, kind, `channel-${seed}`, 100)).flat();
      for (const d of all) assert.ok(Number.isInteger(d) && d >= 0 && d <= p.long, `${kind}: ${d}`);
      const zero = all.filter((d) => d === 0).length / all.length;
      const stalls = all.filter((d) => d > p.short).length / all.length;
      // 4,000 draws: the shares are near the profile's (loose bounds; the exact values are the PRNG's).
      assert.ok(Math.abs(zero - p.zero) < 0.05, `${kind}: ${zero} without delay`);
      assert.ok(Math.abs(stalls - p.stall) < 0.03, `${kind}: ${stalls} stalls`);
      assert.ok(all.some((d) => d > 0 && d <= p.short));
    }
  });

  test('ranks are in [0, 1)', () => {
    const races = seededRaces(3);
    for (let i = 0; i < 1000; i++) {
      const r = races.rank('x');
      assert.ok(r >= 0 && r < 1);
    }
  });

  test('a seed is an unsigned 32-bit integer', () => {
    assert.equal(seededRaces(0).seed, 0);
    assert.equal(seededRaces(MAX_RACE_SEED).seed, MAX_RACE_SEED);
    for (const bad of [-1, 1.5, MAX_RACE_SEED + 1, Number.NaN]) assert.throws(() => seededRaces(bad), RangeError);
  });
});

describe('VirtualClock in race mode', () => {
  /** The order in which ten timers due at the same instant fire. */
  async function sameInstantOrder(clock: VirtualClock): Promise<number[]> {
    const fired: number[] = [];
    for (let i = 0; i < 10; i++) clock.setTimeout(() => void fired.push(i), 100, { name: `t${i % 3}` });
    clock.setTimeout(() => void fired.push(99), 50); // earlier time still goes first
    await clock.advance(200);
    return fired;
  }

  test('without races, same-instant timers fire in creation order', async () => {
    assert.deepEqual(await sameInstantOrder(new VirtualClock(T0)), [99, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test('with races, the seed decides their order — the same for the same seed, another for another seed', async () => {
    const orders = new Map<number, string>();
    for (const seed of [1, 2, 3, 4, 5]) {
      const first = await sameInstantOrder(new VirtualClock(T0, { races: seededRaces(seed) }));
      const again = await sameInstantOrder(new VirtualClock(T0, { races: seededRaces(seed) }));
      assert.deepEqual(again, first, `seed ${seed} replays`);
      assert.equal(first[0], 99, 'time order is kept');
      assert.deepEqual([...first].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 99]);
      orders.set(seed, first.join(','));
    }
    assert.ok(new Set(orders.values()).size >= 4, `different seeds, different orders: ${[...orders.values()].join(' | ')}`);
    assert.ok([...orders.values()].some((o) => o !== '99,0,1,2,3,4,5,6,7,8,9'));
  });
});
