/**
 * kubectl's global flags for the commands that talk to a cluster. kubectl hands a plugin its
 * arguments untouched (it parses none of them), so the plugin parses them itself, anywhere on the
 * command line as kubectl allows: `kubectl workloadspread --context prod status -n web` and
 * `kubectl workloadspread status -n web --context prod` mean the same.
 *
 * - `normalizeArgv` runs before commander: flags written before the sub-command move right after
 *   it (commander reads a sub-command's flags only after its name), `-o=json` becomes `-o json`
 *   (pflag's shorthand with `=`, which commander would read as the value `=json`), and the
 *   boolean flags written `--flag=true|false` become `--flag` or nothing (false is the default,
 *   and an override that is false changes nothing in clientcmd either).
 * - `addClusterFlags` defines them on a command, under their own help heading.
 * - `clusterFlags` turns the parsed values into connection overrides, a request timeout and a
 *   log level (`-v`), refusing what cannot be honoured with a line naming the flag.
 *
 * Not supported, each refused by name: `--match-server-version`, `--profile`, `--profile-output`,
 * `--vmodule`, `--warnings-as-errors`. Accepted and without effect, because what they configure
 * does not exist here: `--cache-dir` (no discovery cache is kept), `--disable-compression` (no
 * compressed answers are asked for), `--log-flush-frequency` (logs are written at once).
 */
import { Option, type Command } from 'commander';
import type { ConnectionOverrides } from '../client/kubeconfig.ts';
import { UsageError } from './io.ts';

interface FlagSpec {
  long: string;
  short?: string;
  /** The value placeholder; absent for booleans. */
  value?: string;
  repeatable?: boolean;
  description: string;
  /** Refused with "not supported". */
  unsupported?: boolean;
  /** Accepted, no effect (said in the description). */
  noEffect?: boolean;
}

export const CLUSTER_FLAGS_HEADING = "Cluster flags (kubectl's global flags, anywhere on the line):";

const FLAGS: readonly FlagSpec[] = [
  { long: 'kubeconfig', value: 'file', description: 'the kubeconfig (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)' },
  { long: 'context', value: 'name', description: 'the kubeconfig context to use (default: its current-context)' },
  { long: 'namespace', short: 'n', value: 'namespace', description: "the namespace (default: the kubeconfig context's)" },
  { long: 'cluster', value: 'name', description: "the kubeconfig cluster to use instead of the context's" },
  { long: 'user', value: 'name', description: "the kubeconfig user to use instead of the context's" },
  { long: 'server', short: 's', value: 'url', description: 'the API server URL (with --token or a certificate, no kubeconfig is needed)' },
  { long: 'tls-server-name', value: 'name', description: 'the server name to check the certificate against (default: the host of the URL)' },
  { long: 'insecure-skip-tls-verify', description: "do not check the server's certificate (insecure)" },
  { long: 'certificate-authority', value: 'file', description: "a CA file to check the server's certificate with" },
  { long: 'client-certificate', value: 'file', description: 'a client certificate file for TLS' },
  { long: 'client-key', value: 'file', description: 'the key file of the client certificate' },
  { long: 'token', value: 'token', description: 'a bearer token' },
  { long: 'username', value: 'name', description: 'basic authentication user name' },
  { long: 'password', value: 'password', description: 'basic authentication password' },
  { long: 'as', value: 'user', description: 'impersonate this user (Impersonate-User)' },
  { long: 'as-group', value: 'group', repeatable: true, description: 'impersonate this group, repeatable (Impersonate-Group; needs --as)' },
  { long: 'as-uid', value: 'uid', description: 'impersonate this UID (Impersonate-Uid; needs --as)' },
  { long: 'request-timeout', value: 'duration', description: 'give up on a request after this long: seconds, or with a unit (500ms, 10s, 2m, 1h); 0 waits forever (default 30s)' },
  { long: 'v', short: 'v', value: 'level', description: 'log HTTP requests on stderr: 6 method, URL, status and time; 7 also request headers; 8 also response headers and bodies (up to 1 KiB); 9 also curl commands and bodies up to 10 KiB; 10 whole bodies' },
  { long: 'cache-dir', value: 'dir', description: 'accepted for kubectl compatibility; no discovery cache is kept', noEffect: true },
  { long: 'disable-compression', description: 'accepted for kubectl compatibility; answers are never asked for compressed', noEffect: true },
  { long: 'log-flush-frequency', value: 'duration', description: 'accepted for kubectl compatibility; logs are written at once', noEffect: true },
  { long: 'match-server-version', description: 'not supported', unsupported: true },
  { long: 'profile', value: 'name', description: 'not supported', unsupported: true },
  { long: 'profile-output', value: 'file', description: 'not supported', unsupported: true },
  { long: 'vmodule', value: 'pattern', description: 'not supported', unsupported: true },
  { long: 'warnings-as-errors', description: 'not supported', unsupported: true },
];

/** Flags outside the global set whose spelling `normalizeArgv` also fixes (the status command's own). */
const OTHER_VALUE_SHORTS = new Set(['o', 'l', 'f']);
const OTHER_BOOLEANS = new Set(['all-namespaces', 'watch']);
const OTHER_BOOLEAN_SHORTS = new Set(['A', 'w']);
/** Booleans that default to true, defined `[bool]` in commander: written bare they become `--flag=true`, so the next word is never taken as their value. */
const OPTIONAL_BOOLEANS = new Set(['--allow-missing-template-keys']);

const BY_LONG = new Map(FLAGS.map((f) => [`--${f.long}`, f]));
const BY_SHORT = new Map(FLAGS.filter((f) => f.short !== undefined).map((f) => [`-${f.short}`, f]));

/** The global flag a word names (`--context`, `--context=x`, `-n`, `-nfoo`, `-n=foo`), if it names one. */
export function globalFlagOf(word: string): { spec: FlagSpec; inlineValue: boolean } | undefined {
  if (word.startsWith('--')) {
    const eq = word.indexOf('=');
    const spec = BY_LONG.get(eq === -1 ? word : word.slice(0, eq));
    return spec === undefined ? undefined : { spec, inlineValue: eq !== -1 };
  }
  if (word.startsWith('-') && word.length >= 2) {
    const spec = BY_SHORT.get(word.slice(0, 2));
    return spec === undefined ? undefined : { spec, inlineValue: word.length > 2 };
  }
  return undefined;
}

/** Whether a word is a global flag that takes its value from the next word. */
export function globalFlagTakesNext(word: string): boolean {
  const f = globalFlagOf(word);
  return f !== undefined && f.spec.value !== undefined && !f.inlineValue;
}

function booleanWord(word: string, longs: Set<string>): string[] | undefined {
  const m = /^--([a-z-]+)=(.*)$/.exec(word);
  if (m === null || !longs.has(m[1] as string)) return undefined;
  const v = (m[2] as string).toLowerCase();
  if (v === 'true' || v === '1' || v === 't') return [`--${m[1]}`];
  if (v === 'false' || v === '0' || v === 'f') return [];
  throw new UsageError(`--${m[1]} takes true or false, got ${JSON.stringify(m[2])}`);
}

const BOOLEAN_LONGS = new Set([...FLAGS.filter((f) => f.value === undefined).map((f) => f.long), ...OTHER_BOOLEANS]);
const VALUE_SHORTS = new Set([...FLAGS.filter((f) => f.short !== undefined && f.value !== undefined).map((f) => f.short as string), ...OTHER_VALUE_SHORTS]);

/** One word in commander's spelling (see the module comment). */
function normalizeWord(word: string): string[] {
  if (OPTIONAL_BOOLEANS.has(word)) return [`${word}=true`];
  const bool = booleanWord(word, BOOLEAN_LONGS);
  if (bool !== undefined) return bool;
  const short = /^-([A-Za-z])=(.*)$/s.exec(word);
  if (short !== null) {
    const letter = short[1] as string;
    if (VALUE_SHORTS.has(letter)) return [`-${letter}`, short[2] as string];
    if (OTHER_BOOLEAN_SHORTS.has(letter)) {
      const v = (short[2] as string).toLowerCase();
      if (v === 'true') return [`-${letter}`];
      if (v === 'false') return [];
    }
  }
  return [word];
}

/**
 * The command line in commander's spelling: global flags before the sub-command moved after it,
 * shorthand `-x=value` split, boolean `--flag=true|false` resolved. Nothing after `--` is touched.
 */
export function normalizeArgv(argv: readonly string[]): string[] {
  const before: string[] = [];
  const out: string[] = [];
  let i = 0;
  // Words before the sub-command: global flags (with their values) are held back, the rest kept.
  for (; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word === '--') break;
    const flag = globalFlagOf(word);
    if (flag !== undefined) {
      before.push(...normalizeWord(word));
      if (flag.spec.value !== undefined && !flag.inlineValue && i + 1 < argv.length) before.push(argv[++i] as string);
      continue;
    }
    if (word.startsWith('-')) {
      out.push(word);
      continue;
    }
    break;
  }
  if (i >= argv.length || argv[i] === '--') return [...out, ...before, ...argv.slice(i)];
  out.push(argv[i] as string, ...before);
  for (i++; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const flag = globalFlagOf(word);
    out.push(...normalizeWord(word));
    if (flag !== undefined && flag.spec.value !== undefined && !flag.inlineValue && i + 1 < argv.length) out.push(argv[++i] as string);
  }
  return out;
}

/** Adds the global flags to a command, under their own help heading. */
export function addClusterFlags(command: Command): Command {
  for (const f of FLAGS) {
    const flags = `${f.short === undefined || f.short === f.long ? '' : `-${f.short}, `}--${f.long}${f.value === undefined ? '' : ` <${f.value}>`}`;
    const option = new Option(f.long === 'v' ? `-v, --v <${f.value}>` : flags, f.description).helpGroup(CLUSTER_FLAGS_HEADING);
    if (f.repeatable === true) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    if (f.unsupported === true || f.noEffect === true) option.hideHelp();
    command.addOption(option);
  }
  return command;
}

/** The parsed values, as commander names them (`asGroup`, `insecureSkipTlsVerify`, `v`, ...). */
export type ClusterFlagValues = Record<string, unknown>;

export interface ClusterFlags {
  kubeconfig?: string;
  overrides: ConnectionOverrides;
  /** `--request-timeout` in ms (0: none); absent: the default. */
  requestTimeoutMs?: number;
  /** `-v` (0 when absent). */
  verbosity: number;
}

/** commander's attribute name of a long flag (`--as-group` → `asGroup`). */
export function camel(long: string): string {
  return long.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `--request-timeout`: kubectl's syntax, a whole number of seconds or a Go duration (`1m30s`,
 * `500ms`); 0 means no timeout.
 */
export function parseRequestTimeout(text: string): number {
  const problem = `--request-timeout must be a whole number of seconds or a duration with a unit (500ms, 10s, 2m, 1h), got ${JSON.stringify(text)}`;
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(t)) throw new UsageError(problem);
  let ms = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * (UNITS[m[2] as string] as number);
  return Math.ceil(ms);
}

/** The flags' meaning; throws a UsageError naming a flag that cannot be honoured. */
export function clusterFlags(values: ClusterFlagValues): ClusterFlags {
  for (const f of FLAGS) {
    if (f.unsupported === true && values[camel(f.long)] !== undefined) {
      throw new UsageError(`--${f.long} is not supported by this command (kubectl's flag has no counterpart here)`);
    }
  }
  const str = (long: string): string | undefined => {
    const v = values[camel(long)];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const overrides: ConnectionOverrides = {};
  const set = <K extends keyof ConnectionOverrides>(key: K, value: ConnectionOverrides[K] | undefined) => {
    if (value !== undefined) overrides[key] = value;
  };
  set('context', str('context'));
  set('cluster', str('cluster'));
  set('user', str('user'));
  set('namespace', str('namespace'));
  set('server', str('server'));
  set('tlsServerName', str('tls-server-name'));
  if (values['insecureSkipTlsVerify'] === true) overrides.insecureSkipTlsVerify = true;
  set('certificateAuthority', str('certificate-authority'));
  set('clientCertificate', str('client-certificate'));
  set('clientKey', str('client-key'));
  set('token', str('token'));
  set('username', str('username'));
  set('password', str('password'));
  set('impersonateUser', str('as'));
  set('impersonateUid', str('as-uid'));
  const groups = values['asGroup'];
  if (Array.isArray(groups) && groups.length > 0) overrides.impersonateGroups = groups.map(String);
  if ((overrides.impersonateGroups !== undefined || overrides.impersonateUid !== undefined) && overrides.impersonateUser === undefined) {
    throw new UsageError('--as-group and --as-uid need --as (the user to impersonate)');
  }
  if (overrides.server !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(overrides.server);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new UsageError(`--server must be an http(s) URL, got ${JSON.stringify(overrides.server)}`);
  }
  const out: ClusterFlags = { overrides, verbosity: 0 };
  const kubeconfig = str('kubeconfig');
  if (kubeconfig !== undefined) out.kubeconfig = kubeconfig;
  const timeout = str('request-timeout');
  if (timeout !== undefined) out.requestTimeoutMs = parseRequestTimeout(timeout);
  const v = str('v');
  if (v !== undefined) {
    if (!/^\d+$/.test(v)) throw new UsageError(`-v must be a log level, a whole number (6 to 10 log requests), got ${JSON.stringify(v)}`);
    out.verbosity = Number(v);
  }
  return out;
}
