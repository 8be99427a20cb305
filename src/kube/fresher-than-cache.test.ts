/** `FresherThanCache`: a read newer than the cache is answered until the cache moves, then forgotten. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../k8s/types.ts';
import { FresherThanCache } from './api-reader.ts';

const at = (rv: string, replicas: number): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns', resourceVersion: rv }, spec: { replicas } });

test('a read newer than the cache answers while the cache lags, and is forgotten once the cache moves', () => {
  const fresher = new FresherThanCache();
  const cached = at('5', 0);
  fresher.remember('k', at('9', 30), cached);
  assert.equal((fresher.get('k', cached)?.['spec'] as { replicas: number }).replicas, 30, 'the cache still has version 5');
  assert.equal(fresher.get('k', at('9', 30)), undefined, 'the cache caught up: forgotten');
  assert.equal(fresher.get('k', cached), undefined, 'and stays forgotten');
  fresher.remember('same', at('5', 0), cached);
  assert.equal(fresher.get('same', cached), undefined, 'a read no newer than the cache is not kept');
});

test('bounded: the oldest entry goes first', () => {
  const fresher = new FresherThanCache();
  for (let i = 0; i <= FresherThanCache.MAX; i++) fresher.remember(`k${i}`, at('2', i), at('1', 0));
  assert.equal(fresher.get('k0', at('1', 0)), undefined);
  assert.ok(fresher.get(`k${FresherThanCache.MAX}`, at('1', 0)) !== undefined);
});
