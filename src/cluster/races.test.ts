/**
 * Race mode of the embedded cluster (cluster.ts `races`): watch events
 * reach their readers later on the virtual clock but in the order of their
 * stream (and `deliverWatchEvents` hands over what is held back at once);
 * generated names and uids come from the seed;
 * admission webhook calls take clock time; components get the races through
 * their context, so two probe controllers — each an informer and a work
 * queue, as the cluster's own controllers are — act in an order the seed
 * decides: the same for the same seed, different between seeds, and the
 * fixed order without one.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRaces, type Races } from '../clock/races.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { BUILTIN, pathFor } from '../client/resources.ts';
import { Informer } from '../client/store.ts';
import { WorkQueue } from '../client/workqueue.ts';
import type { KubeObject } from '../k8s/types.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { startCluster, type ClusterOptions, type EmbeddedCluster } from './cluster.ts';
import type { ControllerFactory } from './controllers/component.ts';
import { allow, startWebhookServer } from '../testing/webhook-server.ts';

const T0 = Date.UTC(2026, 0, 1);
const certificate = generateServingCertificate();

/** A cluster without control loops, in race mode under `seed` (none: the fixed order). */
function raceCluster(seed: number | undefined, options: ClusterOptions = {}): Promise<EmbeddedCluster> {
  const races: Races | undefined = seed === undefined ? undefined : seededRaces(seed);
  return startCluster({ clock: new VirtualClock(T0, { races }), certificate, controllers: [], ...(races === undefined ? {} : { races }), ...options });
}

const configMap = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { n: name } });

/** Moves the clock timer by timer until `work` ends (a request that waits on the clock). */
async function driven<T>(clock: VirtualClock, work: Promise<T>): Promise<T> {
  let done = false;
  const tracked = work.finally(() => {
    done = true;
  });
  tracked.catch(() => {});
  for (;;) {
    await clock.quiesce();
    if (done) return tracked;
    const next = Math.min(...clock.pendingTimers().map((t) => t.at));
    if (!Number.isFinite(next)) return tracked;
    await clock.advanceTo(next);
  }
}

describe('watch streams in race mode', () => {
  test('events arrive later on the clock, in the order of their stream; deliverWatchEvents hands over the rest at once', async () => {
    const c = await raceCluster(11);
    const clock = c.virtualClock!;
    const seen: { name: string; at: number }[] = [];
    const stop = new AbortController();
    const rv = (await c.client.list<KubeObject>(BUILTIN.configmaps, { namespace: 'default' })).metadata?.resourceVersion ?? '0';
    const watching = c.client
      .watchStream(pathFor(BUILTIN.configmaps, { namespace: 'default' }), { watch: 'true', resourceVersion: rv }, {
        signal: stop.signal,
        activityStream: c.client.nextStreamId('watch-race-probe'),
        onEvent: (e) => {
          if (e.type !== 'ADDED') return;
          const name = e.object.metadata?.name;
          if (name !== undefined) seen.push({ name, at: clock.now() });
        },
      })
      .catch(() => undefined);
    try {
      const names = Array.from({ length: 20 }, (_, i) => `cm-${String(i).padStart(2, '0')}`);
      for (const n of names) await c.client.create(BUILTIN.configmaps, configMap(n));
      await clock.quiesce();
      assert.ok(seen.length < names.length, `some events are still on their way at the instant they happened (${seen.length} of 20 arrived)`);
      await c.settle();
      assert.deepEqual(
        seen.map((s) => s.name),
        names,
        'the stream keeps its order',
      );
      assert.ok(seen.every((s, i) => i === 0 || s.at >= seen[i - 1]!.at));
      assert.ok(seen.some((s) => s.at > T0), 'and they took clock time');

      const more = ['cm-20', 'cm-21', 'cm-22', 'cm-23', 'cm-24'];
      for (const n of more) await c.client.create(BUILTIN.configmaps, configMap(n));
      const now = clock.now();
      await c.deliverWatchEvents();
      assert.deepEqual(
        seen.slice(20).map((s) => s.name),
        more,
        'delivered at once, in order',
      );
      assert.equal(clock.now(), now, 'without moving the clock');
    } finally {
      stop.abort();
      await watching;
      await c.stop();
    }
  });
});

describe('generated names and uids in race mode', () => {
  /** The names and uids of ConfigMaps created with generateName (two prefixes, interleaved). */
  async function identities(seed: number | undefined): Promise<string[]> {
    const c = await raceCluster(seed);
    try {
      const out: string[] = [];
      for (let i = 0; i < 6; i++) {
        const made = await c.client.create<KubeObject>(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: i % 2 === 0 ? 'web-' : 'api-', namespace: 'default' } });
        out.push(`${made.metadata?.name} ${made.metadata?.uid}`);
      }
      return out;
    } finally {
      await c.stop();
    }
  }

  test('come from the seed: the same for the same seed, others for another seed; random without races', async () => {
    const first = await identities(21);
    assert.deepEqual(await identities(21), first, 'seed 21 replays its names and uids');
    const other = await identities(22);
    for (const line of first) assert.ok(!other.includes(line), `${line} under seed 22 too`);
    for (const line of first) {
      assert.match(line, /^(web|api)-[bcdfghjklmnpqrstvwxz2456789]{5} [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    assert.equal(new Set(first.map((l) => l.split(' ')[1])).size, 6, 'distinct uids');
    assert.notDeepEqual(await identities(undefined), await identities(undefined));
  });
});

describe('admission webhook calls in race mode', () => {
  /**
   * Clock milliseconds each of `n` ConfigMap creations took, through a
   * validating webhook whose server runs its requests on the cluster's clock
   * (as the manager's does), so that only race mode's delays take clock time.
   */
  async function createTimes(seed: number | undefined, n: number): Promise<number[]> {
    const races: Races | undefined = seed === undefined ? undefined : seededRaces(seed);
    const clock = new VirtualClock(T0, { races });
    const server = await startWebhookServer({ handlers: { '/validate': () => allow() }, clock });
    const c = await startCluster({ clock, certificate, controllers: [], ...(races === undefined ? {} : { races }) });
    try {
      const r = await c.apiServer.control.create({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'race-probe' },
        webhooks: [
          {
            name: 'probe.race.example.com',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            clientConfig: { url: server.urlFor('/validate'), caBundle: server.caBundle },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'default' } },
          },
        ],
      });
      assert.ok(r.ok);
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const before = clock.now();
        await driven(clock, c.client.create(BUILTIN.configmaps, configMap(`hooked-${i}`)));
        times.push(clock.now() - before);
      }
      return times;
    } finally {
      await c.stop();
      await server.close();
    }
  }

  test('take clock time, drawn from the seed; none without race mode', async () => {
    const fixed = await createTimes(undefined, 6);
    assert.deepEqual(fixed, [0, 0, 0, 0, 0, 0]);
    const raced = await createTimes(5, 6);
    assert.ok(raced.some((t) => t > 0), `${raced.join(', ')}`);
    assert.deepEqual(await createTimes(5, 6), raced, 'the same seed, the same latencies');
  });
});

describe('components in race mode', () => {
  interface Action {
    controller: string;
    key: string;
    at: number;
  }

  /** A probe controller: an informer on ConfigMaps and a work queue (with the context's races) that records each sync. */
  function probe(name: string, actions: Action[]): ControllerFactory {
    return {
      name,
      create: (ctx) => {
        const informer = new Informer({ client: ctx.client, ref: BUILTIN.configmaps, namespace: 'default', name: `${name} configmaps` });
        const queue = new WorkQueue<string>({ clock: ctx.clock, name, races: ctx.races });
        let running: Promise<void> | undefined;
        return {
          name,
          start: async () => {
            informer.store.onAdd((cm) => queue.add(cm.metadata?.name ?? ''));
            informer.start();
            await informer.waitForSync();
            running = queue.run(1, (key) => {
              if (key.startsWith('probe-')) actions.push({ controller: name, key, at: ctx.clock.now() });
            });
          },
          stop: async () => {
            await queue.shutdown({ drain: false });
            await running;
            await informer.stop();
          },
        };
      },
    };
  }

  /** Which probe acted first on each of six ConfigMaps created at one instant, and when (by clock time; ties by name). */
  async function interleaving(seed: number | undefined): Promise<{ order: string; times: number[] }> {
    const actions: Action[] = [];
    const c = await raceCluster(seed, { components: [probe('probe-a', actions), probe('probe-b', actions)] });
    try {
      for (let i = 0; i < 6; i++) await c.client.create(BUILTIN.configmaps, configMap(`probe-${i}`));
      await c.settle();
    } finally {
      await c.stop();
    }
    assert.equal(actions.length, 12, 'both probes synced every ConfigMap');
    const sorted = [...actions].sort((x, y) => x.at - y.at || x.controller.localeCompare(y.controller) || x.key.localeCompare(y.key));
    return { order: sorted.map((a) => `${a.controller.slice(-1)}${a.key.slice(-1)}`).join(' '), times: sorted.map((a) => a.at - T0) };
  }

  test('act in an order the seed decides: replayed by the same seed, another under another seed, at one instant without races', async () => {
    const fixed = await interleaving(undefined);
    assert.ok(
      fixed.times.every((t) => t === 0),
      'without races both act at the instant of the writes',
    );
    const bySeed = new Map<number, string>();
    for (const seed of [1, 2, 3]) bySeed.set(seed, (await interleaving(seed)).order);
    assert.equal((await interleaving(1)).order, bySeed.get(1), 'seed 1 replays its interleaving');
    assert.ok(new Set(bySeed.values()).size >= 2, `different seeds, different interleavings:\n${[...bySeed].map(([s, o]) => `  ${s}: ${o}`).join('\n')}`);
    // Under some seed probe b gets to a ConfigMap before probe a does: the fixed order is not the only one.
    const bFirst = [...bySeed.values()].some((order) => {
      const words = order.split(' ');
      return [0, 1, 2, 3, 4, 5].some((i) => words.indexOf(`b${i}`) < words.indexOf(`a${i}`));
    });
    assert.ok(bFirst, [...bySeed.values()].join('\n'));
  });
});
