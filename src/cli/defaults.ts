/**
 * The command line's defaults and fixed choices, in a module that imports
 * nothing heavy: main.ts defines every command from these without loading the
 * commands themselves (each is imported when it runs), so `--version`,
 * `--help` and shell completion start in milliseconds.
 */

export const DEFAULT_MANAGER_NAMESPACE = 'workloadspread-system';
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * `cluster`: where the kubeconfig goes by default — `~/.kube/` beside the
 * user's other kubeconfigs (never `~/.kube/config` itself), so the bearer
 * token it holds never lands in a working tree — and the API server's port.
 * `workloadspread.kubeconfig` was the default before (in the current directory).
 */
export const DEFAULT_KUBECONFIG_FILE = 'workloadspread-embedded.kubeconfig';
export const DEFAULT_KUBECONFIG_DISPLAY = `~/.kube/${DEFAULT_KUBECONFIG_FILE}`;
export const DEFAULT_PORT = 6443;
/** `cluster`: the manager inside logs warnings and errors only, unless told otherwise. */
export const DEFAULT_CLUSTER_LOG_LEVEL: LogLevel = 'warn';

export const SIMULATE_OUTPUTS = ['table', 'json', 'html'] as const;
/** `status`'s own formats; kubectl's object formats (json, yaml, name, jsonpath, ...) are output.ts's. */
export const STATUS_OUTPUTS = ['table', 'wide'] as const;
export const PLAN_OUTPUTS = ['table', 'json', 'yaml'] as const;

/**
 * `--max-input-size`: files (and stdin) larger than this are refused before
 * they are parsed. 10 MiB: over three times the API server's 3 MiB request
 * limit, far beyond any real manifest or scenario.
 */
export const DEFAULT_MAX_INPUT_SIZE = '10Mi';

/** Exit code after Ctrl-C or SIGTERM, once what the command started is stopped (128 + SIGINT, as shells report Ctrl-C). */
export const INTERRUPTED_EXIT_CODE = 130;
