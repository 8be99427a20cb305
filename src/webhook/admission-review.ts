/**
 * AdmissionReview v1 (admission.k8s.io/v1) on the wire: reading the request an
 * API server sends to a webhook, and the four kinds of answer the handlers give
 * (`allowed`, `denied`, `patched`, `errored`), in the manner of
 * controller-runtime's admission package.
 *
 * Invariants:
 * - every response carries the request's uid (the API server rejects answers
 *   whose uid differs);
 * - the objects of the request stay raw parsed JSON: handlers read them through
 *   tolerant accessors and mutate deep copies, and `patched` diffs the raw
 *   request object against the copy, so fields this project does not know
 *   survive byte for byte (STYLE §7); the diff is linear in the size of what
 *   changed, whatever the object's shape;
 * - nothing here throws on input: a malformed review is a `{ ok: false }` with
 *   the HTTP code to answer (400, or 413 above `MAX_ADMISSION_BODY_BYTES`).
 * Start at `parseAdmissionReview` and `reviewResponse`.
 */
import type { FieldError } from '../k8s/field-errors.ts';
import { invalidObjectMessage, invalidStatusCauses } from '../k8s/field-errors.ts';
import { diffJson } from '../k8s/json-diff.ts';
import { isPlainObject } from '../k8s/json.ts';
import type { AdmissionOperation, GroupVersionKind, GroupVersionResource } from '../k8s/wire.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_REVIEW_KIND = 'AdmissionReview';

/** The largest review body accepted (controller-runtime's limit: 3 MiB; the API server caps objects near there). */
export const MAX_ADMISSION_BODY_BYTES = 3 * 1024 * 1024;

export type { AdmissionOperation, GroupVersionKind, GroupVersionResource };

export interface AdmissionUserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The `request` of an AdmissionReview; `object`/`oldObject`/`options` are the raw JSON sent. */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  /** '' when the request is not for a subresource. */
  subResource: string;
  name: string;
  namespace: string;
  operation: AdmissionOperation;
  userInfo: AdmissionUserInfo;
  object: unknown;
  oldObject: unknown;
  options: unknown;
  dryRun: boolean;
}

/** The `status` of a refusal: a `metav1.Status` as the API server turns it into the client's error. */
export interface AdmissionStatus {
  code: number;
  message: string;
  reason?: string;
  status?: 'Failure';
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { reason: string; message: string; field: string }[];
    /** Seconds the client should wait before retrying (429s). */
    retryAfterSeconds?: number;
  };
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  /** base64 of a JSON Patch (RFC 6902). */
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_REVIEW_KIND;
  response: AdmissionResponse;
}

export type ParseResult =
  | { ok: true; request: AdmissionRequest }
  /** `uid` is set when the body was readable far enough to find one, so the error response can echo it. */
  | { ok: false; code: 400 | 413; message: string; uid: string };

const OPERATIONS: ReadonlySet<string> = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function groupVersionKind(value: unknown): GroupVersionKind {
  const v = isPlainObject(value) ? value : {};
  return { group: str(v['group']), version: str(v['version']), kind: str(v['kind']) };
}

function groupVersionResource(value: unknown): GroupVersionResource {
  const v = isPlainObject(value) ? value : {};
  return { group: str(v['group']), version: str(v['version']), resource: str(v['resource']) };
}

function userInfo(value: unknown): AdmissionUserInfo {
  if (!isPlainObject(value)) return {};
  const out: AdmissionUserInfo = {};
  if (typeof value['username'] === 'string') out.username = value['username'];
  if (typeof value['uid'] === 'string') out.uid = value['uid'];
  if (Array.isArray(value['groups'])) out.groups = value['groups'].filter((g): g is string => typeof g === 'string');
  return out;
}

/**
 * Reads an AdmissionReview body. Refused (400): not JSON, not an object,
 * another apiVersion or kind, no `request`, no uid, an unknown operation;
 * (413): more than `MAX_ADMISSION_BODY_BYTES`. Objects are kept raw.
 */
export function parseAdmissionReview(body: string | Uint8Array): ParseResult {
  const size = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
  if (size > MAX_ADMISSION_BODY_BYTES) {
    return { ok: false, code: 413, message: `request entity is too large; limit is ${MAX_ADMISSION_BODY_BYTES} bytes`, uid: '' };
  }
  if (size === 0) return { ok: false, code: 400, message: 'request body is empty', uid: '' };
  let parsed: unknown;
  try {
    // The body's bytes decoded where they lie (Buffer.from(body) would copy them first).
    parsed = JSON.parse(typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (err) {
    return { ok: false, code: 400, message: `couldn't decode the AdmissionReview: ${err instanceof Error ? err.message : String(err)}`, uid: '' };
  }
  if (!isPlainObject(parsed)) return { ok: false, code: 400, message: 'the body is not an AdmissionReview object', uid: '' };
  const request = parsed['request'];
  const uid = isPlainObject(request) ? str(request['uid']) : '';
  const fail = (message: string): ParseResult => ({ ok: false, code: 400, message, uid });
  if (parsed['apiVersion'] !== ADMISSION_API_VERSION || parsed['kind'] !== ADMISSION_REVIEW_KIND) {
    return fail(
      `expected apiVersion ${ADMISSION_API_VERSION} and kind ${ADMISSION_REVIEW_KIND}, got ${JSON.stringify(parsed['apiVersion'] ?? null)} / ${JSON.stringify(parsed['kind'] ?? null)}`,
    );
  }
  if (!isPlainObject(request)) return fail('the AdmissionReview has no request');
  if (uid === '') return fail('the AdmissionReview request has no uid');
  const operation = str(request['operation']);
  if (!OPERATIONS.has(operation)) return fail(`unknown admission operation ${JSON.stringify(request['operation'] ?? null)}`);
  return {
    ok: true,
    request: {
      uid,
      kind: groupVersionKind(request['kind']),
      resource: groupVersionResource(request['resource']),
      subResource: str(request['subResource']),
      name: str(request['name']),
      namespace: str(request['namespace']),
      operation: operation as AdmissionOperation,
      userInfo: userInfo(request['userInfo']),
      object: request['object'] ?? undefined,
      oldObject: request['oldObject'] ?? undefined,
      options: request['options'] ?? undefined,
      dryRun: request['dryRun'] === true,
    },
  };
}

/** DryRun of the request or of its Create/Delete options (`dryRun: ["All"]`): admit with no side effect (§2.1.4, §3.2). */
export function isDryRun(req: AdmissionRequest, options: unknown = req.options): boolean {
  if (req.dryRun) return true;
  const dryRun = isPlainObject(options) ? options['dryRun'] : undefined;
  return Array.isArray(dryRun) && dryRun.length > 0;
}

/** Admit unchanged. */
export function allowed(uid: string, warnings?: readonly string[]): AdmissionResponse {
  const response: AdmissionResponse = { uid, allowed: true };
  if (warnings !== undefined && warnings.length > 0) response.warnings = [...warnings];
  return response;
}

/** Refuse with a status code and message; 403 Forbidden is controller-runtime's default. */
export function denied(uid: string, code: number, message: string, reason?: string): AdmissionResponse {
  const status: AdmissionStatus = { code, message, status: 'Failure' };
  if (reason !== undefined && reason !== '') status.reason = reason;
  return { uid, allowed: false, status };
}

/**
 * Refuse because processing failed (the reference's `admission.Errored`):
 * the error's message and the code; anything thrown may arrive here.
 */
export function errored(uid: string, code: number, err: unknown): AdmissionResponse {
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : JSON.stringify(err) ?? String(err);
  return { uid, allowed: false, status: { code, message: message === '' ? 'unknown error' : message, status: 'Failure' } };
}

/**
 * Admit with the JSON Patch that turns the raw request object into `mutated`;
 * no patch at all when they are equal. The patch is built in time linear in
 * what differs (k8s/json-diff.ts): subtrees `mutated` shares with `raw` are
 * skipped, and arrays are never searched for a minimal edit.
 */
export function patched(uid: string, raw: unknown, mutated: unknown, warnings?: readonly string[]): AdmissionResponse {
  const ops = diffJson(raw, mutated);
  const response = allowed(uid, warnings);
  if (ops.length === 0) return response;
  response.patch = Buffer.from(JSON.stringify(ops), 'utf8').toString('base64');
  response.patchType = 'JSONPatch';
  return response;
}

/**
 * Refuse an object that failed validation, as `errors.NewInvalid` does: 422,
 * reason Invalid, a message listing every field error and one cause per error.
 */
export function invalidObject(uid: string, kind: { group: string; kind: string }, name: string, errors: readonly FieldError[]): AdmissionResponse {
  return {
    uid,
    allowed: false,
    status: {
      code: 422,
      status: 'Failure',
      reason: 'Invalid',
      message: invalidObjectMessage(kind.kind, kind.group, name, errors),
      details: { name, group: kind.group, kind: kind.kind, causes: invalidStatusCauses(errors) },
    },
  };
}

/** The body to send: the response wrapped in an AdmissionReview. */
export function reviewResponse(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_REVIEW_KIND, response };
}

/** The JSON Patch operations of a response (tests and logs); [] when there is none or it is unreadable. */
export function decodePatch(response: AdmissionResponse): unknown[] {
  if (response.patch === undefined) return [];
  try {
    const ops: unknown = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
    return Array.isArray(ops) ? ops : [];
  } catch {
    return [];
  }
}

/** The result label of a response, for metrics and logs. */
export function responseResult(response: AdmissionResponse): 'allowed' | 'patched' | 'denied' | 'errored' {
  if (response.allowed) return response.patch !== undefined ? 'patched' : 'allowed';
  const code = response.status?.code ?? 403;
  return code >= 500 ? 'errored' : 'denied';
}
