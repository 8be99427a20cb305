/**
 * What can go wrong when talking to an API server, as two error classes:
 *
 * - `ApiError`: the server answered with a non-2xx code. It carries the
 *   `metav1.Status` body (or one synthesised from the code when the body is
 *   not a Status, as client-go does for proxies that answer HTML), so callers
 *   branch on `reason`/`code`, never on message text.
 * - `NetworkError`: no usable answer: refused/reset connection, TLS failure,
 *   a timeout on the clock, the caller's abort, or a 2xx body that is not JSON.
 *
 * The `is*` predicates follow k8s.io/apimachinery/pkg/api/errors: a reason
 * match wins; when the server gave no known reason, the HTTP code decides.
 * They accept `unknown` so a `catch (err)` can use them directly.
 * Start at `ApiError` and `isRetryable`.
 */

import type { Status, StatusDetails } from '../k8s/wire.ts';

/** A `metav1.Status` as a client reads it (every field optional: servers vary). */
export type { Status, StatusDetails };

export interface RequestDescription {
  method: string;
  path: string;
}

/** The server answered with an error status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status code. */
  readonly code: number;
  /** `Status.reason` (e.g. `NotFound`, `Conflict`, `Expired`); '' when the server gave none. */
  readonly reason: string;
  readonly status: Status;
  readonly method: string;
  readonly path: string;
  /** From `Retry-After` or `details.retryAfterSeconds`, when present. */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: number, status: Status, request: RequestDescription, retryAfterSeconds?: number) {
    super(`${request.method} ${request.path}: ${code} ${status.reason ?? ''}${status.message !== undefined ? `: ${status.message}` : ''}`.replace(/ +:/, ':'));
    this.code = code;
    this.status = status;
    this.reason = typeof status.reason === 'string' ? status.reason : '';
    this.method = request.method;
    this.path = request.path;
    this.retryAfterSeconds = retryAfterSeconds ?? (typeof status.details?.retryAfterSeconds === 'number' ? status.details.retryAfterSeconds : undefined);
  }
}

export type NetworkErrorKind =
  /** Connection refused, reset, DNS, TLS: nothing usable came back. */
  | 'connection'
  /** The request's timeout (on the clock) elapsed. */
  | 'timeout'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** A 2xx answer whose body could not be read as JSON. */
  | 'protocol';

/** No usable answer from the server. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  readonly kind: NetworkErrorKind;
  readonly method: string;
  readonly path: string;

  constructor(kind: NetworkErrorKind, message: string, request: RequestDescription, cause?: unknown) {
    super(`${request.method} ${request.path}: ${message}`, cause === undefined ? undefined : { cause });
    this.kind = kind;
    this.method = request.method;
    this.path = request.path;
  }
}

export type ClientError = ApiError | NetworkError;

/** The reason text client-go would infer for a code when the body is not a Status. */
const REASON_FOR_CODE: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/**
 * The Status of an error answer: the body when it is a Status object,
 * otherwise one made from the code with the body text as message.
 */
export function statusFromBody(code: number, text: string): Status {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && (parsed as { kind?: unknown }).kind === 'Status') {
      return parsed as Status;
    }
  } catch {
    // Not JSON: fall through to a synthesised Status.
  }
  const trimmed = text.trim();
  return {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code,
    reason: REASON_FOR_CODE[code] ?? '',
    message: trimmed === '' ? `the server responded with status ${code}` : trimmed.slice(0, 1024),
  };
}

/** An in-stream watch ERROR object as an ApiError (its code is the Status code, 500 when absent). */
export function apiErrorFromStatus(status: Status, request: RequestDescription): ApiError {
  const code = typeof status.code === 'number' && status.code > 0 ? status.code : 500;
  return new ApiError(code, status, request);
}

const UNKNOWN_REASONS = new Set(['', 'Unknown']);

function matches(err: unknown, reasons: readonly string[], code: number): boolean {
  if (!(err instanceof ApiError)) return false;
  if (reasons.includes(err.reason)) return true;
  return UNKNOWN_REASONS.has(err.reason) && err.code === code;
}

export const isNotFound = (err: unknown): boolean => matches(err, ['NotFound'], 404);
/** Reason only, as upstream: a bare 409 is a conflict. */
export const isAlreadyExists = (err: unknown): boolean => err instanceof ApiError && err.reason === 'AlreadyExists';
/** A resourceVersion precondition failed (optimistic concurrency): re-read and retry. */
export const isConflict = (err: unknown): boolean => matches(err, ['Conflict'], 409);
/** 410: the resourceVersion is older than the server keeps (`Expired` or `Gone`): relist. */
export const isGone = (err: unknown): boolean => matches(err, ['Gone', 'Expired'], 410) || (err instanceof ApiError && err.code === 410);
export const isInvalid = (err: unknown): boolean => matches(err, ['Invalid'], 422);
export const isBadRequest = (err: unknown): boolean => matches(err, ['BadRequest'], 400);
export const isTooManyRequests = (err: unknown): boolean => matches(err, ['TooManyRequests'], 429);
export const isForbidden = (err: unknown): boolean => matches(err, ['Forbidden'], 403);
export const isUnauthorized = (err: unknown): boolean => matches(err, ['Unauthorized'], 401);
export const isMethodNotAllowed = (err: unknown): boolean => matches(err, ['MethodNotAllowed'], 405);
export const isUnsupportedMediaType = (err: unknown): boolean => matches(err, ['UnsupportedMediaType'], 415);
/** The server gave up (504 / reason Timeout), not our own timeout. */
export const isServerTimeout = (err: unknown): boolean => matches(err, ['Timeout'], 504);
export const isServiceUnavailable = (err: unknown): boolean => matches(err, ['ServiceUnavailable'], 503);
export const isInternalError = (err: unknown): boolean => matches(err, ['InternalError'], 500);

export const isNetworkError = (err: unknown): err is NetworkError => err instanceof NetworkError;
/** Our own request timeout on the clock elapsed. */
export const isTimeout = (err: unknown): boolean => err instanceof NetworkError && err.kind === 'timeout';
/** The caller's signal aborted the request. */
export const isAborted = (err: unknown): boolean => err instanceof NetworkError && err.kind === 'aborted';

/**
 * Worth retrying the same request later: network trouble (but not the
 * caller's own abort), 429, 5xx. Conflicts are not here: they need a re-read
 * first, which only the caller can do.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof NetworkError) return err.kind !== 'aborted';
  if (err instanceof ApiError) return err.code === 429 || err.code >= 500;
  return false;
}

/** The delay the server asked for (429/503 with Retry-After), in milliseconds. */
export function retryAfterMs(err: unknown): number | undefined {
  if (!(err instanceof ApiError) || err.retryAfterSeconds === undefined) return undefined;
  return Math.max(0, err.retryAfterSeconds) * 1000;
}

/** A short, log-friendly description of any thrown value. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
