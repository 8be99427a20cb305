/**
 * The real helm (and kubectl) for tests, from src/testing/k8s-tools.ts: run either binary
 * asynchronously (tests often run the API server in the same process, so a synchronous child
 * would deadlock it), render the chart with `helm template`, and read the values helm computes
 * for a set of overrides (its own coalescing: maps merge, `null` removes a default).
 *
 * Each call gets private helm directories (cache, config, data) under a temporary directory that
 * is removed afterwards, so nothing is read from or written to the user's home.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseManifests } from '../k8s/yaml.ts';
import type { KubeObject } from '../k8s/types.ts';
import { k8sTools } from './k8s-tools.ts';

export const CHART_DIR = 'charts/workloadspread';

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ToolOptions {
  /** KUBECONFIG for the child. */
  kubeconfig?: string;
  /** Text for the child's stdin. */
  input?: string;
  /** Kills the child after this long (default 120 s). */
  timeoutMs?: number;
  /** Directory for HOME and helm's cache/config/data (default: a fresh one, removed afterwards). */
  home?: string;
  /** More environment variables (e.g. PATH for a script). */
  env?: Record<string, string>;
}

/** Runs `binary args...` and collects its output; never rejects (a failure is a non-zero code). */
export function runTool(binary: string, args: readonly string[], options: ToolOptions = {}): Promise<ToolResult> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'ws-tool-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    HELM_CACHE_HOME: join(home, 'helm-cache'),
    HELM_CONFIG_HOME: join(home, 'helm-config'),
    HELM_DATA_HOME: join(home, 'helm-data'),
    KUBECONFIG: options.kubeconfig ?? join(home, 'no-kubeconfig'),
    ...options.env,
  };
  return new Promise((resolve) => {
    const child = execFile(binary, [...args], { env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (options.home === undefined) rmSync(home, { recursive: true, force: true });
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
    child.stdin?.end(options.input ?? '');
  });
}

export function helm(args: readonly string[], options: ToolOptions = {}): Promise<ToolResult> {
  return runTool(k8sTools().helm, args, options);
}

export function kubectl(args: readonly string[], options: ToolOptions = {}): Promise<ToolResult> {
  return runTool(k8sTools().kubectl, args, options);
}

export interface TemplateOptions {
  release?: string;
  namespace?: string;
  /** More `helm template` flags (e.g. `--validate`, `--kube-version`). */
  args?: string[];
  kubeconfig?: string;
  chartDir?: string;
}

/** `helm template` of the chart with `values` (written to a file and passed with `-f`). */
export async function helmTemplateRaw(values: Record<string, unknown> = {}, options: TemplateOptions = {}): Promise<ToolResult> {
  const dir = mkdtempSync(join(tmpdir(), 'ws-helm-values-'));
  try {
    writeFileSync(join(dir, 'values.json'), JSON.stringify(values));
    const args = ['template', options.release ?? 'ws', options.chartDir ?? CHART_DIR, '--namespace', options.namespace ?? 'workloadspread-system', '-f', join(dir, 'values.json'), ...(options.args ?? [])];
    return await helm(args, options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {});
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The objects `helm template` renders (throws with helm's message when it fails). */
export async function helmTemplate(values: Record<string, unknown> = {}, options: TemplateOptions = {}): Promise<KubeObject[]> {
  const r = await helmTemplateRaw(values, options);
  if (r.code !== 0) throw new Error(`helm template failed (${r.code}): ${r.stderr}`);
  const parsed = parseManifests(r.stdout);
  if (!parsed.ok) throw new Error(`helm template printed unparsable YAML: ${parsed.error}`);
  return parsed.documents.map((d) => d.object).filter((o) => o !== null && typeof o === 'object');
}

/** The values helm computes for these overrides: a copy of the chart with one template printing `.Values`. */
export async function helmValues(values: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'ws-helm-chart-'));
  try {
    cpSync(CHART_DIR, join(dir, 'chart'), { recursive: true });
    writeFileSync(join(dir, 'chart', 'templates', 'zz-values.yaml'), '{{ toJson .Values }}\n');
    const r = await helmTemplateRaw(values, { chartDir: join(dir, 'chart'), args: ['--show-only', 'templates/zz-values.yaml'] });
    if (r.code !== 0) throw new Error(`helm template failed (${r.code}): ${r.stderr}`);
    return parse(r.stdout.replace(/^---\n# Source: [^\n]*\n/, '')) as Record<string, unknown>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
