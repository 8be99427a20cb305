/**
 * The simulator's front door: the only module of src/sim/ that code outside
 * the folder imports (`.dependency-cruiser.cjs`, rule `sim-door`); the rest
 * of the folder is internal. It holds what the command line uses:
 *
 * - run a scenario: `parseScenario` (with `formatProblems` for its errors),
 *   then `runScenario` (embedded cluster + real manager on a virtual clock, or
 *   an existing cluster); start reading at runner.ts;
 * - render the result as it comes: a table (`renderHeader`, `renderSetup`,
 *   `renderStep`, `renderSummary`), JSON Lines (`setupJsonLine`, `jsonLine`)
 *   or one self-contained HTML file (`renderHtmlReport`);
 * - race mode (`simulate --races`): `runRaces` plays a scenario under several
 *   seeds and compares the runs; its reports as a table (`renderRaceHeader`,
 *   `renderRaceRun`, `renderRaceReport`, `raceSummaryLine`), one JSON
 *   document (`raceReportJson`) or HTML (`renderRaceHtmlReport`);
 * - the `demo` command's two stories (Deployment and CloneSet) and how a step
 *   is shown (`demoFrame`, `failedChecks`, `describeExpectation`).
 *
 * Helpers the CLI shares with the simulator but that need no scenario live in
 * the layers below, so a light command does not load the simulator:
 * k8s/duration.ts, k8s/node-specs.ts, k8s/deletion-cost-text.ts,
 * core/budget-records.ts.
 */
export { parseScenario, formatProblems, type Scenario } from './scenario.ts';
export { runScenario, type RunOptions, type ScenarioRunResult, type StepResult, type Snapshot } from './runner.ts';
export { renderHeader, renderSetup, renderStep, renderSummary } from './report-table.ts';
export { jsonLine, setupJsonLine } from './output-json.ts';
export { renderHtmlReport } from './html-report.ts';
export { runRaces, type RaceReport, type RaceRunOptions } from './race-runs.ts';
export { raceReportJson, raceSummaryLine, renderRaceHeader, renderRaceReport, renderRaceRun } from './race-report.ts';
export { renderRaceHtmlReport } from './race-html.ts';
export { DEMO_CHAPTERS, DEMO_NODES, DEPLOYMENT_DEMO, demoFrame, demoScenario, failedChecks, type DemoChapter, type DemoFrame } from './demo.ts';
export { CLONESET_DEMO, CLONESET_DEMO_CHAPTERS } from './cloneset-demo.ts';
export { describeExpectation } from './describe.ts';
