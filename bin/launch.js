// Starts one of the command's entry points (src/cli/*-entry.ts / dist/cli/*-entry.js).
// In a source checkout (src/ is there) it runs the TypeScript through tsx, so a fresh clone needs
// no build step and never runs a stale build; the published package holds no src/ (package.json
// "files") and runs the JavaScript that `npm run build` compiled into dist/ (built by `prepack`).
import { existsSync } from 'node:fs';

export async function launch(entry) {
  const source = new URL(`../src/cli/${entry}.ts`, import.meta.url);
  if (existsSync(source)) {
    const { register } = await import('tsx/esm/api');
    register();
    await import(source.href);
  } else {
    await import(new URL(`../dist/cli/${entry}.js`, import.meta.url).href);
  }
}
