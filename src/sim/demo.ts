/**
 * The demo (`workloadspread demo`, `npm start`) as a scenario with
 * narration: six fake nodes — zone-a and zone-b of the normal pool (two
 * 2-CPU nodes each, so a zone holds 4 one-CPU pods) and a tainted elastic
 * pool — the WorkloadSpread and Deployment of `examples/demo/`, and
 * chapters that scale out, scale in, raise a maxReplicas, and walk through
 * an Adaptive reschedule (a full zone, pending pods deleted after
 * rescheduleCriticalSeconds, replacements on the elastic pool, the zone
 * schedulable again after the recovery window), each followed by checks.
 *
 * `demoScenario` builds the scenario of a `DemoDefinition` (this one,
 * `DEPLOYMENT_DEMO`, or cloneset-demo.ts's; it runs on the runner like any
 * scenario file); `demoFrame` turns one step's observation into what the
 * terminal shows: per-subset counts against limits, and what changed since
 * the previous chapter, in words. Pure: files come in as text.
 * Start at `DEMO_CHAPTERS`.
 */
import { SUBSET_SCHEDULABLE } from '../api/keys.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { KubeObject } from '../k8s/types.ts';
import { parseManifests } from '../k8s/yaml.ts';
import type { ExpectationResult, Snapshot, StepResult } from './runner.ts';
import { scenarioFromValue, type Problem, type Scenario } from './scenario.ts';

/** The files the demo applies, relative to the repository root. */
export const DEMO_FILES = ['examples/demo/workloadspread.yaml', 'examples/demo/deployment.yaml'] as const;

const ZONE = 'topology.kubernetes.io/zone';
const POOL = 'app.deploy/pool';

/** The demo's fake nodes (names, labels, capacity, the elastic taint). */
export const DEMO_NODES = [
  { namePrefix: 'normal-a', count: 2, labels: { [ZONE]: 'zone-a', [POOL]: 'normal' }, capacity: { cpu: '2', memory: '8Gi', pods: '110' } },
  { namePrefix: 'normal-b', count: 2, labels: { [ZONE]: 'zone-b', [POOL]: 'normal' }, capacity: { cpu: '2', memory: '8Gi', pods: '110' } },
  {
    namePrefix: 'elastic',
    count: 2,
    labels: { [ZONE]: 'zone-c', [POOL]: 'elastic' },
    capacity: { cpu: '16', memory: '64Gi', pods: '110' },
    taints: [{ key: 'app.deploy/elastic', value: 'true', effect: 'NoSchedule' }],
  },
];

/** One chapter: one or more scenario steps, said in a title and a sentence or two, then checked. */
export interface DemoChapter {
  title: string;
  text: string;
  /** Scenario steps (one action each); the terminal shows the cluster after the last. */
  steps: Record<string, unknown>[];
  /** The `expect:` that follows them. */
  expect?: Record<string, unknown>;
}

const WEB = { kind: 'Deployment', name: 'web' };

export const DEMO_CHAPTERS: readonly DemoChapter[] = [
  {
    title: 'Scale out: 4 → 10 replicas',
    text: 'zone-a is full (4 of 4), so the webhook places the next pods in zone-b up to its limit, and the rest on the elastic pool.',
    steps: [{ scale: { ...WEB, replicas: 10 } }],
    expect: { subsets: { 'zone-a': 4, 'zone-b': 4, elastic: 2 }, costs: { 'zone-a': [300], 'zone-b': [200], elastic: [100] } },
  },
  {
    title: 'Scale in: 10 → 6 replicas',
    text: 'The manager gave every pod a pod-deletion-cost (zone-a 300, zone-b 200, elastic 100), so the ReplicaSet removes the elastic pods first, then zone-b’s.',
    steps: [{ scale: { ...WEB, replicas: 6 } }],
    expect: { subsets: { 'zone-a': 4, 'zone-b': 2, elastic: 0 } },
  },
  {
    title: 'Change a limit: zone-b maxReplicas 4 → 6',
    text: 'Running pods stay where they are; zone-b now has room for 4 more pods in the WorkloadSpread’s books. Its two nodes, though, hold only 4 pods.',
    steps: [{ patch: { kind: 'WorkloadSpread', name: 'web-spread', type: 'json', patch: [{ op: 'replace', path: '/spec/subsets/1/maxReplicas', value: 6 }] } }],
    expect: { status: { 'zone-b': { missingReplicas: 4 } } },
  },
  {
    title: 'Scale out again: 6 → 10 replicas, 10 s later',
    text: 'The webhook sends the new pods to zone-b, which has quota left; the scheduler finds room for two of them, and the other two stay Pending.',
    // Not settled: settling would run the whole reschedule below at once.
    steps: [{ scale: { ...WEB, replicas: 10 }, settle: false }, { advance: '10s' }],
    expect: { subsets: { 'zone-a': 4, 'zone-b': 6, elastic: 0 }, ready: 8 },
  },
  {
    title: 'Adaptive reschedule: 30 s later',
    text: 'The two pods have been unschedulable for rescheduleCriticalSeconds (30 s): the manager marks zone-b unschedulable and deletes them; their replacements skip zone-b and start on the elastic pool.',
    steps: [{ advance: '35s' }],
    expect: { subsets: { 'zone-a': 4, 'zone-b': 4, elastic: 2 }, ready: 10, conditions: { 'zone-b': { Schedulable: 'False' } } },
  },
  {
    title: 'Recovery: 5 minutes later',
    text: 'No pod failed to schedule in zone-b for the recovery window (300 s), so it is schedulable again; nothing moves, but the next pods may go there.',
    steps: [{ advance: '5m' }],
    expect: { conditions: { 'zone-b': { Schedulable: 'True' } }, subsets: { 'zone-a': 4, 'zone-b': 4, elastic: 2 } },
  },
  {
    title: 'Scale in: 10 → 5 replicas',
    text: 'Elastic pods go first again, then zone-b’s; zone-a keeps its 4.',
    steps: [{ scale: { ...WEB, replicas: 5 } }],
    expect: { subsets: { 'zone-a': 4, 'zone-b': 1, elastic: 0 }, pods: 5 },
  },
  {
    title: 'Ratios instead of counts: zone-a 25 %, zone-b 25 %, the rest elastic; 5 → 16 replicas',
    text: 'At 16 replicas 25 % is 4 pods: zone-b fills up to 4 and the elastic pool takes the other 8. With a percentage, every pod gets a cost of its own that interleaves the subsets by their shares.',
    steps: [
      { patch: { kind: 'WorkloadSpread', name: 'web-spread', type: 'json', patch: [{ op: 'replace', path: '/spec/subsets/0/maxReplicas', value: '25%' }, { op: 'replace', path: '/spec/subsets/1/maxReplicas', value: '25%' }] } },
      { scale: { ...WEB, replicas: 16 } },
    ],
    expect: { subsets: { 'zone-a': 4, 'zone-b': 4, elastic: 8 }, ready: 16 },
  },
  {
    title: 'Scale in keeping the ratio: 16 → 8 replicas',
    text: 'Whole-subset costs would drop all 8 elastic pods (4/4/0). The balanced costs keep 25 % / 25 % / the rest at the new count: 2/2/4, each zone within ceil(25 % × 8) = 2.',
    steps: [{ scale: { ...WEB, replicas: 8 } }],
    expect: { subsets: { 'zone-a': 2, 'zone-b': 2, elastic: 4 }, pods: 8 },
  },
];

export interface DemoScenario {
  scenario: Scenario;
  /** Each chapter by the index of its last action step (the one after which the terminal shows the cluster). */
  chapters: Map<number, DemoChapter>;
}

export type DemoScenarioResult = { ok: true; demo: DemoScenario } | { ok: false; error: string };

/** One demo: its files, its chapters and the words around them (the nodes are `DEMO_NODES` for every demo). */
export interface DemoDefinition {
  /** The files it applies, relative to the repository root. */
  files: readonly string[];
  chapters: readonly DemoChapter[];
  /** What it shows, in one line (after the command's name). */
  headline: string;
  /** The scenario's description (reports). */
  description: string;
  /** What the terminal says once the files are applied, given the workload's replicas. */
  setupText(replicas: number): string;
}

/** `workloadspread demo`: a Deployment, an Adaptive reschedule and a ratio. */
export const DEPLOYMENT_DEMO: DemoDefinition = {
  files: DEMO_FILES,
  chapters: DEMO_CHAPTERS,
  headline: 'one Deployment spread over two zones and an elastic pool by a WorkloadSpread',
  description: 'Deployment web spread over zone-a, zone-b and an elastic pool by WorkloadSpread web-spread (examples/demo/).',
  setupText: (replicas) => `Applied ${DEMO_FILES.join(' and ')}: WorkloadSpread web-spread (zone-a up to 4 pods, zone-b up to 4, the rest elastic) and Deployment web with ${replicas} replicas. All of them land in zone-a:`,
};

/** The demo's scenario from the text of its files (any manifests; applied in order). */
export function demoScenario(files: readonly { path: string; text: string }[], demo: DemoDefinition = DEPLOYMENT_DEMO): DemoScenarioResult {
  const objects: KubeObject[] = [];
  for (const file of files) {
    const parsed = parseManifests(file.text, file.path);
    if (!parsed.ok) return { ok: false, error: parsed.error };
    objects.push(...parsed.documents.map((d) => d.object));
  }
  const steps: Record<string, unknown>[] = [];
  const chapters = new Map<number, DemoChapter>();
  for (const chapter of demo.chapters) {
    chapter.steps.forEach((step, i) => {
      // The report shows a step's description: the chapter's words go on its first step.
      steps.push(i === 0 ? { ...step, description: `${chapter.title}. ${chapter.text}` } : step);
    });
    chapters.set(steps.length - 1, chapter);
    if (chapter.expect !== undefined) steps.push({ expect: chapter.expect });
  }
  const result = scenarioFromValue({
    name: 'workloadspread demo',
    description: demo.description,
    nodes: DEMO_NODES,
    objects,
    steps,
  });
  if (!result.ok) return { ok: false, error: result.problems.map((p: Problem) => (p.path === '' ? p.message : `${p.path}: ${p.message}`)).join('; ') };
  return { ok: true, demo: { scenario: result.scenario, chapters } };
}

// ---- what the terminal shows ----

export interface FrameSubset {
  name: string;
  /** Resolved maxReplicas; null when unlimited. */
  limit: number | null;
  ready: number;
  notReady: number;
  /** Active pods without a node. */
  pending: number;
  /** Sorted distinct deletion costs (null: a pod without one). */
  costs: (number | null)[];
  /** The Schedulable condition's status; null when the subset has none. */
  schedulable: string | null;
}

export interface DemoFrame {
  /** Clock time since the run started. */
  elapsedMs: number;
  subsets: FrameSubset[];
  /** Active pods of the target in no subset. */
  unassigned: number;
  /** What changed since the previous frame, one short sentence each. */
  changes: string[];
}

type Observed = Pick<Snapshot, 'pods' | 'workloadSpreads' | 'events' | 'elapsedMs'>;

function schedulableOf(observed: Observed, subset: string): string | null {
  const status = observed.workloadSpreads[0]?.status;
  const list: unknown = isPlainObject(status) ? status['subsetStatuses'] : undefined;
  if (!Array.isArray(list)) return null;
  for (const s of list as unknown[]) {
    if (!isPlainObject(s) || s['name'] !== subset || !Array.isArray(s['conditions'])) continue;
    for (const c of s['conditions'] as unknown[]) if (isPlainObject(c) && c['type'] === SUBSET_SCHEDULABLE && typeof c['status'] === 'string') return c['status'];
  }
  return null;
}

function subsetsOf(observed: Observed): FrameSubset[] {
  const ws = observed.workloadSpreads[0];
  if (ws === undefined) return [];
  const key = `${ws.namespace}/${ws.name}`;
  return ws.subsets.map((s) => {
    const pods = observed.pods.filter((p) => p.workloadSpread === key && p.subset === s.name);
    const ready = pods.filter((p) => p.ready).length;
    return {
      name: s.name,
      limit: s.limit,
      ready,
      notReady: pods.length - ready,
      pending: pods.filter((p) => p.node === null).length,
      costs: [...new Set(pods.map((p) => p.deletionCost))].sort((a, b) => (a === null ? -1 : b === null ? 1 : a - b)),
      schedulable: schedulableOf(observed, s.name),
    };
  });
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
const signed = (n: number): string => (n > 0 ? `+${n}` : `−${-n}`);

/** The frame of `now`, with the changes since `before` (the setup or the previous chapter). */
export function demoFrame(before: Observed | undefined, now: Observed): DemoFrame {
  const subsets = subsetsOf(now);
  const earlier = before === undefined ? [] : subsetsOf(before);
  const ws = now.workloadSpreads[0];
  const key = ws === undefined ? '' : `${ws.namespace}/${ws.name}`;
  const unassigned = now.pods.filter((p) => p.workloadSpread === key && p.subset === null).length;
  const changes: string[] = [];

  if (before !== undefined) {
    const names = new Set(before.pods.map((p) => `${p.namespace}/${p.name}`));
    const nowNames = new Set(now.pods.map((p) => `${p.namespace}/${p.name}`));
    const created = now.pods.filter((p) => !names.has(`${p.namespace}/${p.name}`)).length;
    const removed = before.pods.filter((p) => !nowNames.has(`${p.namespace}/${p.name}`)).length;
    const perSubset: string[] = [];
    for (const s of subsets) {
      const was = earlier.find((e) => e.name === s.name);
      const delta = s.ready + s.notReady - (was === undefined ? 0 : was.ready + was.notReady);
      if (delta !== 0) perSubset.push(`${s.name} ${signed(delta)}`);
    }
    const moved = [created > 0 ? `${plural(created, 'pod')} created` : '', removed > 0 ? `${plural(removed, 'pod')} deleted` : ''].filter((x) => x !== '');
    if (moved.length > 0) changes.push(`${moved.join(', ')}${perSubset.length === 0 ? '' : ` (${perSubset.join(', ')})`}`);
    for (const s of subsets) {
      const was = earlier.find((e) => e.name === s.name);
      if (was !== undefined && was.limit !== s.limit) changes.push(`${s.name}: limit ${was.limit ?? 'unlimited'} → ${s.limit ?? 'unlimited'}`);
      if (s.pending > 0) changes.push(`${s.name}: ${plural(s.pending, 'pod')} Pending, no room on its nodes`);
      if (was !== undefined && was.schedulable !== s.schedulable && s.schedulable !== null) {
        changes.push(s.schedulable === 'False' ? `${s.name} marked unschedulable (Schedulable=False)` : `${s.name} schedulable again (Schedulable=${s.schedulable})`);
      }
    }
  }
  for (const e of now.events) {
    if (!e.object.startsWith('WorkloadSpread/')) continue;
    changes.push(`event ${e.reason}: ${e.message}`);
  }
  return { elapsedMs: now.elapsedMs, subsets, unassigned, changes };
}

/** The checks of an expect step that failed (the demo says so loudly). */
export function failedChecks(step: Pick<StepResult, 'expectations'>): ExpectationResult[] {
  return step.expectations.filter((e) => !e.ok);
}
