/**
 * A caller that is not busy: while a phase of a scale benchmark runs, it
 * sends the manager's webhook a small pod CREATE review every `gapMs` (one
 * at a time, over a kept-alive connection as the API server does) and GETs
 * its health endpoint as often, timing each answer from this lightly loaded
 * process. The pods have no owner, so no WorkloadSpread matches them: the
 * handler's own work is a few lookups, and what the timings show is how long
 * an admission waits behind the rest of the manager's process (and TLS, HTTP
 * and JSON) — the delay an API server with spare CPU would see. The embedded
 * API server's own timings of the real calls also include its own
 * event-loop delay, which on the benchmark's machine is most of them.
 */
import { Agent, get } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Clock } from '../../src/clock/clock.ts';
import type { Pod } from '../../src/k8s/types.ts';
import { createReviewBody, postReview } from '../../src/testing/large-pods.ts';

export class AdmissionProbe {
  readonly reviewMs: number[] = [];
  readonly healthMs: number[] = [];
  readonly failures: string[] = [];
  readonly #stop = new AbortController();
  readonly #done: Promise<void>;

  constructor(clock: Clock, webhookUrl: string, healthUrl: string, namespace: string, gapMs = 25) {
    const reviews = new HttpsAgent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    const health = new Agent({ keepAlive: true, maxSockets: 1 });
    let n = 0;
    const loop = async (once: () => Promise<number>, into: number[]): Promise<void> => {
      while (!this.#stop.signal.aborted) {
        try {
          into.push(await once());
        } catch (err) {
          this.failures.push(err instanceof Error ? err.message : String(err));
        }
        await clock.sleep(gapMs, this.#stop.signal).catch(() => {});
      }
    };
    const review = async (): Promise<number> => {
      const name = `probe-${++n}`;
      const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } };
      const answer = await postReview(`${webhookUrl}/mutate-pod`, createReviewBody(pod, name), reviews);
      if (!answer.allowed) throw new Error(`probe review refused: ${answer.message}`);
      return answer.ms;
    };
    const healthz = (): Promise<number> =>
      new Promise((resolve, reject) => {
        const started = performance.now();
        const req = get(healthUrl, { agent: health }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`healthz answered ${res.statusCode}`))));
        });
        req.on('error', reject);
      });
    this.#done = Promise.all([loop(review, this.reviewMs), loop(healthz, this.healthMs)]).then(() => {
      reviews.destroy();
      health.destroy();
    });
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#done;
  }
}
