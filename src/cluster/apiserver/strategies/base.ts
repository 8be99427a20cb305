/**
 * Building blocks shared by the per-kind strategies: a strategy with the
 * defaults most upstream kinds use, and small helpers for immutable fields.
 */
import { deepEqual } from '../../../k8s/json.ts';
import { invalid, type FieldError, type PathLike } from '../../../k8s/field-errors.ts';
import { asRecord } from '../../../k8s/raw-json.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import type { ResourceStrategy } from '../resource-def.ts';

/** A strategy with upstream's most common answers: no status reset, unconditional updates allowed, Status on delete. */
export function strategy(overrides: Partial<ResourceStrategy> = {}): ResourceStrategy {
  return {
    resetStatusOnCreate: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    returnDeletedObject: false,
    ...overrides,
  };
}

/** Generation subject of kinds whose generation follows `.spec`. */
export const specSubject = (obj: KubeObject): unknown => obj['spec'] ?? null;

/** `ValidateImmutableField`: Invalid "field is immutable" when the value changed. */
export function immutable(next: unknown, prev: unknown, path: PathLike): FieldError[] {
  return deepEqual(next ?? null, prev ?? null) ? [] : [invalid(path, next ?? null, 'field is immutable')];
}

/** `obj.spec` as a record (a private copy's, so strategies may edit it), created when missing. */
export function specOf(obj: KubeObject): Record<string, unknown> {
  const spec = asRecord(obj['spec']);
  if (spec !== undefined) return spec;
  const created: Record<string, unknown> = {};
  obj['spec'] = created;
  return created;
}

export function setIfAbsent(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

/** Non-negative integer check with upstream's message. */
export function nonNegative(value: unknown, path: PathLike): FieldError[] {
  return typeof value === 'number' && value < 0 ? [invalid(path, value, 'must be greater than or equal to 0')] : [];
}
