/**
 * The import rule of DESIGN.md, checked by dependency-cruiser in `npm test`
 * (`npm run lint:imports`). Read it as a table: each layer of src/ may import
 * only the layers listed for it (its own folder included); every other import
 * between layers is an error, and so is any import cycle between files
 * (type-only imports count). Tests (*.test.ts) are not checked: they may use
 * any layer and src/testing/; production code never imports src/testing/.
 *
 *   k8s, clock                 nothing else
 *   api                        k8s
 *   core                       api, k8s
 *   client                     clock, k8s
 *   kube                       client, clock, core, api, k8s
 *   webhook, controller        kube, client, clock, core, api, k8s (not each other)
 *   manager                    webhook, controller, and what they may import
 *   cluster                    client, clock, k8s (the embedded Kubernetes knows Kubernetes, not WorkloadSpread)
 *   sim                        cluster, manager, and what manager may import
 *   cli                        everything but testing
 *   testing                    everything
 *
 * k8s, api and core are pure: they import no Node.js built-in module.
 * See docs/adr/0009-import-rules-dependency-cruiser.md.
 */
const LAYERS = {
  k8s: ['k8s'],
  clock: ['clock'],
  api: ['api', 'k8s'],
  core: ['core', 'api', 'k8s'],
  client: ['client', 'clock', 'k8s'],
  kube: ['kube', 'client', 'clock', 'core', 'api', 'k8s'],
  webhook: ['webhook', 'kube', 'client', 'clock', 'core', 'api', 'k8s'],
  controller: ['controller', 'kube', 'client', 'clock', 'core', 'api', 'k8s'],
  manager: ['manager', 'webhook', 'controller', 'kube', 'client', 'clock', 'core', 'api', 'k8s'],
  cluster: ['cluster', 'client', 'clock', 'k8s'],
  sim: ['sim', 'cluster', 'manager', 'webhook', 'controller', 'kube', 'client', 'clock', 'core', 'api', 'k8s'],
  cli: ['cli', 'sim', 'cluster', 'manager', 'webhook', 'controller', 'kube', 'client', 'clock', 'core', 'api', 'k8s'],
};

const layerRules = Object.entries(LAYERS).map(([layer, allowed]) => ({
  name: `layer-${layer}`,
  severity: 'error',
  comment: `src/${layer}/ may import only src/{${allowed.join(',')}}/ (DESIGN.md, "Layers and the one rule between them")`,
  from: { path: `^src/${layer}/` },
  to: { path: '^src/', pathNot: `^src/(${allowed.join('|')})/` },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No two files import each other, directly or in a circle (DESIGN.md).',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'pure-layers-no-io',
      severity: 'error',
      comment: 'src/k8s, src/api and src/core are pure: no Node.js built-in modules (I/O, timers, crypto, ...).',
      from: { path: '^src/(k8s|api|core)/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'production-not-to-testing',
      severity: 'error',
      comment: 'Test support (src/testing/) is never imported by production code.',
      from: { path: '^src/', pathNot: '^src/testing/' },
      to: { path: '^src/testing/' },
    },
    {
      name: 'production-not-to-dev-dependencies',
      severity: 'error',
      comment: 'Production code may not import devDependencies (they are not installed with --omit=dev).',
      from: { path: '^src/', pathNot: '^src/testing/' },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'Every import resolves to a file or a package.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'], exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
