/**
 * Server-side printing: answers `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`
 * (or v1beta1) on get, list and watch with a `meta.k8s.io` Table, as the API
 * server's `TableConvertor`s do, so `kubectl get` shows upstream's columns.
 *
 * - columns and cells come from the kind's printer (printers-*.ts), or the
 *   CRD's printer columns for custom resources (custom-columns.ts); every
 *   printer fills the wide cells too (kubectl hides priority > 0);
 * - `includeObject=None|Metadata|Object` (default Metadata) decides what
 *   each row's `object` carries: nothing, a PartialObjectMetadata, or the
 *   whole object;
 * - a list keeps its resourceVersion / continue / remainingItemCount; a single
 *   object's Table carries the object's resourceVersion;
 * - each watch event's object becomes a Table with that object's row; only
 *   the first event of a stream carries the column definitions.
 * Start at `installTablePrinting`.
 */
import type { KubeObject } from '../../../k8s/types.ts';
import type { ApiServerHost, ResponseFormatter } from '../extension-host.ts';
import { CRD_RESOURCE } from '../crd-controller.ts';
import type { ListResult } from '../list.ts';
import type { ResourceDef } from '../resource-def.ts';
import type { Column, Printer } from './columns.ts';
import { customResourcePrinter } from './custom-columns.ts';
import { printerFor } from './printers-workloads.ts';

/** The Table version the Accept header asks for, if it asks for one. */
export function tableVersion(accept: string): 'v1' | 'v1beta1' | undefined {
  for (const part of accept.split(',')) {
    const params = part.split(';').map((p) => p.trim());
    if (!params.includes('as=Table') || !params.includes('g=meta.k8s.io')) continue;
    if (params.includes('v=v1')) return 'v1';
    if (params.includes('v=v1beta1')) return 'v1beta1';
  }
  return undefined;
}

type IncludeObject = 'None' | 'Metadata' | 'Object';

function includeObjectOf(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

function rowObject(obj: KubeObject, include: IncludeObject, version: string): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata ?? {} };
}

function columnDefinitions(columns: Column[]): Record<string, unknown>[] {
  return columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority ?? 0 }));
}

/** Builds Tables for one server core (the clock gives AGE; the store gives CRD columns). */
export class TablePrinting {
  readonly #core: ApiServerHost;

  constructor(core: ApiServerHost) {
    this.#core = core;
  }

  printerOf(def: ResourceDef): Printer {
    if (def.builtin) return printerFor(def.group, def.kind);
    return customResourcePrinter(this.#core.store.get(CRD_RESOURCE, '', `${def.plural}.${def.group}`), def.version);
  }

  /** A Table of the given objects. */
  table(def: ResourceDef, objects: readonly KubeObject[], metadata: Record<string, unknown>, query: URLSearchParams, version: 'v1' | 'v1beta1'): Record<string, unknown> {
    const printer = this.printerOf(def);
    const now = this.#core.clock.now();
    const include = includeObjectOf(query);
    const rows = objects.map((obj) => {
      const row: Record<string, unknown> = { cells: printer.cells(obj, now) };
      const conditions = printer.conditions?.(obj);
      if (conditions !== undefined) row['conditions'] = conditions;
      const object = rowObject(obj, include, version);
      if (object !== undefined) row['object'] = object;
      return row;
    });
    return { kind: 'Table', apiVersion: `meta.k8s.io/${version}`, metadata, columnDefinitions: columnDefinitions(printer.columns), rows };
  }

  formatter(): ResponseFormatter {
    return {
      format: ({ accept, def, query, object, list }) => {
        const version = tableVersion(accept);
        if (version === undefined) return undefined;
        let table: Record<string, unknown>;
        if (list !== undefined) table = this.table(def, list.items, listMetadata(list), query, version);
        else if (object !== undefined) {
          const rv = object.metadata?.resourceVersion;
          table = this.table(def, [object], rv === undefined ? {} : { resourceVersion: rv }, query, version);
        } else return undefined;
        return { contentType: 'application/json', body: JSON.stringify(table) };
      },
      formatWatchObject: ({ accept, def, query, object, first }) => {
        const version = tableVersion(accept);
        if (version === undefined) return undefined;
        const rv = object.metadata?.resourceVersion;
        const table = this.table(def, [object], rv === undefined ? {} : { resourceVersion: rv }, query, version);
        // Upstream prints headers on a watch's first event only (NoHeaders afterwards).
        if (!first) table['columnDefinitions'] = null;
        return table;
      },
    };
  }
}

function listMetadata(list: ListResult): Record<string, unknown> {
  const meta: Record<string, unknown> = { resourceVersion: list.resourceVersion };
  if (list.continue !== undefined) meta['continue'] = list.continue;
  if (list.remainingItemCount !== undefined) meta['remainingItemCount'] = list.remainingItemCount;
  return meta;
}

/** Adds Table output to a server core. */
export function installTablePrinting(core: ApiServerHost): void {
  core.formatters.push(new TablePrinting(core).formatter());
}
