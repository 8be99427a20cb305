/**
 * kubectl's output formats for commands that print objects (`status`, `manifests`), with
 * kubectl's spellings: `-o json`, `-o=json`, `-ojson`, `--output json`, `--output=json`.
 *
 * - `json` (indented by four spaces) and `yaml`: the object when one was asked for by name, a
 *   `v1` `List` of them otherwise, as `kubectl get` prints;
 * - `name`: `<resource>.<group>/<name>` per object, one a line (`workloadspread.apps.kruise.io/web`);
 * - `jsonpath=TEMPLATE`, `jsonpath-file=FILE` and `jsonpath-as-json=TEMPLATE`: kubectl's JSONPath
 *   (src/k8s/jsonpath.ts) over that same object or List, so `{.items[*].metadata.name}` works;
 *   `--template` supplies the template of a bare `-o jsonpath`; missing keys print nothing unless
 *   `--allow-missing-template-keys=false`;
 * - `custom-columns=HEADER:PATH,...` and `custom-columns-file=FILE` (a header line and a path line),
 *   kubectl's relaxed paths (`.metadata.name` or `{.metadata.name}`), `<none>` where a path
 *   selects nothing;
 * - `go-template`, `go-template-file`, `template` and `templatefile` are refused, naming jsonpath
 *   as the way to get the same: Go's template language is not reimplemented here.
 *
 * `parseOutput` checks the format (reading a template file) before the command does anything;
 * `renderObjects` prints.
 */
import { stringify } from 'yaml';
import { findResults, formatJsonPathValue, parseJsonPath, printJsonPath, relaxedJsonPath, type JsonPath } from '../k8s/jsonpath.ts';
import { CommandError, readInput, UsageError, type CliIo } from './io.ts';
import { alignColumns } from './style.ts';

export type ObjectFormat =
  | { kind: 'json' }
  | { kind: 'yaml' }
  | { kind: 'name' }
  | { kind: 'jsonpath'; source: string; template: JsonPath; asJson: boolean; allowMissingKeys: boolean }
  | { kind: 'custom-columns'; columns: { header: string; source: string; path: JsonPath }[]; allowMissingKeys: boolean };

/** A format of the command's own (`table`, `wide`) or an object format. */
export type OutputFormat = { kind: 'own'; name: string } | ObjectFormat;

export interface PrintedObject {
  /** The object printed by json, yaml, jsonpath and custom-columns. */
  object: Record<string, unknown>;
  /** What `-o name` prints: `workloadspread.apps.kruise.io/web`. */
  name: string;
}

const GO_TEMPLATES = new Set(['go-template', 'go-template-file', 'template', 'templatefile']);
const OBJECT_FORMATS = ['json', 'yaml', 'name', 'jsonpath=…', 'jsonpath-file=…', 'jsonpath-as-json=…', 'custom-columns=…', 'custom-columns-file=…'];

/** The `-o` values to offer in help and completion, after the command's own. */
export function outputChoices(own: readonly string[]): string[] {
  return [...own, 'json', 'yaml', 'name', 'jsonpath=', 'jsonpath-file=', 'jsonpath-as-json=', 'custom-columns=', 'custom-columns-file='];
}

export interface ParseOutputOptions {
  /** The command's own formats (the first is its default). */
  own: readonly string[];
  /** `--template`. */
  template?: string;
  /** `--allow-missing-template-keys` (default true). */
  allowMissingKeys?: boolean;
  io: CliIo;
  maxInputBytes: number;
}

function jsonPathTemplate(source: string, flag: string): JsonPath {
  const parsed = parseJsonPath(source);
  if (!parsed.ok) throw new UsageError(`${flag}: ${JSON.stringify(source)} is not a JSONPath template: ${parsed.error}`);
  return parsed.path;
}

function columns(spec: string, flag: string): { header: string; source: string; path: JsonPath }[] {
  if (spec.trim() === '') throw new UsageError(`${flag} needs at least one column, e.g. NAME:.metadata.name`);
  return spec.split(',').map((part) => {
    const colon = part.indexOf(':');
    if (colon <= 0) throw new UsageError(`${flag}: ${JSON.stringify(part)} is not HEADER:PATH (e.g. NAME:.metadata.name)`);
    const source = part.slice(colon + 1);
    const relaxed = relaxedJsonPath(source);
    if (!relaxed.ok) throw new UsageError(`${flag}: column ${JSON.stringify(part.slice(0, colon))}: ${relaxed.error}`);
    return { header: part.slice(0, colon), source, path: jsonPathTemplate(relaxed.template, flag) };
  });
}

/** Parses `-o` (see the module comment); usage errors name the flag and the problem. */
export async function parseOutput(value: string, options: ParseOutputOptions): Promise<OutputFormat> {
  const allowMissingKeys = options.allowMissingKeys ?? true;
  if (options.own.includes(value)) return { kind: 'own', name: value };
  if (value === 'json' || value === 'yaml' || value === 'name') return { kind: value };
  const eq = value.indexOf('=');
  const format = eq === -1 ? value : value.slice(0, eq);
  const argument = eq === -1 ? options.template : value.slice(eq + 1);
  if (GO_TEMPLATES.has(format)) {
    throw new UsageError(`--output ${format} is not supported: Go templates are not reimplemented here; use -o jsonpath=TEMPLATE (kubectl's JSONPath, e.g. -o jsonpath='{.items[*].metadata.name}') or -o json`);
  }
  if (format === 'jsonpath' || format === 'jsonpath-as-json' || format === 'jsonpath-file') {
    if (argument === undefined || argument === '') throw new UsageError(`--output ${format} needs a template: -o ${format}=${format === 'jsonpath-file' ? 'FILE' : "'{.items[*].metadata.name}'"}${format === 'jsonpath-file' ? '' : ' (or --template)'}`);
    const source = format === 'jsonpath-file' ? await readInput(options.io, argument, options.maxInputBytes) : argument;
    return { kind: 'jsonpath', source, template: jsonPathTemplate(source, `--output ${format}`), asJson: format === 'jsonpath-as-json', allowMissingKeys };
  }
  if (format === 'custom-columns' || format === 'custom-columns-file') {
    if (argument === undefined || argument === '') throw new UsageError(`--output ${format} needs ${format === 'custom-columns' ? 'columns: -o custom-columns=NAME:.metadata.name,...' : 'a file: -o custom-columns-file=FILE'}`);
    if (format === 'custom-columns') return { kind: 'custom-columns', columns: columns(argument, '--output custom-columns'), allowMissingKeys };
    const text = await readInput(options.io, argument, options.maxInputBytes);
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    if (lines.length !== 2) throw new UsageError(`--output custom-columns-file: ${argument} must hold two lines, the headers and the paths (got ${lines.length})`);
    const headers = (lines[0] as string).trim().split(/\s+/);
    const paths = (lines[1] as string).trim().split(/\s+/);
    if (headers.length !== paths.length) throw new UsageError(`--output custom-columns-file: ${argument} has ${headers.length} headers and ${paths.length} paths`);
    return { kind: 'custom-columns', columns: columns(headers.map((h, i) => `${h}:${paths[i] as string}`).join(','), '--output custom-columns-file'), allowMissingKeys };
  }
  throw new UsageError(`--output must be one of ${[...options.own, ...OBJECT_FORMATS].join(', ')}, got ${JSON.stringify(value)}`);
}

/** What json, yaml and jsonpath print: the object asked for by name, else a List (kubectl's `get`). */
export function printedDocument(objects: readonly PrintedObject[], single: boolean): Record<string, unknown> {
  if (single && objects.length === 1) return (objects[0] as PrintedObject).object;
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: objects.map((o) => o.object) };
}

function customColumns(format: Extract<ObjectFormat, { kind: 'custom-columns' }>, objects: readonly PrintedObject[]): string {
  const rows = objects.map((o) =>
    format.columns.map((c) => {
      const found = findResults(c.path, o.object, { allowMissingKeys: format.allowMissingKeys });
      if (!found.ok) throw new CommandError(`--output custom-columns: column ${c.header} (${c.source}): ${found.error}`, 1);
      const values = found.results.flat().filter((v) => v !== undefined && v !== null);
      return values.length === 0 ? '<none>' : values.map(formatJsonPathValue).join(',');
    }),
  );
  return `${alignColumns([format.columns.map((c) => c.header), ...rows]).join('\n')}\n`;
}

/**
 * The text of an object format. `single`: one object was asked for by name (json, yaml and
 * jsonpath then print it rather than a List).
 */
export async function renderObjects(format: ObjectFormat, objects: readonly PrintedObject[], single: boolean): Promise<string> {
  switch (format.kind) {
    case 'name':
      return objects.map((o) => `${o.name}\n`).join('');
    case 'json':
      return `${JSON.stringify(printedDocument(objects, single), null, 4)}\n`;
    case 'yaml':
      return stringify(printedDocument(objects, single), { indentSeq: false, lineWidth: 0 });
    case 'jsonpath': {
      const doc = printedDocument(objects, single);
      if (format.asJson) {
        const found = findResults(format.template, doc, { allowMissingKeys: format.allowMissingKeys });
        if (!found.ok) throw new CommandError(`error executing jsonpath ${JSON.stringify(format.source)}: ${found.error}`, 1);
        return `${JSON.stringify(found.results.flat(), null, 4)}\n`;
      }
      const printed = printJsonPath(format.template, doc, { allowMissingKeys: format.allowMissingKeys });
      if (!printed.ok) throw new CommandError(`error executing jsonpath ${JSON.stringify(format.source)}: ${printed.error}`, 1);
      return printed.text;
    }
    case 'custom-columns':
      return customColumns(format, objects);
  }
}
