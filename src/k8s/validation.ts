/**
 * Core Kubernetes validation, one import for every caller (the WorkloadSpread
 * validation in src/api, the embedded API server, the CLI). The rules live in
 * one file per concept and are re-exported here:
 *
 * - name-formats.ts          string formats (label keys/values, DNS names, env names, ports)
 * - meta-validation.ts       labels, annotations, object names, label selectors
 * - scheduling-validation.ts node selectors, node affinity terms, tolerations
 * - pod-validation.ts        pod specs and pod templates (what a subset patch can break)
 * - resource-validation.ts   container resource requirements
 * - pod-decode.ts            the json.Unmarshal type check that precedes pod validation
 *
 * Everything is pure, takes raw JSON and returns `FieldError`s (field-errors.ts)
 * with upstream's paths and messages.
 */
export {
  byteLength,
  emptyError,
  inclusiveRangeError,
  isCIdentifier,
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isLabelKey,
  isLabelValue,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
  maxLenError,
  parseInt64,
  regexError,
} from './name-formats.ts';
export {
  TOTAL_ANNOTATION_SIZE_LIMIT_BYTES,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  nameRuleForKind,
  validateAnnotations,
  validateLabelName,
  validateLabelSelector,
  validateLabelSelectorRequirement,
  validateLabels,
  validateObjectMetaName,
  validateObjectMetaUpdate,
  type NameRule,
} from './meta-validation.ts';
export {
  TAINT_EFFECTS,
  validateNodeFieldSelectorRequirement,
  validateNodeSelector,
  validateNodeSelectorRequirement,
  validateNodeSelectorTerm,
  validatePreferredSchedulingTerms,
  validateTaintEffect,
  validateTolerations,
} from './scheduling-validation.ts';
export { validatePodSpec, validatePodTemplateSpec } from './pod-validation.ts';
export { validateResourceRequirements } from './resource-validation.ts';
export { QUANTITY_FORMAT_ERROR, podSpecDecodeError, podTemplateDecodeError } from './pod-decode.ts';
