/**
 * `workloadspread demo --cloneset`, run in-process: the second demo, an
 * OpenKruise CloneSet on the embedded cluster (its CloneSet controller) with
 * the real manager, on the virtual clock — every chapter told and checked,
 * the bars following scale-out, scale-in by cost and the partitioned
 * rollout, and the report written.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { captureIo, type CapturedIo } from '../testing/cli-io.ts';
import { CLONESET_DEMO_CHAPTERS } from '../sim/index.ts';
import { runDemo } from './demo.ts';

describe('workloadspread demo --cloneset (a full run, piped)', () => {
  let io: CapturedIo;
  let code: number;

  before(async () => {
    io = captureIo();
    code = await runDemo({ report: '/demo/cloneset.html', cloneset: true }, io, { isTTY: false, pause: async () => assert.fail('piped output never pauses') });
  });

  test('exit code 0: every check held; the headline names the CloneSet', () => {
    assert.equal(code, 0, io.stdout + io.stderr);
    assert.doesNotMatch(io.stdout, /✗/);
    assert.match(io.stdout, /^workloadspread demo --cloneset — one OpenKruise CloneSet spread over two zones/);
    assert.match(io.stdout, /and CloneSet web with 4\s+replicas\./);
    assert.match(io.stdout, /^Done: \d+ checks passed, \d+:\d\d of cluster time in [\d.]+ s\.$/m);
  });

  test('every chapter is told, in order', () => {
    const titles = [...io.stdout.matchAll(/^── (\d)\/(\d) {2}(.+?) ─+ at (\d+:\d\d)$/gm)].map((m) => m[3]);
    assert.deepEqual(titles, CLONESET_DEMO_CHAPTERS.map((c) => c.title));
  });

  test('the bars follow the spread: out, in by cost, a partitioned rollout (each revision spread on its own), finished, in', () => {
    const chapters = io.stdout.split(/^── /m).slice(1);
    // A bar row: name, bar (none for an unlimited subset without pods), pods[/limit], then `cost …`.
    const row = (chapter: number, subset: string): string | undefined => {
      const cells = (chapters[chapter] ?? '').split('\n').find((l) => l.startsWith(`    ${subset}  `))?.trim().split(/ {2,}/).slice(1);
      return cells?.filter((c) => !/^[█▒·]+$/.test(c)).join(' | ');
    };
    assert.deepEqual([row(0, 'zone-a'), row(0, 'zone-b'), row(0, 'elastic')], ['4/4 | cost 300', '4/4 | cost 200', '2 | cost 100']);
    assert.deepEqual([row(1, 'zone-b'), row(1, 'elastic')], ['2/4 | cost 200', '0']);
    assert.deepEqual([row(2, 'zone-a'), row(2, 'zone-b')], ['6/4 | cost 100, 300', '0/4']);
    assert.deepEqual([row(3, 'zone-a'), row(3, 'zone-b')], ['4/4 | cost 300', '2/4 | cost 200']);
    assert.deepEqual([row(4, 'zone-a'), row(4, 'zone-b')], ['3/4 | cost 300', '0/4']);
    assert.match(chapters[2] ?? '', /• 3 pods created, 3 pods deleted \(zone-a \+2, zone-b −2\)/);
  });

  test('the HTML report is written', () => {
    const html = io.written.get('/demo/cloneset.html');
    assert.ok(html !== undefined);
    assert.match(html, /A new image with partition 3/);
    assert.equal(io.stderr, '');
  });
});
