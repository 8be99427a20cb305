/**
 * Test support for `workloadspread simulate`: the command run in-process on a
 * captured terminal (no process signal handlers), and the small scenario the
 * command's tests start from. Not used by production code.
 */
import assert from 'node:assert/strict';
import type { ServingCertificate } from '../client/loopback-certificates.ts';
import { runSimulate, type SimulateOptions } from '../cli/simulate.ts';
import type { RaceReport } from '../sim/index.ts';
import { captureIo, type CapturedIo } from './cli-io.ts';

/**
 * Two nodes in zones a and b, a WorkloadSpread (a at most 2, b the rest) over
 * a Deployment of 3 replicas; no steps (append `steps:` and yours).
 */
export const SMALL_SCENARIO = `
name: small
nodes:
  - {namePrefix: zone-a-, count: 1, labels: {zone: a}}
  - {namePrefix: zone-b-, count: 1, labels: {zone: b}}
objects:
  - apiVersion: apps.kruise.io/v1alpha1
    kind: WorkloadSpread
    metadata: {name: ws}
    spec:
      targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      subsets:
        - {name: a, maxReplicas: 2, requiredNodeSelectorTerm: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}
        - {name: b, requiredNodeSelectorTerm: {matchExpressions: [{key: zone, operator: In, values: [b]}]}}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: main, image: nginx}]}}}
`;

export interface SimulateRun {
  code: number;
  io: CapturedIo;
  /** The race report, when the run played races. */
  report: RaceReport | undefined;
}

/** Runs `simulate` with `files` readable, a never-aborted signal unless given; a run never prints a stack trace. */
export async function simulateCli(certificate: ServingCertificate, options: SimulateOptions, files: Record<string, string> = {}, signal = new AbortController().signal): Promise<SimulateRun> {
  const io = captureIo(files);
  let report: RaceReport | undefined;
  const code = await runSimulate(options, io, { certificate, signal, onRaceReport: (r) => (report = r) });
  assert.doesNotMatch(io.stderr, /\n\s+at /, 'no stack trace');
  return { code, io, report };
}
