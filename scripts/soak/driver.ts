/**
 * The fault soak (issue 14, deliverable 8): two manager replicas behind one
 * webhook URL on the embedded cluster (virtual clock), two WorkloadSpreads
 * with limited subsets, and a random schedule of faults — the leader killed
 * holding its lease (cut off mid-request, SIGKILL-equivalent) and replaced,
 * a follower killed, every watch cut, the watch history compacted (410s),
 * status writes failing (500, 409, 429, 503) or answered late (up to 12 s,
 * past the 10 s webhook timeout), the webhook stalled until the API server
 * times out, bursts of scale-ups and scale-downs, pods deleted, nodes lost
 * and returned — while invariants are checked after every step:
 *
 * - never a subset above its limit (active pods carrying that subset's
 *   marker, read from the API server, against the subset's maxReplicas);
 * - no process crash (no uncaught exception or unhandled rejection in this
 *   process, no manager failing to start);
 * and once the faults stop (faults cleared, nodes back, two replicas,
 * final replica counts set):
 * - every pod placed (the marker of its workload's WorkloadSpread);
 * - the status converges to the pods within `convergenceBoundMs` of virtual
 *   time: per subset `replicas` equals the pods counted, `missingReplicas`
 *   the quota left, no reservation or booked deletion left over.
 *
 * The fault phase runs for a budget of wall-clock time (`faultPhaseMs`);
 * virtual time moves as far as the steps take it. Deterministic per `seed`
 * (given the same interleaving). Not used by production code: `npm run soak`
 * (scripts/soak.ts) prints the report; a short run is in `npm test`. With
 * `SOAK_DEBUG=1` it prints every 5 s what the virtual clock is waiting for.
 * Start at `runSoak`.
 */
import { realClock } from '../../src/clock/clock.ts';
import { QuiescenceTimeout } from '../../src/clock/virtual-clock.ts';
import { describeError } from '../../src/client/errors.ts';
import { BUILTIN } from '../../src/client/resources.ts';
import type { WorkloadSpread } from '../../src/api/workloadspread.ts';
import { WORKLOADSPREAD_REF } from '../../src/kube/refs.ts';
import type { Pod } from '../../src/k8s/types.ts';
import { onClock, startForwarder, startManagerCluster, startTestManager, stopOnClock, type Forwarder, type ManagerCluster, type TestManager } from '../../src/testing/manager-bed.ts';
import { deployment, workloadSpreadObject, ZONE_LABEL, ZONED_NODES, zoneTerm } from '../../src/testing/webhook-bed.ts';

export interface SoakOptions {
  /** Wall-clock budget of the fault phase, in ms. */
  faultPhaseMs: number;
  /** Seed of the fault schedule (default: from the clock; printed). */
  seed?: number;
  /** Virtual time the status may take to converge once the faults stop (default 3 min). */
  convergenceBoundMs?: number;
  /** Where progress lines go (default nowhere). */
  print?: (line: string) => void;
}

export interface SoakReport {
  seed: number;
  wallMs: number;
  virtualMs: number;
  steps: number;
  /** Faults injected, by kind. */
  injected: Record<string, number>;
  /** Invariant samples taken (each: every subset of every WorkloadSpread counted). */
  samples: number;
  /** Invariant violations, each a sentence; empty when the soak held. */
  violations: string[];
  /** Highest active pod count seen per `namespace/subset`, with its limit. */
  highest: Record<string, { pods: number; limit: number | null }>;
  /** Virtual ms from the end of the faults until the status matched the pods (undefined: did not within the bound). */
  convergedAfterMs: number | undefined;
  /** Leader changes seen, manager replicas started, and lost-leadership exits (a real process would be restarted). */
  leaderChanges: number;
  managersStarted: number;
  lostLeadership: number;
  /** Error-level log lines of the managers (expected under injected faults; not a violation). */
  managerErrorLines: number;
  /** Pods created by the workload controllers, as their FailedCreate events say how many were refused. */
  failedCreates: number;
  /** For each violation of a limit, what the cluster and the managers looked like when it was first seen. */
  diagnostics: string[];
}

interface Spread {
  namespace: string;
  workload: string;
  limits: Record<string, number | null>;
  /** Replica counts the bursts stay within. */
  maxReplicas: number;
  finalReplicas: number;
}

/** Limits large enough that bursts (the ReplicaSet's slow-start batches of 1, 2, 4, 8, 16) fill them several pods at a time. */
const SPREADS: Spread[] = [
  { namespace: 'soak-web', workload: 'web', limits: { a: 8, b: 6, c: null }, maxReplicas: 32, finalReplicas: 20 },
  { namespace: 'soak-api', workload: 'api', limits: { a: 5, b: 4, c: null }, maxReplicas: 20, finalReplicas: 12 },
];

const LEASE = 'soak';

/** mulberry32: a small seeded PRNG, so a failing schedule can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MARKER = 'apps.kruise.io/matched-workloadspread';

function markerOf(pod: Pod): { name: string; subset: string } | undefined {
  const raw = pod.metadata.annotations?.[MARKER];
  if (raw === undefined) return undefined;
  try {
    const m = JSON.parse(raw) as { name?: unknown; subset?: unknown };
    return { name: String(m.name ?? ''), subset: String(m.subset ?? '') };
  } catch {
    return undefined;
  }
}

function isActive(p: Pod): boolean {
  return p.metadata.deletionTimestamp === undefined && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
}

function formatMs(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : `${m}m${String(s % 60).padStart(2, '0')}s`;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const wall = realClock();
  const started = wall.now();
  const seed = options.seed ?? started % 1_000_000;
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const between = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
  const print = options.print ?? (() => {});
  const violations: string[] = [];
  const injected: Record<string, number> = {};
  const highest: SoakReport['highest'] = {};
  const count = (kind: string) => (injected[kind] = (injected[kind] ?? 0) + 1);
  const diagnostics: string[] = [];
  /** The last faults applied, with their virtual time (for diagnostics). */
  const recent: string[] = [];

  const onCrash = (err: unknown) => violations.push(`process crash: ${describeError(err)}`);
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);

  let env: ManagerCluster | undefined;
  let forwarder: Forwarder | undefined;
  const managers: TestManager[] = [];
  const pending: TestManager[] = [];
  const stopping: Promise<void>[] = [];
  const retired: TestManager[] = [];
  let managersStarted = 0;
  let lostLeadership = 0;
  let leaderChanges = 0;
  let lastLeader: string | undefined;
  let samples = 0;
  let steps = 0;
  let convergedAfterMs: number | undefined;
  const lostNodes: string[] = [];
  /** Subsets seen above their limit: the first sighting, how many samples, the most pods. */
  const overLimit = new Map<string, { first: string; samples: number; most: number }>();
  const replicas = new Map<string, number>();

  try {
    env = await startManagerCluster({ budgetCrd: true });
    const e = env;
    const fw = (forwarder = await startForwarder());
    const client = e.cluster.client;
    const virtualStart = e.clock.now();
    const dbg = process.env['SOAK_DEBUG'] === '1' ? realClock().setInterval(() => print(`  [debug] +${e.clock.now() - virtualStart} busy: ${e.clock.busyLabels().join(' | ')}`), 5_000, { name: 'dbg' }) : undefined;

    const startReplica = async (): Promise<void> => {
      const name = `soak-${++managersStarted}`;
      const m = await startTestManager(e, { name, url: fw.url, leaderElection: { leaseName: LEASE, releaseOnStop: false }, waitReady: false });
      void m.manager.done.then((d) => {
        if (d.reason === 'failed' && !retired.includes(m)) violations.push(`manager ${name} failed: ${d.error ?? ''}`);
        if (d.reason === 'lost-leadership' && !retired.includes(m)) {
          lostLeadership++;
          retire(m, 'lost its lease');
        }
      });
      pending.push(m);
    };
    /** Takes a replica out: its webhook leaves the rotation with its connections cut, it stops without giving the lease up. */
    const retire = (m: TestManager, why: string): void => {
      if (retired.includes(m)) return;
      retired.push(m);
      const i = managers.indexOf(m);
      if (i >= 0) managers.splice(i, 1);
      const j = pending.indexOf(m);
      if (j >= 0) pending.splice(j, 1);
      const url = m.manager.endpoints().webhook;
      if (url !== undefined) fw.drop(url);
      stopping.push(m.manager.stop().catch((err: unknown) => void violations.push(`manager ${m.name} failed to stop: ${describeError(err)}`)));
      print(`  ${m.name} ${why}`);
    };
    /** Pending replicas that became ready join the rotation; keeps two replicas. */
    const tend = async (): Promise<void> => {
      for (const m of [...pending]) {
        if (!m.manager.isReady()) continue;
        pending.splice(pending.indexOf(m), 1);
        managers.push(m);
      }
      fw.setBackends(managers.map((m) => m.manager.endpoints().webhook ?? '').filter((u) => u !== ''));
      while (managers.length + pending.length < 2) await startReplica();
      const leader = managers.find((m) => m.manager.isLeader())?.name;
      if (leader !== undefined && leader !== lastLeader) {
        if (lastLeader !== undefined) leaderChanges++;
        lastLeader = leader;
      }
    };

    /** Counts every subset's active pods; records a violation for a subset above its limit. */
    const sample = async (final = false): Promise<{ unplaced: number; bySubset: Map<string, number> }> => {
      samples++;
      let unplaced = 0;
      const bySubset = new Map<string, number>();
      for (const s of SPREADS) {
        const pods = (await client.list<Pod>(BUILTIN.pods, { namespace: s.namespace })).items.filter(isActive);
        const counts: Record<string, number> = {};
        for (const p of pods) {
          const m = markerOf(p);
          if (m === undefined || m.name !== 'spread') {
            unplaced++;
            continue;
          }
          counts[m.subset] = (counts[m.subset] ?? 0) + 1;
        }
        for (const [subset, limit] of Object.entries(s.limits)) {
          const n = counts[subset] ?? 0;
          bySubset.set(`${s.namespace}/${subset}`, n);
          const key = `${s.namespace}/${subset}`;
          const seen = highest[key];
          if (seen === undefined || n > seen.pods) highest[key] = { pods: n, limit };
          if (limit !== null && n > limit) {
            const seenBefore = overLimit.get(key);
            if (seenBefore === undefined) {
              overLimit.set(key, { first: `${n} active pods above its limit ${limit}, first at +${formatMs(e.clock.now() - virtualStart)}${final ? ' (after the faults)' : ''}`, samples: 1, most: n });
              diagnostics.push(await diagnose(s.namespace, subset, pods));
            }
            else {
              seenBefore.samples++;
              seenBefore.most = Math.max(seenBefore.most, n);
            }
          }
        }
      }
      return { unplaced, bySubset };
    };

    /** What the cluster and the managers looked like when a subset was first seen above its limit. */
    const diagnose = async (namespace: string, subset: string, pods: Pod[]): Promise<string> => {
      const lines = [`== ${namespace}/${subset} above its limit at +${formatMs(e.clock.now() - virtualStart)}`, `recent faults: ${recent.join(', ')}`];
      for (const p of pods.filter((x) => markerOf(x)?.subset === subset)) {
        lines.push(`pod ${p.metadata.name ?? ''} uid=${p.metadata.uid ?? ''} created=${p.metadata.creationTimestamp ?? ''} node=${p.spec?.nodeName ?? ''} phase=${p.status?.phase ?? ''} marker=${p.metadata.annotations?.[MARKER] ?? ''} cost=${p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'] ?? ''}`);
      }
      try {
        const ws = await client.get<WorkloadSpread>(WORKLOADSPREAD_REF, 'spread', { namespace });
        lines.push(`status rv=${ws.metadata?.resourceVersion ?? ''}: ${JSON.stringify(ws.status)}`);
      } catch (err) {
        lines.push(`status: ${describeError(err)}`);
      }
      for (const m of [...managers, ...pending, ...retired]) {
        const mine = m.log.lines.filter((l) => JSON.stringify(l.fields).includes(namespace)).slice(-60);
        for (const l of mine) lines.push(`[${m.name}] ${l.level} ${l.message} ${JSON.stringify(l.fields)}`);
      }
      return lines.join('\n');
    };

    /** Moves virtual time in 1-2 s chunks, sampling after each. */
    const run = async (ms: number): Promise<void> => {
      let left = ms;
      while (left > 0) {
        const chunk = Math.min(left, between(1_000, 2_000));
        await e.clock.advance(chunk);
        left -= chunk;
        await tend();
        await sample();
      }
    };

    const scaleTo = async (s: Spread, n: number): Promise<void> => {
      replicas.set(s.namespace, n);
      await client.patch(BUILTIN.deployments, s.workload, { type: 'merge', body: { spec: { replicas: n } } }, { namespace: s.namespace });
    };

    // ---- setup ----
    await startReplica();
    await tend();
    for (;;) {
      await e.clock.advance(500);
      await tend();
      if (managers.length >= 1 && managers.some((m) => m.manager.isLeader())) break;
    }
    for (const s of SPREADS) {
      await client.create(BUILTIN.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: s.namespace } });
      // Through the validating webhook, which may need virtual time (a write that waits on it must let the clock run).
      await onClock(
        e,
        client.create(
          WORKLOADSPREAD_REF,
          workloadSpreadObject(s.namespace, 'spread', {
            targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: s.workload },
            subsets: Object.entries(s.limits).map(([zone, limit]) => ({ name: zone, requiredNodeSelectorTerm: zoneTerm(zone), ...(limit === null ? {} : { maxReplicas: limit }) })),
          }),
        ),
      );
    }
    await e.clock.quiesce();
    for (const s of SPREADS) {
      await client.create(BUILTIN.deployments, deployment(s.namespace, s.workload, Math.floor(s.finalReplicas / 2)));
      replicas.set(s.namespace, Math.floor(s.finalReplicas / 2));
    }
    await run(5_000);
    print(`soak: seed ${seed}; fault phase ${formatMs(options.faultPhaseMs)} of wall-clock time`);

    // ---- faults ----
    /** `apply` resolves false when the fault did not apply right now (nothing to kill, no node to return): not counted. */
    type Fault = { kind: string; weight: number; apply: () => Promise<boolean | void> };
    const control = e.cluster.apiServer.control;
    const statusRef = { group: 'apps.kruise.io', resource: 'workloadspreads', subresource: 'status', verb: 'update' as const };
    const faults: Fault[] = [
      {
        kind: 'leader-kill',
        weight: 2,
        apply: async () => {
          const leader = managers.find((m) => m.manager.isLeader());
          if (leader === undefined) return false;
          retire(leader, 'killed while leading (lease kept)');
        },
      },
      {
        kind: 'follower-kill',
        weight: 1,
        apply: async () => {
          const follower = managers.find((m) => !m.manager.isLeader());
          if (follower === undefined) return false;
          retire(follower, 'killed (follower)');
        },
      },
      { kind: 'watch-cut', weight: 3, apply: async () => void control.cutWatches() },
      {
        kind: 'compact-410',
        weight: 2,
        apply: async () => {
          control.compact();
          control.cutWatches();
        },
      },
      {
        kind: 'status-errors',
        weight: 3,
        apply: async () => {
          const status = pick([500, 409, 429, 503]);
          control.injectFault({ ...statusRef, status, times: between(1, 20), ...(status === 429 ? { retryAfterSeconds: 1 } : {}) });
        },
      },
      { kind: 'slow-status', weight: 2, apply: async () => void control.injectFault({ ...statusRef, delayMs: between(1_000, 12_000), times: between(1, 8) }) },
      {
        // Established webhook connections hang (the API server times out after 10 s); new ones are reset.
        kind: 'webhook-stall',
        weight: 2,
        apply: async () => {
          fw.stall(true);
          await run(between(4_000, 14_000));
          fw.stall(false);
        },
      },
      {
        kind: 'burst-create',
        weight: 4,
        apply: async () => {
          const s = pick(SPREADS);
          await scaleTo(s, Math.min(s.maxReplicas, (replicas.get(s.namespace) ?? 0) + between(4, 24)));
        },
      },
      {
        kind: 'burst-delete',
        weight: 3,
        apply: async () => {
          const s = pick(SPREADS);
          // Now and then down to (almost) nothing, so the next burst fills the limited subsets again.
          const target = random() < 0.3 ? between(0, 2) : (replicas.get(s.namespace) ?? 0) - between(3, 12);
          await scaleTo(s, Math.max(0, target));
        },
      },
      {
        kind: 'pod-delete',
        weight: 3,
        apply: async () => {
          const s = pick(SPREADS);
          const pods = (await client.list<Pod>(BUILTIN.pods, { namespace: s.namespace })).items.filter(isActive);
          for (let i = between(1, 4); i > 0 && pods.length > 0; i--) {
            const [p] = pods.splice(Math.floor(random() * pods.length), 1);
            // A pod DELETE goes through the validating webhook (group commit, back-offs on the clock): let time run.
            await onClock(e, client.delete(BUILTIN.pods, p?.metadata.name ?? '', { namespace: s.namespace }).catch(() => {}));
          }
        },
      },
      {
        kind: 'node-loss',
        weight: 2,
        apply: async () => {
          if (lostNodes.length >= 2) return false;
          const name = pick(e.cluster.nodeNames());
          const r = await e.cluster.removeNode(name);
          if (!r.ok) return false;
          lostNodes.push(name);
          return true;
        },
      },
      {
        kind: 'node-return',
        weight: 1,
        apply: async () => {
          const name = lostNodes.shift();
          if (name === undefined) return false;
          await returnNode(name);
          return true;
        },
      },
    ];
    const returnNode = async (name: string): Promise<void> => {
      const spec = ZONED_NODES.find((n) => n.name === name);
      const r = await e.cluster.addNodes([spec ?? { name, labels: { [ZONE_LABEL]: name.slice(0, 1) } }]);
      if (!r.ok) violations.push(`node ${name} could not be added back: ${r.error}`);
    };
    const totalWeight = faults.reduce((n, f) => n + f.weight, 0);
    const chooseFault = (): Fault => {
      let r = random() * totalWeight;
      for (const f of faults) {
        r -= f.weight;
        if (r < 0) return f;
      }
      return faults[faults.length - 1] as Fault;
    };

    const phaseEnd = wall.now() + options.faultPhaseMs;
    let lastProgress = wall.now();
    while (wall.now() < phaseEnd) {
      const fault = chooseFault();
      try {
        if ((await fault.apply()) === false) continue;
        count(fault.kind);
        steps++;
        recent.push(`+${formatMs(e.clock.now() - virtualStart)} ${fault.kind}`);
        if (recent.length > 25) recent.shift();
        await run(between(1_000, 10_000));
      } catch (err) {
        violations.push(`the ${fault.kind} step failed: ${describeError(err)}`);
        // A harness that cannot move time any more (the virtual clock waited in vain) cannot go on.
        if (err instanceof QuiescenceTimeout) break;
      }
      if (wall.now() - lastProgress > 30_000) {
        lastProgress = wall.now();
        print(`  ${steps} steps, +${formatMs(e.clock.now() - virtualStart)} virtual, ${violations.length} violation(s)`);
      }
    }

    // ---- faults stop: converge ----
    control.clearFaults();
    fw.stall(false);
    const bound = options.convergenceBoundMs ?? 180_000;
    try {
      while (lostNodes.length > 0) await returnNode(lostNodes.shift() as string);
      for (const s of SPREADS) await scaleTo(s, s.finalReplicas);
      const faultsEnded = e.clock.now();
      let lastProblem = '';
      while (e.clock.now() - faultsEnded <= bound) {
        await run(1_000);
        lastProblem = await convergenceProblem(client, replicas);
        if (lastProblem === '' && managers.length === 2) {
          convergedAfterMs = e.clock.now() - faultsEnded;
          break;
        }
      }
      const end = await sample(true);
      if (convergedAfterMs === undefined) violations.push(`the status did not converge within ${formatMs(bound)} of virtual time after the faults stopped: ${lastProblem || 'fewer than two manager replicas ready'}`);
      if (end.unplaced > 0) violations.push(`${end.unplaced} pod(s) left unplaced after the faults`);
    } catch (err) {
      violations.push(`converging after the faults failed: ${describeError(err)}`);
    }
    for (const [key, v] of overLimit) violations.push(`${key}: ${v.first}; above it in ${v.samples} sample(s), at most ${v.most} pods`);

    const managerErrorLines = [...managers, ...retired, ...pending].reduce((n, m) => n + m.log.lines.filter((l) => l.level === 'error').length, 0);
    let failedCreates = 0;
    const virtualMs = e.clock.now() - virtualStart;
    dbg?.cancel();
    try {
      for (const s of SPREADS) {
        const events = (await client.list<Record<string, unknown>>(BUILTIN.eventsV1, { namespace: s.namespace })).items;
        failedCreates += events.filter((ev) => ev['reason'] === 'FailedCreate').reduce((n, ev) => n + (((ev['series'] as { count?: number } | undefined)?.count ?? 1) as number), 0);
      }
      // ---- teardown ----
      for (const m of [...managers, ...pending]) await stopOnClock(e, m.manager);
      const settled = Promise.all(stopping);
      let stopped = false;
      void settled.then(() => (stopped = true));
      for (let i = 0; i < 600 && !stopped; i++) await e.clock.advance(1_000);
      await settled;
    } catch (err) {
      violations.push(`stopping the managers failed: ${describeError(err)}`);
    }

    return {
      seed,
      wallMs: wall.now() - started,
      virtualMs,
      steps,
      injected,
      samples,
      violations,
      highest,
      convergedAfterMs,
      leaderChanges,
      managersStarted,
      lostLeadership,
      managerErrorLines,
      failedCreates,
      diagnostics,
    };
  } finally {
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
    await forwarder?.close();
    await env?.stop();
  }
}

/** Why the status does not match the pods yet ('' when it does): per subset, replicas, quota left, no leftover reservation. */
async function convergenceProblem(client: ManagerCluster['cluster']['client'], replicas: ReadonlyMap<string, number>): Promise<string> {
  for (const s of SPREADS) {
    const pods = (await client.list<Pod>(BUILTIN.pods, { namespace: s.namespace })).items.filter(isActive);
    const want = replicas.get(s.namespace) ?? 0;
    if (pods.length !== want) return `${s.namespace}: ${pods.length} active pods, ${want} wanted`;
    const ws = await client.get<WorkloadSpread>(WORKLOADSPREAD_REF, 'spread', { namespace: s.namespace });
    const counts: Record<string, number> = {};
    for (const p of pods) {
      const m = markerOf(p);
      if (m === undefined) return `${s.namespace}: pod ${p.metadata.name ?? ''} has no subset`;
      counts[m.subset] = (counts[m.subset] ?? 0) + 1;
    }
    if (ws.status?.observedGeneration !== ws.metadata?.generation) return `${s.namespace}: status of generation ${ws.status?.observedGeneration ?? '-'}, spec ${ws.metadata?.generation ?? '-'}`;
    for (const [subset, limit] of Object.entries(s.limits)) {
      const st = ws.status?.subsetStatuses?.find((x) => x.name === subset);
      const n = counts[subset] ?? 0;
      const missing = limit === null ? -1 : Math.max(0, limit - n);
      if (st === undefined || st.replicas !== n || st.missingReplicas !== missing) {
        return `${s.namespace}/${subset}: status says ${st?.replicas ?? '-'} pods, ${st?.missingReplicas ?? '-'} missing; the pods say ${n}, ${missing}`;
      }
    }
    const leftovers = [...(ws.status?.subsetStatuses ?? []), ...Object.values(ws.status?.versionedSubsetStatuses ?? {}).flat()].flatMap((x) => [
      ...Object.keys(x.creatingPods ?? {}),
      ...Object.keys(x.deletingPods ?? {}),
    ]);
    if (leftovers.length > 0) return `${s.namespace}: reservations or booked deletions left: ${leftovers.slice(0, 3).join(', ')}`;
  }
  return '';
}

/** The report as printed lines. */
export function formatSoakReport(r: SoakReport): string[] {
  const lines: string[] = [];
  lines.push(`soak seed ${r.seed}: ${formatMs(r.wallMs)} wall-clock, ${formatMs(r.virtualMs)} of virtual time, ${r.steps} fault steps, ${r.samples} invariant samples`);
  lines.push(`injected: ${Object.entries(r.injected).sort().map(([k, v]) => `${k} ${v}`).join(', ')}`);
  lines.push(`managers: ${r.managersStarted} replicas started, ${r.leaderChanges} leader changes, ${r.lostLeadership} lost-leadership exits; ${r.managerErrorLines} error log lines; ${r.failedCreates} pod creations refused (FailedCreate)`);
  lines.push(`highest active pods per subset: ${Object.entries(r.highest).map(([k, v]) => `${k} ${v.pods}/${v.limit ?? '∞'}`).join(', ')}`);
  lines.push(`status converged ${r.convergedAfterMs === undefined ? 'NOT within the bound' : `${formatMs(r.convergedAfterMs)} (virtual) after the faults stopped`}`);
  lines.push(r.violations.length === 0 ? 'invariants: 0 violations (no subset above its limit, no pod unplaced, status converged, no crash)' : `invariants: ${r.violations.length} VIOLATION(S):`);
  for (const v of r.violations.slice(0, 50)) lines.push(`  - ${v}`);
  return lines;
}
