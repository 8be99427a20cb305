/**
 * `workloadspread simulate --races N` and `--race-seed S`, in-process on the
 * embedded cluster with the real manager: the table (a line per seed, the
 * verdict) and the JSON report, byte-identical for the same seeds; exit 1
 * when an expectation fails under a seed, naming it (and the HTML report of
 * it, with the command that replays the seed); one seed replayed with
 * the usual reports; and the flags' errors (exit 2, nothing run).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { captureIo } from '../testing/cli-io.ts';
import { main } from './main.ts';
import type { SimulateOptions } from './simulate.ts';
import { SMALL_SCENARIO, simulateCli } from '../testing/simulate-cli.ts';

const certificate = generateServingCertificate();

const simulate = (options: SimulateOptions, files: Record<string, string>) => simulateCli(certificate, options, files);

const SMALL = `${SMALL_SCENARIO}steps:
  - scale: {kind: Deployment, name: web, replicas: 5}
  - expect:
      subsets: {a: 2, b: 3}
      costs: {a: [200], b: [100]}
      status: {a: {replicas: 2, missingReplicas: 0}}
`;

/**
 * Looks at the pods at the instant of the scale: without races the
 * Deployment and ReplicaSet controllers have created them all by then; with
 * races the watch and sync latencies have not passed yet.
 */
const AT_ONCE = `${SMALL_SCENARIO}steps:
  - scale: {kind: Deployment, name: web, replicas: 5}
    settle: false
  - expect: {pods: 5}
`;

describe('workloadspread simulate --races', () => {
  after(() => {
    const open = process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap');
    assert.deepEqual(open, []);
  });

  test('a line per seed, then the verdict; exit 0 when every expectation holds under every seed', async () => {
    const { code, io, report } = await simulate({ file: 'small.yaml', races: '2' }, { 'small.yaml': SMALL });
    assert.equal(code, 0, `${io.stdout}\n${io.stderr}`);
    const lines = io.stdout.split('\n');
    assert.equal(lines[0], 'Scenario small (embedded cluster, virtual time, race mode: seeds 1, 2)');
    assert.match(io.stdout, /\nseed 1 {2}PASS {3}6 expectations held {2}\(\+\d+s\)\nseed 2 {2}PASS {3}6 expectations held {2}\(\+\d+s\)\n/);
    assert.match(io.stdout, /\nRACES PASS: every one of 6 expectations held under 2 seeds \(1, 2\)/);
    assert.equal(io.stderr, '');
    assert.deepEqual(report?.seeds, [1, 2]);
  });

  test('-o json: one document, byte-identical for the same seeds (--race-seed picks the first)', async () => {
    const first = await simulate({ file: 'small.yaml', races: '2', raceSeed: '41', output: 'json' }, { 'small.yaml': SMALL });
    const second = await simulate({ file: 'small.yaml', races: '2', raceSeed: '41', output: 'json' }, { 'small.yaml': SMALL });
    assert.equal(first.code, 0, first.io.stderr);
    assert.equal(second.io.stdout, first.io.stdout);
    const doc = JSON.parse(first.io.stdout) as { scenario: string; seeds: number[]; ok: boolean; runs: { seed: number; passed: number }[]; varying: unknown[]; summary: string };
    assert.deepEqual([doc.scenario, doc.seeds, doc.ok, doc.runs.map((r) => [r.seed, r.passed]), doc.varying], ['small', [41, 42], true, [[41, 6], [42, 6]], []]);
    assert.match(doc.summary, /^RACES PASS/);
  });

  test('an expectation that fails under a seed: exit 1, named with its seeds and values; the fixed order passes it', async () => {
    const fixed = await simulate({ file: 'at-once.yaml' }, { 'at-once.yaml': AT_ONCE });
    assert.equal(fixed.code, 0, `without races the pods exist at once:\n${fixed.io.stdout}`);
    const { code, io, report } = await simulate({ file: 'at-once.yaml', races: '3' }, { 'at-once.yaml': AT_ONCE });
    assert.equal(code, 1, io.stdout);
    assert.ok(report !== undefined);
    const pods = [...report.varying, ...report.failing].find((e) => e.step === 1 && e.path === 'pods');
    assert.ok(pods !== undefined, io.stdout);
    assert.ok(pods.failed.length > 0);
    assert.ok(pods.outcomes.some((o) => !o.ok && typeof o.actual === 'number' && o.actual < 5));
    assert.match(io.stdout, /\nRACES FAIL: .*failed under seeds? /);
    assert.match(io.stdout, /steps\[1\] pods/);

    // -o html: the same finding in one self-contained file, with the command that replays the failing seed.
    const seed = pods.failed[0]!;
    const html = await simulate({ file: 'at-once.yaml', races: '1', raceSeed: String(seed), output: 'html', out: '/tmp/races-report-test.html' }, { 'at-once.yaml': AT_ONCE });
    assert.equal(html.code, 1);
    assert.match(html.io.stdout, new RegExp(`^RACES FAIL: .*\\nreport: /tmp/races-report-test\\.html\\n$`));
    const page = html.io.written.get('/tmp/races-report-test.html') ?? '';
    assert.match(page, /<h1>Scenario small<\/h1>/);
    assert.match(page, /<h2>Failed under every seed<\/h2>\n<ul><li><code>steps\[1\]<\/code> pods: expected 5, got [0-4]<\/li><\/ul>/, 'under one seed, it failed under every seed played');
    assert.ok(page.includes(`workloadspread simulate at-once.yaml --race-seed ${seed} -o html --out race-seed-${seed}.html`), page);
    assert.doesNotMatch(page, /<script|https?:\/\//);
  });

  test('--race-seed alone replays one seed with the usual reports, the seed in the header and the setup record', async () => {
    const table = await simulate({ file: 'small.yaml', raceSeed: '7' }, { 'small.yaml': SMALL });
    assert.equal(table.code, 0, table.io.stdout);
    assert.match(table.io.stdout, /^Scenario small \(embedded cluster, virtual time, race seed 7\)\n/);
    assert.match(table.io.stdout, /\nPASS: 6 expectations held over 2 steps\n$/);
    const json = await simulate({ file: 'small.yaml', raceSeed: '7', output: 'json' }, { 'small.yaml': SMALL });
    const setup = JSON.parse(json.io.stdout.split('\n')[0] ?? '') as Record<string, unknown>;
    assert.equal(setup['raceSeed'], 7);
  });

  test('bad flags exit 2 with one line, and nothing runs', async () => {
    const cases: [string[], RegExp][] = [
      [['--races', '0'], /--races must be a whole number from 1 to 1000, not "0"\n$/],
      [['--races', 'many'], /--races must be a whole number from 1 to 1000, not "many"\n$/],
      [['--race-seed', '-1'], /--race-seed must be a whole number from 0 to 4294967295, not "-1"\n$/],
      [['--races', '2', '--out', 'r.html'], /--out is where --output html writes its report; add --output html\n$/],
      [['--races', '2', '--kubeconfig', 'kc.yaml'], /--races plays the scenario on the embedded cluster; a real cluster \(--kubeconfig\) has timing of its own\n$/],
      [['--race-seed', '3', '--kubeconfig', 'kc.yaml'], /--race-seed plays the scenario on the embedded cluster/],
      [['--races', '2', '--race-seed', '4294967295'], /--race-seed 4294967295 with --races 2 goes past the largest seed, 4294967295\n$/],
    ];
    for (const [flags, message] of cases) {
      const io = captureIo({ 'small.yaml': SMALL, 'kc.yaml': 'apiVersion: v1\nkind: Config\n' });
      assert.equal(await main(['simulate', 'small.yaml', ...flags], io), 2, flags.join(' '));
      assert.match(io.stderr, message);
      assert.equal(io.stderr.trimEnd().split('\n').length, 1, io.stderr);
      assert.equal(io.stdout, '');
    }
  });
});
