import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { validateWorkloadSpreadFull } from '../api/validation.ts';
import { EMPTY_WHITELIST } from '../api/whitelist.ts';
import { parseManifests } from '../k8s/yaml.ts';
import { CLONESET_DEMO, CLONESET_DEMO_CHAPTERS, CLONESET_DEMO_FILES } from './cloneset-demo.ts';
import { demoScenario } from './demo.ts';

const files = CLONESET_DEMO_FILES.map((path) => ({ path, text: readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8') }));

describe('the CloneSet demo scenario', () => {
  const built = demoScenario(files, CLONESET_DEMO);
  assert.ok(built.ok, built.ok ? '' : built.error);
  const { scenario, chapters } = built.demo;

  test('the bundled WorkloadSpread is valid as the webhook would validate it, against the bundled CloneSet', () => {
    const docs = files.flatMap((f) => {
      const parsed = parseManifests(f.text, f.path);
      assert.ok(parsed.ok);
      return parsed.documents.map((d) => d.object);
    });
    const ws = docs.find((d) => d.kind === 'WorkloadSpread');
    const workload = docs.find((d) => d.kind === 'CloneSet');
    assert.ok(ws !== undefined && workload !== undefined);
    assert.equal((ws['spec'] as { targetRef: { kind: string } }).targetRef.kind, 'CloneSet');
    assert.deepEqual(validateWorkloadSpreadFull(ws, { whitelist: EMPTY_WHITELIST, workload, others: [] }), []);
  });

  test('every chapter is checked by the step that follows it; the walk scales out, in, rolls out with a partition and finishes', () => {
    assert.equal(chapters.size, CLONESET_DEMO_CHAPTERS.length);
    for (const [index, chapter] of chapters) assert.equal(scenario.steps[index + 1]?.action.action, 'expect', chapter.title);
    const actions = scenario.steps.map((s) => s.action.action).filter((a) => a !== 'expect');
    assert.deepEqual(actions, ['scale', 'scale', 'patch', 'patch', 'scale']);
    assert.match(JSON.stringify(CLONESET_DEMO_CHAPTERS[2]?.steps), /"partition":3/);
  });
});
