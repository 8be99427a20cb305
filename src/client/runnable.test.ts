/**
 * The lifecycle contract (runnable.ts) as `Lifecycle` keeps it: one start,
 * a stop that may come first, twice or in the middle of a start, and no
 * start after a stop.
 */
import { getEventListeners } from 'node:events';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Lifecycle } from './runnable.ts';

/** A deferred: a promise and the functions that settle it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves when `signal` aborts; rejects with its reason (as a wait honouring its signal does). */
function waitFor(gate: Promise<void>, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    void gate.then(resolve);
  });
}

describe('Lifecycle', () => {
  test('start runs its body once: a second start returns the first promise', async () => {
    const life = new Lifecycle();
    let runs = 0;
    const body = async () => void runs++;
    const first = life.start(undefined, body);
    const second = life.start(undefined, body);
    assert.equal(second, first);
    await first;
    await life.start(undefined, body);
    assert.equal(runs, 1);
    assert.equal(life.phase, 'running');
  });

  test('stop before start: the stop body runs, and a later start resolves without running its body', async () => {
    const life = new Lifecycle();
    const log: string[] = [];
    await life.stop(() => void log.push('stop'));
    await life.start(undefined, async () => void log.push('start'));
    assert.deepEqual(log, ['stop']);
    assert.equal(life.phase, 'stopped');
  });

  test('stop is idempotent: every call returns the first promise and the body runs once', async () => {
    const life = new Lifecycle();
    await life.start(undefined, async () => {});
    let stops = 0;
    const first = life.stop(() => void stops++);
    const second = life.stop(() => void stops++);
    assert.equal(second, first);
    await first;
    await life.stop(() => void stops++);
    assert.equal(stops, 1);
  });

  test('the stop body runs at once (synchronously), even while a start waits', async () => {
    const life = new Lifecycle();
    const gate = deferred();
    const started = life.start(undefined, (signal) => waitFor(gate.promise, signal));
    let stopped = false;
    const stopping = life.stop(() => void (stopped = true));
    assert.equal(stopped, true, 'no await before the body');
    assert.equal(life.stopping, true);
    await stopping;
    // The start's wait was aborted by the stop: it gives up and resolves, it does not reject.
    await started;
    assert.equal(life.phase, 'stopped');
  });

  test('a stop while the start waits on something that ignores its signal does not wait for it', async () => {
    const life = new Lifecycle();
    const gate = deferred();
    const armed: string[] = [];
    const started = life.start(undefined, async () => {
      await gate.promise;
      if (!life.stopping) armed.push('timer');
    });
    await life.stop(() => {});
    gate.resolve();
    await started;
    assert.deepEqual(armed, [], 'the body saw `stopping` and set nothing going');
  });

  test("the caller's signal cancels a start: it rejects with the signal's reason and the phase is failed; stop still runs", async () => {
    const life = new Lifecycle();
    const abort = new AbortController();
    const started = life.start(abort.signal, (signal) => waitFor(new Promise(() => {}), signal));
    abort.abort(new Error('manager stopping'));
    await assert.rejects(started, /manager stopping/);
    assert.equal(life.phase, 'failed');
    let stopped = false;
    await life.stop(() => void (stopped = true));
    assert.equal(stopped, true);
  });

  test('a body that fails for its own reason rejects the start; a second start returns that rejection', async () => {
    const life = new Lifecycle();
    const started = life.start(undefined, async () => {
      throw new Error('no CRD');
    });
    await assert.rejects(started, /no CRD/);
    await assert.rejects(life.start(undefined, async () => {}), /no CRD/);
  });

  test('a stopped lifecycle does not start again', async () => {
    const life = new Lifecycle();
    let runs = 0;
    await life.start(undefined, async () => void runs++);
    await life.stop(() => {});
    await life.start(undefined, async () => void runs++);
    assert.equal(runs, 1);
    assert.equal(life.phase, 'stopped');
  });

  test('signal aborts on stop', async () => {
    const life = new Lifecycle();
    assert.equal(life.signal.aborted, false);
    await life.stop(() => {});
    assert.equal(life.signal.aborted, true);
  });

  test("the caller's signal keeps no listener once the start is over (one signal is handed to many runnables)", async () => {
    const shared = new AbortController();
    for (let i = 0; i < 20; i++) {
      const life = new Lifecycle();
      await life.start(shared.signal, async (signal) => {
        assert.equal(getEventListeners(shared.signal, 'abort').length, 1, 'listening while it starts');
        // Many waits may listen to the start's own signal (an informer each) without a warning.
        for (let w = 0; w < 30; w++) signal.addEventListener('abort', () => {});
      });
    }
    assert.equal(getEventListeners(shared.signal, 'abort').length, 0);
  });
});
