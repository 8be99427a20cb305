/**
 * KEP-8's user stories end to end (issue 7): each example scenario of
 * `examples/scenarios/budget-*.yaml` played by the simulator on the embedded
 * cluster with the real manager (webhook enforcement, budget controller) on a
 * virtual clock, and then what the stories promise checked on what happened:
 *
 * - story 1: draining a node of the zone the budget leaves out evicts its
 *   pods at once; draining a node of a covered zone is refused for every
 *   selected pod, by that budget, in its one domain, again and again;
 * - story 2: `kubectl drain`-style eviction of two nodes of one zone — from a
 *   watch of every pod change while it runs, never more than one of the
 *   zone's pods is unavailable, and the zone did lose one (so the check saw
 *   the drain); the other zone keeps its own budget;
 * - story 3: one budget over every zone — never more than one pod of the
 *   workload unavailable; an eviction in another zone is refused meanwhile;
 * - pods on nodes without the topology label share the domain `<none>` and
 *   drain one at a time;
 * - workloadSpreadRef: one domain per subset.
 *
 * "Unavailable" is counted as the budgets count it: a selected pod of the
 * domain that is Ready and not terminating is healthy; the domain's pods
 * minus its healthy pods are unavailable (the domain's size is fixed by the
 * WorkloadSpread's subsets in these scenarios).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BUILTIN } from '../client/resources.ts';
import { Watcher } from '../client/watcher.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { isPlainObject } from '../k8s/json.ts';
import { isPodReady, isPodTerminating } from '../k8s/pod.ts';
import type { Pod } from '../k8s/types.ts';
import type { SimBackend } from './backend.ts';
import { runScenario, type ScenarioRunResult, type StepResult } from './runner.ts';
import { parseScenario } from './scenario.ts';

const certificate = generateServingCertificate();
const SCENARIOS = join(import.meta.dirname, '..', '..', 'examples', 'scenarios');

/** Healthy pods per domain after one pod change. */
interface Sample {
  at: number;
  healthy: Map<string, number>;
}

/**
 * Watches every pod while the scenario runs and keeps, after each change, the
 * healthy pods per domain (`domainOf` names a pod's domain; undefined: not
 * counted). Samples start once the setup has settled.
 */
class HealthTimeline {
  readonly samples: Sample[] = [];
  readonly #pods = new Map<string, Pod>();
  readonly #domainOf: (pod: Pod) => string | undefined;
  #recording = false;

  constructor(domainOf: (pod: Pod) => string | undefined) {
    this.#domainOf = domainOf;
  }

  /** The `onStart` hook of the run: starts the watch, returns how to stop it. */
  start = (backend: SimBackend): (() => Promise<void>) => {
    const watcher = new Watcher({ client: backend.client, ref: BUILTIN.pods, namespace: 'default', resyncMs: 0, name: 'story timeline' }, (ev) => {
      if (ev.type === 'initApply' || ev.type === 'apply') this.#pods.set(ev.object.metadata?.uid ?? '', ev.object as Pod);
      else if (ev.type === 'delete') this.#pods.delete(ev.object.metadata?.uid ?? '');
      else return;
      if (this.#recording) this.#sample(backend.clock.now());
    });
    watcher.start();
    return () => watcher.stop();
  };

  /** The `onSetup` hook: from now on every change is a sample. */
  setupDone = (now: number): void => {
    this.#recording = true;
    this.#sample(now);
  };

  #sample(at: number): void {
    const healthy = new Map<string, number>();
    for (const pod of this.#pods.values()) {
      const domain = this.#domainOf(pod);
      if (domain === undefined) continue;
      healthy.set(domain, (healthy.get(domain) ?? 0) + (isPodReady(pod) && !isPodTerminating(pod) ? 1 : 0));
    }
    this.samples.push({ at, healthy });
  }

  /** The fewest healthy pods the domain had at any moment. */
  minHealthy(domain: string): number {
    return Math.min(...this.samples.map((s) => s.healthy.get(domain) ?? 0));
  }
}

/** A domain function from node names: `node → domain`, for pods labelled app=web. */
function byNode(domains: Record<string, string>): (pod: Pod) => string | undefined {
  return (pod) => {
    const labels = isPlainObject(pod.metadata?.labels) ? pod.metadata.labels : {};
    if (labels['app'] !== 'web') return undefined;
    const node = pod.spec?.nodeName;
    return node === undefined ? undefined : domains[node];
  };
}

async function play(file: string, timeline?: HealthTimeline): Promise<ScenarioRunResult> {
  const parsed = parseScenario(readFileSync(join(SCENARIOS, file), 'utf8'));
  assert.ok(parsed.ok, `${file} parses: ${parsed.ok ? '' : JSON.stringify(parsed.problems)}`);
  const result = await runScenario(parsed.scenario, {
    certificate,
    ...(timeline === undefined ? {} : { onStart: timeline.start, onSetup: (s) => timeline.setupDone(Date.parse(s.time)) }),
  });
  const failed = result.steps.flatMap((s) => s.expectations.filter((e) => !e.ok).map((e) => `step ${s.step} (${s.summary}): ${e.path}: expected ${JSON.stringify(e.expected)}, got ${JSON.stringify(e.actual)}${e.message === undefined ? '' : ` (${e.message})`}`));
  assert.equal(result.error, undefined, `the run of ${file} ended early`);
  assert.deepEqual(failed, [], `every expectation of ${file} holds`);
  assert.ok(result.ok);
  return result;
}

function drainStep(result: ScenarioRunResult, node: string, nth = 0): StepResult {
  const steps = result.steps.filter((s) => s.action === 'drain' && s.summary.includes(`drain node ${node}`));
  const step = steps[nth];
  assert.ok(step !== undefined, `a drain of ${node}`);
  return step;
}

test('story 1: maxUnavailable 0 outside zone-a — a zone-a node drains at once, every pod of a zone-b node is refused', async () => {
  const result = await play('budget-story1-one-zone-at-a-time.yaml');
  const zoneA = drainStep(result, 'zone-a-1');
  assert.ok((zoneA.evictions ?? []).length > 0);
  for (const e of zoneA.evictions ?? []) assert.deepEqual([e.pod, e.result, e.refusals], [e.pod, 'evicted', 0]);
  assert.equal(zoneA.error, undefined);

  const zoneB = drainStep(result, 'zone-b-1');
  assert.match(zoneB.error ?? '', /drain did not complete within 1m/);
  // The webhook's message once (its denial repeats it as a cause).
  assert.equal((zoneB.error ?? '').split('Cannot evict pod as it would violate the DomainDisruptionBudget default/web-one-zone in domain "matching-nodes"').length, 3, 'once per pod');
  assert.equal((zoneB.evictions ?? []).length, 2, 'both zone-b pods are on zone-b-1');
  for (const e of zoneB.evictions ?? []) {
    assert.equal(e.result, 'refused', `${e.pod} was never evicted`);
    assert.ok(e.refusals >= 10, `${e.pod} was retried every 5 s for a minute (${e.refusals} refusals)`);
    assert.deepEqual(e.refusedBy, ['DomainDisruptionBudget/web-one-zone']);
    assert.deepEqual(e.refusedIn, ['matching-nodes']);
  }
  // Once the budget moved on to zone-b, the same node drains.
  const again = drainStep(result, 'zone-b-1', 1);
  assert.equal(again.error, undefined);
  assert.deepEqual(again.evictions?.map((e) => [e.result, e.refusals]), [['evicted', 0], ['evicted', 0]]);
});

test('story 2: maxUnavailable 1 per zone — draining two nodes of zone-a never has two of its pods unavailable', async () => {
  const zones = { 'zone-a-1': 'zone-a', 'zone-a-2': 'zone-a', 'zone-a-3': 'zone-a', 'zone-b-1': 'zone-b', 'zone-c-1': 'zone-c' };
  const timeline = new HealthTimeline(byNode(zones));
  const result = await play('budget-story2-per-zone.yaml', timeline);
  // Zone-a has 4 pods (its subset's maxReplicas): at least 3 healthy at every pod change, and it did go down to 3.
  assert.equal(timeline.minHealthy('zone-a'), 3);
  assert.equal(timeline.minHealthy('zone-b'), 1);
  assert.ok(timeline.samples.length > 20, `the watch saw the drains (${timeline.samples.length} samples)`);
  for (const node of ['zone-a-1', 'zone-a-2']) {
    const step = drainStep(result, node);
    assert.equal(step.error, undefined);
    const records = step.evictions ?? [];
    assert.equal(records.length, 2);
    // Evicted one after the other: the second only after the first pod was gone.
    const [first, second] = [...records].sort((a, b) => (a.evictedAt ?? '').localeCompare(b.evictedAt ?? ''));
    assert.ok(first !== undefined && second !== undefined);
    assert.equal(first.refusals, 0);
    assert.ok(second.refusals >= 1);
    assert.deepEqual(second.refusedIn, ['zone-a']);
    assert.ok(Date.parse(second.evictedAt ?? '') >= Date.parse(first.goneAt ?? ''), `${second.pod} went after ${first.pod} was gone`);
  }
});

test('story 3: maxUnavailable 1 overall — an eviction in zone-b waits for zone-a, a drain goes one pod at a time', async () => {
  const zones = { 'zone-a-1': 'all', 'zone-a-2': 'all', 'zone-b-1': 'all', 'zone-b-2': 'all', 'zone-c-1': 'all', 'zone-c-2': 'all' };
  const timeline = new HealthTimeline(byNode(zones));
  const result = await play('budget-story3-overall.yaml', timeline);
  assert.equal(timeline.minHealthy('all'), 5);
  const refused = result.steps.find((s) => s.action === 'evict' && s.error !== undefined);
  assert.match(refused?.error ?? '', /DomainDisruptionBudget default\/web-overall in domain "all"/);
  const drain = drainStep(result, 'zone-a-1');
  assert.deepEqual(drain.evictions?.map((e) => e.result), ['evicted', 'evicted']);
  assert.equal(drain.evictions?.reduce((n, e) => n + (e.refusals > 0 ? 1 : 0), 0), 1);
});

test('a node without the topology label: its pods are the domain <none>, drained one at a time', async () => {
  const timeline = new HealthTimeline(byNode({ 'edge-1': '<none>', 'edge-2': '<none>', 'zone-a-1': 'zone-a', 'zone-b-1': 'zone-b' }));
  const result = await play('budget-node-without-zone.yaml', timeline);
  assert.equal(timeline.minHealthy('<none>'), 1);
  const drain = drainStep(result, 'edge-1');
  assert.equal(drain.evictions?.length, 2);
  const refused = (drain.evictions ?? []).filter((e) => e.refusals > 0);
  assert.equal(refused.length, 1);
  assert.deepEqual(refused[0]?.refusedIn, ['<none>']);
});

test('workloadSpreadRef: each subset is a domain — a spot node drains one pod at a time, on-demand keeps its own budget', async () => {
  const pools = { 'spot-1': 'spot', 'spot-2': 'spot', 'on-demand-1': 'on-demand', 'on-demand-2': 'on-demand' };
  const timeline = new HealthTimeline(byNode(pools));
  const result = await play('budget-workloadspread-subsets.yaml', timeline);
  assert.equal(timeline.minHealthy('spot'), 1);
  assert.equal(timeline.minHealthy('on-demand'), 1);
  const drain = drainStep(result, 'spot-1');
  assert.deepEqual((drain.evictions ?? []).filter((e) => e.refusals > 0).map((e) => e.refusedIn), [['spot']]);
});

/** A PodDisruptionBudget and a DomainDisruptionBudget on the same pods: an eviction needs both. */
const PDB_AND_DDB = `
name: pdb-and-ddb
cluster: {kubeletDelay: 10s}
nodes:
  - {name: zone-a-1, labels: {topology.kubernetes.io/zone: zone-a}}
  - {name: zone-b-1, labels: {topology.kubernetes.io/zone: zone-b}}
  - {name: zone-c-1, labels: {topology.kubernetes.io/zone: zone-c}}
objects:
  - apiVersion: apps.kruise.io/v1alpha1
    kind: WorkloadSpread
    metadata: {name: web-zones}
    spec:
      targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      subsets:
        - {name: zone-a, maxReplicas: 2, requiredNodeSelectorTerm: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]}}
        - {name: zone-b, maxReplicas: 2, requiredNodeSelectorTerm: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}]}}
        - {name: zone-c, maxReplicas: 2, requiredNodeSelectorTerm: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-c]}]}}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 6
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: main, image: nginx:1.27}]}
  - apiVersion: policy.workloadspread.io/v1alpha1
    kind: DomainDisruptionBudget
    metadata: {name: web-per-zone}
    spec: {selector: {matchLabels: {app: web}}, maxUnavailable: 1, topologyKey: topology.kubernetes.io/zone}
  - apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: web-pdb}
    spec: {selector: {matchLabels: {app: web}}, minAvailable: 5}
steps:
  - expect:
      budgets:
        web-per-zone: {zone-a: {disruptionsAllowed: 1}, zone-b: {disruptionsAllowed: 1}}
        web-pdb: {all: {expectedPods: 6, disruptionsAllowed: 1}}
  - description: both budgets allow it
    evict: {subset: zone-a, count: 1}
    settle: false
  - description: the per-zone budget of zone-b allows it, the PodDisruptionBudget (checked by the API server after the webhook) does not
    evict: {subset: zone-b, count: 1}
    settle: false
    expectFailure: disruption budget
  - expect:
      refusedEvictions: {count: 1, budget: PodDisruptionBudget/web-pdb, evicted: 1}
      # The webhook's approval stays recorded until the pod goes or it expires (2 minutes).
      budgets: {web-per-zone: {zone-b: {disruptedPods: 1, disruptionsAllowed: 0}}}
  - description: zone-a's replacement is Ready and the approval has expired
    settle: {}
  - evict: {subset: zone-b, count: 1}
  - expect:
      refusedEvictions: 0
      ready: 6
      subsets: {zone-a: 2, zone-b: 2, zone-c: 2}
`;

test('a PodDisruptionBudget and a DomainDisruptionBudget together: an eviction needs both', async () => {
  const parsed = parseScenario(PDB_AND_DDB);
  assert.ok(parsed.ok, parsed.ok ? '' : JSON.stringify(parsed.problems));
  const result = await runScenario(parsed.scenario, { certificate });
  const failed = result.steps.flatMap((s) => s.expectations.filter((e) => !e.ok).map((e) => `step ${s.step}: ${e.path}: expected ${JSON.stringify(e.expected)}, got ${JSON.stringify(e.actual)}`));
  assert.deepEqual(failed, []);
  assert.ok(result.ok);
});
