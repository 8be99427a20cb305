/**
 * The `workloadspread` command (also installed as the kubectl plugin
 * `kubectl-workloadspread`, so `kubectl workloadspread …` runs it). Each
 * sub-command lives in its own module and is a function `(options, io) =>
 * exit code`; this file defines them all in commander and imports a command's
 * module only when that command runs, so `--version`, `--help` and shell
 * completion load almost nothing. It maps usage errors to exit code 2 and
 * every other failure to a one-line message (never a stack trace, unless
 * WORKLOADSPREAD_DEBUG is set).
 *
 * Flags follow kubectl where they mean the same: `-A/--all-namespaces`,
 * `-l/--selector`, `-o/--output` (kubectl's formats, output.ts),
 * `-f/--filename` (`-` is stdin), `-w/--watch`, and on the commands that
 * talk to a cluster kubectl's global flags anywhere on the line
 * (kube-flags.ts: `--kubeconfig`, `--context`, `-n`, `--server`, `--as`,
 * `--request-timeout`, `-v`, ...), which `normalizeArgv` moves after the
 * sub-command before commander parses.
 */
import { Command, CommanderError, Option, type Argument } from 'commander';
import { DEFAULT_CONFIGMAP_NAME } from '../api/keys.ts';
import { DEFAULT_BURST, DEFAULT_QPS } from '../client/rate-limit.ts';
import { DEFAULT_LEASE_NAME, DEFAULT_WEBHOOK_PORT, DEFAULT_WEBHOOK_SERVICE, VERSION } from '../manager/defaults.ts';
import { DEFAULT_SECRET_NAME } from '../webhook/names.ts';
import {
  DEFAULT_CLUSTER_LOG_LEVEL,
  DEFAULT_KUBECONFIG_DISPLAY,
  DEFAULT_MANAGER_NAMESPACE,
  DEFAULT_MAX_INPUT_SIZE,
  DEFAULT_PORT,
  LOG_LEVELS,
  PLAN_OUTPUTS,
  SIMULATE_OUTPUTS,
  STATUS_OUTPUTS,
} from './defaults.ts';
import { CommandError, UsageError, processIo, type CliIo } from './io.ts';
import { addClusterFlags, clusterFlags, normalizeArgv, type ClusterFlagValues } from './kube-flags.ts';
import { DEFAULT_LEASE_TIMINGS } from './lease-timings.ts';
import type { ManagerFlags } from './manager.ts';

/** The command's name as the user typed it. */
export const COMMAND_NAME = 'workloadspread';
/** As a kubectl plugin (bin/kubectl-workloadspread.js). */
export const PLUGIN_NAME = 'kubectl workloadspread';

const MAX_INPUT_HELP = `refuse inputs larger than this before parsing them: bytes or a quantity such as 10Mi (default ${DEFAULT_MAX_INPUT_SIZE})`;

function defined<T extends Record<string, unknown>>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}

/** `-o`: the command's own formats and kubectl's object formats (output.ts checks the value). */
function outputOption(own: readonly string[], description: string): Option {
  const option = new Option('-o, --output <format>', description).default(own[0]);
  option.argChoices = [...new Set([...own, 'json', 'yaml', 'name', 'jsonpath=', 'jsonpath-file=', 'jsonpath-as-json=', 'custom-columns=', 'custom-columns-file='])];
  return option;
}

function parseBool(value: string | boolean, flag: string): boolean {
  if (typeof value === 'boolean') return value;
  const v = value.toLowerCase();
  if (v === 'true' || v === '1' || v === 't') return true;
  if (v === 'false' || v === '0' || v === 'f') return false;
  throw new UsageError(`${flag} takes true or false, got ${JSON.stringify(value)}`);
}

/** Lists choices in help and completion, leaving the check (and its one-line error) to the command. */
function listChoices(argument: Argument, choices: string[]): Argument {
  argument.argChoices = choices;
  return argument;
}

/** `workloadspread manager` on the program (its flags in the style of controller-runtime managers). */
export function registerManagerCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('manager')
    .description('Run the WorkloadSpread manager against a cluster: admission webhooks (every replica), the controller (the elected leader), metrics and health probes.')
    .option('--kubeconfig <file>', 'kubeconfig to use (default $KUBECONFIG, ~/.kube/config, then the in-cluster service account)')
    .option('--namespace <ns>', `the manager's own namespace: certificates Secret, Lease, whitelist config map (default $POD_NAMESPACE, the service account's, or ${DEFAULT_MANAGER_NAMESPACE})`)
    .option('--webhook-port <port>', 'port of the HTTPS admission server', String(DEFAULT_WEBHOOK_PORT))
    .option('--webhook-host <address>', 'address the admission server listens on (default every interface, 0.0.0.0)')
    .option('--webhook-url <url>', 'the URL the API server calls the webhooks at, for a manager outside the cluster (default: the Service)')
    .option('--webhook-service <name>', 'the Service in front of the webhook, in --namespace', DEFAULT_WEBHOOK_SERVICE)
    .option('--webhook-scope <scope>', 'which namespaces\' pods reach the pod webhooks: "namespaces" (only those holding a WorkloadSpread or DomainDisruptionBudget, kept current by the leader) or "cluster" (every namespace but the manager\'s and kube-system)', 'namespaces')
    .option('--cert-dir <dir>', 'use tls.crt/tls.key (and ca.crt) from this directory instead of generated certificates')
    .option('--cert-secret <name>', 'the Secret (in --namespace) that keeps the generated certificates', DEFAULT_SECRET_NAME)
    .option('--client-ca-file <file>', 'accept only callers (the API server) presenting a client certificate signed by this CA (PEM); re-read when it changes')
    .option('--client-cert-allowed-names <names>', 'with --client-ca-file: comma-separated common/DNS names the client certificate must carry (default any the CA signed)')
    .option('--register-webhooks [bool]', 'create/update the webhook configurations at start (the Helm chart ships them; those Helm or kubectl apply installed are left alone)')
    .option('--metrics-addr <addr>', 'address of /metrics (host:port, :port, or 0 for off)', ':8080')
    .option('--metrics-secure [bool]', 'serve /metrics over HTTPS, only to callers the API server authenticates (TokenReview) and authorizes (get on the non-resource URL /metrics); needs create on tokenreviews and subjectaccessreviews')
    .option('--metrics-cert-dir <dir>', 'with --metrics-secure: tls.crt/tls.key for the metrics endpoint, re-read when they change (default a self-signed certificate made at start)')
    .option('--profiling [bool]', 'with --metrics-secure: serve CPU and heap profiles at /debug/pprof/profile and /debug/pprof/heap to callers allowed get on them (default true)')
    .option('--health-addr <addr>', 'address of /healthz and /readyz (host:port, :port, or 0 for off)', ':8081')
    .option('--leader-elect [bool]', 'elect a leader (Lease) to run the controller; required with more than one replica')
    .option('--leader-election-id <name>', 'name of the Lease', DEFAULT_LEASE_NAME)
    .option('--leader-elect-lease-duration <duration>', 'how long a lease holds without renewal before another replica may take it (Go duration)', DEFAULT_LEASE_TIMINGS.leaseDuration)
    .option('--leader-elect-renew-deadline <duration>', 'how long the leader keeps trying to renew before it gives up leading and exits', DEFAULT_LEASE_TIMINGS.renewDeadline)
    .option('--leader-elect-retry-period <duration>', 'how often replicas try to acquire or renew the lease', DEFAULT_LEASE_TIMINGS.retryPeriod)
    .option('--kube-api-qps <qps>', 'requests per second to the API server (a client-side token bucket, as client-go\'s); 0 or less turns it off', String(DEFAULT_QPS))
    .option('--kube-api-burst <n>', 'requests allowed at once above --kube-api-qps', String(DEFAULT_BURST))
    .option('--watch-namespaces <list>', 'cache and act on only these namespaces (comma-separated); WorkloadSpreads elsewhere are admitted with a warning and left alone (default: every namespace)')
    .option('--workers <n>', 'parallel reconciles', '3')
    .option('--unschedulable-recovery-seconds <n>', 'how long a subset stays unschedulable before it is retried (also bounds rescheduleCriticalSeconds in validation)', '300')
    .option('--whitelist-configmap <name>', 'config map (in --namespace) holding the custom-workload whitelist', DEFAULT_CONFIGMAP_NAME)
    .option('--guard-pod-deletion [bool]', 'check DomainDisruptionBudgets on pod DELETE too, not only on evictions (see docs/disruption-budgets.md before turning it on)')
    .option('--allow-privileged-subset-patches [bool]', 'let subset patches set privilege-bearing pod fields (serviceAccountName, host namespaces, privileged, added capabilities, hostPath volumes, ...); off, WorkloadSpreads whose patches set them are refused')
    .option('--log-level <level>', `log level: ${LOG_LEVELS.join(', ')}`, 'info')
    .action(async (opts: ManagerFlags) => {
      const { runManager } = await import('./manager.ts');
      setExit(await runManager(opts, io));
    });
}

export interface ProgramOptions {
  /** How the program is called in help and completion (default `workloadspread`). */
  name?: string;
}

export function buildProgram(io: CliIo, setExit: (code: number) => void, options: ProgramOptions = {}): Command {
  const program = new Command(options.name ?? COMMAND_NAME)
    .description('Spread the pods of one workload across zones, node pools and hardware (OpenKruise WorkloadSpread compatible).')
    .version(VERSION, '--version')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    // --version belongs before the sub-command; after it, every word is the sub-command's.
    .enablePositionalOptions()
    .exitOverride();

  program
    .command('validate')
    .description('Validate WorkloadSpread manifests (other kinds in the files are used as context and otherwise ignored).')
    .requiredOption('-f, --filename <file...>', 'manifest files (multi-document YAML or JSON); - reads stdin')
    .option('--unschedulable-recovery-seconds <n>', 'the manager setting that bounds rescheduleCriticalSeconds', '300')
    .option('--whitelist <file>', 'custom-workload whitelist: the config map manifest or its JSON value')
    .option('--max-input-size <size>', MAX_INPUT_HELP)
    .option('--allow-privileged-subset-patches', 'accept privilege-bearing fields in subset patches, as a manager started with that flag does')
    .action(async (opts: { filename: string[]; unschedulableRecoverySeconds: string; whitelist?: string; maxInputSize?: string; allowPrivilegedSubsetPatches?: boolean }) => {
      const { runValidate } = await import('./validate.ts');
      setExit(
        await runValidate(
          {
            files: opts.filename,
            unschedulableRecoverySeconds: opts.unschedulableRecoverySeconds,
            ...defined({ whitelist: opts.whitelist, maxInputSize: opts.maxInputSize }),
            ...(opts.allowPrivilegedSubsetPatches === true ? { allowPrivilegedSubsetPatches: true } : {}),
          },
          io,
        ),
      );
    });

  program
    .command('manifests')
    .description('Print manifests for kubectl: `install` (default) for the whole install (the Helm chart\'s objects), `crd` for the CustomResourceDefinitions only.')
    .addArgument(listChoices(new Command().createArgument('[what]', 'install or crd').default('install'), ['install', 'crd']))
    .option('-n, --namespace <namespace>', 'the manager\'s namespace (install)', 'workloadspread-system')
    .option('--image <image>', 'the manager image, repository[:tag] (install; default workloadspread:<version>)')
    .addOption(outputOption(['yaml'], 'yaml: documents for kubectl apply -f -; or one of kubectl\'s (json, name, jsonpath=, ...): the objects as a List'))
    .option('--template <template>', 'the template of -o jsonpath')
    .action(async (what: string, opts: { namespace: string; image?: string; output: string; template?: string }) => {
      const { runManifests } = await import('./manifests.ts');
      setExit(await runManifests({ what, namespace: opts.namespace, output: opts.output, ...defined({ image: opts.image, template: opts.template }) }, io));
    });

  program
    .command('plan')
    .description('Show, without a cluster, how a WorkloadSpread places pods as the workload scales to each count in turn; pods no subset can take are shown unplaced, with what happens to them next.')
    .requiredOption('-f, --filename <file>', 'file with the WorkloadSpread (other kinds are ignored); - reads stdin')
    .requiredOption('--replicas <counts>', 'comma-separated replica counts, each at most 100000, e.g. 10,100,30')
    .addOption(new Option('-o, --output <format>', 'output format').choices([...PLAN_OUTPUTS]).default('table'))
    .option('--max-input-size <size>', MAX_INPUT_HELP)
    .action(async (opts: { filename: string; replicas: string; output: (typeof PLAN_OUTPUTS)[number]; maxInputSize?: string }) => {
      const { runPlan } = await import('./plan.ts');
      setExit(await runPlan({ file: opts.filename, replicas: opts.replicas, output: opts.output, ...defined({ maxInputSize: opts.maxInputSize }) }, io));
    });

  program
    .command('simulate')
    .description('Replay a scenario file (nodes, objects, steps, expectations; see docs/scenarios.md) on the embedded cluster with the real manager and a virtual clock, or against an existing cluster. Bounds: at most 7 days of virtual time in all (every advance and every settle and drain timeout counted; 24h per wait), 1,000 replicas per workload, 500 nodes. With --races N, under N race seeds, reporting what depends on timing. Exit 0 when every expectation holds (under every seed), 1 when one fails, 2 for a malformed scenario or one over a bound (the field named), 130 when interrupted.')
    .argument('<file>', 'the scenario (YAML); - reads stdin')
    .addOption(new Option('-o, --output <format>', 'table: a block per step; json: JSON Lines, a setup record then one object per step; html: one self-contained report file').choices([...SIMULATE_OUTPUTS]).default('table'))
    .option('--out <path>', 'where --output html writes the report (default workloadspread-report.html)')
    .option('--kubeconfig <file>', 'run against this existing cluster instead (real time; the manager must run there; the scenario nodes are created as fake nodes and removed afterwards)')
    .option('--context <name>', 'with --kubeconfig: the context to use (default: its current-context)')
    .option('--races <n>', 'race mode: play the scenario under n seeds (1..n; at most 1000), each varying the latencies and order of the embedded cluster\'s controllers, watch streams and webhook calls, and report every expectation whose outcome changed between seeds, with the seeds and the values observed (in any --output; exit 1 when one did)')
    .option('--race-seed <seed>', 'race mode under this one seed (0-4294967295), with the usual reports, to replay a run of --races; with --races, the first seed')
    .option('--max-input-size <size>', MAX_INPUT_HELP)
    .action(async (file: string, opts: { output: string; out?: string; kubeconfig?: string; context?: string; maxInputSize?: string; races?: string; raceSeed?: string }) => {
      const { runSimulate } = await import('./simulate.ts');
      setExit(await runSimulate({ file, output: opts.output, ...defined({ out: opts.out, kubeconfig: opts.kubeconfig, context: opts.context, maxInputSize: opts.maxInputSize, races: opts.races, raceSeed: opts.raceSeed }) }, io));
    });

  program
    .command('cluster')
    .description('Run the embedded Kubernetes (API server, scheduler, kubelets, workload controllers) on this machine for kubectl; Ctrl-C stops it (exit 130).')
    .option('--nodes <layout>', 'fake nodes: zones=N,perZone=N,cpu=Q,memory=Q,pods=N', 'zones=3,perZone=2,cpu=8,memory=32Gi')
    .option('--port <port>', 'API server port on 127.0.0.1 (0 picks a free one)', String(DEFAULT_PORT))
    .option('--kubeconfig <file>', `where to write the kubeconfig (default ${DEFAULT_KUBECONFIG_DISPLAY}; never ~/.kube/config; mode 0600, removed on exit)`)
    .option('--no-manager', 'do not run the WorkloadSpread manager inside')
    .addOption(new Option('--log-level <level>', 'the manager\'s log level (JSON lines on stderr)').choices([...LOG_LEVELS]).default(DEFAULT_CLUSTER_LOG_LEVEL))
    .action(async (opts: { nodes: string; port: string; kubeconfig: string; manager: boolean; logLevel: (typeof LOG_LEVELS)[number] }) => {
      const { runCluster } = await import('./cluster.ts');
      setExit(await runCluster({ nodes: opts.nodes, port: opts.port, kubeconfig: opts.kubeconfig, manager: opts.manager, logLevel: opts.logLevel }, io));
    });

  registerManagerCommand(program, io, setExit);

  program
    .command('status')
    .description('Show what WorkloadSpreads are doing in a cluster: per subset the limit, pods, ready, missing, creating, deleting, Schedulable and the deletion costs, then the pods in no subset.')
    .argument('[name]', 'one WorkloadSpread (default: every one in the namespace)')
    .option('-A, --all-namespaces', 'every namespace')
    .option('-l, --selector <selector>', 'only WorkloadSpreads with these labels (a label selector, as kubectl: app=web,tier!=db)')
    .option('-w, --watch', 'redraw on every change until Ctrl-C')
    .addOption(outputOption(STATUS_OUTPUTS, 'table, wide (with pending pods and every pod), or one of kubectl\'s: one object per WorkloadSpread, a List unless NAME is given'))
    .option('--template <template>', 'the template of -o jsonpath (as kubectl: -o jsonpath --template=\'{.items[*].metadata.name}\')')
    .option('--allow-missing-template-keys [bool]', 'with -o jsonpath and custom-columns: print nothing for a missing key instead of failing (default true)')
    .option('--no-color', 'no colours (default: colours on a terminal, unless NO_COLOR is set)')
    .action(async (name: string | undefined, opts: ClusterFlagValues & { allNamespaces?: boolean; selector?: string; watch?: boolean; output: string; template?: string; allowMissingTemplateKeys?: string | boolean; color: boolean }) => {
      const cluster = clusterFlags(opts);
      const { runStatus } = await import('./status.ts');
      setExit(
        await runStatus(
          {
            ...defined({ name, namespace: cluster.overrides.namespace, allNamespaces: opts.allNamespaces, selector: opts.selector, watch: opts.watch, template: opts.template }),
            ...(opts.allowMissingTemplateKeys === undefined ? {} : { allowMissingTemplateKeys: parseBool(opts.allowMissingTemplateKeys, '--allow-missing-template-keys') }),
            output: opts.output,
            color: opts.color,
            cluster,
          },
          io,
        ),
      );
    });
  addClusterFlags(program.commands.at(-1) as Command);

  program
    .command('demo')
    .description('Watch a WorkloadSpread work: an embedded Kubernetes with the manager inside, a Deployment spread over two zones and an elastic pool, scaled out and in, a limit changed and an Adaptive reschedule, on a virtual clock; then an HTML report.')
    .option('--report <path>', 'where to write the HTML report (default: workloadspread-demo-report.html in the temporary directory)')
    .option('--no-color', 'no colours (default: colours on a terminal, unless NO_COLOR is set)')
    .option('--fast', 'no pauses between the steps')
    .option('--step', 'wait for Enter between the steps')
    .option('--cloneset', 'the second demo: an OpenKruise CloneSet instead of the Deployment, scaled out and in and rolled out with a partition')
    .action(async (opts: { report?: string; color: boolean; fast?: boolean; step?: boolean; cloneset?: boolean }) => {
      const { runDemo } = await import('./demo.ts');
      setExit(await runDemo({ color: opts.color, ...defined({ report: opts.report, fast: opts.fast, step: opts.step, cloneset: opts.cloneset }) }, io));
    });

  program
    .command('completion')
    .description(`Print a shell completion script: source <(${program.name()} completion bash), put the zsh one in a directory of $fpath as _${program.name().replace(/ /g, '-')}, or the fish one in ~/.config/fish/completions/.`)
    .addArgument(new Command().createArgument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action(async (shell: 'bash' | 'zsh' | 'fish') => {
      const { completionScript } = await import('./completion.ts');
      io.out(completionScript(shell, program.name()));
      setExit(0);
    });

  // What the completion scripts (and kubectl, for plugins) call: the words typed so far, the last one being completed.
  program
    .command('__complete', { hidden: true })
    .argument('[words...]')
    .passThroughOptions()
    .allowUnknownOption()
    .helpOption(false)
    .action(async (words: string[]) => {
      const { completeWords, formatCompletions } = await import('./completion.ts');
      const completions = completeWords(program, words);
      if (completions.query !== undefined) {
        const [{ clusterCandidates }, { realClock }] = await Promise.all([import('./completion-cluster.ts'), import('../clock/clock.ts')]);
        completions.candidates = await clusterCandidates(completions.query, io, realClock());
      }
      io.out(formatCompletions(completions));
      setExit(0);
    });

  return program;
}

/** Runs the command line; resolves to the process exit code. */
export async function main(argv: string[], io: CliIo = processIo(), options: ProgramOptions = {}): Promise<number> {
  let code = 0;
  const program = buildProgram(
    io,
    (c) => {
      code = c;
    },
    options,
  );
  try {
    // `__complete` gets the words as typed (completion.ts reads kubectl's flags itself, and the last word is half-typed).
    await program.parseAsync(argv[0] === '__complete' ? argv : normalizeArgv(argv), { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; everything else commander reports is a usage error (already printed).
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof UsageError || err instanceof CommandError) {
      io.err(`error: ${err.message}\n`);
      return err.exitCode;
    }
    io.err(`error: ${(err as Error).message ?? String(err)}\n`);
    if (io.env.WORKLOADSPREAD_DEBUG) io.err(`${(err as Error).stack ?? ''}\n`);
    return 1;
  }
}
