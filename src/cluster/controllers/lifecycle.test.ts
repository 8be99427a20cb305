/**
 * Every control loop of the embedded cluster — the default controllers and
 * the kubelet — keeps the lifecycle contract (client/runnable.ts) against a
 * real API server: a second start lists nothing more, stop is idempotent and
 * may come before or during a start, a stopped loop does not start again,
 * and a stop leaves no timer behind — also in a whole cluster stopped with
 * rollouts, Jobs, budgets and heartbeats in flight.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../client/logger.ts';
import { BUILTIN } from '../../client/resources.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { EmbeddedCluster } from '../cluster.ts';
import { testCluster } from '../../testing/cluster-bed.ts';
import { eventually } from '../../testing/eventually.ts';
import { CLONESET_REF } from './cloneset-crd.ts';
import { componentUserAgent, type ControllerContext, type ControllerFactory } from './component.ts';
import { DEPLOYMENT_CONTROLLER } from './deployment.ts';
import { GARBAGE_COLLECTOR } from './garbage-collector.ts';
import { Kubelet } from './kubelet.ts';
import { defaultControllers } from './registry.ts';

const kubelet: ControllerFactory = {
  name: 'kubelet',
  create: (ctx) => new Kubelet({ client: ctx.client, clock: ctx.clock, logger: ctx.logger, settings: ctx.settings, races: ctx.races }),
};

describe('every control loop keeps the lifecycle contract', () => {
  let c: EmbeddedCluster;
  const signal = new AbortController().signal;

  before(async () => {
    // No control loop of its own, no node: what is pending on the clock is the tested loop's.
    c = await testCluster({ controllers: [] });
  });
  after(async () => {
    await c.stop();
  });

  const pendingTimers = () => (c.virtualClock?.pendingTimers() ?? []).map((t) => t.name).sort();
  // The API server ends its side of a watch (its bookmark and timeout timers) once it sees the connection close.
  const noTimerLeft = (before: string[], why: string) => eventually(() => assert.deepEqual(pendingTimers(), before, why));
  const requests = (factory: ControllerFactory, verb?: string) => c.apiServer.control.requestCount({ userAgent: componentUserAgent(factory.name), ...(verb === undefined ? {} : { verb }) });
  const build = async (factory: ControllerFactory) => {
    const context: ControllerContext = { client: await c.newClient(componentUserAgent(factory.name)), clock: c.clock, logger: silentLogger, settings: c.settings, webhookClientCa: () => c.webhookClientCa() };
    return factory.create(context);
  };

  for (const factory of [...defaultControllers(), kubelet]) {
    test(factory.name, async () => {
      const before = pendingTimers();

      c.apiServer.control.resetCounters();
      const once = await build(factory);
      await once.start(signal);
      const lists = requests(factory, 'list');
      assert.ok(lists > 0, 'started: its informers listed');
      await once.stop();

      c.apiServer.control.resetCounters();
      const twice = await build(factory);
      await Promise.all([twice.start(signal), twice.start(signal)]);
      await twice.start(signal);
      assert.equal(requests(factory, 'list'), lists, 'a second start lists nothing more');
      await Promise.all([twice.stop(), twice.stop()]);
      await twice.stop();
      await noTimerLeft(before, 'stopped: no timer or watch of its own left');

      c.apiServer.control.resetCounters();
      await twice.start(signal);
      assert.equal(requests(factory), 0, 'a stopped loop does not start again');

      const never = await build(factory);
      await never.stop();
      await never.start(signal);
      assert.equal(requests(factory), 0, 'stopped before it started: nothing starts');

      const interrupted = await build(factory);
      const starting = interrupted.start(signal);
      await interrupted.stop();
      await starting;
      await noTimerLeft(before, 'stopped while starting: nothing left either');
    });
  }
});

describe('a whole cluster stopped with work in flight', () => {
  test('leaves no timer and no work behind, and warns about nothing', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const c = await testCluster({ nodes: [{ namePrefix: 'n', count: 2 }, { name: 'stuck', podsNeverStart: true, labels: { stuck: 'yes' } }] });
    try {
      const ns = 'default';
      const template = (labels: Record<string, string>, stuck = false) => ({
        metadata: { labels },
        spec: { containers: [{ name: 'app', image: 'nginx' }], ...(stuck ? { nodeSelector: { stuck: 'yes' } } : {}) },
      });
      const objects: [typeof BUILTIN.pods, KubeObject][] = [
        // A rollout that cannot progress: a progress-deadline check stays pending.
        [BUILTIN.deployments, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'stuck', namespace: ns }, spec: { replicas: 2, progressDeadlineSeconds: 600, selector: { matchLabels: { app: 'stuck' } }, template: template({ app: 'stuck' }, true) } }],
        [BUILTIN.statefulsets, { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: ns }, spec: { replicas: 2, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: template({ app: 'db' }) } }],
        [BUILTIN.jobs, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'batch', namespace: ns }, spec: { activeDeadlineSeconds: 3600, template: { ...template({ app: 'batch' }), spec: { ...template({}).spec, restartPolicy: 'Never' } } } }],
        [BUILTIN.poddisruptionbudgets, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db', namespace: ns }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } } }],
        [CLONESET_REF, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'web', namespace: ns }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: template({ app: 'web' }) } }],
      ];
      for (const [ref, obj] of objects) await c.client.create(ref, obj, { namespace: ns });
      await c.advance(5_000);
      const pending = (c.virtualClock?.pendingTimers() ?? []).map((t) => t.name);
      for (const expected of [`${DEPLOYMENT_CONTROLLER} progress check ${ns}/stuck`, 'scheduler flush unschedulable', `${GARBAGE_COLLECTOR} discovery`, 'lease n-1', 'node status stuck']) {
        assert.ok(pending.includes(expected), `${expected} is pending before the stop (pending: ${pending.join(', ')})`);
      }
    } finally {
      await c.stop();
      process.off('warning', onWarning);
    }
    assert.deepEqual(c.virtualClock?.pendingTimers(), []);
    assert.equal(c.virtualClock?.busy, 0);
    // Node reports a warning on the next tick: a signal with too many listeners (one handed to every component) would show here.
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings, []);
  });
});
