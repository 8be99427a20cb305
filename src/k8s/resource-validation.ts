/**
 * Container resource requirements, as core validation checks them
 * (ValidateContainerResourceRequirements, validateContainerResourceName,
 * ValidateResourceQuantityValue): resource names (standard container
 * resources, `kubernetes.io/` native ones, extended `example.com/gpu` ones),
 * quantities that parse and are not negative, integer extended resources,
 * requests ≤ limits, requests = limits for resources that cannot be
 * overcommitted (extended resources, hugepages), and hugepages only next to
 * cpu or memory. Quantities compare exactly (nano-units, bigint).
 * Not reproduced: hugepage size divisibility, resource claims.
 */
import { forbidden, invalid, required, type FieldError, type FieldPath } from './field-errors.ts';
import { isQualifiedName } from './name-formats.ts';
import { QUANTITY_FORMAT_ERROR } from './pod-decode.ts';
import { parseQuantityNanos } from './quantity.ts';
import { asRecord, asString } from './raw-json.ts';

const NEGATIVE = 'must be greater than or equal to 0';

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const STANDARD_RESOURCES = new Set([...STANDARD_CONTAINER_RESOURCES, 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods', 'services', 'replicationcontrollers', 'resourcequotas', 'secrets',
  'persistentvolumeclaims', 'configmaps', 'requests.storage', 'services.nodeports', 'services.loadbalancers', 'storage']);

const isHugePages = (name: string): boolean => name.startsWith('hugepages-');
const isNative = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/');
/** Extended resources (e.g. `example.com/gpu`): not native, and usable as a quota name. */
const isExtended = (name: string): boolean => !isNative(name) && !name.startsWith('requests.') && isQualifiedName(`requests.${name}`).length === 0;
const overcommitAllowed = (name: string): boolean => isNative(name) && !isHugePages(name);

function validateResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(name).map((m) => invalid(path, name, m));
  if (errs.length > 0) return errs;
  if (!name.includes('/')) {
    if (!STANDARD_RESOURCES.has(name) && !isHugePages(name) && !name.startsWith('requests.hugepages-')) {
      errs.push(invalid(path, name, 'must be a standard resource type or fully qualified'));
    }
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name)) errs.push(invalid(path, name, 'must be a standard resource for containers'));
  } else if (!isNative(name) && !isExtended(name)) {
    errs.push(invalid(path, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** A quantity in nano-units, exactly; undefined when it is not a quantity (as JSON decoding would reject it). */
export function quantityNanos(raw: unknown): bigint | undefined {
  if (typeof raw === 'number') return parseQuantityNanos(raw);
  if (typeof raw === 'string') return parseQuantityNanos(raw.trim());
  return undefined;
}

/** Parses one resource entry; pushes the name and quantity errors and returns the value when it parsed. */
function resourceQuantity(name: string, raw: unknown, path: FieldPath, errs: FieldError[]): bigint | undefined {
  errs.push(...validateResourceName(name, path));
  const text = typeof raw === 'number' ? String(raw) : asString(raw) ?? '';
  const value = quantityNanos(raw);
  if (value === undefined) {
    errs.push(invalid(path, text, QUANTITY_FORMAT_ERROR));
    return undefined;
  }
  if (value < 0n) errs.push(invalid(path, text, NEGATIVE));
  if (isExtended(name) && value % 1_000_000_000n !== 0n) errs.push(invalid(path, text, 'must be an integer'));
  return value;
}

/** `ValidateContainerResourceRequirements` for one container's `resources`. */
export function validateResourceRequirements(raw: unknown, path: FieldPath): FieldError[] {
  const resources = asRecord(raw);
  const errs: FieldError[] = [];
  const limPath = path.child('limits');
  const reqPath = path.child('requests');
  const limitsRaw = asRecord(resources?.['limits']) ?? {};
  const limits = new Map<string, { text: string; value: bigint | undefined }>();
  let cpuOrMemory = false;
  let hugePages = false;
  for (const [name, raw] of Object.entries(limitsRaw)) {
    limits.set(name, { text: String(raw), value: resourceQuantity(name, raw, limPath.key(name), errs) });
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
    if (isHugePages(name)) hugePages = true;
  }
  for (const [name, raw] of Object.entries(asRecord(resources?.['requests']) ?? {})) {
    const value = resourceQuantity(name, raw, reqPath.key(name), errs);
    const limit = limits.get(name);
    if (limit !== undefined) {
      if (value !== undefined && limit.value !== undefined) {
        if (value !== limit.value && !overcommitAllowed(name)) {
          errs.push(invalid(reqPath, String(raw), `must be equal to ${name} limit of ${limit.text}`));
        } else if (value > limit.value) {
          errs.push(invalid(reqPath, String(raw), `must be less than or equal to ${name} limit of ${limit.text}`));
        }
      }
    } else if (!overcommitAllowed(name)) {
      errs.push(required(limPath, 'Limit must be set for non overcommitable resources'));
    }
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
    if (isHugePages(name)) hugePages = true;
  }
  if (!cpuOrMemory && hugePages) errs.push(forbidden(path, 'HugePages require cpu or memory'));
  return errs;
}
