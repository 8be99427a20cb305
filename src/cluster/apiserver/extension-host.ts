/**
 * What an extension of the API server sees of it (`ApiServerHost`), and the
 * shapes extensions add (`Route`, `ResponseFormatter`). The core implements
 * the host and installs its extensions (admission, custom-resource schemas,
 * table printing, OpenAPI); they depend on this module, never on core.ts, so
 * the core can import them without an import cycle.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../clock/clock.ts';
import type { Races } from '../../clock/races.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { AdmissionChain } from './admission.ts';
import type { Authorizer } from './authorization.ts';
import type { CustomResourceStrategyFactory } from './crd-controller.ts';
import type { ListResult } from './list.ts';
import type { ObjectOperations } from './operations.ts';
import type { RequestContext, ResourceDef } from './resource-def.ts';
import type { ResourceRegistry } from './resources.ts';
import type { ObjectStore } from './storage.ts';

/** An extra HTTP route: answers true when it handled the request. */
export interface Route {
  /** Path prefix it serves, e.g. `/openapi/`. */
  prefix: string;
  /** Whether anyone may reach the route (no authorization; a wrong bearer token is still 401). Otherwise RBAC decides, as for any non-resource path. */
  anonymous?: boolean;
  handle(req: IncomingMessage, res: ServerResponse, url: URL): boolean | Promise<boolean>;
}

/** An alternative encoding of a GET/LIST answer or of watch events (e.g. `as=Table`). */
export interface ResponseFormatter {
  /** A replacement for a single object or list body, or undefined to keep JSON. */
  format?(input: { accept: string; def: ResourceDef; query: URLSearchParams; object?: KubeObject; list?: ListResult }): { contentType: string; body: string } | undefined;
  /** A replacement for the object of one watch event, or undefined; `first` is true for a stream's first event (Tables carry headers only there). */
  formatWatchObject?(input: { accept: string; def: ResourceDef; query: URLSearchParams; type: string; object: KubeObject; first: boolean }): unknown;
}

/** The parts of the API server an extension installs itself into. */
export interface ApiServerHost {
  readonly clock: Clock;
  /** Race mode, when on: random latencies drawn from its seed. */
  readonly races: Races | undefined;
  /** Admission webhooks are called from a worker thread of their own (webhook-thread.ts). */
  readonly webhookThread: boolean;
  readonly registry: ResourceRegistry;
  readonly store: ObjectStore;
  readonly admission: AdmissionChain;
  readonly ops: ObjectOperations;
  /** Who may do what (`system:masters`, then RBAC). */
  readonly authorizer: Authorizer;
  readonly routes: Route[];
  readonly formatters: ResponseFormatter[];
  /** The strategy of a custom resource version: the base one unless an extension wraps it. */
  customResourceStrategy: CustomResourceStrategyFactory;
  /** A context for the server's own writes (controllers, bootstrap). */
  systemContext(dryRun?: boolean): RequestContext;
}
