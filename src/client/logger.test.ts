import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryLogger, silentLogger, withFields, type Logger, type LogLevelName } from './logger.ts';

describe('withFields', () => {
  test('merges fixed fields under the line\'s own; nests', () => {
    const mem = memoryLogger();
    const log = withFields(withFields(mem, { logger: 'webhook', a: 1 }), { a: 2, b: 3 });
    log.info({ b: 4, c: 5 }, 'hello');
    assert.deepEqual(mem.lines, [{ level: 'info', message: 'hello', fields: { logger: 'webhook', a: 2, b: 4, c: 5 } }]);
  });

  test('a level the underlying logger does not write is not merged or passed on, however deep the nesting', () => {
    const calls: LogLevelName[] = [];
    const base: Logger = {
      debug: () => calls.push('debug'),
      info: () => calls.push('info'),
      warn: () => calls.push('warn'),
      error: () => calls.push('error'),
      isLevelEnabled: (level) => level !== 'debug',
    };
    const log = withFields(withFields(base, { x: 1 }), { y: 2 });
    let merged = 0;
    const fields = new Proxy({ z: 3 }, { ownKeys: (t) => (merged++, Reflect.ownKeys(t)) });
    log.debug(fields, 'not written');
    log.info({ z: 3 }, 'written');
    assert.deepEqual(calls, ['info']);
    assert.equal(merged, 0, 'the debug line\'s fields were never spread');
    assert.equal(log.isLevelEnabled?.('debug'), false);
  });

  test('over the silent logger it is the silent logger', () => {
    assert.equal(withFields(silentLogger, { a: 1 }), silentLogger);
  });
});
