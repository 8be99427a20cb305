/**
 * Names and numbers the manager's flags default to, and this release's
 * version, in a module that imports nothing: the command line shows them in
 * `--help` and the install renders them without loading the manager.
 */

/** This release (package.json, the chart's appVersion and `workloadspread_build_info`; a test keeps them equal). */
export const VERSION = '0.1.0';

export const DEFAULT_LEASE_NAME = 'workloadspread-manager';
export const DEFAULT_WEBHOOK_SERVICE = 'workloadspread-webhook';
export const DEFAULT_WEBHOOK_PORT = 9443;
