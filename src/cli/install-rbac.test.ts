/**
 * The RBAC keeps up with the code: every Kubernetes resource the manager's modules name (a `BUILTIN`
 * ref of the client, or a ResourceRef constant exported by src/kube, src/webhook, src/controller or
 * src/manager) must be covered by a rule of install-rbac.ts. A module that starts reading or writing a
 * new resource fails here until its permission is added (to install-rbac.ts and the chart's
 * templates/rbac.yaml, which chart.test.ts keeps equal). This test guards against a forgotten resource;
 * the verbs are checked by running the end-to-end stories as the chart's ServiceAccount on the
 * embedded cluster, which enforces RBAC, and by src/manager/rbac-ablation.e2e.test.ts (each verb needed).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILTIN, type ResourceRef } from '../client/resources.ts';
import { managerClusterRules, managerNamespaceRules, type PolicyRule } from './install-rbac.ts';
import { rbacOptions } from './install-manifests.ts';
import { defaultInstallValues } from './install-values.ts';

const MANAGER_DIRS = ['src/kube', 'src/webhook', 'src/controller', 'src/manager'];
/** The client modules the manager runs (the rest of src/client is generic machinery). */
const MANAGER_CLIENT_FILES = ['src/client/leader-election.ts', 'src/client/event-recorder.ts'];

function isProductionSource(file: string): boolean {
  return file.endsWith('.ts') && !file.endsWith('.test.ts') && !/-kit\.ts$/.test(file);
}

function managerFiles(): string[] {
  const files = [...MANAGER_CLIENT_FILES];
  for (const dir of MANAGER_DIRS) for (const f of readdirSync(dir)) if (isProductionSource(f)) files.push(join(dir, f));
  return files;
}

function isResourceRef(v: unknown): v is ResourceRef {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r['group'] === 'string' && typeof r['version'] === 'string' && typeof r['resource'] === 'string' && typeof r['kind'] === 'string' && typeof r['namespaced'] === 'boolean';
}

function covered(rules: PolicyRule[], ref: ResourceRef): boolean {
  return rules.some((r) => r.apiGroups.includes(ref.group) && r.resources.includes(ref.resource));
}

describe('RBAC covers every resource the manager code names', () => {
  test('each BUILTIN ref and exported ResourceRef used by the manager has a rule', async () => {
    const values = defaultInstallValues();
    const rules = [...managerClusterRules(rbacOptions(values)), ...managerNamespaceRules(rbacOptions(values))];
    const files = managerFiles();
    const exported = new Map<string, ResourceRef>();
    for (const file of files) {
      const mod = (await import(pathToFileURL(join(process.cwd(), file)).href)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod)) if (isResourceRef(value)) exported.set(name, value);
    }
    const used = new Map<string, { ref: ResourceRef; files: Set<string> }>();
    const note = (key: string, ref: ResourceRef, file: string) => {
      const entry = used.get(key) ?? { ref, files: new Set<string>() };
      entry.files.add(file);
      used.set(key, entry);
    };
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\bBUILTIN\.(\w+)/g)) {
        const ref = (BUILTIN as Record<string, ResourceRef>)[m[1]!];
        assert.ok(ref, `${file}: BUILTIN.${m[1]} is not a known ref`);
        note(`BUILTIN.${m[1]}`, ref, file);
      }
      for (const [name, ref] of exported) if (new RegExp(`\\b${name}\\b`).test(text)) note(name, ref, file);
    }
    // The scan must see the resources we know the manager uses, or it proves nothing.
    for (const known of ['BUILTIN.pods', 'BUILTIN.leases', 'BUILTIN.secrets', 'WORKLOADSPREAD_REF', 'CLONESET_REF']) assert.ok(used.has(known), `the scan missed ${known}`);
    const missing = [...used].filter(([, u]) => !covered(rules, u.ref)).map(([name, u]) => `${name} (${u.ref.group || 'core'}/${u.ref.resource}) used in ${[...u.files].join(', ')}`);
    assert.deepEqual(missing, [], 'add a rule to src/cli/install-rbac.ts and charts/workloadspread/templates/rbac.yaml');
  });
});
