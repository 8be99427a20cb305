/**
 * Rebalancing end to end (D18): the two example scenarios
 * `examples/scenarios/rebalance-*.yaml` played by the simulator on the
 * embedded cluster with the real manager (its rebalance loop on the leader,
 * the eviction webhook enforcing the DomainDisruptionBudget) on a virtual
 * clock, and what rebalancing promises checked from a watch of every pod
 * change while it runs, as the KEP-8 stories test does:
 *
 * - failback: once zone-a has room again, pods move back one at a time; at no
 *   moment are more pods of a zone unavailable than its budget allows (1), and
 *   the run ends with every subset within its limit and nothing pending;
 * - limit change: the surplus of zone-a moves out one pod at a time — at no
 *   moment is more than one pod of the workload unavailable.
 *
 * "Unavailable" is counted as a budget counts it: a pod bound to a node of the
 * zone (and not finished) that is not Ready, or is terminating.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BUILTIN } from '../client/resources.ts';
import { Watcher } from '../client/watcher.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { isPodReady, isPodTerminating, podPhase } from '../k8s/pod.ts';
import type { Pod } from '../k8s/types.ts';
import type { SimBackend } from './backend.ts';
import { runScenario, type ScenarioRunResult } from './runner.ts';
import { parseScenario } from './scenario.ts';

const certificate = generateServingCertificate();
const SCENARIOS = join(import.meta.dirname, '..', '..', 'examples', 'scenarios');

interface Sample {
  at: number;
  /** Unavailable pods per zone ('all': the whole workload). */
  unavailable: Map<string, number>;
  /** Pods per zone that exist and are not finished. */
  present: Map<string, number>;
  /** Pods Ready and not terminating (the whole workload). */
  serving: number;
}

/** Watches every pod of the scenario while it runs; after each change, the unavailable pods per zone. */
class AvailabilityTimeline {
  readonly samples: Sample[] = [];
  readonly #pods = new Map<string, Pod>();
  readonly #zoneOf: (node: string) => string | undefined;
  #recording = false;

  constructor(zoneOf: (node: string) => string | undefined) {
    this.#zoneOf = zoneOf;
  }

  start = (backend: SimBackend): (() => Promise<void>) => {
    const watcher = new Watcher({ client: backend.client, ref: BUILTIN.pods, namespace: 'default', resyncMs: 0, name: 'rebalance timeline' }, (ev) => {
      if (ev.type === 'initApply' || ev.type === 'apply') this.#pods.set(ev.object.metadata?.uid ?? '', ev.object as Pod);
      else if (ev.type === 'delete') this.#pods.delete(ev.object.metadata?.uid ?? '');
      else return;
      if (this.#recording) this.#sample(backend.clock.now());
    });
    watcher.start();
    return () => watcher.stop();
  };

  setupDone = (now: number): void => {
    this.#recording = true;
    this.#sample(now);
  };

  #sample(at: number): void {
    const unavailable = new Map<string, number>();
    const present = new Map<string, number>();
    let serving = 0;
    const add = (m: Map<string, number>, k: string, n: number) => m.set(k, (m.get(k) ?? 0) + n);
    for (const pod of this.#pods.values()) {
      const phase = podPhase(pod);
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      const down = isPodReady(pod) && !isPodTerminating(pod) ? 0 : 1;
      serving += 1 - down;
      add(unavailable, 'all', down);
      const node = pod.spec?.nodeName;
      const zone = node === undefined ? undefined : this.#zoneOf(node);
      if (zone === undefined) continue;
      add(unavailable, zone, down);
      add(present, zone, 1);
    }
    this.samples.push({ at, unavailable, present, serving });
  }

  maxUnavailable(zone: string): number {
    return Math.max(...this.samples.map((s) => s.unavailable.get(zone) ?? 0));
  }
}

async function play(file: string, timeline: AvailabilityTimeline): Promise<ScenarioRunResult> {
  const parsed = parseScenario(readFileSync(join(SCENARIOS, file), 'utf8'));
  assert.ok(parsed.ok, `${file} parses: ${parsed.ok ? '' : JSON.stringify(parsed.problems)}`);
  const result = await runScenario(parsed.scenario, { certificate, onStart: timeline.start, onSetup: (s) => timeline.setupDone(Date.parse(s.time)) });
  const failed = result.steps.flatMap((s) => s.expectations.filter((e) => !e.ok).map((e) => `step ${s.step} (${s.summary}): ${e.path}: expected ${JSON.stringify(e.expected)}, got ${JSON.stringify(e.actual)}${e.message === undefined ? '' : ` (${e.message})`}`));
  assert.equal(result.error, undefined, `the run of ${file} ended early`);
  assert.deepEqual(failed, [], `every expectation of ${file} holds`);
  assert.ok(result.ok);
  return result;
}

/** The last snapshot's counts per subset against the limits, and the rebalancer's last word. */
function endState(result: ScenarioRunResult): { over: string[]; pending: number | undefined; reason: string | undefined } {
  const last = result.steps[result.steps.length - 1];
  assert.ok(last !== undefined);
  const ws = last.workloadSpreads[0];
  assert.ok(ws !== undefined);
  const over = ws.subsets.filter((s) => s.limit !== null && last.pods.filter((p) => p.subset === s.name).length > s.limit).map((s) => s.name);
  const rebalance = 'rebalance' in ws.status ? ws.status.rebalance : undefined;
  return { over, pending: rebalance?.pending, reason: rebalance?.reason };
}

test('failback after an Adaptive overflow: pods move back one at a time, never more unavailable per zone than the budget allows (1), and every subset ends within its limit', async () => {
  const timeline = new AvailabilityTimeline((node) => (node.startsWith('zone-a-') ? 'zone-a' : node.startsWith('zone-b-') ? 'zone-b' : undefined));
  const result = await play('rebalance-failback.yaml', timeline);
  // Each move is at least six pod changes (terminating, gone, created, bound, running, ready).
  assert.ok(timeline.samples.length >= 12, `the watch saw the moves (${timeline.samples.length} samples)`);
  assert.equal(timeline.maxUnavailable('zone-a'), 1, 'zone-a: at most one pod unavailable at any moment (and the replacements coming up were seen)');
  assert.equal(timeline.maxUnavailable('zone-b'), 1, 'zone-b: at most one pod unavailable at any moment (and the evictions were seen)');
  assert.equal(timeline.maxUnavailable('all'), 2, 'one move at a time: the evicted pod terminating and its replacement starting');
  // The pods did move: zone-a went from 2 to 4 pods on its nodes.
  const first = timeline.samples[0];
  const last = timeline.samples[timeline.samples.length - 1];
  assert.equal(first?.present.get('zone-a'), 2);
  assert.equal(last?.present.get('zone-a'), 4);
  assert.equal(last?.present.get('zone-b'), 2);
  const end = endState(result);
  assert.deepEqual(end.over, [], 'no subset above its limit');
  assert.deepEqual([end.pending, end.reason], [0, 'Balanced']);
  const rebalancing = result.steps.flatMap((s) => s.events.filter((e) => e.reason === 'Rebalancing'));
  assert.equal(rebalancing.length, 2, 'two moves, each announced once');
});

test('a lowered limit: the surplus moves one pod at a time — never more than one pod of the workload unavailable, ready or not', async () => {
  const timeline = new AvailabilityTimeline((node) => node.replace(/-\d+$/, ''));
  const result = await play('rebalance-limit-change.yaml', timeline);
  // An eviction makes one pod unavailable (terminating) while its replacement starts: two pods that are
  // not serving at once, but never more than one of the workload's 8 replicas missing.
  assert.equal(Math.min(...timeline.samples.map((s) => s.serving)), 7, 'at least 7 of 8 pods Ready and serving at every pod change (and one move was seen)');
  assert.equal(timeline.maxUnavailable('zone-a'), 1);
  assert.equal(timeline.maxUnavailable('zone-c'), 1);
  const end = endState(result);
  assert.deepEqual(end.over, []);
  assert.deepEqual([end.pending, end.reason], [0, 'Balanced']);
});
