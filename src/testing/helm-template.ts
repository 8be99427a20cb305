/**
 * `helm template` for this project's chart, without Helm (there is no Go
 * toolchain or helm binary here). Loads a chart directory, merges values the
 * way Helm does, validates them against `values.schema.json`, renders every
 * file under `templates/` with the Go-template subset of go-template-*.ts and
 * returns the manifests per file, plus a helper that parses them into objects.
 *
 * Helm behaviour reproduced (facts, not code):
 * - values: the chart's `values.yaml` overlaid by the user's; maps merge key
 *   by key, anything else is replaced, and a user `null` removes the key;
 * - the schema is checked against the merged values before rendering;
 * - templates are named `<chart>/templates/<path>`; files whose name starts
 *   with `_` only contribute `define`s; `NOTES.txt` is rendered apart;
 *   every `define` of every file is visible to every file;
 * - `.Values` is a map (missing keys are nil); `.Release`, `.Chart`,
 *   `.Capabilities`, `.Template` are structs (unknown fields are errors);
 *   `.Chart` fields are Chart.yaml's keys capitalised (`AppVersion`,
 *   `APIVersion`); `.Capabilities.APIVersions.Has "policy/v1"` is a method;
 * - the text `<no value>` (a nil printed by an action) is removed from the
 *   output; `crds/` is not templated (Helm applies it verbatim).
 * Not supported (fails loudly): `.Files`, `lookup`, `tpl`, subcharts.
 * Start at `loadChart`, then `renderChart`, then `renderedObjects`.
 */
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import * as AjvModule from 'ajv';
import type { Ajv as AjvClass } from 'ajv';
import { parse } from 'yaml';
import { setProperty } from '../k8s/json.ts';
import { parseManifests } from '../k8s/yaml.ts';
import type { KubeObject } from '../k8s/types.ts';
import { executeTemplate } from './go-template-exec.ts';
import { goStruct, isFunction } from './go-template-funcs.ts';
import { parseTemplate, type TemplateNode } from './go-template-parse.ts';

// ajv ships CommonJS with `exports.default`; under NodeNext the default import is the module object.
const Ajv = (AjvModule as unknown as { Ajv: typeof AjvClass }).Ajv;

export interface ChartFile {
  /** Path relative to the chart directory, with `/` separators. */
  path: string;
  content: string;
}

export interface Chart {
  dir: string;
  /** Chart.yaml as read. */
  metadata: Record<string, unknown>;
  /** values.yaml (the defaults). */
  values: Record<string, unknown>;
  schema: object | undefined;
  templates: ChartFile[];
  crds: ChartFile[];
}

export interface ReleaseOptions {
  name?: string;
  namespace?: string;
  revision?: number;
  isUpgrade?: boolean;
}

export interface RenderOptions {
  /** User values (`-f values.yaml` / `--set`), overlaid on the chart's defaults. */
  values?: Record<string, unknown>;
  release?: ReleaseOptions;
  /** `--kube-version` (default v1.31.0). */
  kubeVersion?: string;
  /** `--api-versions`, added to the built-in group-versions. */
  apiVersions?: string[];
}

export type RenderResult =
  | { ok: true; manifests: Map<string, string>; notes: string | undefined; values: Record<string, unknown> }
  | { ok: false; error: string };

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function walkFiles(dir: string, root: string): ChartFile[] {
  if (!existsSync(dir)) return [];
  const out: ChartFile[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...walkFiles(path, root));
    else out.push({ path: relative(root, path).split(sep).join('/'), content: readFileSync(path, 'utf8') });
  }
  return out;
}

/** Reads a chart directory (Chart.yaml, values.yaml, values.schema.json, templates/, crds/). */
export function loadChart(dir: string): Chart {
  const metadata = parse(readFileSync(join(dir, 'Chart.yaml'), 'utf8'), { version: '1.1' }) as unknown;
  if (!isMap(metadata)) throw new Error(`${dir}/Chart.yaml is not a map`);
  const valuesPath = join(dir, 'values.yaml');
  const values = existsSync(valuesPath) ? (parse(readFileSync(valuesPath, 'utf8'), { version: '1.1' }) as unknown) ?? {} : {};
  if (!isMap(values)) throw new Error(`${dir}/values.yaml is not a map`);
  const schemaPath = join(dir, 'values.schema.json');
  const schema = existsSync(schemaPath) ? (JSON.parse(readFileSync(schemaPath, 'utf8')) as object) : undefined;
  return { dir, metadata, values, schema, templates: walkFiles(join(dir, 'templates'), dir), crds: walkFiles(join(dir, 'crds'), dir) };
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** Helm's coalescing: user values win, maps merge per key, a user null deletes the default. */
export function coalesceValues(defaults: Record<string, unknown>, user: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = clone(user);
  for (const [key, def] of Object.entries(defaults)) {
    if (!Object.prototype.hasOwnProperty.call(out, key)) {
      setProperty(out, key, clone(def));
      continue;
    }
    const mine = out[key];
    if (mine === null) delete out[key];
    else if (isMap(mine) && isMap(def)) setProperty(out, key, coalesceValues(def, mine));
  }
  return out;
}

function validateValues(schema: object, values: Record<string, unknown>, chartName: string): string | undefined {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(schema);
  if (validate(values)) return undefined;
  const lines = (validate.errors ?? []).map((e) => {
    const path = e.instancePath === '' ? '(root)' : e.instancePath.slice(1).replace(/\//g, '.');
    return `- ${path}: ${e.message ?? 'invalid'}${e.params && 'allowedValues' in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`;
  });
  return `values don't meet the specifications of the schema(s) in the following chart(s):\n${chartName}:\n${lines.join('\n')}`;
}

/** Chart.yaml keys as Helm's `.Chart` struct names them. */
function chartStruct(metadata: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const names: Record<string, string> = { apiVersion: 'APIVersion', appVersion: 'AppVersion', kubeVersion: 'KubeVersion' };
  for (const key of ['name', 'version', 'appVersion', 'apiVersion', 'description', 'type', 'kubeVersion', 'home', 'icon', 'keywords', 'sources', 'maintainers', 'annotations', 'deprecated', 'dependencies']) {
    const goName = names[key] ?? key.charAt(0).toUpperCase() + key.slice(1);
    fields[goName] = metadata[key] ?? (key === 'deprecated' ? false : key === 'keywords' || key === 'sources' || key === 'maintainers' || key === 'dependencies' ? undefined : '');
  }
  return goStruct(fields);
}

const BUILTIN_API_VERSIONS = [
  'v1',
  'apps/v1',
  'batch/v1',
  'policy/v1',
  'rbac.authorization.k8s.io/v1',
  'admissionregistration.k8s.io/v1',
  'coordination.k8s.io/v1',
  'events.k8s.io/v1',
  'networking.k8s.io/v1',
  'apiextensions.k8s.io/v1',
  'autoscaling/v2',
  'storage.k8s.io/v1',
  'scheduling.k8s.io/v1',
  'discovery.k8s.io/v1',
];

function capabilities(kubeVersion: string, extra: string[]): Record<string, unknown> {
  const m = /^v?(\d+)\.(\d+)/.exec(kubeVersion);
  if (m === null) throw new Error(`kube version ${JSON.stringify(kubeVersion)} is not vMAJOR.MINOR[.PATCH]`);
  const versions = new Set([...BUILTIN_API_VERSIONS, ...extra]);
  const version = kubeVersion.startsWith('v') ? kubeVersion : `v${kubeVersion}`;
  return goStruct({
    KubeVersion: goStruct({ Version: version, GitVersion: version, Major: m[1], Minor: m[2] }),
    // `Has "group/version"` or `Has "group/version/Kind"` (the kind of a known group-version counts as known).
    APIVersions: goStruct({ Has: (v: unknown) => typeof v === 'string' && (versions.has(v) || versions.has(v.slice(0, v.lastIndexOf('/')))) }),
    HelmVersion: goStruct({ Version: 'v3.16.0' }),
  });
}

const isPartial = (path: string): boolean => (path.split('/').pop() ?? '').startsWith('_');
const isNotes = (path: string): boolean => path.split('/').pop() === 'NOTES.txt';

/** Renders every template of the chart; errors (values, schema, templates) come back as data. */
export function renderChart(chart: Chart, options: RenderOptions = {}): RenderResult {
  const chartName = String(chart.metadata['name'] ?? '');
  const values = coalesceValues(chart.values, options.values ?? {});
  if (chart.schema !== undefined) {
    const problem = validateValues(chart.schema, values, chartName);
    if (problem !== undefined) return { ok: false, error: problem };
  }
  try {
    const parsed = chart.templates.map((t) => ({ path: t.path, name: `${chartName}/${t.path}`, tree: parseTemplate(t.content, `${chartName}/${t.path}`, isFunction) }));
    const defines = new Map<string, TemplateNode[]>();
    for (const p of parsed) for (const [name, body] of p.tree.defines) defines.set(name, body);
    const release = options.release ?? {};
    const top = (name: string) =>
      goStruct({
        Values: values,
        Release: goStruct({
          Name: release.name ?? 'release-name',
          Namespace: release.namespace ?? 'default',
          Revision: BigInt(release.revision ?? 1),
          IsInstall: release.isUpgrade !== true,
          IsUpgrade: release.isUpgrade === true,
          Service: 'Helm',
        }),
        Chart: chartStruct(chart.metadata),
        Capabilities: capabilities(options.kubeVersion ?? 'v1.31.0', options.apiVersions ?? []),
        Template: goStruct({ Name: name, BasePath: `${chartName}/templates` }),
      });
    const manifests = new Map<string, string>();
    let notes: string | undefined;
    for (const p of parsed) {
      if (isPartial(p.path)) continue;
      const text = executeTemplate(p.tree.body, top(p.name), { name: p.name, defines }).replaceAll('<no value>', '');
      if (isNotes(p.path)) notes = text;
      else manifests.set(p.path, text);
    }
    return { ok: true, manifests, notes, values };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

export interface RenderedObject {
  /** The template file it came from (`templates/deployment.yaml`). */
  source: string;
  object: KubeObject;
}

/** Parses every rendered manifest (YAML 1.1, `---`-separated, empty documents dropped). */
export function renderedObjects(manifests: ReadonlyMap<string, string>): { ok: true; objects: RenderedObject[] } | { ok: false; error: string } {
  const objects: RenderedObject[] = [];
  for (const [source, text] of manifests) {
    const parsed = parseManifests(text, source);
    if (!parsed.ok) return { ok: false, error: parsed.error };
    for (const d of parsed.documents) objects.push({ source, object: d.object });
  }
  return { ok: true, objects };
}
