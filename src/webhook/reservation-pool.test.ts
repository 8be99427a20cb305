import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CREATE_POD_TIMEOUT_MS, RESERVED_AHEAD_PREFIX } from '../api/keys.ts';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { parseMarker } from '../core/marker.ts';
import { formatTime } from '../k8s/time.ts';
import type { Node, Pod } from '../k8s/types.ts';
import { applyResponse, deploymentChain, fixtureReview, handlerBed, requestOf, type HandlerBed } from '../testing/admission-kit.ts';
import { GroupCommit } from './group-commit.ts';
import { admitPodCreate } from './pod-create.ts';
import type { AdmissionContext } from './cpu-turns.ts';
import type { AdmissionResponse } from './admission-review.ts';
import { AHEAD_IDLE_MS, PLACE_MAX_AGE_MS, REFILL_FACTOR, RENEW_AGE_MS, ReservationPool } from './reservation-pool.ts';

const MARKER = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';
const VERSION = '5d4f8b7c9';

function spread(subsets: Subset[], adaptive = false): WorkloadSpread {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'web-spread', namespace: 'shop', uid: 'ws-uid-1' },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets, ...(adaptive ? { scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } } } : {}) },
  };
}

/** A node of `zone` with room for `pods` pods of the fixture (100m, 64Mi each). */
function node(name: string, zone: string, pods: number): Node {
  return { metadata: { name, labels: { zone } }, spec: {}, status: { allocatable: { cpu: '64', memory: '256Gi', pods: String(pods) } } };
}

/** A bed over the fixture's current Deployment with `replicas`, with or without the reservation pool (as the manager wires it). */
function bed(subsets: Subset[], replicas: number, withPool: boolean, adaptive = false): HandlerBed & { clock: VirtualClock; pool: ReservationPool | undefined } {
  const clock = new VirtualClock();
  const b = handlerBed(clock);
  const chain = deploymentChain('shop', { current: true });
  for (const o of chain) (o['spec'] as { replicas: number }).replicas = replicas;
  b.cluster.objects.push(...chain);
  b.cluster.spreads.push(b.store.put(spread(subsets, adaptive)));
  if (!withPool) return { ...b, clock, pool: undefined };
  let seq = 0;
  // The fake cluster makes admission read the workload by its exact version; the manager's caches answer that from the informer, as this view does.
  const view = new Proxy(b.cluster, {
    get(target, prop) {
      if (prop === 'object') return (ns: string, ref: Parameters<typeof target.object>[1]) => target.object(ns, ref);
      const v: unknown = Reflect.get(target, prop);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const pool = new ReservationPool({ clock, view, newUid: () => `p${++seq}` });
  const commit = new GroupCommit({ clock, store: b.store, random: () => 0, extend: (k, c, v) => pool.extend(k, c, v) });
  pool.attach(commit);
  return { ...b, deps: { ...b.deps, commit, pool }, clock, pool };
}

async function admitOne(b: HandlerBed & { clock: VirtualClock }): Promise<Pod> {
  const req = requestOf(fixtureReview('pod-create.json'));
  const pending = admitPodCreate(req, b.deps);
  await b.clock.quiesce();
  const response = await pending;
  assert.equal(response.allowed, true, JSON.stringify(response.status));
  return applyResponse(req.object, response) as Pod;
}

/** Every status write of the bed takes `ms` of virtual time, as an API server's does; counts the writes started. */
function slowWrites(b: HandlerBed & { clock: VirtualClock }, ms = 50): { started: () => number } {
  const write = b.store.writeStatus.bind(b.store);
  let started = 0;
  b.store.writeStatus = async (...args: Parameters<typeof write>) => {
    started++;
    await b.clock.sleep(ms);
    return write(...args);
  };
  return { started: () => started };
}

const creating = (b: HandlerBed, subset: string): string[] =>
  Object.keys(b.store.get('shop', 'web-spread')?.status?.versionedSubsetStatuses?.[VERSION]?.find((s) => s.name === subset)?.creatingPods ?? {});

describe('places reserved ahead (issue 13)', () => {
  const subsets: Subset[] = [{ name: 'a', maxReplicas: 20 }, { name: 'b', maxReplicas: '25%' }, { name: 'rest' }];

  test('a burst of pods without a name: same subsets and birth costs as one reservation per pod, a handful of writes, every pod with its stored reservation', async () => {
    const plain = bed(subsets, 60, false);
    const pooled = bed(subsets, 60, true);
    const got = { plain: [] as string[], pooled: [] as string[] };
    const uids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const p = await admitOne(plain);
      got.plain.push(`${parseMarker(p.metadata.annotations?.[MARKER])?.subset} ${p.metadata.annotations?.[COST]}`);
      const q = await admitOne(pooled);
      const marker = parseMarker(q.metadata.annotations?.[MARKER]);
      got.pooled.push(`${marker?.subset} ${q.metadata.annotations?.[COST]}`);
      if (marker?.subset !== 'rest') uids.push(marker?.uid ?? '');
    }
    assert.deepEqual(got.pooled, got.plain, 'the pool changes no placement and no cost');
    assert.deepEqual(
      ['a', 'b', 'rest'].map((s) => got.pooled.filter((g) => g.startsWith(`${s} `)).length),
      [20, 15, 25],
    );
    assert.equal(plain.store.writes, 35, 'one write per reservation without the pool');
    assert.ok(pooled.store.writes <= 8, `${pooled.store.writes} writes with the pool`);
    // Every pod answered from the pool holds a stored reservation under its marker uid; no subset holds more than its limit.
    const stored = new Set([...creating(pooled, 'a'), ...creating(pooled, 'b')]);
    for (const uid of uids) assert.ok(stored.has(uid), `reservation ${uid} stored`);
    assert.equal(creating(pooled, 'a').length, 20);
    assert.equal(creating(pooled, 'b').length, 15);
    assert.ok(uids.some((u) => u.startsWith(RESERVED_AHEAD_PREFIX)), 'most pods took places reserved ahead');
    assert.equal(pooled.pool?.size(), 0, 'nothing left over: the workload got all its pods');
  });

  test('places no pod claimed are given back after AHEAD_IDLE_MS, in one write', async () => {
    const b = bed(subsets, 60, true);
    // Pod 1 reserves 1 + 2 ahead; pod 2 claims one, which leaves half: a refill reserves 4 × 2 more; pods 3 and 4 claim.
    for (let i = 0; i < 4; i++) await admitOne(b);
    const held = b.pool?.size() ?? 0;
    assert.equal(held, 1 + REFILL_FACTOR * 2 - 2, 'places are held ahead');
    assert.equal(creating(b, 'a').length, 4 + held);
    const writes = b.store.writes;
    await b.clock.advance(AHEAD_IDLE_MS + 1);
    await b.clock.quiesce();
    assert.equal(b.pool?.size(), 0);
    assert.equal(creating(b, 'a').length, 4, 'only the pods admitted keep their reservations');
    assert.equal(b.store.get('shop', 'web-spread')?.status?.versionedSubsetStatuses?.[VERSION]?.find((s) => s.name === 'a')?.missingReplicas, 16);
    assert.equal(b.store.writes, writes + 1);
  });

  test('a pool that stops gives its unclaimed places back at once (a successor finds the subsets as the pods left them)', async () => {
    const b = bed(subsets, 60, true);
    for (let i = 0; i < 4; i++) await admitOne(b);
    assert.equal(b.pool?.size(), 1 + REFILL_FACTOR * 2 - 2, 'places are held ahead');
    const writes = b.store.writes;
    const stopping = b.pool?.stop();
    await b.clock.quiesce();
    await stopping;
    assert.equal(b.pool?.size(), 0);
    assert.equal(creating(b, 'a').length, 4, 'only the pods admitted keep their reservations, with no clock passing');
    assert.equal(b.store.writes, writes + 1);
    assert.equal(b.pool?.claim('ws-uid-1', VERSION), undefined, 'a stopped pool hands out nothing');
  });

  test('refilled before it runs dry: of a slow-start burst (1, 2, 4, 8, 16 pods at once), only the first pod waits for a write of its own', async () => {
    const b = bed(subsets, 60, true);
    const own: string[] = [];
    for (const batch of [1, 2, 4, 8, 16]) {
      const reqs = Array.from({ length: batch }, () => requestOf(fixtureReview('pod-create.json')));
      const pending = reqs.map((req) => admitPodCreate(req, b.deps).then((r) => applyResponse(req.object, r) as Pod));
      await b.clock.quiesce();
      for (const pod of await Promise.all(pending)) {
        const marker = parseMarker(pod.metadata.annotations?.[MARKER]);
        if (marker !== undefined && marker.subset !== 'rest' && !(marker.uid ?? '').startsWith(RESERVED_AHEAD_PREFIX)) own.push(marker.uid ?? '');
      }
    }
    assert.equal(own.length, 1, `pods that reserved for themselves: ${own.join(', ')}`);
    assert.equal(creating(b, 'a').length, 20, 'the first subset is full, never over');
  });

  describe('Adaptive (the simulation schedule, D3)', () => {
    const zone = (z: string) => ({ matchExpressions: [{ key: 'zone', operator: 'In', values: [z] }] });
    const adaptiveSubsets: Subset[] = [{ name: 'own', requiredNodeSelectorTerm: zone('a'), maxReplicas: 12 }, { name: 'elastic', requiredNodeSelectorTerm: zone('b') }];

    async function burst(b: HandlerBed & { clock: VirtualClock }, sizes: number[]): Promise<{ subsets: string[]; own: string[] }> {
      const out = { subsets: [] as string[], own: [] as string[] };
      for (const size of sizes) {
        const reqs = Array.from({ length: size }, () => requestOf(fixtureReview('pod-create.json')));
        const pending = reqs.map((req) => admitPodCreate(req, b.deps).then((r) => applyResponse(req.object, r) as Pod));
        await b.clock.quiesce();
        for (const pod of await Promise.all(pending)) {
          const marker = parseMarker(pod.metadata.annotations?.[MARKER]);
          out.subsets.push(marker?.subset ?? '-');
          if (marker?.subset === 'own' && !(marker.uid ?? '').startsWith(RESERVED_AHEAD_PREFIX)) out.own.push(marker.uid ?? '');
        }
      }
      return out;
    }

    test('places are reserved ahead with the request pod: same subsets as without the pool, only the first pod waits for a write', async () => {
      const plain = bed(adaptiveSubsets, 20, false, true);
      const pooled = bed(adaptiveSubsets, 20, true, true);
      for (const b of [plain, pooled]) b.cluster.nodeList.push(node('a1', 'a', 110), node('b1', 'b', 110));
      const without = await burst(plain, [1, 2, 4, 8, 5]);
      const withPool = await burst(pooled, [1, 2, 4, 8, 5]);
      assert.deepEqual(withPool.subsets, without.subsets);
      assert.deepEqual(['own', 'elastic'].map((s) => withPool.subsets.filter((x) => x === s).length), [12, 8]);
      assert.equal(withPool.own.length, 1, `pods that reserved for themselves: ${withPool.own.join(', ')}`);
      assert.ok(pooled.store.writes < plain.store.writes / 2, `${pooled.store.writes} writes with the pool, ${plain.store.writes} without`);
      assert.equal(creating(pooled, 'own').length, 12, 'never over the limit');
    });

    test('a subset whose nodes cannot host the pod gets no place ahead', async () => {
      const b = bed(adaptiveSubsets, 20, true, true);
      // Zone a has room for no pod: the rules send every pod to elastic, so nothing is reserved ahead there.
      b.cluster.nodeList.push(node('a1', 'a', 0), node('b1', 'b', 110));
      const got = await burst(b, [1, 2, 4]);
      assert.deepEqual(got.subsets, Array(7).fill('elastic'));
      assert.equal(b.pool?.size(), 0);
      assert.equal(creating(b, 'own').length, 0);
    });

    test('a claim whose subset can no longer host the pod is refused: the pod is decided afresh and the whole line goes back', async () => {
      const b = bed(adaptiveSubsets, 20, true, true);
      const a1 = node('a1', 'a', 110);
      b.cluster.nodeList.push(a1, node('b1', 'b', 110));
      await burst(b, [1, 2]);
      assert.ok((b.pool?.size() ?? 0) > 0, 'places are held ahead in own');
      // Zone a's node is cordoned.
      a1.spec = { unschedulable: true };
      const got = await burst(b, [1]);
      assert.deepEqual(got.subsets, ['elastic']);
      assert.equal(b.pool?.size(), 0, 'every place ahead went back');
      assert.equal(creating(b, 'own').length, 3, 'only the three pods admitted there keep their reservations');
    });
  });

  test('two replicas, every subset limited: a pod that finds only places the other replica reserved ahead is retried (500), not admitted without a subset, and placed once they are given back', async () => {
    const limited: Subset[] = [{ name: 'a', maxReplicas: '20%' }, { name: 'b', maxReplicas: '20%' }, { name: 'c', maxReplicas: '60%' }];
    const one = bed(limited, 10, true);
    // A second manager replica: its own pool and group commit over the same API server (status store, cluster).
    let seq = 0;
    const pool = new ReservationPool({ clock: one.clock, view: one.cluster, newUid: () => `q${++seq}` });
    const commit = new GroupCommit({ clock: one.clock, store: one.store, random: () => 0, extend: (k, c, v) => pool.extend(k, c, v) });
    pool.attach(commit);
    const two = { ...one, deps: { ...one.deps, commit, pool, newUid: () => `two-${++seq}` } };
    const review = async (b: typeof one) => {
      const req = requestOf(fixtureReview('pod-create.json'));
      const pending = admitPodCreate(req, b.deps);
      await b.clock.quiesce();
      const response = await pending;
      return { response, pod: response.allowed ? (applyResponse(req.object, response) as Pod) : undefined };
    };
    const subsetOf = (p: Pod | undefined) => parseMarker(p?.metadata.annotations?.[MARKER])?.subset ?? 'none';
    // Replica one admits the first pods of the burst and reserves places ahead for the next ones.
    const placed = [subsetOf((await review(one)).pod), subsetOf((await review(one)).pod)];
    const held = one.pool?.size() ?? 0;
    assert.ok(held > 0, 'replica one holds places ahead');
    // The rest of the burst reaches replica two.
    const retried: string[] = [];
    for (let i = placed.length; i < 10; i++) {
      const { response, pod } = await review(two);
      if (response.allowed) placed.push(subsetOf(pod));
      else retried.push(response.status?.message ?? '');
    }
    assert.equal(retried.length, held, 'exactly the pods whose places replica one holds are retried');
    assert.equal(one.noSubset.length, 0, 'no pod was admitted without a subset');
    assert.match(retried[0] ?? '', /has room outside \d+ place\(s\) another manager replica reserved ahead for this burst; retry/);
    // Nobody claims them: replica one gives them back, and the retries are placed.
    await one.clock.advance(AHEAD_IDLE_MS + 1);
    await one.clock.quiesce();
    for (let i = 0; i < retried.length; i++) {
      const { response, pod } = await review(two);
      assert.equal(response.allowed, true, response.status?.message);
      placed.push(subsetOf(pod));
    }
    assert.deepEqual(['a', 'b', 'c', 'none'].map((s) => placed.filter((p) => p === s).length), [2, 2, 6, 0]);
  });

  test('one replica: a pod that finds every subset full is admitted without a subset, its own places ahead notwithstanding', async () => {
    const b = bed([{ name: 'a', maxReplicas: 2 }, { name: 'b', maxReplicas: 2 }], 10, true);
    const got: string[] = [];
    for (let i = 0; i < 5; i++) {
      const req = requestOf(fixtureReview('pod-create.json'));
      const pending = admitPodCreate(req, b.deps);
      await b.clock.quiesce();
      const response = await pending;
      assert.equal(response.allowed, true, response.status?.message);
      got.push(parseMarker((applyResponse(req.object, response) as Pod).metadata.annotations?.[MARKER])?.subset ?? 'none');
    }
    assert.deepEqual(got, ['a', 'a', 'b', 'b', 'none']);
    assert.equal(b.noSubset.length, 1);
  });

  test('pods that find the line empty while a refill is being written wait for its places: none is sent past a limited subset whose room that refill holds for them', async () => {
    const b = bed([{ name: 'a', maxReplicas: 2 }, { name: 'b', maxReplicas: 2 }, { name: 'rest' }], 20, true);
    // Every status write takes 50 ms: pods arrive while one is in flight.
    const writes = slowWrites(b);
    const subsetsOf = async (pending: Promise<Pod>[]): Promise<string[]> => (await Promise.all(pending)).map((p) => parseMarker(p.metadata.annotations?.[MARKER])?.subset ?? 'none');
    const start = (n: number): Promise<Pod>[] =>
      Array.from({ length: n }, () => {
        const req = requestOf(fixtureReview('pod-create.json'));
        return admitPodCreate(req, b.deps).then((r) => applyResponse(req.object, r) as Pod);
      });
    // Pod 1 reserves its place in a and two ahead (a, b).
    const first = start(1);
    await b.clock.advance(50);
    const got = await subsetsOf(first);
    // Pods 2 and 3 take them at once; the first claim leaves half, so a refill reserves b's last place (50 ms).
    const second = start(2);
    await b.clock.quiesce();
    got.push(...(await subsetsOf(second)));
    assert.deepEqual([writes.started(), b.store.writes], [2, 1], 'the refill is being written');
    // The next batch comes while it is: the first of them is the pod that place was reserved for.
    const third = start(4);
    await b.clock.quiesce();
    await b.clock.settle();
    got.push(...(await subsetsOf(third)));
    assert.deepEqual(got, ['a', 'a', 'b', 'b', 'rest', 'rest', 'rest']);
    await b.clock.advance(AHEAD_IDLE_MS + 1);
    await b.clock.quiesce();
    assert.deepEqual([creating(b, 'a').length, creating(b, 'b').length], [2, 2], 'every reservation belongs to a pod');
  });

  test('a pod waiting for a refill whose caller gives up meanwhile takes no place', async () => {
    const b = bed([{ name: 'a', maxReplicas: 2 }, { name: 'b', maxReplicas: 2 }, { name: 'rest' }], 20, true);
    slowWrites(b);
    const admit = (context?: AdmissionContext): Promise<AdmissionResponse> => admitPodCreate(requestOf(fixtureReview('pod-create.json')), b.deps, context);
    const first = admit();
    await b.clock.advance(50);
    await first;
    // Pods 2 and 3 take the two places ahead; the refill (b's last place) is being written.
    const second = [admit(), admit()];
    await b.clock.quiesce();
    await Promise.all(second);
    const signal = { aborted: false };
    const waiting = admit({ signal, turn: () => Promise.resolve() });
    await b.clock.quiesce();
    signal.aborted = true;
    await b.clock.advance(60);
    const response = await waiting;
    assert.equal(response.allowed, false);
    assert.match(response.status?.message ?? '', /gave up/);
    assert.equal(b.pool?.size(), 1, "the refill's place is still in the line");
  });

  test('a pod that comes while unclaimed places wait to be given back behind another write is decided after they are: their room is not taken from it', async () => {
    const b = bed([{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 1 }, { name: 'rest' }], 20, true);
    slowWrites(b);
    const start = (): Promise<Pod> => {
      const req = requestOf(fixtureReview('pod-create.json'));
      return admitPodCreate(req, b.deps).then((r) => applyResponse(req.object, r) as Pod);
    };
    const subsetOf = (p: Pod): string => parseMarker(p.metadata.annotations?.[MARKER])?.subset ?? 'none';
    // Pod 1 takes a's one place and reserves b's ahead.
    const first = start();
    await b.clock.advance(50);
    assert.equal(subsetOf(await first), 'a');
    assert.equal(b.pool?.size(), 1);
    // Another write of the same WorkloadSpread (a deletion booked, say) is in flight when the idle place goes back.
    const t0 = b.clock.now();
    await b.clock.advanceTo(t0 + AHEAD_IDLE_MS - 10);
    const other = b.deps.commit.submit({ uid: 'ws-uid-1', namespace: 'shop', name: 'web-spread' }, (ws) => ({ value: null, ...(ws?.status === undefined ? {} : { status: ws.status }) }));
    await b.clock.advanceTo(t0 + AHEAD_IDLE_MS + 1);
    assert.equal(b.pool?.size(), 0, 'the place left the line: its give-back waits behind that write');
    const second = start();
    await b.clock.settle();
    await other;
    assert.equal(subsetOf(await second), 'b', "b's room, given back, goes to the next pod");
  });

  test('a pool knows the places it reserved, claimed or not, by their names, however long they stay', async () => {
    const b = bed(subsets, 60, true);
    const first = parseMarker((await admitOne(b)).metadata.annotations?.[MARKER])?.uid ?? '';
    const claimed = parseMarker((await admitOne(b)).metadata.annotations?.[MARKER])?.uid ?? '';
    assert.ok(claimed.startsWith(RESERVED_AHEAD_PREFIX), 'the second pod claimed a place reserved ahead');
    assert.equal(b.pool?.reserved(claimed), true, 'a claimed place is still its own');
    assert.equal(b.pool?.reserved('ahead-someone-else'), false);
    assert.equal(b.pool?.reserved(first), false, 'a pod\'s own reservation is not a place reserved ahead');
    // Another pool (another replica, or this process after a restart) names its places apart, even from the same source of uids.
    let seq = 0;
    const other = new ReservationPool({ clock: b.clock, view: b.cluster, newUid: () => `p${++seq}` });
    assert.equal(other.reserved(claimed), false, 'another pool does not take this one\'s places for its own');
    await b.clock.advance(61_000);
    await b.clock.quiesce();
    assert.equal(b.pool?.reserved(claimed), true, 'nothing to forget: the name says it');
    // The names are short: the pool's name and a counter, not a whole UUID per place.
    assert.ok(claimed.length <= RESERVED_AHEAD_PREFIX.length + 24, claimed);
  });

  test('a slow trickle (a pod every 1.9 s) never takes a place older than PLACE_MAX_AGE_MS, which the controller keeps 30 s: older places go back, and the subset is never over its limit', async () => {
    const b = bed([{ name: 'a', maxReplicas: 150 }, { name: 'rest' }], 200, true);
    const ages: number[] = [];
    let aheadClaims = 0;
    for (let i = 0; i < 60; i++) {
      const now = b.clock.now();
      const pod = await admitOne(b);
      const marker = parseMarker(pod.metadata.annotations?.[MARKER]);
      assert.equal(marker?.subset, 'a');
      const stored = b.store.get('shop', 'web-spread')?.status?.versionedSubsetStatuses?.[VERSION]?.find((s) => s.name === 'a')?.creatingPods?.[marker?.uid ?? ''];
      assert.ok(stored !== undefined, `pod ${i}: its place ${marker?.uid} is stored`);
      ages.push(now - Date.parse(stored));
      if ((marker?.uid ?? '').startsWith(RESERVED_AHEAD_PREFIX)) aheadClaims++;
      await b.clock.advance(1_900);
      await b.clock.quiesce();
    }
    assert.ok(Math.max(...ages) <= PLACE_MAX_AGE_MS, `ages of the places claimed (ms): ${ages.join(' ')}`);
    assert.ok(PLACE_MAX_AGE_MS + 1_000 + 5_000 <= CREATE_POD_TIMEOUT_MS, 'a margin for the stored time in whole seconds and for the pod to be seen');
    assert.ok(aheadClaims >= 40, `${aheadClaims} of 60 pods took a place reserved ahead`);
    assert.ok(b.store.writes <= 15, `${b.store.writes} status writes for 60 pods`);
    // Stale places went back: the subset holds the 60 pods' reservations and the places still ahead, nothing more.
    assert.equal(creating(b, 'a').length, 60 + (b.pool?.size() ?? 0));
  });

  test('a slow trickle beside a controller that drops reservations 30 s old: the subset is never over its limit', async () => {
    const b = bed([{ name: 'a', maxReplicas: 30 }, { name: 'rest' }], 200, true);
    const inA: string[] = [];
    // The controller's part, as core/subset-status.ts does it: a pod it sees turns its place into a replica;
    // a place stamped more than 30 s ago whose pod it has not seen is dropped, and its room is free again.
    const controllerSync = () => {
      const ws = b.store.get('shop', 'web-spread');
      const statuses = ws?.status?.versionedSubsetStatuses?.[VERSION];
      if (ws?.status === undefined || statuses === undefined) return;
      const now = b.clock.now();
      const next = statuses.map((s) => {
        const creatingPods = { ...(s.creatingPods ?? {}) };
        let { replicas, missingReplicas } = s;
        for (const [id, at] of Object.entries(creatingPods)) {
          if (inA.includes(id)) {
            delete creatingPods[id];
            replicas++;
          } else if (Date.parse(at) + CREATE_POD_TIMEOUT_MS < now) {
            delete creatingPods[id];
            if (missingReplicas >= 0) missingReplicas++;
          }
        }
        return { ...s, replicas, missingReplicas, creatingPods };
      });
      b.store.put({ ...ws, status: { ...ws.status, versionedSubsetStatuses: { ...ws.status.versionedSubsetStatuses, [VERSION]: next } } });
    };
    for (let i = 0; i < 60; i++) {
      const marker = parseMarker((await admitOne(b)).metadata.annotations?.[MARKER]);
      if (marker?.subset === 'a') inA.push(marker.uid ?? '');
      await b.clock.advance(1_900);
      await b.clock.quiesce();
      controllerSync();
    }
    assert.equal(inA.length, 30, `${inA.length} pods in subset a (max 30)`);
  });

  test('a write the pool makes anyway stamps the line\'s older places again (the controller keeps them 30 s from the new stamp)', async () => {
    const b = bed([{ name: 'a', maxReplicas: 150 }, { name: 'rest' }], 200, true);
    const claimed = new Set<string>();
    // A pod every 1.9 s (no idle give-back): pod 2's claim refills 4 × 2 places; the seventh pod's claim leaves
    // half of them and starts the next refill while the four places left are 9.5 s old, so that write stamps them again.
    assert.equal(REFILL_FACTOR, 4, 'the pod count below follows the refill factor');
    for (let i = 0; i < 7; i++) {
      if (i > 0) {
        await b.clock.advance(1_900);
        await b.clock.quiesce();
      }
      claimed.add(parseMarker((await admitOne(b)).metadata.annotations?.[MARKER])?.uid ?? '');
    }
    const last = formatTime(b.clock.now());
    const unclaimed = Object.entries(b.store.get('shop', 'web-spread')?.status?.versionedSubsetStatuses?.[VERSION]?.find((s) => s.name === 'a')?.creatingPods ?? {})
      .filter(([id]) => id.startsWith(RESERVED_AHEAD_PREFIX) && !claimed.has(id));
    assert.equal(unclaimed.length, b.pool?.size());
    assert.ok(unclaimed.length >= 4, `${unclaimed.length} places in the line`);
    assert.deepEqual(unclaimed.filter(([, at]) => at !== last), [], `every place in the line carries the refill's stamp ${last}`);
    assert.ok(RENEW_AGE_MS <= 5_700);
  });

  test('never more places than the workload still lacks', async () => {
    const b = bed([{ name: 'a', maxReplicas: 100 }, { name: 'rest' }], 4, true);
    for (let i = 0; i < 4; i++) await admitOne(b);
    assert.equal(creating(b, 'a').length, 4, 'four pods, four reservations: nothing reserved past the replicas');
    assert.equal(b.pool?.size(), 0);
  });
});
