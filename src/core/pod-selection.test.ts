import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TargetReference, WorkloadSpread } from '../api/workloadspread.ts';
import { EMPTY_WHITELIST, type Whitelist } from '../api/whitelist.ts';
import type { KubeObject, OwnerReference, Pod } from '../k8s/types.ts';
import {
  SUPPORTED_WORKLOAD_KINDS,
  isReferenceEqual,
  isSupportedOwner,
  matchWorkloadSpreadForPod,
  targetFilterSelectsPod,
  type OwnerLookup,
} from './pod-selection.ts';

const whitelist: Whitelist = {
  workloads: [
    {
      group: 'game.kruise.io',
      version: 'v1alpha1',
      kind: 'GameServerSet',
      subResources: [{ group: 'game.kruise.io', version: 'v1alpha1', kind: 'GameServer' }],
      replicasPath: 'spec.replicas',
    },
  ],
};

function ref(apiVersion: string, kind: string, name: string): OwnerReference {
  return { apiVersion, kind, name, uid: `${name}-uid`, controller: true };
}

function obj(apiVersion: string, kind: string, name: string, owner?: OwnerReference): KubeObject {
  const o: KubeObject = { apiVersion, kind, metadata: { name, namespace: 'ns', uid: `${name}-uid` } };
  if (owner !== undefined) o.metadata!.ownerReferences = [owner];
  return o;
}

/** A cache keyed by kind/name, with optional failures. */
function lookupOf(objects: KubeObject[], failures: Record<string, string> = {}): OwnerLookup & { calls: string[] } {
  const calls: string[] = [];
  const fn = (r: { apiVersion: string; kind: string; name: string }) => {
    const key = `${r.kind}/${r.name}`;
    calls.push(key);
    if (failures[key] !== undefined) return { error: failures[key] };
    const found = objects.find((o) => o.kind === r.kind && o.metadata?.name === r.name);
    return found === undefined ? { notFound: true as const } : { found };
  };
  return Object.assign(fn, { calls });
}

function target(apiVersion: string, kind: string, name: string): TargetReference {
  return { apiVersion, kind, name };
}

function spread(name: string, targetRef: TargetReference | undefined, more: Partial<WorkloadSpread['spec']> = {}, metadata: Partial<WorkloadSpread['metadata']> = {}): WorkloadSpread {
  return {
    metadata: { name, namespace: 'ns', ...metadata },
    spec: { targetRef, subsets: [{ name: 'a' }], ...more } as WorkloadSpread['spec'],
  };
}

function pod(owner?: OwnerReference, labels: Record<string, string> = { app: 'web' }, status?: Pod['status'], deletionTimestamp?: string): Pod {
  const p: Pod = { metadata: { name: 'p', namespace: 'ns', labels }, spec: { containers: [{ name: 'main' }] } };
  if (owner !== undefined) p.metadata.ownerReferences = [owner];
  if (status !== undefined) p.status = status;
  if (deletionTimestamp !== undefined) p.metadata.deletionTimestamp = deletionTimestamp;
  return p;
}

describe('isSupportedOwner (§2.1 step 7)', () => {
  const cases: [string, string, boolean, Whitelist?][] = [
    ['apps', 'Deployment', true],
    ['apps.kruise.io', 'CloneSet', true],
    ['apps', 'ReplicaSet', true],
    ['batch', 'Job', true],
    ['apps', 'StatefulSet', true],
    ['apps.kruise.io', 'StatefulSet', true],
    ['apps', 'CloneSet', false],
    ['extensions', 'Deployment', false],
    ['', 'ReplicationController', false],
    ['game.kruise.io', 'GameServerSet', false],
    ['game.kruise.io', 'GameServerSet', true, whitelist],
    ['game.kruise.io', 'GameServer', true, whitelist],
    ['other.io', 'GameServer', false, whitelist],
  ];
  for (const [group, kind, want, wl] of cases) {
    test(`${group}/${kind}${wl ? ' (whitelist)' : ''} → ${want}`, () => assert.equal(isSupportedOwner(group, kind, wl ?? EMPTY_WHITELIST), want));
  }
  test('the built-in list has the six kinds of the spec', () => assert.equal(SUPPORTED_WORKLOAD_KINDS.length, 6));
});

describe('targetFilterSelectsPod (§1.2, D5)', () => {
  const base = spread('ws', target('apps/v1', 'Deployment', 'web'));
  const cases: { name: string; filter: WorkloadSpread['spec']['targetFilter'] | undefined; labels: Record<string, string> | undefined; want: boolean | 'error' }[] = [
    { name: 'no targetFilter selects everything', filter: undefined, labels: { app: 'web' }, want: true },
    { name: 'targetFilter without selector selects everything (D5)', filter: { replicasPathList: ['spec.replicas'] }, labels: { app: 'web' }, want: true },
    { name: 'empty selector selects everything', filter: { selector: {} }, labels: undefined, want: true },
    { name: 'matchLabels match', filter: { selector: { matchLabels: { role: 'worker' } } }, labels: { role: 'worker' }, want: true },
    { name: 'matchLabels mismatch', filter: { selector: { matchLabels: { role: 'worker' } } }, labels: { role: 'ps' }, want: false },
    { name: 'no labels vs a selector', filter: { selector: { matchLabels: { role: 'worker' } } }, labels: undefined, want: false },
    { name: 'In with values', filter: { selector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['a', 'worker'] }] } }, labels: { role: 'worker' }, want: true },
    { name: 'In without values is an error', filter: { selector: { matchExpressions: [{ key: 'role', operator: 'In', values: [] }] } }, labels: { role: 'worker' }, want: 'error' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const ws: WorkloadSpread = { ...base, spec: { ...base.spec } };
      if (c.filter !== undefined) ws.spec.targetFilter = c.filter;
      const got = targetFilterSelectsPod(ws, c.labels);
      if (c.want === 'error') assert.equal(got.ok, false);
      else assert.deepEqual(got, { ok: true, selected: c.want });
    });
  }
});

describe('isReferenceEqual (§2.2)', () => {
  const rs = obj('apps/v1', 'ReplicaSet', 'web-abc', ref('apps/v1', 'Deployment', 'web'));
  const gs = obj('game.kruise.io/v1alpha1', 'GameServer', 'gs-0', ref('game.kruise.io/v1alpha1', 'GameServerSet', 'gss'));
  const orphanRs = obj('apps/v1', 'ReplicaSet', 'lonely');
  const web = obj('apps/v1', 'Deployment', 'web');

  test('nil owner → false', () => {
    assert.deepEqual(isReferenceEqual(target('apps/v1', 'Deployment', 'web'), undefined, lookupOf([]), EMPTY_WHITELIST), { ok: true, equal: false });
  });
  test('same group, kind, name → true without a lookup', () => {
    const lookup = lookupOf([]);
    assert.deepEqual(isReferenceEqual(target('apps.kruise.io/v1alpha1', 'CloneSet', 'c'), ref('apps.kruise.io/v1alpha1', 'CloneSet', 'c'), lookup, EMPTY_WHITELIST), { ok: true, equal: true });
    assert.deepEqual(lookup.calls, []);
  });
  test('the version is ignored', () => {
    assert.deepEqual(isReferenceEqual(target('apps.kruise.io/v1beta1', 'CloneSet', 'c'), ref('apps.kruise.io/v1alpha1', 'CloneSet', 'c'), lookupOf([]), EMPTY_WHITELIST), { ok: true, equal: true });
  });
  test('pod → ReplicaSet → Deployment matches the Deployment', () => {
    assert.deepEqual(isReferenceEqual(target('apps/v1', 'Deployment', 'web'), ref('apps/v1', 'ReplicaSet', 'web-abc'), lookupOf([rs]), EMPTY_WHITELIST), { ok: true, equal: true });
  });
  test('a ReplicaSet of another Deployment does not match (the walk reads that Deployment too)', () => {
    const lookup = lookupOf([rs, web]);
    assert.deepEqual(isReferenceEqual(target('apps/v1', 'Deployment', 'api'), ref('apps/v1', 'ReplicaSet', 'web-abc'), lookup, EMPTY_WHITELIST), { ok: true, equal: false });
    assert.deepEqual(lookup.calls, ['ReplicaSet/web-abc', 'Deployment/web']);
  });
  test('so a missing Deployment up the chain is NotFound as well', () => {
    const got = isReferenceEqual(target('apps/v1', 'Deployment', 'api'), ref('apps/v1', 'ReplicaSet', 'web-abc'), lookupOf([rs]), EMPTY_WHITELIST);
    assert.equal(!got.ok && 'notFound' in got && got.notFound, true);
  });
  test('a ReplicaSet without a controller ends the walk: false', () => {
    assert.deepEqual(isReferenceEqual(target('apps/v1', 'Deployment', 'web'), ref('apps/v1', 'ReplicaSet', 'lonely'), lookupOf([orphanRs]), EMPTY_WHITELIST), { ok: true, equal: false });
  });
  test('whitelisted sub-resource → parent matches (GameServer → GameServerSet)', () => {
    assert.deepEqual(isReferenceEqual(target('game.kruise.io/v1alpha1', 'GameServerSet', 'gss'), ref('game.kruise.io/v1alpha1', 'GameServer', 'gs-0'), lookupOf([gs]), whitelist), { ok: true, equal: true });
  });
  test('a chain through a kind that is not whitelisted does not match, and is not fetched', () => {
    const lookup = lookupOf([gs]);
    assert.deepEqual(isReferenceEqual(target('game.kruise.io/v1alpha1', 'GameServerSet', 'gss'), ref('game.kruise.io/v1alpha1', 'GameServer', 'gs-0'), lookup, EMPTY_WHITELIST), { ok: true, equal: false });
    assert.deepEqual(lookup.calls, []);
  });
  test('owner not in the cache → NotFound error', () => {
    const got = isReferenceEqual(target('apps/v1', 'Deployment', 'web'), ref('apps/v1', 'ReplicaSet', 'web-new'), lookupOf([]), EMPTY_WHITELIST);
    assert.equal(got.ok, false);
    assert.equal(!got.ok && 'notFound' in got && got.notFound, true);
  });
  test('other lookup errors are not NotFound', () => {
    const got = isReferenceEqual(target('apps/v1', 'Deployment', 'web'), ref('apps/v1', 'ReplicaSet', 'web-abc'), lookupOf([], { 'ReplicaSet/web-abc': 'boom' }), EMPTY_WHITELIST);
    assert.deepEqual(got, { ok: false, notFound: false, error: 'boom' });
  });
  test('an unparsable apiVersion is an error (target or owner)', () => {
    const a = isReferenceEqual(target('a/b/c', 'Deployment', 'web'), ref('apps/v1', 'Deployment', 'web'), lookupOf([]), EMPTY_WHITELIST);
    const b = isReferenceEqual(target('apps/v1', 'Deployment', 'web'), ref('a/b/c', 'Deployment', 'web'), lookupOf([]), EMPTY_WHITELIST);
    assert.equal(a.ok || ('notFound' in a && a.notFound), false);
    assert.equal(b.ok || ('notFound' in b && b.notFound), false);
  });
  test('an ownership cycle terminates with false', () => {
    const x = obj('apps/v1', 'ReplicaSet', 'x', ref('apps/v1', 'ReplicaSet', 'y'));
    const y = obj('apps/v1', 'ReplicaSet', 'y', ref('apps/v1', 'ReplicaSet', 'x'));
    assert.deepEqual(isReferenceEqual(target('apps/v1', 'Deployment', 'web'), ref('apps/v1', 'ReplicaSet', 'x'), lookupOf([x, y]), EMPTY_WHITELIST), { ok: true, equal: false });
  });
});

describe('matchWorkloadSpreadForPod (§2.1 steps 5–9)', () => {
  const rs = obj('apps/v1', 'ReplicaSet', 'web-abc', ref('apps/v1', 'Deployment', 'web'));
  const lookup = lookupOf([rs, obj('apps/v1', 'Deployment', 'web')]);
  const rsOwner = ref('apps/v1', 'ReplicaSet', 'web-abc');
  const webWs = spread('web-ws', target('apps/v1', 'Deployment', 'web'));

  test('inactive pods are skipped: Succeeded, Failed, deleting', () => {
    for (const p of [pod(rsOwner, {}, { phase: 'Succeeded' }), pod(rsOwner, {}, { phase: 'Failed' }), pod(rsOwner, {}, undefined, '2026-01-01T00:00:00Z')]) {
      assert.deepEqual(matchWorkloadSpreadForPod(p, [webWs], lookup, EMPTY_WHITELIST), { kind: 'skip', reason: 'PodInactive' });
    }
  });
  test('a pod without a controller reference is skipped', () => {
    const p = pod();
    p.metadata.ownerReferences = [{ ...rsOwner, controller: false }];
    assert.deepEqual(matchWorkloadSpreadForPod(p, [webWs], lookup, EMPTY_WHITELIST), { kind: 'skip', reason: 'NoControllerRef' });
  });
  test('an unsupported owner is skipped', () => {
    const p = pod(ref('v1', 'ReplicationController', 'rc'));
    assert.deepEqual(matchWorkloadSpreadForPod(p, [webWs], lookup, EMPTY_WHITELIST), { kind: 'skip', reason: 'UnsupportedOwner' });
  });
  test('a whitelisted owner is considered', () => {
    const gs = obj('game.kruise.io/v1alpha1', 'GameServer', 'gs-0', ref('game.kruise.io/v1alpha1', 'GameServerSet', 'gss'));
    const ws = spread('g', target('game.kruise.io/v1alpha1', 'GameServerSet', 'gss'));
    const p = pod(ref('game.kruise.io/v1alpha1', 'GameServer', 'gs-0'));
    assert.deepEqual(matchWorkloadSpreadForPod(p, [ws], lookupOf([gs]), whitelist), { kind: 'matched', ws });
  });
  test('matches through the owner chain', () => {
    assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner), [webWs], lookup, EMPTY_WHITELIST), { kind: 'matched', ws: webWs });
  });
  test('of two WorkloadSpreads of one workload, the one that takes precedence (older, then name) places the pod, whatever the list order', () => {
    const older = spread('z-older', target('apps/v1', 'Deployment', 'web'), {}, { creationTimestamp: '2026-01-01T00:00:00Z' });
    const younger = spread('a-younger', target('apps/v1', 'Deployment', 'web'), {}, { creationTimestamp: '2026-01-01T00:00:05Z' });
    const other = spread('other', target('apps/v1', 'Deployment', 'api'));
    for (const list of [[other, younger, older], [older, younger, other]]) {
      assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner), list, lookup, EMPTY_WHITELIST), { kind: 'matched', ws: older });
    }
    const sameSecond = spread('b', target('apps/v1', 'Deployment', 'web'), {}, { creationTimestamp: '2026-01-01T00:00:00Z' });
    const first = spread('a', target('apps/v1', 'Deployment', 'web'), {}, { creationTimestamp: '2026-01-01T00:00:00Z' });
    assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner), [sameSecond, first], lookup, EMPTY_WHITELIST), { kind: 'matched', ws: first });
  });
  test('a deleting WorkloadSpread is skipped (one without a targetRef never gets here: api/decode.test.ts)', () => {
    const deleting = spread('gone', target('apps/v1', 'Deployment', 'web'), {}, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner), [deleting, webWs], lookup, EMPTY_WHITELIST), { kind: 'matched', ws: webWs });
  });
  test('a targetFilter that does not select the pod skips that WorkloadSpread', () => {
    const filtered = spread('f', target('apps/v1', 'Deployment', 'web'), { targetFilter: { selector: { matchLabels: { role: 'worker' } } } });
    assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner), [filtered], lookup, EMPTY_WHITELIST), { kind: 'none' });
    assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner, { role: 'worker' }), [filtered], lookup, EMPTY_WHITELIST), { kind: 'matched', ws: filtered });
  });
  test('targetFilter with only replicasPathList matches (D5)', () => {
    const filtered = spread('f', target('apps/v1', 'Deployment', 'web'), { targetFilter: { replicasPathList: ['spec.replicas'] } });
    assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner), [filtered], lookup, EMPTY_WHITELIST), { kind: 'matched', ws: filtered });
  });
  test('an invalid selector skips that WorkloadSpread (no error); a duplicate it takes precedence over is no fallback', () => {
    const bad = spread('bad', target('apps/v1', 'Deployment', 'web'), { targetFilter: { selector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] } } });
    assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner), [bad], lookup, EMPTY_WHITELIST), { kind: 'none' });
    assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner), [bad, webWs], lookup, EMPTY_WHITELIST), { kind: 'none' });
  });
  test('owner NotFound from any WorkloadSpread fails the whole admission with 500, even an unrelated one', () => {
    const unrelated = spread('api', target('apps/v1', 'Deployment', 'api'));
    const got = matchWorkloadSpreadForPod(pod(ref('apps/v1', 'ReplicaSet', 'web-new')), [unrelated], lookupOf([]), EMPTY_WHITELIST);
    assert.equal(got.kind, 'error');
    assert.equal(got.kind === 'error' && got.code, 500);
  });
  test('the pod\'s owner must exist with the uid the pod names, also when the WorkloadSpread targets it directly (fails closed: 500)', () => {
    const direct = spread('direct', target('apps/v1', 'ReplicaSet', 'web-new'));
    const later = spread('later', target('apps/v1', 'Deployment', 'api'));
    const owner = ref('apps/v1', 'ReplicaSet', 'web-new');
    const missing = matchWorkloadSpreadForPod(pod(owner), [direct, later], lookupOf([]), EMPTY_WHITELIST);
    assert.equal(missing.kind, 'error');
    assert.equal(missing.kind === 'error' && missing.code, 500);
    const present = obj('apps/v1', 'ReplicaSet', 'web-new');
    assert.deepEqual(matchWorkloadSpreadForPod(pod(owner), [direct, later], lookupOf([present]), EMPTY_WHITELIST), { kind: 'matched', ws: direct });
    const forged = matchWorkloadSpreadForPod(pod({ ...owner, uid: 'guessed' }), [direct], lookupOf([present]), EMPTY_WHITELIST);
    assert.equal(forged.kind, 'error');
    // The refusal names what the pod said, never the uid the cluster has (which would let anyone pass the check).
    assert.match(forged.kind === 'error' ? forged.message : '', /ownerReference \(ReplicaSet "web-new", uid "guessed"\) does not match its owner/);
    assert.doesNotMatch(forged.kind === 'error' ? forged.message : '', /web-new-uid/);
    assert.match(forged.kind === 'error' ? forged.detail : '', /"guessed"/, 'the log keeps what was refused');
    assert.doesNotMatch(forged.kind === 'error' ? forged.detail : '', /web-new-uid/);
    // Missing or with another uid: the caller cannot tell the two apart (no oracle for a name it cannot read).
    const guessedMissing = matchWorkloadSpreadForPod(pod({ ...owner, uid: 'guessed' }), [direct], lookupOf([]), EMPTY_WHITELIST);
    assert.equal(guessedMissing.kind === 'error' && guessedMissing.message, forged.kind === 'error' && forged.message);
    const { uid: _uid, ...withoutUid } = owner;
    assert.equal(matchWorkloadSpreadForPod(pod(withoutUid as OwnerReference), [direct], lookupOf([present]), EMPTY_WHITELIST).kind, 'error', 'a legitimate pod always names its owner\'s uid');
  });
  test('an owner further up the chain that is missing fails closed without naming it (the caller may not read the ReplicaSet that names it)', () => {
    const hidden = obj('apps/v1', 'ReplicaSet', 'web-abc', ref('apps/v1', 'Deployment', 'secret-deployment'));
    const got = matchWorkloadSpreadForPod(pod(rsOwner), [webWs], lookupOf([hidden]), EMPTY_WHITELIST);
    assert.equal(got.kind, 'error');
    assert.doesNotMatch(got.kind === 'error' ? got.message : '', /secret-deployment/);
    assert.match(got.kind === 'error' ? got.message : '', /ReplicaSet "web-abc"/);
    assert.match(got.kind === 'error' ? got.detail : '', /secret-deployment/, 'the log says which link is missing');
  });
  test('other lookup errors skip only that WorkloadSpread', () => {
    const elsewhere = spread('elsewhere', target('apps/v1', 'Deployment', 'other'));
    const direct = spread('direct', target('apps/v1', 'ReplicaSet', 'web-abc'));
    const failing = lookupOf([rs], { 'Deployment/web': 'cache broken' });
    assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner), [elsewhere, direct], failing, EMPTY_WHITELIST), { kind: 'matched', ws: direct });
  });
  test('no WorkloadSpread matches → none', () => {
    assert.deepEqual(matchWorkloadSpreadForPod(pod(rsOwner), [], lookup, EMPTY_WHITELIST), { kind: 'none' });
  });
  test('malformed pods never throw (malformed WorkloadSpreads are refused where they enter: api/decode.test.ts)', () => {
    assert.doesNotThrow(() => matchWorkloadSpreadForPod({ metadata: { ownerReferences: [{ controller: true }] } } as unknown as Pod, [webWs], lookup, EMPTY_WHITELIST));
  });
});

describe('matchWorkloadSpreadForPod visits only the WorkloadSpreads of the chain, with the answer of the full walk', async () => {
  const fc = (await import('fast-check')).default;
  const { activeWorkloadSpreads } = await import('./target-conflict.ts');
  const { OwnerChain, matchOnChain, ownerMismatchMessage } = await import('./pod-selection.ts');

  /** §2.1 steps 5–9 as a plain loop over the whole list, each WorkloadSpread asking the chain: the behaviour the index keeps. */
  function everyWorkloadSpread(p: Pod, list: readonly WorkloadSpread[], lookup: OwnerLookup): unknown {
    const owner = p.metadata.ownerReferences?.[0] as OwnerReference;
    const chain = new OwnerChain(owner, lookup, EMPTY_WHITELIST);
    for (const ws of activeWorkloadSpreads(list)) {
      if (ws.metadata.deletionTimestamp !== undefined) continue;
      const reference = chain.leadsTo(ws.spec.targetRef);
      if (!reference.ok) {
        if ('read' in reference) return { kind: 'read', read: reference.read };
        if (reference.notFound) return { kind: 'error', code: 500, message: ownerMismatchMessage(owner), detail: reference.error };
        continue;
      }
      if (!reference.equal) continue;
      const found = matchOnChain(ws, p, owner, lookup);
      if (found !== undefined) return found;
    }
    return { kind: 'none' };
  }

  // Targets drawn from a small universe so that lists hit the chain, miss it, repeat a workload and name unparsable groups.
  const targets: TargetReference[] = [
    target('apps/v1', 'Deployment', 'web'),
    target('apps/v1', 'Deployment', 'api'),
    target('apps/v1', 'ReplicaSet', 'web-abc'),
    target('apps/v1beta1', 'Deployment', 'web'),
    target('extensions/v1beta1', 'Deployment', 'web'),
    target('apps/v1', 'StatefulSet', 'web'),
    target('a/b/c', 'Deployment', 'web'),
  ];
  const filters = [undefined, { selector: { matchLabels: { app: 'web' } } }, { selector: { matchLabels: { app: 'other' } } }];
  const wsArb = fc.record({
    target: fc.integer({ min: 0, max: targets.length - 1 }),
    filter: fc.integer({ min: 0, max: filters.length - 1 }),
    created: fc.integer({ min: 0, max: 3 }),
    deleting: fc.boolean(),
  });
  // What the lookup answers for the ReplicaSet and the Deployment: found, not found, an error, or "read it first".
  const answerArb = fc.constantFrom('found', 'notFound', 'error', 'read');

  test('for random lists, owner chains and lookup failures: the same answer, and the same owners looked up in the same order', () => {
    fc.assert(
      fc.property(fc.array(wsArb, { maxLength: 12 }), answerArb, answerArb, fc.boolean(), fc.boolean(), (specs, rsAnswer, deployAnswer, frozen, badUid) => {
        const list = specs.map((w, i) => {
          const filter = filters[w.filter];
          return spread(`ws-${i}`, targets[w.target], filter === undefined ? {} : { targetFilter: filter }, {
            creationTimestamp: `2026-01-01T00:00:0${w.created}Z`,
            ...(w.deleting ? { deletionTimestamp: '2026-01-02T00:00:00Z' } : {}),
          });
        });
        const objects: Record<string, KubeObject> = {
          'ReplicaSet/web-abc': obj('apps/v1', 'ReplicaSet', 'web-abc', ref('apps/v1', 'Deployment', 'web')),
          'Deployment/web': obj('apps/v1', 'Deployment', 'web'),
        };
        const answers: Record<string, string> = { 'ReplicaSet/web-abc': rsAnswer, 'Deployment/web': deployAnswer };
        const make = () => {
          const calls: string[] = [];
          const fn: OwnerLookup = (r) => {
            const key = `${r.kind}/${r.name}`;
            calls.push(key);
            switch (answers[key] ?? 'notFound') {
              case 'found':
                return objects[key] === undefined ? { notFound: true as const } : { found: objects[key] };
              case 'error':
                return { error: `cannot read ${key}` };
              case 'read':
                return { read: { kind: 'object', namespace: 'ns', ref: { apiVersion: r.apiVersion, kind: r.kind, name: r.name } } as never };
              default:
                return { notFound: true as const };
            }
          };
          return { fn, calls };
        };
        const p = pod(badUid ? { ...ref('apps/v1', 'ReplicaSet', 'web-abc'), uid: 'forged' } : ref('apps/v1', 'ReplicaSet', 'web-abc'));
        const input = frozen ? Object.freeze([...list]) : list;
        const want = make();
        const got = make();
        assert.deepEqual(matchWorkloadSpreadForPod(p, input, got.fn, EMPTY_WHITELIST), everyWorkloadSpread(p, input, want.fn));
        assert.deepEqual(got.calls, want.calls);
      }),
      { numRuns: 2_000 },
    );
  });

  test('a hundred WorkloadSpreads of other workloads: the pod of one of them is matched after asking the chain about two of them', () => {
    const rs = obj('apps/v1', 'ReplicaSet', 'web-abc', ref('apps/v1', 'Deployment', 'web'));
    const list = Object.freeze([...Array.from({ length: 100 }, (_, i) => spread(`other-${String(i).padStart(3, '0')}`, target('apps/v1', 'Deployment', `app-${i}`))), spread('zz-web', target('apps/v1', 'Deployment', 'web'))]);
    let asked = 0;
    const spy = (key: string): void => {
      asked++;
      void key;
    };
    const original = OwnerChain.prototype.reaches;
    OwnerChain.prototype.reaches = function (this: InstanceType<typeof OwnerChain>, key: string) {
      spy(key);
      return original.call(this, key);
    };
    try {
      const got = matchWorkloadSpreadForPod(pod(ref('apps/v1', 'ReplicaSet', 'web-abc')), list, lookupOf([rs, obj('apps/v1', 'Deployment', 'web')]), EMPTY_WHITELIST);
      assert.equal(got.kind === 'matched' && got.ws.metadata.name, 'zz-web');
    } finally {
      OwnerChain.prototype.reaches = original;
    }
    assert.equal(asked, 2);
  });
});
