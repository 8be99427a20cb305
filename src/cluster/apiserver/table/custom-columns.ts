/**
 * The Table printer of a custom resource version
 * (apiextensions-apiserver pkg/registry/customresource/tableconvertor): NAME,
 * then the version's `additionalPrinterColumns` — or AGE when it declares
 * none. Each cell evaluates the column's JSONPath with missing keys allowed
 * and takes the first value; `string` columns print it as jsonpath would,
 * other types keep it only when it has that JSON type (so a filter that
 * yields a string under a `boolean` column gives an empty cell, as upstream),
 * `date` columns print the age of the timestamp.
 */
import { humanDuration } from '../../../k8s/human-duration.ts';
import { findResults, formatJsonPathValue, parseJsonPath, type JsonPath } from '../../../k8s/jsonpath.ts';
import { asArray, asNumber, asRecord, asString } from '../../../k8s/raw-json.ts';
import { parseTime } from '../../../k8s/time.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import { name, NAME_COLUMN, type Cell, type Column, type Printer } from './columns.ts';

interface CustomColumn {
  column: Column;
  path: JsonPath | undefined;
}

const DEFAULT_COLUMNS: Record<string, unknown>[] = [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];

/** `cellForJSONValue`: the value when it fits the column type, else an empty cell. */
function cellFor(type: Column['type'], value: unknown, now: number): Cell {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer': {
      const n = asNumber(value);
      return n === undefined ? null : Math.trunc(n);
    }
    case 'number':
      return asNumber(value) ?? null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      if (typeof value !== 'string') return null;
      const t = parseTime(value);
      return t === undefined ? '<invalid>' : humanDuration(now - t);
    }
    default:
      return typeof value === 'string' ? value : null;
  }
}

function customColumns(crd: KubeObject | undefined, version: string): CustomColumn[] {
  const versions = (asArray(asRecord(crd?.['spec'])?.['versions']) ?? []).map((v) => asRecord(v) ?? {});
  const declared = asArray(versions.find((v) => v['name'] === version)?.['additionalPrinterColumns']);
  const raw = declared === undefined || declared.length === 0 ? DEFAULT_COLUMNS : declared.map((c) => asRecord(c) ?? {});
  return raw.map((c) => {
    const type = (asString(c['type']) ?? 'string') as Column['type'];
    const column: Column = { name: asString(c['name']) ?? '', type, description: asString(c['description']) ?? '' };
    const format = asString(c['format']);
    if (format !== undefined && format !== '') column.format = format;
    const priority = asNumber(c['priority']);
    if (priority !== undefined && priority > 0) column.priority = priority;
    const parsed = parseJsonPath(`{${asString(c['jsonPath']) ?? ''}}`);
    return { column, path: parsed.ok ? parsed.path : undefined };
  });
}

/** The printer of one served version of a CRD. */
export function customResourcePrinter(crd: KubeObject | undefined, version: string): Printer {
  const columns = customColumns(crd, version);
  return {
    columns: [NAME_COLUMN, ...columns.map((c) => c.column)],
    cells: (obj, now) => {
      const cells: Cell[] = [name(obj)];
      for (const c of columns) {
        const found = c.path === undefined ? undefined : findResults(c.path, obj, { allowMissingKeys: true });
        const first = found?.ok === true ? found.results[0] : undefined;
        if (first === undefined || first.length === 0) {
          cells.push(null);
          continue;
        }
        const value = first[0];
        cells.push(c.column.type === 'string' ? (value === null || value === undefined ? null : formatJsonPathValue(value)) : cellFor(c.column.type, value, now));
      }
      return cells;
    },
  };
}
