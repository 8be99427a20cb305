/**
 * `workloadspread cluster`: the embedded Kubernetes, standalone, on the real
 * clock, for interactive use with kubectl.
 *
 *   workloadspread cluster [--nodes zones=3,perZone=2,cpu=8,memory=32Gi,pods=110]
 *                          [--port 6443] [--kubeconfig ~/.kube/workloadspread-embedded.kubeconfig]
 *
 * Nodes are `node-<zone>-<i>` in zones `zone-a`, `zone-b`, … (label
 * `topology.kubernetes.io/zone`, region `region-1`). The kubeconfig holds an
 * admin bearer token, so it goes outside the working tree by default:
 * `~/.kube/workloadspread-embedded.kubeconfig` (`~/.kube` made 0700 if it
 * is missing), never `~/.kube/config`, which the command refuses to write;
 * it is written 0600 wherever it goes and removed again on exit, since the
 * server and its certificate authority die with the process. Ctrl-C
 * (SIGINT) or SIGTERM stops everything and exits 130 (signals.ts).
 * The WorkloadSpread manager runs inside by default (`--no-manager` to
 * skip): the CRD is installed, the webhooks are registered by URL, so
 * `kubectl apply` of a WorkloadSpread and its workload just works; its
 * log goes to stderr as JSON lines (`--log-level`, default warn). More in-process components:
 * `ClusterCommandHooks.components`, started after the nodes.
 */
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { realClock } from '../clock/clock.ts';
import { parseQuantityNanos } from '../k8s/quantity.ts';
import { KUBELET_VERSION, startCluster, type ControllerFactory, type EmbeddedCluster } from '../cluster/index.ts';
import type { NodeSpec } from '../k8s/node-specs.ts';
import type { Manager } from '../manager/manager.ts';
import { embeddedManagerComponent } from './embedded-manager.ts';
import { DEFAULT_CLUSTER_LOG_LEVEL, DEFAULT_KUBECONFIG_FILE, DEFAULT_PORT, INTERRUPTED_EXIT_CODE, type LogLevel } from './defaults.ts';
import { CommandError, UsageError, type CliIo } from './io.ts';
import { jsonLogger } from './manager.ts';
import { stopOnSignals, type StopSignals } from './signals.ts';

export { DEFAULT_KUBECONFIG_FILE, DEFAULT_PORT } from './defaults.ts';

export interface NodeLayout {
  zones: number;
  perZone: number;
  cpu: string;
  memory: string;
  pods: string;
}

export const DEFAULT_LAYOUT: NodeLayout = { zones: 3, perZone: 2, cpu: '8', memory: '32Gi', pods: '110' };

export type LayoutResult = { ok: true; layout: NodeLayout } | { ok: false; error: string };

/** Parses `zones=3,perZone=2,cpu=8,memory=32Gi,pods=110` (any subset, any order). */
export function parseNodeLayout(text: string): LayoutResult {
  const layout: NodeLayout = { ...DEFAULT_LAYOUT };
  for (const part of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return { ok: false, error: `--nodes: expected key=value, got ${JSON.stringify(part)}` };
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    switch (key) {
      case 'zones':
      case 'perZone': {
        const n = /^[0-9]+$/.test(value) ? Number(value) : NaN;
        const max = key === 'zones' ? 26 : 1000;
        if (!(n >= 1 && n <= max)) return { ok: false, error: `--nodes: ${key} must be an integer from 1 to ${max}, got ${JSON.stringify(value)}` };
        layout[key] = n;
        break;
      }
      case 'cpu':
      case 'memory':
      case 'pods': {
        const nanos = parseQuantityNanos(value);
        if (nanos === undefined || nanos <= 0n) return { ok: false, error: `--nodes: ${key} must be a positive quantity, got ${JSON.stringify(value)}` };
        layout[key] = value;
        break;
      }
      default:
        return { ok: false, error: `--nodes: unknown key ${JSON.stringify(key)} (expected zones, perZone, cpu, memory, pods)` };
    }
  }
  return { ok: true, layout };
}

/** The node specs of a layout: node-a-1, node-a-2, node-b-1, … */
export function layoutNodes(layout: NodeLayout): NodeSpec[] {
  const nodes: NodeSpec[] = [];
  for (let z = 0; z < layout.zones; z++) {
    const letter = String.fromCharCode(97 + z);
    for (let i = 1; i <= layout.perZone; i++) {
      nodes.push({
        name: `node-${letter}-${i}`,
        labels: { 'topology.kubernetes.io/zone': `zone-${letter}`, 'topology.kubernetes.io/region': 'region-1' },
        capacity: { cpu: layout.cpu, memory: layout.memory, pods: layout.pods },
      });
    }
  }
  return nodes;
}

export interface ClusterCommandOptions {
  nodes?: string;
  port?: string;
  kubeconfig?: string;
  /** Run the WorkloadSpread manager inside (default true). */
  manager?: boolean;
  /** The manager's log level (default warn; its JSON lines go to stderr). */
  logLevel?: LogLevel;
}

export interface ClusterCommandHooks {
  /** More components to run inside the cluster (the manager, in a later issue). */
  components?: ControllerFactory[];
  /** Resolves with the signal's name when the command should stop (default: SIGINT or SIGTERM; the exit code is then 130). */
  waitForStop?: () => Promise<string>;
  /** Called once the cluster is up (tests). */
  onReady?: (cluster: EmbeddedCluster) => void;
}

function parsePort(text: string | undefined): number {
  if (text === undefined) return DEFAULT_PORT;
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(n >= 0 && n <= 65535)) throw new UsageError(`--port must be a number from 0 to 65535 (0 picks a free port), got ${JSON.stringify(text)}`);
  return n;
}

/** Where the kubeconfig goes: `--kubeconfig`, else `~/.kube/workloadspread-embedded.kubeconfig` (`HOME` from the environment). */
export function clusterKubeconfigPath(text: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  const home = env['HOME'] ?? homedir();
  const path = resolve(text ?? join(home, '.kube', DEFAULT_KUBECONFIG_FILE));
  if (path === resolve(home, '.kube', 'config')) throw new UsageError('--kubeconfig: refusing to overwrite ~/.kube/config; pass another file');
  return path;
}

/**
 * Writes the kubeconfig readable by its owner only (0600, also over a file
 * that was there with a wider mode); the default's `~/.kube` is created
 * 0700 when missing.
 */
async function writePrivateKubeconfig(cluster: EmbeddedCluster, path: string, isDefault: boolean): Promise<void> {
  if (isDefault) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  await cluster.writeKubeconfig(path);
  chmodSync(path, 0o600);
}

export async function runCluster(options: ClusterCommandOptions, io: CliIo, hooks: ClusterCommandHooks = {}): Promise<number> {
  const parsed = parseNodeLayout(options.nodes ?? '');
  if (!parsed.ok) throw new UsageError(parsed.error);
  const port = parsePort(options.port);
  const kubeconfig = clusterKubeconfigPath(options.kubeconfig, io.env);
  const layout = parsed.layout;

  let manager: Manager | undefined;
  const components = [...(hooks.components ?? [])];
  if (options.manager !== false) {
    components.push(
      embeddedManagerComponent({
        log: jsonLogger((line) => io.err(line), options.logLevel ?? DEFAULT_CLUSTER_LOG_LEVEL),
        metricsAddress: { host: '127.0.0.1', port: 0 },
        onReady: (m) => {
          manager = m;
        },
      }),
    );
  }
  // From here on Ctrl-C stops what was started (a signal during the start takes effect once it is up).
  const signals = hooks.waitForStop === undefined ? stopOnSignals(io, { forcedExitCode: INTERRUPTED_EXIT_CODE }) : undefined;
  try {
    return await serve(io, hooks, signals, { layout, port, kubeconfig, defaultKubeconfig: options.kubeconfig === undefined, components, manager: () => manager });
  } finally {
    signals?.dispose();
  }
}

async function serve(
  io: CliIo,
  hooks: ClusterCommandHooks,
  signals: StopSignals | undefined,
  o: { layout: NodeLayout; port: number; kubeconfig: string; defaultKubeconfig: boolean; components: ControllerFactory[]; manager: () => Manager | undefined },
): Promise<number> {
  const { layout, port, kubeconfig, components } = o;
  let cluster: EmbeddedCluster;
  try {
    cluster = await startCluster({ clock: realClock(), nodes: layoutNodes(layout), port, components });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CommandError(`port ${port} is in use; pick another with --port (0 picks a free one)`);
    throw err;
  }
  try {
    await writePrivateKubeconfig(cluster, kubeconfig, o.defaultKubeconfig);
  } catch (err) {
    await cluster.stop();
    throw new CommandError(`cannot write the kubeconfig ${kubeconfig}: ${(err as Error).message}`);
  }
  const manager = o.manager();
  const zones = Array.from({ length: layout.zones }, (_, z) => `zone-${String.fromCharCode(97 + z)}`);
  io.out(
    [
      `Kubernetes ${KUBELET_VERSION} (embedded) is running at ${cluster.apiServer.url}`,
      `nodes: ${layout.zones * layout.perZone} in ${layout.zones} zone(s) (${zones.join(', ')}), ${layout.cpu} cpu / ${layout.memory} memory / ${layout.pods} pods each`,
      `kubeconfig: ${kubeconfig} (readable by you only; removed on exit)`,
      ...(manager === undefined
        ? ['WorkloadSpread manager: not running (--no-manager)']
        : [`WorkloadSpread manager: running inside (CRD installed, webhooks at ${manager.endpoints().webhook ?? '?'}, metrics at ${manager.endpoints().metrics ?? '?'}/metrics)`]),
      '',
      'To use it:',
      `  export KUBECONFIG=${kubeconfig}`,
      '  kubectl get nodes',
      '',
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  hooks.onReady?.(cluster);
  const signal = await (hooks.waitForStop?.() ?? (signals as StopSignals).received);
  io.out(`\n${signal === '' ? 'Stopping' : `${signal}: stopping`} the cluster...\n`);
  await cluster.stop();
  rmSync(kubeconfig, { force: true });
  io.out('Stopped.\n');
  return INTERRUPTED_EXIT_CODE;
}
