/**
 * Server-side printing: the pod STATUS derivation (one case per rule of
 * upstream's printPod), the cells of the other printers, CRD printer columns
 * (JSONPath filters, types, priority), and the HTTP side: Table on get, list
 * and watch, includeObject, plain JSON when no Table is asked for.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { VirtualClock } from '../../../clock/virtual-clock.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import { deployment, pod, rawRequest, rawWatch, startTestCluster, testCertificate, type TestCluster } from '../../../testing/apiserver-bed.ts';
import { customResourcePrinter } from './custom-columns.ts';
import { nodePrinter, podSummary, servicePrinter } from './printers-core.ts';
import { deploymentPrinter, jobPrinter, printerFor } from './printers-workloads.ts';
import { tableVersion } from './table.ts';

const NOW = Date.UTC(2026, 0, 1, 1, 0, 0);
const CREATED = '2026-01-01T00:00:00Z';

function podWith(status: Record<string, unknown>, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): KubeObject {
  return { metadata: { name: 'p', creationTimestamp: CREATED, ...meta }, spec: { containers: [{ name: 'a' }], ...spec }, status };
}
const running = { state: { running: {} }, ready: true, restartCount: 0 };

describe('pod STATUS, READY and RESTARTS', () => {
  const cases: [string, KubeObject, { ready: string; status: string; restarts: string }][] = [
    ['pending, no statuses', podWith({ phase: 'Pending' }), { ready: '0/1', status: 'Pending', restarts: '0' }],
    ['container creating', podWith({ phase: 'Pending', containerStatuses: [{ state: { waiting: { reason: 'ContainerCreating' } }, ready: false, restartCount: 0 }] }), { ready: '0/1', status: 'ContainerCreating', restarts: '0' }],
    ['running and ready', podWith({ phase: 'Running', containerStatuses: [running] }), { ready: '1/1', status: 'Running', restarts: '0' }],
    [
      'crash loop, restarts with the last one ago',
      podWith({ phase: 'Running', containerStatuses: [{ state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, finishedAt: '2026-01-01T00:55:00Z' } }, ready: false, restartCount: 4 }] }),
      { ready: '0/1', status: 'CrashLoopBackOff', restarts: '4 (5m ago)' },
    ],
    ['completed', podWith({ phase: 'Succeeded', containerStatuses: [{ state: { terminated: { exitCode: 0, reason: 'Completed' } }, ready: false }] }), { ready: '0/1', status: 'Completed', restarts: '0' }],
    ['error', podWith({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 2, reason: 'Error' } }, ready: false }] }), { ready: '0/1', status: 'Error', restarts: '0' }],
    ['exit code without reason', podWith({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 3 } } }] }), { ready: '0/1', status: 'ExitCode:3', restarts: '0' }],
    ['signal without reason', podWith({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 137, signal: 9 } } }] }), { ready: '0/1', status: 'Signal:9', restarts: '0' }],
    [
      'completed container but another still running → Running when ready',
      podWith({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [running, { state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }, { containers: [{ name: 'a' }, { name: 'b' }] }),
      { ready: '1/2', status: 'Running', restarts: '0' },
    ],
    [
      '… NotReady when the pod is not ready',
      podWith({ phase: 'Running', containerStatuses: [running, { state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }, { containers: [{ name: 'a' }, { name: 'b' }] }),
      { ready: '1/2', status: 'NotReady', restarts: '0' },
    ],
    ['deleting', podWith({ phase: 'Running', containerStatuses: [running] }, {}, { deletionTimestamp: '2026-01-01T00:59:00Z' }), { ready: '1/1', status: 'Terminating', restarts: '0' }],
    ['deleting on a lost node', podWith({ phase: 'Running', reason: 'NodeLost' }, {}, { deletionTimestamp: '2026-01-01T00:59:00Z' }), { ready: '0/1', status: 'Unknown', restarts: '0' }],
    ['evicted (status reason)', podWith({ phase: 'Failed', reason: 'Evicted' }), { ready: '0/1', status: 'Evicted', restarts: '0' }],
    ['scheduling gated', podWith({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }), { ready: '0/1', status: 'SchedulingGated', restarts: '0' }],
    ['init container running', podWith({ phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { running: {} } }] }, { initContainers: [{ name: 'i' }] }), { ready: '0/1', status: 'Init:0/1', restarts: '0' }],
    ['init container failed', podWith({ phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { terminated: { exitCode: 1, reason: 'Error' } } }] }, { initContainers: [{ name: 'i' }] }), { ready: '0/1', status: 'Init:Error', restarts: '0' }],
    ['init container waiting', podWith({ phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { waiting: { reason: 'ImagePullBackOff' } } }] }, { initContainers: [{ name: 'i' }] }), { ready: '0/1', status: 'Init:ImagePullBackOff', restarts: '0' }],
    [
      'a started sidecar counts as a container',
      podWith({ phase: 'Running', initContainerStatuses: [{ name: 's', started: true, ready: true, state: { running: {} }, restartCount: 1 }], containerStatuses: [running] }, { initContainers: [{ name: 's', restartPolicy: 'Always' }] }),
      { ready: '2/2', status: 'Running', restarts: '1' },
    ],
  ];
  for (const [name, p, want] of cases) test(name, () => assert.deepEqual(podSummary(p, NOW), want));
});

describe('other printers', () => {
  test('deployment: READY UP-TO-DATE AVAILABLE AGE + CONTAINERS IMAGES SELECTOR', () => {
    const d = { ...deployment('web', 3), metadata: { name: 'web', creationTimestamp: CREATED }, status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } } as unknown as KubeObject;
    assert.deepEqual(deploymentPrinter.cells(d, NOW), ['web', '2/3', 3, 2, '60m', 'app', 'nginx:1.25', 'app=web']);
  });
  test('node: status with SchedulingDisabled, roles, versions', () => {
    const n: KubeObject = {
      metadata: { name: 'n1', creationTimestamp: CREATED, labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'edge' } },
      spec: { unschedulable: true },
      status: { conditions: [{ type: 'Ready', status: 'False' }], nodeInfo: { kubeletVersion: 'v1.32.4' }, addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] },
    };
    assert.deepEqual(nodePrinter.cells(n, NOW), ['n1', 'NotReady,SchedulingDisabled', 'control-plane,edge', '60m', 'v1.32.4', '10.0.0.1', '<none>', '<unknown>', '<unknown>', '<unknown>']);
  });
  test('job: status, completions, duration', () => {
    const j: KubeObject = { metadata: { name: 'j', creationTimestamp: CREATED }, spec: { completions: 3, template: { spec: { containers: [] } } }, status: { succeeded: 3, startTime: CREATED, completionTime: '2026-01-01T00:00:42Z', conditions: [{ type: 'Complete', status: 'True' }] } };
    assert.deepEqual(jobPrinter.cells(j, NOW).slice(0, 4), ['j', 'Complete', '3/3', '42s']);
  });
  test('service: ports with node ports, external IP of a pending load balancer', () => {
    const s: KubeObject = { metadata: { name: 's', creationTimestamp: CREATED }, spec: { type: 'LoadBalancer', clusterIPs: ['10.96.0.9'], ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }], selector: { b: '2', a: '1' } } };
    assert.deepEqual(servicePrinter.cells(s, NOW), ['s', 'LoadBalancer', '10.96.0.9', '<pending>', '80:30080/TCP', '60m', 'a=1,b=2']);
  });
  test('endpoints: ip:port entries, three at most', () => {
    const ep: KubeObject = { metadata: { name: 'e', creationTimestamp: CREATED }, subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ port: 80 }, { port: 443 }] }] };
    assert.deepEqual(printerFor('', 'Endpoints').cells(ep, NOW), ['e', '10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...', '60m']);
    assert.equal(printerFor('', 'Endpoints').cells({ metadata: { name: 'x' } }, NOW)[1], '<none>');
  });
  test('kinds without a printer: NAME and CREATED AT', () => {
    const p = printerFor('apiextensions.k8s.io', 'CustomResourceDefinition');
    assert.deepEqual(p.columns.map((c) => c.name), ['Name', 'Created At']);
    assert.deepEqual(p.cells({ metadata: { name: 'x', creationTimestamp: CREATED } }, NOW), ['x', CREATED]);
  });
});

describe('custom resource printer columns', () => {
  const crd = parseYaml(readFileSync(new URL('../../../../deploy/crds/apps.kruise.io_workloadspreads.yaml', import.meta.url), 'utf8')) as KubeObject;
  const ws: KubeObject = {
    metadata: { name: 'ws', creationTimestamp: CREATED },
    spec: { targetRef: { name: 'web', kind: 'Deployment' }, scheduleStrategy: { type: 'Adaptive' } },
    status: {
      subsetCount: 2,
      ready: '3/4',
      placed: '4/4',
      workloadReplicas: 4,
      placedReplicas: 4,
      readyReplicas: 3,
      conditions: [
        { type: 'DuplicateTarget', status: 'False', reason: 'Other' },
        { type: 'Ready', status: 'False', reason: 'Converging' },
        { type: 'Reconciling', status: 'True', reason: 'Converging' },
      ],
    },
  };
  test('the WorkloadSpread columns: the boolean-typed filter column empty as upstream prints it, Ready and Reason picked from the conditions by type, integer counts', () => {
    const p = customResourcePrinter(crd, 'v1alpha1');
    assert.deepEqual(p.columns.map((c) => c.name), ['Name', 'WorkloadName', 'WorkloadKind', 'Adaptive', 'Subsets', 'Ready', 'Reason', 'Desired', 'Placed', 'Ready-Pods', 'Age']);
    assert.deepEqual(p.cells(ws, NOW), ['ws', 'web', 'Deployment', null, 2, 'False', 'Converging', 4, 4, 3, '60m']);
  });
  test('types, filters, missing values, priority and the default Age column', () => {
    const custom: KubeObject = {
      spec: {
        versions: [
          {
            name: 'v1',
            additionalPrinterColumns: [
              { name: 'Mode', type: 'string', jsonPath: '.spec.modes[?(@.on == true)].name' },
              { name: 'Count', type: 'integer', jsonPath: '.spec.count' },
              { name: 'Ratio', type: 'number', jsonPath: '.spec.ratio' },
              { name: 'On', type: 'boolean', jsonPath: '.spec.on', priority: 1 },
              { name: 'Missing', type: 'string', jsonPath: '.spec.nothing' },
            ],
          },
          { name: 'v2' },
        ],
      },
    };
    const obj: KubeObject = { metadata: { name: 'o', creationTimestamp: CREATED }, spec: { modes: [{ name: 'x', on: false }, { name: 'y', on: true }], count: 2.9, ratio: 0.5, on: true } };
    const p = customResourcePrinter(custom, 'v1');
    assert.deepEqual(p.cells(obj, NOW), ['o', 'y', 2, 0.5, true, null]);
    assert.equal(p.columns[4]?.priority, 1);
    assert.deepEqual(customResourcePrinter(custom, 'v2').cells(obj, NOW), ['o', '60m']);
  });
});

test('tableVersion reads the Accept header kubectl sends', () => {
  assert.equal(tableVersion('application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json'), 'v1');
  assert.equal(tableVersion('application/json;as=Table;v=v1beta1;g=meta.k8s.io'), 'v1beta1');
  assert.equal(tableVersion('application/json'), undefined);
});

describe('over HTTP', () => {
  let c: TestCluster;
  const TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' };
  before(async () => {
    c = await startTestCluster(new VirtualClock(Date.UTC(2026, 0, 1)), testCertificate());
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('web-1', { nodeName: 'n1' }) });
  });
  after(async () => {
    await c.close();
  });

  test('list: a Table with the pod columns and PartialObjectMetadata rows', async () => {
    const res = await rawRequest(c.server, 'GET', '/api/v1/namespaces/default/pods', { headers: TABLE });
    const t = res.json as { kind: string; apiVersion: string; metadata: { resourceVersion: string }; columnDefinitions: { name: string; priority: number }[]; rows: { cells: unknown[]; object: KubeObject }[] };
    assert.equal(t.kind, 'Table');
    assert.equal(t.apiVersion, 'meta.k8s.io/v1');
    assert.ok(Number(t.metadata.resourceVersion) > 0);
    assert.deepEqual(t.columnDefinitions.map((d) => `${d.name}:${d.priority}`), ['Name:0', 'Ready:0', 'Status:0', 'Restarts:0', 'Age:0', 'IP:1', 'Node:1', 'Nominated Node:1', 'Readiness Gates:1']);
    assert.deepEqual(t.rows[0]?.cells, ['web-1', '0/1', 'Pending', '0', '0s', '<none>', 'n1', '<none>', '<none>']);
    assert.equal(t.rows[0]?.object.kind, 'PartialObjectMetadata');
    assert.equal(t.rows[0]?.object.metadata?.name, 'web-1');
  });

  test('get with includeObject=Object and None', async () => {
    const full = (await rawRequest(c.server, 'GET', '/api/v1/namespaces/default/pods/web-1?includeObject=Object', { headers: TABLE })).json as { rows: { object: KubeObject }[] };
    assert.equal(full.rows[0]?.object.kind, 'Pod');
    const none = (await rawRequest(c.server, 'GET', '/api/v1/namespaces/default/pods/web-1?includeObject=None', { headers: TABLE })).json as { rows: Record<string, unknown>[] };
    assert.equal(none.rows[0]?.['object'], undefined);
  });

  test('without the Table Accept header the answer is the object', async () => {
    const res = await rawRequest(c.server, 'GET', '/api/v1/namespaces/default/pods/web-1');
    assert.equal((res.json as KubeObject).kind, 'Pod');
  });

  test('watch: every event object is a Table with the row', async () => {
    const w = rawWatch(c.server, '/api/v1/namespaces/default/pods?watch=true', TABLE);
    await w.next(1);
    await c.core.deleteNamespacedPod({ name: 'web-1', namespace: 'default' });
    await w.next(2);
    w.stop();
    const [added, modified] = w.events as unknown as { type: string; object: { kind: string; columnDefinitions: unknown[] | null; rows: { cells: unknown[] }[] } }[];
    assert.equal(added?.type, 'ADDED');
    assert.equal(added?.object.kind, 'Table');
    assert.equal(added?.object.columnDefinitions?.length, 9, 'the first event carries the headers');
    assert.equal(modified?.object.columnDefinitions, null, 'later events do not');
    assert.equal(modified?.object.rows[0]?.cells[2], 'Terminating');
  });
});
