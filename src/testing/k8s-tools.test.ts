/**
 * The test tools: the zip reader (stored and deflated entries, modes, CRC-32, damaged archives),
 * unpacking by several processes at once into one cache, and the packaged binaries themselves
 * (helm 3.17, kubectl 1.32).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { crc32, k8sTools, readZip, unpackTools } from './k8s-tools.ts';
import { helm, kubectl } from './helm.ts';

interface Entry {
  name: string;
  data?: Buffer;
  deflate?: boolean;
  mode?: number;
}

/** A zip archive as zip writers lay it out: local headers and data, central directory, end record. */
function makeZip(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = e.data ?? Buffer.alloc(0);
    const stored = e.deflate === true ? deflateRawSync(data) : data;
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(e.deflate === true ? 8 : 0, 8);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(stored.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(e.deflate === true ? 8 : 0, 10);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, stored);
    centrals.push(central, name);
    offset += 30 + name.length + stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

describe('readZip', () => {
  test('CRC-32 is the standard one (check value of "123456789")', () => {
    assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  });

  test('stored and deflated entries come back whole with their modes; directories and unwanted entries are skipped', () => {
    const big = Buffer.from('kubectl '.repeat(10_000));
    const zip = makeZip([
      { name: 'bin/', mode: 0o40755 },
      { name: 'bin/tool', data: big, deflate: true, mode: 0o100755 },
      { name: 'README', data: Buffer.from('hello') },
      { name: 'other', data: Buffer.from('x') },
    ]);
    const entries = readZip(zip, (n) => n !== 'other');
    assert.deepEqual(entries.map((e) => [e.name, e.mode, e.data.length]), [['bin/tool', 0o755, big.length], ['README', 0o644, 5]]);
    assert.ok(entries[0]?.data.equals(big));
  });

  test('a damaged archive is refused, naming the entry', () => {
    const zip = makeZip([{ name: 'data', data: Buffer.from('payload') }]);
    zip[30 + 'data'.length] = 'P'.charCodeAt(0);
    assert.throws(() => readZip(zip), /zip entry data: CRC-32 mismatch/);
    assert.throws(() => readZip(Buffer.from('not a zip at all, just some text')), /not a zip archive/);
  });
});

describe('unpackTools', () => {
  test('three processes unpacking into one cache at once end with one complete copy and nothing left over', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ws-k8s-tools-'));
    try {
      const zipPath = join(dir, 'layer.zip');
      writeFileSync(zipPath, makeZip([
        { name: 'helm/', mode: 0o40755 },
        { name: 'helm/helm', data: Buffer.from('#!/bin/sh\necho helm\n'), deflate: true, mode: 0o100755 },
        { name: 'kubectl/kubectl', data: Buffer.from('#!/bin/sh\necho kubectl\n'), mode: 0o100755 },
      ]));
      const root = join(dir, 'cache');
      const module = new URL('./k8s-tools.ts', import.meta.url).pathname;
      const script = `import { unpackTools } from ${JSON.stringify(module)}; console.log(JSON.stringify(unpackTools(${JSON.stringify(zipPath)}, ${JSON.stringify(root)}, '9.9.9')));`;
      const run = () =>
        new Promise<string>((resolve, reject) => {
          execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], (err, stdout, stderr) => (err === null ? resolve(stdout) : reject(new Error(stderr))));
        });
      const outputs = await Promise.all([run(), run(), run()]);
      const want = { kubectl: join(root, '9.9.9', 'kubectl'), helm: join(root, '9.9.9', 'helm') };
      for (const out of outputs) assert.deepEqual(JSON.parse(out), want);
      assert.deepEqual(readdirSync(root), ['9.9.9']);
      assert.deepEqual(readdirSync(join(root, '9.9.9')).sort(), ['complete', 'helm', 'kubectl']);
      assert.equal(readFileSync(want.helm, 'utf8'), '#!/bin/sh\necho helm\n');
      assert.equal(statSync(want.kubectl).mode & 0o777, 0o755);
      // Again: the complete copy is used as it is.
      assert.deepEqual(unpackTools(zipPath, root, '9.9.9'), want);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the packaged tools', () => {
  test('helm 3.17 and kubectl 1.32, whatever PATH has', async () => {
    const { helm: helmPath, kubectl: kubectlPath } = k8sTools();
    assert.match(helmPath, /node_modules\/\.cache\/workloadspread-k8s-tools\//);
    assert.match(kubectlPath, /node_modules\/\.cache\/workloadspread-k8s-tools\//);
    const h = await helm(['version', '--short']);
    assert.equal(h.code, 0, h.stderr);
    assert.match(h.stdout, /^v3\.17\.\d+\+g[0-9a-f]+\n$/);
    const k = await kubectl(['version', '--client', '-o', 'json']);
    assert.equal(k.code, 0, k.stderr);
    const version = (JSON.parse(k.stdout) as { clientVersion: { major: string; minor: string } }).clientVersion;
    assert.deepEqual([version.major, version.minor], ['1', '32']);
  });
});
