import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { escapeTerminal, escapeTerminalDeep } from './terminal-text.ts';

describe('escapeTerminal: control characters shown, never obeyed', () => {
  test('C0 controls, DEL and C1 controls are written visibly', () => {
    assert.equal(escapeTerminal('a\u001b]0;pwned\u0007b'), 'a\\x1b]0;pwned\\x07b', 'an OSC sequence that would set the window title');
    assert.equal(escapeTerminal('\u001b[2J\u001b[H'), '\\x1b[2J\\x1b[H', 'clear screen, cursor home');
    assert.equal(escapeTerminal('tab\there\nnew\rline'), 'tab\\there\\nnew\\rline');
    assert.equal(escapeTerminal('\u0000\u007f'), '\\x00\\x7f');
    assert.equal(escapeTerminal('\u009b31m\u0085'), '\\u009b31m\\u0085', 'C1: the 8-bit CSI and NEL');
  });
  test('everything printable is left alone', () => {
    for (const s of ['zone-a', 'ünïcødé', '日本', '✓ ✗ → …', '😀', 'back\\slash', ' ']) assert.equal(escapeTerminal(s), s);
  });
  test('idempotent: escaping twice changes nothing more', () => {
    const once = escapeTerminal('\u001b[31mred\u0007');
    assert.equal(escapeTerminal(once), once);
  });
  test('escapeTerminalDeep: every string of a structure, keys included; other values kept', () => {
    const got = escapeTerminalDeep({ name: 'x\u001b', n: 3, ok: true, none: null, list: ['\u0007', 1], nested: { ['k\u0007']: 'v\r' } });
    assert.deepEqual(got, { name: 'x\\x1b', n: 3, ok: true, none: null, list: ['\\x07', 1], nested: { 'k\\x07': 'v\\r' } });
  });
});
