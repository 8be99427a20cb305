/**
 * The error predicates (reason first, code when the reason is unknown, as
 * apimachinery's errors package), Status synthesis for non-Status bodies,
 * retryability and Retry-After.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ApiError,
  apiErrorFromStatus,
  isAborted,
  isAlreadyExists,
  isBadRequest,
  isConflict,
  isForbidden,
  isGone,
  isInternalError,
  isInvalid,
  isNotFound,
  isRetryable,
  isServerTimeout,
  isServiceUnavailable,
  isTimeout,
  isTooManyRequests,
  isUnauthorized,
  NetworkError,
  retryAfterMs,
  statusFromBody,
} from './errors.ts';

const req = { method: 'GET', path: '/api/v1/pods' };
const api = (code: number, reason?: string, extra: Record<string, unknown> = {}) => new ApiError(code, { kind: 'Status', code, ...(reason !== undefined ? { reason } : {}), ...extra }, req);

describe('error predicates', () => {
  const predicates = { isNotFound, isAlreadyExists, isConflict, isGone, isInvalid, isBadRequest, isTooManyRequests, isForbidden, isUnauthorized, isServerTimeout, isServiceUnavailable, isInternalError };
  const cases: [string, ApiError, keyof typeof predicates][] = [
    ['404 NotFound', api(404, 'NotFound'), 'isNotFound'],
    ['404 without a reason', api(404), 'isNotFound'],
    ['409 AlreadyExists', api(409, 'AlreadyExists'), 'isAlreadyExists'],
    ['409 Conflict', api(409, 'Conflict'), 'isConflict'],
    ['409 without a reason is a conflict', api(409), 'isConflict'],
    ['410 Expired', api(410, 'Expired'), 'isGone'],
    ['410 Gone', api(410, 'Gone'), 'isGone'],
    ['422 Invalid', api(422, 'Invalid'), 'isInvalid'],
    ['400 BadRequest', api(400, 'BadRequest'), 'isBadRequest'],
    ['429 TooManyRequests', api(429, 'TooManyRequests'), 'isTooManyRequests'],
    ['403 Forbidden', api(403, 'Forbidden'), 'isForbidden'],
    ['401 Unauthorized', api(401, 'Unauthorized'), 'isUnauthorized'],
    ['504 Timeout', api(504, 'Timeout'), 'isServerTimeout'],
    ['503 ServiceUnavailable', api(503, 'ServiceUnavailable'), 'isServiceUnavailable'],
    ['500 InternalError', api(500, 'InternalError'), 'isInternalError'],
  ];
  for (const [name, err, expected] of cases) {
    test(`${name} → ${expected} and nothing else`, () => {
      for (const [pname, p] of Object.entries(predicates)) {
        assert.equal(p(err), pname === expected, `${pname}(${name})`);
      }
    });
  }

  test('a known reason wins over the code', () => {
    assert.equal(isNotFound(api(404, 'Conflict')), false);
    assert.equal(isConflict(api(404, 'Conflict')), true);
  });

  test('non-ApiError values are never matched', () => {
    for (const v of [undefined, null, 'NotFound', { code: 404, reason: 'NotFound' }, new Error('404')]) assert.equal(isNotFound(v), false);
  });
});

describe('Status of an error answer', () => {
  test('a Status body is kept as is', () => {
    const body = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'pods "x" not found', details: { name: 'x', kind: 'pods' } };
    assert.deepEqual(statusFromBody(404, JSON.stringify(body)), body);
  });

  test('anything else becomes a Status with the reason of the code and the text as message', () => {
    assert.deepEqual(statusFromBody(503, '<html>down</html>'), { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 503, reason: 'ServiceUnavailable', message: '<html>down</html>' });
    assert.equal(statusFromBody(418, '').message, 'the server responded with status 418');
    assert.equal(statusFromBody(418, '').reason, '');
    assert.equal(statusFromBody(500, '{"kind":"Pod"}').reason, 'InternalError');
    assert.equal(statusFromBody(500, 'x'.repeat(5000)).message?.length, 1024);
  });

  test('an in-stream ERROR without a code is a 500', () => {
    assert.equal(apiErrorFromStatus({ message: 'boom' }, req).code, 500);
    assert.equal(apiErrorFromStatus({ code: 410, reason: 'Expired' }, req).code, 410);
  });

  test('the message names the request and the reason', () => {
    assert.equal(api(404, 'NotFound', { message: 'pods "x" not found' }).message, 'GET /api/v1/pods: 404 NotFound: pods "x" not found');
  });
});

describe('retrying', () => {
  const cases: [string, unknown, boolean][] = [
    ['429', api(429, 'TooManyRequests'), true],
    ['500', api(500, 'InternalError'), true],
    ['503', api(503), true],
    ['409 conflict (needs a re-read, not a retry)', api(409, 'Conflict'), false],
    ['404', api(404, 'NotFound'), false],
    ['422', api(422, 'Invalid'), false],
    ['connection reset', new NetworkError('connection', 'ECONNRESET', req), true],
    ['our timeout', new NetworkError('timeout', 'no answer', req), true],
    ['non-JSON 200', new NetworkError('protocol', 'bad body', req), true],
    ['the caller aborted', new NetworkError('aborted', 'aborted', req), false],
    ['a plain Error', new Error('x'), false],
  ];
  for (const [name, err, expected] of cases) test(`${name}: retryable=${expected}`, () => assert.equal(isRetryable(err), expected));

  test('Retry-After from the header wins over details.retryAfterSeconds', () => {
    assert.equal(retryAfterMs(new ApiError(429, { details: { retryAfterSeconds: 3 } }, req)), 3000);
    assert.equal(retryAfterMs(new ApiError(429, { details: { retryAfterSeconds: 3 } }, req, 7)), 7000);
    assert.equal(retryAfterMs(api(500)), undefined);
    assert.equal(retryAfterMs(new Error('x')), undefined);
  });

  test('timeouts and aborts are told apart', () => {
    assert.equal(isTimeout(new NetworkError('timeout', 'x', req)), true);
    assert.equal(isAborted(new NetworkError('timeout', 'x', req)), false);
    assert.equal(isAborted(new NetworkError('aborted', 'x', req)), true);
  });
});
