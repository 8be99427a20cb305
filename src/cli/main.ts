/**
 * The `workloadspread` command. Each sub-command lives in its own module and
 * is a function `(options, io) => exit code`; this file wires them into
 * commander, maps usage errors to exit code 2 and every other failure to a
 * one-line message (never a stack trace, unless WORKLOADSPREAD_DEBUG is set).
 */
import { Command, CommanderError, Option } from 'commander';
import { CommandError, UsageError, processIo, type CliIo } from './io.ts';
import { runValidate, type ValidateOptions } from './validate.ts';
import { runManifests } from './manifests.ts';
import { runPlan } from './plan.ts';
import { runSimulate, SIMULATE_OUTPUTS } from './simulate.ts';
import { runCluster, DEFAULT_KUBECONFIG, DEFAULT_PORT, type ClusterCommandOptions } from './cluster.ts';
import { runStatus } from './status.ts';
import { runDemo } from './demo.ts';
import { registerManagerCommand } from './manager.ts';

const VERSION = '0.1.0';

export function buildProgram(io: CliIo, setExit: (code: number) => void): Command {
  const program = new Command('workloadspread')
    .description('Spread the pods of one workload across zones, node pools and hardware (OpenKruise WorkloadSpread compatible).')
    .version(VERSION, '--version')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();

  program
    .command('validate')
    .description('Validate WorkloadSpread manifests (other kinds in the files are used as context and otherwise ignored).')
    .requiredOption('-f, --filename <file...>', 'manifest files (multi-document YAML or JSON)')
    .option('--unschedulable-recovery-seconds <n>', 'the manager setting that bounds rescheduleCriticalSeconds', '300')
    .option('--whitelist <file>', 'custom-workload whitelist: the config map manifest or its JSON value')
    .option('--allow-privileged-subset-patches', 'accept privilege-bearing fields in subset patches, as a manager started with that flag does')
    .action(async (opts: { filename: string[]; unschedulableRecoverySeconds: string; whitelist?: string; allowPrivilegedSubsetPatches?: boolean }) => {
      const options: ValidateOptions = { files: opts.filename, unschedulableRecoverySeconds: opts.unschedulableRecoverySeconds };
      if (opts.whitelist !== undefined) options.whitelist = opts.whitelist;
      if (opts.allowPrivilegedSubsetPatches === true) options.allowPrivilegedSubsetPatches = true;
      setExit(await runValidate(options, io));
    });

  program
    .command('manifests')
    .description('Print manifests for kubectl: `install` (default) for the whole install (the Helm chart\'s objects), `crd` for the CustomResourceDefinitions only.')
    .argument('[what]', 'install or crd', 'install')
    .option('-n, --namespace <namespace>', 'the manager\'s namespace (install)', 'workloadspread-system')
    .option('--image <image>', 'the manager image, repository[:tag] (install; default workloadspread:<version>)')
    .action(async (what: string, opts: { namespace: string; image?: string }) => {
      setExit(await runManifests({ what, namespace: opts.namespace, ...(opts.image === undefined ? {} : { image: opts.image }) }, io));
    });

  program
    .command('plan')
    .description('Show, without a cluster, how a WorkloadSpread places pods as the workload scales to each count in turn.')
    .requiredOption('-f, --filename <file>', 'file with the WorkloadSpread (other kinds are ignored)')
    .requiredOption('--replicas <counts>', 'comma-separated replica counts, e.g. 10,100,30')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (opts: { filename: string; replicas: string; output: 'table' | 'json' }) => {
      setExit(await runPlan({ file: opts.filename, replicas: opts.replicas, output: opts.output }, io));
    });

  program
    .command('simulate')
    .description('Replay a scenario file (nodes, objects, steps, expectations; see docs/scenarios.md) on the embedded cluster with the real manager and a virtual clock, or against an existing cluster. Exit 0 when every expectation holds, 1 when one fails, 2 for a malformed scenario.')
    .argument('<file>', 'the scenario (YAML)')
    .addOption(new Option('-o, --output <format>', 'table: a block per step; json: JSON Lines, one object per step; html: one self-contained report file').choices([...SIMULATE_OUTPUTS]).default('table'))
    .option('--out <path>', 'where --output html writes the report (default workloadspread-report.html)')
    .option('--kubeconfig <file>', 'run against this existing cluster instead (real time; the manager must run there; the scenario nodes are created as fake nodes and removed afterwards)')
    .action(async (file: string, opts: { output: string; out?: string; kubeconfig?: string }) => {
      setExit(await runSimulate({ file, output: opts.output, ...(opts.out === undefined ? {} : { out: opts.out }), ...(opts.kubeconfig === undefined ? {} : { kubeconfig: opts.kubeconfig }) }, io));
    });

  program
    .command('cluster')
    .description('Run the embedded Kubernetes (API server, scheduler, kubelets, workload controllers) on this machine for kubectl; Ctrl-C stops it.')
    .option('--nodes <layout>', 'fake nodes: zones=N,perZone=N,cpu=Q,memory=Q,pods=N', 'zones=3,perZone=2,cpu=8,memory=32Gi')
    .option('--port <port>', 'API server port on 127.0.0.1 (0 picks a free one)', String(DEFAULT_PORT))
    .option('--kubeconfig <file>', 'where to write the kubeconfig (never ~/.kube/config; removed on exit)', DEFAULT_KUBECONFIG)
    .option('--no-manager', 'do not run the WorkloadSpread manager inside')
    .action(async (opts: { nodes: string; port: string; kubeconfig: string; manager: boolean }) => {
      const options: ClusterCommandOptions = { nodes: opts.nodes, port: opts.port, kubeconfig: opts.kubeconfig, manager: opts.manager };
      setExit(await runCluster(options, io));
    });

  registerManagerCommand(program, io, setExit);

  program
    .command('status')
    .description('Show what WorkloadSpreads are doing in a cluster: per subset the limit, pods, ready, missing, creating, deleting, Schedulable and the deletion costs, then the pods in no subset.')
    .argument('[name]', 'one WorkloadSpread (default: every one in the namespace)')
    .option('-n, --namespace <namespace>', "the namespace (default: the kubeconfig context's)")
    .option('-A, --all-namespaces', 'every namespace')
    .option('--kubeconfig <file>', 'the kubeconfig (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)')
    .option('-w, --watch', 'redraw on every change until Ctrl-C')
    .addOption(new Option('-o, --output <format>', 'output format (json: one line per snapshot)').choices(['table', 'json']).default('table'))
    .option('--no-color', 'no colours (default: colours on a terminal, unless NO_COLOR is set)')
    .action(async (name: string | undefined, opts: { namespace?: string; allNamespaces?: boolean; kubeconfig?: string; watch?: boolean; output: string; color: boolean }) => {
      setExit(
        await runStatus(
          {
            ...(name === undefined ? {} : { name }),
            ...(opts.namespace === undefined ? {} : { namespace: opts.namespace }),
            ...(opts.allNamespaces === undefined ? {} : { allNamespaces: opts.allNamespaces }),
            ...(opts.kubeconfig === undefined ? {} : { kubeconfig: opts.kubeconfig }),
            ...(opts.watch === undefined ? {} : { watch: opts.watch }),
            output: opts.output,
            color: opts.color,
          },
          io,
        ),
      );
    });

  program
    .command('demo')
    .description('Watch a WorkloadSpread work: an embedded Kubernetes with the manager inside, a Deployment spread over two zones and an elastic pool, scaled out and in, a limit changed and an Adaptive reschedule, on a virtual clock; then an HTML report.')
    .option('--report <path>', 'where to write the HTML report (default: workloadspread-demo-report.html in the temporary directory)')
    .option('--no-color', 'no colours (default: colours on a terminal, unless NO_COLOR is set)')
    .option('--fast', 'no pauses between the steps')
    .option('--step', 'wait for Enter between the steps')
    .action(async (opts: { report?: string; color: boolean; fast?: boolean; step?: boolean }) => {
      setExit(
        await runDemo(
          {
            color: opts.color,
            ...(opts.report === undefined ? {} : { report: opts.report }),
            ...(opts.fast === undefined ? {} : { fast: opts.fast }),
            ...(opts.step === undefined ? {} : { step: opts.step }),
          },
          io,
        ),
      );
    });

  return program;
}

/** Runs the command line; resolves to the process exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let code = 0;
  const program = buildProgram(io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
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
