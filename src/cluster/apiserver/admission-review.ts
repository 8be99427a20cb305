/**
 * The AdmissionReview exchange with one webhook
 * (k8s.io/apiserver/pkg/admission/plugin/webhook/request and /errors):
 *
 * - `buildAdmissionReview`: the request the webhook receives — a fresh uid per
 *   call, the (possibly equivalent-version) kind and resource the webhook is
 *   called with next to the ones of the request, the operation's options
 *   object, the user, `object`/`oldObject` (null where the operation has
 *   none) and `dryRun`;
 * - `verifyAdmissionResponse`: the checks upstream makes of the answer (a
 *   response present; for v1 the same uid and apiVersion/kind; a patch only
 *   with a patchType and only from a mutating webhook);
 * - `webhookRejection`: how a denial becomes the request's error
 *   (`admission webhook "<name>" denied the request: <message>`, the
 *   webhook's status code when it is ≥ 400, otherwise 400);
 * - `applyWebhookPatch`: a JSON patch applied to the object that was sent.
 *
 * v1 and v1beta1 reviews differ only in apiVersion and in how strictly the
 * answer is checked; the first version of `admissionReviewVersions` this
 * server knows is used, as upstream does.
 */
import { isPlainObject } from '../../k8s/json.ts';
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';
import type { AdmissionAttributes } from './admission.ts';
import { statusError, type Status, type StatusDetails, type StatusReason } from './errors.ts';
import { applyJsonPatch } from './patch.ts';
import { base64Problem } from './webhook-configuration.ts';
import type { WebhookInvocation } from './webhook-matching.ts';

export const ADMISSION_V1 = 'admission.k8s.io/v1';
export const ADMISSION_V1BETA1 = 'admission.k8s.io/v1beta1';

/** The review apiVersion to speak with a webhook, or undefined when it accepts none this server knows. */
export function reviewVersionFor(versions: readonly string[]): string | undefined {
  for (const v of versions) {
    if (v === 'v1') return ADMISSION_V1;
    if (v === 'v1beta1') return ADMISSION_V1BETA1;
  }
  return undefined;
}

const OPTIONS_KIND: Record<string, string> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: '' };

/** The options object of an operation as upstream sends it: typed meta.k8s.io/v1 options, dryRun folded in. */
export function operationOptions(attrs: AdmissionAttributes): Record<string, unknown> | null {
  const kind = OPTIONS_KIND[attrs.operation] ?? '';
  if (kind === '') return null;
  const options: Record<string, unknown> = { kind, apiVersion: 'meta.k8s.io/v1' };
  for (const [k, v] of Object.entries(attrs.options)) {
    if (k !== 'kind' && k !== 'apiVersion' && v !== undefined) options[k] = v;
  }
  if (attrs.dryRun) options['dryRun'] = ['All'];
  return options;
}

export interface ReviewObjects {
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
}

/** The AdmissionReview request of one webhook call. */
export function buildAdmissionReview(apiVersion: string, uid: string, attrs: AdmissionAttributes, invocation: WebhookInvocation, objects: ReviewObjects, namespace: string): Record<string, unknown> {
  const requestResource = { group: attrs.resource.group, version: attrs.resource.version, resource: attrs.resource.plural };
  const request: Record<string, unknown> = {
    uid,
    kind: { group: invocation.kind.group, version: invocation.kind.version, kind: invocation.kind.kind },
    resource: { group: invocation.resource.group, version: invocation.resource.version, resource: invocation.resource.resource },
  };
  if (invocation.subresource !== '') request['subResource'] = invocation.subresource;
  request['requestKind'] = { group: attrs.kind.group, version: attrs.kind.version, kind: attrs.kind.kind };
  request['requestResource'] = requestResource;
  if (attrs.subresource !== '') request['requestSubResource'] = attrs.subresource;
  if (attrs.name !== '') request['name'] = attrs.name;
  if (namespace !== '') request['namespace'] = namespace;
  request['operation'] = attrs.operation;
  const userInfo: Record<string, unknown> = {};
  if (attrs.user.username !== '') userInfo['username'] = attrs.user.username;
  if (attrs.user.uid !== undefined && attrs.user.uid !== '') userInfo['uid'] = attrs.user.uid;
  if (attrs.user.groups.length > 0) userInfo['groups'] = [...attrs.user.groups];
  if (attrs.user.extra !== undefined && Object.keys(attrs.user.extra).length > 0) userInfo['extra'] = structuredClone(attrs.user.extra);
  request['userInfo'] = userInfo;
  request['object'] = objects.object ?? null;
  request['oldObject'] = objects.oldObject ?? null;
  request['dryRun'] = attrs.dryRun;
  request['options'] = operationOptions(attrs);
  return { kind: 'AdmissionReview', apiVersion, request };
}

/** What a webhook answered, once checked. */
export interface CheckedWebhookResponse {
  allowed: boolean;
  /** The decoded JSON patch text, when there is one. */
  patch?: string;
  patchType: string;
  result: Record<string, unknown>;
  warnings: string[];
}

export type Verified = { ok: true; response: CheckedWebhookResponse } | { ok: false; error: string };

function gvkString(review: Record<string, unknown>): string {
  const apiVersion = asString(review['apiVersion']) ?? '';
  const slash = apiVersion.lastIndexOf('/');
  const group = slash >= 0 ? apiVersion.slice(0, slash) : '';
  const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion;
  return `${group}/${version}, Kind=${asString(review['kind']) ?? ''}`;
}

/**
 * The typed-decode step of the answer: field shapes a Go client would refuse.
 * Returns the error text, or undefined when the review decodes.
 */
export function reviewDecodeError(review: unknown): string | undefined {
  if (!isPlainObject(review)) return `json: cannot unmarshal ${Array.isArray(review) ? 'array' : review === null ? 'null' : typeof review} into Go value of type v1.AdmissionReview`;
  const response = review['response'];
  if (response === undefined || response === null) return undefined;
  if (!isPlainObject(response)) return 'json: cannot unmarshal into Go struct field AdmissionReview.response of type v1.AdmissionResponse';
  const typeError = (field: string, type: string) => `json: cannot unmarshal ${jsonType(response[field])} into Go struct field AdmissionResponse.response.${field} of type ${type}`;
  if (response['allowed'] !== undefined && typeof response['allowed'] !== 'boolean') return typeError('allowed', 'bool');
  if (response['uid'] !== undefined && typeof response['uid'] !== 'string') return typeError('uid', 'types.UID');
  if (response['patch'] !== undefined && response['patch'] !== null) {
    if (typeof response['patch'] !== 'string') return typeError('patch', '[]uint8');
    const bad = base64Problem(response['patch']);
    if (bad !== undefined) return `illegal base64 data at input byte ${bad}`;
  }
  if (response['patchType'] !== undefined && response['patchType'] !== null && typeof response['patchType'] !== 'string') return typeError('patchType', 'v1.PatchType');
  if (response['status'] !== undefined && response['status'] !== null && !isPlainObject(response['status'])) return typeError('status', 'v1.Status');
  const warnings = response['warnings'];
  if (warnings !== undefined && warnings !== null && (!Array.isArray(warnings) || !warnings.every((w) => typeof w === 'string'))) return typeError('warnings', '[]string');
  return undefined;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

/** Upstream's messages for a non-2xx answer without a Status body (errors.NewGenericServerResponse). */
function genericResponseMessage(code: number, serverMessage: string): string {
  const known: Record<number, string> = {
    400: 'the server rejected our request for an unknown reason',
    401: 'the server has asked for the client to provide credentials',
    404: 'the server could not find the requested resource',
    405: 'the server does not allow this method on the requested resource',
    409: 'the server reported a conflict',
    422: 'the server rejected our request due to an error in our request',
    429: 'the server has received too many requests and has asked us to try again later',
    503: 'the server is currently unable to handle the request',
    504: 'the server was unable to return a response in the time allotted, but may still be processing the request',
  };
  if (code === 403 || code === 415) return serverMessage;
  const k = known[code];
  if (k !== undefined) return k;
  if (code >= 500) return `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`;
  return `the server responded with the status code ${code} but did not return more information`;
}

function mediaTypeOf(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

export type AnswerReading = { ok: true; review: Record<string, unknown> } | { ok: false; error: string };

/**
 * How the API server's REST client reads a webhook's HTTP answer: a non-2xx
 * code is an error (the Status message when the body is one), a body in a
 * media type it cannot decode is an error, then JSON and the typed decode.
 */
export function readWebhookAnswer(status: number, contentType: string, body: string): AnswerReading {
  const media = mediaTypeOf(contentType);
  const isJson = media === '' || media === 'application/json' || media.endsWith('+json');
  let parsed: unknown;
  let parseError: string | undefined;
  if (isJson) {
    try {
      parsed = JSON.parse(body) as unknown;
    } catch (err) {
      parseError = err instanceof Error ? err.message : String(err);
    }
  }
  if (status < 200 || status > 206) {
    const st = asRecord(parsed);
    if (st !== undefined && typeof st['status'] === 'string' && st['status'] !== '') return { ok: false, error: asString(st['message']) ?? '' };
    return { ok: false, error: genericResponseMessage(status, media.startsWith('text/') ? body.trim() : 'unknown') };
  }
  if (!isJson) return { ok: false, error: `serializer for ${media} doesn't exist` };
  if (parseError !== undefined) return { ok: false, error: `couldn't get version/kind; json parse error: ${parseError}` };
  const decodeError = reviewDecodeError(parsed);
  if (decodeError !== undefined) return { ok: false, error: decodeError };
  return { ok: true, review: parsed as Record<string, unknown> };
}

/** webhookrequest.VerifyAdmissionResponse. */
export function verifyAdmissionResponse(apiVersion: string, uid: string, mutating: boolean, review: Record<string, unknown>): Verified {
  const response = asRecord(review['response']);
  if (response === undefined) return { ok: false, error: 'webhook response was absent' };
  if (apiVersion === ADMISSION_V1) {
    const got = asString(response['uid']) ?? '';
    if (got !== uid) return { ok: false, error: `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(got)}` };
    if (review['apiVersion'] !== ADMISSION_V1 || review['kind'] !== 'AdmissionReview') {
      return { ok: false, error: `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gvkString(review)}` };
    }
  }
  const patchText = typeof response['patch'] === 'string' && response['patch'] !== '' ? Buffer.from(response['patch'], 'base64').toString('utf8') : undefined;
  const patchType = asString(response['patchType']) ?? '';
  if (patchText !== undefined && patchType === '') return { ok: false, error: 'webhook returned response.patch but not response.patchType' };
  if (patchText !== undefined && !mutating) return { ok: false, error: 'validating webhook may not return response.patch' };
  const out: CheckedWebhookResponse = {
    allowed: response['allowed'] === true,
    patchType,
    result: asRecord(response['status']) ?? {},
    warnings: (asArray(response['warnings']) ?? []).filter((w): w is string => typeof w === 'string'),
  };
  if (patchText !== undefined) out.patch = patchText;
  return { ok: true, response: out };
}

/** webhookerrors.ToStatusErr: the error a denial becomes. */
export function webhookRejection(webhookName: string, result: Record<string, unknown>): Status {
  const deniedBy = `admission webhook ${JSON.stringify(webhookName)} denied the request`;
  const rawCode = typeof result['code'] === 'number' ? Math.trunc(result['code']) : 0;
  const code = rawCode < 400 ? 400 : rawCode;
  const message = asString(result['message']) ?? '';
  const reason = asString(result['reason']) ?? '';
  const text = message !== '' ? `${deniedBy}: ${message}` : reason !== '' ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`;
  const status = statusError(code, reason as StatusReason, text);
  const details = asRecord(result['details']);
  if (details !== undefined) status.details = structuredClone(details) as StatusDetails;
  const metadata = asRecord(result['metadata']);
  if (metadata !== undefined) status.metadata = structuredClone(metadata) as Status['metadata'];
  return status;
}

export type Patched = { ok: true; object: KubeObject } | { ok: false; error: string };

/** Applies a webhook's JSON patch (text) to the object it was sent. */
export function applyWebhookPatch(object: KubeObject, patchText: string): Patched {
  let ops: unknown;
  try {
    ops = JSON.parse(patchText) as unknown;
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  if (!Array.isArray(ops)) return { ok: false, error: `json: cannot unmarshal ${jsonType(ops)} into Go value of type jsonpatch.Patch` };
  const applied = applyJsonPatch(object, ops);
  if (!applied.ok) return { ok: false, error: applied.status.details?.causes?.[0]?.message ?? applied.status.message ?? 'the patch could not be applied' };
  if (!isPlainObject(applied.value)) return { ok: false, error: `json: cannot unmarshal ${jsonType(applied.value)} into Go value of type map[string]interface {}` };
  return { ok: true, object: applied.value as KubeObject };
}

/** True when the decoded patch has no operations (then it changes nothing and is not applied). */
export function isEmptyPatch(patchText: string): boolean {
  try {
    const ops = JSON.parse(patchText) as unknown;
    return Array.isArray(ops) && ops.length === 0;
  } catch {
    return false;
  }
}
