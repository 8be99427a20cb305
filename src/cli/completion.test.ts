/**
 * Shell completion: what `__complete` answers for the words typed so far (sub-commands, flags,
 * the choices of flags and arguments, file names where a value is a file), and the bash and fish
 * scripts driving it in a real bash and fish (fish when the machine has it). zsh is checked by
 * `zsh -n` when the machine has zsh.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { captureIo } from '../testing/cli-io.ts';
import { completeWords, completionScript, DIRECTIVE } from './completion.ts';
import { buildProgram, main } from './main.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const program = buildProgram(captureIo(), () => {});
const complete = (...words: string[]) => completeWords(program, words);

describe('completeWords', () => {
  const OUTPUTS = ['table', 'wide', 'json', 'yaml', 'name', 'jsonpath=', 'jsonpath-file=', 'jsonpath-as-json=', 'custom-columns=', 'custom-columns-file='];
  const cases: [string, string[], string[], number][] = [
    ['sub-commands (the hidden __complete is not one)', [''], ['validate', 'manifests', 'plan', 'simulate', 'cluster', 'manager', 'status', 'demo', 'completion'], DIRECTIVE.noFileComp],
    ['a sub-command by its prefix', ['st'], ['status'], DIRECTIVE.noFileComp],
    ['flags of a sub-command', ['status', '--n'], ['--no-color', '--namespace'], DIRECTIVE.noFileComp],
    [
      'short flags too, and kubectl\'s global flags (those refused or without effect are not offered)',
      ['status', '-'],
      ['--all-namespaces', '-A', '--selector', '-l', '--watch', '-w', '--output', '-o', '--template', '--allow-missing-template-keys', '--no-color', '--kubeconfig', '--context', '--namespace', '-n', '--cluster', '--user', '--server', '-s', '--tls-server-name', '--insecure-skip-tls-verify', '--certificate-authority', '--client-certificate', '--client-key', '--token', '--username', '--password', '--as', '--as-group', '--as-uid', '--request-timeout', '--v', '-v', '--help', '-h'],
      DIRECTIVE.noFileComp,
    ],
    ['the choices of -o: the own formats, then kubectl\'s', ['status', '-o', ''], OUTPUTS, DIRECTIVE.noFileComp],
    ['a format taking a value: no space after it', ['status', '-o', 'jsonpath'], ['jsonpath=', 'jsonpath-file=', 'jsonpath-as-json='], DIRECTIVE.noFileComp | DIRECTIVE.noSpace],
    ['the choices of --output=', ['status', '--output=y'], ['--output=yaml'], DIRECTIVE.noFileComp],
    ['after a flag with its value, more flags', ['status', '-n', 'default', '--w'], ['--watch'], DIRECTIVE.noFileComp],
    ['a global flag before the sub-command takes its value', ['--context', 'prod', 'st'], ['status'], DIRECTIVE.noFileComp],
    ['a file value: the shell completes file names', ['validate', '-f', ''], [], DIRECTIVE.default],
    ['a global file value too, before the sub-command', ['--kubeconfig', ''], [], DIRECTIVE.default],
    ['a directory value', ['manager', '--cert-dir', ''], [], DIRECTIVE.filterDirs],
    ['a value that is neither', ['status', '--as', ''], [], DIRECTIVE.noFileComp],
    ['an argument with choices', ['manifests', ''], ['install', 'crd'], DIRECTIVE.noFileComp],
    ['a file argument', ['simulate', ''], [], DIRECTIVE.default],
    ['no more arguments', ['completion', 'bash', ''], [], DIRECTIVE.noFileComp],
    ['the shells', ['completion', ''], ['bash', 'zsh', 'fish'], DIRECTIVE.noFileComp],
    ['log levels of cluster', ['cluster', '--log-level', 'd'], ['debug'], DIRECTIVE.noFileComp],
  ];
  for (const [name, words, candidates, directive] of cases) {
    test(name, () => assert.deepEqual(complete(...words), { candidates, directive }));
  }

  test('what only the cluster knows is a query carrying the flags typed so far, wherever they are', () => {
    assert.deepEqual(complete('status', 'we'), { candidates: [], directive: DIRECTIVE.noFileComp, query: { what: 'workloadspreads', prefix: 'we', insert: '', flags: {} } });
    assert.deepEqual(complete('--context', 'prod', 'status', '-n', 'k'), { candidates: [], directive: DIRECTIVE.noFileComp, query: { what: 'namespaces', prefix: 'k', insert: '', flags: { context: 'prod' } } });
    assert.deepEqual(complete('status', '--as=me', '--as-group', 'g1', '--as-group=g2', '-nweb', ''), {
      candidates: [],
      directive: DIRECTIVE.noFileComp,
      query: { what: 'workloadspreads', prefix: '', insert: '', flags: { as: 'me', asGroup: ['g1', 'g2'], namespace: 'web' } },
    });
    assert.deepEqual(complete('status', '--namespace=de').query, { what: 'namespaces', prefix: 'de', insert: '--namespace=', flags: {} });
    for (const [flag, what] of [['--context', 'contexts'], ['--cluster', 'clusters'], ['--user', 'users']] as const) assert.equal(complete('status', flag, '').query?.what, what);
    assert.equal(complete('status', 'web', '').query, undefined, 'one NAME only');
  });

  test('__complete prints cobra\'s format: one candidate per line, then :directive', async () => {
    const io = captureIo();
    assert.equal(await main(['__complete', 'status', '-o', 'y'], io), 0);
    assert.equal(io.stdout, 'yaml\n:4\n');
  });
});

describe('completion scripts', () => {
  let dir: string;
  before(() => {
    // `workloadspread` on PATH: the script asks the command it completes.
    dir = mkdtempSync(join(tmpdir(), 'ws-completion-'));
    writeFileSync(join(dir, 'workloadspread'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin/workloadspread.js')}" "$@"\n`);
    chmodSync(join(dir, 'workloadspread'), 0o755);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function bashComplete(words: string[], cwd = dir): string[] {
    const script = completionScript('bash', 'workloadspread');
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const r = spawnSync('bash', ['-c', `${script}\nCOMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; __workloadspread_complete; printf '%s\\n' "\${COMPREPLY[@]}"`], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${dir}${delimiter}${process.env['PATH'] ?? ''}` },
    });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.split('\n').filter((l) => l !== '');
  }

  test('bash: sub-commands, then the choices of -o, then file names where a file is due', () => {
    assert.deepEqual(bashComplete(['workloadspread', 'sta']), ['status']);
    assert.deepEqual(bashComplete(['workloadspread', 'status', '-o', '']), ['table', 'wide', 'json', 'yaml', 'name', 'jsonpath=', 'jsonpath-file=', 'jsonpath-as-json=', 'custom-columns=', 'custom-columns-file=']);
    writeFileSync(join(dir, 'scenario.yaml'), '');
    assert.deepEqual(bashComplete(['workloadspread', 'simulate', 'scen']), ['scenario.yaml']);
  });

  test('the scripts name the executable, and kubectl-workloadspread when called as the plugin', () => {
    assert.match(completionScript('bash', 'kubectl workloadspread'), /complete -F __kubectl_workloadspread_complete kubectl-workloadspread\n$/);
    assert.match(completionScript('zsh', 'workloadspread'), /^#compdef workloadspread\n/);
    assert.match(completionScript('zsh', 'workloadspread'), /compdef _workloadspread workloadspread\n/);
  });

  test('fish: sub-commands, the choices of -o, file names where a file is due', { skip: spawnSync('fish', ['--version']).status !== 0 ? 'no fish on this machine' : false }, () => {
    const script = join(dir, 'workloadspread.fish');
    writeFileSync(script, completionScript('fish', 'workloadspread'));
    writeFileSync(join(dir, 'scenario.yaml'), '');
    const complete = (line: string) => {
      const r = spawnSync('fish', ['--no-config', '-c', `source ${script}; complete -C '${line}'`], { cwd: dir, encoding: 'utf8', env: { ...process.env, PATH: `${dir}${delimiter}${process.env['PATH'] ?? ''}` } });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.split('\n').filter((l) => l !== '').map((l) => l.split('\t')[0]);
    };
    assert.deepEqual(complete('workloadspread sta'), ['status']);
    assert.deepEqual(complete('workloadspread status -o y'), ['yaml']);
    assert.deepEqual(complete('workloadspread simulate scen'), ['scenario.yaml']);
  });

  test('zsh: the script parses', { skip: spawnSync('zsh', ['--version']).status !== 0 ? 'no zsh on this machine' : false }, () => {
    const r = spawnSync('zsh', ['-n'], { input: completionScript('zsh', 'workloadspread'), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });
});
