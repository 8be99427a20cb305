/**
 * Development-time only (scripts/gen-protobuf.ts and its drift test; the
 * server never imports this): reads the protobuf descriptors of the
 * Kubernetes API out of a kubectl binary. Go programs built with the k8s.io
 * API packages embed each `generated.proto` as a gzipped
 * FileDescriptorProto; this finds them, decodes them with the field numbers
 * of google/protobuf/descriptor.proto, and writes the compact message table
 * the server's protobuf decoder uses (messages.generated.ts).
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

interface WireField {
  no: number;
  varint?: bigint;
  bytes?: Buffer;
}

/** Minimal wire-format reader (no schema): every field with its number. */
function wireFields(b: Buffer): WireField[] {
  const out: WireField[] = [];
  let p = 0;
  const varint = (): bigint => {
    let r = 0n;
    let s = 0n;
    for (;;) {
      const x = b[p++];
      if (x === undefined) throw new Error('truncated varint');
      r |= BigInt(x & 0x7f) << s;
      if ((x & 0x80) === 0) return r;
      s += 7n;
    }
  };
  while (p < b.length) {
    const tag = Number(varint());
    const no = tag >> 3;
    switch (tag & 7) {
      case 0:
        out.push({ no, varint: varint() });
        break;
      case 1:
        p += 8;
        break;
      case 2: {
        const len = Number(varint());
        if (p + len > b.length) throw new Error('truncated field');
        out.push({ no, bytes: b.subarray(p, p + len) });
        p += len;
        break;
      }
      case 5:
        p += 4;
        break;
      default:
        throw new Error(`unsupported wire type ${tag & 7}`);
    }
  }
  return out;
}

const str = (f: WireField[], no: number): string => f.find((x) => x.no === no)?.bytes?.toString('utf8') ?? '';
const num = (f: WireField[], no: number): number => Number(f.find((x) => x.no === no)?.varint ?? 0n);

/** FieldDescriptorProto.Type numbers → the decoder's type names. */
const SCALARS: Record<number, string> = { 1: 'double', 2: 'float', 3: 'int64', 4: 'uint64', 5: 'int32', 8: 'bool', 9: 'string', 12: 'bytes', 13: 'uint32', 17: 'sint32', 18: 'sint64' };

export interface FieldInfo {
  no: number;
  name: string;
  /** A scalar type name, or a message's full name (`.k8s.io.api.core.v1.PodSpec`). */
  type: string;
  repeated: boolean;
  /** A Go pointer (no `(gogoproto.nullable) = false`): present means set, even when zero. */
  pointer: boolean;
}

export interface MessageInfo {
  fields: FieldInfo[];
  mapEntry: boolean;
}

/** Every message of every embedded k8s descriptor, by full name. */
export function readDescriptors(binaryPath: string): Map<string, MessageInfo> {
  const bin = readFileSync(binaryPath);
  const magic = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]);
  const messages = new Map<string, MessageInfo>();
  const addMessage = (bytes: Buffer, scope: string): void => {
    const m = wireFields(bytes);
    const full = `${scope}.${str(m, 1)}`;
    const options = m.find((x) => x.no === 7)?.bytes;
    const mapEntry = options !== undefined && wireFields(options).some((o) => o.no === 7 && o.varint === 1n);
    const fields: FieldInfo[] = [];
    for (const f of m.filter((x) => x.no === 2)) {
      const ff = wireFields(f.bytes ?? Buffer.alloc(0));
      const typeNo = num(ff, 5);
      const type = typeNo === 11 ? str(ff, 6) : (SCALARS[typeNo] ?? `unsupported-${typeNo}`);
      const fo = ff.find((x) => x.no === 8)?.bytes;
      const nonNullable = fo !== undefined && wireFields(fo).some((o) => o.no === 65001 && o.varint === 0n);
      // A few legacy fields are spelled capitalized in the .proto (`Webhooks`); their JSON name is lower camel case.
      const protoName = str(ff, 1);
      const jsonName = protoName.charAt(0).toLowerCase() + protoName.slice(1);
      fields.push({ no: num(ff, 3), name: jsonName, type, repeated: num(ff, 4) === 3, pointer: !nonNullable });
    }
    messages.set(full, { fields, mapEntry });
    for (const nested of m.filter((x) => x.no === 3)) addMessage(nested.bytes ?? Buffer.alloc(0), full);
  };
  for (let i = bin.indexOf(magic); i >= 0; i = bin.indexOf(magic, i + 8)) {
    let file: Buffer;
    try {
      file = gunzipSync(bin.subarray(i, Math.min(bin.length, i + 4_000_000)));
    } catch {
      continue;
    }
    let f: WireField[];
    try {
      f = wireFields(file);
    } catch {
      continue;
    }
    if (!str(f, 1).startsWith('k8s.io/')) continue;
    const pkg = `.${str(f, 2)}`;
    for (const m of f.filter((x) => x.no === 4)) addMessage(m.bytes ?? Buffer.alloc(0), pkg);
  }
  return messages;
}

/** The messages reachable from `roots`, as the text of the generated module. */
export function messageTable(messages: Map<string, MessageInfo>, roots: readonly string[]): string {
  const keep = new Map<string, MessageInfo>();
  const queue = [...roots];
  while (queue.length > 0) {
    const name = queue.shift() as string;
    if (keep.has(name)) continue;
    const m = messages.get(name);
    if (m === undefined) throw new Error(`no descriptor for ${name}`);
    keep.set(name, m);
    for (const f of m.fields) if (f.type.startsWith('.')) queue.push(f.type);
  }
  const lines = [...keep.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, m]) => {
      const fields = m.fields.map((f) => [f.no, f.name, f.type, (f.repeated ? 1 : 0) | (f.pointer ? 2 : 0)]);
      return `  ${JSON.stringify(name)}: ${JSON.stringify(m.mapEntry ? { map: true, f: fields } : { f: fields })},`;
    });
  return [
    '// Generated by `npx tsx scripts/gen-protobuf.ts <kubectl binary>` from the protobuf descriptors kubectl embeds. Do not edit by hand.',
    '// Each message: `f` = [field number, JSON name, type, flags (1 repeated, 2 pointer)]; `map` marks map entries.',
    'export const PROTO_MESSAGES: Record<string, { map?: boolean; f: [number, string, string, number][] }> = {',
    ...lines,
    '};',
    '',
  ].join('\n');
}

/** The messages of the kinds kubectl may send as protobuf (typed clients: create, expose, drain, ...). */
export const PROTO_ROOTS = [
  '.k8s.io.api.core.v1.Pod',
  '.k8s.io.api.core.v1.Namespace',
  '.k8s.io.api.core.v1.Node',
  '.k8s.io.api.core.v1.ConfigMap',
  '.k8s.io.api.core.v1.Secret',
  '.k8s.io.api.core.v1.Service',
  '.k8s.io.api.core.v1.ServiceAccount',
  '.k8s.io.api.core.v1.Event',
  '.k8s.io.api.core.v1.Endpoints',
  '.k8s.io.api.core.v1.Binding',
  '.k8s.io.api.apps.v1.Deployment',
  '.k8s.io.api.apps.v1.ReplicaSet',
  '.k8s.io.api.apps.v1.StatefulSet',
  '.k8s.io.api.apps.v1.ControllerRevision',
  '.k8s.io.api.batch.v1.Job',
  '.k8s.io.api.policy.v1.PodDisruptionBudget',
  '.k8s.io.api.policy.v1.Eviction',
  '.k8s.io.api.scheduling.v1.PriorityClass',
  '.k8s.io.api.coordination.v1.Lease',
  '.k8s.io.api.events.v1.Event',
  '.k8s.io.api.autoscaling.v1.Scale',
  '.k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration',
  '.k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration',
  '.k8s.io.api.rbac.v1.ClusterRole',
  '.k8s.io.api.rbac.v1.ClusterRoleBinding',
  '.k8s.io.api.rbac.v1.Role',
  '.k8s.io.api.rbac.v1.RoleBinding',
  '.k8s.io.api.authorization.v1.SelfSubjectAccessReview',
  '.k8s.io.api.authorization.v1.SelfSubjectRulesReview',
  '.k8s.io.api.authorization.v1.SubjectAccessReview',
  '.k8s.io.api.authorization.v1.LocalSubjectAccessReview',
  '.k8s.io.api.authentication.v1.SelfSubjectReview',
  '.k8s.io.api.authentication.v1.TokenRequest',
  '.k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  '.k8s.io.apimachinery.pkg.runtime.Unknown',
];
