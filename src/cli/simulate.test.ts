/**
 * `workloadspread simulate`, in-process, on the embedded cluster with the
 * real manager: every shipped example scenario passes (exit 0); a wrong
 * expectation exits 1 naming it with expected vs actual; a malformed
 * scenario or bad flags exit 2 naming the problem; the JSON Lines and HTML
 * outputs; a refused step; a run that cannot set up; an interrupted run.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { captureIo } from '../testing/cli-io.ts';
import { main } from './main.ts';
import { INTERRUPTED_EXIT_CODE, type SimulateOptions } from './simulate.ts';
import { SMALL_SCENARIO, simulateCli } from '../testing/simulate-cli.ts';

const certificate = generateServingCertificate();
const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples', 'scenarios');

const simulate = (options: SimulateOptions, files: Record<string, string> = {}, signal?: AbortSignal) => simulateCli(certificate, options, files, signal);
const SMALL = SMALL_SCENARIO;

describe('workloadspread simulate', () => {
  after(() => {
    // Nothing of the runs may keep the process alive: every cluster, manager and socket was stopped.
    const open = process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap');
    assert.deepEqual(open, []);
  });

  describe('every example scenario passes (exit 0)', () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml')).sort();
    test('the examples cover the use cases of the seeds', () => {
      assert.deepEqual(files, ['adaptive.yaml', 'balanced-scale-in.yaml', 'budget-guard-pod-deletion.yaml', 'budget-node-without-zone.yaml', 'budget-story1-one-zone-at-a-time.yaml', 'budget-story2-per-zone.yaml', 'budget-story3-overall.yaml', 'budget-workloadspread-subsets.yaml', 'cloneset.yaml', 'custom-workload-target-filter.yaml', 'custom-workload-whitelist.yaml', 'elastic.yaml', 'per-arch.yaml', 'rebalance-failback.yaml', 'rebalance-limit-change.yaml', 'rolling-update.yaml', 'scale-in-order.yaml', 'statefulset.yaml', 'zone-ratio.yaml']);
    });
    for (const file of files) {
      test(file, async () => {
        const { code, io } = await simulate({ file: join(EXAMPLES, file) });
        assert.equal(code, 0, `${io.stdout}\n${io.stderr}`);
        assert.match(io.stdout, /\nPASS: \d+ expectations held over \d+ steps?\n$/);
        assert.doesNotMatch(io.stdout, /✗/);
        assert.equal(io.stderr, '');
      });
    }
  });

  test('a wrong expectation exits 1, naming it with expected vs actual; a refused step fails unless expected', async () => {
    const scenario = `${SMALL}
steps:
  - expect: {subsets: {a: 2, b: 1}}
  - expect: {subsets: {a: 5}, costs: {b: [100]}}
  - scale: {kind: Deployment, name: missing, replicas: 1}
  - {scale: {kind: Deployment, name: missing, replicas: 1}, expectFailure: not found}
  - {scale: {kind: Deployment, name: web, replicas: 1}, expectFailure: true}
`;
    const { code, io } = await simulate({ file: 's.yaml' }, { 's.yaml': scenario });
    assert.equal(code, 1);
    assert.match(io.stdout, /✓ subsets\.a = 2\n/);
    assert.match(io.stdout, /✗ subsets\.a: expected 5, got 2\n/);
    assert.match(io.stdout, /refused: deployments\.apps "missing" not found/);
    const summary = io.stdout.slice(io.stdout.indexOf('FAIL:'));
    assert.equal(
      summary,
      [
        'FAIL: 3 of 7 expectations failed',
        '  steps[1] subsets.a: expected 5, got 2',
        '  steps[2] error: the scale step failed: deployments.apps "missing" not found (404 NotFound)',
        '  steps[4] expectFailure: expected true, got null (the step succeeded)',
        '',
      ].join('\n'),
    );
  });

  test('a malformed scenario exits 2 and names every bad field; nothing is started', async () => {
    const { code, io } = await simulate({ file: 'bad.yaml' }, { 'bad.yaml': `${SMALL}\nsteps:\n  - scale: {kind: Deployment, name: web, replicas: -1}\n  - advance: 30\n` });
    assert.equal(code, 2);
    assert.equal(io.stdout, '');
    assert.equal(
      io.stderr,
      'bad.yaml: the scenario is not valid:\n  steps[0].scale.replicas: must be a non-negative integer, not number -1\n  steps[1].advance: must be a duration like 30s, 5m or 1h30m (write 30s or 30m)\n',
    );
  });

  test('a YAML alias bomb is a malformed scenario: exit 2 naming it, nothing started', async () => {
    const levels = ['a: &a [x,x,x,x,x,x,x,x,x]'];
    for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    const { code, io } = await simulate({ file: 'bomb.yaml' }, { 'bomb.yaml': `${levels.join('\n')}\n` });
    assert.equal(code, 2);
    assert.equal(io.stdout, '');
    assert.match(io.stderr, /^bomb\.yaml: the scenario is not valid:\n {2}bomb\.yaml: document 1: not valid YAML: too many aliases/);
  });

  test('bad flags and unreadable files exit 2 with one line', async () => {
    for (const [argv, message] of [
      [['simulate', 'x.yaml', '--output', 'xml'], /argument 'xml' is invalid. Allowed choices are table, json, html/],
      [['simulate', 'x.yaml', '--out', 'r.html'], /--out is where --output html writes its report; add --output html/],
      [['simulate', '/nonexistent/scenario.yaml'], /cannot read \/nonexistent\/scenario\.yaml: no such file/],
      [['simulate'], /missing required argument 'file'/],
    ] as const) {
      const io = captureIo({ 'x.yaml': SMALL });
      assert.equal(await main([...argv], io), 2, argv.join(' '));
      assert.match(io.stderr, message);
      assert.doesNotMatch(io.stderr, /\n\s+at /);
    }
  });

  test('--output json: a setup record, then one JSON Lines object per step with the keys of issue 6; failures also on stderr', async () => {
    const scenario = `${SMALL}\nsteps:\n  - scale: {kind: Deployment, name: web, replicas: 4}\n  - expect: {subsets: {a: 2, b: 2}, costs: {a: [200], b: [100]}, pods: 3}\n`;
    const { code, io } = await simulate({ file: 's.yaml', output: 'json' }, { 's.yaml': scenario });
    assert.equal(code, 1);
    const [setup, ...lines] = io.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    // The setup record (issue 15): what applying the objects did, with the events recorded meanwhile.
    assert.deepEqual(Object.keys(setup ?? {}).slice(0, 7), ['step', 'action', 'time', 'pods', 'workloadSpreads', 'events', 'expectations']);
    assert.equal(setup?.['step'], 'setup');
    assert.equal(setup?.['action'], 'setup');
    assert.equal(setup?.['summary'], 'apply 2 objects and settle');
    assert.equal((setup?.['pods'] as unknown[]).length, 3);
    assert.ok((setup?.['events'] as { reason: string }[]).some((e) => e.reason === 'ScalingReplicaSet'), 'the Deployment controller scaled up while the objects were applied');
    assert.deepEqual(setup?.['expectations'], []);
    assert.equal(lines.length, 2);
    for (const [i, line] of lines.entries()) {
      assert.deepEqual(Object.keys(line).slice(0, 7), ['step', 'action', 'time', 'pods', 'workloadSpreads', 'events', 'expectations']);
      assert.equal(line['step'], i);
      assert.match(String(line['time']), /^2026-01-01T00:\d\d:\d\dZ$/);
    }
    assert.equal(lines[0]?.['action'], 'scale');
    const pods = lines[0]?.['pods'] as { name: string; subset: string | null; node: string | null; phase: string; ready: boolean; deletionCost: number | null }[];
    assert.equal(pods.length, 4);
    for (const p of pods) {
      assert.match(p.name, /^web-/);
      assert.ok(p.subset === 'a' || p.subset === 'b');
      assert.equal(p.node, p.subset === 'a' ? 'zone-a-1' : 'zone-b-1');
      assert.equal(p.phase, 'Running');
      assert.equal(p.ready, true);
      assert.equal(p.deletionCost, p.subset === 'a' ? 200 : 100);
    }
    const spreads = lines[0]?.['workloadSpreads'] as { namespace: string; name: string; status: { subsetStatuses: { name: string; replicas: number }[] } }[];
    assert.deepEqual(spreads.map((w) => [w.namespace, w.name, w.status.subsetStatuses.map((s) => [s.name, s.replicas])]), [['default', 'ws', [['a', 2], ['b', 2]]]]);
    assert.ok((lines[0]?.['events'] as { reason: string }[]).some((e) => e.reason === 'ScalingReplicaSet'));
    assert.deepEqual(lines[1]?.['expectations'], [
      { ok: true, path: 'subsets.a', expected: 2, actual: 2 },
      { ok: true, path: 'subsets.b', expected: 2, actual: 2 },
      { ok: true, path: 'costs.a', expected: [200], actual: [200] },
      { ok: true, path: 'costs.b', expected: [100], actual: [100] },
      { ok: false, path: 'pods', expected: 3, actual: 4 },
    ]);
    assert.equal(io.stderr, 'FAIL: 1 of 5 expectations failed\n  steps[1] pods: expected 3, got 4\n');
  });

  test('--output html writes one self-contained report to --out and prints the verdict', async () => {
    const scenario = `${SMALL}\nsteps:\n  - scale: {kind: Deployment, name: web, replicas: 1}\n  - expect: {subsets: {a: 1, b: 0}}\n`;
    const { code, io } = await simulate({ file: 's.yaml', output: 'html', out: '/tmp/report-test.html' }, { 's.yaml': scenario });
    assert.equal(code, 0);
    assert.equal(io.stdout, 'PASS: 2 expectations held over 2 steps\nreport: /tmp/report-test.html\n');
    const html = io.written.get('/tmp/report-test.html') ?? '';
    assert.match(html, /<svg class="timeline"/);
    assert.match(html, /Scenario small/);
    assert.doesNotMatch(html, /<script|https?:\/\//);
  });

  test('an object the cluster refuses at setup ends the run with exit 1 and the server’s reason', async () => {
    const scenario = `${SMALL}  - {apiVersion: apps.kruise.io/v1alpha1, kind: WorkloadSpread, metadata: {name: bad}, spec: {targetRef: {apiVersion: apps/v1, kind: Deployment, name: other}, subsets: [{name: x, maxReplicas: "1.5%"}]}}\nsteps:\n  - expect: {pods: 3, workloadSpread: ws}\n`;
    const { code, io } = await simulate({ file: 's.yaml' }, { 's.yaml': scenario });
    assert.equal(code, 1);
    assert.match(io.stdout, /ERROR: cannot apply WorkloadSpread default\/bad: .*maxReplicas/);
  });

  test('an interrupted run exits 130', async () => {
    const stop = new AbortController();
    stop.abort(new Error('interrupted'));
    const { code, io } = await simulate({ file: 's.yaml' }, { 's.yaml': `${SMALL}\nsteps:\n  - advance: 1s\n` }, stop.signal);
    assert.equal(code, INTERRUPTED_EXIT_CODE);
    assert.match(io.stdout, /INTERRUPTED/);
  });
});
