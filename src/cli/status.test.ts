/**
 * `workloadspread status` against the embedded cluster with the real manager
 * (webhook + controller) on the virtual clock: the command reads the cluster
 * through a kubeconfig file, as a user's kubectl would.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { BUILTIN } from '../client/resources.ts';
import { startCluster } from '../cluster/index.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { startManagerCluster, startTestManager, stopOnClock, type ManagerCluster, type TestManager } from '../testing/manager-bed.ts';
import { captureIo } from '../testing/cli-io.ts';
import { settleUntil } from '../testing/eventually.ts';
import { deployment, workloadSpreadObject, zoneTerm } from '../testing/webhook-bed.ts';
import { main } from './main.ts';
import type { WorkloadSpreadView } from './status-model.ts';
import { runStatus, type StatusOptions } from './status.ts';
import { stripAnsi } from './style.ts';

describe('workloadspread status (embedded cluster, real manager)', () => {
  let env: ManagerCluster;
  let manager: TestManager;
  let dir: string;
  let kubeconfig: string;
  let ns: string;

  before(async () => {
    env = await startManagerCluster();
    manager = await startTestManager(env, { leaderElection: false });
    dir = mkdtempSync(join(tmpdir(), 'ws-status-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, env.cluster.kubeconfig);
    ns = await env.namespace('status');
    // a and b hold 2 pods each, c the rest.
    await env.cluster.client.create(
      WORKLOADSPREAD_REF,
      workloadSpreadObject(ns, 'spread', {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets: [
          { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 2 },
          { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: 2 },
          { name: 'c', requiredNodeSelectorTerm: zoneTerm('c') },
        ],
      }),
    );
    await env.clock.quiesce();
    await env.cluster.client.create(BUILTIN.deployments, deployment(ns, 'web', 6));
    await env.cluster.settle();
  });
  after(async () => {
    if (manager !== undefined) await stopOnClock(env, manager.manager);
    await env?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function status(options: StatusOptions): Promise<{ code: number; stdout: string; stderr: string }> {
    const io = captureIo();
    const code = await runStatus({ kubeconfig, ...options }, io, { clock: env.clock });
    return { code, stdout: io.stdout, stderr: io.stderr };
  }

  async function views(options: StatusOptions = {}): Promise<WorkloadSpreadView[]> {
    const r = await status({ ...(options.allNamespaces === true ? {} : { namespace: ns }), output: 'json', ...options });
    assert.equal(r.code, 0, r.stderr);
    // A List, or the object itself when one was asked for by name (kubectl get's shapes).
    const doc = JSON.parse(r.stdout) as { kind: string; items: WorkloadSpreadView[] } & WorkloadSpreadView;
    return doc.kind === 'List' ? doc.items : [doc];
  }

  test('-o json: per subset limit, pods, ready, missing, bookkeeping, Schedulable and deletion costs, from the stored status and the live pods', async () => {
    const [view] = await views();
    assert.ok(view !== undefined);
    assert.deepEqual(view.target, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', found: true, replicas: 6 });
    assert.deepEqual(
      view.subsets.map((s) => [s.name, s.limit, s.pods, s.ready, s.missing, s.creating, s.deleting, s.schedulable?.status, s.deletionCost]),
      [
        // Costs: 100 × (3 − index); no Adaptive strategy, so no Schedulable condition.
        ['a', 2, 2, 2, 0, 0, 0, undefined, { min: 300, max: 300 }],
        ['b', 2, 2, 2, 0, 0, 0, undefined, { min: 200, max: 200 }],
        // Unlimited: no limit, no missing count.
        ['c', null, 2, 2, null, 0, 0, undefined, { min: 100, max: 100 }],
      ],
    );
    assert.deepEqual([view.placed, view.ready, view.statusCurrent, view.unassigned, view.problems], [6, 6, true, [], []]);
    assert.deepEqual(view.pods.map((p) => p.subset).sort(), ['a', 'a', 'b', 'b', 'c', 'c']);
    assert.ok(view.pods.every((p) => p.phase === 'Running' && p.ready && p.node !== null));
  });

  test('the table: a heading with the target, one row per subset with its bar, then the pods in no subset', async () => {
    const r = await status({ namespace: ns });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], `WorkloadSpread ${ns}/spread → Deployment web (6 replicas, 6 placed, 6 ready)`);
    assert.match(lines[1] ?? '', /^SUBSET\s+LIMIT\s+PODS\s+READY\s+MISSING\s+CREATING\s+DELETING\s+SCHEDULABLE\s+DELETION COST$/);
    assert.match(lines[2] ?? '', /^a\s+2\s+2\s+2\s+0\s+0\s+0\s+-\s+300\s+██$/);
    assert.match(lines[3] ?? '', /^b\s+2\s+2\s+2\s+0\s+0\s+0\s+-\s+200\s+██$/);
    assert.match(lines[4] ?? '', /^c\s+unlimited\s+2\s+2\s+-\s+0\s+0\s+-\s+100\s+██$/);
    assert.equal(lines[5], '');
    assert.match(lines[6] ?? '', /^bars: █ ready {2}▒ not ready {2}· free quota {2}█ above the limit$/);
    assert.doesNotMatch(r.stdout, /\u001b\[/, 'no colour when the output is not a terminal');
  });

  test('colour only when asked for by the environment, and never with --no-color', async () => {
    const io = captureIo();
    io.color = true;
    await runStatus({ kubeconfig, namespace: ns }, io, { clock: env.clock });
    assert.match(io.stdout, /\u001b\[32m██\u001b\[39m/);
    const plain = captureIo();
    plain.color = true;
    await runStatus({ kubeconfig, namespace: ns, color: false }, plain, { clock: env.clock });
    assert.equal(plain.stdout, stripAnsi(io.stdout));
  });

  test('NAME selects one; -A lists every namespace; an empty namespace says so (exit 0)', async () => {
    const other = await env.namespace('status-other');
    await env.cluster.client.create(WORKLOADSPREAD_REF, workloadSpreadObject(other, 'lonely', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'missing' }, subsets: [{ name: 'x' }] }));
    await env.clock.quiesce();
    assert.deepEqual((await views({ name: 'spread' })).map((v) => v.name), ['spread']);
    const everywhere = await views({ allNamespaces: true });
    assert.deepEqual(everywhere.filter((v) => v.namespace === ns || v.namespace === other).map((v) => `${v.namespace}/${v.name}`), [`${ns}/spread`, `${other}/lonely`]);
    const lonely = everywhere.find((v) => v.name === 'lonely');
    assert.deepEqual([lonely?.target.found, lonely?.problems], [false, ['the target Deployment missing does not exist']]);
    const empty = await env.namespace('status-empty');
    const r = await status({ namespace: empty });
    assert.deepEqual([r.code, r.stdout], [0, `No WorkloadSpreads found in namespace ${empty}.\n`]);
  });

  test('errors are one line with exit code 1: NAME not found, no cluster at the address; usage errors exit 2', async () => {
    const io = captureIo();
    const code = await main(['status', 'nope', '-n', ns, '--kubeconfig', kubeconfig], io);
    assert.deepEqual([code, io.stderr], [1, `error: workloadspread "nope" not found in namespace "${ns}"\n`]);

    const closed = join(dir, 'closed');
    writeFileSync(closed, env.cluster.kubeconfig.replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:1'));
    const down = captureIo();
    assert.equal(await main(['status', '--kubeconfig', closed], down), 1);
    assert.match(down.stderr, /^error: cannot reach the cluster at https:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\): is it running\?\n$/);

    const missing = captureIo();
    assert.equal(await main(['status', '--kubeconfig', join(dir, 'nothing-here')], missing), 1);
    assert.match(missing.stderr, /^error: .*nothing-here: the kubeconfig file does not exist\n$/);

    const usage = captureIo();
    assert.equal(await main(['status', 'x', '-A', '--kubeconfig', kubeconfig], usage), 2);
    assert.equal(await main(['status', '-o', 'xml', '--kubeconfig', kubeconfig], captureIo()), 2);
    for (const [args, message] of [
      [['status', 'x', '-l', 'a=b'], 'error: a NAME cannot be given with --selector (-l)\n'],
      [['status', '-l', 'a==='], /^error: --selector \(-l\) "a===": .+\n$/],
      [['status', '--context', 'elsewhere'], /^error: .*context "elsewhere" is not in the kubeconfig\n$/],
    ] as const) {
      const io = captureIo();
      const code = await main([...args, '--kubeconfig', kubeconfig], io);
      if (typeof message === 'string') assert.equal(io.stderr, message);
      else assert.match(io.stderr, message);
      assert.equal(code, (args as readonly string[]).includes('--context') ? 1 : 2, args.join(' '));
    }
  });

  test('-o wide adds PENDING and every pod; -o yaml is the -o json document as YAML; -l selects by label; --context picks one', async () => {
    const wide = await status({ namespace: ns, output: 'wide' });
    assert.equal(wide.code, 0, wide.stderr);
    const lines = wide.stdout.split('\n');
    assert.match(lines[1] ?? '', /^SUBSET\s+LIMIT\s+PODS\s+READY\s+PENDING\s+MISSING\s+CREATING\s+DELETING\s+SCHEDULABLE\s+DELETION COST$/);
    assert.match(lines[2] ?? '', /^a\s+2\s+2\s+2\s+0\s+0\s+0\s+0\s+-\s+300\s+██$/);
    assert.equal(lines[5], 'Pods (6):');
    assert.match(lines[6] ?? '', /^ {2}NAME\s+SUBSET\s+NODE\s+PHASE\s+READY\s+DELETION COST$/);
    assert.equal(lines.slice(7, 13).filter((l) => /^ {2}web-\S+\s+[abc]\s+\S+\s+Running\s+true\s+[123]00$/.test(l)).length, 6, lines.slice(7, 13).join('\n'));

    const yaml = await status({ namespace: ns, output: 'yaml' });
    assert.equal(yaml.code, 0, yaml.stderr);
    assert.ok(yaml.stdout.startsWith('apiVersion: v1\nkind: List\n'), yaml.stdout.slice(0, 80));
    const json = await status({ namespace: ns, output: 'json' });
    assert.deepEqual(parse(yaml.stdout), JSON.parse(json.stdout));

    await env.cluster.client.patch(WORKLOADSPREAD_REF, 'spread', { type: 'merge', body: { metadata: { labels: { team: 'web' } } } }, { namespace: ns });
    assert.deepEqual((await views({ allNamespaces: true, selector: 'team=web' })).map((v) => `${v.namespace}/${v.name}`), [`${ns}/spread`]);
    assert.deepEqual(await views({ selector: 'team in (db,cache)' }), []);

    const config = parse(env.cluster.kubeconfig) as { contexts: { name: string }[]; 'current-context': string };
    const name = config.contexts[0]?.name ?? '';
    const contexts = join(dir, 'contexts');
    writeFileSync(contexts, stringify({ ...config, 'current-context': 'nowhere' }));
    await assert.rejects(status({ kubeconfig: contexts, namespace: ns }), /the current context "nowhere" is not defined/);
    const picked = await status({ kubeconfig: contexts, context: name, namespace: ns, output: 'json' });
    assert.equal(picked.code, 0, picked.stderr);
  });

  test('--watch redraws when the spread changes (and only then), until stopped', async () => {
    const io = captureIo();
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const running = runStatus({ kubeconfig, namespace: ns, name: 'spread', watch: true, output: 'json' }, io, { clock: env.clock, waitForStop: () => stopped, isTTY: false });
    // As kubectl get -w -o json: the object, then the object again each time it changes.
    const snapshots = () => io.stdout.split(/\n(?=\{)/).filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as WorkloadSpreadView);
    await settleUntil(env.clock, () => assert.equal(snapshots().length, 1, 'the first snapshot'));
    assert.equal(snapshots()[0]?.placed, 6);

    await env.cluster.client.scale(BUILTIN.deployments, 'web', 3, { namespace: ns });
    await settleUntil(env.clock, () => {
      const last = snapshots().at(-1);
      // Scale-in takes the cheapest first: c's pods (100), then one of b's (200).
      assert.deepEqual(last?.subsets.map((s) => s.pods), [2, 1, 0]);
    });
    await env.cluster.settle();
    const count = snapshots().length;
    await env.clock.advance(60_000);
    await env.clock.quiesce();
    assert.equal(snapshots().length, count, 'nothing changed, nothing drawn');
    stop();
    assert.equal(await running, 130, 'stopped like Ctrl-C: 130');
  });

  test('--watch -o custom-columns: the header once, then a row whenever the WorkloadSpread changes', async () => {
    const io = captureIo();
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const running = runStatus({ kubeconfig, namespace: ns, watch: true, output: 'custom-columns=NAME:.metadata.name,PLACED:.placed' }, io, { clock: env.clock, waitForStop: () => stopped, isTTY: false });
    const rows = () => io.stdout.split('\n').filter((l) => l !== '').map((l) => l.split(/\s+/));
    await settleUntil(env.clock, () => assert.equal(rows().length, 2, io.stdout));
    const placed = Number(rows()[1]?.[1]);
    await env.cluster.client.scale(BUILTIN.deployments, 'web', placed + 1, { namespace: ns });
    await settleUntil(env.clock, () => assert.deepEqual(rows().at(-1), ['spread', String(placed + 1)]));
    await env.cluster.client.scale(BUILTIN.deployments, 'web', placed, { namespace: ns });
    await env.cluster.settle();
    await settleUntil(env.clock, () => assert.deepEqual(rows().at(-1), ['spread', String(placed)]));
    stop();
    assert.equal(await running, 130);
    assert.equal(rows().filter((r) => r[0] === 'NAME').length, 1, 'one header');
    assert.equal(rows()[0]?.[0], 'NAME');
  });

  test('--watch on a terminal clears the screen before each table', async () => {
    const io = captureIo();
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const running = runStatus({ kubeconfig, namespace: ns, watch: true }, io, { clock: env.clock, waitForStop: () => stopped, isTTY: true });
    await settleUntil(env.clock, () => assert.match(io.stdout, /WorkloadSpread/));
    stop();
    assert.equal(await running, 130, 'Ctrl-C ends a watch with 130, as kubectl get -w');
    assert.ok(io.stdout.startsWith('\u001b[H\u001b[2J'));
  });

  test('a lower maxReplicas shows the surplus; pods of a subset removed from the spec are listed in no subset', async () => {
    await env.cluster.client.scale(BUILTIN.deployments, 'web', 5, { namespace: ns });
    await env.cluster.settle();
    // a2 b2 c1 (scale-out fills b's free slot, then c); now a may hold 1, and c is gone.
    await env.cluster.client.patch(WORKLOADSPREAD_REF, 'spread', { type: 'merge', body: { spec: { subsets: [
      { name: 'a', requiredNodeSelectorTerm: zoneTerm('a'), maxReplicas: 1 },
      { name: 'b', requiredNodeSelectorTerm: zoneTerm('b'), maxReplicas: 2 },
    ] } } }, { namespace: ns });
    await env.cluster.settle();
    const [view] = await views();
    assert.deepEqual(
      view?.subsets.map((s) => [s.name, s.limit, s.pods, s.missing, s.deletionCost]),
      [
        // Above the limit: the least valuable pod gets −100 × (index + 1).
        ['a', 1, 2, 0, { min: -100, max: 200 }],
        ['b', 2, 2, 0, { min: 100, max: 100 }],
      ],
    );
    // c's pod keeps its marker but its subset is gone: −100 × (n + 1).
    assert.deepEqual(view?.unassigned.map((p) => [p.deletionCost, p.reason]), [[-300, 'subset c is not in the spec']]);
    const table = await status({ namespace: ns });
    assert.match(table.stdout, /^a\s+1\s+2\s+2\s+0\s+0\s+0\s+-\s+-100\.\.200\s+██$/m);
    assert.match(table.stdout, /^Pods in no subset \(1\):\n {2}web-\S+\s+c[12]\s+Running\s+ready\s+cost -300\s+subset c is not in the spec$/m);
  });

  test('rebalancing (D18): what the rebalancer is doing — waiting for room, then balanced once a limit makes room', async () => {
    // Continues the previous test: a holds 2 (limit 1), and one pod is in no subset.
    await env.cluster.client.patch(WORKLOADSPREAD_REF, 'spread', { type: 'merge', body: { metadata: { annotations: { 'workloadspread.io/rebalance': 'true' } } } }, { namespace: ns });
    await env.cluster.settle();
    let table = await status({ namespace: ns });
    if (process.env['SHOW_STATUS'] === '1') console.log(table.stdout);
    assert.match(table.stdout, /^Rebalancing: on \(1 move at a time\) — NoRoom since \S+: 2 pods to move\n {2}no subset has quota left for the replacement of pod \S+$/m);
    const [blocked] = await views();
    assert.deepEqual([blocked?.rebalance?.reason, blocked?.rebalance?.pending, blocked?.rebalance?.moves], ['NoRoom', 2, []]);

    await env.cluster.client.patch(WORKLOADSPREAD_REF, 'spread', { type: 'json', ops: [{ op: 'replace', path: '/spec/subsets/1/maxReplicas', value: 4 }] }, { namespace: ns });
    await env.cluster.settle();
    table = await status({ namespace: ns });
    if (process.env['SHOW_STATUS'] === '1') console.log(table.stdout);
    assert.match(table.stdout, /^a\s+1\s+1\s+1\s+0\s/m);
    assert.match(table.stdout, /^b\s+4\s+4\s+4\s+0\s/m);
    assert.doesNotMatch(table.stdout, /Pods in no subset/);
    assert.match(table.stdout, /^Rebalancing: on \(1 move at a time\) — Balanced since \S+: 0 pods to move$/m);
  });
});

describe('workloadspread status without the CRD', () => {
  test('one line, exit 1, saying the CRD is not installed', async () => {
    const cluster = await startCluster();
    const dir = mkdtempSync(join(tmpdir(), 'ws-status-'));
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(kubeconfig, cluster.kubeconfig);
      const io = captureIo();
      assert.equal(await main(['status', '--kubeconfig', kubeconfig], io), 1);
      assert.match(io.stderr, /^error: the cluster at https:\/\/127\.0\.0\.1:\d+ does not serve WorkloadSpread \(apps\.kruise\.io\/v1alpha1\): the CRD is not installed .*\n$/);
      assert.equal(io.stdout, '');
    } finally {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
