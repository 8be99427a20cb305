/**
 * Shared pieces of server-side printing (meta.k8s.io/v1 Table): the column
 * and printer types, and the cell helpers every printer uses with upstream's
 * spellings (`<none>`, `<unknown>`, AGE via HumanDuration, selectors, images).
 * A printer always fills the wide (priority 1) cells: the API server prints
 * wide and kubectl hides priority > 0 columns unless `-o wide`.
 */
import { humanDuration } from '../../../k8s/human-duration.ts';
import { selectorToString } from '../../../k8s/label-selector.ts';
import { asArray, asRecord, asString } from '../../../k8s/raw-json.ts';
import { parseTime } from '../../../k8s/time.ts';
import type { KubeObject, LabelSelector } from '../../../k8s/types.ts';

export interface Column {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  priority?: number;
}

/** One table cell: what the API server sends (null prints as nothing). */
export type Cell = string | number | boolean | null;

export interface Printer {
  columns: Column[];
  /** The cells of one object, at `now` (epoch ms). */
  cells(obj: KubeObject, now: number): Cell[];
  /** Row conditions (pods report Completed for Succeeded/Failed). */
  conditions?(obj: KubeObject): { type: string; status: string; reason?: string }[] | undefined;
}

export const NAME_COLUMN: Column = { name: 'Name', type: 'string', format: 'name', description: 'Name of the object, unique within its namespace.' };
export const AGE_COLUMN: Column = { name: 'Age', type: 'string', description: 'Time since the object was created.' };

export const col = (name: string, type: Column['type'], description: string, priority = 0): Column => (priority > 0 ? { name, type, description, priority } : { name, type, description });

export function rec(v: unknown): Record<string, unknown> {
  return asRecord(v) ?? {};
}

export function list(v: unknown): Record<string, unknown>[] {
  return (asArray(v) ?? []).map((x) => asRecord(x) ?? {});
}

export function str(v: unknown): string {
  return asString(v) ?? '';
}

export function int(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0;
}

/** `translateTimestampSince`: HumanDuration since a timestamp, `<unknown>` when there is none. */
export function since(timestamp: unknown, now: number): string {
  const t = parseTime(asString(timestamp));
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}

export function age(obj: KubeObject, now: number): string {
  return since(obj.metadata?.creationTimestamp, now);
}

export function name(obj: KubeObject): string {
  return str(obj.metadata?.name);
}

/** `labels.FormatLabels`: sorted `k=v` pairs, `<none>` when empty. */
export function formatLabels(m: unknown): string {
  const entries = Object.entries(rec(m)).filter(([, v]) => typeof v === 'string');
  if (entries.length === 0) return '<none>';
  return entries
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');
}

/** A structured selector as its canonical string; `<none>` when it selects everything. */
export function formatSelector(sel: unknown): string {
  const s = asRecord(sel);
  if (s === undefined) return '<none>';
  const text = selectorToString(s as LabelSelector);
  return text === '' ? '<none>' : text;
}

/** The CONTAINERS and IMAGES cells of a pod template (`layoutContainerCells`). */
export function containerCells(podSpec: unknown): [string, string] {
  const containers = list(rec(podSpec)['containers']);
  return [containers.map((c) => str(c['name'])).join(','), containers.map((c) => str(c['image'])).join(',')];
}

export function templateSpec(obj: KubeObject): Record<string, unknown> {
  return rec(rec(rec(obj['spec'])['template'])['spec']);
}

/** The default printer of kinds upstream gives no table: NAME and CREATED AT. */
export const DEFAULT_PRINTER: Printer = {
  columns: [NAME_COLUMN, { name: 'Created At', type: 'date', description: 'Time the object was created (RFC 3339).' }],
  cells: (obj) => [name(obj), str(obj.metadata?.creationTimestamp)],
};
