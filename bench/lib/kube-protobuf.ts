/**
 * A Kubernetes protobuf ENCODER for the benchmarks (the embedded API server
 * only decodes protobuf request bodies, src/cluster/apiserver/protobuf/):
 * a JSON object → the wire form client-go reads, so bench/apiserver-list-watch.ts
 * can compare what a pod list and a pod watch cost in JSON and in protobuf.
 *
 * Wire form (k8s.io/apimachinery runtime/serializer/protobuf): `k8s\x00` then
 * a `runtime.Unknown` {typeMeta {apiVersion, kind}, raw = the object's
 * message}; a watch stream frames each event with a 4-byte big-endian
 * length, the event being a bare `meta.v1.WatchEvent` message (the stream
 * serializer is the raw one: no envelope) {type, object: RawExtension
 * holding the object's own `k8s\x00` envelope}. Messages are written from the
 * field table the decoder uses (messages.generated.ts) plus the three
 * messages it lacks (ListMeta, PodList, WatchEvent). Like Go's generated
 * marshallers: non-pointer scalars and messages are always written (zero when
 * absent), map entries in key order, repeated scalars unpacked (proto2);
 * fields Go inlines in JSON (`INLINE_FIELDS`, LocalObjectReference) are read
 * from the parent.
 * Special types are written from their JSON form (Time/MicroTime from RFC
 * 3339, Quantity, IntOrString, RawExtension/FieldsV1 as JSON bytes).
 * Not used by production code; round trips through the server's decoder are
 * checked by the benchmark before it measures.
 */
import { PROTO_MESSAGES } from '../../src/cluster/apiserver/protobuf/messages.generated.ts';

type Field = [number, string, string, number];
type Message = { map?: boolean; f: Field[] };

const META = '.k8s.io.apimachinery.pkg.apis.meta.v1';
const EXTRA: Record<string, Message> = {
  [`${META}.ListMeta`]: { f: [[1, 'selfLink', 'string', 0], [2, 'resourceVersion', 'string', 0], [3, 'continue', 'string', 0], [4, 'remainingItemCount', 'int64', 2]] },
  '.k8s.io.api.core.v1.PodList': { f: [[1, 'metadata', `${META}.ListMeta`, 0], [2, 'items', '.k8s.io.api.core.v1.Pod', 1]] },
  [`${META}.WatchEvent`]: { f: [[1, 'type', 'string', 0], [2, 'object', '.k8s.io.apimachinery.pkg.runtime.RawExtension', 0]] },
};
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/**
 * Go struct fields embedded with `json:",inline"`: a message field on the
 * wire, the parent's own fields in JSON (the descriptors do not say so).
 */
export const INLINE_FIELDS: Readonly<Record<string, string>> = {
  '.k8s.io.api.core.v1.Volume': 'volumeSource',
  '.k8s.io.api.core.v1.Probe': 'handler',
  '.k8s.io.api.core.v1.EphemeralContainer': 'ephemeralContainerCommon',
  '.k8s.io.api.core.v1.PersistentVolumeSpec': 'persistentVolumeSource',
};
/** LocalObjectReference is inlined wherever it is embedded (config map and secret sources, projections, key selectors). */
const isInline = (message: string, json: string, type: string): boolean => INLINE_FIELDS[message] === json || (json === 'localObjectReference' && type === '.k8s.io.api.core.v1.LocalObjectReference');

const messageOf = (name: string): Message => {
  const m = EXTRA[name] ?? PROTO_MESSAGES[name];
  if (m === undefined) throw new Error(`no protobuf description of ${name.slice(1)}`);
  return m;
};

/** A growable byte buffer. */
class Writer {
  buf = Buffer.allocUnsafe(256);
  len = 0;

  #room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  varint(v: number | bigint): void {
    let x = typeof v === 'bigint' ? BigInt.asUintN(64, v) : v;
    if (typeof x === 'number' && (x < 0 || x > Number.MAX_SAFE_INTEGER)) x = BigInt.asUintN(64, BigInt(Math.trunc(x)));
    this.#room(10);
    if (typeof x === 'number') {
      while (x > 0x7f) {
        this.buf[this.len++] = (x % 0x80) | 0x80;
        x = Math.floor(x / 0x80);
      }
      this.buf[this.len++] = x;
      return;
    }
    while (x > 0x7fn) {
      this.buf[this.len++] = Number(x & 0x7fn) | 0x80;
      x >>= 7n;
    }
    this.buf[this.len++] = Number(x);
  }

  tag(no: number, wire: number): void {
    this.varint(no * 8 + wire);
  }

  bytes(no: number, b: Buffer | Uint8Array): void {
    this.tag(no, 2);
    this.varint(b.length);
    this.#room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  string(no: number, s: string): void {
    const n = Buffer.byteLength(s);
    this.tag(no, 2);
    this.varint(n);
    this.#room(n);
    this.len += this.buf.write(s, this.len, 'utf8');
  }

  fixed(no: number, v: number, size: 4 | 8): void {
    this.tag(no, size === 8 ? 1 : 5);
    this.#room(size);
    if (size === 8) this.buf.writeDoubleLE(v, this.len);
    else this.buf.writeFloatLE(v, this.len);
    this.len += size;
  }

  done(): Buffer {
    return this.buf.subarray(0, this.len);
  }
}

function parseTime(value: unknown): { seconds: number; nanos: number } | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new Error(`not an RFC 3339 time: ${JSON.stringify(value)}`);
  const fraction = /\.(\d+)/.exec(value)?.[1] ?? '';
  return { seconds: Math.floor(ms / 1000), nanos: fraction === '' ? 0 : Number(fraction.padEnd(9, '0').slice(0, 9)) };
}

/** The message `name` with the JSON value `value` (special types from their JSON form). */
function writeMessage(w: Writer, name: string, value: unknown): void {
  switch (name) {
    case `${META}.Time`:
    case `${META}.MicroTime`: {
      const t = parseTime(value);
      if (t === undefined) return; // Go writes nothing for the zero time
      w.tag(1, 0);
      w.varint(t.seconds);
      w.tag(2, 0);
      w.varint(t.nanos);
      return;
    }
    case '.k8s.io.apimachinery.pkg.api.resource.Quantity':
      w.string(1, String(value ?? '0'));
      return;
    case '.k8s.io.apimachinery.pkg.util.intstr.IntOrString': {
      const isString = typeof value === 'string';
      w.tag(1, 0);
      w.varint(isString ? 1 : 0);
      w.tag(2, 0);
      w.varint(isString ? 0 : Number(value ?? 0));
      w.string(3, isString ? value : '');
      return;
    }
    case '.k8s.io.apimachinery.pkg.runtime.RawExtension':
    case `${META}.FieldsV1`:
      if (Buffer.isBuffer(value)) w.bytes(1, value);
      else if (value !== undefined) w.bytes(1, Buffer.from(JSON.stringify(value)));
      return;
    case `${META}.Duration`:
      throw new Error('Duration fields are not needed by the benchmarks');
  }
  const obj = (value ?? {}) as Record<string, unknown>;
  for (const [no, json, type, flags] of messageOf(name).f) {
    const v = isInline(name, json, type) ? obj : obj[json];
    const repeated = (flags & 1) !== 0;
    const pointer = (flags & 2) !== 0;
    if (type.startsWith('.')) {
      const entry = EXTRA[type] ?? PROTO_MESSAGES[type];
      if (entry?.map === true) {
        if (v === undefined || v === null) continue;
        const map = v as Record<string, unknown>;
        const valueType = entry.f.find((f) => f[0] === 2)?.[2] ?? 'string';
        for (const key of Object.keys(map).sort()) {
          const sub = new Writer();
          sub.string(1, key);
          writeValue(sub, 2, valueType, map[key]);
          w.bytes(no, sub.done());
        }
        continue;
      }
      if (repeated) {
        for (const item of (v ?? []) as unknown[]) writeValue(w, no, type, item);
        continue;
      }
      if ((v === undefined || v === null) && pointer) continue;
      writeValue(w, no, type, v);
      continue;
    }
    if (repeated) {
      for (const item of (v ?? []) as unknown[]) writeValue(w, no, type, item);
      continue;
    }
    if ((v === undefined || v === null) && pointer) continue;
    writeValue(w, no, type, v);
  }
}

function writeValue(w: Writer, no: number, type: string, v: unknown): void {
  if (type.startsWith('.')) {
    const sub = new Writer();
    writeMessage(sub, type, v);
    w.bytes(no, sub.done());
    return;
  }
  switch (type) {
    case 'string':
      w.string(no, typeof v === 'string' ? v : '');
      return;
    case 'bytes':
      w.bytes(no, typeof v === 'string' ? Buffer.from(v, 'base64') : Buffer.alloc(0));
      return;
    case 'bool':
      w.tag(no, 0);
      w.varint(v === true ? 1 : 0);
      return;
    case 'int32':
    case 'int64':
    case 'uint32':
    case 'uint64':
      w.tag(no, 0);
      w.varint(typeof v === 'number' ? v : 0);
      return;
    case 'sint32':
    case 'sint64': {
      const n = BigInt(typeof v === 'number' ? Math.trunc(v) : 0);
      w.tag(no, 0);
      w.varint((n << 1n) ^ (n >> 63n));
      return;
    }
    case 'double':
      w.fixed(no, typeof v === 'number' ? v : 0, 8);
      return;
    case 'float':
      w.fixed(no, typeof v === 'number' ? v : 0, 4);
      return;
    default:
      throw new Error(`unsupported field type ${type}`);
  }
}

/** The message of a typed object (apiVersion and kind are carried by the envelope, not the message). */
export function encodeMessage(name: string, obj: unknown): Buffer {
  const w = new Writer();
  writeMessage(w, name, obj);
  return Buffer.from(w.done());
}

/** `k8s\x00` + runtime.Unknown around a message. */
export function envelope(apiVersion: string, kind: string, raw: Buffer): Buffer {
  const typeMeta = new Writer();
  typeMeta.string(1, apiVersion);
  typeMeta.string(2, kind);
  const unknown = new Writer();
  unknown.bytes(1, typeMeta.done());
  unknown.bytes(2, raw);
  unknown.string(3, '');
  unknown.string(4, '');
  return Buffer.concat([MAGIC, unknown.done()]);
}

/** A pod as a single response sends it. */
export function encodePod(pod: Record<string, unknown>): Buffer {
  return envelope('v1', 'Pod', encodeMessage('.k8s.io.api.core.v1.Pod', pod));
}

/** A PodList response from already encoded pod messages (without envelopes), as a server with cached item encodings builds it. */
export function encodePodList(resourceVersion: string, podMessages: readonly Buffer[]): Buffer {
  const w = new Writer();
  const meta = new Writer();
  meta.string(1, '');
  meta.string(2, resourceVersion);
  meta.string(3, '');
  w.bytes(1, meta.done());
  for (const m of podMessages) w.bytes(2, m);
  return envelope('v1', 'PodList', w.done());
}

/** One watch frame: 4-byte big-endian length + a bare WatchEvent message around the object's envelope. */
export function watchFrame(type: string, objectEnvelope: Buffer): Buffer {
  const ev = new Writer();
  ev.string(1, type);
  const raw = new Writer();
  raw.bytes(1, objectEnvelope);
  ev.bytes(2, raw.done());
  const body = ev.done();
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}
