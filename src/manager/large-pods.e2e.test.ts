/**
 * Issue 21's first finding, repeated against the real manager on the embedded
 * cluster, on the real clock (so a stalled event loop would cost the leader
 * its lease, as it did): a pod template with hundreds of node selector terms
 * took 17 s and 964 MB to answer, 700 terms cost the leader its lease, 5,000
 * tolerations overflowed the stack, and `/healthz` did not answer meanwhile.
 *
 * Now: a pod with 5,000 terms and 5,000 tolerations is answered with a patch
 * that applies and places it; a flood of such pods is answered while
 * `/healthz` keeps answering between them and the leader keeps its lease.
 * (Latency figures: bench/admission-large-pods.ts; tests assert no time.)
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:https';
import { applyPatch } from 'rfc6902';
import { realClock } from '../clock/clock.ts';
import { createReviewBody, HealthProber, largePod, postReview, startLargePodBed, type LargePodBed } from '../testing/large-pods.ts';

const HUGE = { terms: 5000, tolerations: 5000 };

describe('admission of very large pods (real clock)', () => {
  let bed: LargePodBed;
  before(async () => {
    bed = await startLargePodBed();
  });
  after(async () => {
    await bed?.stop();
  });

  test('a pod with 5,000 node selector terms and 5,000 tolerations is answered with a patch that places it', async () => {
    const pod = largePod(HUGE, bed.owner, 'huge-0');
    const answer = await postReview(bed.mutateUrl, createReviewBody(pod, 'huge-review-0'));
    assert.equal(answer.status, 200);
    assert.equal(answer.allowed, true, answer.message);
    const patchedPod = structuredClone(pod) as unknown as Record<string, unknown>;
    const failed = applyPatch(patchedPod, answer.patch as Parameters<typeof applyPatch>[1]).find((r) => r !== null);
    assert.equal(failed, undefined, `the answer's patch applies: ${String(failed)}`);
    const spec = patchedPod['spec'] as { tolerations: { key: string }[]; affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: { matchExpressions: { key: string }[] }[] } } } };
    const terms = spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
    assert.equal(terms.length, 5000);
    assert.ok(terms.every((t) => t.matchExpressions.length === 2 && t.matchExpressions[1]?.key === 'topology.kubernetes.io/zone'), 'every term carries the subset requirement');
    assert.equal(spec.tolerations.length, 5001);
    assert.equal(spec.tolerations[5000]?.key, 'pool');
    const annotations = (patchedPod['metadata'] as { annotations?: Record<string, string> }).annotations ?? {};
    assert.match(annotations['apps.kruise.io/matched-workloadspread'] ?? '', /"subset":"a"/);
  });

  test('20 such pods at once: all answered, /healthz answers between them, and the leader keeps its lease', async () => {
    const clock = realClock();
    const holder = await bed.leaseHolder();
    assert.equal(holder, 'large-pods');
    const bodies = Array.from({ length: 20 }, (_, i) => createReviewBody(largePod(HUGE, bed.owner, `flood-${i}`), `flood-review-${i}`));
    const prober = new HealthProber(bed.healthUrl, clock, 5);
    const agent = new Agent({ keepAlive: true, maxSockets: 64, rejectUnauthorized: false, noDelay: true });
    let inFlight = bodies.length;
    let probesDuringFlood = 0;
    const counted = prober.latencies.length;
    const answers = await Promise.all(
      bodies.map(async (b) => {
        const a = await postReview(bed.mutateUrl, b, agent);
        inFlight--;
        if (inFlight === 0) probesDuringFlood = prober.latencies.length - counted;
        return a;
      }),
    );
    await prober.stop();
    agent.destroy();
    assert.ok(answers.every((a) => a.status === 200 && a.allowed && a.patch.length === 5003), JSON.stringify(answers.map((a) => [a.status, a.allowed, a.patch.length, a.message])));
    assert.deepEqual(prober.failures, [], 'every health probe was answered');
    // Each huge review is cut into steps that take turns with other work: probes are answered while the flood is served.
    assert.ok(probesDuringFlood >= 3, `health probes answered during the flood: ${probesDuringFlood}`);
    assert.equal(bed.manager.isLeader(), true, 'still the leader');
    assert.equal(await bed.leaseHolder(), holder, 'the lease was never lost');
    assert.equal(bed.log.lines.filter((l) => l.level === 'error').length, 0, JSON.stringify(bed.log.lines.filter((l) => l.level === 'error')));
  });
});
