/**
 * The manager's runnables (runnables.ts): groups start in controller-runtime's
 * order, stop with the webhooks before the caches, a failed start stops only
 * what started, the leader's loops run until their signal aborts, and adding
 * a loop is one call.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { aborted, Runnables, type RunnableGroup } from './runnables.ts';

function recorder() {
  const log: string[] = [];
  const runnable = (name: string, options: { fail?: boolean } = {}) => ({
    name,
    start: async () => {
      log.push(`start ${name}`);
      if (options.fail === true) throw new Error(`${name} failed`);
    },
    stop: async () => {
      log.push(`stop ${name}`);
    },
  });
  return { log, runnable };
}

describe('Runnables', () => {
  test('groups start in order (servers, webhooks, caches, startup) whatever the order of adding', async () => {
    const { log, runnable } = recorder();
    const r = new Runnables();
    const added: [RunnableGroup, string][] = [['startup', 'registration'], ['caches', 'informers'], ['webhooks', 'certificates'], ['webhooks', 'webhook server'], ['servers', 'health']];
    for (const [group, name] of added) r.add(group, runnable(name));
    await r.start(new AbortController().signal);
    assert.deepEqual(log, ['start health', 'start certificates', 'start webhook server', 'start informers', 'start registration']);
  });

  test('stop: startup, then webhooks (admissions in flight read the caches), caches, servers; last added first within a group', async () => {
    const { log, runnable } = recorder();
    const r = new Runnables();
    r.add('servers', runnable('health'));
    r.add('servers', runnable('events'));
    r.add('webhooks', runnable('certificates'));
    r.add('webhooks', runnable('webhook server'));
    r.add('caches', runnable('informers'));
    r.add('startup', runnable('registration'));
    await r.start(new AbortController().signal);
    log.length = 0;
    await r.stop();
    assert.deepEqual(log, ['stop registration', 'stop webhook server', 'stop certificates', 'stop informers', 'stop events', 'stop health']);
    log.length = 0;
    await r.stop();
    assert.deepEqual(log, [], 'each part stops once');
  });

  test('a failed start rejects, and stop stops only what started (the failed part included, since it may hold a half)', async () => {
    const { log, runnable } = recorder();
    const r = new Runnables();
    r.add('servers', runnable('health'));
    r.add('webhooks', runnable('certificates', { fail: true }));
    r.add('caches', runnable('informers'));
    await assert.rejects(r.start(new AbortController().signal), /certificates failed/);
    log.length = 0;
    await r.stop();
    assert.deepEqual(log, ['stop certificates', 'stop health']);
  });

  test('a stop that fails is reported and the rest still stops', async () => {
    const errors: string[] = [];
    const { log, runnable } = recorder();
    const r = new Runnables({ onStopError: (name, err) => errors.push(`${name}: ${(err as Error).message}`) });
    r.add('servers', runnable('health'));
    r.add('caches', { name: 'informers', start: async () => {}, stop: () => Promise.reject(new Error('boom')) });
    await r.start(new AbortController().signal);
    log.length = 0;
    await r.stop();
    assert.deepEqual(errors, ['informers: boom']);
    assert.deepEqual(log, ['stop health']);
  });

  test('every start goes through the step hook (the manager tracks it on its clock)', async () => {
    const steps: string[] = [];
    const r = new Runnables({ step: (name, fn) => (steps.push(name), fn()) });
    const { runnable } = recorder();
    r.add('servers', runnable('health'));
    r.add('caches', runnable('informers'));
    await r.start(new AbortController().signal);
    assert.deepEqual(steps, ['health', 'informers']);
  });

  test("the leader's loops all run until the signal aborts; adding one is one call", async () => {
    const r = new Runnables();
    const ran: string[] = [];
    for (const name of ['controller', 'budget controller', 'rebalancer']) {
      r.addLeader({ name, run: async (signal) => {
        ran.push(`run ${name}`);
        await aborted(signal);
        ran.push(`done ${name}`);
      } });
    }
    assert.deepEqual(r.names().filter((n) => n.group === 'leader').map((n) => n.name), ['controller', 'budget controller', 'rebalancer']);
    const abort = new AbortController();
    const leading = r.lead(abort.signal);
    assert.deepEqual(ran, ['run controller', 'run budget controller', 'run rebalancer']);
    abort.abort();
    await leading;
    assert.deepEqual(ran.slice(3).sort(), ['done budget controller', 'done controller', 'done rebalancer']);
  });
});
