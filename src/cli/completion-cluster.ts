/**
 * The completion candidates only the cluster or the kubeconfig knows (completion.ts says which):
 * WorkloadSpread names in the namespace the typed flags select (`-n`, else the context's), the
 * namespaces, and the kubeconfig's contexts, clusters and users. Read with the flags typed so far
 * (`--kubeconfig`, `--context`, `--server`, `--token`, ...), with a short request timeout; any
 * failure (no kubeconfig, cluster down, refused) completes nothing, silently, as kubectl does.
 */
import type { Clock } from '../clock/clock.ts';
import { loadKubeconfig } from '../client/config.ts';
import { BUILTIN } from '../client/resources.ts';
import type { KubeList } from '../client/http-client.ts';
import { WORKLOADSPREAD_REF } from '../kube/refs.ts';
import type { ClusterQuery } from './completion.ts';
import type { CliIo } from './io.ts';
import { clusterFlags } from './kube-flags.ts';
import { connect } from './status.ts';

/** Completion must answer while the user waits at the prompt. */
const COMPLETION_TIMEOUT_MS = 5_000;

async function names(query: ClusterQuery, io: CliIo, clock: Clock): Promise<string[]> {
  const flags = clusterFlags(query.flags);
  // -v logs would land in the shell's completion output: never while completing.
  flags.verbosity = 0;
  if (query.what === 'contexts' || query.what === 'clusters' || query.what === 'users') {
    const loaded = await loadKubeconfig({ ...(flags.kubeconfig === undefined ? {} : { kubeconfig: flags.kubeconfig }), env: io.env });
    if (!loaded.ok) return [];
    return [...loaded.config[query.what].keys()];
  }
  const client = await connect({ cluster: { ...flags, requestTimeoutMs: flags.requestTimeoutMs ?? COMPLETION_TIMEOUT_MS } }, io, clock, 'workloadspread-completion');
  try {
    if (query.what === 'namespaces') return (await client.list<{ metadata?: { name?: string } }>(BUILTIN.namespaces)).items.map((n) => n.metadata?.name ?? '');
    const namespace = flags.overrides.namespace ?? client.namespace;
    const list: KubeList<{ metadata?: { name?: string } }> = await client.list(WORKLOADSPREAD_REF, { namespace });
    return list.items.map((w) => w.metadata?.name ?? '');
  } finally {
    client.connection.close();
  }
}

/** The candidates of a query, `insert` put before each; none when anything fails. */
export async function clusterCandidates(query: ClusterQuery, io: CliIo, clock: Clock): Promise<string[]> {
  let found: string[];
  try {
    found = await names(query, io, clock);
  } catch {
    return [];
  }
  return [...new Set(found)].filter((n) => n !== '' && n.startsWith(query.prefix)).sort().map((n) => `${query.insert}${n}`);
}
