/**
 * PATCH (k8s.io/apiserver/pkg/endpoints/handlers/patch.go): the four patch
 * content types and what a failure of each answers.
 *
 * - `application/json-patch+json` (RFC 6902, `test` included): operations
 *   apply in order on a copy; the first failure → 422 with the failing
 *   operation's message as the cause (upstream's generic 422 response);
 * - `application/merge-patch+json` (RFC 7396);
 * - `application/strategic-merge-patch+json`: built-in kinds only, with the
 *   merge keys of `patchMetaForKind`; custom resources → 415 listing the types
 *   they accept;
 * - `application/apply-patch+yaml`: server-side apply (apply.ts).
 * The patched object then goes through the normal update pipeline, re-applied
 * to the fresh object if a concurrent write wins the race.
 *
 * Bounds, as kube-apiserver's (a patch is small, what it makes need not be):
 * a JSON Patch of more than 10,000 operations is refused unread (413); the
 * bytes `copy` operations add are counted before each copy is made and the
 * patch fails once they pass 3 MiB (JSONPatchMaxCopyBytes; 422 with the patch
 * library's message — also for patches from mutating webhooks); and a patched
 * object whose JSON is larger than etcd's 1.5 MiB request limit is refused as
 * etcd refuses it (500 "etcdserver: request is too large") before anything
 * else looks at it. So the work of a patch is bounded by sizes, whatever its
 * operations: 25 copies of a doubling value used to take the process down.
 */
import { applyPatch } from 'rfc6902';
import type { Operation } from 'rfc6902';
import { Pointer } from 'rfc6902/pointer.js';
import { isPlainObject } from '../../k8s/json.ts';
import { jsonMergePatch } from '../../k8s/merge-patch.ts';
import { patchMetaForKind, strategicMergePatch } from '../../k8s/strategic-merge.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { applyObject, type PatchRequest } from './apply.ts';
import { badRequest, etcdRequestTooLarge, fail, genericServerResponse, internalError, ok, requestEntityTooLarge, unsupportedMediaType, type Result } from './errors.ts';
import type { ObjectOperations, WriteOutcome } from './operations.ts';
import { apiVersionOf, type RequestContext, type ResourceDef } from './resource-def.ts';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

/** kube-apiserver's maxJSONPatchOperations. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;
/** kube-apiserver's default JSONPatchMaxCopyBytes: what `copy` operations may add to a document, in all. */
export const JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024;
/** etcd's default request limit (--max-request-bytes), which bounds what one write may store. */
export const MAX_STORED_OBJECT_BYTES = 1.5 * 1024 * 1024;

/** The patch types a resource accepts, in upstream's order. */
export function supportedPatchTypes(def: ResourceDef): string[] {
  const types = [JSON_PATCH, MERGE_PATCH];
  if (def.builtin && patchMetaForKind(apiVersionOf(def), def.kind) !== undefined) types.push(STRATEGIC_MERGE_PATCH);
  types.push(APPLY_PATCH);
  return types;
}

function missingPathMessage(op: string, path: string): string {
  return op === 'replace' ? `replace operation does not apply: doc is missing key: ${path}: missing value` : `${op} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`;
}

/** The value at JSON Pointer `path` of `doc`, and whether the parent of `to` exists; undefined when either cannot be resolved. */
function copySource(doc: unknown, from: unknown, to: string): unknown {
  if (typeof from !== 'string') return undefined;
  try {
    const value: unknown = Pointer.fromJSON(from).get(doc);
    const target = Pointer.fromJSON(to).evaluate(doc);
    return target.parent === undefined || target.parent === null ? undefined : value;
  } catch {
    // A malformed pointer: the patch library reports it, as before.
    return undefined;
  }
}

/** The number of bytes of `value` as compact JSON. */
function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/**
 * Applies an RFC 6902 patch to a copy of `target`; the first failing operation
 * stops it. A `copy` is measured before it is made: once the copies add more
 * than JSON_PATCH_MAX_COPY_BYTES in all, the patch fails (evanphx/json-patch's
 * AccumulatedCopySizeLimit, which kube-apiserver sets).
 */
export function applyJsonPatch(target: KubeObject, patch: unknown): Result<unknown> {
  if (!Array.isArray(patch)) return fail(badRequest(`json: cannot unmarshal ${patch === null ? 'null' : typeof patch} into Go value of type jsonpatch.Patch`));
  const doc: unknown = structuredClone(target);
  let copied = 0;
  for (const raw of patch as unknown[]) {
    if (!isPlainObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      return fail(genericServerResponse(422, 'Unexpected kind: unknown'));
    }
    if (!['add', 'remove', 'replace', 'move', 'copy', 'test'].includes(raw.op)) return fail(genericServerResponse(422, `Unexpected kind: ${raw.op}`));
    if (['add', 'replace', 'test'].includes(raw.op) && !('value' in raw)) return fail(genericServerResponse(422, `missing value for operation ${raw.op}`));
    if (raw.op === 'copy') {
      const source = copySource(doc, raw.from, raw.path);
      if (source !== undefined) {
        copied += jsonBytes(source);
        if (copied > JSON_PATCH_MAX_COPY_BYTES) {
          return fail(genericServerResponse(422, `Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${JSON_PATCH_MAX_COPY_BYTES}`));
        }
      }
    }
    const [result] = applyPatch(doc, [raw as unknown as Operation]);
    if (result === null || result === undefined) continue;
    if (result.name === 'TestError') return fail(genericServerResponse(422, `testing value ${raw.path} failed: test failed`));
    if (result.name === 'MissingError') return fail(genericServerResponse(422, missingPathMessage(raw.op, raw.path)));
    return fail(genericServerResponse(422, result.message));
  }
  return ok(doc);
}

/** A JSON Patch sent by a client (PATCH of an object or its scale): at most MAX_JSON_PATCH_OPERATIONS operations, then `applyJsonPatch`. */
export function applyRequestJsonPatch(target: KubeObject, patch: unknown): Result<unknown> {
  if (Array.isArray(patch) && patch.length > MAX_JSON_PATCH_OPERATIONS) {
    return fail(requestEntityTooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`));
  }
  return applyJsonPatch(target, patch);
}

/** The object `patch` (of `patchType`, already parsed) makes of `current`. */
export function applyPatchBody(def: ResourceDef, current: KubeObject, patchType: string, patch: unknown): Result<unknown> {
  switch (patchType) {
    case JSON_PATCH:
      return applyRequestJsonPatch(current, patch);
    case MERGE_PATCH:
      return ok(jsonMergePatch(current, patch));
    case STRATEGIC_MERGE_PATCH: {
      const meta = def.builtin ? patchMetaForKind(apiVersionOf(def), def.kind) : undefined;
      if (meta === undefined) return fail(unsupportedMediaType(supportedPatchTypes(def)));
      const result = strategicMergePatch(current, patch, meta);
      if (result.ok) return ok(result.value);
      // Upstream passes unrecognised merge errors through as internal errors; malformed documents are bad requests.
      return fail(result.error.includes('does not contain declared merge key') ? internalError(result.error) : badRequest(result.error));
    }
    default:
      return fail(unsupportedMediaType(supportedPatchTypes(def)));
  }
}

/** PATCH of a main resource or `/status`. */
export async function patchObject(ops: ObjectOperations, def: ResourceDef, namespace: string, name: string, req: PatchRequest, ctx: RequestContext): Promise<Result<WriteOutcome>> {
  if (!supportedPatchTypes(def).includes(req.patchType)) return fail(unsupportedMediaType(supportedPatchTypes(def)));
  if (req.patchType === APPLY_PATCH) return applyObject(ops, def, namespace, name, req, ctx);
  return ops.updateWith(
    def,
    namespace,
    name,
    ctx,
    req.subresource,
    req.options ?? {},
    async (current) => {
      if (current === undefined) return fail(badRequest('no object to patch'));
      const patched = applyPatchBody(def, current, req.patchType, req.body);
      if (!patched.ok) return patched;
      // What etcd would refuse to store is refused before admission and validation spend time on it.
      if (jsonBytes(patched.value) > MAX_STORED_OBJECT_BYTES) return fail(etcdRequestTooLarge());
      const checked = ops.checkBody(def, patched.value);
      if (!checked.ok) return checked;
      const fields = ops.checkFields(def, checked.value, ctx, (unknown) => `strict decoding error: ${unknown.map((u) => `unknown field ${JSON.stringify(u)}`).join(', ')}`);
      return fields.ok ? checked : fields;
    },
    'never',
  );
}
