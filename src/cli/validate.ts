/**
 * `workloadspread validate -f FILE...`: validates WorkloadSpread manifests
 * with the same rules the admission webhook applies (spec §7), using the
 * other documents of the files as the cluster would be: a workload in the
 * files lets subset patches be checked against its pod template (V15), other
 * WorkloadSpreads in the files are checked for conflicting targets (V26).
 * DomainDisruptionBudgets (issue 7) are validated too, with the rules their
 * admission applies (api/disruption-budget-validation.ts). Documents are
 * reported in file order. Exit 0 when everything is valid, 1 when anything
 * is invalid.
 */
import { DDB_GROUP, DDB_KIND } from '../api/disruption-budget.ts';
import { validateDomainDisruptionBudget } from '../api/disruption-budget-validation.ts';
import { validateWorkloadSpreadFull } from '../api/validation.ts';
import { takesPrecedence } from '../core/target-conflict.ts';
import { EMPTY_WHITELIST, parseWhitelist, type Whitelist } from '../api/whitelist.ts';
import { WHITELIST_CONFIGMAP_KEY } from '../api/keys.ts';
import { formatFieldError } from '../k8s/field-errors.ts';
import type { KubeObject } from '../k8s/types.ts';
import { CommandError, UsageError, inputName, parseMaxInputSize, readInput, STDIN, type CliIo } from './io.ts';
import { describeObject, groupOf, isWorkloadSpread, namespaceOf, readDocuments } from './documents.ts';
import { parseManifests } from '../k8s/yaml.ts';

export interface ValidateOptions {
  /** `-` reads stdin. */
  files: string[];
  unschedulableRecoverySeconds?: string;
  whitelist?: string;
  /** D20: as the manager's `--allow-privileged-subset-patches`. */
  allowPrivilegedSubsetPatches?: boolean;
  /** `--max-input-size` (default 10Mi), for every file read. */
  maxInputSize?: string;
}

export async function runValidate(options: ValidateOptions, io: CliIo): Promise<number> {
  const window = parseWindow(options.unschedulableRecoverySeconds);
  const maxBytes = parseMaxInputSize(options.maxInputSize);
  if (options.whitelist === STDIN && options.files.includes(STDIN)) throw new UsageError('stdin (-) can be read once: give it to -f or to --whitelist, not both');
  const whitelist = options.whitelist === undefined ? EMPTY_WHITELIST : await readWhitelist(io, options.whitelist, maxBytes);
  const docs = await readDocuments(io, options.files, maxBytes);
  const spreads = docs.filter((d) => isWorkloadSpread(d.object));
  const checked = docs.filter((d) => isWorkloadSpread(d.object) || isDomainDisruptionBudget(d.object));
  if (checked.length === 0) {
    throw new CommandError(`no WorkloadSpread (apps.kruise.io) or DomainDisruptionBudget (${DDB_GROUP}) found in ${options.files.map(inputName).join(', ')}`, 1);
  }
  let invalid = 0;
  for (const doc of checked) {
    const obj = doc.object;
    // Strict, as the API server's field validation: unknown fields are errors (the schema's; a subset patch stays free-form).
    const errors = isDomainDisruptionBudget(obj)
      ? validateDomainDisruptionBudget(obj, { strict: true })
      : validateWorkloadSpreadFull(obj, {
          strict: true,
          whitelist,
          workload: findWorkload(obj, docs.map((d) => d.object)),
          // V26 against the files' other WorkloadSpreads that would take precedence (older, then first by name).
          others: spreads.filter((o) => o !== doc && namespaceOf(o.object) === namespaceOf(obj) && takesPrecedence(o.object, obj)).map((o) => o.object),
          unschedulableRecoverySeconds: window,
          subsetPatches: { allowPrivileged: options.allowPrivilegedSubsetPatches === true },
        });
    const where = `${doc.file}: ${describeObject(obj)}`;
    if (errors.length === 0) {
      io.out(`${where}: valid\n`);
      continue;
    }
    invalid++;
    io.out(`${where}: invalid\n`);
    for (const e of errors) io.out(`  - ${formatFieldError(e)}\n`);
  }
  return invalid === 0 ? 0 : 1;
}

function isDomainDisruptionBudget(obj: KubeObject): boolean {
  return obj.kind === DDB_KIND && typeof obj.apiVersion === 'string' && obj.apiVersion.startsWith(`${DDB_GROUP}/`);
}

function parseWindow(value: string | undefined): number {
  if (value === undefined) return 300;
  if (!/^\d+$/.test(value) || Number(value) < 6) {
    throw new UsageError(`--unschedulable-recovery-seconds must be an integer of at least 6, got "${value}"`);
  }
  return Number(value);
}

/** The workload a WorkloadSpread targets, if the files contain it. */
function findWorkload(ws: KubeObject, objects: KubeObject[]): KubeObject | undefined {
  const ref = (ws.spec as { targetRef?: { apiVersion?: unknown; kind?: unknown; name?: unknown } } | undefined)?.targetRef;
  if (ref === undefined || ref === null) return undefined;
  return objects.find(
    (o) =>
      o.kind === ref.kind &&
      o.metadata?.name === ref.name &&
      groupOf(o.apiVersion) === groupOf(ref.apiVersion) &&
      namespaceOf(o) === namespaceOf(ws),
  );
}

/** `--whitelist`: the whitelist config map (YAML) or its JSON value. */
async function readWhitelist(io: CliIo, file: string, maxBytes: number): Promise<Whitelist> {
  const text = await readInput(io, file, maxBytes);
  let json = text;
  const parsed = parseManifests(text, file);
  if (parsed.ok) {
    const configMap = parsed.documents.find((d) => d.object.kind === 'ConfigMap');
    const data = configMap?.object.data as Record<string, unknown> | undefined;
    const value = data?.[WHITELIST_CONFIGMAP_KEY];
    if (typeof value === 'string') json = value;
  }
  const result = parseWhitelist(json);
  if (!result.ok) throw new CommandError(`${inputName(file)}: not a custom-workload whitelist: ${result.error}`, 2);
  return result.whitelist;
}
