import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { REQUEST_ACTIVITY_HEADER, realClock } from './clock.ts';
import { acceptHandoff, HANDOFF_LOST_MS, openHandoff } from './handoff.ts';
import { VirtualClock } from './virtual-clock.ts';

const T0 = Date.UTC(2026, 0, 1);

/** Event-loop turns, so that a clock that could move would have. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** The part of a ServerResponse the server side patches. */
function fakeResponse(): { res: ServerResponse; heads: number } {
  const out = { heads: 0, res: undefined as unknown as ServerResponse };
  out.res = { writeHead: () => (out.heads++, out.res) } as unknown as ServerResponse;
  return out;
}

describe('the handoff mark of an exchange', () => {
  test('time stands still from the send until the server runs the request, and from its answer head until the client has it', async () => {
    const clock = new VirtualClock(T0);
    const fired: number[] = [];
    clock.setTimeout(() => void fired.push(clock.now() - T0), 1_000, { name: 'caller timeout' });
    const client = openHandoff(clock.activity, 'test');
    const advancing = clock.advance(5_000);

    await turns(10);
    assert.equal(clock.now(), T0, 'the request is on its way');
    const { res } = fakeResponse();
    const handedOver = acceptHandoff(client.headers, res, clock);
    const endServing = clock.activity.begin('serving');
    handedOver();
    endServing();
    res.writeHead(200);
    await turns(10);
    assert.equal(clock.now(), T0, 'the answer is on its way');
    assert.deepEqual(fired, []);

    client.close();
    await advancing;
    assert.deepEqual(fired, [1_000]);
  });

  test("a server on another clock, or a mark that is no clock's, leaves the exchange alone", async () => {
    const ours = new VirtualClock(T0);
    const other = new VirtualClock(T0);
    const client = openHandoff(ours.activity, 'test');
    const { res, heads } = fakeResponse();
    acceptHandoff(client.headers, res, other)();
    acceptHandoff({ [REQUEST_ACTIVITY_HEADER]: ':x' }, res, other)();
    res.writeHead(200);
    assert.equal(heads, 0);
    assert.deepEqual(other.busyLabels(), []);
    assert.equal(ours.busyLabels().length, 1, 'still ours to close');
    client.close();
    assert.deepEqual(ours.busyLabels(), []);
    assert.deepEqual(openHandoff(realClock().activity, 'test').headers, {}, 'no mark on the real clock');
  });

  test('only the legs on the wire are timed: an answer written after more than a second of work is still marked until the client has it', async () => {
    const clock = new VirtualClock(T0);
    const client = openHandoff(clock.activity, 'test');
    const { res } = fakeResponse();
    const handedOver = acceptHandoff(client.headers, res, clock);
    const endServing = clock.activity.begin('serving');
    handedOver();
    await new Promise((r) => setTimeout(r, HANDOFF_LOST_MS + 200)); // the server works longer than the grace
    endServing();
    res.writeHead(200);
    const advancing = clock.advance(5_000);
    await turns(10);
    assert.equal(clock.now(), T0, 'the answer is on its way');
    client.close();
    await advancing;
    assert.equal(clock.now(), T0 + 5_000);
  });

  test('bytes that never arrive count as lost after a second of real time: the caller can time out', async () => {
    const clock = new VirtualClock(T0, { realWaitMs: 20_000 });
    let timedOut = false;
    clock.setTimeout(() => void (timedOut = true), 10_000, { name: 'caller timeout' });
    openHandoff(clock.activity, 'test');
    const started = performance.now();
    await clock.advance(10_000);
    assert.equal(timedOut, true);
    assert.ok(performance.now() - started >= HANDOFF_LOST_MS - 50, 'time stood still until the mark was taken as lost');
  });
});
