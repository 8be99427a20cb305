// Starts one of the command's entry points (src/cli/*-entry.ts / dist/cli/*-entry.js).
//
// The published package holds no src/ (package.json "files"): it runs the JavaScript that
// `npm run build` compiled into dist/ (built by `prepack`).
//
// A source checkout (src/ is there) needs no build step and never runs a stale build: the entry
// points are compiled with esbuild (tsx's own compiler, found through tsx) into
// .cache/launch/<hash>/, one chunk per command so a command loads only what it uses, and reused
// while every compiled source file keeps its size and modification time (checked in a few
// milliseconds); a changed file recompiles them (about a second). Starting through tsx instead
// costs half a second or more on every run (its loader thread and per-file hooks). Whatever
// goes wrong with the compiled copy (no esbuild, a read-only checkout, a syntax error) falls
// back to tsx, which reports errors as before; WORKLOADSPREAD_LAUNCH=tsx always uses tsx.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ENTRIES = ['entry', 'kubectl-entry', 'kubectl-complete-entry'];
/** Bumped when what this file writes changes shape. */
const FORMAT = 3;
/**
 * Dependencies compiled into the chunks rather than loaded from node_modules: pure JavaScript made
 * of many small files (TypeBox has 709), which take longer to find and load one by one than their
 * code takes to run. Everything else is loaded as installed (client-node, pino's worker threads, ...).
 */
const BUNDLED = ['yaml', 'commander', 'typebox'];
/** Compiled copies older than this, other than the current one, are removed (a running process may still load chunks from its copy). */
const KEEP_OLD_MS = 60 * 60 * 1000;

export async function launch(entry) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const source = join(root, 'src', 'cli', `${entry}.ts`);
  if (!existsSync(source)) {
    await import(new URL(`../dist/cli/${entry}.js`, import.meta.url).href);
    return;
  }
  if (process.env.WORKLOADSPREAD_DEBUG) process.setSourceMapsEnabled(true);
  if (process.env.WORKLOADSPREAD_LAUNCH !== 'tsx') {
    let compiled;
    try {
      compiled = (await current(root)) ?? (await compile(root));
    } catch (err) {
      if (process.env.WORKLOADSPREAD_DEBUG) process.stderr.write(`launch: running through tsx (${err instanceof Error ? err.message : String(err)})\n`);
    }
    if (compiled !== undefined) {
      await import(pathToFileURL(join(compiled, `${entry}.js`)).href);
      return;
    }
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(source).href);
}

function cacheDir(root) {
  return join(root, '.cache', 'launch');
}

/** The compiled copy when it is up to date with the sources, else undefined. */
async function current(root) {
  let pointer;
  try {
    pointer = JSON.parse(readFileSync(join(cacheDir(root), 'current.json'), 'utf8'));
  } catch {
    return undefined;
  }
  if (pointer.format !== FORMAT || pointer.node !== process.version) return undefined;
  for (const [file, [size, mtimeMs]] of Object.entries(pointer.inputs)) {
    let info;
    try {
      info = statSync(join(root, file));
    } catch {
      return undefined;
    }
    if (info.size !== size || info.mtimeMs !== mtimeMs) return undefined;
  }
  const dir = join(cacheDir(root), pointer.dir);
  return existsSync(join(dir, 'entry.js')) ? dir : undefined;
}

/** An esbuild plugin leaving every package external except `bundled` (and their own files). */
function externalExcept(bundled) {
  return {
    name: 'external-except',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
        if (bundled.includes(name) || args.importer.includes(`${'/node_modules/'}`)) return undefined;
        return { path: args.path, external: true };
      });
    },
  };
}

/** Compiles the entry points into a fresh directory, points current.json at it, and answers it. */
async function compile(root) {
  // esbuild comes with tsx (a dev dependency, so present in every checkout that can run the sources).
  const { createHash, randomBytes } = await import('node:crypto');
  const require = createRequire(import.meta.resolve('tsx/esm/api'));
  const { build } = await import(pathToFileURL(require.resolve('esbuild')).href);
  const base = cacheDir(root);
  mkdirSync(base, { recursive: true });
  const staging = join(base, `.staging-${process.pid}-${randomBytes(4).toString('hex')}`);
  // The sizes and times are taken before compiling: a file saved while esbuild runs then differs
  // from what is recorded, and the next start compiles again rather than trusting a stale copy.
  const before = statsUnder(root, 'src');
  const packages = BUNDLED.map((name) => `node_modules/${name}/package.json`);
  for (const file of [...packages, 'package.json', 'tsconfig.json']) before.set(file, statOf(root, file));
  let result;
  try {
    result = await build({
      absWorkingDir: root,
      entryPoints: Object.fromEntries(ENTRIES.map((e) => [e, `src/cli/${e}.ts`])),
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: `node${process.versions.node.split('.')[0]}`,
      plugins: [externalExcept(BUNDLED)],
      // Bundled CommonJS (commander, yaml) calls require() for Node's modules.
      banner: { js: "import { createRequire as __launchRequire } from 'node:module'; const require = __launchRequire(import.meta.url);" },
      outdir: staging,
      sourcemap: 'linked',
      metafile: true,
      logLevel: 'silent',
    });
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  const inputs = {};
  // Our sources, and of the bundled packages their package.json (a new version changes it). A
  // source that appeared during the compile has no earlier record: it is marked changed.
  const sources = Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules/'));
  for (const file of [...sources, ...packages, 'package.json', 'tsconfig.json']) inputs[file] = before.get(file) ?? [-1, -1];
  const hash = createHash('sha256').update(JSON.stringify([FORMAT, process.version, inputs])).digest('hex').slice(0, 16);
  const dir = join(base, hash);
  try {
    renameSync(staging, dir);
  } catch {
    // Another process compiled the same sources first: use its copy.
    rmSync(staging, { recursive: true, force: true });
  }
  const pointer = join(base, `.current-${process.pid}.json`);
  writeFileSync(pointer, JSON.stringify({ format: FORMAT, node: process.version, dir: hash, inputs }));
  renameSync(pointer, join(base, 'current.json'));
  // The file system's clock, as the modification times compared are its own.
  const now = statSync(join(base, 'current.json')).mtimeMs;
  for (const old of readdirSync(base)) {
    if (old === hash || old === 'current.json') continue;
    try {
      if (now - statSync(join(base, old)).mtimeMs > KEEP_OLD_MS) rmSync(join(base, old), { recursive: true, force: true });
    } catch {
      // Removed by another process meanwhile.
    }
  }
  return dir;
}

function statOf(root, file) {
  const info = statSync(join(root, file));
  return [info.size, info.mtimeMs];
}

/** [size, mtimeMs] of every file below `dir` (relative to root, with forward slashes as esbuild names them). */
function statsUnder(root, dir) {
  const stats = new Map();
  for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name).slice(root.length).replace(/^[\\/]+/, '').split('\\').join('/');
    stats.set(file, statOf(root, file));
  }
  return stats;
}
