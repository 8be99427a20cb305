/**
 * CRD-safe building blocks on top of TypeBox.
 *
 * A CustomResourceDefinition accepts only a "structural" subset of OpenAPI v3:
 * no `const`, no `patternProperties`, no `$ref`, no `additionalProperties: false`,
 * and `anyOf` only for int-or-string style alternatives without `type` inside
 * the branches' siblings. Plain TypeBox emits several of those (Literal unions,
 * Record, nullable unions), so every schema of this project is built from the
 * helpers below; `crd-acceptance.test.ts` checks the generated CRDs with the
 * CRD validation of k8s/crd-schema/ and applies them to the embedded API server,
 * and fails on anything Kubernetes would reject.
 */
import Type, { type TSchema, type TUnsafe } from 'typebox';

/** A string restricted to fixed values: `{type: string, enum: [...]}` (never `anyOf`/`const`). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** Kubernetes IntOrString: `x-kubernetes-int-or-string` with the two allowed `anyOf` branches. */
export function IntOrString(options: Record<string, unknown> = {}): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    ...options,
  });
}

/** A string-keyed map: `{type: object, additionalProperties: <value schema>}`. */
export function MapOf<T extends TSchema>(value: T, options: Record<string, unknown> = {}): TUnsafe<Record<string, Type.Static<T>>> {
  return Type.Unsafe<Record<string, Type.Static<T>>>({ type: 'object', additionalProperties: value, ...options });
}

/** An object whose contents are not described and must be kept as is. */
export function PreserveUnknown(options: Record<string, unknown> = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, ...options });
}

/** An RFC 3339 timestamp as Kubernetes serializes metav1.Time. */
export function Time(options: Record<string, unknown> = {}) {
  return Type.String({ format: 'date-time', ...options });
}

export function Int32(options: Record<string, unknown> = {}) {
  return Type.Integer({ format: 'int32', ...options });
}

export function Int64(options: Record<string, unknown> = {}) {
  return Type.Integer({ format: 'int64', ...options });
}

// ---- core/v1 and meta/v1 fragments shared by our CRDs ----

const requirementFields = {
  key: Type.String({ description: 'The label key (or field name) the requirement applies to.' }),
  operator: Type.String({ description: 'The relationship of the key to the values.' }),
  values: Type.Optional(Type.Array(Type.String(), { description: 'The values the operator compares against.' })),
};

export const NodeSelectorRequirementSchema = Type.Object(requirementFields, {
  description: 'A node selector requirement: key, operator (In, NotIn, Exists, DoesNotExist, Gt, Lt) and values.',
});

export const NodeSelectorTermSchema = Type.Object(
  {
    matchExpressions: Type.Optional(Type.Array(NodeSelectorRequirementSchema, { description: 'Requirements on node labels.' })),
    matchFields: Type.Optional(Type.Array(NodeSelectorRequirementSchema, { description: 'Requirements on node fields (only metadata.name).' })),
  },
  { 'x-kubernetes-map-type': 'atomic', description: 'A node selector term: all of its requirements must hold.' },
);

export const PreferredSchedulingTermSchema = Type.Object(
  {
    weight: Int32({ description: 'Weight of this preference, 1-100.' }),
    preference: NodeSelectorTermSchema,
  },
  { description: 'A preferred node selector term with its weight.' },
);

export const TolerationSchema = Type.Object(
  {
    key: Type.Optional(Type.String({ description: 'Taint key to tolerate; empty with Exists tolerates every taint.' })),
    operator: Type.Optional(Type.String({ description: 'Exists or Equal (the default).' })),
    value: Type.Optional(Type.String({ description: 'Taint value to match with the Equal operator.' })),
    effect: Type.Optional(Type.String({ description: 'NoSchedule, PreferNoSchedule or NoExecute; empty matches all effects.' })),
    tolerationSeconds: Type.Optional(Int64({ description: 'For NoExecute: how long the pod stays bound after the taint appears.' })),
  },
  { description: 'A toleration, as in a pod spec.' },
);

export const LabelSelectorRequirementSchema = Type.Object(requirementFields, {
  description: 'A label selector requirement: key, operator (In, NotIn, Exists, DoesNotExist) and values.',
});

export const LabelSelectorSchema = Type.Object(
  {
    matchLabels: Type.Optional(MapOf(Type.String(), { description: 'Labels that must all be present with these values.' })),
    matchExpressions: Type.Optional(Type.Array(LabelSelectorRequirementSchema, { description: 'Requirements that must all hold.' })),
  },
  { 'x-kubernetes-map-type': 'atomic', description: 'A label selector.' },
);
