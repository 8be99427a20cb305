/**
 * runScenario on the embedded cluster with the real manager: every step
 * kind does what a user with kubectl would do (delete and evict by name or
 * by subset, cordon/uncordon, taint/untaint, deleteNode, addNodes, apply as
 * create-or-replace, rollout), nodes that never start pods, events since
 * the previous expect, and an aborted run that stops everything it started.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN } from '../client/resources.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { runScenario, type StepResult } from './runner.ts';
import { formatProblems, parseScenario, type Scenario } from './scenario.ts';

const certificate = generateServingCertificate();

function scenario(text: string): Scenario {
  const r = parseScenario(text);
  assert.ok(r.ok, r.ok ? '' : formatProblems(r.problems));
  return r.scenario;
}

const zone = (z: string) => `{matchExpressions: [{key: zone, operator: In, values: [${z}]}]}`;
const OBJECTS = (bMax: number) => `
  - apiVersion: apps.kruise.io/v1alpha1
    kind: WorkloadSpread
    metadata: {name: ws}
    spec:
      targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      subsets:
        - {name: a, maxReplicas: 2, requiredNodeSelectorTerm: ${zone('a')}}
        - {name: b, maxReplicas: ${bMax}, requiredNodeSelectorTerm: ${zone('b')}}
        - {name: c, requiredNodeSelectorTerm: ${zone('c')}}`;

// While a pod of the Deployment stays unavailable, a default settle runs to
// the Deployment's progress check (600 s after it last progressed) and then
// stops on the busy loop it becomes (the next test). The steps that leave a
// pod unavailable settle for at most a minute instead, so the run stays
// before that deadline and every step is its own moment.
const EVERY_STEP = `
name: every-step
nodes:
  - {name: a-1, labels: {zone: a}}
  - {name: b-1, labels: {zone: b}}
  - {name: stuck-1, labels: {zone: c}, podsNeverStart: true}
objects:${OBJECTS(2)}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec: {replicas: 4, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: main, image: nginx}]}}}
steps:
  - expect: {subsets: {a: 2, b: 2, c: 0}, ready: 4}
  - delete: {kind: Pod, subset: a, count: 1}
  - expect: {subsets: {a: 2, b: 2}, ready: 4, events: [{reason: SuccessfulCreate, count: 1}]}
  - {scale: {kind: Deployment, name: web, replicas: 5}, settle: {timeout: 1m}}
  - description: the fifth pod goes to c, whose only node never starts pods
    expect: {subsets: {c: 1}, ready: 4, nodeLabels: {zone: {c: 1}}}
  - {evict: {subset: c, count: 1}, settle: {timeout: 1m}}
  - expect: {subsets: {c: 1}, ready: 4}
  - {deleteNode: stuck-1, settle: {timeout: 1m}}
  - advance: 1m
  - description: the pod of the removed node was collected; its replacement waits for a node of c
    expect: {subsets: {c: 1}, ready: 4, nodeLabels: {zone: {c: 0}}}
  - {addNodes: [{name: c-2, labels: {zone: c}}], settle: {timeout: 1m}}
  - expect: {subsets: {c: 1}, ready: 5, nodeLabels: {zone: {c: 1}}}
  - {taint: {node: c-2, key: maintenance, effect: NoSchedule}, settle: {timeout: 1m}}
  - {scale: {kind: Deployment, name: web, replicas: 6}, settle: {timeout: 1m}}
  - expect: {subsets: {c: 2}, ready: 5, events: [{reason: FailedScheduling, type: Warning}]}
  - untaint: {node: c-2, key: maintenance}
  - expect: {ready: 6}
  - cordon: a-1
  - {uncordon: a-1}
  - apply:
      apiVersion: apps.kruise.io/v1alpha1
      kind: WorkloadSpread
      metadata: {name: ws}
      spec:
        targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
        subsets:
          - {name: a, maxReplicas: 2, requiredNodeSelectorTerm: ${zone('a')}}
          - {name: b, maxReplicas: 3, requiredNodeSelectorTerm: ${zone('b')}}
          - {name: c, requiredNodeSelectorTerm: ${zone('c')}}
  - expect: {status: {b: {missingReplicas: 1}}}
  - {evict: {pod: no-such-pod}, expectFailure: not found}
  - rollout: {kind: Deployment, name: web}
  - expect: {pods: 6, ready: 6, subsets: {a: 2, b: 3, c: 1}}
`;

describe('runScenario on the embedded cluster', () => {
  test('every step kind, as kubectl would do it', async () => {
    const steps: StepResult[] = [];
    const result = await runScenario(scenario(EVERY_STEP), { certificate, onStep: (s) => void steps.push(s) });
    const failures = result.steps.flatMap((s) => s.expectations.filter((e) => !e.ok).map((e) => `steps[${s.step}] ${e.path}: expected ${JSON.stringify(e.expected)}, got ${JSON.stringify(e.actual)}`));
    assert.deepEqual(failures, []);
    assert.equal(result.error, undefined);
    assert.equal(result.ok, true);
    assert.equal(steps.length, result.steps.length, 'onStep saw every step');
    // The notes say what the subset-chosen actions picked and what apply did.
    assert.match(result.steps[1]?.notes?.[0] ?? '', /^deleted web-/);
    assert.match(result.steps[5]?.notes?.[0] ?? '', /^evicted web-/);
    assert.deepEqual(result.steps[10]?.notes, ['added c-2']);
    assert.deepEqual(result.steps[19]?.notes, ['WorkloadSpread ws replaced']);
    // The pod on the never-starting node stays Pending, bound.
    const stuck = result.steps[4]?.pods.find((p) => p.subset === 'c');
    assert.deepEqual([stuck?.node, stuck?.phase, stuck?.ready], ['stuck-1', 'Pending', false]);
    // Time: each step's time is the virtual clock's, never going back; advance moved it a minute.
    const times = result.steps.map((s) => s.elapsedMs);
    assert.deepEqual(times, [...times].sort((x, y) => x - y));
    assert.ok((result.steps[8]?.elapsedMs ?? 0) - (result.steps[7]?.elapsedMs ?? 0) >= 60_000);
    assert.match(result.steps[0]?.time ?? '', /^2026-01-01T00:00:\d\dZ$/);
  });

  test('a settle stops when only a busy loop that changes nothing is left (a Deployment past its progress deadline)', async () => {
    const result = await runScenario(
      scenario(`
nodes:
  - {name: a-1, labels: {zone: a}}
  - {name: b-1, labels: {zone: b}}
  - {name: stuck-1, labels: {zone: c}, podsNeverStart: true}
objects:${OBJECTS(1)}
  - {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: m, image: i}]}}}}
steps:
  - scale: {kind: Deployment, name: web, replicas: 4}
  - expect: {subsets: {a: 2, b: 1, c: 1}, ready: 3}
`),
      { certificate },
    );
    assert.equal(result.ok, true, JSON.stringify(result.steps.map((s) => s.expectations)));
    const settled = result.steps[0]?.settled;
    assert.equal(settled?.quiescent, false);
    assert.equal(settled?.spinning, 'deployment-controller requeue');
    // It ran up to the progress check (600 s after the Deployment last progressed), not to the 30m timeout.
    assert.ok((settled?.elapsedMs ?? 0) > 590_000 && (settled?.elapsedMs ?? 0) < 15 * 60_000, String(settled?.elapsedMs));
  });

  test('owned pods: the owner named by kind and name gets its uid filled in; a missing owner is an error naming it', async () => {
    const seen: { owners: unknown[]; names: string[]; uid: string }[] = [];
    const result = await runScenario(
      scenario(`
nodes: [n-1]
objects:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: owner}, data: {a: b}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: owned-0, ownerReferences: [{kind: ConfigMap, name: owner}]}
    spec: {containers: [{name: m, image: i}]}
steps:
  - createPods: {owner: {kind: ConfigMap, name: owner}, count: 2, template: {metadata: {labels: {role: w}}}}
  - {createPods: {owner: {kind: ConfigMap, name: gone}}, expectFailure: "owner ConfigMap default/gone does not exist: create it before the objects it owns"}
  - {apply: {apiVersion: v1, kind: Pod, metadata: {name: orphan, ownerReferences: [{kind: ConfigMap, name: gone}]}, spec: {containers: [{name: m, image: i}]}}, expectFailure: "owner ConfigMap default/gone does not exist"}
`),
      {
        certificate,
        onStart: (backend) => async () => {
          const pods = (await backend.client.list<{ metadata: { name: string; ownerReferences?: unknown[] } }>(BUILTIN.pods, { namespace: 'default' })).items;
          const owner = await backend.client.get<{ metadata: { uid: string } }>(BUILTIN.configmaps, 'owner', { namespace: 'default' });
          seen.push({ owners: pods.map((p) => p.metadata.ownerReferences), names: pods.map((p) => p.metadata.name), uid: owner.metadata.uid });
        },
      },
    );
    assert.deepEqual(result.steps.flatMap((s) => s.expectations.filter((e) => !e.ok)), []);
    assert.equal(result.error, undefined);
    assert.match(result.steps[0]?.notes?.[0] ?? '', /^created owner-\w+, owner-\w+$/);
    assert.match(result.steps[2]?.error ?? '', /owner ConfigMap default\/gone does not exist/);
    // owned-0 (from objects) and the two created pods, each naming the owner with its uid (as seen before the cluster stopped).
    const uid = seen[0]?.uid ?? '';
    assert.ok(uid !== '');
    const owned = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid };
    assert.deepEqual(
      seen[0]?.names.map((n, i) => [n.startsWith('owned-') ? 'objects' : 'createPods', seen[0]?.owners[i]]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [['createPods', [{ ...owned, controller: true, blockOwnerDeletion: true }]], ['createPods', [{ ...owned, controller: true, blockOwnerDeletion: true }]], ['objects', [owned]]],
    );
  });

  test('an aborted run stops after the current step and leaves nothing running', async () => {
    const servers = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
    const before = servers();
    const stop = new AbortController();
    const result = await runScenario(scenario(`nodes: [a-1]\nobjects:${OBJECTS(1)}\nsteps: [{advance: 1s}, {advance: 1s}, {advance: 1s}]\n`), {
      certificate,
      signal: stop.signal,
      onStep: () => stop.abort(new Error('Ctrl-C')),
    });
    assert.equal(result.interrupted, true);
    assert.equal(result.ok, false);
    assert.equal(result.steps.length, 1);
    assert.equal(servers(), before, 'the API server, the webhook server and the manager endpoints are closed');
  });

  test('a scenario whose manager cannot place pods for lack of nodes still reports, with unassigned pods', async () => {
    const result = await runScenario(
      scenario(`objects:${OBJECTS(1)}\n  - {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: m, image: i}]}}}}\nsteps:\n  - expect: {pods: 1, ready: 0, subsets: {a: 1}}\n`),
      { certificate },
    );
    assert.equal(result.ok, true, JSON.stringify(result.steps.map((s) => s.expectations)));
    assert.deepEqual(result.steps[0]?.pods.map((p) => [p.subset, p.node, p.phase]), [['a', null, 'Pending']]);
  });
});
