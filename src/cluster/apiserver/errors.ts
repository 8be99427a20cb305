/**
 * API errors as the real API server reports them: `metav1.Status` objects with
 * the reason, code, details and message texts of k8s.io/apimachinery/pkg/api/errors,
 * so client-node's `ApiException` and kubectl print what they print against a
 * real cluster.
 *
 * Errors are data: every operation of the embedded API server returns
 * `Result<T>` = `{ ok: true, value } | { ok: false, status }`; only the HTTP
 * layer turns a Status into a response. Start with `statusError` and the named
 * constructors below (`notFound`, `conflict`, `invalid`, ...).
 */
import { goQuote, invalidObjectMessage, invalidStatusCauses, type FieldError } from '../../k8s/field-errors.ts';

import type { ServerStatus as Status, StatusCause, StatusDetails, StatusReason } from '../../k8s/wire.ts';

/** The server writes the strict `metav1.Status` (k8s/wire.ts `ServerStatus`). */
export type { Status, StatusCause, StatusDetails, StatusReason };

export type Result<T> = { ok: true; value: T } | { ok: false; status: Status };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = <T = never>(status: Status): Result<T> => ({ ok: false, status });

/** Identifies a resource in messages: `pods "x"` or `deployments.apps "x"`. */
export interface GroupResource {
  group: string;
  resource: string;
}

export function qualifiedResource(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

function detailsFor(gr: GroupResource | undefined, name: string | undefined): StatusDetails {
  const details: StatusDetails = {};
  if (name !== undefined && name !== '') details.name = name;
  if (gr !== undefined && gr.group !== '') details.group = gr.group;
  if (gr !== undefined && gr.resource !== '') details.kind = gr.resource;
  return details;
}

/** A failure Status with the given code and reason; `details` is omitted when empty unless `keepEmptyDetails`. */
export function statusError(code: number, reason: StatusReason, message: string, details?: StatusDetails, keepEmptyDetails = false): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message };
  if (reason !== '') status.reason = reason;
  if (details !== undefined && (keepEmptyDetails || Object.keys(details).length > 0)) status.details = details;
  status.code = code;
  return status;
}

/** The Status of a successful delete (`finalizeDelete`): no code, no message. */
export function successStatus(details: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

export function notFound(gr: GroupResource, name: string): Status {
  return statusError(404, 'NotFound', `${qualifiedResource(gr)} ${goQuote(name)} not found`, detailsFor(gr, name));
}

/** The 404 of a path no resource serves. */
export function resourceNotFound(): Status {
  return statusError(404, 'NotFound', 'the server could not find the requested resource', {}, true);
}

export function alreadyExists(gr: GroupResource, name: string): Status {
  return statusError(409, 'AlreadyExists', `${qualifiedResource(gr)} ${goQuote(name)} already exists`, detailsFor(gr, name));
}

export const MODIFIED_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

/** `errors.NewConflict`: `Operation cannot be fulfilled on <resource> "<name>": <why>`. */
export function conflict(gr: GroupResource, name: string, why: string = MODIFIED_MESSAGE): Status {
  return statusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(gr)} ${goQuote(name)}: ${why}`, detailsFor(gr, name));
}

/** `errors.NewInvalid`: 422, details.kind is the Kind (not the resource), one cause per field error. */
export function invalid(kind: string, group: string, name: string, errors: readonly FieldError[]): Status {
  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (group !== '') details.group = group;
  details.kind = kind;
  details.causes = invalidStatusCauses(errors);
  return statusError(422, 'Invalid', invalidObjectMessage(kind, group, name, errors), details);
}

/** An Invalid status whose message is written by hand (for texts FieldError cannot print, such as Go's `0x0`). */
export function invalidWithMessage(kind: string, group: string, name: string, field: string, reason: string, body: string): Status {
  const qualifiedKind = group === '' ? kind : `${kind}.${group}`;
  const details: StatusDetails = { ...(name !== '' ? { name } : {}), ...(group !== '' ? { group } : {}), kind, causes: [{ reason, message: body, field }] };
  return statusError(422, 'Invalid', `${qualifiedKind} ${goQuote(name)} is invalid: ${field}: ${body}`, details);
}

export function badRequest(message: string): Status {
  return statusError(400, 'BadRequest', message);
}

export function methodNotAllowed(): Status {
  return statusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}, true);
}

/** The negotiation error for a body or patch type the resource does not accept. */
export function unsupportedMediaType(accepted: readonly string[]): Status {
  return statusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
}

export function notAcceptable(accepted: readonly string[]): Status {
  return statusError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
}

export function requestEntityTooLarge(limit: number | string): Status {
  return statusError(413, 'RequestEntityTooLarge', `Request entity too large: ${typeof limit === 'number' ? `limit is ${limit}` : limit}`);
}

/**
 * What kube-apiserver answers when etcd refuses a write over its request
 * limit: etcd's error passed through as a 500 without a reason (the API
 * server does not map it; kubernetes/kubernetes#112152).
 */
export function etcdRequestTooLarge(): Status {
  return statusError(500, '', 'etcdserver: request is too large');
}

export function unauthorized(): Status {
  return statusError(401, 'Unauthorized', 'Unauthorized');
}

/** `errors.NewForbidden`: `<resource> "<name>" is forbidden: <why>`. */
export function forbidden(gr: GroupResource, name: string, why: string, causes?: StatusCause[]): Status {
  const subject = name === '' ? `${qualifiedResource(gr)} is forbidden` : `${qualifiedResource(gr)} ${goQuote(name)} is forbidden`;
  const details = detailsFor(gr, name);
  if (causes !== undefined) details.causes = causes;
  return statusError(403, 'Forbidden', `${subject}: ${why}`, details);
}

/** 410 Expired (watch too old, continue token too old). */
export function expired(message: string): Status {
  return statusError(410, 'Expired', message);
}

export function tooManyRequests(message: string, retryAfterSeconds?: number): Status {
  const details: StatusDetails = {};
  if (retryAfterSeconds !== undefined) details.retryAfterSeconds = retryAfterSeconds;
  return statusError(429, 'TooManyRequests', message, details);
}

export function internalError(message: string): Status {
  return statusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function timeout(message: string, retryAfterSeconds = 0): Status {
  const details: StatusDetails = retryAfterSeconds > 0 ? { retryAfterSeconds } : {};
  return statusError(504, 'Timeout', `Timeout: ${message}`, details, true);
}

/**
 * A Status for an arbitrary code, as `errors.NewGenericServerResponse` builds
 * it (used by fault injection and by JSON patch application failures).
 */
export function genericServerResponse(code: number, serverMessage: string, gr?: GroupResource, name?: string): Status {
  const known: Record<number, [StatusReason, string]> = {
    400: ['BadRequest', 'the server rejected our request for an unknown reason'],
    401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
    403: ['Forbidden', 'the server does not allow access to the requested resource'],
    404: ['NotFound', 'the server could not find the requested resource'],
    405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    409: ['Conflict', 'the server reported a conflict'],
    410: ['Gone', 'the server no longer has the requested resource'],
    413: ['RequestEntityTooLarge', 'the server has rejected the request because the request entity is too large'],
    415: ['UnsupportedMediaType', 'the server does not support the requested media type'],
    422: ['Invalid', 'the server rejected our request due to an error in our request'],
    429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
    500: ['InternalError', 'an error on the server has prevented the request from succeeding'],
    503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
    504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
  };
  const [reason, message] = known[code] ?? ['Unknown', `the server responded with the status code ${code} but did not return more information`];
  const details = detailsFor(gr, name);
  if (serverMessage !== '') details.causes = [{ reason: 'UnexpectedServerResponse', message: serverMessage }];
  return statusError(code, reason, message, details, true);
}

/** The HTTP code a Status is sent with (Success statuses without a code are 200). */
export function httpCodeOf(status: Status): number {
  if (typeof status.code === 'number' && status.code >= 100 && status.code < 600) return status.code;
  return status.status === 'Success' ? 200 : 500;
}
