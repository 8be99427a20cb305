import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { DEMO_FILES, demoScenario, demoFrame } from './demo.ts';
import { runScenario, type Snapshot } from './runner.ts';
test('try', async () => {
  const t0 = Date.now();
  const r = demoScenario(DEMO_FILES.map((p) => ({ path: p, text: readFileSync(p, 'utf8') })));
  if (!r.ok) throw new Error(r.error);
  let prev: Snapshot | undefined;
  const res = await runScenario(r.demo.scenario, {
    onSetup: (s) => { console.log('SETUP', Date.now() - t0, JSON.stringify(demoFrame(undefined, s))); prev = s; },
    onStep: (s) => {
      if (s.action === 'expect') { console.log('  expect', s.expectations.map((e) => `${e.ok} ${e.path} ${JSON.stringify(e.actual)}`).join('; ')); return; }
      console.log('STEP', s.step, s.action, Date.now() - t0, s.time, JSON.stringify(demoFrame(prev, s)));
      prev = s;
    },
  });
  console.log('done', res.ok, res.error, Date.now() - t0);
});
