import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderTable } from './table.ts';

test('renderTable (plan and other plain tables): aligned columns; control characters in cells are shown escaped, never written raw', () => {
  const out = renderTable(['SUBSET', 'PODS'], [['zone-a\u001b]0;pwned\u0007', '2'], ['b', '10']]);
  assert.equal(out, 'SUBSET                  PODS\nzone-a\\x1b]0;pwned\\x07  2\nb                       10\n');
});
