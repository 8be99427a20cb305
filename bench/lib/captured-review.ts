/**
 * The pod CREATE review a mutating webhook receives for a Deployment's pod,
 * captured from the embedded cluster rather than written out by hand: a
 * cluster of its own (real clock, its default controllers, no nodes), a
 * recording webhook server scoped to one namespace, and a Deployment of one
 * replica there. The Deployment and ReplicaSet controllers make the pod; the
 * API server runs it through defaulting, the service-account admission and
 * field management, then sends the review; the server records it and
 * admits the pod. Everything is stopped before the review is returned.
 * Used by bench/webhook-serving.ts, whose reviews are this one with their
 * uid changed.
 */
import { realClock } from '../../src/clock/clock.ts';
import { BUILTIN } from '../../src/client/resources.ts';
import { startCluster } from '../../src/cluster/index.ts';
import type { KubeObject } from '../../src/k8s/types.ts';
import { eventually } from '../../src/testing/eventually.ts';
import { allow, startWebhookServer } from '../../src/testing/webhook-server.ts';

const NAMESPACE = 'bench';
const PATH = '/mutate-pod';
const WAIT_MS = 60_000;

/** The review as sent (apiVersion, kind, request) for the first pod of Deployment `web-000` in namespace `bench`. */
export async function captureDeploymentPodReview(): Promise<{ apiVersion?: string; kind?: string; request: Record<string, unknown> }> {
  const clock = realClock();
  const cluster = await startCluster({ clock, nodes: [] });
  try {
    const hooks = await startWebhookServer({ clock });
    try {
      hooks.handle(PATH, () => allow());
      await cluster.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
      const configuration: KubeObject = {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'capture' },
        webhooks: [
          {
            name: 'capture.bench.local',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            clientConfig: { url: hooks.urlFor(PATH), caBundle: hooks.caBundle },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NAMESPACE } },
          },
        ],
      };
      const created = await cluster.apiServer.control.create(configuration);
      if (!created.ok) throw new Error(`the capturing webhook configuration was refused: ${created.status.message ?? ''}`);
      await cluster.client.create(BUILTIN.deployments, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web-000', namespace: NAMESPACE },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web-000' } },
          template: { metadata: { labels: { app: 'web-000' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '10m', memory: '16Mi' } } }] } },
        },
      });
      const review = await eventually(
        () => {
          const first = hooks.requestsTo(PATH).find((r) => r.request?.operation === 'CREATE')?.review;
          if (first === undefined) throw new Error('no pod CREATE review has reached the capturing webhook');
          return first;
        },
        { timeoutMs: WAIT_MS },
      );
      if (review.request === undefined) throw new Error('the captured review has no request');
      return { ...(review.apiVersion === undefined ? {} : { apiVersion: review.apiVersion }), ...(review.kind === undefined ? {} : { kind: review.kind }), request: review.request as unknown as Record<string, unknown> };
    } finally {
      await hooks.close();
    }
  } finally {
    await cluster.stop();
  }
}

