import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  EMPTY_WHITELIST,
  isWhitelistedOwner,
  isWhitelistedTarget,
  parseWhitelist,
  replicasPathFor,
  replicasPathForGroupKind,
  type Whitelist,
} from './whitelist.ts';

/** The reference's e2e whitelist (Agones GameServerSet with its GameServer sub-resource), keys as the e2e config spells them. */
const E2E = JSON.stringify({
  workloads: [
    {
      Group: 'game.kruise.io',
      Version: 'v1alpha1',
      Kind: 'GameServerSet',
      subResources: [{ Group: 'game.kruise.io', Version: 'v1alpha1', Kind: 'GameServer' }],
      ReplicasPath: 'spec.replicas',
    },
  ],
});

function parsed(json: string): Whitelist {
  const result = parseWhitelist(json);
  assert.ok(result.ok, result.ok ? '' : result.error);
  return result.whitelist;
}

describe('parseWhitelist', () => {
  test('decodes the e2e config, keys case-insensitively', () => {
    assert.deepEqual(parsed(E2E), {
      workloads: [
        {
          group: 'game.kruise.io',
          version: 'v1alpha1',
          kind: 'GameServerSet',
          subResources: [{ group: 'game.kruise.io', version: 'v1alpha1', kind: 'GameServer' }],
          replicasPath: 'spec.replicas',
        },
      ],
    });
  });
  test('lower-case and upper-case keys are the same field; the later one wins', () => {
    const wl = parsed('{"Workloads":[{"group":"a","GROUP":"b","kind":"K","replicaspath":"x.y"}]}');
    assert.equal(wl.workloads[0]?.group, 'b');
    assert.equal(wl.workloads[0]?.replicasPath, 'x.y');
    assert.deepEqual(wl.workloads[0]?.subResources, []);
  });
  test('unknown keys are ignored and nulls leave zero values', () => {
    assert.deepEqual(parsed('{"workloads":[{"Group":null,"Kind":"K","extra":1}],"other":true}'), {
      workloads: [{ group: '', version: '', kind: 'K', subResources: [], replicasPath: '' }],
    });
    assert.deepEqual(parsed('null'), { workloads: [] });
    assert.deepEqual(parsed('{}'), { workloads: [] });
  });
  const errors: [string, string, string][] = [
    ['empty input', '', 'unexpected end of JSON input'],
    ['wrong type for a string field', '{"workloads":[{"Group":1}]}', 'json: cannot unmarshal number into Go struct field GroupVersionKind.workloads.Group of type string'],
    ['wrong type for the list', '{"workloads":{}}', 'json: cannot unmarshal object into Go struct field WSCustomWorkloadWhiteList.workloads of type []configuration.CustomWorkload'],
    ['wrong type at the top', '[]', 'json: cannot unmarshal array into Go value of type configuration.WSCustomWorkloadWhiteList'],
  ];
  for (const [name, json, want] of errors) {
    test(`error: ${name}`, () => assert.deepEqual(parseWhitelist(json), { ok: false, error: want }));
  }
  test('malformed JSON is an error, never a throw', () => {
    const result = parseWhitelist('{"workloads":');
    assert.equal(result.ok, false);
  });
  test('never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (input) => {
        const result = parseWhitelist(input);
        assert.equal(typeof result.ok, 'boolean');
      }),
    );
  });
});

describe('lookups', () => {
  const wl = parsed(E2E);
  test('a whitelisted workload is a permitted target; its sub-resource is not (V8)', () => {
    assert.equal(isWhitelistedTarget(wl, 'game.kruise.io', 'GameServerSet'), true);
    assert.equal(isWhitelistedTarget(wl, 'game.kruise.io', 'GameServer'), false);
    assert.equal(isWhitelistedTarget(wl, 'other.io', 'GameServerSet'), false);
    assert.equal(isWhitelistedTarget(EMPTY_WHITELIST, 'game.kruise.io', 'GameServerSet'), false);
  });
  test('admission accepts owners that are workloads or sub-resources (§2.1 step 7)', () => {
    assert.equal(isWhitelistedOwner(wl, 'game.kruise.io', 'GameServerSet'), true);
    assert.equal(isWhitelistedOwner(wl, 'game.kruise.io', 'GameServer'), true);
    assert.equal(isWhitelistedOwner(wl, 'apps', 'GameServer'), false);
  });
  test('the controller needs group AND version to match (§5.2)', () => {
    assert.equal(replicasPathFor(wl, 'game.kruise.io', 'v1alpha1', 'GameServerSet'), 'spec.replicas');
    assert.equal(replicasPathFor(wl, 'game.kruise.io', 'v1beta1', 'GameServerSet'), undefined);
  });
  test('admission compares group+kind only (§5.1)', () => {
    assert.equal(replicasPathForGroupKind(wl, 'game.kruise.io', 'GameServerSet'), 'spec.replicas');
    assert.equal(replicasPathForGroupKind(wl, 'game.kruise.io', 'GameServer'), undefined);
  });
});
