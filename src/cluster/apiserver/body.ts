/**
 * Request bodies: read with the API server's 3 MiB limit (413 beyond it,
 * without reading the rest: a Content-Length above it is refused unread, a
 * chunked body is cut at it, and server.ts closes a connection whose body was
 * left unread — src/client/request-body.ts), and decoded by content type: JSON (also every
 * `+json` patch type), YAML (`application/yaml`, `application/apply-patch+yaml`)
 * and, where the caller accepts it (built-in kinds), Kubernetes protobuf
 * (protobuf/decode.ts). CBOR is not spoken (415).
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { readBodyWithin } from '../../client/request-body.ts';
import { badRequest, fail, ok, requestEntityTooLarge, unsupportedMediaType, type Result } from './errors.ts';
import { decodeKubernetesProtobuf, PROTOBUF_MEDIA_TYPE } from './protobuf/decode.ts';

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** Reads the whole body; answers 413 as soon as it exceeds `limit` bytes. */
export async function readBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<Result<Buffer>> {
  const read = await readBodyWithin(req, limit);
  if (read.ok) return ok(read.body);
  return fail(read.tooLarge ? requestEntityTooLarge(limit) : badRequest(read.error));
}

/** The media type of a Content-Type header, lowercased, without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function summarize(text: string): string {
  return text.length > 30 ? `${text.slice(0, 30)}...` : text;
}

export const BODY_MEDIA_TYPES = ['application/json', 'application/yaml'];
/** What built-in kinds also accept: client-go's typed clients send protobuf. */
export const BUILTIN_BODY_MEDIA_TYPES = [...BODY_MEDIA_TYPES, PROTOBUF_MEDIA_TYPE];

/**
 * Decodes a body of `contentType`. `expectedKind` shapes the decode error as
 * upstream's "the object provided is unrecognized (must be of type X)".
 */
export function decodeBody(buffer: Buffer, contentType: string, expectedKind: string, accepted: readonly string[] = BODY_MEDIA_TYPES): Result<unknown> {
  const type = contentType === '' ? 'application/json' : contentType;
  if (type === PROTOBUF_MEDIA_TYPE && accepted.includes(PROTOBUF_MEDIA_TYPE)) {
    const decoded = decodeKubernetesProtobuf(buffer);
    return decoded.ok ? ok(decoded.value) : fail(badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): ${decoded.error}`));
  }
  const text = buffer.toString('utf8');
  const isYaml = type === 'application/yaml' || type === 'application/apply-patch+yaml' || type === 'text/yaml';
  const isJson = type === 'application/json' || type.endsWith('+json');
  if (!isYaml && !isJson) return fail(unsupportedMediaType(accepted));
  if (text.trim() === '') {
    return fail(badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): couldn't get version/kind; json parse error: unexpected end of JSON input ()`));
  }
  if (isJson) {
    try {
      return ok(JSON.parse(text) as unknown);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return fail(badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): couldn't get version/kind; json parse error: ${why} (${summarize(text)})`));
    }
  }
  try {
    return ok(parseYaml(text, { version: '1.1', uniqueKeys: false }) as unknown);
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
    return fail(badRequest(`error decoding YAML: ${why}`));
  }
}
