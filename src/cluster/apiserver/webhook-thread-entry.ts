/**
 * The worker thread of `WebhookThread` (webhook-thread.ts): it posts the
 * reviews the API server hands it with `postToWebhook` on the real clock,
 * over its own keep-alive agent, and answers each with the result and how
 * long the call took as this thread saw it — from before the request was
 * made until the whole answer was read.
 *
 * Protocol (structured clone over the worker's port): in, a `ThreadCall`;
 * out, a `ThreadAnswer` with the same id.
 */
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { realClock } from '../../clock/clock.ts';
import { postToWebhook, webhookAgent } from './webhook-client.ts';
import { targetFromWire, type ThreadAnswer, type ThreadCall } from './webhook-thread-wire.ts';

const port = parentPort;
if (port === null) throw new Error('webhook-thread-entry.ts runs only as a worker thread');
const clock = realClock();
const agent = webhookAgent();

port.on('message', (call: ThreadCall) => {
  const started = performance.now();
  void postToWebhook(targetFromWire(call.target), call.body, {
    clock,
    agent,
    caPem: call.caPem,
    ...(call.clientCertificate === undefined ? {} : { clientCertificate: call.clientCertificate }),
    timeoutMs: call.timeoutMs,
    label: call.label,
  }).then((result) => {
    const answer: ThreadAnswer = { id: call.id, result, elapsedMs: performance.now() - started };
    port.postMessage(answer);
  });
});
