/**
 * The import rule (DESIGN.md, docs/adr/0009) is enforced by dependency-cruiser
 * with `.dependency-cruiser.cjs`. These tests run that exact configuration on
 * scratch trees with one planted violation each — an upward import, a
 * sideways import between webhook and controller, a file cycle (also through
 * `import type`), I/O in a pure layer, production code importing test
 * support, an import past the embedded cluster's or the simulator's door
 * (from production code, a test, the test kit, a benchmark) — and require it
 * to name the rule and the files; a clean scratch tree and this repository's
 * own src/, bench/ and scripts/ must pass.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const config = join(repo, '.dependency-cruiser.cjs');
const depcruise = join(repo, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const scratch: string[] = [];
const require = createRequire(import.meta.url);

after(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

interface Violation {
  rule: string;
  from: string;
  to: string;
}

interface Cruised {
  status: number | null;
  violations: Violation[];
  /** Every import seen: importing file → imported files. */
  imports: Map<string, string[]>;
  output: string;
}

/** What `npm run lint:imports` cruises (the folders of them that exist in `dir`). */
const TARGETS = ['src', 'bench', 'scripts'];

/**
 * Runs the project's rules on `dir` (cwd) as `npm run lint:imports` does (its exit code and
 * output), and again with the JSON reporter for the violations and imports in detail.
 */
function cruise(dir: string): Cruised {
  const targets = TARGETS.filter((t) => existsSync(join(dir, t)));
  const plain = spawnSync(process.execPath, [depcruise, ...targets, '--config', config], { cwd: dir, encoding: 'utf8' });
  const json = spawnSync(process.execPath, [depcruise, ...targets, '--config', config, '--output-type', 'json'], { cwd: dir, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  let violations: Violation[] = [];
  const imports = new Map<string, string[]>();
  try {
    const report = JSON.parse(json.stdout) as {
      modules: { source: string; dependencies: { resolved: string }[] }[];
      summary: { violations: { rule: { name: string }; from: string; to: string }[] };
    };
    violations = report.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
    for (const m of report.modules) imports.set(m.source, m.dependencies.map((d) => d.resolved));
  } catch {
    // Not JSON: the assertions show the plain output.
  }
  return { status: plain.status, violations, imports, output: `${plain.stdout}${plain.stderr}` };
}

/** A scratch project: the repository's tsconfig and the given files under it. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ws-import-rules-'));
  scratch.push(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', type: 'module', private: true }));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: true, noEmit: true, strict: true } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/**
 * A small tree that follows every rule: core → api → k8s, webhook → core, a test that imports
 * test support; the embedded cluster and the simulator entered through their doors (by the
 * simulator, the CLI, the test kit, a test and a benchmark), their own files and tests importing
 * one another, the cluster's own test support, and a benchmark on the cluster's white-box list.
 */
const CLEAN: Record<string, string> = {
  'src/k8s/json.ts': 'export const isObject = (v: unknown): boolean => typeof v === "object" && v !== null;\n',
  'src/api/keys.ts': 'import { isObject } from "../k8s/json.ts";\nexport const KEY = isObject({}) ? "k" : "";\n',
  'src/core/choice.ts': 'import { KEY } from "../api/keys.ts";\nexport const choose = (): string => KEY;\n',
  'src/webhook/handler.ts': 'import { choose } from "../core/choice.ts";\nexport const handle = (): string => choose();\n',
  'src/testing/kit.ts': 'import { handle } from "../webhook/handler.ts";\nexport const run = (): string => handle();\n',
  'src/webhook/handler.test.ts': 'import { run } from "../testing/kit.ts";\nrun();\n',
  'src/cluster/apiserver/store.ts': 'import { isObject } from "../../k8s/json.ts";\nexport const store = (): boolean => isObject({});\n',
  'src/cluster/cluster.ts': 'import { store } from "./apiserver/store.ts";\nexport const startCluster = (): boolean => store();\n',
  'src/cluster/index.ts': 'export { startCluster } from "./cluster.ts";\n',
  'src/cluster/apiserver/store.test.ts': 'import { store } from "./store.ts";\nimport { nodes } from "../testing/fixtures.ts";\nstore();\nnodes();\n',
  'src/cluster/testing/fixtures.ts': 'import { store } from "../apiserver/store.ts";\nexport const nodes = (): boolean => store();\n',
  'src/sim/runner.ts': 'import { startCluster } from "../cluster/index.ts";\nexport const runScenario = (): boolean => startCluster();\n',
  'src/sim/index.ts': 'export { runScenario } from "./runner.ts";\n',
  'src/sim/runner.test.ts': 'import { runScenario } from "./runner.ts";\nrunScenario();\n',
  'src/cli/simulate.ts': 'import { runScenario } from "../sim/index.ts";\nexport const simulate = (): boolean => runScenario();\n',
  'src/testing/cluster-bed.ts': 'import { startCluster } from "../cluster/index.ts";\nexport const bed = (): boolean => startCluster();\n',
  'src/manager/manager.test.ts': 'import { startCluster } from "../cluster/index.ts";\nimport { bed } from "../testing/cluster-bed.ts";\nstartCluster();\nbed();\n',
  'bench/cluster-scale-up.ts': 'import { startCluster } from "../src/cluster/index.ts";\nstartCluster();\n',
  'bench/match-conditions.ts': 'import { store } from "../src/cluster/apiserver/store.ts";\nstore();\n',
};

function expectViolation(files: Record<string, string>, expected: Violation): void {
  expectViolations(files, [expected]);
}

/** Plants `files` in a clean tree; every one of `expected` must be reported. */
function expectViolations(files: Record<string, string>, expected: readonly Violation[]): void {
  const result = cruise(tree({ ...CLEAN, ...files }));
  assert.notEqual(result.status, 0, `the violation was not reported:\n${result.output}`);
  for (const e of expected) {
    assert.ok(
      result.violations.some((v) => v.rule === e.rule && v.from === e.from && v.to === e.to),
      `expected ${JSON.stringify(e)} among ${JSON.stringify(result.violations)}`,
    );
  }
}

describe('the import rule (dependency-cruiser)', () => {
  it('passes a tree that follows it (tests may import src/testing)', () => {
    const result = cruise(tree(CLEAN));
    assert.equal(result.status, 0, result.output);
    assert.deepEqual(result.violations, []);
  });

  it('fails an upward import: core importing the webhook', () => {
    expectViolation(
      { 'src/core/bad.ts': 'import { handle } from "../webhook/handler.ts";\nexport const x = handle;\n' },
      { rule: 'layer-core', from: 'src/core/bad.ts', to: 'src/webhook/handler.ts' },
    );
  });

  it('fails a sideways import: the controller importing the webhook', () => {
    expectViolation(
      { 'src/controller/bad.ts': 'import { handle } from "../webhook/handler.ts";\nexport const x = handle;\n' },
      { rule: 'layer-controller', from: 'src/controller/bad.ts', to: 'src/webhook/handler.ts' },
    );
  });

  it('fails the manager importing the embedded cluster', () => {
    expectViolation(
      {
        'src/cluster/cluster.ts': 'export const start = (): number => 1;\n',
        'src/manager/bad.ts': 'import { start } from "../cluster/cluster.ts";\nexport const x = start;\n',
      },
      { rule: 'layer-manager', from: 'src/manager/bad.ts', to: 'src/cluster/cluster.ts' },
    );
  });

  it('fails a cycle between two files, also when one side is a type-only import', () => {
    expectViolation(
      {
        'src/k8s/a.ts': 'import type { B } from "./b.ts";\nexport interface A { b?: B }\n',
        'src/k8s/b.ts': 'import type { A } from "./a.ts";\nexport interface B { a?: A }\n',
      },
      { rule: 'no-circular', from: 'src/k8s/a.ts', to: 'src/k8s/b.ts' },
    );
  });

  it('fails a cycle through three files', () => {
    expectViolation(
      {
        'src/sim/a.ts': 'import { b } from "./b.ts";\nexport const a = (): number => b();\n',
        'src/sim/b.ts': 'import { c } from "./c.ts";\nexport const b = (): number => c();\n',
        'src/sim/c.ts': 'import { a } from "./a.ts";\nexport const c = (): number => (a ? 1 : 0);\n',
      },
      { rule: 'no-circular', from: 'src/sim/a.ts', to: 'src/sim/b.ts' },
    );
  });

  it('fails I/O in a pure layer', () => {
    expectViolation(
      { 'src/core/io.ts': 'import { readFileSync } from "node:fs";\nexport const read = (): string => readFileSync("x", "utf8");\n' },
      { rule: 'pure-layers-no-io', from: 'src/core/io.ts', to: 'fs' },
    );
  });

  it('fails production code importing test support', () => {
    expectViolation(
      { 'src/webhook/uses-kit.ts': 'import { run } from "../testing/kit.ts";\nexport const x = run;\n' },
      { rule: 'production-not-to-testing', from: 'src/webhook/uses-kit.ts', to: 'src/testing/kit.ts' },
    );
  });

  it("fails every import behind the embedded cluster's door from outside the folder: production code, a type-only import, a test, the test kit, a benchmark, a script", () => {
    expectViolations(
      {
        'src/sim/deep.ts': 'import { store } from "../cluster/apiserver/store.ts";\nexport const x = store;\n',
        'src/cli/deep.ts': 'import type { startCluster } from "../cluster/cluster.ts";\nexport type X = typeof startCluster;\n',
        'src/client/deep.test.ts': 'import { startCluster } from "../cluster/cluster.ts";\nstartCluster();\n',
        'src/webhook/fixtures.test.ts': 'import { nodes } from "../cluster/testing/fixtures.ts";\nnodes();\n',
        'src/testing/deep-bed.ts': 'import { store } from "../cluster/apiserver/store.ts";\nexport const x = store;\n',
        'bench/deep.ts': 'import { store } from "../src/cluster/apiserver/store.ts";\nstore();\n',
        'scripts/deep.ts': 'import { startCluster } from "../src/cluster/cluster.ts";\nstartCluster();\n',
      },
      [
        { rule: 'cluster-door', from: 'src/sim/deep.ts', to: 'src/cluster/apiserver/store.ts' },
        { rule: 'cluster-door', from: 'src/cli/deep.ts', to: 'src/cluster/cluster.ts' },
        { rule: 'cluster-door', from: 'src/client/deep.test.ts', to: 'src/cluster/cluster.ts' },
        { rule: 'cluster-door', from: 'src/webhook/fixtures.test.ts', to: 'src/cluster/testing/fixtures.ts' },
        { rule: 'cluster-door', from: 'src/testing/deep-bed.ts', to: 'src/cluster/apiserver/store.ts' },
        { rule: 'cluster-door', from: 'bench/deep.ts', to: 'src/cluster/apiserver/store.ts' },
        { rule: 'cluster-door', from: 'scripts/deep.ts', to: 'src/cluster/cluster.ts' },
      ],
    );
  });

  it("fails the CLI importing a file behind the simulator's door", () => {
    expectViolation(
      { 'src/cli/deep.ts': 'import { runScenario } from "../sim/runner.ts";\nexport const x = runScenario;\n' },
      { rule: 'sim-door', from: 'src/cli/deep.ts', to: 'src/sim/runner.ts' },
    );
  });

  it("fails production code importing a part's own test support", () => {
    expectViolation(
      { 'src/cluster/uses-fixtures.ts': 'import { nodes } from "./testing/fixtures.ts";\nexport const x = nodes;\n' },
      { rule: 'production-not-to-testing', from: 'src/cluster/uses-fixtures.ts', to: 'src/cluster/testing/fixtures.ts' },
    );
  });

  it("passes this repository's src/, bench/ and scripts/; only the white-box files reach behind a door", () => {
    const result = cruise(repo);
    assert.equal(result.status, 0, result.output);
    assert.deepEqual(result.violations, []);
    // The white-box list stays exact: each file on it exists and still names an internal file
    // (one that no longer does must come off the list), and nothing else outside reaches in.
    const doorRule = (part: string) => (require(config) as { forbidden: { name: string; from: { pathNot: string[] } }[] }).forbidden.find((r) => r.name === `${part}-door`);
    for (const part of ['cluster', 'sim']) {
      const rule = doorRule(part);
      assert.ok(rule !== undefined, `no rule ${part}-door`);
      const listed = rule.from.pathNot.slice(1).map((re) => re.replace(/^\^/, '').replace(/\$$/, '').replace(/\\(.)/g, '$1'));
      const reachingIn = [...result.imports]
        .filter(([from, to]) => !from.startsWith(`src/${part}/`) && to.some((t) => t.startsWith(`src/${part}/`) && t !== `src/${part}/index.ts`))
        .map(([from]) => from)
        .sort();
      assert.deepEqual(reachingIn, [...listed].sort(), `files outside src/${part}/ that import behind its door`);
    }
  });
});
