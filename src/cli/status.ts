/**
 * `workloadspread status [NAME] [-n NS | -A] [-l SELECTOR] [--watch]
 * [-o table|wide|json|yaml|name|jsonpath=…|custom-columns=…] [--no-color]
 * [kubectl's global flags]` (DECISIONS D16): what the WorkloadSpreads of
 * a cluster are doing, from their stored status and the live pods
 * (status-model.ts computes, status-render.ts draws the table,
 * status-output.ts and output.ts print kubectl's object formats).
 *
 * The cluster is found as kubectl finds it (`--kubeconfig`, `$KUBECONFIG`,
 * `~/.kube/config`, the in-cluster service account; `--context` picks a
 * context; kube-flags.ts has the other overrides: `--server`, `--token`,
 * `--as`, `--request-timeout`, `-v`, ...); the namespace is `-n`, else the context's; `-l` keeps the
 * WorkloadSpreads whose labels match (evaluated by the API server). One request per kind per namespace, plus
 * one GET per target (and its scale subresource for custom kinds whose
 * replica count is otherwise unknown); the custom-workload whitelist of the
 * manager is not read, so such a kind's count comes from its scale
 * subresource. Disruption budgets (DomainDisruptionBudgets where the cluster
 * serves them, and PodDisruptionBudgets) selecting a WorkloadSpread's pods
 * are shown under it (status-budgets.ts).
 *
 * `--watch` keeps informers on WorkloadSpreads, pods, ReplicaSets and budgets and
 * redraws when what it would print changed (coalescing bursts of events);
 * the screen is cleared only on a TTY, otherwise snapshots follow each
 * other; in the object formats, as `kubectl get -w`, every object is printed
 * once, then each one again whenever it changes (YAML documents separated by
 * `---`). Ctrl-C (or SIGTERM) ends it: exit 130, as kubectl get -w.
 *
 * Exit codes: 0 shown (also when there is nothing to show, as kubectl);
 * 1 the cluster cannot be reached or refuses, the WorkloadSpread CRD is not
 * installed, or NAME does not exist; 2 usage errors. Every error is one line.
 */
import { API_VERSION, DDB_API_VERSION, DDB_KIND, KIND } from '../api/names.ts';
import type { WorkloadSpread } from '../api/workloadspread.ts';
import { EMPTY_WHITELIST } from '../api/whitelist.ts';
import { realClock, type Clock, type Timer } from '../clock/clock.ts';
import { loadConnection, type Connection } from '../client/config.ts';
import { ApiError, describeError, isForbidden, isNotFound, isUnauthorized, NetworkError } from '../client/errors.ts';
import { KubeClient } from '../client/http-client.ts';
import { BUILTIN, type ResourceRef } from '../client/resources.ts';
import { Informer } from '../client/store.ts';
import { controllerWorkloadReplicas } from '../core/replicas.ts';
import { parseSelector } from '../k8s/label-selector-parse.ts';
import { apiVersionGroup } from '../k8s/pod.ts';
import { formatTime } from '../k8s/time.ts';
import type { KubeObject, Pod } from '../k8s/types.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import { INTERRUPTED_EXIT_CODE, STATUS_OUTPUTS } from './defaults.ts';
import { CommandError, parseMaxInputSize, UsageError, type CliIo } from './io.ts';
import type { ClusterFlags } from './kube-flags.ts';
import { parseOutput, renderObjects, type ObjectFormat, type PrintedObject } from './output.ts';
import { configLoadedLine, requestLog } from './request-log.ts';
import { stopOnSignals, type StopSignals } from './signals.ts';
import { budgetViews } from './status-budgets.ts';
import { workloadSpreadView, type ViewInput, type WorkloadSpreadView } from './status-model.ts';
import { statusObject, workloadSpreadName } from './status-output.ts';
import { renderViews } from './status-render.ts';
import { CLEAR_SCREEN, createStyle, wantsColor } from './style.ts';

export interface StatusOptions {
  name?: string;
  namespace?: string;
  allNamespaces?: boolean;
  /** `-l`: a label selector on the WorkloadSpreads. */
  selector?: string;
  kubeconfig?: string;
  /** `--context`: a context of the kubeconfig other than its current-context. */
  context?: string;
  watch?: boolean;
  output?: string;
  /** `--template`: the template of `-o jsonpath` written without one. */
  template?: string;
  /** `--allow-missing-template-keys` (default true). */
  allowMissingTemplateKeys?: boolean;
  /** false for `--no-color`. */
  color?: boolean;
  /** kubectl's global flags: connection overrides, `--request-timeout`, `-v`. */
  cluster?: ClusterFlags;
}

export interface StatusHooks {
  /** Default: the real clock. */
  clock?: Clock;
  /** `--watch` ends when this resolves (default: SIGINT or SIGTERM); the exit code is then 130. */
  waitForStop?: () => Promise<unknown>;
  /** Whether stdout is a terminal (`--watch` clears the screen only then); default process.stdout.isTTY. */
  isTTY?: boolean;
  /** Coalescing window of `--watch` redraws (default 200 ms of clock time). */
  redrawDelayMs?: number;
}

const USER_AGENT = 'workloadspread-status';
const DEFAULT_REDRAW_DELAY_MS = 200;

/** Builtin kinds whose replica count never needs the scale subresource. */
const COUNTED_KINDS = new Set(['apps/Deployment', 'apps/ReplicaSet', 'apps/StatefulSet', 'batch/Job', 'apps.kruise.io/CloneSet', 'apps.kruise.io/StatefulSet']);

/** The objects one snapshot is drawn from. */
export interface StatusSources {
  workloadSpreads: WorkloadSpread[];
  pods(namespace: string): Pod[];
  replicaSets(namespace: string): KubeObject[];
  /** DomainDisruptionBudgets and PodDisruptionBudgets of a namespace (absent: budgets are not shown). */
  budgets?(namespace: string): { ddbs: KubeObject[]; pdbs: KubeObject[] };
}

type TargetInfo = Pick<ViewInput, 'workload' | 'replicas' | 'fallbackSelector'>;

/** Node's codes for a server certificate that does not verify. */
const TLS_TRUST_ERRORS = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** A one-line message for a failed request, saying what the user can do about it. */
export function describeClusterError(err: unknown, server: string): string {
  if (err instanceof NetworkError) {
    const cause = (err.cause as NodeJS.ErrnoException | undefined)?.code;
    if (err.kind === 'connection' && cause !== undefined && TLS_TRUST_ERRORS.has(cause)) {
      return `the certificate of the cluster at ${server} is not trusted (${cause}): check the kubeconfig's certificate-authority, or give --certificate-authority`;
    }
    if (err.kind === 'connection') return `cannot reach the cluster at ${server}${cause === undefined ? '' : ` (${cause})`}: is it running?`;
    if (err.kind === 'timeout') return `the cluster at ${server} did not answer in time`;
    return `the cluster at ${server}: ${err.message}`;
  }
  if (isUnauthorized(err)) return `the cluster at ${server} does not accept these credentials (401 Unauthorized)`;
  if (isForbidden(err) && err instanceof ApiError) return `not allowed: ${err.status.message ?? err.message}`;
  return describeError(err);
}

/** The client `status` (and completion) reads the cluster with: kubeconfig, overrides, timeout, `-v` logs. */
export async function connect(options: Pick<StatusOptions, 'kubeconfig' | 'context' | 'namespace' | 'cluster'>, io: CliIo, clock: Clock, userAgent = USER_AGENT): Promise<KubeClient> {
  const flags = options.cluster;
  const kubeconfig = options.kubeconfig ?? flags?.kubeconfig;
  const overrides = { ...(flags?.overrides ?? {}), ...(options.context === undefined ? {} : { context: options.context }), ...(options.namespace === undefined ? {} : { namespace: options.namespace }) };
  const loaded = await loadConnection({ ...(kubeconfig === undefined ? {} : { kubeconfig }), overrides, env: io.env, clock });
  if (!loaded.ok) throw new CommandError(`${loaded.error.source}: ${loaded.error.message}`, 1);
  const connection = loaded.connection as Connection;
  const verbosity = flags?.verbosity ?? 0;
  io.err(configLoadedLine(verbosity, clock, process.pid, connection.source));
  const trace = requestLog(verbosity, clock, io.err, process.pid);
  return new KubeClient(connection, { clock, userAgent, ...(flags?.requestTimeoutMs === undefined ? {} : { timeoutMs: flags.requestTimeoutMs }), ...(trace === undefined ? {} : { trace }) });
}

/** Fails with one line unless the server serves WorkloadSpreads. */
async function requireCrd(client: KubeClient): Promise<void> {
  const resolved = await client.resources.resolve(API_VERSION, KIND);
  if (resolved.ok) return;
  if (resolved.notFound) {
    throw new CommandError(`the cluster at ${client.connection.server} does not serve ${KIND} (${API_VERSION}): the CRD is not installed (see docs/operations.md, or \`workloadspread manifests crd | kubectl apply -f -\`)`, 1);
  }
  throw new CommandError(describeClusterError(resolved.error, client.connection.server), 1);
}

function notFound(name: string, namespace: string): CommandError {
  return new CommandError(`workloadspread "${name}" not found in namespace "${namespace}"`, 1);
}

/** The target workload, its replicas (the controller's count) and, for custom kinds, the scale selector. */
async function fetchTarget(client: KubeClient, ws: WorkloadSpread): Promise<TargetInfo> {
  const target = ws.spec?.targetRef;
  const namespace = ws.metadata?.namespace ?? '';
  if (target === undefined || target === null || typeof target.apiVersion !== 'string' || typeof target.kind !== 'string' || typeof target.name !== 'string') {
    return { workload: undefined, replicas: { ok: false, error: 'the WorkloadSpread has no valid targetRef' } };
  }
  const resolved = await client.resources.resolve(target.apiVersion, target.kind);
  if (!resolved.ok) {
    if (resolved.notFound) return { workload: undefined, replicas: { ok: true, replicas: 0 } };
    throw resolved.error;
  }
  const ref = resolved.ref as ResourceRef;
  let workload: KubeObject | undefined;
  try {
    workload = await client.get<KubeObject>(ref, target.name, { namespace });
  } catch (err) {
    if (isNotFound(err)) return { workload: undefined, replicas: { ok: true, replicas: 0 } };
    throw err;
  }
  const plain = controllerWorkloadReplicas(ws, workload, EMPTY_WHITELIST);
  const gv = apiVersionGroup(target.apiVersion);
  if (!plain.ok || plain.replicas !== -1 || !gv.ok || COUNTED_KINDS.has(`${gv.group}/${target.kind}`)) return { workload, replicas: plain };
  // A custom kind: its scale subresource knows the count and the pod selector.
  try {
    const scale = await client.getScale(ref, target.name, { namespace });
    const counted = controllerWorkloadReplicas(ws, workload, EMPTY_WHITELIST, typeof scale.spec?.replicas === 'number' ? { replicas: scale.spec.replicas } : {});
    const selector = typeof scale.status?.selector === 'string' && scale.status.selector !== '' ? parseSelector(scale.status.selector) : undefined;
    return { workload, replicas: counted, ...(selector?.ok === true ? { fallbackSelector: selector.selector } : {}) };
  } catch (err) {
    if (isNotFound(err)) return { workload, replicas: plain };
    throw err;
  }
}

/** The views of a snapshot, sorted by namespace and name. */
export async function buildViews(client: KubeClient, sources: StatusSources): Promise<WorkloadSpreadView[]> {
  return (await buildSnapshot(client, sources)).map((e) => e.view);
}

interface SnapshotEntry {
  view: WorkloadSpreadView;
  ws: WorkloadSpread;
}

/** Each WorkloadSpread with its view, sorted by namespace and name. */
async function buildSnapshot(client: KubeClient, sources: StatusSources): Promise<SnapshotEntry[]> {
  const sorted = [...sources.workloadSpreads].sort(compareKeys);
  const targets = await Promise.all(sorted.map((ws) => fetchTarget(client, ws)));
  return sorted.map((ws, i) => {
    const namespace = ws.metadata?.namespace ?? '';
    const view = workloadSpreadView({ ws, ...(targets[i] as TargetInfo), replicaSets: sources.replicaSets(namespace), pods: sources.pods(namespace) });
    const budgets = sources.budgets?.(namespace);
    if (budgets !== undefined) {
      const names = new Set(view.pods.map((p) => p.name));
      view.budgets = budgetViews(sources.pods(namespace).filter((p) => names.has(p.metadata?.name ?? '')), budgets.ddbs, budgets.pdbs);
    }
    return { view, ws };
  });
}

function compareKeys(a: WorkloadSpread, b: WorkloadSpread): number {
  const ka = `${a.metadata?.namespace ?? ''}/${a.metadata?.name ?? ''}`;
  const kb = `${b.metadata?.namespace ?? ''}/${b.metadata?.name ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** The WorkloadSpreads asked for: NAME, or those of the namespace (or every one) matching the selector. */
async function listWorkloadSpreads(client: KubeClient, namespace: string | undefined, name: string | undefined, selector: string | undefined): Promise<{ workloadSpreads: WorkloadSpread[] }> {
  let workloadSpreads: WorkloadSpread[];
  if (name !== undefined) {
    try {
      workloadSpreads = [await client.get<WorkloadSpread>(WORKLOADSPREAD_REF, name, { namespace: namespace ?? '' })];
    } catch (err) {
      if (isNotFound(err)) throw notFound(name, namespace ?? '');
      throw err;
    }
  } else {
    workloadSpreads = (await client.listAll<WorkloadSpread>(WORKLOADSPREAD_REF, { ...(namespace === undefined ? {} : { namespace }), ...(selector === undefined ? {} : { labelSelector: selector }) })).items;
  }
  return { workloadSpreads };
}

/** Lists everything once. */
async function listSources(client: KubeClient, namespace: string | undefined, name: string | undefined, selector: string | undefined): Promise<StatusSources> {
  const { workloadSpreads } = await listWorkloadSpreads(client, namespace, name, selector);
  const namespaces = [...new Set(workloadSpreads.map((ws) => ws.metadata?.namespace ?? ''))];
  const pods = new Map<string, Pod[]>();
  const replicaSets = new Map<string, KubeObject[]>();
  const budgets = new Map<string, { ddbs: KubeObject[]; pdbs: KubeObject[] }>();
  const ddbRef = await budgetRef(client);
  await Promise.all(
    namespaces.map(async (ns) => {
      const [p, rs, pdbs, ddbs] = await Promise.all([
        client.listAll<Pod>(BUILTIN.pods, { namespace: ns }),
        client.listAll<KubeObject>(BUILTIN.replicasets, { namespace: ns }),
        client.listAll<KubeObject>(BUILTIN.poddisruptionbudgets, { namespace: ns }),
        ddbRef === undefined ? Promise.resolve({ items: [] as KubeObject[] }) : client.listAll<KubeObject>(ddbRef, { namespace: ns }),
      ]);
      pods.set(ns, p.items);
      replicaSets.set(ns, rs.items);
      budgets.set(ns, { ddbs: ddbs.items, pdbs: pdbs.items });
    }),
  );
  return { workloadSpreads, pods: (ns) => pods.get(ns) ?? [], replicaSets: (ns) => replicaSets.get(ns) ?? [], budgets: (ns) => budgets.get(ns) ?? { ddbs: [], pdbs: [] } };
}

/** The DomainDisruptionBudget resource, when the cluster serves it (an install without its CRD shows PDBs only). */
async function budgetRef(client: KubeClient): Promise<ResourceRef | undefined> {
  const resolved = await client.resources.resolve(DDB_API_VERSION, DDB_KIND);
  if (resolved.ok) return resolved.ref as ResourceRef;
  if (resolved.notFound) return undefined;
  throw resolved.error;
}

function noneFound(namespace: string | undefined): string {
  return namespace === undefined ? 'No WorkloadSpreads found.\n' : `No WorkloadSpreads found in namespace ${namespace}.\n`;
}

/** How a snapshot is printed: the table (`table`, `wide`) or an object format. */
type Printer = { table: true; render: (entries: SnapshotEntry[]) => string } | { table: false; format: ObjectFormat };

export async function runStatus(options: StatusOptions, io: CliIo, hooks: StatusHooks = {}): Promise<number> {
  const format = await parseOutput(options.output ?? 'table', {
    own: STATUS_OUTPUTS,
    ...(options.template === undefined ? {} : { template: options.template }),
    ...(options.allowMissingTemplateKeys === undefined ? {} : { allowMissingKeys: options.allowMissingTemplateKeys }),
    io,
    maxInputBytes: parseMaxInputSize(undefined),
  });
  if (options.allNamespaces === true && options.name !== undefined) throw new UsageError('a NAME cannot be given with --all-namespaces (-A)');
  if (options.allNamespaces === true && options.namespace !== undefined) throw new UsageError('--namespace (-n) and --all-namespaces (-A) exclude each other');
  if (options.selector !== undefined) {
    if (options.name !== undefined) throw new UsageError('a NAME cannot be given with --selector (-l)');
    const parsed = parseSelector(options.selector);
    if (!parsed.ok) throw new UsageError(`--selector (-l) ${JSON.stringify(options.selector)}: ${parsed.error}`);
  }
  const clock = hooks.clock ?? realClock();
  const client = await connect(options, io, clock);
  const namespace = options.allNamespaces === true ? undefined : options.namespace ?? client.namespace;
  let printer: Printer;
  if (format.kind === 'own') {
    const style = createStyle(wantsColor(options.color, io.color));
    printer = { table: true, render: (entries) => (entries.length === 0 ? noneFound(namespace) : renderViews(entries.map((e) => e.view), style, { wide: format.name === 'wide' })) };
  } else {
    printer = { table: false, format };
  }
  try {
    await requireCrd(client);
    if (options.watch !== true && printer.table === false && printer.format.kind === 'name') {
      // Names need the WorkloadSpreads only, not their pods and targets.
      const { workloadSpreads } = await listWorkloadSpreads(client, namespace, options.name, options.selector);
      if (workloadSpreads.length === 0) io.err(noneFound(namespace));
      const sorted = [...workloadSpreads].sort((a, b) => compareKeys(a, b));
      io.out(sorted.map((ws) => `${workloadSpreadName(ws.metadata?.name ?? '')}\n`).join(''));
      return 0;
    }
    if (options.watch !== true) {
      const entries = await buildSnapshot(client, await listSources(client, namespace, options.name, options.selector));
      io.out(printer.table ? printer.render(entries) : await renderObjects(printer.format, entries.map(printed), options.name !== undefined));
      return 0;
    }
    const signals = hooks.waitForStop === undefined ? stopOnSignals(io, { forcedExitCode: INTERRUPTED_EXIT_CODE }) : undefined;
    try {
      return await watch(client, options, io, hooks.waitForStop?.() ?? (signals as StopSignals).received, hooks, clock, namespace, printer);
    } finally {
      signals?.dispose();
    }
  } catch (err) {
    if (err instanceof CommandError || err instanceof UsageError) throw err;
    throw new CommandError(describeClusterError(err, client.connection.server), 1);
  } finally {
    client.connection.close();
  }
}

function printed(entry: SnapshotEntry): PrintedObject {
  return statusObject(entry.view, entry.ws);
}

async function watch(
  client: KubeClient,
  options: StatusOptions,
  io: CliIo,
  stop: Promise<unknown>,
  hooks: StatusHooks,
  clock: Clock,
  namespace: string | undefined,
  printer: Printer,
): Promise<number> {
  // The name must exist when the watch starts; later it may come and go.
  if (options.name !== undefined) await listSources(client, namespace, options.name, undefined);
  const scope = namespace === undefined ? {} : { namespace };
  const fieldSelector = options.name === undefined ? {} : { fieldSelector: `metadata.name=${options.name}` };
  const informers = {
    workloadSpreads: new Informer<WorkloadSpread & KubeObject>({ client, ref: WORKLOADSPREAD_REF, name: 'workloadspreads', ...scope, ...fieldSelector, ...(options.selector === undefined ? {} : { labelSelector: options.selector }) }),
    pods: new Informer<Pod>({ client, ref: BUILTIN.pods, name: 'pods', ...scope }),
    replicaSets: new Informer<KubeObject>({ client, ref: BUILTIN.replicasets, name: 'replicasets', ...scope }),
    pdbs: new Informer<KubeObject>({ client, ref: BUILTIN.poddisruptionbudgets, name: 'poddisruptionbudgets', ...scope }),
  };
  const ddbRef = await budgetRef(client);
  const ddbs = ddbRef === undefined ? undefined : new Informer<KubeObject>({ client, ref: ddbRef, name: 'domaindisruptionbudgets', ...scope });
  const all = [...(Object.values(informers) as Informer<KubeObject>[]), ...(ddbs === undefined ? [] : [ddbs])];
  const tty = hooks.isTTY ?? process.stdout.isTTY === true;
  const delay = hooks.redrawDelayMs ?? DEFAULT_REDRAW_DELAY_MS;
  let last: string | undefined;
  /** Object formats: what was last printed per WorkloadSpread, to print only those that changed. */
  const lastObjects = new Map<string, string>();
  let headerPrinted = false;
  let lastWarning: string | undefined;
  let pending: Timer | undefined;
  let drawing: Promise<void> = Promise.resolve();
  let stopped = false;

  /** Draws when the text changed; a failed refresh throws the first time and only warns later (the next event retries). */
  const draw = async (first: boolean): Promise<void> => {
    pending = undefined;
    if (stopped) return;
    const sources: StatusSources = {
      workloadSpreads: informers.workloadSpreads.store.list(),
      pods: (ns) => informers.pods.store.list(ns),
      replicaSets: (ns) => informers.replicaSets.store.list(ns),
      budgets: (ns) => ({ ddbs: ddbs?.store.list(ns) ?? [], pdbs: informers.pdbs.store.list(ns) }),
    };
    let text = '';
    try {
      const entries = await buildSnapshot(client, sources);
      if (printer.table) text = printer.render(entries);
      else {
        const format = printer.format;
        const changed: string[] = [];
        for (const entry of entries) {
          const key = `${entry.view.namespace}/${entry.view.name}`;
          const one = await renderObjects(format, [printed(entry)], true);
          if (lastObjects.get(key) === one) continue;
          lastObjects.set(key, one);
          // Custom columns: the header once, then a row per change (as kubectl get -w).
          const row = format.kind === 'custom-columns' && headerPrinted ? one.slice(one.indexOf('\n') + 1) : one;
          if (format.kind === 'custom-columns') headerPrinted = true;
          changed.push(format.kind === 'yaml' ? `---\n${row}` : row);
        }
        lastWarning = undefined;
        if (stopped || changed.length === 0) return;
        io.out(changed.join(''));
        return;
      }
    } catch (err) {
      if (first) throw err;
      const warning = describeClusterError(err, client.connection.server);
      if (warning !== lastWarning) io.err(`warning: ${warning} (retrying on the next change)\n`);
      lastWarning = warning;
      return;
    }
    lastWarning = undefined;
    if (stopped || text === last) return;
    last = text;
    if (tty) io.out(CLEAR_SCREEN);
    else io.out(`--- ${formatTime(clock.now())}\n`);
    io.out(text);
  };
  const schedule = (): void => {
    if (pending !== undefined || stopped) return;
    pending = clock.setTimeout(() => {
      drawing = drawing.then(() => draw(false));
      return drawing;
    }, delay, { name: 'status redraw' });
  };

  for (const informer of all) {
    informer.store.onAdd(schedule);
    informer.store.onUpdate(schedule);
    informer.store.onDelete(schedule);
    informer.start();
  }
  const stopRequested = stop.then(() => 'stop' as const);
  try {
    // Ctrl-C also ends a watch whose caches never sync (a cluster that stopped answering).
    if ((await Promise.race([Promise.all(all.map((i) => i.waitForSync())), stopRequested])) !== 'stop') {
      pending?.cancel();
      pending = undefined;
      drawing = drawing.then(() => draw(true));
      await drawing;
      await stopRequested;
    }
  } finally {
    stopped = true;
    pending?.cancel();
    await drawing.catch(() => {});
    await Promise.all(all.map((i) => i.stop()));
  }
  return INTERRUPTED_EXIT_CODE;
}
