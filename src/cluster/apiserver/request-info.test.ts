/**
 * Request routing: method + path + query → verb, group, version, namespace,
 * resource, name, subresource (k8s.io/apiserver RequestInfoFactory rules).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from './request-info.ts';

const cases: [string, string, string, string | Record<string, string>][] = [
  ['GET', '/api/v1/namespaces/ns/pods', '', { verb: 'list', group: '', version: 'v1', namespace: 'ns', resource: 'pods', name: '', subresource: '' }],
  ['GET', '/api/v1/pods', '', { verb: 'list', namespace: '', resource: 'pods' }],
  ['GET', '/api/v1/namespaces/ns/pods', 'watch=true', { verb: 'watch', resource: 'pods' }],
  ['GET', '/api/v1/watch/namespaces/ns/pods', '', { verb: 'watch', namespace: 'ns', resource: 'pods' }],
  ['GET', '/api/v1/namespaces/ns/pods/p', '', { verb: 'get', name: 'p' }],
  ['GET', '/api/v1/namespaces/ns/pods/p/status', '', { verb: 'get', name: 'p', subresource: 'status' }],
  ['POST', '/api/v1/namespaces/ns/pods/p/eviction', '', { verb: 'create', subresource: 'eviction' }],
  ['PUT', '/apis/apps/v1/namespaces/ns/deployments/d/scale', '', { verb: 'update', group: 'apps', version: 'v1', resource: 'deployments', name: 'd', subresource: 'scale' }],
  ['PATCH', '/apis/apps/v1/namespaces/ns/deployments/d', '', { verb: 'patch', name: 'd' }],
  ['DELETE', '/apis/apps/v1/namespaces/ns/deployments/d', '', { verb: 'delete' }],
  ['DELETE', '/apis/apps/v1/namespaces/ns/deployments', '', { verb: 'deletecollection' }],
  ['GET', '/api/v1/namespaces/ns', '', { verb: 'get', namespace: 'ns', resource: 'namespaces', name: 'ns', subresource: '' }],
  ['PUT', '/api/v1/namespaces/ns/finalize', '', { verb: 'update', resource: 'namespaces', name: 'ns', subresource: 'finalize' }],
  ['GET', '/api/v1/namespaces', '', { verb: 'list', namespace: '', resource: 'namespaces' }],
  ['GET', '/api/v1/nodes/n1', '', { verb: 'get', resource: 'nodes', name: 'n1' }],
  ['GET', '/apis/example.com/v1/widgets/w%2Fx', '', { name: 'w/x' }],
  ['GET', '/api', '', 'nonResource'],
  ['GET', '/api/v1', '', 'nonResource'],
  ['GET', '/apis/apps/v1', '', 'nonResource'],
  ['GET', '/version', '', 'nonResource'],
  ['GET', '/api/v1/pods/%E0%A4%A', '', 'nonResource'],
];

for (const [method, path, query, expected] of cases) {
  test(`${method} ${path}${query === '' ? '' : `?${query}`}`, () => {
    const info = parseRequestInfo(method, path, new URLSearchParams(query));
    if (expected === 'nonResource') {
      assert.equal(info.kind, 'nonResource');
      return;
    }
    assert.equal(info.kind, 'resource');
    for (const [key, value] of Object.entries(expected)) assert.equal((info as unknown as Record<string, string>)[key], value, key);
  });
}
