#!/usr/bin/env node
// Renders the demo's HTML report headless with Chromium and saves a PNG for the README
// (docs/images/demo-report.png). Not part of the tests or CI: it needs a Chromium on the
// machine (Debian: `apt-get install -y chromium`; or set CHROMIUM=/path/to/chrome).
//
// Usage: node scripts/screenshot-report.mjs [--report FILE.html] [--out FILE.png] [--size 1100x640] [--scale 1.5]
//   --report  an existing report (default: run `workloadspread demo --fast` and use its report)
//   --out     the PNG to write (default docs/images/demo-report.png)
//   --size    the browser window, CSS pixels (the screenshot is the top of the page at this size)
//   --scale   device pixel ratio (1.5 by default: sharp on high-density screens, ~150 kB)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;

function parseArgs(argv) {
  const args = { report: undefined, out: join(root, 'docs/images/demo-report.png'), size: '1100x640', scale: '1.5' };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]?.replace(/^--/, '');
    const value = argv[i + 1];
    if (!(key in args) || value === undefined) {
      console.error(`usage: node scripts/screenshot-report.mjs [--report FILE.html] [--out FILE.png] [--size WxH] [--scale N] (got ${argv[i]})`);
      process.exit(2);
    }
    args[key] = value;
    i++;
  }
  if (!/^\d+x\d+$/.test(args.size) || !/^\d+(\.\d+)?$/.test(args.scale)) {
    console.error('--size must be WIDTHxHEIGHT and --scale a number');
    process.exit(2);
  }
  return args;
}

function findChromium() {
  const candidates = [process.env.CHROMIUM, 'chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'].filter(Boolean);
  for (const c of candidates) {
    const found = spawnSync('sh', ['-c', `command -v "${c}"`], { encoding: 'utf8' });
    if (found.status === 0 && found.stdout.trim() !== '') return found.stdout.trim();
  }
  return undefined;
}

const args = parseArgs(process.argv.slice(2));
const chromium = findChromium();
if (chromium === undefined) {
  console.error('no Chromium found: install one (Debian: apt-get install -y chromium) or set CHROMIUM=/path/to/chrome');
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), 'ws-screenshot-'));
try {
  let report = args.report === undefined ? undefined : resolve(args.report);
  if (report === undefined) {
    report = join(work, 'report.html');
    console.log('running the demo for a fresh report...');
    const demo = spawnSync(process.execPath, [join(root, 'bin/workloadspread.js'), 'demo', '--fast', '--no-color', '--report', report], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    if (demo.status !== 0) {
      console.error(`the demo failed (exit code ${demo.status}); no screenshot`);
      process.exit(1);
    }
  }
  if (!existsSync(report)) {
    console.error(`no report at ${report}`);
    process.exit(1);
  }
  const out = resolve(args.out);
  mkdirSync(dirname(out), { recursive: true });
  const [width, height] = args.size.split('x');
  const shot = spawnSync(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--hide-scrollbars',
      `--force-device-scale-factor=${args.scale}`,
      `--user-data-dir=${join(work, 'profile')}`,
      `--screenshot=${out}`,
      `--window-size=${width},${height}`,
      pathToFileURL(report).href,
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (shot.status !== 0 || !existsSync(out)) {
    console.error(`chromium failed (exit code ${shot.status}):\n${shot.stderr}`);
    process.exit(1);
  }
  console.log(`wrote ${out} (${statSync(out).size} bytes) from ${report}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
