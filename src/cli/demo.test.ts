/**
 * `workloadspread demo`, run in-process as `npm start` runs it: the embedded
 * cluster with the real manager on the virtual clock, the bundled files of
 * examples/demo/, the narration, the checks, the HTML report.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { captureIo, type CapturedIo } from '../testing/cli-io.ts';
import { DEMO_CHAPTERS } from '../sim/index.ts';
import { clockTime, renderFrame, runDemo, wrap } from './demo.ts';
import { createStyle, stripAnsi } from './style.ts';

describe('workloadspread demo (a full run, --step on a terminal)', () => {
  let io: CapturedIo;
  let code: number;
  let enters = 0;
  let pauses = 0;

  before(async () => {
    io = captureIo();
    code = await runDemo({ report: '/demo/report.html', step: true }, io, {
      isTTY: true,
      waitForEnter: async () => {
        enters++;
      },
      pause: async () => {
        pauses++;
      },
    });
  });

  test('exit code 0: every check of the demo held', () => {
    assert.equal(code, 0, io.stdout + io.stderr);
    assert.doesNotMatch(io.stdout, /✗/);
    // The last step ends when the cluster is quiet: 2 s (places reserved ahead given back) or up to 5 s more
    // (a held status write) after the scale-in, depending on which of the two the controller's sync meets first.
    const done = /^Done: \d+ checks passed, 6:(\d\d) of cluster time in [\d.]+ s\.$/m.exec(io.stdout);
    assert.ok(done !== null, io.stdout);
    const seconds = Number(done[1]);
    assert.ok(seconds >= 11 && seconds <= 20, `cluster time 6:${done[1]}`);
  });

  test('every chapter is told, in order, with the cluster time', () => {
    const titles = [...io.stdout.matchAll(/^── (\d)\/(\d) {2}(.+?) ─+ at (\d+:\d\d)$/gm)].map((m) => [Number(m[1]), Number(m[2]), m[3]]);
    assert.deepEqual(titles, DEMO_CHAPTERS.map((c, i) => [i + 1, DEMO_CHAPTERS.length, c.title]));
  });

  test('the bars follow the spread: out, in, a changed limit, pending pods, the reschedule, recovery, in', () => {
    const chapters = io.stdout.split(/^── /m).slice(1);
    // A bar row: name, bar, pods[/limit], then optionally `cost …` and flags, columns two or more spaces apart.
    const row = (chapter: number, subset: string): (string | undefined)[] | undefined => {
      const line = (chapters[chapter] ?? '').split('\n').find((l) => l.startsWith(`    ${subset} `) && /[█▒·]| {2}0$/.test(l));
      if (line === undefined) return undefined;
      const [bar, pods, ...rest] = line.trim().split(/ {2,}/).slice(1);
      const cost = rest[0]?.startsWith('cost ') === true ? rest.shift()?.slice(5) : undefined;
      return [bar, pods, cost, rest[0]];
    };
    assert.deepEqual(row(0, 'zone-a'), ['████', '4/4', '300', undefined]);
    assert.deepEqual(row(0, 'zone-b'), ['████', '4/4', '200', undefined]);
    assert.deepEqual(row(0, 'elastic'), ['██', '2', '100', undefined]);
    assert.deepEqual(row(1, 'zone-b'), ['██··', '2/4', '200', undefined]);
    assert.deepEqual(row(2, 'zone-b'), ['██····', '2/6', '200', undefined]);
    assert.deepEqual(row(3, 'zone-b'), ['████▒▒', '6/6', '200', '2 Pending']);
    assert.deepEqual(row(4, 'zone-b'), ['████··', '4/6', '200', 'unschedulable']);
    assert.deepEqual(row(4, 'elastic'), ['██', '2', '100', undefined]);
    assert.deepEqual(row(5, 'zone-b'), ['████··', '4/6', '200', undefined]);
    assert.deepEqual(row(6, 'zone-b'), ['█·····', '1/6', '200', undefined]);
    // Percentages: balanced costs (D17), one per pod; the scale-in keeps 25 % / 25 % / the rest.
    assert.deepEqual(row(7, 'elastic'), ['████████', '8', '2147479142…2147483042 (8 values)', undefined]);
    assert.deepEqual(row(8, 'zone-a'), ['██', '2/2', '2147482444, 2147483644', undefined]);
    assert.deepEqual(row(8, 'zone-b'), ['██', '2/2', '2147482443, 2147483643', undefined]);
    assert.deepEqual(row(8, 'elastic'), ['████', '4', '2147481542…2147483042 (4 values)', undefined]);
    assert.match(chapters[4] ?? '', /• 2 pods created, 2 pods deleted \(zone-b −2, elastic \+2\)/);
    assert.match(chapters[5] ?? '', /• event RecoverSchedulable: Subset zone-b of WorkloadSpread default\/web-spread is recovered/);
  });

  test('the HTML report is written where asked, and the user is told where it is and how to keep a cluster', () => {
    const html = io.written.get('/demo/report.html');
    assert.ok(html !== undefined, 'report written');
    assert.match(html, /^<!doctype html>/);
    assert.match(html, /<svg/);
    assert.match(html, /Scale out: 4 → 10 replicas/);
    assert.match(io.stdout, /deletion costs\): \/demo\/report\.html/);
    assert.match(io.stdout, /npx workloadspread cluster/);
  });

  test('--step on a terminal waits for Enter between chapters, and never pauses by itself', () => {
    assert.equal(enters, DEMO_CHAPTERS.length - 1);
    assert.equal(pauses, 0);
  });

  test('no colour unless the environment allows it; nothing on stderr', () => {
    assert.doesNotMatch(io.stdout, /\u001b\[/);
    assert.equal(io.stderr, '');
  });
});

describe('workloadspread demo (interrupted)', () => {
  test('an abort ends the run early with 130, saying everything was stopped; piped output never pauses', async () => {
    const controller = new AbortController();
    const io = captureIo();
    const out = io.out;
    io.out = (text) => {
      out(text);
      if (text.includes('1/9')) controller.abort(new Error('test'));
    };
    let pauses = 0;
    const code = await runDemo({}, io, { isTTY: false, signal: controller.signal, pause: async () => void pauses++ });
    assert.equal(code, 130);
    assert.match(io.stdout, /Interrupted: the cluster and the manager were stopped\.\n$/);
    assert.doesNotMatch(io.stdout, /2\/7/);
    assert.equal(pauses, 0);
    assert.equal(io.written.size, 0, 'no report for an interrupted run');
  });
});

describe('demo output helpers', () => {
  test('clock time as m:ss', () => assert.deepEqual([clockTime(0), clockTime(32_001), clockTime(407_000)], ['0:00', '0:32', '6:47']));
  test('wrapping keeps words whole and lines within the width', () => {
    const lines = wrap('one two three four five six seven eight nine ten', 16, '  ');
    assert.deepEqual(lines, ['  one two three', '  four five six', '  seven eight', '  nine ten']);
  });
  test('a frame in colour is the same text as without', () => {
    const frame = { elapsedMs: 0, unassigned: 1, changes: [], subsets: [{ name: 'a', limit: 2, ready: 1, notReady: 2, pending: 1, costs: [300], schedulable: 'False' }] };
    const plain = renderFrame(frame, createStyle(false));
    assert.deepEqual(renderFrame(frame, createStyle(true)).map(stripAnsi), plain);
    assert.match(plain[0] ?? '', /^ {4}a +█▒▒ +3\/2 +cost 300 +1 Pending, unschedulable$/);
    assert.match(plain[1] ?? '', /^ {4}\(no subset\) +1$/);
  });
  test('a subset name with control characters is shown escaped', () => {
    const frame = { elapsedMs: 0, unassigned: 0, changes: [], subsets: [{ name: 'a\u001b]0;x\u0007', limit: 2, ready: 1, notReady: 0, pending: 0, costs: [], schedulable: null }] };
    for (const color of [false, true]) {
      const line = stripAnsi(renderFrame(frame, createStyle(color))[0] ?? '');
      assert.match(line, /^ {4}a\\x1b\]0;x\\x07 /);
    }
  });
  test('the bundled files are read from the package, whatever the working directory', () => {
    assert.ok(readFileSync(new URL('../../examples/demo/workloadspread.yaml', import.meta.url), 'utf8').includes('web-spread'));
  });
});
