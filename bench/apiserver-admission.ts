/**
 * Benchmark: pod creation through the embedded API server's admission chain.
 *
 * Run:  node --import tsx bench/apiserver-admission.ts [pods=2000] [concurrency=32]
 *
 * Prints (figures only, no assertions) pods/s and ms per pod for N pod creates
 * over HTTPS (keep-alive, `concurrency` in flight), in three settings:
 * - built-in admission only (ServiceAccount, Priority, DefaultTolerationSeconds);
 * - plus one mutating webhook (HTTPS, JSON patch adding a label), the shape of
 *   WorkloadSpread's pod webhook;
 * - plus a validating webhook as well;
 * - one validating webhook alone, then the same webhook with one match
 *   condition that is true (the cost of evaluating it on every call), and
 *   with one that is false (the webhook is not called: what skipping saves);
 * and the ratio of each to the first. The server and the webhook run on the
 * real clock in this process, so the figures include both ends of every call.
 */
import { Agent, request } from 'node:https';
import { realClock } from '../src/clock/clock.ts';
import { startApiServer, type ApiServer } from '../src/cluster/index.ts';
import { allow, patch, startWebhookServer } from '../src/testing/webhook-server.ts';

const N = Number(process.argv[2] ?? 2000);
const CONCURRENCY = Number(process.argv[3] ?? 32);

function post(server: ApiServer, agent: Agent, path: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: server.host,
        port: server.port,
        method: 'POST',
        path,
        ca: server.caPem,
        agent,
        headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function podBody(ns: string, i: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: ns, labels: { app: 'bench' } },
    spec: { containers: [{ name: 'app', image: 'nginx:1.25', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
  });
}

async function createPods(server: ApiServer, agent: Agent, ns: string): Promise<number> {
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (;;) {
        const i = next++;
        if (i >= N) return;
        const status = await post(server, agent, `/api/v1/namespaces/${ns}/pods`, podBody(ns, i));
        if (status !== 201) failures++;
      }
    }),
  );
  if (failures > 0) throw new Error(`${failures} creates failed in ${ns}`);
  return performance.now() - started;
}

async function main(): Promise<void> {
  const clock = realClock();
  const server = await startApiServer({ clock });
  const hooks = await startWebhookServer();
  hooks.handle('/mutate', () => patch([{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }]));
  hooks.handle('/validate', () => allow());
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const webhook = (name: string, path: string, ns: string, matchConditions: { name: string; expression: string }[] = []) => ({
    name,
    matchConditions,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    clientConfig: { url: hooks.urlFor(path), caBundle: hooks.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
  });

  const settings: { name: string; ns: string; setup: () => Promise<void> }[] = [
    { name: 'built-in admission only', ns: 'plain', setup: async () => {} },
    {
      name: '+ one mutating webhook',
      ns: 'mutating',
      setup: async () => {
        await server.control.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'm' }, webhooks: [webhook('m.bench.example.com', '/mutate', 'mutating')] });
      },
    },
    {
      name: '+ mutating and validating webhooks',
      ns: 'both',
      setup: async () => {
        await server.control.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'm2' }, webhooks: [webhook('m2.bench.example.com', '/mutate', 'both')] });
        await server.control.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'v2' }, webhooks: [webhook('v2.bench.example.com', '/validate', 'both')] });
      },
    },
    {
      name: '+ one validating webhook',
      ns: 'validating',
      setup: async () => {
        await server.control.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'v3' }, webhooks: [webhook('v3.bench.example.com', '/validate', 'validating')] });
      },
    },
    {
      name: '  same, one match condition (true)',
      ns: 'condition-true',
      setup: async () => {
        const condition = [{ name: 'not-terminating', expression: '!has(object.metadata.deletionTimestamp)' }];
        await server.control.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'v4' }, webhooks: [webhook('v4.bench.example.com', '/validate', 'condition-true', condition)] });
      },
    },
    {
      name: '  same, one match condition (false)',
      ns: 'condition-false',
      setup: async () => {
        const condition = [{ name: 'terminating', expression: 'has(object.metadata.deletionTimestamp)' }];
        await server.control.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'v5' }, webhooks: [webhook('v5.bench.example.com', '/validate', 'condition-false', condition)] });
      },
    },
  ];

  console.log(`${N} pod creates, ${CONCURRENCY} in flight`);
  let baseline = 0;
  for (const s of settings) {
    await server.control.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: s.ns } });
    await server.core.idle();
    await s.setup();
    const ms = await createPods(server, agent, s.ns);
    const perSecond = (N / ms) * 1000;
    if (baseline === 0) baseline = perSecond;
    console.log(`${s.name.padEnd(36)} ${ms.toFixed(0).padStart(7)} ms  ${perSecond.toFixed(0).padStart(6)} pods/s  ${(ms / N).toFixed(2)} ms/pod  ×${(perSecond / baseline).toFixed(2)}`);
  }
  console.log(`webhook calls: ${hooks.requests.length} (the false match condition's webhook: ${hooks.requests.filter((r) => r.request?.namespace === 'condition-false').length})`);
  agent.destroy();
  await hooks.close();
  await server.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
