/**
 * `/openapi/v2` in protobuf (`application/com.github.proto-openapi.spec.v2.v1.0+protobuf`),
 * the form client-go asks for first (kubectl's and helm's client-side validation and their
 * fallback check for server-side field validation): a Swagger 2.0 document encoded as gnostic's
 * `openapi.v2.Document` message, as kube-openapi's `ToProtoBinary` produces it (gnostic parses
 * the JSON document and marshals the message).
 *
 * The mapping follows gnostic's compiler: named maps become repeated `Named*` pairs in document
 * order, `type` a TypeItem, `items` an ItemsItem, `additionalProperties` a schema or a boolean,
 * parameters a body parameter or a query/path sub-schema, and every `x-` key a NamedAny whose
 * value is the YAML text of the extension (what `VendorExtensionToMap` reads back). Fields are
 * written in field-number order and proto3 zero values are omitted, as Go's marshaller does.
 * Field numbers are those of gnostic's `openapiv2/OpenAPIv2.proto`.
 *
 * Keys a Swagger 2.0 document does not have are not encoded (gnostic would refuse the document;
 * the v2 document is built without them, see schemas.ts `toStructuralV2`).
 */
import { stringify } from 'yaml';
import { asArray, asRecord } from '../../../k8s/raw-json.ts';

type Json = Record<string, unknown>;

/** A message under construction: fields are appended in the order they are written. */
class Message {
  readonly #parts: Buffer[] = [];

  #tag(no: number, wire: number): void {
    this.#varint(BigInt(no * 8 + wire));
  }

  #varint(v: bigint): void {
    const bytes: number[] = [];
    let x = BigInt.asUintN(64, v);
    do {
      let b = Number(x & 0x7fn);
      x >>= 7n;
      if (x !== 0n) b |= 0x80;
      bytes.push(b);
    } while (x !== 0n);
    this.#parts.push(Buffer.from(bytes));
  }

  string(no: number, v: unknown): this {
    if (typeof v !== 'string' || v === '') return this;
    return this.bytes(no, Buffer.from(v, 'utf8'));
  }

  strings(no: number, v: unknown): this {
    for (const s of asArray(v) ?? []) if (typeof s === 'string') this.bytes(no, Buffer.from(s, 'utf8'));
    return this;
  }

  bool(no: number, v: unknown): this {
    if (v !== true) return this;
    this.#tag(no, 0);
    this.#varint(1n);
    return this;
  }

  int64(no: number, v: unknown): this {
    if (typeof v !== 'number' || v === 0 || !Number.isInteger(v)) return this;
    this.#tag(no, 0);
    this.#varint(BigInt(v));
    return this;
  }

  double(no: number, v: unknown): this {
    if (typeof v !== 'number' || v === 0) return this;
    this.#tag(no, 1);
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v);
    this.#parts.push(b);
    return this;
  }

  message(no: number, m: Message | undefined): this {
    if (m === undefined) return this;
    return this.bytes(no, m.encode());
  }

  bytes(no: number, b: Buffer): this {
    this.#tag(no, 2);
    this.#varint(BigInt(b.length));
    this.#parts.push(b);
    return this;
  }

  encode(): Buffer {
    return Buffer.concat(this.#parts);
  }
}

/** Any {yaml = 2}: the value as YAML text. */
function anyValue(v: unknown): Message {
  return new Message().string(2, stringify(v));
}

/** NamedAny entries of the `x-` keys of an object. */
function vendorExtensions(m: Message, no: number, obj: Json): void {
  for (const [k, v] of Object.entries(obj)) {
    if (k.startsWith('x-')) m.message(no, new Message().string(1, k).message(2, anyValue(v)));
  }
}

function schema(s: Json): Message {
  const m = new Message()
    .string(1, s['$ref'])
    .string(2, s['format'])
    .string(3, s['title'])
    .string(4, s['description']);
  if (s['default'] !== undefined) m.message(5, anyValue(s['default']));
  m.double(6, s['multipleOf']).double(7, s['maximum']).bool(8, s['exclusiveMaximum']).double(9, s['minimum']).bool(10, s['exclusiveMinimum']);
  m.int64(11, s['maxLength']).int64(12, s['minLength']).string(13, s['pattern']).int64(14, s['maxItems']).int64(15, s['minItems']).bool(16, s['uniqueItems']);
  m.int64(17, s['maxProperties']).int64(18, s['minProperties']).strings(19, s['required']);
  for (const e of asArray(s['enum']) ?? []) m.message(20, anyValue(e));
  const additional = s['additionalProperties'];
  if (typeof additional === 'boolean') m.message(21, new Message().bool(2, additional));
  else if (asRecord(additional) !== undefined) m.message(21, new Message().message(1, schema(asRecord(additional) ?? {})));
  if (typeof s['type'] === 'string') m.message(22, new Message().strings(1, [s['type']]));
  else if (Array.isArray(s['type'])) m.message(22, new Message().strings(1, s['type']));
  const items = s['items'];
  if (Array.isArray(items)) m.message(23, items.reduce((acc: Message, i) => acc.message(1, schema(asRecord(i) ?? {})), new Message()));
  else if (asRecord(items) !== undefined) m.message(23, new Message().message(1, schema(asRecord(items) ?? {})));
  for (const a of asArray(s['allOf']) ?? []) m.message(24, schema(asRecord(a) ?? {}));
  const props = asRecord(s['properties']);
  if (props !== undefined) m.message(25, namedSchemas(props));
  m.string(26, s['discriminator']).bool(27, s['readOnly']);
  if (s['example'] !== undefined) m.message(30, anyValue(s['example']));
  vendorExtensions(m, 31, s);
  return m;
}

/** Properties / Definitions {repeated NamedSchema additional_properties = 1}. */
function namedSchemas(map: Json): Message {
  const m = new Message();
  for (const [name, s] of Object.entries(map)) m.message(1, new Message().string(1, name).message(2, schema(asRecord(s) ?? {})));
  return m;
}

/** A non-body parameter's sub-schema (query or path); the path variant has no allowEmptyValue, so its numbers shift by one from `type` on. */
function parameterSubSchema(p: Json, path: boolean): Message {
  const o = path ? -1 : 0;
  const m = new Message().bool(1, p['required']).string(2, p['in']).string(3, p['description']).string(4, p['name']);
  if (!path) m.bool(5, p['allowEmptyValue']);
  m.string(6 + o, p['type']).string(7 + o, p['format']).string(9 + o, p['collectionFormat']);
  if (p['default'] !== undefined) m.message(10 + o, anyValue(p['default']));
  m.bool(20 + o, p['uniqueItems']);
  for (const e of asArray(p['enum']) ?? []) m.message(21 + o, anyValue(e));
  vendorExtensions(m, 23 + o, p);
  return m;
}

/** ParametersItem {Parameter parameter = 1 {body_parameter = 1 | non_body_parameter = 2}}. */
function parameter(p: Json): Message {
  let param: Message;
  if (p['in'] === 'body') {
    const body = new Message().string(1, p['description']).string(2, p['name']).string(3, p['in']).bool(4, p['required']);
    if (asRecord(p['schema']) !== undefined) body.message(5, schema(asRecord(p['schema']) ?? {}));
    vendorExtensions(body, 6, p);
    param = new Message().message(1, body);
  } else {
    // NonBodyParameter: header = 1, form data = 2, query = 3, path = 4.
    const which = p['in'] === 'path' ? 4 : 3;
    param = new Message().message(2, new Message().message(which, parameterSubSchema(p, p['in'] === 'path')));
  }
  return new Message().message(1, param);
}

function operation(op: Json): Message {
  const m = new Message().strings(1, op['tags']).string(2, op['summary']).string(3, op['description']).string(5, op['operationId']);
  m.strings(6, op['produces']).strings(7, op['consumes']);
  for (const p of asArray(op['parameters']) ?? []) m.message(8, parameter(asRecord(p) ?? {}));
  const responses = asRecord(op['responses']);
  if (responses !== undefined) {
    const r = new Message();
    for (const [code, value] of Object.entries(responses)) {
      const v = asRecord(value) ?? {};
      const response = new Message().string(1, v['description']);
      if (asRecord(v['schema']) !== undefined) response.message(2, new Message().message(1, schema(asRecord(v['schema']) ?? {})));
      r.message(1, new Message().string(1, code).message(2, new Message().message(1, response)));
    }
    m.message(9, r);
  }
  m.strings(10, op['schemes']).bool(11, op['deprecated']);
  vendorExtensions(m, 13, op);
  return m;
}

const METHODS: [string, number][] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
];

function pathItem(item: Json): Message {
  const m = new Message().string(1, item['$ref']);
  for (const [method, no] of METHODS) {
    const op = asRecord(item[method]);
    if (op !== undefined) m.message(no, operation(op));
  }
  for (const p of asArray(item['parameters']) ?? []) m.message(9, parameter(asRecord(p) ?? {}));
  vendorExtensions(m, 10, item);
  return m;
}

/** The protobuf encoding of a Swagger 2.0 document. */
export function encodeOpenApiV2(doc: Json): Buffer {
  const m = new Message().string(1, doc['swagger']);
  const info = asRecord(doc['info']);
  if (info !== undefined) {
    const i = new Message().string(1, info['title']).string(2, info['version']).string(3, info['description']);
    vendorExtensions(i, 7, info);
    m.message(2, i);
  }
  m.string(3, doc['host']).string(4, doc['basePath']).strings(5, doc['schemes']).strings(6, doc['consumes']).strings(7, doc['produces']);
  const paths = asRecord(doc['paths']);
  if (paths !== undefined) {
    const p = new Message();
    vendorExtensions(p, 1, paths);
    for (const [path, item] of Object.entries(paths)) if (!path.startsWith('x-')) p.message(2, new Message().string(1, path).message(2, pathItem(asRecord(item) ?? {})));
    m.message(8, p);
  }
  const definitions = asRecord(doc['definitions']);
  if (definitions !== undefined) m.message(9, namedSchemas(definitions));
  vendorExtensions(m, 16, doc);
  return m.encode();
}
