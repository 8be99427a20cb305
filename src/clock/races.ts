/**
 * Race mode: the randomness that makes the embedded cluster interleave its
 * components differently from one run to the next, as a real cluster does —
 * behind one small interface (`Races`) handed to the virtual clock and to the
 * embedded cluster, which pass it to the places that take time on a real
 * cluster: a watch stream delivering an event, a controller getting to its
 * next sync, an admission webhook call on its way out and back, and the order
 * of work that falls due at the same virtual instant.
 *
 * Deterministic for a seed: every channel (one watch stream, one controller's
 * queue, one webhook's requests, …) draws from its own small PRNG, seeded by
 * the race seed and the channel's name. What one channel draws therefore does
 * not depend on how many draws other channels made before it, so a run under
 * a seed is reproduced as long as each channel sees the same sequence of work.
 *
 * Without a `Races` (no seed) nothing is delayed or reordered: every caller
 * treats `undefined` as "today's fixed order".
 */

/** The kinds of latency race mode adds; each has its own distribution (`RACE_PROFILE`). */
export type RaceKind = 'watch' | 'sync' | 'webhook';

export interface Races {
  /** The seed the draws come from (reports show it, so a run can be reproduced). */
  readonly seed: number;
  /**
   * Extra clock milliseconds (a non-negative integer) before the next piece
   * of work of `channel` happens: a watch event is delivered, a controller
   * syncs its next key, a webhook call goes out or its answer comes back.
   */
  delay(kind: RaceKind, channel: string): number;
  /** A number in [0, 1) that orders work of `channel` falling due at the same clock instant as other work. */
  rank(channel: string): number;
}

/**
 * One kind's latency: `zero` is the chance of no delay at all; otherwise a
 * short delay uniform in [1, short] ms, or with chance `stall` a long one
 * uniform in (short, long] ms (an informer or a controller that falls behind).
 */
export interface RaceLatency {
  zero: number;
  short: number;
  stall: number;
  long: number;
}

/** The latencies race mode draws from (documented in docs/scenarios.md, "Timing races"). */
export const RACE_PROFILE: Readonly<Record<RaceKind, RaceLatency>> = {
  watch: { zero: 0.4, short: 30, stall: 0.1, long: 300 },
  sync: { zero: 0.4, short: 30, stall: 0.1, long: 300 },
  webhook: { zero: 0.5, short: 20, stall: 0.05, long: 200 },
};

/** The largest seed (seeds are unsigned 32-bit integers). */
export const MAX_RACE_SEED = 0xffff_ffff;

/** FNV-1a over the UTF-16 code units of `text`: a stable 32-bit hash of a channel's name. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** mulberry32: one step of a small, fast PRNG with 32 bits of state; answers the next state and a number in [0, 1). */
function mulberry32(state: number): [number, number] {
  const next = (state + 0x6d2b79f5) >>> 0;
  let t = next;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return [next, ((t ^ (t >>> 14)) >>> 0) / 4294967296];
}

/** A `Races` for `seed` (an integer in [0, MAX_RACE_SEED]). */
export function seededRaces(seed: number, profile: Readonly<Record<RaceKind, RaceLatency>> = RACE_PROFILE): Races {
  if (!Number.isInteger(seed) || seed < 0 || seed > MAX_RACE_SEED) throw new RangeError(`a race seed is an integer from 0 to ${MAX_RACE_SEED}, not ${String(seed)}`);
  const states = new Map<string, number>();
  const mixed = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  const draw = (channel: string): number => {
    const [next, value] = mulberry32(states.get(channel) ?? (hash32(channel) ^ mixed) >>> 0);
    states.set(channel, next);
    return value;
  };
  return {
    seed,
    delay(kind, channel) {
      const p = profile[kind];
      const r = draw(`${kind}:${channel}`);
      if (r < p.zero) return 0;
      const rest = (r - p.zero) / (1 - p.zero);
      const stall = p.stall / (1 - p.zero);
      if (rest < stall) return p.short + 1 + Math.floor((rest / stall) * (p.long - p.short));
      return 1 + Math.floor(((rest - stall) / (1 - stall)) * p.short);
    },
    rank: (channel) => draw(`rank:${channel}`),
  };
}
