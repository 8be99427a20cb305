/**
 * CustomResourceDefinitions generated from the TypeBox schemas (STYLE §10: one
 * schema, many uses). `crdFromSchema` builds any `apiextensions.k8s.io/v1` CRD
 * (the DomainDisruptionBudget CRD reuses it); `workloadSpreadCrd` is the
 * WorkloadSpread one (spec §1, DECISIONS D1); `renderYaml` writes the stable
 * YAML that is checked in under deploy/crds/ by `npx tsx scripts/gen-crds.ts`;
 * `domainDisruptionBudgetCrd` is the DomainDisruptionBudget one (D14).
 *
 * Schema conversion keeps every enumerable JSON-Schema keyword and drops only
 * TypeBox's own bookkeeping (non-enumerable and `~`-prefixed keys), so a
 * construct Kubernetes rejects stays visible and the CRD validation of
 * k8s/crd-schema/ (crd-acceptance.test.ts) refuses it instead of it silently
 * changing meaning. The root `metadata` is always just
 * `{type: object}` (the API server owns its schema).
 */
import { stringify } from 'yaml';
import { DDB_GROUP, DDB_KIND, DDB_PLURAL, DDB_SHORT_NAMES, DDB_SINGULAR, DDB_VERSION, DomainDisruptionBudgetSchema } from './disruption-budget.ts';
import { GROUP, KIND, PLURAL, SHORT_NAMES, SINGULAR, VERSION, WorkloadSpreadSchema } from './workloadspread.ts';

export type JsonSchema = Record<string, unknown>;

export interface PrinterColumn {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  /** The TypeBox (or plain JSON-Schema) schema of the whole object. */
  schema: object;
  /** Enables the `/status` subresource. */
  status?: boolean;
  printerColumns?: PrinterColumn[];
}

export interface CrdOptions {
  group: string;
  kind: string;
  plural: string;
  singular: string;
  listKind?: string;
  shortNames?: readonly string[];
  categories?: readonly string[];
  scope: 'Namespaced' | 'Cluster';
  versions: CrdVersion[];
  /**
   * Root properties not to require even if the schema does: the server-side
   * validation reports them with a better message (e.g. a missing `spec`).
   */
  optionalRootProperties?: readonly string[];
}

/** A JSON-Schema node in OpenAPI form: own enumerable keys only, minus TypeBox's `~` bookkeeping, recursively. */
export function toOpenApiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApiSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: JsonSchema = {};
  for (const key of Object.keys(schema)) {
    if (key.startsWith('~')) continue;
    const value = (schema as JsonSchema)[key];
    if (value === undefined) continue;
    if (key === 'required' && Array.isArray(value) && value.length === 0) continue;
    // `enum` and `default` hold data, not schemas; copy them as plain JSON.
    out[key] = key === 'enum' || key === 'default' || key === 'example' ? structuredClone(value) : toOpenApiSchema(value);
  }
  return out;
}

/** The `openAPIV3Schema` of a version: converted schema, `metadata: {type: object}`, optional root properties not required. */
export function rootOpenApiSchema(schema: object, optionalRootProperties: readonly string[] = []): JsonSchema {
  const root = toOpenApiSchema(schema) as JsonSchema;
  const properties = root['properties'];
  if (typeof properties === 'object' && properties !== null && 'metadata' in properties) {
    (properties as JsonSchema)['metadata'] = { type: 'object' };
  }
  const required = root['required'];
  if (Array.isArray(required)) {
    const kept = required.filter((name) => !optionalRootProperties.includes(name as string));
    if (kept.length > 0) root['required'] = kept;
    else delete root['required'];
  }
  return root;
}

/** An `apiextensions.k8s.io/v1` CustomResourceDefinition. */
export function crdFromSchema(options: CrdOptions): Record<string, unknown> {
  const names: JsonSchema = {
    kind: options.kind,
    listKind: options.listKind ?? `${options.kind}List`,
    plural: options.plural,
    singular: options.singular,
  };
  if (options.shortNames && options.shortNames.length > 0) names['shortNames'] = [...options.shortNames];
  if (options.categories && options.categories.length > 0) names['categories'] = [...options.categories];
  const versions = options.versions.map((v) => {
    const version: JsonSchema = {
      name: v.name,
      served: v.served,
      storage: v.storage,
      schema: { openAPIV3Schema: rootOpenApiSchema(v.schema, options.optionalRootProperties) },
    };
    if (v.status) version['subresources'] = { status: {} };
    if (v.printerColumns && v.printerColumns.length > 0) version['additionalPrinterColumns'] = v.printerColumns.map((c) => ({ ...c }));
    return version;
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${options.plural}.${options.group}` },
    spec: { group: options.group, names, scope: options.scope, versions },
  };
}

/**
 * The printer columns of the reference (WorkloadName, WorkloadKind, Adaptive,
 * Age) plus ours: Subsets; Ready and Reason from the `Ready` condition (True
 * only once the status covers the current spec and pods, core/ready-condition.ts);
 * and three integer counts — Desired (the workload's replicas), Placed (active
 * pods in subsets, ready or not) and Ready-Pods (ready ones among them). The
 * counts are the controller's last written view: while Ready is False they
 * may trail the pods by a few seconds (the controller batches status writes),
 * a change of Ready is written at once with them.
 */
export const WORKLOADSPREAD_PRINTER_COLUMNS: readonly PrinterColumn[] = [
  { name: 'WorkloadName', type: 'string', jsonPath: '.spec.targetRef.name', description: 'Name of the target workload.' },
  { name: 'WorkloadKind', type: 'string', jsonPath: '.spec.targetRef.kind', description: 'Kind of the target workload.' },
  {
    name: 'Adaptive',
    type: 'boolean',
    jsonPath: '.spec.scheduleStrategy.type[?(@ == "Adaptive")]',
    description: 'Whether pods move to the next subset when their subset cannot schedule them.',
  },
  { name: 'Subsets', type: 'integer', jsonPath: '.status.subsetCount', description: 'Number of subsets.' },
  {
    name: 'Ready',
    type: 'string',
    jsonPath: '.status.conditions[?(@.type=="Ready")].status',
    description: 'True when the spread holds for the current spec and the pods the controller saw.',
  },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', description: 'Why Ready is what it is (Spread when True).' },
  { name: 'Desired', type: 'integer', jsonPath: '.status.workloadReplicas', description: "The workload's replicas." },
  { name: 'Placed', type: 'integer', jsonPath: '.status.placedReplicas', description: 'Active pods placed in a subset, ready or not.' },
  { name: 'Ready-Pods', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready pods placed in a subset.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/** The WorkloadSpread CRD: `workloadspreads.apps.kruise.io`, v1alpha1 served and stored, status subresource. */
export function workloadSpreadCrd(): Record<string, unknown> {
  return crdFromSchema({
    group: GROUP,
    kind: KIND,
    plural: PLURAL,
    singular: SINGULAR,
    shortNames: SHORT_NAMES,
    scope: 'Namespaced',
    // A missing spec (or targetRef) is reported by validation as V1, with its message (spec §7).
    optionalRootProperties: ['spec'],
    versions: [{ name: VERSION, served: true, storage: true, schema: WorkloadSpreadSchema, status: true, printerColumns: [...WORKLOADSPREAD_PRINTER_COLUMNS] }],
  });
}

/** Columns of `kubectl get ddb`: how domains are named, the budget, how many domains and how many allow no eviction now. */
export const DOMAIN_DISRUPTION_BUDGET_PRINTER_COLUMNS: readonly PrinterColumn[] = [
  { name: 'Mode', type: 'string', jsonPath: '.status.mode', description: 'How domains are named: all, nodeSelectorTerm, topologyKey=<key> or workloadSpreadRef=<name>.' },
  { name: 'MinAvailable', type: 'string', jsonPath: '.spec.minAvailable', description: 'Pods each domain must keep available.' },
  { name: 'MaxUnavailable', type: 'string', jsonPath: '.spec.maxUnavailable', description: 'Pods each domain may have unavailable.' },
  { name: 'Domains', type: 'integer', jsonPath: '.status.domainCount', description: 'Number of domains.' },
  { name: 'Blocked', type: 'integer', jsonPath: '.status.blockedDomains', description: 'Domains with pods that allow no eviction now.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/** The DomainDisruptionBudget CRD (D14): `domaindisruptionbudgets.policy.workloadspread.io`, v1alpha1, status subresource. */
export function domainDisruptionBudgetCrd(): Record<string, unknown> {
  return crdFromSchema({
    group: DDB_GROUP,
    kind: DDB_KIND,
    plural: DDB_PLURAL,
    singular: DDB_SINGULAR,
    shortNames: DDB_SHORT_NAMES,
    scope: 'Namespaced',
    // A missing spec is reported by validation with its message.
    optionalRootProperties: ['spec'],
    versions: [{ name: DDB_VERSION, served: true, storage: true, schema: DomainDisruptionBudgetSchema, status: true, printerColumns: [...DOMAIN_DISRUPTION_BUDGET_PRINTER_COLUMNS] }],
  });
}

export const CRD_GENERATOR_COMMAND = 'npx tsx scripts/gen-crds.ts';

/** YAML with sorted keys (stable whatever the construction order) under a "generated" header. */
export function renderYaml(obj: unknown, source = 'the TypeBox schemas in src/api/'): string {
  const header = `# Generated by \`${CRD_GENERATOR_COMMAND}\` from ${source}. Do not edit by hand.\n`;
  return header + stringify(obj, { sortMapEntries: true, lineWidth: 0 });
}

/** Every CRD this project ships, with its file name under deploy/crds/. */
export function generatedCrdFiles(): { fileName: string; content: string }[] {
  return [
    { fileName: `${GROUP}_${PLURAL}.yaml`, content: renderYaml(workloadSpreadCrd(), 'src/api/workloadspread.ts') },
    { fileName: `${DDB_GROUP}_${DDB_PLURAL}.yaml`, content: renderYaml(domainDisruptionBudgetCrd(), 'src/api/disruption-budget.ts') },
  ];
}
