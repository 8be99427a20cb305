/**
 * `simulate --kubeconfig`: a scenario against "an existing cluster" — here
 * the embedded cluster started separately on the REAL clock with the real
 * manager registered in it, reached only through a kubeconfig file, as a
 * user's cluster would be. The run creates its nodes as fake Node objects
 * labelled workloadspread.io/simulated=true, plays their kubelet, checks the
 * expectations in real time, and removes everything it created afterwards;
 * it refuses clusters without the manager and node names that are taken.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workloadSpreadCrd } from '../api/crd.ts';
import { realClock } from '../clock/clock.ts';
import { isNotFound } from '../client/errors.ts';
import { BUILTIN } from '../client/resources.ts';
import { generateServingCertificate } from '../client/loopback-certificates.ts';
import { startCluster, type EmbeddedCluster } from '../cluster/index.ts';
import type { KubeObject, Node } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { startManager, type Manager } from '../manager/manager.ts';
import { MUTATING_CONFIGURATION_NAME } from '../webhook/registration.ts';
import { SIMULATED_NODE_LABEL } from './live-backend.ts';
import { runScenario } from './runner.ts';
import { formatProblems, parseScenario, type Scenario } from './scenario.ts';

const certificate = generateServingCertificate();
const dir = mkdtempSync(join(tmpdir(), 'ws-live-'));

function scenario(text: string): Scenario {
  const r = parseScenario(text);
  assert.ok(r.ok, r.ok ? '' : formatProblems(r.problems));
  return r.scenario;
}

const LIVE = `
name: live
cluster: {kubeletDelay: 300ms, quietPeriod: 1s}
nodes:
  - {name: sim-a-1, labels: {zone: a}}
  - {name: sim-b-1, labels: {zone: b}}
objects:
  - apiVersion: apps.kruise.io/v1alpha1
    kind: WorkloadSpread
    metadata: {name: ws, namespace: sim-live}
    spec:
      targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      subsets:
        - {name: a, maxReplicas: 1, requiredNodeSelectorTerm: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}
        - {name: b, requiredNodeSelectorTerm: {matchExpressions: [{key: zone, operator: In, values: [b]}]}}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: sim-live}
    spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: main, image: nginx}]}}}
steps:
  - expect: {subsets: {a: 1, b: 1}, ready: 2}
  - scale: {kind: Deployment, name: web, namespace: sim-live, replicas: 3}
  - expect:
      subsets: {a: 1, b: 2}
      costs: {a: [200], b: [100]}
      nodeLabels: {zone: {a: 1, b: 2}}
  - advance: 500ms
  - cordon: sim-b-1
  - {cordon: real-node-1, expectFailure: "not one of the scenario's nodes"}
`;

// Facts, not quiet: the manager holds back status changes admission does not
// need (an unlimited subset's replicas, the Ready count) for up to 5 s, and a
// Deployment with minReadySeconds changes nothing for seconds in the middle
// of its rollout; a 1 s quiet period alone ends the settle before either.
const FACTS = `
name: live-facts
cluster: {kubeletDelay: 300ms, podStopDelay: 200ms, quietPeriod: 1s}
nodes:
  - {name: sim-fa-1, labels: {zone: a}}
  - {name: sim-fb-1, labels: {zone: b}}
objects:
  - apiVersion: apps.kruise.io/v1alpha1
    kind: WorkloadSpread
    metadata: {name: ws, namespace: sim-facts}
    spec:
      targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      subsets:
        - {name: a, maxReplicas: 1, requiredNodeSelectorTerm: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}
        - {name: b, requiredNodeSelectorTerm: {matchExpressions: [{key: zone, operator: In, values: [b]}]}}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: sim-facts}
    spec:
      replicas: 3
      selector: {matchLabels: {app: web}}
      template: {metadata: {labels: {app: web}}, spec: {containers: [{name: main, image: nginx}]}}
steps:
  - scale: {kind: Deployment, name: web, namespace: sim-facts, replicas: 2}
  - expect:
      subsets: {a: 1, b: 1}
      status: {a: {replicas: 1, missingReplicas: 0}, b: {replicas: 1, missingReplicas: -1, deletingPods: 0}}
  - patch: {kind: Deployment, name: web, namespace: sim-facts, patch: {spec: {minReadySeconds: 3}}}
  - rollout: {kind: Deployment, name: web, namespace: sim-facts}
  - expect:
      pods: 2
      ready: 2
      subsets: {a: 1, b: 1}
      status: {a: {replicas: 1}, b: {replicas: 1}}
`;

// A custom workload: its kind, the whitelist entry (the manager here runs in
// workloadspread-system, with no whitelist yet) and pods the scenario creates,
// owned by the TFJob it names by kind and name.
const CUSTOM = `
name: live-custom
cluster: {kubeletDelay: 300ms, quietPeriod: 1s}
nodes:
  - {name: sim-ca-1, labels: {zone: a}}
  - {name: sim-cb-1, labels: {zone: b}}
objects:
  - apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: tfjobs.kubeflow.org}
    spec:
      group: kubeflow.org
      names: {kind: TFJob, plural: tfjobs, singular: tfjob}
      scope: Namespaced
      versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: workloadspread-configuration, namespace: workloadspread-system}
    data: {WorkloadSpread_Watch_Custom_Workload_WhiteList: '{"workloads": [{"Group": "kubeflow.org", "Version": "v1", "Kind": "TFJob"}]}'}
  - {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: train, namespace: sim-custom}, spec: {tfReplicaSpecs: {Worker: {replicas: 3}}}}
  - apiVersion: apps.kruise.io/v1alpha1
    kind: WorkloadSpread
    metadata: {name: ws, namespace: sim-custom}
    spec:
      targetRef: {apiVersion: kubeflow.org/v1, kind: TFJob, name: train}
      targetFilter: {selector: {matchLabels: {role: worker}}, replicasPathList: [spec.tfReplicaSpecs.Worker.replicas]}
      subsets:
        - {name: a, maxReplicas: 1, requiredNodeSelectorTerm: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}
        - {name: b, requiredNodeSelectorTerm: {matchExpressions: [{key: zone, operator: In, values: [b]}]}}
steps:
  - createPods: {owner: {kind: TFJob, name: train, namespace: sim-custom}, count: 3, template: {metadata: {labels: {role: worker}}}}
  - expect:
      workloadSpread: sim-custom/ws
      subsets: {a: 1, b: 2}
      ready: 3
      status: {a: {replicas: 1, missingReplicas: 0}, b: {replicas: 2, missingReplicas: -1}}
`;

async function simulatedNodes(cluster: EmbeddedCluster): Promise<string[]> {
  return (await cluster.client.list<Node>(BUILTIN.nodes, { labelSelector: `${SIMULATED_NODE_LABEL}=true` })).items.map((n) => n.metadata?.name ?? '');
}

async function exists(cluster: EmbeddedCluster, get: () => Promise<unknown>): Promise<boolean> {
  try {
    await get();
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

describe('simulate --kubeconfig against an existing cluster (the embedded one on the real clock, with a manager)', () => {
  let cluster: EmbeddedCluster;
  let manager: Manager;
  const kubeconfig = join(dir, 'kubeconfig');

  before(async () => {
    cluster = await startCluster({ clock: realClock(), certificate, nodes: [{ name: 'real-node-1', labels: { zone: 'a' } }] });
    await cluster.client.create(BUILTIN.customresourcedefinitions, workloadSpreadCrd() as KubeObject);
    await cluster.client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'workloadspread-system' } });
    manager = startManager({
      client: await cluster.newClient('workloadspread-manager'),
      namespace: 'workloadspread-system',
      leaderElection: false,
      webhook: { host: '127.0.0.1', port: 0, register: true, url: (own) => own },
    });
    await manager.ready;
    await cluster.writeKubeconfig(kubeconfig);
    // The real node must never receive the scenario's pods: taint it away.
    await cluster.taint('real-node-1', { key: 'keep-off', effect: 'NoSchedule' });
  });

  after(async () => {
    await manager?.stop();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the scenario runs with fake nodes this process plays, and everything it created is removed afterwards', async () => {
    const seen: string[][] = [];
    const result = await runScenario(scenario(LIVE), { kubeconfig, onStep: async () => void seen.push(await simulatedNodes(cluster)) });
    const failures = result.steps.flatMap((s) => s.expectations.filter((e) => !e.ok));
    assert.deepEqual(failures, []);
    assert.equal(result.error, undefined);
    assert.equal(result.mode, 'kubeconfig');
    assert.equal(result.ok, true);
    // During the run: the scenario's nodes exist, labelled as simulated.
    assert.deepEqual(seen[0]?.sort(), ['sim-a-1', 'sim-b-1']);
    // The pods ran on the fake nodes, placed by the cluster's own manager.
    const placed = result.steps[2]?.pods.map((p) => [p.subset, p.node, p.phase, p.ready]).sort();
    assert.deepEqual(placed, [
      ['a', 'sim-a-1', 'Running', true],
      ['b', 'sim-b-1', 'Running', true],
      ['b', 'sim-b-1', 'Running', true],
    ]);
    // Real time passed: advance waited, time stamps are now-ish.
    assert.ok((result.steps[3]?.elapsedMs ?? 0) >= 500);
    // Afterwards: no simulated node, no scenario object, no pod left on the fake nodes.
    assert.deepEqual(await simulatedNodes(cluster), []);
    assert.equal(await exists(cluster, () => cluster.client.get(BUILTIN.deployments, 'web', { namespace: 'sim-live' })), false);
    assert.equal(await exists(cluster, () => cluster.client.get(WORKLOADSPREAD_REF, 'ws', { namespace: 'sim-live' })), false);
    const leftovers = (await cluster.client.list(BUILTIN.pods)).items.filter((p) => ['sim-a-1', 'sim-b-1'].includes(String((p as { spec?: { nodeName?: string } }).spec?.nodeName)));
    assert.deepEqual(leftovers, []);
    assert.deepEqual(await cluster.client.get<Node>(BUILTIN.nodes, 'real-node-1').then((n) => n.spec?.unschedulable), undefined, 'the real node was not touched');
  });

  test('a settle ends on facts: a status the manager held back, and a rollout with minReadySeconds, are judged once they settled', async () => {
    const result = await runScenario(scenario(FACTS), { kubeconfig });
    assert.equal(result.error, undefined);
    assert.deepEqual(result.steps.flatMap((s) => s.expectations.filter((e) => !e.ok)), []);
    // The status the expectations read is the one the manager wrote last: its display fields count the same pods.
    const status = result.steps[1]?.workloadSpreads[0]?.status as { placed?: string; ready?: string } | undefined;
    assert.deepEqual([status?.placed, status?.ready], ['2/2', '2/2']);
    // After the rollout only the new pods are left: in the middle of it the old ones still count.
    const after = result.steps[3]?.pods ?? [];
    assert.equal(after.length, 2);
    assert.ok(after.every((p) => p.ready && p.phase === 'Running'));
    for (const i of [0, 3]) assert.equal(result.steps[i]?.settled?.quiescent, true, JSON.stringify(result.steps[i]?.settled));
    assert.equal(result.ok, true);
  });

  test('pods of a custom workload, owned by the object the scenario named by kind and name; its kind and pods are removed afterwards', async () => {
    const result = await runScenario(scenario(CUSTOM), { kubeconfig });
    assert.equal(result.error, undefined);
    assert.deepEqual(result.steps.flatMap((s) => s.expectations.filter((e) => !e.ok)), []);
    assert.equal(result.ok, true);
    assert.equal(await exists(cluster, () => cluster.client.get(BUILTIN.customresourcedefinitions, 'tfjobs.kubeflow.org')), false);
    assert.equal(await exists(cluster, () => cluster.client.get(BUILTIN.configmaps, 'workloadspread-configuration', { namespace: 'workloadspread-system' })), false);
    assert.deepEqual((await cluster.client.list(BUILTIN.pods, { namespace: 'sim-custom' })).items, []);
  });

  test('a node name the cluster already has (not a simulated node) is refused before anything is created', async () => {
    const result = await runScenario(scenario('nodes: [{name: real-node-1}]\nsteps: [{advance: 1ms}]\n'), { kubeconfig });
    assert.match(result.error ?? '', /node real-node-1 already exists in the cluster and is not a simulated node/);
    assert.equal(result.ok, false);
    assert.deepEqual(await simulatedNodes(cluster), []);
  });

  test('an object that exists already is not replaced: the run ends, and what it created is removed', async () => {
    await cluster.client.create(BUILTIN.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs', namespace: 'default' }, data: { owner: 'someone else' } });
    const result = await runScenario(scenario('nodes: [{name: sim-x-1}]\nobjects:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: mine}, data: {a: b}}\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: theirs}, data: {owner: me}}\n'), { kubeconfig });
    assert.match(result.error ?? '', /ConfigMap default\/theirs already exists in the cluster; the simulator only replaces objects it created/);
    const theirs = await cluster.client.get<KubeObject & { data?: Record<string, string> }>(BUILTIN.configmaps, 'theirs', { namespace: 'default' });
    assert.deepEqual(theirs.data, { owner: 'someone else' });
    assert.equal(await exists(cluster, () => cluster.client.get(BUILTIN.configmaps, 'mine', { namespace: 'default' })), false);
    assert.deepEqual(await simulatedNodes(cluster), []);
  });

  test('Ctrl-C mid-run: the run ends interrupted and still removes its nodes, objects and pods', async () => {
    const stop = new AbortController();
    let nodesDuring: string[] = [];
    const result = await runScenario(scenario(LIVE), {
      kubeconfig,
      signal: stop.signal,
      onStep: async () => {
        nodesDuring = await simulatedNodes(cluster);
        stop.abort(new Error('SIGINT'));
      },
    });
    assert.equal(result.interrupted, true);
    assert.equal(result.ok, false);
    assert.equal(result.steps.length, 1);
    assert.deepEqual(nodesDuring.sort(), ['sim-a-1', 'sim-b-1']);
    assert.deepEqual(await simulatedNodes(cluster), []);
    assert.equal(await exists(cluster, () => cluster.client.get(BUILTIN.deployments, 'web', { namespace: 'sim-live' })), false);
    assert.equal(await exists(cluster, () => cluster.client.get(WORKLOADSPREAD_REF, 'ws', { namespace: 'sim-live' })), false);
    const leftovers = (await cluster.client.list(BUILTIN.pods)).items.filter((p) => ['sim-a-1', 'sim-b-1'].includes(String((p as { spec?: { nodeName?: string } }).spec?.nodeName)));
    assert.deepEqual(leftovers, []);
  });

  test('without the manager in the cluster, the run stops at once and says what is missing', async () => {
    const mwc = await cluster.client.get<KubeObject>(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME);
    await cluster.client.delete(BUILTIN.mutatingwebhookconfigurations, MUTATING_CONFIGURATION_NAME);
    try {
      const result = await runScenario(scenario('nodes: [{name: sim-y-1}]\n'), { kubeconfig });
      assert.match(result.error ?? '', /no WorkloadSpread manager runs in this cluster: the MutatingWebhookConfiguration workloadspread-mutating-webhook-configuration does not exist/);
      assert.deepEqual(await simulatedNodes(cluster), []);
    } finally {
      const { resourceVersion: _rv, uid: _uid, ...meta } = mwc.metadata ?? {};
      await cluster.client.create(BUILTIN.mutatingwebhookconfigurations, { ...mwc, metadata: meta });
    }
  });

  test('without the CRD, the run says the CRD is missing; an unreadable kubeconfig is reported too', async () => {
    const bare = await startCluster({ clock: realClock(), certificate });
    try {
      const path = join(dir, 'bare');
      await bare.writeKubeconfig(path);
      const result = await runScenario(scenario('nodes: [{name: sim-z-1}]\n'), { kubeconfig: path });
      assert.match(result.error ?? '', /the WorkloadSpread CRD \(workloadspreads\.apps\.kruise\.io\) is not installed in this cluster/);
    } finally {
      await bare.stop();
    }
    const missing = await runScenario(scenario('nodes: []\n'), { kubeconfig: join(dir, 'nope') });
    assert.match(missing.error ?? '', /nope: the kubeconfig file does not exist/);
  });
});
