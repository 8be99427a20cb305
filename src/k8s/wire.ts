/**
 * The Kubernetes wire types that both sides of this project speak — the
 * client (src/client/, the webhook) and the embedded API server
 * (src/cluster/apiserver/) — defined once. Where the reader and the writer
 * need different guarantees there are two explicit variants: the lenient one
 * is what a client may receive from any server (every field optional), the
 * strict one is what this project's server writes (every field it always
 * sets is required).
 *
 * Types only: nothing here runs.
 */

// ---- identity ----

/** `schema.GroupVersionKind` (as admission.k8s.io/v1 and the registry carry it). */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** `schema.GroupVersionResource`. */
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

// ---- metav1.Status ----

/** `metav1.StatusReason` values the API server uses ('' for none). */
export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'Unauthorized'
  | 'Forbidden'
  | 'Gone'
  | 'Expired'
  | 'TooManyRequests'
  | 'InternalError'
  | 'Timeout'
  | 'ServiceUnavailable'
  | 'Unknown'
  | '';

/** `metav1.StatusCause`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** `metav1.StatusDetails`. */
export interface StatusDetails {
  name?: string;
  group?: string;
  /** Upstream puts the resource (plural) here for most errors, the Kind for Invalid. */
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A `metav1.Status` as a client reads it: every field optional, since servers vary (lenient). */
export interface Status {
  kind?: string;
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  status?: string;
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/** A `metav1.Status` as the embedded API server writes it (strict): kind, apiVersion, metadata and status always set. */
export interface ServerStatus extends Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string; resourceVersion?: string };
  status: 'Failure' | 'Success';
  reason?: StatusReason;
}

// ---- watch ----

/** `watch.EventType` of a watch stream's events (ERROR carries a Status). */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** The event types that carry an object (not a Status). */
export type ObjectWatchEventType = Exclude<WatchEventType, 'ERROR'>;

/** The event types of a change to stored objects (a bookmark changes nothing). */
export type ChangeEventType = Exclude<ObjectWatchEventType, 'BOOKMARK'>;

// ---- request options ----

/** The `metav1.ListOptions` query parameters of a list (and the start of a watch). */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
}

/** List options as a server receives them, before it checks them: resourceVersionMatch may be any text (lenient). */
export type ReceivedListOptions = Omit<ListOptions, 'resourceVersionMatch'> & { resourceVersionMatch?: string };

/** `metav1.DeletionPropagation`. */
export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

/** The `metav1.DeleteOptions` body of a delete (dryRun travels as a query parameter). */
export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: PropagationPolicy;
  /** Deprecated upstream; read by the server, never sent by this client. */
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

// ---- admission.k8s.io/v1 ----

/** `admissionv1.Operation`. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
