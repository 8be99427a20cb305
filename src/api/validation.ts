/**
 * WorkloadSpread validation (spec §7, rules V1–V27; DECISIONS D2, D5, D10),
 * as the validating webhook and `workloadspread validate` run it.
 *
 * Start with `validateWorkloadSpread` (no cluster needed): a structural check
 * against the TypeBox schema first — a structurally broken object gets only
 * those errors — then the metadata name and the semantic rules in the
 * reference's order. The cluster-dependent rules take what they need as
 * arguments (`validateTargetRefPermitted`, `validateSubsetPatches` (V15, in
 * subset-patch-validation.ts), `validateTargetConflict`,
 * `validateWorkloadSpreadUpdate`); `validateWorkloadSpreadFull` runs them all
 * in the reference's order, for the webhook and the CLI.
 *
 * Choices, where the reference leaves room (each also noted at its rule):
 * - Field paths name the v1alpha1 fields users write (`requiredNodeSelectorTerm`,
 *   `preferredNodeSelectorTerms`); the reference validates the v1beta1 form and
 *   prints `requiredNodeSelector` / `preferredNodeSelector`.
 * - V19's message has the grammar of the issue's example ("the sum of all
 *   subsets' maxReplicas exceeds 100%"); V22/V23 report the offending value
 *   (type, last maxReplicas) where the reference prints rescheduleCriticalSeconds.
 * - D2: `minReplicas > maxReplicas` is compared only when maxReplicas is an int;
 *   a percentage resolves against replicas that change, so no static check.
 * - D5: a targetFilter with replicasPathList and no selector is valid (it selects every pod).
 * - D18: the rebalancing annotations (rebalance-settings.ts) are checked with
 *   the metadata name; their errors do not stop the spec rules.
 * - D10: V24's bound is trunc((window − 5) / (n − 1)) with the manager's window
 *   (default 300 s, Go int32 division), int32 max for one subset.
 * - V21 stays as a rule, but through `validateWorkloadSpread` the CRD enum
 *   (structural check) reports an unknown strategy type first, as on a cluster.
 * - Core rules come from src/k8s/validation.ts, which adds one check to
 *   upstream: a Gt/Lt node selector value must be an integer.
 * - D20: a subset patch may not change the pod's identity or ownership, and
 *   privilege-bearing fields only with `--allow-privileged-subset-patches`
 *   (subset-patch-policy.ts); checked whether or not the workload exists.
 */
import { invalid, internalError, required, root, typeInvalid, type FieldError, type FieldPath } from '../k8s/field-errors.ts';
import { labelSelectorAsSelector } from '../k8s/label-selector.ts';
import { apiVersionGroup } from '../k8s/pod.ts';
import { asArray, asRecord, asString, jsonTypeName, type JsonRecord } from '../k8s/raw-json.ts';
import type { KubeObject, LabelSelector } from '../k8s/types.ts';
import { isDNS1123Subdomain, validateNodeSelectorTerm, validateObjectMetaUpdate, validatePreferredSchedulingTerms, validateTolerations } from '../k8s/validation.ts';
import { nameIsDNSLabel, nameIsDNSSubdomain, validateAnnotations, validateLabels } from '../k8s/meta-validation.ts';
import { validateResource } from '../k8s/crd-schema/resource-validation.ts';
import { isQualifiedName } from '../k8s/name-formats.ts';
import { DEFAULT_UNSCHEDULABLE_RECOVERY_SECONDS, MAX_INT32 } from './keys.ts';
import { validateRebalanceAnnotations } from './rebalance-settings.ts';
import { podTemplateForPatches, subsetPatchErrors } from './subset-patch-validation.ts';
import { subsetPatchPolicyErrors, type SubsetPatchPolicy } from './subset-patch-policy.ts';
import { isWhitelistedTarget, type Whitelist } from './whitelist.ts';
import { WorkloadSpreadSchema } from './workloadspread.ts';

export interface ValidationOptions {
  /** The manager's unschedulable recovery window in seconds (D10); 300 by default. */
  unschedulableRecoverySeconds?: number;
  /** D20: what subset patches may set (`--allow-privileged-subset-patches`); default: no privilege-bearing fields. */
  subsetPatches?: SubsetPatchPolicy;
  /**
   * Unknown fields are errors (`unknown field "spec.subsets[0].maxReplica"`),
   * as the API server's strict field validation reports them — `workloadspread
   * validate`. Off (the webhook), they are ignored: the API server has already
   * pruned or refused them.
   */
  strict?: boolean;
}

/** A failed read of the whitelist config map (V8 then reports an InternalError, as the reference). */
export interface WhitelistReadError {
  error: string;
}

// ---- small shared helpers ----

/** The group of an apiVersion, with the reference's habit of ignoring parse errors (empty group). */
function groupOf(apiVersion: string): string {
  const gv = apiVersionGroup(apiVersion);
  return gv.ok ? gv.group : '';
}

interface TargetRef {
  apiVersion: string;
  kind: string;
  name: string;
}

/** The targetRef as the reference holds it (a pointer: undefined when absent), fields in Go's JSON order. */
function targetRefOf(spec: JsonRecord | undefined): TargetRef | undefined {
  const ref = asRecord(spec?.['targetRef']);
  if (ref === undefined) return undefined;
  return { apiVersion: asString(ref['apiVersion']) ?? '', kind: asString(ref['kind']) ?? '', name: asString(ref['name']) ?? '' };
}

const present = (v: unknown): boolean => v !== undefined && v !== null;

/** intstr.GetScaledValueFromIntOrPercent(x, 100, true): the int, or the integer before `%`; undefined on error. */
function intOrPercentOf100(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value !== 'string' || !value.endsWith('%')) return undefined;
  const digits = value.slice(0, -1);
  if (!/^[+-]?\d+$/.test(digits)) return undefined;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** V24's upper bound (D10): int32 max for one subset, else (window − 5) / (n − 1) with Go's truncating int32 division. */
export function rescheduleCriticalSecondsBound(subsetCount: number, windowSeconds: number = DEFAULT_UNSCHEDULABLE_RECOVERY_SECONDS): number {
  if (subsetCount <= 1) return MAX_INT32;
  return Math.trunc(Math.trunc(windowSeconds - 5) / (subsetCount - 1));
}

// ---- V1–V8: targetRef ----

const BUILT_IN_TARGETS: Readonly<Record<string, { groups: readonly string[]; kind: string }>> = {
  CloneSet: { groups: ['apps.kruise.io'], kind: 'CloneSet' },
  Deployment: { groups: ['apps'], kind: 'Deployment' },
  ReplicaSet: { groups: ['apps'], kind: 'ReplicaSet' },
  Job: { groups: ['batch'], kind: 'Job' },
  StatefulSet: { groups: ['apps', 'apps.kruise.io'], kind: 'StatefulSet' },
};

/**
 * V1–V8 on a targetRef. Without `whitelist`, kinds other than the built-in ones
 * are not judged (V8 needs the cluster's config map).
 */
function targetRefErrors(ref: TargetRef | undefined, path: FieldPath, whitelist: Whitelist | WhitelistReadError | undefined): FieldError[] {
  const refPath = path.child('targetRef');
  if (ref === undefined) return [required(refPath, 'no targetRef defined in WorkloadSpread')]; // V1
  if (ref.apiVersion === '' || ref.kind === '' || ref.name === '') return [invalid(refPath, ref, 'empty TargetReference is not valid for WorkloadSpread.')]; // V2
  const gv = apiVersionGroup(ref.apiVersion);
  const builtIn = BUILT_IN_TARGETS[ref.kind];
  if (builtIn !== undefined) {
    // V3–V7: a parse error counts as a wrong group, as in the reference.
    return gv.ok && builtIn.groups.includes(gv.group) ? [] : [invalid(refPath, ref, `TargetReference is not valid for ${builtIn.kind}.`)];
  }
  if (whitelist === undefined) return [];
  const errs: FieldError[] = [];
  let list: Whitelist = { workloads: [] };
  if ('error' in whitelist) errs.push(internalError(refPath, whitelist.error));
  else list = whitelist;
  if (!gv.ok || !isWhitelistedTarget(list, gv.group, ref.kind)) errs.push(invalid(refPath, ref, "TargetReference's GroupKind is not permitted.")); // V8
  return errs;
}

/** V3–V8 (V1/V2 too, since a missing or empty targetRef cannot be permitted): the targetRef against the built-in kinds and the whitelist. */
export function validateTargetRefPermitted(targetRef: unknown, whitelist: Whitelist | WhitelistReadError): FieldError[] {
  return targetRefErrors(targetRefOf({ targetRef }), root('spec'), whitelist);
}

// ---- V9–V20 and D2: subsets ----

/** Per-subset hook for V15 (patch validation), so the full validation keeps the reference's error order. */
export type SubsetHook = (subset: JsonRecord, index: number, path: FieldPath) => FieldError[];

function subsetErrors(spec: JsonRecord, path: FieldPath, patchHook: SubsetHook | undefined, policy: SubsetPatchPolicy | undefined): FieldError[] {
  const subsetsPath = path.child('subsets');
  const subsets = (asArray(spec['subsets']) ?? []).map((s) => asRecord(s) ?? {});
  if (subsets.length === 0) return [required(subsetsPath, 'subsets number must >= 1 in WorkloadSpread')]; // V9
  const errs: FieldError[] = [];
  const isStatefulSet = targetRefOf(spec)?.kind === 'StatefulSet';
  const names = new Set<string>();
  let firstType: 'int' | 'string' | undefined;
  let percentSum = 0;
  for (const [i, subset] of subsets.entries()) {
    const at = subsetsPath.index(i);
    const name = asString(subset['name']) ?? '';
    if (name === '') errs.push(invalid(at.child('name'), name, '')); // V10
    else {
      if (names.has(name)) errs.push(invalid(at.child('name'), name, `duplicated subset name ${name}`)); // V11
      names.add(name);
    }
    if (present(subset['requiredNodeSelectorTerm'])) errs.push(...validateNodeSelectorTerm(subset['requiredNodeSelectorTerm'], at.child('requiredNodeSelectorTerm'))); // V12
    if (present(subset['preferredNodeSelectorTerms'])) errs.push(...validatePreferredSchedulingTerms(subset['preferredNodeSelectorTerms'], at.child('preferredNodeSelectorTerms'))); // V13
    if (present(subset['tolerations'])) errs.push(...validateTolerations(subset['tolerations'], at.child('tolerations'))); // V14
    if (present(subset['patch'])) errs.push(...subsetPatchPolicyErrors(subset['patch'], at.child('patch'), policy)); // D20
    if (patchHook && present(subset['patch'])) errs.push(...patchHook(subset, i, at)); // V15
    const max = subset['maxReplicas'];
    const min = subset['minReplicas'];
    if (typeof min === 'number') {
      // D2
      if (min < 0) errs.push(invalid(at.child('minReplicas'), min, 'must be greater than or equal to 0'));
      else if (typeof max === 'number' && max >= 0 && min > max) errs.push(invalid(at.child('minReplicas'), min, `must be less than or equal to maxReplicas (${max})`));
    }
    if (!present(max)) continue;
    const maxPath = at.child('maxReplicas');
    const type = typeof max === 'string' ? 'string' : 'int';
    if (firstType === undefined) firstType = type;
    else if (type !== firstType) return [...errs, invalid(maxPath, max, 'the maxReplicas type of all subsets must be the same')]; // V16
    if (isStatefulSet && type !== 'int') return [...errs, invalid(maxPath, max, 'the maxReplicas type must be Int for StatefulSet')]; // V17
    const value = intOrPercentOf100(max);
    if (value === undefined || value < 0) return [...errs, invalid(maxPath, max, 'maxReplicas is not valid for subset')]; // V18
    // Bounds (issue 14): an int-or-string holds an int32, and a percentage of the replicas is at most 100%.
    if (type === 'int' && value > MAX_INT32) return [...errs, invalid(maxPath, max, `maxReplicas must be at most ${MAX_INT32} (int32)`)];
    if (type === 'string' && value > 100) return [...errs, invalid(maxPath, max, 'a percentage maxReplicas must be from 0% to 100%')];
    if (type === 'string') {
      percentSum += value;
      if (percentSum > 100) return [...errs, invalid(maxPath, max, "the sum of all subsets' maxReplicas exceeds 100%")]; // V19
    }
  }
  const last = subsets[subsets.length - 1];
  if (firstType === 'string' && percentSum < 100 && present(last?.['maxReplicas'])) {
    errs.push(invalid(subsetsPath.index(0).child('maxReplicas'), subsets[0]?.['maxReplicas'], 'maxReplicas sum of all subsets must equal 100% when type is specified as percent')); // V20
  }
  return errs;
}

// ---- V21–V24: scheduleStrategy; V25: targetFilter ----

function scheduleStrategyErrors(spec: JsonRecord, path: FieldPath, windowSeconds: number): FieldError[] {
  const errs: FieldError[] = [];
  const strategy = asRecord(spec['scheduleStrategy']);
  const strategyPath = path.child('scheduleStrategy');
  const type = asString(strategy?.['type']) ?? '';
  if (type !== '' && type !== 'Fixed' && type !== 'Adaptive') errs.push(invalid(strategyPath.child('type'), type, "ScheduleStrategy's type is not valid")); // V21
  const adaptive = asRecord(strategy?.['adaptive']);
  if (adaptive === undefined) return errs;
  if (type !== 'Adaptive') errs.push(invalid(strategyPath.child('type'), type, "the scheduleStrategy's type must be adaptive when using adaptive scheduleStrategy")); // V22
  const subsets = asArray(spec['subsets']) ?? [];
  const lastMax = asRecord(subsets[subsets.length - 1])?.['maxReplicas'];
  if (subsets.length > 1 && present(lastMax)) {
    errs.push(invalid(strategyPath.child('adaptive'), lastMax, "the last subset's maxReplicas must be not specified when using adaptive scheduleStrategy")); // V23
  }
  const critical = adaptive['rescheduleCriticalSeconds'];
  const bound = rescheduleCriticalSecondsBound(subsets.length, windowSeconds);
  if (typeof critical === 'number' && (critical < 0 || critical > bound)) {
    errs.push(invalid(strategyPath.child('adaptive', 'rescheduleCriticalSeconds'), critical, `rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > ${bound} is not permitted`)); // V24
  }
  return errs;
}

function targetFilterErrors(spec: JsonRecord, path: FieldPath): FieldError[] {
  const filter = asRecord(spec['targetFilter']);
  // D5: no selector is valid (every pod is selected); only a selector that does not convert is an error.
  if (filter === undefined || !present(filter['selector'])) return [];
  const converted = labelSelectorAsSelector(filter['selector'] as LabelSelector);
  return converted.ok ? [] : [invalid(path.child('targetFilter'), filter, converted.error)]; // V25
}

// ---- entry points ----

export interface SpecRulesContext extends ValidationOptions {
  /** When given, V8 judges custom kinds against it. */
  whitelist?: Whitelist | WhitelistReadError;
  /** When given, V15 runs per subset through it. */
  patchHook?: SubsetHook;
}

/**
 * The semantic rules on a spec that already passed the structural check:
 * targetRef (V1–V7, V8 with a whitelist), subsets (V9–V14, V15 with a hook,
 * D2, V16–V20), scheduleStrategy (V21–V24), targetFilter (V25). Never throws.
 */
export function validateWorkloadSpreadSpec(spec: unknown, context: SpecRulesContext = {}): FieldError[] {
  const s = asRecord(spec) ?? {};
  const path = root('spec');
  return [
    ...targetRefErrors(targetRefOf(s), path, context.whitelist),
    ...subsetErrors(s, path, context.patchHook, context.subsetPatches),
    ...scheduleStrategyErrors(s, path, context.unschedulableRecoverySeconds ?? DEFAULT_UNSCHEDULABLE_RECOVERY_SECONDS),
    ...targetFilterErrors(s, path),
  ];
}

/** Missing spec, targetRef or subsets are reported by V1/V9 with their messages, not as bare schema errors. */
const SEMANTIC_REQUIRED = new Set(['spec', 'spec.targetRef', 'spec.subsets']);

/**
 * The metadata rules of the API server that a manifest can break before it is
 * sent (ValidateObjectMeta): the name (DNS subdomain) and generateName, the
 * namespace (DNS label), label keys and values, annotation keys and their
 * total size (256 KiB), finalizer names. A missing name is not an error here
 * (a manifest may rely on generateName or on the file being a template).
 */
export function metadataErrors(metadata: unknown): FieldError[] {
  const meta = asRecord(metadata);
  if (meta === undefined) return [];
  const path = root('metadata');
  const errs: FieldError[] = [];
  const name = meta['name'];
  if (typeof name === 'string' && name !== '') errs.push(...isDNS1123Subdomain(name).map((msg) => invalid(path.child('name'), name, msg)));
  const generateName = meta['generateName'];
  if (typeof generateName === 'string' && generateName !== '') errs.push(...nameIsDNSSubdomain(generateName, true).map((msg) => invalid(path.child('generateName'), generateName, msg)));
  const namespace = meta['namespace'];
  if (typeof namespace === 'string' && namespace !== '') errs.push(...nameIsDNSLabel(namespace, false).map((msg) => invalid(path.child('namespace'), namespace, msg)));
  errs.push(...validateLabels(meta['labels'], path.child('labels')));
  errs.push(...validateAnnotations(meta['annotations'], path.child('annotations')));
  (asArray(meta['finalizers']) ?? []).forEach((f, i) => {
    if (typeof f === 'string') for (const msg of isQualifiedName(f)) errs.push(invalid(path.child('finalizers').index(i), f, msg));
  });
  return errs;
}

/** The structural check, then (only if it passed) the metadata and D18's annotations; empty means structurally sound. */
function structureAndName(ws: unknown, strict = false): FieldError[] {
  if (jsonTypeName(ws) !== 'object') {
    const actual = jsonTypeName(ws);
    return [typeInvalid(root(''), actual, `must be of type object: "${actual}"`)];
  }
  const structural = validateResource(ws as JsonRecord, WorkloadSpreadSchema, { skipRequired: SEMANTIC_REQUIRED, ...(strict ? { unknownFields: 'error' as const } : {}) });
  if (structural.length > 0) return structural;
  // D18: the rebalancing annotations (ours; reported with the metadata, so the spec rules still run).
  return [...metadataErrors((ws as JsonRecord)['metadata']), ...validateRebalanceAnnotations(ws)];
}

/** Every rule that needs no cluster (spec §7: V1–V7, V9–V14, V16–V25, D2, D5, D10). Never throws, whatever `ws` is. */
export function validateWorkloadSpread(ws: unknown, options: ValidationOptions = {}): FieldError[] {
  const structural = structureAndName(ws, options.strict === true);
  if (structural.some((e) => !e.field.startsWith('metadata.'))) return structural;
  return [...structural, ...validateWorkloadSpreadSpec((ws as JsonRecord)['spec'], options)];
}

/** V26: no other WorkloadSpread (by name) may target the same group+kind+name; the first conflict is reported. */
export function validateTargetConflict(ws: unknown, others: readonly unknown[]): FieldError[] {
  const self = asRecord(ws);
  const ref = targetRefOf(asRecord(self?.['spec']));
  if (ref === undefined) return [];
  const name = asString(asRecord(self?.['metadata'])?.['name']) ?? '';
  for (const other of others) {
    const o = asRecord(other);
    const otherName = asString(asRecord(o?.['metadata'])?.['name']) ?? '';
    if (otherName === name) continue;
    const otherRef = targetRefOf(asRecord(o?.['spec']));
    if (otherRef === undefined) continue;
    if (groupOf(ref.apiVersion) === groupOf(otherRef.apiVersion) && ref.kind === otherRef.kind && ref.name === otherRef.name) {
      return [invalid(root('spec', 'targetRef'), ref, `ws.spec.targetRef is in conflict with other WorkloadSpread ${otherName}`)];
    }
  }
  return [];
}

/** V27: metadata immutability, and the targetRef's group, kind and name may not change (its version may). */
export function validateWorkloadSpreadUpdate(oldWs: unknown, newWs: unknown): FieldError[] {
  const prev = asRecord(oldWs);
  const next = asRecord(newWs);
  const errs = validateObjectMetaUpdate(next?.['metadata'], prev?.['metadata'], root('metadata'));
  const a = targetRefOf(asRecord(next?.['spec']));
  const b = targetRefOf(asRecord(prev?.['spec']));
  if (a !== undefined && b !== undefined && (groupOf(a.apiVersion) !== groupOf(b.apiVersion) || a.kind !== b.kind || a.name !== b.name)) {
    errs.push(invalid(root('spec', 'targetRef'), a, 'change TargetReference is not permitted for WorkloadSpread'));
  }
  return errs;
}

export { validateSubsetPatches } from './subset-patch-validation.ts';

export interface FullValidationContext extends ValidationOptions {
  /** The custom-workload whitelist, or the error of reading it (V8). */
  whitelist: Whitelist | WhitelistReadError;
  /** The target workload as fetched by its real group/version; undefined when not found (V15 is then skipped). */
  workload?: KubeObject | undefined;
  /** The other WorkloadSpreads of the namespace (V26). */
  others: readonly unknown[];
  /** The stored object, on UPDATE (V27). */
  old?: unknown;
}

/**
 * Everything, in the reference's order: the structural check (alone if it
 * fails), the metadata name, the spec rules with V8 and V15 in place, V26, and
 * on UPDATE V27.
 */
export function validateWorkloadSpreadFull(ws: unknown, context: FullValidationContext): FieldError[] {
  const structural = structureAndName(ws, context.strict === true);
  if (structural.some((e) => !e.field.startsWith('metadata.'))) return structural;
  const spec = asRecord((ws as JsonRecord)['spec']);
  const template = podTemplateForPatches(spec?.['targetRef'], context.workload);
  const patchHook: SubsetHook | undefined =
    template === undefined ? undefined : (subset, _i, at) => subsetPatchErrors(subset['patch'], template, at.child('patch'));
  const specContext: SpecRulesContext = { whitelist: context.whitelist };
  if (patchHook !== undefined) specContext.patchHook = patchHook;
  if (context.unschedulableRecoverySeconds !== undefined) specContext.unschedulableRecoverySeconds = context.unschedulableRecoverySeconds;
  if (context.subsetPatches !== undefined) specContext.subsetPatches = context.subsetPatches;
  const errs = [...structural, ...validateWorkloadSpreadSpec(spec, specContext)];
  errs.push(...validateTargetConflict(ws, context.others));
  if (context.old !== undefined) errs.push(...validateWorkloadSpreadUpdate(context.old, ws));
  return errs;
}
