/**
 * Leader election against the embedded API server on the virtual clock: two
 * candidates, exactly one leader at every instant; takeover only once the
 * lease has expired (as observed by the follower) when the leader stops
 * renewing; a quick takeover after a release; losing leadership when renewals
 * fail for the renew deadline; the Lease's MicroTime fields and transitions.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { ServingCertificate } from './loopback-certificates.ts';
import { startClientTestBed, testBedCertificate, type ClientTestBed } from '../testing/client-test-bed.ts';
import { LeaderElector, type Lease, type LeaderElectionOptions } from './leader-election.ts';
import { BUILTIN } from './resources.ts';

const T0 = Date.UTC(2026, 0, 1);
let cert: ServingCertificate;
let clock: VirtualClock;
let bed: ClientTestBed;
let leaseSeq = 0;

before(async () => {
  cert = testBedCertificate();
  clock = new VirtualClock(T0);
  bed = await startClientTestBed(clock, cert);
});
after(async () => {
  await bed.close();
});

interface Candidate {
  elector: LeaderElector;
  log: string[];
  signals: AbortSignal[];
}

async function candidate(identity: string, lease: string, extra: Partial<LeaderElectionOptions> = {}): Promise<Candidate> {
  const client = await bed.newClient();
  const log: string[] = [];
  const signals: AbortSignal[] = [];
  const elector = new LeaderElector({
    client,
    namespace: 'default',
    name: lease,
    identity,
    random: () => 0,
    onStartedLeading: (signal) => {
      log.push(`start@${clock.now() - T0}`);
      signals.push(signal);
    },
    onStoppedLeading: () => log.push(`stop@${clock.now() - T0}`),
    onNewLeader: (who) => log.push(`leader=${who}@${clock.now() - T0}`),
    ...extra,
  });
  return { elector, log, signals };
}

async function readLease(name: string): Promise<Lease> {
  return bed.client.get<Lease>(BUILTIN.leases, name, { namespace: 'default' });
}

const elapsed = () => clock.now() - T0;

describe('leader election', () => {
  test('two candidates: exactly one leader at every instant; the Lease records it', async () => {
    const lease = `lease-${++leaseSeq}`;
    const a = await candidate('a', lease);
    // B's jitter puts its attempts between A's renewals, where a broken expiry check would let it steal.
    const b = await candidate('b', lease, { random: () => 0.3 });
    a.elector.start();
    b.elector.start();
    await clock.quiesce();
    for (let i = 0; i < 60; i++) {
      assert.equal(Number(a.elector.isLeader) + Number(b.elector.isLeader), 1, `one leader at +${i}s`);
      await clock.advance(1000);
    }
    const leader = a.elector.isLeader ? a : b;
    const follower = leader === a ? b : a;
    assert.equal(follower.log.filter((l) => l.startsWith('start')).length, 0);
    assert.equal(follower.elector.leader, leader === a ? 'a' : 'b');
    const spec = (await readLease(lease)).spec ?? {};
    assert.equal(spec.holderIdentity, leader === a ? 'a' : 'b');
    assert.equal(spec.leaseDurationSeconds, 15);
    assert.equal(spec.leaseTransitions, 0);
    assert.match(spec.renewTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(spec.acquireTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.ok(Date.parse(spec.renewTime ?? '') > Date.parse(spec.acquireTime ?? ''), 'renewed since acquired');
    await a.elector.stop();
    await b.elector.stop();
  });

  test('a leader that stops renewing is replaced at lease expiry, not before', async () => {
    const lease = `lease-${++leaseSeq}`;
    const a = await candidate('a', lease, { releaseOnStop: false });
    a.elector.start();
    await clock.quiesce();
    assert.equal(a.elector.isLeader, true);
    const b = await candidate('b', lease);
    b.elector.start();
    await clock.advance(7000);
    await a.elector.stop(); // no release: the lease must expire
    const lastRenew = Date.parse((await readLease(lease)).spec?.renewTime ?? '') - T0;
    assert.equal(a.log.at(-1), `stop@${elapsed()}`);
    for (let t = 0; t < 40_000 && !b.elector.isLeader; t += 500) {
      await clock.advance(500);
      if (elapsed() < lastRenew + 15_000) assert.equal(b.elector.isLeader, false, `no takeover before expiry (+${elapsed()})`);
    }
    const takeover = Number(b.log.find((l) => l.startsWith('start'))?.split('@')[1]);
    assert.ok(takeover >= lastRenew + 15_000, `takeover at ${takeover}, last renew at ${lastRenew}`);
    assert.ok(takeover <= lastRenew + 15_000 + 2 * 2000, `takeover at ${takeover} is within a retry or two of expiry (${lastRenew + 15_000})`);
    const spec = (await readLease(lease)).spec ?? {};
    assert.equal(spec.holderIdentity, 'b');
    assert.equal(spec.leaseTransitions, 1);
    assert.ok(b.log.includes(`leader=b@${takeover}`));
    await b.elector.stop();
  });

  test('a released lease is taken at the next attempt', async () => {
    const lease = `lease-${++leaseSeq}`;
    const a = await candidate('a', lease);
    a.elector.start();
    await clock.quiesce();
    const b = await candidate('b', lease);
    b.elector.start();
    await clock.advance(3000);
    const stoppedAt = elapsed();
    await a.elector.stop();
    assert.equal(a.signals[0]?.aborted, true);
    assert.equal((await readLease(lease)).spec?.holderIdentity, '');
    await clock.advance(2000);
    assert.equal(b.elector.isLeader, true);
    assert.ok(Number(b.log.find((l) => l.startsWith('start'))?.split('@')[1]) <= stoppedAt + 2000);
    await b.elector.stop();
  });

  test('renewals failing for the renew deadline lose leadership; the work is told to stop', async () => {
    const lease = `lease-${++leaseSeq}`;
    const a = await candidate('a', lease);
    a.elector.start();
    await clock.quiesce();
    await clock.advance(4000);
    const lastRenew = Date.parse((await readLease(lease)).spec?.renewTime ?? '') - T0;
    const fault = bed.server.control.injectFault({ resource: 'leases', verb: 'update', name: lease, status: 500 });
    await clock.advance(20_000);
    // Renew rounds start a retry period after the last success; the round gives up after the deadline.
    assert.deepEqual(a.log.filter((l) => l.startsWith('stop')), [`stop@${lastRenew + 2000 + 10_000}`]);
    assert.equal(a.signals[0]?.aborted, true);
    fault.clear();
    await clock.advance(5000);
    assert.equal(a.elector.isLeader, true, 'it takes its own lease back');
    assert.equal(a.log.filter((l) => l.startsWith('start')).length, 2);
    await a.elector.stop();
  });
});
