/**
 * HTTP plumbing of the API server: writing objects and Status answers (with
 * `Warning` and `Retry-After` headers), and the
 * query options every write shares (`dryRun`, `fieldManager`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { stringify as toYaml } from 'yaml';
import { invalid as invalidField, notSupported, tooLong, type FieldError } from '../../k8s/field-errors.ts';
import { isPrintable, MAX_MANAGER_LENGTH } from './fields/managed-fields.ts';
import { badRequest, fail, httpCodeOf, invalid, ok, type Result, type Status } from './errors.ts';

/** Quotes a warning the way `Warning: 299 - "..."` headers carry it. */
function warningHeader(text: string): string {
  // Header values must be printable ASCII: anything else travels as a JSON \u escape.
  const quoted = JSON.stringify(text.replace(/[\r\n]+/g, ' ')).replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `299 - ${quoted}`;
}

export function wantsYaml(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  return /(^|,)\s*application\/yaml/.test(accept) && !/application\/json/.test(accept);
}

/** Sends a JSON (or, when the client asks for it, YAML) body. */
export function sendBody(req: IncomingMessage, res: ServerResponse, code: number, body: string, warnings: readonly string[] = [], contentType = 'application/json'): void {
  if (res.headersSent || res.writableEnded) return;
  if (warnings.length > 0) res.setHeader('Warning', warnings.map(warningHeader));
  let text = body;
  let type = contentType;
  if (contentType === 'application/json' && wantsYaml(req)) {
    try {
      text = toYaml(JSON.parse(body) as unknown);
      type = 'application/yaml';
    } catch {
      // Keep JSON if the body is not JSON after all.
    }
  }
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(text) });
  res.end(req.method === 'HEAD' ? undefined : text);
}

export function sendStatus(req: IncomingMessage, res: ServerResponse, status: Status, warnings: readonly string[] = []): void {
  const retry = status.details?.retryAfterSeconds;
  if (retry !== undefined && retry > 0 && !res.headersSent) res.setHeader('Retry-After', String(retry));
  sendBody(req, res, httpCodeOf(status), JSON.stringify(status), warnings);
}

export function sendText(res: ServerResponse, code: number, text: string): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export interface WriteQuery {
  dryRun: boolean;
  fieldManager?: string;
  force?: boolean;
  /** `fieldValidation`; upstream's default for requests is Warn. */
  fieldValidation: 'Ignore' | 'Warn' | 'Strict';
}

/** `dryRun` (only `All`), `fieldManager`, `force`: CreateOptions/UpdateOptions/PatchOptions validation. */
export function writeQuery(query: URLSearchParams, optionsKind: string): Result<WriteQuery> {
  const dryRun = query.getAll('dryRun');
  for (const v of dryRun) {
    if (v !== 'All') return fail(invalid(optionsKind, 'meta.k8s.io', '', [notSupported('dryRun', v, ['All'])]));
  }
  const validation = query.get('fieldValidation') ?? '';
  if (validation !== '' && !['Ignore', 'Warn', 'Strict'].includes(validation)) {
    return fail(badRequest(`fieldValidation parameter unsupported: ${validation}, supported values: Ignore, Warn, Strict`));
  }
  const out: WriteQuery = { dryRun: dryRun.length > 0, fieldValidation: validation === '' ? 'Warn' : (validation as WriteQuery['fieldValidation']) };
  const manager = query.get('fieldManager');
  if (manager !== null && manager !== '') {
    const errors = validateFieldManager(manager);
    if (errors.length > 0) return fail(invalid(optionsKind, 'meta.k8s.io', '', errors));
    out.fieldManager = manager;
  }
  const force = query.get('force');
  if (force !== null) out.force = force === 'true';
  return ok(out);
}

/** ValidateFieldManager: at most 128 bytes, printable characters only. */
function validateFieldManager(manager: string): FieldError[] {
  const errors: FieldError[] = [];
  if (Buffer.byteLength(manager) > MAX_MANAGER_LENGTH) errors.push(tooLong('fieldManager', manager, MAX_MANAGER_LENGTH));
  let position = 0;
  for (const ch of manager) {
    if (!isPrintable(ch)) {
      const code = `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
      errors.push(invalidField('fieldManager', manager, `invalid character ${code} (at position ${position})`));
    }
    position += Buffer.byteLength(ch);
  }
  return errors;
}

/** A non-negative integer query parameter; undefined when absent, 'invalid' when malformed. */
export function intParam(query: URLSearchParams, name: string): number | undefined | 'invalid' {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  return /^[0-9]+$/.test(v) ? Number(v) : 'invalid';
}
