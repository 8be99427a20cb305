/**
 * Listing: label and field selectors, `limit` + `continue` pagination, and
 * the resourceVersion semantics of a list (k8s.io/apiserver storage/etcd3 and
 * the list options validation of metainternalversion).
 *
 * - selectors: `labelSelector` with every operator (labels.Parse);
 *   `fieldSelector` on `metadata.name`, `metadata.namespace` and whatever the
 *   kind's strategy declares; any other field → 400 `field label not supported`;
 * - pagination: items in key order; the continue token is opaque (base64 JSON
 *   of the snapshot's resourceVersion and the next key, like etcd3's), later
 *   pages are served from the same snapshot; a token older than the retained
 *   history → 410 Expired with a token to continue inconsistently;
 * - resourceVersion: unset/"0" → latest; N with `Exact` → as of N; N otherwise
 *   (NotOlderThan) → latest, or 504 when N is in the future.
 */
import { parseFieldSelector, parseSelector, type FieldRequirement, type Selector } from '../../k8s/label-selector.ts';
import { fieldSelectorMatches } from '../../k8s/field-selector.ts';
import { asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { badRequest, expired, fail, invalid, ok, timeout, type Result, type Status } from './errors.ts';
import { forbidden, notSupported, type FieldError } from '../../k8s/field-errors.ts';
import type { ResourceDef } from './resource-def.ts';
import { storageKey } from './resource-def.ts';
import { objectKey, type ObjectStore } from './storage.ts';

/** List options as received (checked by `listObjects`). */
import type { ReceivedListOptions as ListOptions } from '../../k8s/wire.ts';
export type { ListOptions };

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface Selectors {
  labels: Selector;
  fields: FieldRequirement[];
  /** True when neither selector restricts anything. */
  everything: boolean;
}

/** The fields a field selector can read on an object of this resource. */
export function selectableFields(def: ResourceDef, obj: KubeObject): Record<string, string> {
  const fields: Record<string, string> = {
    'metadata.name': asString(obj.metadata?.name) ?? '',
    'metadata.namespace': asString(obj.metadata?.namespace) ?? '',
  };
  return def.strategy.selectableFields === undefined ? fields : { ...fields, ...def.strategy.selectableFields(obj) };
}

/** The field labels a resource supports (computed from an empty object). */
function supportedFieldLabels(def: ResourceDef): Set<string> {
  return new Set(Object.keys(selectableFields(def, { metadata: {} })));
}

/** Parses `labelSelector` / `fieldSelector`; malformed or unsupported → 400 with upstream's text. */
export function parseSelectors(def: ResourceDef, labelSelector: string | undefined, fieldSelector: string | undefined): Result<Selectors> {
  const labels = parseSelector(labelSelector ?? '');
  if (!labels.ok) return fail(badRequest(labels.error));
  const fields = parseFieldSelector(fieldSelector ?? '');
  if (!fields.ok) return fail(badRequest(fields.error));
  const supported = supportedFieldLabels(def);
  for (const r of fields.requirements) {
    if (!supported.has(r.field)) return fail(badRequest(`field label not supported: ${r.field}`));
  }
  return ok({ labels: labels.selector, fields: fields.requirements, everything: labels.selector.empty && fields.requirements.length === 0 });
}

export function matchesSelectors(def: ResourceDef, obj: KubeObject, selectors: Selectors): boolean {
  if (selectors.everything) return true;
  const labels = obj.metadata?.labels;
  if (!selectors.labels.matches(typeof labels === 'object' && labels !== null ? labels : {})) return false;
  return selectors.fields.length === 0 || fieldSelectorMatches(selectors.fields, selectableFields(def, obj));
}

// ---- continue tokens ----

interface ContinueToken {
  rv: number;
  start: string;
}

function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` }), 'utf8').toString('base64');
}

function decodeContinue(token: string): ContinueToken | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
  } catch {
    return 'continue key is not valid: illegal base64 data';
  }
  const t = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (typeof t !== 'object' || t === null || t.v !== 'meta.k8s.io/v1') return 'continue key is not valid: server does not recognize this encoded key';
  if (typeof t.rv !== 'number' || !Number.isInteger(t.rv) || typeof t.start !== 'string') return 'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)';
  return { rv: t.rv, start: t.start };
}

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
  'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent ' +
  'list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function listOptionsInvalid(errors: FieldError[]): Status {
  return invalid('ListOptions', 'meta.k8s.io', '', errors);
}

/** Parses a resourceVersion parameter (a decimal integer); undefined when malformed. */
export function parseResourceVersion(rv: string): number | undefined {
  return /^[0-9]+$/.test(rv) ? Number(rv) : undefined;
}

/**
 * Lists a resource (one namespace, or all with `namespace` ''/undefined).
 * `convert` maps stored objects to the served version before selectors apply.
 */
export function listObjects(store: ObjectStore, def: ResourceDef, namespace: string | undefined, options: ListOptions, convert: (o: KubeObject) => KubeObject): Result<ListResult> {
  const resource = storageKey(def);
  const match = options.resourceVersionMatch ?? '';
  const rvParam = options.resourceVersion ?? '';
  const cont = options.continue ?? '';
  const errs: FieldError[] = [];
  if (match !== '') {
    if (rvParam === '') errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (cont !== '') errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && rvParam === '0') errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (errs.length > 0) return fail(listOptionsInvalid(errs));
  const selectors = parseSelectors(def, options.labelSelector, options.fieldSelector);
  if (!selectors.ok) return selectors;

  let snapshotRv = store.resourceVersion;
  let start = '';
  let items: KubeObject[];
  if (cont !== '') {
    if (rvParam !== '' && rvParam !== '0') return fail(badRequest('specifying resource version is not allowed when using continue'));
    const token = decodeContinue(cont);
    if (typeof token === 'string') return fail(badRequest(`invalid continue token: ${token}`));
    start = token.start;
    if (token.rv < 0) {
      items = store.list(resource, namespace);
    } else {
      const snap = store.listAt(resource, namespace, token.rv);
      if (!snap.ok) {
        const status = expired(EXPIRED_CONTINUE);
        status.metadata.continue = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: -1, start }), 'utf8').toString('base64');
        return fail(status);
      }
      items = snap.items;
      snapshotRv = token.rv;
    }
  } else if (rvParam !== '' && rvParam !== '0') {
    const rv = parseResourceVersion(rvParam);
    if (rv === undefined) return fail(badRequest(`invalid resource version: ${rvParam}`));
    if (rv > store.resourceVersion) {
      const status = timeout(`Too large resource version: ${rv}, current: ${store.resourceVersion}`, 1);
      status.details = { ...status.details, causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] };
      return fail(status);
    }
    if (match === 'Exact') {
      const snap = store.listAt(resource, namespace, rv);
      if (!snap.ok) return fail(expired(`too old resource version: ${rv} (${store.horizon})`));
      items = snap.items;
      snapshotRv = rv;
    } else {
      items = store.list(resource, namespace);
    }
  } else {
    items = store.list(resource, namespace);
  }

  const limit = options.limit !== undefined && options.limit > 0 ? options.limit : undefined;
  const out: KubeObject[] = [];
  let lastKey = '';
  let more = false;
  let remaining = 0;
  for (const stored of items) {
    const key = objectKey(asString(stored.metadata?.namespace) ?? '', asString(stored.metadata?.name) ?? '');
    if (start !== '' && key < start) continue;
    const obj = convert(stored);
    if (!matchesSelectors(def, obj, selectors.value)) continue;
    if (limit !== undefined && out.length >= limit) {
      more = true;
      remaining++;
      continue;
    }
    out.push(obj);
    lastKey = key;
  }
  const result: ListResult = { items: out, resourceVersion: String(snapshotRv) };
  if (more) {
    result.continue = encodeContinue(snapshotRv, lastKey);
    if (selectors.value.everything) result.remainingItemCount = remaining;
  }
  return ok(result);
}
