/**
 * The HTTP front of the API server: authentication and impersonation
 * (authentication.ts), authorization of every request, resource and
 * non-resource alike (authorization.ts: a 403 Status when it may not), then
 * health, version, extension routes, discovery and resource requests
 * (routing, fault injection, verbs, subresources). Every request except the long-lived part of a watch runs as
 * one tracked activity on the server's clock. Nothing a client sends can
 * throw out of here: unexpected exceptions become a 500 Status.
 *
 * Start at `handle`, then `#resource` for the verb dispatch.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { ACTIVITY_HEADER } from '../../clock/clock.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { BUILTIN_BODY_MEDIA_TYPES, decodeBody, mediaType, readBody } from './body.ts';
import { forbiddenStatus, resourceAttributes, type AuthorizationAttributes } from './authorization-attributes.ts';
import type { Authenticator } from './authentication.ts';
import type { ApiServerControl, RequestKey } from './control.ts';
import type { ApiServerCore } from './core.ts';
import { deleteCollection, deleteObject, parseDeleteOptions } from './delete.ts';
import {
  aggregatedContentType,
  aggregatedDiscovery,
  aggregatedDiscoveryVersion,
  apiGroupDocument,
  apiGroupList,
  apiResourceList,
  apiVersions,
  SERVER_VERSION,
} from './discovery.ts';
import { badRequest, fail, internalError, invalid, methodNotAllowed, ok, resourceNotFound, unsupportedMediaType, type Result } from './errors.ts';
import { intParam, sendBody, sendStatus, sendText, writeQuery } from './http-util.ts';
import { parseSelectors, type ListOptions } from './list.ts';
import { APPLY_PATCH, patchObject, supportedPatchTypes } from './patch.ts';
import { parseRequestInfo, type ResourceRequestInfo } from './request-info.ts';
import { apiVersionOf, type RequestContext, type ResourceDef, type UserInfo } from './resource-def.ts';
import { getScale, updateScale } from './scale.ts';
import { listJson, objectJson } from './serialize.ts';
import { DEFAULT_WATCH_TIMEOUT_MS, WatchSession } from './watch.ts';
import { forbidden as forbiddenField } from '../../k8s/field-errors.ts';

const OPEN_PATHS = ['/healthz', '/livez', '/readyz'];

export interface HandlerOptions {
  authenticator: Authenticator;
  /** host:port clients use, for `/api`'s serverAddressByClientCIDRs. */
  hostPort: () => string;
}

type Reply = { code: number; body: string; contentType?: string };

export class HttpHandler {
  readonly #core: ApiServerCore;
  readonly #control: ApiServerControl;
  readonly #opts: HandlerOptions;
  readonly #watches = new Set<WatchSession>();
  /** Race mode: how many watches each stream identity opened so far (it names their delay channels). */
  readonly #watchChannels = new Map<string, number>();

  constructor(core: ApiServerCore, control: ApiServerControl, opts: HandlerOptions) {
    this.#core = core;
    this.#control = control;
    this.#opts = opts;
  }

  /** Ends every open watch; returns how many there were. */
  cutWatches(): number {
    const all = [...this.#watches];
    for (const w of all) w.close();
    return all.length;
  }

  /** Race mode: every open watch writes the events it holds back, now. */
  flushWatches(): void {
    for (const w of this.#watches) w.flush();
  }

  /** Serves one request; the watch part that outlives the setup is not a tracked activity. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    res.setHeader('Audit-Id', randomUUID());
    this.#core.clock.activity
      .run(`apiserver ${req.method ?? ''} ${req.url ?? ''}`, () => this.#handle(req, res))
      .catch((err: unknown) => {
        sendStatus(req, res, internalError(err instanceof Error ? err.message : String(err)));
      });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const path = url.pathname;
    const authenticated = this.#opts.authenticator.authenticate(req);
    const acting = authenticated.ok ? this.#opts.authenticator.impersonate(req, authenticated.user) : authenticated;
    if (!acting.ok) {
      req.resume();
      sendStatus(req, res, acting.status);
      return;
    }
    const user = acting.user;
    const route = this.#core.routes.find((r) => path === r.prefix || path.startsWith(r.prefix));
    const info = parseRequestInfo(req.method ?? 'GET', path, url.searchParams);
    if (route?.anonymous !== true) {
      const attributes: AuthorizationAttributes =
        info.kind === 'resource' ? resourceAttributes(user, info, url.searchParams) : { user, verb: (req.method ?? 'GET').toLowerCase(), resourceRequest: false, path };
      const decision = this.#core.authorizer.authorize(attributes);
      if (!decision.allowed) {
        req.resume();
        const status = forbiddenStatus(attributes, decision.reason);
        this.#control.recordForbidden(attributes, req.headers['user-agent'] ?? '', status.message ?? '');
        sendStatus(req, res, status);
        return;
      }
    }
    if (OPEN_PATHS.some((p) => path === p || path.startsWith(`${p}/`))) {
      sendText(res, 200, 'ok');
      return;
    }
    if (path === '/version') {
      sendBody(req, res, 200, JSON.stringify(SERVER_VERSION, null, 2));
      return;
    }
    if (route !== undefined && (await route.handle(req, res, url))) return;
    if (info.kind === 'nonResource') {
      req.resume();
      const reply = this.#discovery(req, path);
      if (reply === undefined) sendStatus(req, res, resourceNotFound());
      else sendBody(req, res, reply.code, reply.body, [], reply.contentType);
      return;
    }
    await this.#resource(req, res, url, info, user);
  }

  #discovery(req: IncomingMessage, path: string): Reply | undefined {
    const registry = this.#core.registry;
    const parts = path.split('/').filter((p) => p !== '');
    const aggregated = aggregatedDiscoveryVersion(req.headers.accept);
    if (parts.length === 1 && (parts[0] === 'api' || parts[0] === 'apis') && aggregated !== undefined) {
      return { code: 200, body: JSON.stringify(aggregatedDiscovery(registry, parts[0] === 'api', aggregated)), contentType: aggregatedContentType(aggregated) };
    }
    let doc: Record<string, unknown> | undefined;
    if (parts.length === 1 && parts[0] === 'api') doc = apiVersions(this.#opts.hostPort());
    else if (parts.length === 1 && parts[0] === 'apis') doc = apiGroupList(registry);
    else if (parts.length === 2 && parts[0] === 'api') doc = apiResourceList(registry, '', parts[1] as string);
    else if (parts.length === 2 && parts[0] === 'apis') doc = apiGroupDocument(registry, parts[1] as string);
    else if (parts.length === 3 && parts[0] === 'apis') doc = apiResourceList(registry, parts[1] as string, parts[2] as string);
    return doc === undefined ? undefined : { code: 200, body: JSON.stringify(doc) };
  }

  async #resource(req: IncomingMessage, res: ServerResponse, url: URL, info: ResourceRequestInfo, user: UserInfo): Promise<void> {
    const def = this.#core.registry.get(info.group, info.version, info.resource);
    const isNamespaceObject = info.group === '' && info.resource === 'namespaces';
    if (def === undefined || (!def.namespaced && info.namespace !== '' && !isNamespaceObject) || !this.#hasSubresource(def, info.subresource)) {
      req.resume();
      sendStatus(req, res, resourceNotFound());
      return;
    }
    const namespace = def.namespaced ? info.namespace : '';
    const key: RequestKey = { group: def.group, resource: def.plural, verb: info.verb, subresource: info.subresource, namespace, name: info.name, userAgent: req.headers['user-agent'] ?? '' };
    this.#control.recordRequest(key);
    const fault = this.#control.takeFault(key);
    if (fault?.delayMs !== undefined && fault.delayMs > 0) await this.#core.clock.sleep(fault.delayMs, undefined, { name: 'apiserver injected latency' });
    const faultStatus = fault === undefined ? undefined : this.#control.faultStatus(fault, key);
    if (faultStatus !== undefined) {
      req.resume();
      sendStatus(req, res, faultStatus);
      return;
    }
    const ctx: RequestContext = { user, dryRun: false, warnings: def.deprecationWarning === undefined ? [] : [def.deprecationWarning], userAgent: req.headers['user-agent'] ?? '' };
    const result = await this.#dispatch(req, res, url, info, def, namespace, ctx);
    if (result === undefined) return; // a watch, answered by its session
    if (!result.ok) sendStatus(req, res, result.status, ctx.warnings);
    else sendBody(req, res, result.value.code, result.value.body, ctx.warnings, result.value.contentType);
  }

  #hasSubresource(def: ResourceDef, sub: string): boolean {
    if (sub === '') return true;
    if (sub === 'status') return def.subresources.status === true;
    if (sub === 'scale') return def.subresources.scale !== undefined;
    return def.subresources.handlers?.[sub] !== undefined;
  }

  async #body(req: IncomingMessage, kind: string, accepted?: readonly string[]): Promise<Result<unknown>> {
    const raw = await readBody(req);
    if (!raw.ok) return raw;
    return decodeBody(raw.value, mediaType(req.headers['content-type']), kind, accepted);
  }

  /** Serves one resource request; undefined when the response was already handled (watch). */
  async #dispatch(req: IncomingMessage, res: ServerResponse, url: URL, info: ResourceRequestInfo, def: ResourceDef, ns: string, ctx: RequestContext): Promise<Result<Reply> | undefined> {
    const ops = this.#core.ops;
    const query = url.searchParams;
    const sub = info.subresource;
    const obj = (code: number, o: KubeObject): Result<Reply> => ok(this.#formatObject(req, def, query, code, o));
    const handler = sub !== '' && sub !== 'status' && sub !== 'scale' ? def.subresources.handlers?.[sub] : undefined;
    if (handler !== undefined) {
      const verb = info.verb === 'list' || info.verb === 'watch' || info.verb === 'deletecollection' ? undefined : info.verb;
      if (verb === undefined || !handler.verbs.includes(verb)) return (req.resume(), fail(methodNotAllowed()));
      let body: unknown;
      if (verb === 'create' || verb === 'update' || verb === 'patch') {
        const b = await this.#body(req, handler.kind?.kind ?? def.kind, verb === 'patch' ? supportedPatchTypes(def) : BUILTIN_BODY_MEDIA_TYPES);
        if (!b.ok) return b;
        body = b.value;
      } else req.resume();
      const wq = writeQuery(query, 'CreateOptions');
      if (!wq.ok) return wq;
      ctx.dryRun = wq.value.dryRun;
      const r = await handler.handle({ verb, resource: def, subresource: sub, namespace: ns, name: info.name, body, patchType: mediaType(req.headers['content-type']), query, context: ctx });
      return r.ok ? ok({ code: r.value.code, body: JSON.stringify(r.value.body) }) : r;
    }
    if (def.namespaced && ns === '' && !['list', 'watch'].includes(info.verb)) return (req.resume(), fail(methodNotAllowed()));
    if (sub !== '' && !['get', 'update', 'patch'].includes(info.verb)) return (req.resume(), fail(methodNotAllowed()));
    if (!def.verbs.includes(info.verb) && sub === '') return (req.resume(), fail(methodNotAllowed()));
    switch (info.verb) {
      case 'get': {
        req.resume();
        if (sub === 'scale') {
          const r = getScale(ops, def, ns, info.name);
          return r.ok ? ok({ code: 200, body: JSON.stringify(r.value) }) : r;
        }
        const r = ops.get(def, ns, info.name);
        return r.ok ? obj(200, r.value) : r;
      }
      case 'list': {
        req.resume();
        const opts = listOptions(query);
        if (!opts.ok) return opts;
        const r = ops.list(def, ns, opts.value);
        if (!r.ok) return r;
        const custom = this.#format(req, def, query, { list: r.value });
        if (custom !== undefined) return ok({ code: 200, ...custom });
        const meta: Record<string, unknown> = { resourceVersion: r.value.resourceVersion };
        if (r.value.continue !== undefined) meta['continue'] = r.value.continue;
        if (r.value.remainingItemCount !== undefined) meta['remainingItemCount'] = r.value.remainingItemCount;
        return ok({ code: 200, body: listJson(def.listKind, apiVersionOf(def), meta, r.value.items, def.builtin) });
      }
      case 'watch':
        req.resume();
        return this.#watch(req, res, query, info, def, ns);
      case 'create': {
        if (info.name !== '') return (req.resume(), fail(methodNotAllowed()));
        const wq = writeQuery(query, 'CreateOptions');
        if (!wq.ok) return (req.resume(), wq);
        const body = await this.#body(req, def.kind, def.builtin ? BUILTIN_BODY_MEDIA_TYPES : undefined);
        if (!body.ok) return body;
        this.#applyWriteQuery(ctx, wq.value);
        if (def.virtualCreate !== undefined) {
          const checked = ops.checkBody(def, body.value);
          if (!checked.ok) return checked;
          const answered = def.virtualCreate(checked.value, ctx, ns);
          return answered.ok ? ok({ code: 201, body: JSON.stringify(answered.value) }) : answered;
        }
        const r = await ops.create(def, ns, body.value, ctx);
        return r.ok ? obj(201, r.value) : r;
      }
      case 'update': {
        const wq = writeQuery(query, 'UpdateOptions');
        if (!wq.ok) return (req.resume(), wq);
        const body = await this.#body(req, sub === 'scale' ? 'Scale' : def.kind, def.builtin || sub === 'scale' ? BUILTIN_BODY_MEDIA_TYPES : undefined);
        if (!body.ok) return body;
        this.#applyWriteQuery(ctx, wq.value);
        const r = sub === 'scale' ? await updateScale(ops, def, ns, info.name, body.value, undefined, ctx) : await ops.update(def, ns, info.name, body.value, ctx, sub);
        return r.ok ? obj(r.value.created ? 201 : 200, r.value.object) : r;
      }
      case 'patch': {
        const wq = writeQuery(query, 'PatchOptions');
        if (!wq.ok) return (req.resume(), wq);
        const patchType = mediaType(req.headers['content-type']);
        const accepted = sub === 'scale' ? supportedPatchTypes(def).filter((t) => t !== APPLY_PATCH) : supportedPatchTypes(def);
        if (!accepted.includes(patchType)) return (req.resume(), fail(unsupportedMediaType(accepted)));
        const body = await this.#body(req, def.kind, accepted);
        if (!body.ok) return body;
        this.#applyWriteQuery(ctx, wq.value);
        const r =
          sub === 'scale'
            ? await updateScale(ops, def, ns, info.name, body.value, patchType, ctx)
            : await patchObject(ops, def, ns, info.name, { patchType, body: body.value, subresource: sub, ...(wq.value.fieldManager !== undefined ? { fieldManager: wq.value.fieldManager } : {}), ...(wq.value.force !== undefined ? { force: wq.value.force } : {}) }, ctx);
        return r.ok ? obj(r.value.created ? 201 : 200, r.value.object) : r;
      }
      case 'delete':
      case 'deletecollection': {
        const wq = writeQuery(query, 'DeleteOptions');
        if (!wq.ok) return (req.resume(), wq);
        const raw = await readBody(req);
        if (!raw.ok) return raw;
        let bodyValue: unknown = {};
        if (raw.value.length > 0) {
          const decoded = decodeBody(raw.value, mediaType(req.headers['content-type']), 'DeleteOptions', BUILTIN_BODY_MEDIA_TYPES);
          if (!decoded.ok) return decoded;
          bodyValue = decoded.value;
          const dryRun = (bodyValue as { dryRun?: unknown }).dryRun;
          if (Array.isArray(dryRun) && dryRun.includes('All')) wq.value.dryRun = true;
        }
        const opts = parseDeleteOptions(bodyValue, query);
        if (!opts.ok) return opts;
        this.#applyWriteQuery(ctx, wq.value);
        if (info.verb === 'delete') {
          const r = await deleteObject(ops, def, ns, info.name, opts.value, ctx);
          if (!r.ok) return r;
          const body = r.value.body;
          return ok({ code: r.value.code, body: body.kind === 'Status' ? JSON.stringify(body) : objectJson(body as KubeObject) });
        }
        const lo = listOptions(query);
        if (!lo.ok) return lo;
        const r = await deleteCollection(ops, def, ns, lo.value, opts.value, ctx);
        if (!r.ok) return r;
        return ok({ code: 200, body: listJson(def.listKind, apiVersionOf(def), { resourceVersion: r.value.resourceVersion }, r.value.items, def.builtin) });
      }
    }
  }

  #applyWriteQuery(ctx: RequestContext, wq: { dryRun: boolean; fieldManager?: string; fieldValidation?: RequestContext['fieldValidation'] }): void {
    ctx.dryRun = wq.dryRun;
    if (wq.fieldValidation !== undefined) ctx.fieldValidation = wq.fieldValidation;
    if (wq.fieldManager !== undefined) ctx.fieldManager = wq.fieldManager;
  }

  #format(req: IncomingMessage, def: ResourceDef, query: URLSearchParams, input: { object?: KubeObject; list?: import('./list.ts').ListResult }) {
    const accept = req.headers.accept ?? '';
    for (const f of this.#core.formatters) {
      const out = f.format?.({ accept, def, query, ...input });
      if (out !== undefined) return out;
    }
    return undefined;
  }

  #formatObject(req: IncomingMessage, def: ResourceDef, query: URLSearchParams, code: number, o: KubeObject): Reply {
    const custom = this.#format(req, def, query, { object: o });
    return custom !== undefined ? { code, ...custom } : { code, body: objectJson(o) };
  }

  #watch(req: IncomingMessage, res: ServerResponse, query: URLSearchParams, info: ResourceRequestInfo, def: ResourceDef, ns: string): Result<Reply> | undefined {
    const fieldSelector = info.name === '' ? query.get('fieldSelector') ?? '' : [query.get('fieldSelector') ?? '', `metadata.name=${info.name}`].filter((s) => s !== '').join(',');
    const selectors = parseSelectors(def, query.get('labelSelector') ?? '', fieldSelector);
    if (!selectors.ok) return selectors;
    const timeoutSeconds = intParam(query, 'timeoutSeconds');
    if (timeoutSeconds === 'invalid') return fail(badRequest(`invalid value for timeoutSeconds: ${query.get('timeoutSeconds') ?? ''}`));
    const sendInitial = query.get('sendInitialEvents');
    const match = query.get('resourceVersionMatch') ?? '';
    const bookmarks = query.get('allowWatchBookmarks') === 'true';
    const errs = [];
    if (sendInitial === 'true') {
      if (match !== 'NotOlderThan') errs.push(forbiddenField('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
      if (!bookmarks) errs.push(forbiddenField('allowWatchBookmarks', 'sendInitialEvents requires setting allowWatchBookmarks to true'));
    } else if (match !== '') {
      errs.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    }
    if (errs.length > 0) return fail(invalid('ListOptions', 'meta.k8s.io', '', errs));
    const header = req.headers[ACTIVITY_HEADER];
    const value = Array.isArray(header) ? header[0] : header;
    let activityStream: string | undefined;
    if (value !== undefined) {
      const colon = value.indexOf(':');
      const clockId = colon >= 0 ? value.slice(0, colon) : '';
      if (clockId !== '' && clockId === this.#core.clock.activity.id) activityStream = value.slice(colon + 1);
    }
    const accept = req.headers.accept ?? '';
    const formatters = this.#core.formatters.filter((f) => f.formatWatchObject !== undefined);
    let events = 0;
    const transform =
      formatters.length === 0
        ? undefined
        : (type: string, object: KubeObject) => {
            const first = events++ === 0;
            for (const f of formatters) {
              const out = f.formatWatchObject?.({ accept, def, query, type, object, first });
              if (out !== undefined) return out;
            }
            return undefined;
          };
    const races = this.#core.races;
    let delay: (() => number) | undefined;
    if (races !== undefined) {
      // A channel per stream, named by who watches what (the watcher's own name when it gives one, without the
      // sequence number its client appends) and how often it did: stable from run to run, whatever order
      // concurrent watches arrive in.
      const watcher = activityStream?.replace(/-[0-9]+$/, '') ?? '';
      const identity = `${String(req.headers['user-agent'] ?? '')} ${watcher} ${def.group}/${def.plural} ${ns} ${query.get('labelSelector') ?? ''} ${fieldSelector}`;
      const n = (this.#watchChannels.get(identity) ?? 0) + 1;
      this.#watchChannels.set(identity, n);
      const channel = `${identity} #${n}`;
      delay = () => races.delay('watch', channel);
    }
    const session = new WatchSession(
      this.#core.ops,
      this.#core.clock,
      res,
      {
        def,
        namespace: ns === '' ? undefined : ns,
        selectors: selectors.value,
        resourceVersion: query.get('resourceVersion') ?? '',
        sendInitialEvents: sendInitial === 'true',
        allowBookmarks: bookmarks,
        timeoutMs: timeoutSeconds === undefined || timeoutSeconds === 0 ? DEFAULT_WATCH_TIMEOUT_MS : timeoutSeconds * 1000,
        activityStream,
        ...(transform !== undefined ? { transform } : {}),
        ...(delay !== undefined ? { delay } : {}),
      },
      (s) => this.#watches.delete(s),
    );
    this.#watches.add(session);
    session.start();
    return undefined;
  }
}

function listOptions(query: URLSearchParams): Result<ListOptions> {
  const opts: ListOptions = {};
  const limit = intParam(query, 'limit');
  if (limit === 'invalid') return fail(badRequest(`invalid value for limit: ${query.get('limit') ?? ''}`));
  if (limit !== undefined) opts.limit = limit;
  for (const key of ['labelSelector', 'fieldSelector', 'continue', 'resourceVersion', 'resourceVersionMatch'] as const) {
    const v = query.get(key);
    if (v !== null) opts[key] = v;
  }
  return ok(opts);
}
