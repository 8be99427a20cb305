/**
 * The health checks docs/operations.md gives for Argo CD (Lua) and Flux (CEL
 * health check expressions), run as the page shows them on WorkloadSpreads
 * whose status comes from the controller's own computation (planReconcile):
 * Ready, converging, stalled, a duplicate, no status yet, an older generation.
 * The Lua part needs `lua5.4` (or `lua`) on PATH and is skipped without it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Environment } from '@marcbachmann/cel-js';
import { parse } from 'yaml';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { duplicateReadiness } from '../core/ready-condition.ts';
import { planReconcile } from '../core/reconcile-plan.ts';
import { formatTime } from '../k8s/time.ts';
import type { Pod } from '../k8s/types.ts';

const OPERATIONS = new URL('../../docs/operations.md', import.meta.url).pathname;
const T0 = Date.UTC(2026, 0, 1);

/** The YAML block right after `<!-- NAME -->` in docs/operations.md. */
function docBlock(name: string): unknown {
  const text = readFileSync(OPERATIONS, 'utf8');
  const at = text.indexOf(`<!-- ${name} -->`);
  assert.ok(at >= 0, `docs/operations.md has no <!-- ${name} --> block`);
  const fence = /```yaml\n([\s\S]*?)\n```/.exec(text.slice(at));
  assert.ok(fence?.[1] !== undefined, `no yaml block after <!-- ${name} -->`);
  return parse(fence[1]);
}

function pod(name: string, subset: string): Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      creationTimestamp: formatTime(T0 - 600_000),
      labels: { 'pod-template-hash': 'h1' },
      annotations: { 'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'web-spread', subset }) },
    },
    spec: { containers: [{ name: 'main' }], nodeName: 'n1' },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

const base: WorkloadSpread = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'WorkloadSpread',
  metadata: { name: 'web-spread', namespace: 'default', generation: 2 },
  spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: 2 }, { name: 'b' }] },
};

/** `base` with the status the controller computes for these pods and replicas. */
function reconciled(pods: Pod[], workloadReplicas: number): WorkloadSpread {
  const plan = planReconcile({ ws: base, pods, nodeByName: () => undefined, workloadReplicas, latestVersion: 'h1', now: T0, writeDeletionCost: false });
  return { ...base, status: plan.status };
}

/** name → [the object, Argo CD's expected health, Flux: current, Flux: failed]. */
const CASES: Record<string, [WorkloadSpread, string, boolean | 'error', boolean | 'error']> = {
  ready: [reconciled([pod('p1', 'a'), pod('p2', 'a'), pod('p3', 'b')], 3), 'Healthy', true, false],
  converging: [reconciled([pod('p1', 'a'), pod('p2', 'a'), pod('p3', 'b')], 5), 'Progressing', false, false],
  'over its limit': [reconciled([pod('p1', 'a'), pod('p2', 'a'), pod('p3', 'a')], 3), 'Degraded', false, true],
  duplicate: [
    {
      ...base,
      status: duplicateReadiness(base, { observedGeneration: 2, conditions: [{ type: 'DuplicateTarget', status: 'True', reason: 'OlderWorkloadSpreadExists', message: 'spread by first' }] }, T0),
    },
    'Degraded',
    false,
    true,
  ],
  'an older generation': [{ ...reconciled([pod('p1', 'a'), pod('p2', 'a'), pod('p3', 'b')], 3), metadata: { ...base.metadata, generation: 3 } }, 'Progressing', false, false],
  'no status yet': [base, 'Progressing', 'error', 'error'],
};

function lua(): string | undefined {
  for (const bin of ['lua5.4', 'lua']) {
    const r = spawnSync(bin, ['-v'], { encoding: 'utf8' });
    if (r.status === 0 && /Lua 5\.[34]/.test(`${r.stdout}${r.stderr}`)) return bin;
  }
  return undefined;
}

/** A Lua table constructor for a JSON value. */
function toLua(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  if (typeof v === 'string') return `"${[...v].map((ch) => (/^[ -~]$/.test(ch) && ch !== '"' && ch !== '\\' ? ch : `\\u{${(ch.codePointAt(0) ?? 0).toString(16)}}`)).join('')}"`;
  if (Array.isArray(v)) return `{${v.map(toLua).join(', ')}}`;
  return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `[${toLua(k)}] = ${toLua(x)}`).join(', ')}}`;
}

describe('the health checks of docs/operations.md', () => {
  const luaBin = lua();
  test('Argo CD: the Lua health check maps Ready to Healthy, Stalled to Degraded, the rest to Progressing', { skip: luaBin === undefined ? 'no lua5.4 on PATH' : false }, () => {
    const cm = docBlock('argocd-health-lua') as { data: Record<string, string> };
    const script = cm.data['resource.customizations.health.apps.kruise.io_WorkloadSpread'];
    assert.ok(script !== undefined, 'the argocd-cm key');
    for (const [name, [obj, health]] of Object.entries(CASES)) {
      const program: string = `obj = ${toLua(obj)}\nlocal function check()\n${script}\nend\nlocal hs = check()\nio.write(hs.status, "\\t", hs.message)\n`;
      const r: SpawnSyncReturns<string> = spawnSync(luaBin as string, ['-'], { input: program, encoding: 'utf8' });
      assert.equal(r.status, 0, `${name}: ${r.stderr}`);
      const [status, message] = r.stdout.split('\t');
      assert.equal(status, health, `${name}: ${message}`);
      assert.ok((message ?? '') !== '', `${name}: a message`);
    }
  });

  test('Flux: the CEL health check expressions (cel-js) — current only when Ready for this generation, failed when Stalled', () => {
    const spec = docBlock('flux-health-cel') as { spec: { healthCheckExprs: { apiVersion: string; kind: string; current: string; failed: string }[] } };
    const [check] = spec.spec.healthCheckExprs;
    assert.ok(check !== undefined);
    assert.deepEqual([check.apiVersion, check.kind], ['apps.kruise.io/v1alpha1', 'WorkloadSpread']);
    const env = new Environment({ enableOptionalTypes: true, unlistedVariablesAreDyn: true });
    const evaluate = (expr: string, obj: WorkloadSpread): boolean | 'error' => {
      try {
        const out: unknown = env.evaluate(expr, { ...obj });
        assert.equal(typeof out, 'boolean', expr);
        return out as boolean;
      } catch {
        return 'error';
      }
    };
    for (const [name, [obj, , current, failed]] of Object.entries(CASES)) {
      assert.equal(evaluate(check.current, obj), current, `${name}: current`);
      assert.equal(evaluate(check.failed, obj), failed, `${name}: failed`);
    }
  });
});
