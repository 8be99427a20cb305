/**
 * The second demo (`workloadspread demo --cloneset`): the nodes of the first
 * (demo.ts), the WorkloadSpread and OpenKruise CloneSet of
 * `examples/demo/cloneset/`, and chapters that scale out, scale in by
 * deletion cost, roll out a new image with a partition and finish it, and
 * scale in again — each followed by checks. The embedded cluster runs the
 * CloneSet controller, so this plays as on a cluster with Kruise installed.
 */
import type { DemoChapter, DemoDefinition } from './demo.ts';

export const CLONESET_DEMO_FILES = ['examples/demo/cloneset/workloadspread.yaml', 'examples/demo/cloneset/cloneset.yaml'] as const;

const WEB = { kind: 'CloneSet', name: 'web' };

export const CLONESET_DEMO_CHAPTERS: readonly DemoChapter[] = [
  {
    title: 'Scale out: 4 → 10 replicas',
    text: 'The CloneSet creates the pods one at a time (scaleStrategy.maxUnavailable: 1); zone-a is full, so the webhook places them in zone-b up to its limit, and the rest on the elastic pool.',
    steps: [{ scale: { ...WEB, replicas: 10 } }],
    expect: { subsets: { 'zone-a': 4, 'zone-b': 4, elastic: 2 }, costs: { 'zone-a': [300], 'zone-b': [200], elastic: [100] } },
  },
  {
    title: 'Scale in: 10 → 6 replicas',
    text: 'A CloneSet, like a ReplicaSet, deletes the pods with the lowest pod-deletion-cost first: the elastic pods (100), then two of zone-b (200).',
    steps: [{ scale: { ...WEB, replicas: 6 } }],
    expect: { subsets: { 'zone-a': 4, 'zone-b': 2, elastic: 0 } },
  },
  {
    title: 'A new image with partition 3',
    text: 'The CloneSet recreates the three pods started last (zone-b’s two, one of zone-a’s) and keeps three at the old revision. Each revision is spread on its own, so the new pods fill zone-a’s 4 places of the new revision: zone-a holds 3 old and 3 new pods for now. The old pods now carry the reversed costs (zone-a’s go first).',
    steps: [{ patch: { ...WEB, patch: { spec: { updateStrategy: { partition: 3 }, template: { spec: { containers: [{ name: 'web', image: 'nginx:1.28' }] } } } } } }],
    expect: { subsets: { 'zone-a': 6, 'zone-b': 0, elastic: 0 }, costs: { 'zone-a': [100, 300] }, events: [{ reason: 'SuccessfulUpdatePodReCreate', count: 3 }] },
  },
  {
    title: 'Finish the rollout: partition 0',
    text: 'The last three old pods are recreated. The new revision now has 6 pods, spread as before the rollout: zone-a 4, zone-b 2.',
    steps: [{ patch: { ...WEB, patch: { spec: { updateStrategy: { partition: 0 } } } } }],
    expect: { subsets: { 'zone-a': 4, 'zone-b': 2, elastic: 0 }, costs: { 'zone-a': [300], 'zone-b': [200] }, podFields: [{ field: 'spec.containers[0].image', value: 'nginx:1.28' }] },
  },
  {
    title: 'Scale in: 6 → 3 replicas',
    text: 'zone-b’s pods go first, then one of zone-a’s.',
    steps: [{ scale: { ...WEB, replicas: 3 } }],
    expect: { subsets: { 'zone-a': 3, 'zone-b': 0, elastic: 0 }, pods: 3 },
  },
];

export const CLONESET_DEMO: DemoDefinition = {
  files: CLONESET_DEMO_FILES,
  chapters: CLONESET_DEMO_CHAPTERS,
  headline: 'one OpenKruise CloneSet spread over two zones and an elastic pool by a WorkloadSpread',
  description: 'CloneSet web spread over zone-a, zone-b and an elastic pool by WorkloadSpread web-spread (examples/demo/cloneset/).',
  setupText: (replicas) =>
    `Applied ${CLONESET_DEMO_FILES.join(' and ')}: WorkloadSpread web-spread (zone-a up to 4 pods, zone-b up to 4, the rest elastic) and CloneSet web with ${replicas} replicas. All of them land in zone-a:`,
};
