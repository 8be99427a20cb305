/**
 * The simulator's public surface, for the CLI and the demo: parse a scenario
 * file, run it (embedded cluster + real manager on a virtual clock, or an
 * existing cluster), and render the result as a table, JSON Lines or one
 * self-contained HTML file. Start at `runScenario` (runner.ts).
 */
export { parseScenario, scenarioFromValue, formatProblems, type Scenario, type ScenarioResult, type Problem } from './scenario.ts';
export { runScenario, type RunOptions, type ScenarioRunResult, type StepResult, type Snapshot, type ExpectationResult, type PodRecord, type WorkloadSpreadRecord, type EventRecord } from './runner.ts';
export { renderHtmlReport } from './html-report.ts';
export { renderTableReport, renderHeader, renderSetup, renderStep, renderSummary } from './report-table.ts';
export { jsonLine, stepJson } from './output-json.ts';
export { summarizeSpreads, type SpreadSummary, type SubsetSummary } from './spread-summary.ts';
export { describeAction, describeExpectation } from './describe.ts';
export type { BudgetRecord, BudgetDomainRecord } from './budget-observation.ts';
export type { EvictionRecord } from './drain.ts';
