/**
 * The `/validate-pod` route with DomainDisruptionBudgets (D14): AdmissionReview
 * fixtures (pods/eviction CREATE, pod DELETE) through `validatePodHandler`,
 * budgets and WorkloadSpreads in memory stores with resourceVersions, so
 * conflicts and write failures can be injected. One case per rule of
 * budget-eviction.ts and validate-pod.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { DomainDisruptionBudget, DomainDisruptionBudgetSpec, DomainDisruptionBudgetStatus } from '../api/disruption-budget.ts';
import type { SubsetStatus, WorkloadSpread } from '../api/workloadspread.ts';
import { computeBudgetStatus } from '../core/disruption-budget.ts';
import type { Node, Pod } from '../k8s/types.ts';
import type { AdmissionResponse } from './admission-review.ts';
import type { BudgetEnforcementDeps, BudgetEvictionResult } from './budget-eviction.ts';
import { GroupCommit, type GroupCommitStore } from './group-commit.ts';
import { validatePodHandler } from './validate-pod.ts';
import { IMMEDIATE_CONTEXT } from './cpu-turns.ts';
import { deploymentChain, fixtureReview, handlerBed, requestOf, type HandlerBed } from '../testing/admission-kit.ts';

const ZONE = 'topology.kubernetes.io/zone';
const VERSION = '5d4f8b7c9';
const POD = 'web-5d4f8b7c9-abcde';
const NOW = Date.UTC(2026, 0, 1);

/** Budgets in memory: a write with a stale resourceVersion conflicts. */
class MemoryBudgetStore implements GroupCommitStore<DomainDisruptionBudget, DomainDisruptionBudgetStatus> {
  readonly #byKey = new Map<string, DomainDisruptionBudget>();
  #rv = 500;
  writes = 0;
  conflictsToInject = 0;
  failAll: string | undefined;

  put(b: DomainDisruptionBudget): DomainDisruptionBudget {
    const stored = structuredClone({ ...b, metadata: { ...b.metadata, resourceVersion: String(++this.#rv) } });
    this.#byKey.set(`${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`, stored);
    return stored;
  }
  get(namespace: string, name: string): DomainDisruptionBudget | undefined {
    return this.#byKey.get(`${namespace}/${name}`);
  }
  list(namespace: string): DomainDisruptionBudget[] {
    return [...this.#byKey.values()].filter((b) => b.metadata.namespace === namespace).sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  }
  async withLock<R>(_uid: string, fn: () => Promise<R>): Promise<R> {
    return fn();
  }
  freshest(namespace: string, name: string): DomainDisruptionBudget | undefined {
    return this.get(namespace, name);
  }
  async getFresh(namespace: string, name: string): ReturnType<GroupCommitStore<DomainDisruptionBudget>['getFresh']> {
    const b = this.get(namespace, name);
    return b === undefined ? { ok: false, reason: 'NotFound', message: 'not found', error: undefined } : { ok: true, ws: b };
  }
  async writeStatus(b: DomainDisruptionBudget, status: DomainDisruptionBudgetStatus): ReturnType<GroupCommitStore<DomainDisruptionBudget>['writeStatus']> {
    this.writes++;
    if (this.failAll !== undefined) return { ok: false, reason: 'Error', message: this.failAll, error: new Error(this.failAll) };
    if (this.conflictsToInject > 0) {
      this.conflictsToInject--;
      return { ok: false, reason: 'Conflict', message: 'the object has been modified', error: undefined };
    }
    const current = this.get(b.metadata.namespace ?? '', b.metadata.name ?? '');
    if (current === undefined) return { ok: false, reason: 'NotFound', message: 'not found', error: undefined };
    if (current.metadata.resourceVersion !== b.metadata.resourceVersion) return { ok: false, reason: 'Conflict', message: 'stale', error: undefined };
    return { ok: true, ws: this.put({ ...current, status }) };
  }
}

function readyPod(name: string, node: string): Pod {
  const pod = structuredClone(fixtureReview('pod-delete.json').request['oldObject'] as Pod);
  pod.metadata.name = name;
  pod.spec.nodeName = node;
  pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  return pod;
}

const NODES: Node[] = [
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a1', labels: { [ZONE]: 'a' } } },
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a2', labels: { [ZONE]: 'a' } } },
];

interface Bed extends HandlerBed {
  clock: VirtualClock;
  budgets: MemoryBudgetStore;
  listError: string | undefined;
  results: string[];
  enforcement: BudgetEnforcementDeps;
  handler(guard?: boolean): ReturnType<typeof validatePodHandler>;
}

/** The fixture pod (Ready, on node-a1, zone a) and a second pod of zone a; budgets over `app: web` with a current status. */
function bed(specs: Record<string, Partial<DomainDisruptionBudgetSpec>>, pods: Pod[] = [readyPod(POD, 'node-a1'), readyPod('web-5d4f8b7c9-other', 'node-a2')]): Bed {
  const clock = new VirtualClock(NOW);
  const h = handlerBed(clock);
  h.cluster.objects.push(...deploymentChain());
  h.cluster.pods.push(...pods);
  h.cluster.nodeList.push(...NODES);
  const statuses: SubsetStatus[] = [{ name: 'zone-a', replicas: 2, missingReplicas: 0, creatingPods: {}, deletingPods: {} }];
  const ws: WorkloadSpread = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'web-spread', namespace: 'shop', uid: 'ws-uid-1' },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'zone-a', maxReplicas: 2 }] },
    status: { versionedSubsetStatuses: { [VERSION]: statuses } },
  };
  h.cluster.spreads.push(h.store.put(ws));
  const budgets = new MemoryBudgetStore();
  const nodeOf = (name: string) => NODES.find((n) => n.metadata.name === name);
  for (const [name, spec] of Object.entries(specs)) {
    const b: DomainDisruptionBudget = {
      apiVersion: 'policy.workloadspread.io/v1alpha1',
      kind: 'DomainDisruptionBudget',
      metadata: { name, namespace: 'shop', uid: `uid-${name}`, generation: 1 },
      spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
    };
    b.status = computeBudgetStatus(b, pods, nodeOf, undefined, NOW).status;
    budgets.put(b);
  }
  const results: string[] = [];
  const out: Bed = {
    ...h,
    clock,
    budgets,
    listError: undefined,
    results,
    enforcement: {
      clock,
      commit: new GroupCommit<DomainDisruptionBudget, DomainDisruptionBudgetStatus>({ clock, store: budgets, kind: 'DomainDisruptionBudget', random: () => 0 }),
      sources: {
        budgets: (ns) => (out.listError !== undefined ? { ok: false, error: out.listError } : { ok: true, budgets: budgets.list(ns) }),
        node: nodeOf,
        pods: (ns) => h.cluster.pods.filter((p) => p.metadata.namespace === ns),
        workloadSpread: () => undefined,
      },
      metrics: { budgetEviction: (_ns: string, budget: string, result: BudgetEvictionResult) => results.push(`${budget}:${result}`) },
    },
    handler: (guard = false) => validatePodHandler({ pods: h.deps, budgets: out.enforcement, guardPodDeletion: guard }),
  };
  return out;
}

async function send(b: Bed, fixture: 'pod-eviction.json' | 'pod-delete.json', options: { guard?: boolean; dryRun?: boolean; pod?: Pod } = {}): Promise<AdmissionResponse> {
  const r = fixtureReview(fixture);
  if (options.dryRun === true) r.request['dryRun'] = true;
  if (fixture === 'pod-delete.json') r.request['oldObject'] = options.pod ?? b.cluster.pods[0];
  const pending = b.handler(options.guard)(requestOf(r), IMMEDIATE_CONTEXT);
  await b.clock.settle();
  return pending;
}

const disrupted = (b: Bed, name: string, domain = 'a') => b.budgets.get('shop', name)?.status?.domains?.find((d) => d.name === domain)?.disruptedPods;
const deleting = (b: Bed) => b.store.get('shop', 'web-spread')?.status?.versionedSubsetStatuses?.[VERSION]?.[0]?.deletingPods ?? {};

describe('/validate-pod with DomainDisruptionBudgets', () => {
  test('an eviction the domain allows: recorded in disruptedPods (time of approval), then the WorkloadSpread bookkeeping', async () => {
    const b = bed({ 'per-zone': { maxUnavailable: 1, topologyKey: ZONE } });
    const response = await send(b, 'pod-eviction.json');
    assert.equal(response.allowed, true);
    assert.deepEqual(disrupted(b, 'per-zone'), { [POD]: '2026-01-01T00:00:00Z' });
    assert.equal(b.budgets.get('shop', 'per-zone')?.status?.domains?.[0]?.disruptionsAllowed, 0);
    assert.deepEqual(Object.keys(deleting(b)), [POD]);
    assert.deepEqual(b.results, ['per-zone:allowed']);
  });

  test('an eviction the domain does not allow: 429 TooManyRequests naming the budget and the domain; no bookkeeping', async () => {
    const b = bed({ strict: { maxUnavailable: 0, topologyKey: ZONE } });
    const response = await send(b, 'pod-eviction.json');
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 429);
    assert.equal(response.status?.reason, 'TooManyRequests');
    assert.match(response.status?.message ?? '', /DomainDisruptionBudget shop\/strict in domain "a"/);
    assert.equal(b.budgets.writes, 0);
    assert.deepEqual(deleting(b), {}, 'the quota is not released for a refused eviction');
    assert.deepEqual(b.results, ['strict:denied']);
  });

  test('a budget whose status is not current yet (a new generation): 429 with a Retry-After, as the eviction API for a PDB', async () => {
    const b = bed({ 'per-zone': { maxUnavailable: 1, topologyKey: ZONE } });
    const stored = b.budgets.get('shop', 'per-zone') as DomainDisruptionBudget;
    b.budgets.put({ ...stored, metadata: { ...stored.metadata, generation: 2 } });
    const response = await send(b, 'pod-eviction.json');
    assert.equal(response.status?.code, 429);
    assert.equal(response.status?.details?.retryAfterSeconds, 10);
    assert.equal(b.budgets.writes, 0);
  });

  test('a dry-run eviction is checked, not recorded', async () => {
    const allowed = bed({ 'per-zone': { maxUnavailable: 1, topologyKey: ZONE } });
    assert.equal((await send(allowed, 'pod-eviction.json', { dryRun: true })).allowed, true);
    assert.equal(allowed.budgets.writes, 0);
    const refused = bed({ strict: { maxUnavailable: 0, topologyKey: ZONE } });
    assert.equal((await send(refused, 'pod-eviction.json', { dryRun: true })).status?.code, 429, 'a dry run that would be refused is refused');
  });

  test('budgets that cannot be listed yet: refused (429), not waved through', async () => {
    const b = bed({ 'per-zone': { maxUnavailable: 1, topologyKey: ZONE } });
    b.listError = 'the DomainDisruptionBudgets have not been listed yet';
    const response = await send(b, 'pod-eviction.json');
    assert.equal(response.status?.code, 429);
    assert.match(response.status?.message ?? '', /cannot be checked yet/);
  });

  test('a record that keeps conflicting is refused with 429; a failing write with 500 — fail closed either way', async () => {
    const conflicting = bed({ 'per-zone': { maxUnavailable: 1, topologyKey: ZONE } });
    conflicting.budgets.conflictsToInject = 100;
    const r1 = await send(conflicting, 'pod-eviction.json');
    assert.equal(r1.status?.code, 429);
    assert.match(r1.status?.message ?? '', /could not be recorded in the status of DomainDisruptionBudget shop\/per-zone/);
    assert.equal(conflicting.budgets.writes, 4, 'four attempts');
    assert.deepEqual(conflicting.results, ['per-zone:failed']);

    const failing = bed({ 'per-zone': { maxUnavailable: 1, topologyKey: ZONE } });
    failing.budgets.failAll = 'etcd is down';
    const r2 = await send(failing, 'pod-eviction.json');
    assert.equal(r2.status?.code, 500);
    assert.match(r2.status?.message ?? '', /etcd is down/);
    assert.deepEqual(deleting(failing), {});
  });

  test('a transient conflict is re-decided on the fresh copy and passes', async () => {
    const b = bed({ 'per-zone': { maxUnavailable: 1, topologyKey: ZONE } });
    b.budgets.conflictsToInject = 2;
    assert.equal((await send(b, 'pod-eviction.json')).allowed, true);
    assert.deepEqual(Object.keys(disrupted(b, 'per-zone') ?? {}), [POD]);
  });

  test('two budgets: the second refuses → the first one\'s record is given back', async () => {
    const b = bed({ 'a-loose': { maxUnavailable: 1, topologyKey: ZONE }, 'b-strict': { maxUnavailable: 0 } });
    // b-strict allows nothing from the stored status: the first decision already refuses, nothing is written.
    const response = await send(b, 'pod-eviction.json');
    assert.equal(response.status?.code, 429);
    assert.match(response.status?.message ?? '', /shop\/b-strict/);
    assert.equal(disrupted(b, 'a-loose'), undefined);

    // A refusal found only on the fresh copy (another replica spent the disruption): the record is released.
    const c = bed({ 'a-loose': { maxUnavailable: 1, topologyKey: ZONE }, 'b-overall': { maxUnavailable: 1 } });
    const fresh = c.budgets.get('shop', 'b-overall') as DomainDisruptionBudget;
    const enforcement = c.enforcement;
    let spent = false;
    const freshest = c.budgets.freshest.bind(c.budgets);
    c.budgets.freshest = (ns, name) => {
      if (name === 'b-overall' && !spent) {
        spent = true;
        const status = structuredClone(fresh.status) as DomainDisruptionBudgetStatus;
        const d = status.domains?.[0];
        if (d !== undefined) {
          d.disruptionsAllowed = 0;
          d.disruptedPods = { 'web-5d4f8b7c9-other': '2026-01-01T00:00:00Z' };
        }
        return c.budgets.put({ ...fresh, status });
      }
      return freshest(ns, name);
    };
    const refused = await send(c, 'pod-eviction.json');
    assert.equal(refused.status?.code, 429);
    assert.match(refused.status?.message ?? '', /shop\/b-overall/);
    assert.equal(disrupted(c, 'a-loose'), undefined, 'a-loose recorded, then gave the disruption back');
    assert.equal(c.budgets.get('shop', 'a-loose')?.status?.domains?.[0]?.disruptionsAllowed, 1);
    assert.equal(enforcement, c.enforcement);
  });

  test('the bookkeeping failing after the budgets approved → the records are given back', async () => {
    const b = bed({ 'per-zone': { maxUnavailable: 1, topologyKey: ZONE } });
    b.store.failNext = 'cannot write the WorkloadSpread';
    const response = await send(b, 'pod-eviction.json');
    assert.equal(response.allowed, false);
    assert.equal(disrupted(b, 'per-zone'), undefined);
    assert.equal(b.budgets.get('shop', 'per-zone')?.status?.domains?.[0]?.disruptionsAllowed, 1);
  });

  test('an eviction of a pod the cache does not show yet: read from the API server and budgeted like any other; gone there too, nothing to protect', async () => {
    const b = bed({ strict: { maxUnavailable: 0, topologyKey: ZONE } }, [readyPod('web-5d4f8b7c9-other', 'node-a2')]);
    b.cluster.uncachedPods.push(readyPod(POD, 'node-a1'));
    const refused = await send(b, 'pod-eviction.json');
    assert.equal(refused.status?.code, 429, 'a cache miss must not skip the budgets');
    assert.equal(b.cluster.freshReads, 1, 'the pod is read from the API server once, for the budgets and the bookkeeping');
    b.cluster.uncachedPods.length = 0;
    assert.equal((await send(b, 'pod-eviction.json')).allowed, true, 'a pod that does not exist: the API server answers the eviction 404');
    assert.equal(b.cluster.freshReads, 2, 'one API server read per eviction, shared by the budgets and the bookkeeping');
    b.cluster.freshError = 'cannot read pod: timeout';
    const failed = await send(b, 'pod-eviction.json');
    assert.deepEqual([failed.allowed, failed.status?.code], [false, 400], 'unknown is refused, not treated as unprotected');
  });

  test('pod DELETE: budgets are not consulted unless guardPodDeletion; with it, the same rules', async () => {
    const off = bed({ strict: { maxUnavailable: 0, topologyKey: ZONE } });
    assert.equal((await send(off, 'pod-delete.json')).allowed, true, 'deletions are not guarded by default');
    const on = bed({ strict: { maxUnavailable: 0, topologyKey: ZONE } });
    const refused = await send(on, 'pod-delete.json', { guard: true });
    assert.equal(refused.status?.code, 429);
    assert.match(refused.status?.message ?? '', /^Cannot delete pod as it would violate the DomainDisruptionBudget shop\/strict in domain /, 'a DELETE is worded as one');
    const loose = bed({ 'per-zone': { maxUnavailable: 1, topologyKey: ZONE } });
    assert.equal((await send(loose, 'pod-delete.json', { guard: true })).allowed, true);
    assert.deepEqual(Object.keys(disrupted(loose, 'per-zone') ?? {}), [POD]);
  });

  test('pods that bypass budgets: terminating, not Ready (IfHealthyBudget, domain healthy), not governed', async () => {
    const terminating = readyPod(POD, 'node-a1');
    terminating.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    const t = bed({ strict: { maxUnavailable: 0, topologyKey: ZONE } }, [terminating, readyPod('web-5d4f8b7c9-other', 'node-a2')]);
    assert.equal((await send(t, 'pod-eviction.json')).allowed, true);
    assert.equal(t.budgets.writes, 0);

    const unready = readyPod(POD, 'node-a1');
    unready.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] };
    const pods = [unready, readyPod('web-5d4f8b7c9-b', 'node-a2'), readyPod('web-5d4f8b7c9-c', 'node-a2')];
    const u = bed({ 'per-zone': { minAvailable: 2, topologyKey: ZONE } }, pods);
    assert.equal((await send(u, 'pod-eviction.json')).allowed, true);
    assert.equal(u.budgets.writes, 0, 'spends nothing');

    const story1 = bed({ 'not-bar': { maxUnavailable: 0, nodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['bar'] }] } } });
    assert.equal((await send(story1, 'pod-eviction.json')).allowed, true, 'a pod outside the term\'s nodes is not governed');
  });
});
