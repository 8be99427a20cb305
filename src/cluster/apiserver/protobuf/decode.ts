/**
 * Request bodies in `application/vnd.kubernetes.protobuf`, the encoding
 * client-go's typed clients send (kubectl create deployment|configmap|secret|
 * job|namespace|..., expose, drain): decoded into the JSON object the rest of
 * the server works with.
 *
 * Wire format (k8s.io/apimachinery runtime/serializer/protobuf): the magic
 * `k8s\x00`, then a `runtime.Unknown` {typeMeta {apiVersion, kind}, raw} whose
 * `raw` is the object's message. Messages are read with the field table
 * generated from kubectl's own descriptors (messages.generated.ts), and the
 * special types become what their JSON form is: Time/MicroTime → RFC 3339,
 * Quantity → string, IntOrString → number or string, RawExtension/FieldsV1 →
 * embedded JSON, Duration → Go duration text, map entries → objects, bytes →
 * base64. Go marshals non-pointer fields even when zero; such zero values are
 * dropped (absent and zero mean the same for them), pointer fields keep zeros.
 * Unknown field numbers are skipped, as upstream's unmarshaller skips them.
 * Errors are data: a malformed body is `{ ok: false, error }`.
 */
import { PROTO_MESSAGES } from './messages.generated.ts';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const META = '.k8s.io.apimachinery.pkg.apis.meta.v1';

export type ProtobufResult = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

class DecodeError extends Error {}

interface RawField {
  no: number;
  wire: number;
  varint?: bigint;
  bytes?: Buffer;
  fixed?: Buffer;
}

function readFields(b: Buffer): RawField[] {
  const out: RawField[] = [];
  let p = 0;
  const varint = (): bigint => {
    let r = 0n;
    let s = 0n;
    for (let i = 0; i < 10; i++) {
      const x = b[p++];
      if (x === undefined) throw new DecodeError('unexpected end of data in a varint');
      r |= BigInt(x & 0x7f) << s;
      if ((x & 0x80) === 0) return r;
      s += 7n;
    }
    throw new DecodeError('varint overflow');
  };
  while (p < b.length) {
    const tag = varint();
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (no <= 0) throw new DecodeError(`illegal field number ${no}`);
    if (wire === 0) out.push({ no, wire, varint: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (len < 0 || p + len > b.length) throw new DecodeError('unexpected end of data in a length-delimited field');
      out.push({ no, wire, bytes: b.subarray(p, p + len) });
      p += len;
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      if (p + size > b.length) throw new DecodeError('unexpected end of data in a fixed-size field');
      out.push({ no, wire, fixed: b.subarray(p, p + size) });
      p += size;
    } else throw new DecodeError(`illegal wire type ${wire}`);
  }
  return out;
}

function signed64(v: bigint): number {
  return Number(BigInt.asIntN(64, v));
}

function scalar(type: string, f: RawField): unknown {
  switch (type) {
    case 'string':
      if (f.bytes === undefined) throw new DecodeError('a string field is not length-delimited');
      return f.bytes.toString('utf8');
    case 'bytes':
      if (f.bytes === undefined) throw new DecodeError('a bytes field is not length-delimited');
      return f.bytes.toString('base64');
    case 'bool':
      return (f.varint ?? 0n) !== 0n;
    case 'int32':
      return Number(BigInt.asIntN(32, f.varint ?? 0n));
    case 'int64':
      return signed64(f.varint ?? 0n);
    case 'uint32':
    case 'uint64':
      return Number(f.varint ?? 0n);
    case 'sint32':
    case 'sint64': {
      const v = f.varint ?? 0n;
      return Number((v >> 1n) ^ -(v & 1n));
    }
    case 'double':
      return f.fixed === undefined ? 0 : f.fixed.readDoubleLE(0);
    case 'float':
      return f.fixed === undefined ? 0 : f.fixed.readFloatLE(0);
    default:
      throw new DecodeError(`unsupported field type ${type}`);
  }
}

/** Expands packed repeated scalars (one length-delimited field of several varints). */
function unpack(type: string, f: RawField): RawField[] {
  if (f.wire !== 2 || type === 'string' || type === 'bytes' || f.bytes === undefined) return [f];
  const out: RawField[] = [];
  const b = f.bytes;
  let p = 0;
  if (type === 'double' || type === 'float') {
    const size = type === 'double' ? 8 : 4;
    for (; p + size <= b.length; p += size) out.push({ no: f.no, wire: size === 8 ? 1 : 5, fixed: b.subarray(p, p + size) });
    return out;
  }
  while (p < b.length) {
    let r = 0n;
    let s = 0n;
    for (;;) {
      const x = b[p++];
      if (x === undefined) throw new DecodeError('unexpected end of data in a packed field');
      r |= BigInt(x & 0x7f) << s;
      if ((x & 0x80) === 0) break;
      s += 7n;
    }
    out.push({ no: f.no, wire: 0, varint: r });
  }
  return out;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function rfc3339(seconds: number, nanos: number, micro: boolean): string {
  const d = new Date(seconds * 1000);
  const base = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return micro ? `${base}.${pad(Math.floor(nanos / 1000), 6)}Z` : `${base}Z`;
}

/** Go's time.Duration.String for whole nanoseconds. */
function goDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  let rest = Math.abs(ns);
  if (rest < 1e9) {
    if (rest < 1e3) return `${sign}${rest}ns`;
    if (rest < 1e6) return `${sign}${rest / 1e3}µs`;
    return `${sign}${rest / 1e6}ms`;
  }
  const h = Math.floor(rest / 3.6e12);
  rest -= h * 3.6e12;
  const m = Math.floor(rest / 6e10);
  rest -= m * 6e10;
  const s = rest / 1e9;
  return `${sign}${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`;
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false || v === undefined;
}

/** A message as its JSON value (special types become strings, numbers or embedded JSON). */
function messageValue(name: string, b: Buffer, depth: number): unknown {
  if (depth > 100) throw new DecodeError('message nesting too deep');
  const obj = decodeFields(name, b, depth);
  switch (name) {
    case `${META}.Time`:
    case `${META}.MicroTime`: {
      const seconds = typeof obj['seconds'] === 'number' ? obj['seconds'] : 0;
      const nanos = typeof obj['nanos'] === 'number' ? obj['nanos'] : 0;
      return seconds === 0 && nanos === 0 ? undefined : rfc3339(seconds, nanos, name.endsWith('MicroTime'));
    }
    case `${META}.Duration`:
      return goDuration(typeof obj['duration'] === 'number' ? obj['duration'] : 0);
    case '.k8s.io.apimachinery.pkg.api.resource.Quantity':
      return typeof obj['string'] === 'string' ? obj['string'] : '0';
    case '.k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return obj['type'] === 1 ? (obj['strVal'] ?? '') : (obj['intVal'] ?? 0);
    case '.k8s.io.apimachinery.pkg.runtime.RawExtension':
    case `${META}.FieldsV1`: {
      const raw = typeof obj['raw'] === 'string' ? Buffer.from(obj['raw'], 'base64').toString('utf8') : '';
      if (raw === '') return undefined;
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        throw new DecodeError(`${name.split('.').pop() ?? name} does not hold JSON`);
      }
    }
    default:
      return obj;
  }
}

function decodeFields(name: string, b: Buffer, depth: number): Record<string, unknown> {
  const message = PROTO_MESSAGES[name];
  if (message === undefined) throw new DecodeError(`no protobuf description of ${name.slice(1)}`);
  const byNo = new Map(message.f.map((f) => [f[0], f]));
  const out: Record<string, unknown> = {};
  for (const raw of readFields(b)) {
    const field = byNo.get(raw.no);
    if (field === undefined) continue;
    const [, json, type, flags] = field;
    const repeated = (flags & 1) !== 0;
    if (type.startsWith('.')) {
      if (raw.bytes === undefined) throw new DecodeError(`field ${json} of ${name.slice(1)} is not a message`);
      const entry = PROTO_MESSAGES[type];
      if (entry?.map === true) {
        const kv = decodeFields(type, raw.bytes, depth + 1);
        const valueField = entry.f.find((f) => f[0] === 2);
        let value = kv['value'];
        if (value === undefined && valueField !== undefined) value = valueField[2] === 'string' || valueField[2] === 'bytes' ? '' : valueField[2].startsWith('.') ? {} : 0;
        const map = (out[json] ?? {}) as Record<string, unknown>;
        map[String(kv['key'] ?? '')] = value;
        out[json] = map;
        continue;
      }
      const value = messageValue(type, raw.bytes, depth + 1);
      if (repeated) ((out[json] ??= []) as unknown[]).push(value ?? null);
      else if (value !== undefined) out[json] = value;
      continue;
    }
    for (const f of repeated ? unpack(type, raw) : [raw]) {
      const value = scalar(type, f);
      if (repeated) ((out[json] ??= []) as unknown[]).push(value);
      else out[json] = value;
    }
  }
  for (const [no, json, type, flags] of message.f) {
    void no;
    // Non-pointer scalars are always on the wire; zero means unset for them.
    if ((flags & 3) === 0 && !type.startsWith('.') && isZero(out[json])) delete out[json];
  }
  return out;
}

/** The message of a kind: `.k8s.io.api.<group>.<version>.<Kind>` (meta types for DeleteOptions). */
function messageFor(apiVersion: string, kind: string): string | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash >= 0 ? apiVersion.slice(0, slash) : '';
  const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion;
  // The Go package's name: the group's first label (rbac.authorization.k8s.io → rbac).
  const pkg = group === '' ? 'core' : (group.split('.')[0] ?? group);
  for (const candidate of [`.k8s.io.api.${pkg}.${version}.${kind}`, `${META}.${kind}`]) {
    if (PROTO_MESSAGES[candidate] !== undefined) return candidate;
  }
  return undefined;
}

/** Decodes a `k8s\x00`-framed protobuf body into its JSON object (with apiVersion and kind). */
export function decodeKubernetesProtobuf(body: Buffer): ProtobufResult {
  try {
    if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) return { ok: false, error: 'provided object is not a Kubernetes protobuf message: missing the k8s prefix' };
    const unknown = decodeFields('.k8s.io.apimachinery.pkg.runtime.Unknown', body.subarray(MAGIC.length), 0);
    const typeMeta = (unknown['typeMeta'] ?? {}) as Record<string, unknown>;
    const apiVersion = typeof typeMeta['apiVersion'] === 'string' ? typeMeta['apiVersion'] : '';
    const kind = typeof typeMeta['kind'] === 'string' ? typeMeta['kind'] : '';
    const encoding = typeof unknown['contentEncoding'] === 'string' ? unknown['contentEncoding'] : '';
    if (encoding !== '') return { ok: false, error: `unsupported content encoding ${JSON.stringify(encoding)}` };
    const name = messageFor(apiVersion, kind);
    if (name === undefined) return { ok: false, error: `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}` };
    const raw = typeof unknown['raw'] === 'string' ? Buffer.from(unknown['raw'], 'base64') : Buffer.alloc(0);
    const value = decodeFields(name, raw, 0);
    return { ok: true, value: { apiVersion, kind, ...value } };
  } catch (err) {
    if (err instanceof DecodeError) return { ok: false, error: err.message };
    throw err;
  }
}
