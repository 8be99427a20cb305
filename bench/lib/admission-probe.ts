/**
 * A caller that is not busy: while a phase of a scale benchmark runs, it
 * sends the manager's webhook a small pod CREATE review every `gapMs` (one
 * at a time, over a kept-alive connection as the API server does) and GETs
 * its health endpoint as often (src/testing/large-pods.ts HealthProber),
 * timing each answer from this lightly loaded process. The pods have no
 * owner, so no WorkloadSpread matches them: the handler's own work is a few
 * lookups, and what the timings show is how long an admission waits behind
 * the rest of the manager's process (and TLS, HTTP and JSON) — the delay an
 * API server with spare CPU would see. The embedded API server's own timings
 * of the real calls also include its own event-loop delay, which on the
 * benchmark's machine is most of them.
 */
import { Agent } from 'node:https';
import type { Clock } from '../../src/clock/clock.ts';
import type { Pod } from '../../src/k8s/types.ts';
import { createReviewBody, HealthProber, postReview } from '../../src/testing/large-pods.ts';

export class AdmissionProbe {
  readonly reviewMs: number[] = [];
  readonly #failures: string[] = [];
  readonly #health: HealthProber;
  readonly #stop = new AbortController();
  readonly #done: Promise<void>;

  constructor(clock: Clock, webhookUrl: string, healthUrl: string, namespace: string, gapMs = 25) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    this.#health = new HealthProber(healthUrl, clock, gapMs);
    this.#done = (async () => {
      for (let n = 1; !this.#stop.signal.aborted; n++) {
        const name = `probe-${n}`;
        const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } };
        try {
          const answer = await postReview(`${webhookUrl}/mutate-pod`, createReviewBody(pod, name), agent);
          if (answer.allowed) this.reviewMs.push(answer.ms);
          else this.#failures.push(`probe review refused: ${answer.message}`);
        } catch (err) {
          this.#failures.push(err instanceof Error ? err.message : String(err));
        }
        await clock.sleep(gapMs, this.#stop.signal).catch(() => {});
      }
      agent.destroy();
    })();
  }

  get healthMs(): number[] {
    return this.#health.latencies;
  }

  get failures(): string[] {
    return [...this.#failures, ...this.#health.failures];
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.all([this.#done, this.#health.stop()]);
  }
}
