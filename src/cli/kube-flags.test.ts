/**
 * kubectl's global flags as the plugin parses them: moved after the sub-command wherever they were
 * written, pflag's spellings (`-o=json`, `--flag=false`) turned into commander's, values read into
 * connection overrides, and the refusals that name the flag. The `-v` request log's format.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { clusterFlags, normalizeArgv, parseRequestTimeout } from './kube-flags.ts';
import { requestLog } from './request-log.ts';

describe('normalizeArgv', () => {
  const cases: [string, string[], string[]][] = [
    ['global flags before the sub-command move after it', ['--context', 'prod', '-n', 'web', 'status', 'x'], ['status', '--context', 'prod', '-n', 'web', 'x']],
    ['inline values move too', ['--namespace=web', '-sHOST', 'status'], ['status', '--namespace=web', '-sHOST']],
    ['program flags stay where they are', ['--version'], ['--version']],
    ['shorthand with =: -o=json, -n=web, -v=6', ['status', '-o=json', '-n=web', '-v=6'], ['status', '-o', 'json', '-n', 'web', '-v', '6']],
    ['booleans written =true/=false: the flag, or nothing (false is the default)', ['status', '--insecure-skip-tls-verify=true', '--watch=false', '-A=true'], ['status', '--insecure-skip-tls-verify', '-A']],
    ['a default-true boolean written bare keeps the next word for the command', ['status', '--allow-missing-template-keys', 'web'], ['status', '--allow-missing-template-keys=true', 'web']],
    ['a flag value that looks like a sub-command is still its value', ['--context', 'status', 'status'], ['status', '--context', 'status']],
    ['nothing after -- is touched', ['status', '--', '-o=json'], ['status', '--', '-o=json']],
    ['other commands\' own flags are left alone', ['manager', '--leader-elect=true'], ['manager', '--leader-elect=true']],
  ];
  for (const [name, argv, want] of cases) test(name, () => assert.deepEqual(normalizeArgv(argv), want));

  test('a boolean with a value that is not one is a usage error', () => {
    assert.throws(() => normalizeArgv(['status', '--insecure-skip-tls-verify=maybe']), /--insecure-skip-tls-verify takes true or false, got "maybe"/);
  });
});

describe('clusterFlags', () => {
  test('values become overrides, a timeout and a log level', () => {
    const f = clusterFlags({ context: 'c', namespace: 'n', server: 'https://h', token: 't', as: 'me', asGroup: ['a', 'b'], asUid: 'u', insecureSkipTlsVerify: true, requestTimeout: '1m30s', v: '7', kubeconfig: '/k' });
    assert.deepEqual(f, {
      kubeconfig: '/k',
      overrides: { context: 'c', namespace: 'n', server: 'https://h', insecureSkipTlsVerify: true, token: 't', impersonateUser: 'me', impersonateUid: 'u', impersonateGroups: ['a', 'b'] },
      requestTimeoutMs: 90_000,
      verbosity: 7,
    });
  });

  test('refusals name the flag', () => {
    assert.throws(() => clusterFlags({ matchServerVersion: true }), /--match-server-version is not supported/);
    assert.throws(() => clusterFlags({ vmodule: 'x=2' }), /--vmodule is not supported/);
    assert.throws(() => clusterFlags({ asUid: 'u' }), /need --as/);
    assert.throws(() => clusterFlags({ server: 'not a url' }), /--server must be an http\(s\) URL/);
  });

  test('--request-timeout: kubectl\'s syntax', () => {
    assert.deepEqual(['0', '5', '500ms', '2m', '1h', '1.5s'].map(parseRequestTimeout), [0, 5_000, 500, 120_000, 3_600_000, 1_500]);
    for (const bad of ['-1', 'soon', '5 s', '']) assert.throws(() => parseRequestTimeout(bad), /--request-timeout must be/);
  });
});

describe('-v request log', () => {
  const clock = new VirtualClock(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
  function lines(verbosity: number): string[] {
    const out: string[] = [];
    const trace = requestLog(verbosity, clock, (t) => out.push(t), 42);
    trace?.request({ method: 'GET', url: 'https://h/api', headers: { Authorization: 'Bearer secret', 'Impersonate-Group': ['a', 'b'] } });
    trace?.response({ method: 'GET', url: 'https://h/api', status: 200, statusText: 'OK', headers: { 'content-type': 'application/json' }, ms: 3 });
    trace?.responseBody({ method: 'GET', url: 'https://h/api', status: 200, text: 'x'.repeat(2000) });
    return out.map((l) => l.replace(/^I\d{4} [\d:.]+ +42 /, ''));
  }

  test('below 6: nothing; 6: one line per request', () => {
    assert.deepEqual(lines(5), []);
    assert.deepEqual(lines(6), ['request.go] GET https://h/api 200 OK in 3 milliseconds\n']);
  });

  test('7: request headers, the credential masked, each value on its line; 8: response headers and the body cut at 1 KiB', () => {
    const seven = lines(7);
    assert.deepEqual(seven, ['request.go] GET https://h/api\n', 'request.go] Request Headers:\n', 'request.go]     Authorization: Bearer <masked>\n', 'request.go]     Impersonate-Group: a\n', 'request.go]     Impersonate-Group: b\n', 'request.go] Response Status: 200 OK in 3 milliseconds\n']);
    const eight = lines(8);
    assert.ok(eight.includes('request.go]     content-type: application/json\n'));
    assert.ok(eight.at(-1)?.endsWith(`${'x'.repeat(1024)} [truncated 976 chars]\n`));
    assert.ok(lines(9)[0]?.startsWith(`request.go] curl -v -XGET -H "Authorization: Bearer <masked>"`));
    assert.ok(lines(10).at(-1)?.endsWith(`${'x'.repeat(2000)}\n`));
  });
});
