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
 * - `/openapi/v2`: the same definitions as one Swagger 2.0 JSON document when
 *   JSON is acceptable; a request that accepts only protobuf (kubectl's
 *   first try) gets 406, which client-go treats as "not served here".
 * Documents are rebuilt when the set of served resources changes (CRDs).
 * Start at `installOpenApi`.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../../../k8s/types.ts';
import type { ApiServerHost } from '../extension-host.ts';
import { CRD_RESOURCE } from '../crd-controller.ts';
import { SERVER_VERSION } from '../discovery.ts';
import { notAcceptable, resourceNotFound } from '../errors.ts';
import { sendBody, sendStatus } from '../http-util.ts';
import { APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, supportedPatchTypes } from '../patch.ts';
import type { ResourceDef } from '../resource-def.ts';
import { SCALE_KIND } from '../scale.ts';
import { installFieldValidation } from './field-validation.ts';
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
  paths[prefix] = {
    parameters: pathParams(false),
    get: operation('list', gvk, `list${idBase}`, { parameters: LIST_PARAMS, responses: ok(`${META}.Status`) }),
    post: operation('post', gvk, `create${idBase}`, { parameters: WRITE_PARAMS, requestBody: { required: true, content: content(objectRef) }, responses: { ...ok(objectRef), '201': { description: 'Created', content: content(objectRef) } } }),
    delete: operation('deletecollection', gvk, `deleteCollection${idBase}`, { parameters: LIST_PARAMS, responses: ok(`${META}.Status`) }),
  };
  paths[`${prefix}/{name}`] = {
    parameters: pathParams(true),
    get: operation('get', gvk, `read${idBase}`, { responses: ok(objectRef) }),
    put: operation('put', gvk, `replace${idBase}`, { parameters: WRITE_PARAMS, requestBody: { required: true, content: content(objectRef) }, responses: ok(objectRef) }),
    patch: operation('patch', gvk, `patch${idBase}`, { parameters: [...WRITE_PARAMS, queryParam('force', 'boolean', 'Take over conflicting fields on apply.')], requestBody: patchBody(supportedPatchTypes(def)), responses: ok(objectRef) }),
    delete: operation('delete', gvk, `delete${idBase}`, { parameters: [queryParam('dryRun', 'string', 'Check only.'), queryParam('gracePeriodSeconds', 'integer', 'Grace period.'), queryParam('propagationPolicy', 'string', 'Orphan, Background or Foreground.')], responses: ok(`${META}.Status`) }),
  };
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

interface Documents {
  index: Record<string, unknown>;
  byPath: Map<string, { body: string; hash: string }>;
}

export class OpenApiDocuments {
  readonly #core: ApiServerHost;
  readonly #catalog = new SchemaCatalog();
  #docs: Documents | undefined;
  #v2: string | undefined;

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
    for (const g of this.#core.registry.groups()) {
      for (const version of g.versions) {
        const defs = this.#core.registry.all().filter((d) => d.group === g.name && d.version === version);
        const paths: Record<string, SchemaObject> = {};
        const refs = new Set<string>();
        for (const def of defs) resourcePaths(def, this.#catalog.definitionOf(def), paths, refs);
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
    this.#docs = { index: { paths: index }, byPath };
    return this.#docs;
  }

  #v2Document(): string {
    if (this.#v2 !== undefined) return this.#v2;
    this.#refreshCatalog();
    const roots = new Set<string>();
    for (const def of this.#core.registry.all()) {
      const name = this.#catalog.definitionOf(def);
      if (name !== undefined) roots.add(name);
    }
    const definitions = this.#catalog.closure(roots, 'v2' satisfies OpenApiVersion);
    this.#v2 = JSON.stringify({ swagger: '2.0', info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion }, paths: {}, definitions });
    return this.#v2;
  }

  handle(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
    const path = url.pathname;
    req.resume();
    if (path === '/openapi/v2') {
      const accept = req.headers.accept ?? '';
      if (accept !== '' && !/application\/json|\*\/\*/.test(accept)) {
        sendStatus(req, res, notAcceptable(['application/json']));
        return true;
      }
      sendBody(req, res, 200, this.#v2Document());
      return true;
    }
    if (path === '/openapi/v3' || path === '/openapi/v3/') {
      sendBody(req, res, 200, JSON.stringify(this.#documents().index));
      return true;
    }
    if (path.startsWith('/openapi/v3/')) {
      const doc = this.#documents().byPath.get(path.slice('/openapi/v3/'.length));
      if (doc === undefined) {
        sendStatus(req, res, resourceNotFound());
        return true;
      }
      const requested = url.searchParams.get('hash');
      res.setHeader('Etag', `"${doc.hash}"`);
      res.setHeader('Cache-Control', requested === doc.hash ? 'public, immutable' : 'no-cache, private');
      sendBody(req, res, 200, doc.body);
      return true;
    }
    return false;
  }
}

/** Serves `/openapi/v2` and `/openapi/v3...` from a server core, and validates fields against the same schemas. */
export function installOpenApi(core: ApiServerHost): OpenApiDocuments {
  installFieldValidation(core);
  const docs = new OpenApiDocuments(core);
  core.routes.push({ prefix: '/openapi/', handle: (req, res, url) => docs.handle(req, res, url) });
  return docs;
}
