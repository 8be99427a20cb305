/**
 * Kubernetes manifests in YAML, read the way kubectl reads them: YAML 1.1 rules
 * (go-yaml v2: `yes`/`on` are booleans, `0755` is octal), several documents per
 * file separated by `---`, empty documents skipped, a top-level `kind: List`
 * expanded into its items. Pure: takes text, returns objects or an error naming
 * the document and line.
 */
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from './types.ts';
import { isPlainObject } from './json.ts';

export interface ManifestDocument {
  /** 1-based position of the document in the file. */
  index: number;
  object: KubeObject;
}

/** Alias expansions allowed per document: ordinary manifests use a handful; a "billion laughs" needs millions. */
export const MAX_ALIAS_COUNT = 1000;

export type ParsedManifests = { ok: true; documents: ManifestDocument[] } | { ok: false; error: string };

/** Parses a (multi-document) YAML or JSON text into Kubernetes objects. */
export function parseManifests(text: string, source = '<input>'): ParsedManifests {
  let docs;
  try {
    docs = parseAllDocuments(text, { version: '1.1', prettyErrors: true, uniqueKeys: false });
  } catch (err) {
    return { ok: false, error: `${source}: not YAML: ${(err as Error).message}` };
  }
  const documents: ManifestDocument[] = [];
  // parseAllDocuments returns an EmptyStream (not an array) for empty input.
  const list = Array.isArray(docs) ? docs : [];
  for (const [i, doc] of list.entries()) {
    const index = i + 1;
    const error = doc.errors[0];
    if (error !== undefined) {
      const line = error.linePos?.[0]?.line;
      const where = line === undefined ? '' : ` (line ${line})`;
      const firstLine = (error.message.split('\n')[0] ?? error.message).replace(/ at line \d+, column \d+:?$/, '');
      return { ok: false, error: `${source}: document ${index}${where}: not valid YAML: ${firstLine}` };
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      // The yaml library throws (a ReferenceError) when aliases expand past the bound: bad input, not a crash.
      const why = /alias/i.test((err as Error).message) ? `too many aliases (more than ${MAX_ALIAS_COUNT} expansions; an alias bomb?)` : (err as Error).message;
      return { ok: false, error: `${source}: document ${index}: not valid YAML: ${why}` };
    }
    if (value === null || value === undefined) continue;
    if (!isPlainObject(value)) {
      return { ok: false, error: `${source}: document ${index}: expected a Kubernetes object (a mapping), found ${Array.isArray(value) ? 'a list' : typeof value}` };
    }
    if (value.kind === 'List' && Array.isArray(value.items)) {
      for (const item of value.items) {
        if (!isPlainObject(item)) return { ok: false, error: `${source}: document ${index}: a List item is not an object` };
        documents.push({ index, object: item as KubeObject });
      }
      continue;
    }
    documents.push({ index, object: value as KubeObject });
  }
  return { ok: true, documents };
}

/** Renders objects as a multi-document YAML stream, keys in insertion order. */
export function renderManifests(objects: unknown[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
}
