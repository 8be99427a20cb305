/**
 * Reading manifests for the CLI: files → Kubernetes objects, with one-line
 * errors that name the file and document, and the helpers to pick
 * WorkloadSpreads out of a mixed stream.
 */
import { parseManifests, type ManifestDocument } from '../k8s/yaml.ts';
import type { KubeObject } from '../k8s/types.ts';
import { GROUP as WS_GROUP, KIND as WS_KIND } from '../api/workloadspread.ts';
import { CommandError, inputName, readInput, STDIN, UsageError, type CliIo } from './io.ts';

export interface SourcedDocument extends ManifestDocument {
  file: string;
}

/**
 * Reads and parses every file (`-`: stdin, at most once), each bounded by
 * `maxBytes`; an unreadable or oversized file is a usage error (2), a file
 * that is not YAML exits 1.
 */
export async function readDocuments(io: CliIo, files: readonly string[], maxBytes: number): Promise<SourcedDocument[]> {
  if (files.filter((f) => f === STDIN).length > 1) throw new UsageError('-f - (stdin) can be given only once');
  const out: SourcedDocument[] = [];
  for (const file of files) {
    const text = await readInput(io, file, maxBytes);
    const name = inputName(file);
    const parsed = parseManifests(text, name);
    if (!parsed.ok) throw new CommandError(parsed.error, 1);
    for (const doc of parsed.documents) out.push({ ...doc, file: name });
  }
  return out;
}

export function isWorkloadSpread(obj: KubeObject): boolean {
  return obj.kind === WS_KIND && typeof obj.apiVersion === 'string' && obj.apiVersion.startsWith(`${WS_GROUP}/`);
}

export function namespaceOf(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  return typeof ns === 'string' && ns !== '' ? ns : 'default';
}

export function describeObject(obj: KubeObject): string {
  const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : '<no name>';
  return `${obj.kind ?? '<no kind>'} ${namespaceOf(obj)}/${name}`;
}

/** The group of an apiVersion ("apps/v1" → "apps", "v1" → ""). */
export function groupOf(apiVersion: unknown): string {
  if (typeof apiVersion !== 'string') return '';
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}
