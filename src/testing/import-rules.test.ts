/**
 * The import rule (DESIGN.md, docs/adr/0009) is enforced by dependency-cruiser
 * with `.dependency-cruiser.cjs`. These tests run that exact configuration on
 * scratch trees with one planted violation each — an upward import, a
 * sideways import between webhook and controller, a file cycle (also through
 * `import type`), I/O in a pure layer, production code importing test
 * support — and require it to name the rule and the files; a clean scratch
 * tree and this repository's own src/ must pass.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const config = join(repo, '.dependency-cruiser.cjs');
const depcruise = join(repo, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const scratch: string[] = [];

after(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

interface Violation {
  rule: string;
  from: string;
  to: string;
}

/**
 * Runs the project's rules on `dir` (cwd) over `target` as `npm test` does (its exit code and
 * output), and again with the JSON reporter for the violations in detail.
 */
function cruise(dir: string, target = 'src'): { status: number | null; violations: Violation[]; output: string } {
  const plain = spawnSync(process.execPath, [depcruise, target, '--config', config], { cwd: dir, encoding: 'utf8' });
  const json = spawnSync(process.execPath, [depcruise, target, '--config', config, '--output-type', 'json'], { cwd: dir, encoding: 'utf8' });
  let violations: Violation[] = [];
  try {
    const report = JSON.parse(json.stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
    violations = report.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
  } catch {
    // Not JSON: the assertions show the plain output.
  }
  return { status: plain.status, violations, output: `${plain.stdout}${plain.stderr}` };
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

/** A small tree that follows every rule: core → api → k8s, webhook → core, a test that imports test support. */
const CLEAN: Record<string, string> = {
  'src/k8s/json.ts': 'export const isObject = (v: unknown): boolean => typeof v === "object" && v !== null;\n',
  'src/api/keys.ts': 'import { isObject } from "../k8s/json.ts";\nexport const KEY = isObject({}) ? "k" : "";\n',
  'src/core/choice.ts': 'import { KEY } from "../api/keys.ts";\nexport const choose = (): string => KEY;\n',
  'src/webhook/handler.ts': 'import { choose } from "../core/choice.ts";\nexport const handle = (): string => choose();\n',
  'src/testing/kit.ts': 'import { handle } from "../webhook/handler.ts";\nexport const run = (): string => handle();\n',
  'src/webhook/handler.test.ts': 'import { run } from "../testing/kit.ts";\nrun();\n',
};

function expectViolation(files: Record<string, string>, expected: Violation): void {
  const result = cruise(tree({ ...CLEAN, ...files }));
  assert.notEqual(result.status, 0, `the violation was not reported:\n${result.output}`);
  assert.ok(
    result.violations.some((v) => v.rule === expected.rule && v.from === expected.from && v.to === expected.to),
    `expected ${JSON.stringify(expected)} among ${JSON.stringify(result.violations)}`,
  );
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

  it("passes this repository's src/", () => {
    const result = cruise(repo);
    assert.equal(result.status, 0, result.output);
    assert.deepEqual(result.violations, []);
  });
});
