/**
 * Client-side rate limiting of API requests, with client-go's semantics
 * (`flowcontrol.NewTokenBucketRateLimiter`): a bucket of `burst` tokens,
 * full at start, refilled at `qps` tokens a second; every request (list,
 * get, write, and the start of a watch) takes one, waiting on the clock for
 * it when the bucket is empty. Waiters are served in arrival order, each
 * reserving the next token, as golang.org/x/time/rate's reservations do. A
 * non-positive `qps` means no limit (client-go: a negative QPS disables the
 * limiter). Defaults as controller-runtime sets them on a rest config
 * without its own: 20 requests a second, bursts of 30.
 */
import type { Clock } from '../clock/clock.ts';

export const DEFAULT_QPS = 20;
export const DEFAULT_BURST = 30;

export interface RateLimitSettings {
  qps: number;
  burst: number;
}

export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;
  /** Told how long each request waited for its token (ms; 0 when there was one). */
  onWait: ((ms: number) => void) | undefined;

  constructor(clock: Clock, settings: RateLimitSettings) {
    if (!Number.isFinite(settings.qps) || !Number.isFinite(settings.burst)) throw new Error(`rate limit: qps and burst must be numbers, got ${settings.qps} and ${settings.burst}`);
    if (settings.qps > 0 && settings.burst < 1) throw new Error(`rate limit: burst must be at least 1 when qps is set, got ${settings.burst}`);
    this.#clock = clock;
    this.qps = settings.qps;
    this.burst = Math.floor(settings.burst);
    this.#tokens = this.burst;
    this.#last = clock.now();
  }

  /** Whether the bucket limits anything at all. */
  get enabled(): boolean {
    return this.qps > 0;
  }

  /** Takes one token, waiting on the clock until there is one; rejects when `signal` aborts the wait. */
  async take(signal?: AbortSignal): Promise<void> {
    if (!this.enabled) return;
    const now = this.#clock.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) * this.qps) / 1000);
    this.#last = now;
    this.#tokens -= 1;
    if (this.#tokens >= 0) {
      this.onWait?.(0);
      return;
    }
    // A reservation: this request's token arrives once the debt is paid off.
    const waitMs = Math.ceil((-this.#tokens * 1000) / this.qps);
    try {
      await this.#clock.sleep(waitMs, signal, { name: 'client rate limiter' });
    } catch (err) {
      // A cancelled wait gives its token back.
      this.#tokens += 1;
      throw err;
    }
    this.onWait?.(waitMs);
  }
}
