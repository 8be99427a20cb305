/**
 * The import rule of DESIGN.md, checked by dependency-cruiser in `npm test`
 * (`npm run lint:imports`, over src/, bench/ and scripts/). Read it as a
 * table: each layer of src/ may import only the layers listed for it (its own
 * folder included); every other import between layers is an error, and so is
 * any import cycle between files (type-only imports count). Tests (*.test.ts)
 * are outside the layer table: they may use any layer and src/testing/;
 * production code never imports test support (src/testing/, or a part's own
 * testing/ folder such as src/cluster/testing/).
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
 *
 * Doors: src/cluster/ (21k lines) and src/sim/ are entered through their
 * index.ts only. Any file outside the folder — production code, tests, the
 * test kit in src/testing/, bench/ and scripts/ — imports `src/cluster/index.ts`
 * or `src/sim/index.ts`, never a file behind it; files inside the folder
 * (its tests included) import one another freely. Like VS Code's "no deep
 * import of internals": the door lists what the rest of the project uses, and
 * everything behind it may change shape without touching another folder.
 * The one exception is WHITE_BOX below.
 *
 * See docs/adr/0009-import-rules-dependency-cruiser.md and docs/architecture.md.
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

const TEST = '\\.test\\.ts$';
/** Test support: src/testing/, and a part's own testing/ folder (src/cluster/testing/). Not in the build. */
const TEST_SUPPORT = '^src/(testing|[^/]+/testing)/';

const layerRules = Object.entries(LAYERS).map(([layer, allowed]) => ({
  name: `layer-${layer}`,
  severity: 'error',
  comment: `src/${layer}/ may import only src/{${allowed.join(',')}}/ (DESIGN.md, "Layers and the one rule between them")`,
  from: { path: `^src/${layer}/`, pathNot: TEST },
  to: { path: '^src/', pathNot: `^src/(${allowed.join('|')})/` },
}));

/**
 * The files allowed past the embedded cluster's door, and why: benchmarks that
 * time one part of the API server in-process, without HTTP (the authorizer,
 * field ownership, webhook matchConditions, the protobuf decoder and message
 * table, the store read by the scale benchmarks to count pods without adding
 * requests of its own), and the generators that write the API server's
 * generated tables. They measure or produce internals, so they name them.
 * Nothing under src/ is on this list: the test kit (src/testing/) goes through
 * the door like every other test, so a test of any layer sees the cluster the
 * way the CLI does; test support that builds the cluster's internals lives
 * inside the folder (src/cluster/testing/).
 */
const WHITE_BOX = {
  cluster: [
    'bench/apiserver-authorization.ts',
    'bench/apiserver-list-watch.ts',
    'bench/field-ownership.ts',
    'bench/match-conditions.ts',
    'bench/lib/kube-protobuf.ts',
    'bench/lib/scale-cluster.ts',
    'scripts/gen-openapi.ts',
    'scripts/gen-protobuf.ts',
  ],
  sim: [],
};

const exactly = (path) => `^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

const doorRules = Object.entries(WHITE_BOX).map(([part, whiteBox]) => ({
  name: `${part}-door`,
  severity: 'error',
  comment: `Outside src/${part}/, import its door src/${part}/index.ts, not the files behind it (add what you need to the door).`,
  from: { path: '^(src|bench|scripts)/', pathNot: [`^src/${part}/`, ...whiteBox.map(exactly)] },
  to: { path: `^src/${part}/`, pathNot: `^src/${part}/index\\.ts$` },
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
    ...doorRules,
    {
      name: 'pure-layers-no-io',
      severity: 'error',
      comment: 'src/k8s, src/api and src/core are pure: no Node.js built-in modules (I/O, timers, crypto, ...).',
      from: { path: '^src/(k8s|api|core)/', pathNot: TEST },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'production-not-to-testing',
      severity: 'error',
      comment: 'Test support (src/testing/, src/<part>/testing/) is never imported by production code.',
      from: { path: '^src/', pathNot: [TEST_SUPPORT, TEST] },
      to: { path: TEST_SUPPORT },
    },
    {
      name: 'production-not-to-dev-dependencies',
      severity: 'error',
      comment: 'Production code may not import devDependencies (they are not installed with --omit=dev).',
      from: { path: '^src/', pathNot: [TEST_SUPPORT, TEST] },
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
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'], exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
