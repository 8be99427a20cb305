/**
 * The custom-workload whitelist (spec §5.4, DECISIONS D6): the JSON stored
 * under `WorkloadSpread_Watch_Custom_Workload_WhiteList` in the manager's
 * config map, naming the extra workload kinds a WorkloadSpread may target.
 *
 *   {"workloads":[{"Group":"…","Version":"…","Kind":"…",
 *                  "subResources":[{"Group":"…","Version":"…","Kind":"…"}],
 *                  "replicasPath":"spec.replicas"}]}
 *
 * Decoding follows Go's encoding/json into the reference's structs: keys match
 * case-insensitively (the reference's own e2e config writes `ReplicasPath`),
 * unknown keys are ignored, `null` leaves the zero value, a wrong JSON type is
 * an error. The lookups encode who compares what:
 * - validation (V8) accepts a targetRef only by a `workloads[]` group+kind;
 * - admission (§2.1 step 7, §2.2) accepts owners by group+kind of workloads and subResources;
 * - the controller (§5.2) uses `replicasPath` only when group AND version match exactly;
 * - admission's replica count (§5.1) uses it by group+kind.
 */

export interface WhitelistGroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface WhitelistWorkload extends WhitelistGroupVersionKind {
  subResources: WhitelistGroupVersionKind[];
  replicasPath: string;
}

export interface Whitelist {
  workloads: WhitelistWorkload[];
}

export const EMPTY_WHITELIST: Whitelist = Object.freeze({ workloads: Object.freeze([]) as unknown as WhitelistWorkload[] });

export type WhitelistResult = { ok: true; whitelist: Whitelist } | { ok: false; error: string };

class DecodeError extends Error {}

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

function typeError(value: unknown, struct: string, path: string, goType: string): DecodeError {
  return new DecodeError(`json: cannot unmarshal ${jsonKind(value)} into Go struct field ${struct}.${path} of type ${goType}`);
}

/** The entries of a JSON object whose keys fold (case-insensitively) to one of `fields`; later keys win, as in Go. */
function foldedFields(value: Record<string, unknown>, fields: readonly string[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [key, v] of Object.entries(value)) {
    const field = fields.find((f) => f.toLowerCase() === key.toLowerCase());
    if (field !== undefined) out.set(field, v);
  }
  return out;
}

function decodeString(value: unknown, struct: string, path: string): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') throw typeError(value, struct, path, 'string');
  return value;
}

function decodeObject(value: unknown, struct: string, path: string, goType: string): Record<string, unknown> | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw typeError(value, struct, path, goType);
  return value as Record<string, unknown>;
}

function decodeList(value: unknown, struct: string, path: string, goType: string): unknown[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw typeError(value, struct, path, goType);
  return value;
}

function decodeGvk(value: unknown, path: string): WhitelistGroupVersionKind {
  const fields = foldedFields(decodeObject(value, 'CustomWorkload', path, 'schema.GroupVersionKind') ?? {}, ['Group', 'Version', 'Kind']);
  return {
    group: decodeString(fields.get('Group'), 'GroupVersionKind', `${path}.Group`),
    version: decodeString(fields.get('Version'), 'GroupVersionKind', `${path}.Version`),
    kind: decodeString(fields.get('Kind'), 'GroupVersionKind', `${path}.Kind`),
  };
}

function decodeWorkload(value: unknown): WhitelistWorkload {
  const record = decodeObject(value, 'WSCustomWorkloadWhiteList', 'workloads', 'configuration.CustomWorkload') ?? {};
  const fields = foldedFields(record, ['Group', 'Version', 'Kind', 'subResources', 'replicasPath']);
  const gvk = decodeGvk(record, 'workloads');
  const subResources = decodeList(fields.get('subResources'), 'CustomWorkload', 'workloads.subResources', '[]schema.GroupVersionKind')
    .map((sub) => decodeGvk(sub, 'workloads.subResources'));
  return { ...gvk, subResources, replicasPath: decodeString(fields.get('replicasPath'), 'CustomWorkload', 'workloads.replicasPath') };
}

/** Parses the config map value. Go-compatible: an empty string is an error, `null` an empty whitelist. */
export function parseWhitelist(json: string): WhitelistResult {
  let raw: unknown;
  if (json.trim().length === 0) return { ok: false, error: 'unexpected end of JSON input' };
  try {
    raw = JSON.parse(json);
  } catch (e) {
    return { ok: false, error: `invalid JSON: ${(e as Error).message}` };
  }
  try {
    const top = decodeObject(raw, 'WSCustomWorkloadWhiteList', '', 'configuration.WSCustomWorkloadWhiteList');
    if (top === undefined) return { ok: true, whitelist: { workloads: [] } };
    const fields = foldedFields(top, ['workloads']);
    const workloads = decodeList(fields.get('workloads'), 'WSCustomWorkloadWhiteList', 'workloads', '[]configuration.CustomWorkload').map(decodeWorkload);
    return { ok: true, whitelist: { workloads } };
  } catch (e) {
    if (e instanceof DecodeError) {
      // A wrong type at the top level has no field path in Go's message.
      return { ok: false, error: e.message.replace(/Go struct field WSCustomWorkloadWhiteList\. of type/, 'Go value of type') };
    }
    throw e;
  }
}

/** Validation (V8): a targetRef group+kind is permitted only by a `workloads[]` entry (never by a sub-resource). */
export function isWhitelistedTarget(wl: Whitelist, group: string, kind: string): boolean {
  return wl.workloads.some((w) => w.group === group && w.kind === kind);
}

/** Admission (§2.1 step 7): an owner group+kind is supported if a workload or one of its subResources names it. */
export function isWhitelistedOwner(wl: Whitelist, group: string, kind: string): boolean {
  return wl.workloads.some((w) => (w.group === group && w.kind === kind) || w.subResources.some((s) => s.group === group && s.kind === kind));
}

/** Controller (§5.2): the replicasPath of the entry whose group, version and kind all equal the target's; undefined when none. */
export function replicasPathFor(wl: Whitelist, group: string, version: string, kind: string): string | undefined {
  return wl.workloads.find((w) => w.group === group && w.version === version && w.kind === kind)?.replicasPath;
}

/** Admission (§5.1): the replicasPath of the first entry with this group+kind, whatever its version; undefined when none. */
export function replicasPathForGroupKind(wl: Whitelist, group: string, kind: string): string | undefined {
  return wl.workloads.find((w) => w.group === group && w.kind === kind)?.replicasPath;
}
