/**
 * Name acceptance of a CustomResourceDefinition (apiextensions-apiserver's
 * naming controller): within one API group, the plural, singular and short
 * names of all CRDs share one namespace, and kinds and list kinds another.
 * A name another CRD of the group has already accepted is refused
 * (`"x" is already in use`, reasons PluralConflict, SingularConflict,
 * ShortNamesConflict, KindConflict, ListKindConflict); the other names are
 * still accepted, but the CRD is not established, so it is not served.
 * Names a CRD accepted before stay its own. Pure: the CRD controller
 * applies the verdict.
 */
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';
import type { KubeObject } from '../../k8s/types.ts';

export interface NamesVerdict {
  accepted: Record<string, unknown>;
  /** The first conflict found, in upstream's order of checks. */
  conflict?: { reason: string; message: string };
}

function namesOf(value: unknown): { plural: string; singular: string; shortNames: string[]; kind: string; listKind: string; categories: string[] } {
  const n = asRecord(value) ?? {};
  const strings = (v: unknown) => (asArray(v) ?? []).filter((x): x is string => typeof x === 'string');
  return {
    plural: asString(n['plural']) ?? '',
    singular: asString(n['singular']) ?? '',
    shortNames: strings(n['shortNames']),
    kind: asString(n['kind']) ?? '',
    listKind: asString(n['listKind']) ?? '',
    categories: strings(n['categories']),
  };
}

/** Which of `crd`'s requested names it may have, given the other CRDs of the cluster. */
export function acceptNames(crd: KubeObject, others: readonly KubeObject[]): NamesVerdict {
  const spec = asRecord(crd['spec']) ?? {};
  const group = asString(spec['group']) ?? '';
  const name = asString(crd.metadata?.name) ?? '';
  const requested = namesOf(spec['names']);
  const previous = namesOf(asRecord(crd.status)?.['acceptedNames']);
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of others) {
    if ((asString(other.metadata?.name) ?? '') === name) continue;
    if ((asString(asRecord(other['spec'])?.['group']) ?? '') !== group) continue;
    const taken = namesOf(asRecord(other.status)?.['acceptedNames']);
    for (const r of [taken.plural, taken.singular, ...taken.shortNames]) if (r !== '') resources.add(r);
    for (const k of [taken.kind, taken.listKind]) if (k !== '') kinds.add(k);
  }
  const free = (wanted: string, had: string, taken: Set<string>) => wanted === had || !taken.has(wanted);
  const accepted: Record<string, unknown> = {};
  let conflict: NamesVerdict['conflict'];
  const refuse = (reason: string, value: string) => {
    conflict ??= { reason, message: `${JSON.stringify(value)} is already in use` };
  };
  if (free(requested.plural, previous.plural, resources)) accepted['plural'] = requested.plural;
  else refuse('PluralConflict', requested.plural);
  if (free(requested.singular, previous.singular, resources)) accepted['singular'] = requested.singular;
  else refuse('SingularConflict', requested.singular);
  const shortConflict = requested.shortNames.find((s) => !previous.shortNames.includes(s) && resources.has(s));
  if (shortConflict === undefined) {
    if (requested.shortNames.length > 0) accepted['shortNames'] = requested.shortNames;
  } else refuse('ShortNamesConflict', shortConflict);
  if (free(requested.kind, previous.kind, kinds)) accepted['kind'] = requested.kind;
  else refuse('KindConflict', requested.kind);
  if (free(requested.listKind, previous.listKind, kinds)) accepted['listKind'] = requested.listKind;
  else refuse('ListKindConflict', requested.listKind);
  if (requested.categories.length > 0) accepted['categories'] = requested.categories;
  return conflict === undefined ? { accepted } : { accepted, conflict };
}
