/**
 * A child process that POSTs AdmissionReviews for bench/admission-large-pods.ts,
 * so the load generator's own work (building and encrypting megabytes of
 * requests, decoding the answers' patches) runs outside the process it
 * measures. Message in: `SendOrder` (the pods are built here, from their
 * shape); message out: one `SentAnswer` per review, in order, once all are
 * answered (or `{ error }`).
 */
import { Agent } from 'node:https';
import type { KubeObject } from '../../src/k8s/types.ts';
import { createReviewBody, largePod, postReview, type PodShape } from '../../src/testing/large-pods.ts';

export interface SendOrder {
  url: string;
  owner: KubeObject;
  shape: PodShape;
  count: number;
  /** Prefix of pod names and review uids. */
  prefix: string;
}

export interface SentAnswer {
  allowed: boolean;
  ops: number;
  patchBytes: number;
  reviewBytes: number;
  ms: number;
  message: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256, rejectUnauthorized: false, noDelay: true });
process.on('message', (order: SendOrder) => {
  const bodies = Array.from({ length: order.count }, (_, i) => createReviewBody(largePod(order.shape, order.owner, `${order.prefix}-${i}`), `${order.prefix}-${i}`));
  void Promise.all(bodies.map((b) => postReview(order.url, b, agent))).then(
    (answers) =>
      process.send?.(
        answers.map((a, i): SentAnswer => ({ allowed: a.allowed, ops: a.patch.length, patchBytes: Buffer.byteLength(JSON.stringify(a.patch)), reviewBytes: Buffer.byteLength(bodies[i] ?? ''), ms: a.ms, message: a.message })),
      ),
    (err: unknown) => process.send?.({ error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
