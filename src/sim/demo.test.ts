import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { validateWorkloadSpreadFull } from '../api/validation.ts';
import { EMPTY_WHITELIST } from '../api/whitelist.ts';
import { parseManifests } from '../k8s/yaml.ts';
import { DEMO_CHAPTERS, DEMO_FILES, demoFrame, demoScenario } from './demo.ts';
import type { EventRecord, PodRecord, WorkloadSpreadRecord } from './observation.ts';

const files = DEMO_FILES.map((path) => ({ path, text: readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8') }));

describe('the demo scenario', () => {
  const built = demoScenario(files);
  assert.ok(built.ok, built.ok ? '' : built.error);
  const { scenario, chapters } = built.demo;

  test('the bundled WorkloadSpread is valid as the webhook would validate it, against the bundled Deployment', () => {
    const docs = files.flatMap((f) => {
      const parsed = parseManifests(f.text, f.path);
      assert.ok(parsed.ok);
      return parsed.documents.map((d) => d.object);
    });
    const ws = docs.find((d) => d.kind === 'WorkloadSpread');
    const workload = docs.find((d) => d.kind === 'Deployment');
    assert.ok(ws !== undefined && workload !== undefined);
    assert.deepEqual(validateWorkloadSpreadFull(ws, { whitelist: EMPTY_WHITELIST, workload, others: [] }), []);
  });

  test('six nodes: two per normal zone, two tainted elastic ones', () => {
    assert.deepEqual(
      scenario.nodes.map((n) => [n.name, n.labels?.['topology.kubernetes.io/zone'], n.labels?.['app.deploy/pool'], (n.taints ?? []).length]),
      [
        ['normal-a-1', 'zone-a', 'normal', 0],
        ['normal-a-2', 'zone-a', 'normal', 0],
        ['normal-b-1', 'zone-b', 'normal', 0],
        ['normal-b-2', 'zone-b', 'normal', 0],
        ['elastic-1', 'zone-c', 'elastic', 1],
        ['elastic-2', 'zone-c', 'elastic', 1],
      ],
    );
  });

  test('every chapter is narrated after its last step, and checked by the step that follows it', () => {
    assert.equal(chapters.size, DEMO_CHAPTERS.length);
    for (const [index, chapter] of chapters) {
      assert.notEqual(scenario.steps[index]?.action.action, 'expect');
      if (chapter.expect !== undefined) assert.equal(scenario.steps[index + 1]?.action.action, 'expect', chapter.title);
    }
  });

  test('the walk covers scale-out, scale-in, a maxReplicas change, an Adaptive reschedule with recovery, and a scale-in that keeps a ratio', () => {
    const actions = scenario.steps.map((s) => s.action.action).filter((a) => a !== 'expect');
    assert.deepEqual(actions, ['scale', 'scale', 'patch', 'scale', 'advance', 'advance', 'advance', 'scale', 'patch', 'scale', 'scale']);
    const checks = JSON.stringify(DEMO_CHAPTERS.map((c) => c.expect));
    assert.match(checks, /"Schedulable":"False"/);
    assert.match(checks, /"Schedulable":"True"/);
  });

  test('the step that starts the reschedule does not settle (settling would run through it at once)', () => {
    const second = scenario.steps.filter((s) => s.action.action === 'scale')[2];
    assert.deepEqual(second?.after, { settle: false });
  });

  test('broken files are an error, not a throw', () => {
    const r = demoScenario([{ path: 'x.yaml', text: 'a: [' }]);
    assert.equal(r.ok, false);
  });
});

function ws(limits: Record<string, number | null>, conditions: Record<string, string> = {}): WorkloadSpreadRecord {
  return {
    namespace: 'default',
    name: 'web-spread',
    target: 'Deployment/web',
    replicas: 10,
    subsets: Object.entries(limits).map(([name, limit]) => ({ name, maxReplicas: limit, limit })),
    status: {
      subsetStatuses: Object.keys(limits).map((name) => ({
        name,
        replicas: 0,
        missingReplicas: 0,
        ...(conditions[name] === undefined ? {} : { conditions: [{ type: 'Schedulable', status: conditions[name] as string }] }),
      })),
    },
  };
}

function pod(name: string, subset: string | null, o: Partial<PodRecord> = {}): PodRecord {
  return { name, subset, node: 'n', phase: 'Running', ready: true, deletionCost: null, namespace: 'default', workloadSpread: 'default/web-spread', ...o };
}

const at = (pods: PodRecord[], spread: WorkloadSpreadRecord, events: EventRecord[] = [], elapsedMs = 0) => ({ pods, workloadSpreads: [spread], events, elapsedMs });

describe('demoFrame: what the terminal shows after a chapter', () => {
  const limits = { a: 2, b: 3, e: null };

  test('per subset: ready and not-ready pods, pending ones, costs, the limit and Schedulable', () => {
    const frame = demoFrame(undefined, at([pod('p1', 'a', { deletionCost: 300 }), pod('p2', 'a', { ready: false, node: null, phase: 'Pending' }), pod('p3', 'e', { deletionCost: 100 })], ws(limits, { a: 'False' })));
    assert.deepEqual(frame.subsets, [
      { name: 'a', limit: 2, ready: 1, notReady: 1, pending: 1, costs: [null, 300], schedulable: 'False' },
      { name: 'b', limit: 3, ready: 0, notReady: 0, pending: 0, costs: [], schedulable: null },
      { name: 'e', limit: null, ready: 1, notReady: 0, pending: 0, costs: [100], schedulable: null },
    ]);
  });

  const cases: [string, ReturnType<typeof at>, ReturnType<typeof at>, string[]][] = [
    ['pods created, per subset', at([pod('p1', 'a')], ws(limits)), at([pod('p1', 'a'), pod('p2', 'a'), pod('p3', 'b')], ws(limits)), ['2 pods created (a +1, b +1)']],
    ['pods deleted, per subset', at([pod('p1', 'a'), pod('p2', 'e')], ws(limits)), at([pod('p1', 'a')], ws(limits)), ['1 pod deleted (e −1)']],
    [
      'pods moved: created and deleted',
      at([pod('p1', 'b', { node: null })], ws(limits)),
      at([pod('p2', 'e')], ws(limits)),
      ['1 pod created, 1 pod deleted (b −1, e +1)'],
    ],
    ['a limit changed', at([], ws(limits)), at([], ws({ ...limits, b: 5 })), ['b: limit 3 → 5']],
    ['pending pods are pointed out', at([], ws(limits)), at([pod('p1', 'b', { node: null, ready: false })], ws(limits)), ['1 pod created (b +1)', 'b: 1 pod Pending, no room on its nodes']],
    ['a subset turning unschedulable', at([], ws(limits, { b: 'True' })), at([], ws(limits, { b: 'False' })), ['b marked unschedulable (Schedulable=False)']],
    ['and schedulable again', at([], ws(limits, { b: 'False' })), at([], ws(limits, { b: 'True' })), ['b schedulable again (Schedulable=True)']],
    [
      'events about the WorkloadSpread are told, others not',
      at([], ws(limits)),
      at([], ws(limits), [
        { reason: 'RecoverSchedulable', type: 'Normal', message: 'Subset b recovered', namespace: 'default', object: 'WorkloadSpread/web-spread', reportingController: 'c', count: 1 },
        { reason: 'Scheduled', type: 'Normal', message: 'x', namespace: 'default', object: 'Pod/p1', reportingController: 's', count: 1 },
      ]),
      ['event RecoverSchedulable: Subset b recovered'],
    ],
    ['nothing changed, nothing said', at([pod('p1', 'a')], ws(limits)), at([pod('p1', 'a')], ws(limits)), []],
  ];
  for (const [name, before, now, changes] of cases) test(name, () => assert.deepEqual(demoFrame(before, now).changes, changes));

  test('pods in no subset are counted', () => {
    assert.equal(demoFrame(undefined, at([pod('p1', null), pod('p2', 'a')], ws(limits))).unassigned, 1);
  });
});
