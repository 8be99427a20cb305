/**
 * Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`, what
 * kubectl sends since it found the parameter in the OpenAPI documents): the
 * fields of a request body that the kind does not declare.
 *
 * - built-in kinds: the body is walked against the generated description of
 *   the Kubernetes API (every field of every type); paths are spelled as the
 *   strict JSON decoder reports them (`spec.template.spec.containers[0].imagePullPolcy`);
 *   free-form fields (`any`, `object`) are not walked;
 * - custom resources: what pruning would remove (their structural schema,
 *   `x-kubernetes-preserve-unknown-fields` honoured, ObjectMeta for `metadata`).
 * The verdict (400, warnings, nothing) is ObjectOperations.checkFields'; the
 * unknown fields are dropped whatever the verdict, as upstream's decoders do.
 */
import { asRecord } from '../../../k8s/raw-json.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import type { ApiServerHost } from '../extension-host.ts';
import { CRD_RESOURCE } from '../crd-controller.ts';
import type { ResourceDef } from '../resource-def.ts';
import { versionSchema } from '../custom-resource-schema.ts';
import { pruneResource } from '../../../k8s/crd-schema/prune.ts';
import { BUILTIN_DEFINITIONS } from './builtin-schemas.generated.ts';

const KIND_DEFINITIONS = new Map<string, string>();
for (const [name, def] of Object.entries(BUILTIN_DEFINITIONS)) if (def.k !== undefined) KIND_DEFINITIONS.set(def.k.join('/'), name);

function walk(value: unknown, type: string, path: string, out: string[], drop: boolean): void {
  if (type.startsWith('[]')) {
    if (Array.isArray(value)) value.forEach((el, i) => walk(el, type.slice(2), `${path}[${i}]`, out, drop));
    return;
  }
  if (type.startsWith('{}')) {
    const rec = asRecord(value);
    if (rec !== undefined) for (const [k, v] of Object.entries(rec)) walk(v, type.slice(2), `${path}.${k}`, out, drop);
    return;
  }
  if (!type.startsWith('#')) return;
  const def = BUILTIN_DEFINITIONS[type.slice(1)];
  const rec = asRecord(value);
  if (def === undefined || rec === undefined) return;
  for (const [k, v] of Object.entries(rec)) {
    const fieldType = def.p[k];
    const fieldPath = path === '' ? k : `${path}.${k}`;
    if (fieldType === undefined) {
      out.push(fieldPath);
      if (drop) delete rec[k];
    } else walk(v, fieldType, fieldPath, out, drop);
  }
}

/**
 * Undeclared fields of a built-in kind's object ([] when the kind has no
 * description); with `drop`, they are also removed, as decoding into the
 * typed object drops them upstream.
 */
export function builtinUnknownFields(group: string, version: string, kind: string, obj: KubeObject, drop = false): string[] {
  const name = KIND_DEFINITIONS.get(`${group}/${version}/${kind}`);
  if (name === undefined) return [];
  const out: string[] = [];
  walk(obj, `#${name}`, '', out, drop);
  return out;
}

/** Installs the unknown-field finder on a server core. */
export function installFieldValidation(core: ApiServerHost): void {
  core.ops.unknownFields = (def: ResourceDef, obj: KubeObject, drop: boolean) => {
    if (def.builtin) return builtinUnknownFields(def.group, def.version, def.kind, obj, drop);
    const crd = core.store.get(CRD_RESOURCE, '', `${def.plural}.${def.group}`);
    const schema = crd === undefined ? undefined : versionSchema(crd, def.version);
    return schema === undefined ? [] : pruneResource(drop ? obj : structuredClone(obj), schema);
  };
}
