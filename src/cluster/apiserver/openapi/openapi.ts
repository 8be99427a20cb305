/**
 * The OpenAPI endpoints kubectl reads:
 *
 * - `/openapi/v3`: the index `{paths: {"apis/apps/v1": {serverRelativeURL:
 *   "/openapi/v3/apis/apps/v1?hash=..."}}}` of every served group-version;
 * - `/openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>`: an OpenAPI
 *   3.0 document with the resource paths (operations carry
 *   `x-kubernetes-group-version-kind` and `x-kubernetes-action`; PATCH lists
 *   the accepted patch content types and the `fieldValidation` parameter, which
 *   is how kubectl decides to validate on the server and whether to compute a
 *   strategic merge patch) and the schemas they need;
 * - `/openapi/v2`: every path and definition as one Swagger 2.0 document, in
 *   JSON or in protobuf (gnostic's `openapi.v2.Document`, protobuf-v2.ts), by
 *   the Accept header as kube-openapi negotiates it (406 with no body when
 *   neither is acceptable); CRD schemas cut to what v2 can say
 *   (`toStructuralV2`).
 * Both versions answer with a quoted ETag (SHA-512 of the JSON, upper-case
 * hex) and honour If-None-Match; a v3 document asked for with a stale `hash`
 * is a 301 to the current one, and only a request with the current hash is
 * told to cache for good (`Cache-Control: public, immutable`, a year).
 * Documents are rebuilt when the set of served resources changes (CRDs).
 * Start at `installOpenApi`.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../../../k8s/types.ts';
import type { ApiServerHost } from '../extension-host.ts';
import { CRD_RESOURCE } from '../crd-controller.ts';
import { SERVER_VERSION } from '../discovery.ts';
import { resourceNotFound } from '../errors.ts';
import { sendStatus } from '../http-util.ts';
import { APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, supportedPatchTypes } from '../patch.ts';
import type { ResourceDef } from '../resource-def.ts';
import { SCALE_KIND } from '../scale.ts';
import { installFieldValidation } from './field-validation.ts';
import { encodeOpenApiV2 } from './protobuf-v2.ts';
import { SchemaCatalog, type OpenApiVersion, type SchemaObject } from './schemas.ts';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

const gvPath = (group: string, version: string) => (group === '' ? `api/${version}` : `apis/${group}/${version}`);

function queryParam(name: string, type: string, description: string): SchemaObject {
  return { name, in: 'query', description, schema: { type, uniqueItems: true } };
}

const WRITE_PARAMS = [
  queryParam('dryRun', 'string', 'When present, the request is checked but nothing is stored. Valid value: All.'),
  queryParam('fieldManager', 'string', 'Name of the actor making the change.'),
  queryParam('fieldValidation', 'string', 'What to do with unknown or duplicate fields: Ignore, Warn or Strict.'),
];

const LIST_PARAMS = ['labelSelector', 'fieldSelector', 'continue', 'resourceVersion', 'resourceVersionMatch'].map((n) => queryParam(n, 'string', `The ${n} of the list.`)).concat([queryParam('limit', 'integer', 'Maximum number of items.'), queryParam('watch', 'boolean', 'Watch for changes.'), queryParam('timeoutSeconds', 'integer', 'Timeout of a watch.')]);

function content(schemaRef: string): SchemaObject {
  const schema = { $ref: `#/components/schemas/${schemaRef}` };
  return { 'application/json': { schema }, 'application/yaml': { schema } };
}

function operation(action: string, gvk: { group: string; version: string; kind: string }, id: string, extra: SchemaObject): SchemaObject {
  return { operationId: id, ...extra, 'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': { group: gvk.group, kind: gvk.kind, version: gvk.version } };
}

/** The paths of one resource in a v3 document, and the definitions they refer to. */
function resourcePaths(def: ResourceDef, kindDef: string | undefined, paths: Record<string, SchemaObject>, refs: Set<string>): void {
  const base = `/${gvPath(def.group, def.version)}`;
  const prefix = def.namespaced ? `${base}/namespaces/{namespace}/${def.plural}` : `${base}/${def.plural}`;
  const gvk = { group: def.group, version: def.version, kind: def.kind };
  const objectRef = kindDef ?? `${META}.Status`;
  if (kindDef !== undefined) refs.add(kindDef);
  refs.add(`${META}.Status`).add(`${META}.Patch`);
  const idBase = `${def.kind}`;
  const pathParams = (withName: boolean): SchemaObject[] => [
    ...(withName ? [{ name: 'name', in: 'path', required: true, description: `Name of the ${def.kind}.`, schema: { type: 'string', uniqueItems: true } }] : []),
    ...(def.namespaced ? [{ name: 'namespace', in: 'path', required: true, description: 'Namespace of the object.', schema: { type: 'string', uniqueItems: true } }] : []),
  ];
  const ok = (ref: string) => ({ '200': { description: 'OK', content: content(ref) } });
  const patchBody = (types: string[]) => ({ required: true, content: Object.fromEntries(types.map((t) => [t, { schema: { $ref: `#/components/schemas/${META}.Patch` } }])) });
  // Only the operations of the resource's verbs (create-only reviews have a POST and nothing else).
  const verbs = new Set(def.verbs);
  const only = (entries: [string, string, SchemaObject][]): SchemaObject => Object.fromEntries(entries.filter(([verb]) => verbs.has(verb)).map(([, method, op]) => [method, op]));
  paths[prefix] = {
    parameters: pathParams(false),
    ...only([
      ['list', 'get', operation('list', gvk, `list${idBase}`, { parameters: LIST_PARAMS, responses: ok(`${META}.Status`) })],
      ['create', 'post', operation('post', gvk, `create${idBase}`, { parameters: WRITE_PARAMS, requestBody: { required: true, content: content(objectRef) }, responses: { ...ok(objectRef), '201': { description: 'Created', content: content(objectRef) } } })],
      ['deletecollection', 'delete', operation('deletecollection', gvk, `deleteCollection${idBase}`, { parameters: LIST_PARAMS, responses: ok(`${META}.Status`) })],
    ]),
  };
  const item = only([
    ['get', 'get', operation('get', gvk, `read${idBase}`, { responses: ok(objectRef) })],
    ['update', 'put', operation('put', gvk, `replace${idBase}`, { parameters: WRITE_PARAMS, requestBody: { required: true, content: content(objectRef) }, responses: ok(objectRef) })],
    ['patch', 'patch', operation('patch', gvk, `patch${idBase}`, { parameters: [...WRITE_PARAMS, queryParam('force', 'boolean', 'Take over conflicting fields on apply.')], requestBody: patchBody(supportedPatchTypes(def)), responses: ok(objectRef) })],
    ['delete', 'delete', operation('delete', gvk, `delete${idBase}`, { parameters: [queryParam('dryRun', 'string', 'Check only.'), queryParam('gracePeriodSeconds', 'integer', 'Grace period.'), queryParam('propagationPolicy', 'string', 'Orphan, Background or Foreground.')], responses: ok(`${META}.Status`) })],
  ]);
  if (Object.keys(item).length > 0) paths[`${prefix}/{name}`] = { parameters: pathParams(true), ...item };
  if (def.subresources.status === true) {
    paths[`${prefix}/{name}/status`] = {
      parameters: pathParams(true),
      get: operation('get', gvk, `read${idBase}Status`, { responses: ok(objectRef) }),
      put: operation('put', gvk, `replace${idBase}Status`, { parameters: WRITE_PARAMS, requestBody: { required: true, content: content(objectRef) }, responses: ok(objectRef) }),
      patch: operation('patch', gvk, `patch${idBase}Status`, { parameters: [...WRITE_PARAMS, queryParam('force', 'boolean', 'Take over conflicting fields on apply.')], requestBody: patchBody(supportedPatchTypes(def)), responses: ok(objectRef) }),
    };
  }
  if (def.subresources.scale !== undefined) {
    const scaleRef = 'io.k8s.api.autoscaling.v1.Scale';
    refs.add(scaleRef);
    const scaleTypes = def.builtin ? [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH] : [JSON_PATCH, MERGE_PATCH, APPLY_PATCH];
    paths[`${prefix}/{name}/scale`] = {
      parameters: pathParams(true),
      get: operation('get', SCALE_KIND, `read${idBase}Scale`, { responses: ok(scaleRef) }),
      put: operation('put', SCALE_KIND, `replace${idBase}Scale`, { parameters: WRITE_PARAMS, requestBody: { required: true, content: content(scaleRef) }, responses: ok(scaleRef) }),
      patch: operation('patch', SCALE_KIND, `patch${idBase}Scale`, { parameters: [...WRITE_PARAMS, queryParam('force', 'boolean', 'Take over conflicting fields on apply.')], requestBody: patchBody(scaleTypes), responses: ok(scaleRef) }),
    };
  }
}

/** A v3 path map in Swagger 2.0 form: query/path parameters flattened, bodies as body parameters, content types as consumes/produces. */
function v2Paths(paths: Record<string, SchemaObject>): Record<string, SchemaObject> {
  const ref = (r: unknown) => String(r).replace('#/components/schemas/', '#/definitions/');
  const param = (p: SchemaObject): SchemaObject => {
    const s = (p['schema'] ?? {}) as SchemaObject;
    const out: SchemaObject = {};
    if (s['uniqueItems'] === true) out['uniqueItems'] = true;
    out['type'] = s['type'];
    if (p['description'] !== undefined) out['description'] = p['description'];
    out['name'] = p['name'];
    out['in'] = p['in'];
    if (p['required'] === true) out['required'] = true;
    return out;
  };
  const out: Record<string, SchemaObject> = {};
  for (const path of Object.keys(paths).sort()) {
    const item = paths[path] as SchemaObject;
    const converted: SchemaObject = {};
    for (const [method, value] of Object.entries(item)) {
      if (method === 'parameters') {
        converted['parameters'] = (value as SchemaObject[]).map(param);
        continue;
      }
      const op = value as SchemaObject;
      const body = op['requestBody'] as SchemaObject | undefined;
      const bodyContent = (body?.['content'] ?? {}) as Record<string, SchemaObject>;
      const firstBody = Object.values(bodyContent)[0]?.['schema'] as SchemaObject | undefined;
      const responses: SchemaObject = {};
      for (const [code, r] of Object.entries((op['responses'] ?? {}) as Record<string, SchemaObject>)) {
        const schema = (Object.values((r['content'] ?? {}) as Record<string, SchemaObject>)[0]?.['schema'] ?? undefined) as SchemaObject | undefined;
        responses[code] = { description: r['description'], ...(schema !== undefined ? { schema: { $ref: ref(schema['$ref']) } } : {}) };
      }
      const v2: SchemaObject = {};
      if (body !== undefined && method === 'patch') v2['consumes'] = Object.keys(bodyContent);
      else if (body !== undefined) v2['consumes'] = ['*/*'];
      v2['produces'] = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
      v2['schemes'] = ['https'];
      v2['operationId'] = op['operationId'];
      const params = ((op['parameters'] ?? []) as SchemaObject[]).map(param);
      if (firstBody !== undefined) params.push({ name: 'body', in: 'body', required: true, schema: { $ref: ref(firstBody['$ref']) } });
      if (params.length > 0) v2['parameters'] = params;
      v2['responses'] = responses;
      for (const [k, v] of Object.entries(op)) if (k.startsWith('x-')) v2[k] = v;
      converted[method] = v2;
    }
    out[path] = converted;
  }
  return out;
}

/** Whether an Accept header takes `type/subtype` (kube-openapi's goautoneg matching, wildcards included). */
function acceptable(accept: string | undefined, subtypes: readonly string[]): string | undefined {
  const clauses = (accept === undefined || accept.trim() === '' ? '*/*' : accept)
    .split(',')
    .map((part, i) => {
      const [range = '', ...params] = part.split(';').map((x) => x.trim());
      const q = params.find((p) => p.startsWith('q='));
      const [type = '', subtype = ''] = range.split('/');
      return { type, subtype, q: q === undefined ? 1 : Number(q.slice(2)), i };
    })
    .filter((c) => c.q > 0)
    .sort((a, b) => b.q - a.q || (a.subtype === '*' ? 1 : 0) - (b.subtype === '*' ? 1 : 0) || (a.type === '*' ? 1 : 0) - (b.type === '*' ? 1 : 0) || a.i - b.i);
  for (const c of clauses) {
    for (const s of subtypes) if ((c.type === 'application' || c.type === '*') && (c.subtype === s || c.subtype === '*')) return s;
  }
  return undefined;
}

const PROTOBUF_V2 = 'com.github.proto-openapi.spec.v2.v1.0+protobuf';
const PROTOBUF_V2_DEPRECATED = 'com.github.proto-openapi.spec.v2@v1.0+protobuf';

interface Documents {
  index: Record<string, unknown>;
  byPath: Map<string, { body: string; hash: string }>;
  /** Every group-version's paths, for the v2 document. */
  paths: Record<string, SchemaObject>;
}

export class OpenApiDocuments {
  readonly #core: ApiServerHost;
  readonly #catalog = new SchemaCatalog();
  #docs: Documents | undefined;
  #v2: { json: string; protobuf: Buffer; etag: string } | undefined;

  constructor(core: ApiServerHost) {
    this.#core = core;
    core.registry.onChange(() => {
      this.#docs = undefined;
      this.#v2 = undefined;
    });
  }

  #refreshCatalog(): void {
    this.#catalog.setCustomResources(this.#core.store.list(CRD_RESOURCE) as KubeObject[]);
  }

  /** The v3 document of one group-version, as an object (for tests and tools). */
  groupVersionDocument(group: string, version: string): Record<string, unknown> | undefined {
    const doc = this.#documents().byPath.get(gvPath(group, version));
    return doc === undefined ? undefined : (JSON.parse(doc.body) as Record<string, unknown>);
  }

  #documents(): Documents {
    if (this.#docs !== undefined) return this.#docs;
    this.#refreshCatalog();
    const byPath = new Map<string, { body: string; hash: string }>();
    const index: Record<string, unknown> = {};
    const allPaths: Record<string, SchemaObject> = {};
    for (const g of this.#core.registry.groups()) {
      for (const version of g.versions) {
        const defs = this.#core.registry.all().filter((d) => d.group === g.name && d.version === version);
        const paths: Record<string, SchemaObject> = {};
        const refs = new Set<string>();
        for (const def of defs) resourcePaths(def, this.#catalog.definitionOf(def), paths, refs);
        Object.assign(allPaths, paths);
        const doc = {
          openapi: '3.0.0',
          info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion },
          paths,
          components: { schemas: this.#catalog.closure(refs, 'v3') },
        };
        const body = JSON.stringify(doc);
        const hash = createHash('sha512').update(body).digest('hex').toUpperCase().slice(0, 128);
        const path = gvPath(g.name, version);
        byPath.set(path, { body, hash });
        index[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
      }
    }
    this.#docs = { index: { paths: index }, byPath, paths: allPaths };
    return this.#docs;
  }

  /** The v2 document as an object (for tests and tools). */
  v2Document(): Record<string, unknown> {
    return JSON.parse(this.#v2Document().json) as Record<string, unknown>;
  }

  #v2Document(): { json: string; protobuf: Buffer; etag: string } {
    if (this.#v2 !== undefined) return this.#v2;
    const paths = v2Paths(this.#documents().paths);
    this.#refreshCatalog();
    const roots = new Set<string>([`${META}.Status`, `${META}.Patch`, 'io.k8s.api.autoscaling.v1.Scale']);
    for (const def of this.#core.registry.all()) {
      const name = this.#catalog.definitionOf(def);
      if (name !== undefined) roots.add(name);
    }
    const definitions = this.#catalog.closure(roots, 'v2' satisfies OpenApiVersion);
    const doc = { swagger: '2.0', info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion }, paths, definitions };
    const json = JSON.stringify(doc);
    this.#v2 = { json, protobuf: encodeOpenApiV2(doc), etag: createHash('sha512').update(json).digest('hex').toUpperCase() };
    return this.#v2;
  }

  handle(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
    const path = url.pathname;
    req.resume();
    if (path === '/openapi/v2') {
      res.setHeader('Vary', 'Accept');
      const subtype = acceptable(req.headers.accept, ['json', PROTOBUF_V2_DEPRECATED, PROTOBUF_V2]);
      if (subtype === undefined) {
        sendRaw(req, res, 406, '', undefined);
        return true;
      }
      const doc = this.#v2Document();
      res.setHeader('Etag', `"${doc.etag}"`);
      if (subtype === 'json') sendRaw(req, res, 200, doc.json, 'application/json');
      else sendRaw(req, res, 200, doc.protobuf, `application/${PROTOBUF_V2}`);
      return true;
    }
    if (path === '/openapi/v3' || path === '/openapi/v3/') {
      const body = JSON.stringify(this.#documents().index);
      res.setHeader('Etag', `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"`);
      sendRaw(req, res, 200, body, 'application/json');
      return true;
    }
    if (path.startsWith('/openapi/v3/')) {
      const doc = this.#documents().byPath.get(path.slice('/openapi/v3/'.length));
      if (doc === undefined) {
        sendStatus(req, res, resourceNotFound());
        return true;
      }
      res.setHeader('Vary', 'Accept');
      if (acceptable(req.headers.accept, ['json']) === undefined) {
        sendRaw(req, res, 406, '', undefined);
        return true;
      }
      const requested = url.searchParams.get('hash');
      res.setHeader('Etag', `"${doc.hash}"`);
      if (requested !== null && requested !== '' && requested !== doc.hash) {
        res.setHeader('Location', `/openapi/v3/${path.slice('/openapi/v3/'.length)}?hash=${doc.hash}`);
        sendRaw(req, res, 301, '', undefined);
        return true;
      }
      if (requested === doc.hash) {
        res.setHeader('Cache-Control', 'public, immutable');
        res.setHeader('Expires', new Date(this.#core.clock.now() + 365 * 86_400_000).toUTCString());
      }
      sendRaw(req, res, 200, doc.body, 'application/json');
      return true;
    }
    return false;
  }
}

/** A document answer as Go's http.ServeContent gives it: 304 when If-None-Match names the ETag already set. */
function sendRaw(req: IncomingMessage, res: ServerResponse, code: number, body: string | Buffer, contentType: string | undefined): void {
  if (res.headersSent || res.writableEnded) return;
  const etag = res.getHeader('Etag');
  const ifNoneMatch = req.headers['if-none-match'];
  if (code === 200 && typeof etag === 'string' && ifNoneMatch !== undefined && ifNoneMatch.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
    res.writeHead(304);
    res.end();
    return;
  }
  const headers: Record<string, string | number> = { 'Content-Length': Buffer.byteLength(body) };
  if (contentType !== undefined) headers['Content-Type'] = contentType;
  res.writeHead(code, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Serves `/openapi/v2` and `/openapi/v3...` from a server core, and validates fields against the same schemas. */
export function installOpenApi(core: ApiServerHost): OpenApiDocuments {
  installFieldValidation(core);
  const docs = new OpenApiDocuments(core);
  core.routes.push({ prefix: '/openapi/', handle: (req, res, url) => docs.handle(req, res, url) });
  return docs;
}
