/**
 * The webhook's fixed names — its HTTP paths, its two configurations and the
 * certificate Secret — in a module that imports nothing, so the install
 * (`workloadspread manifests`, the chart's checks) can render them without
 * loading the server or the certificate code.
 */

export const MUTATE_POD_PATH = '/mutate-pod';
export const VALIDATE_POD_PATH = '/validate-pod';
export const VALIDATE_WORKLOADSPREAD_PATH = '/validate-apps-kruise-io-workloadspread';
export const VALIDATE_DDB_PATH = '/validate-policy-workloadspread-io-domaindisruptionbudget';

export const MUTATING_CONFIGURATION_NAME = 'workloadspread-mutating-webhook-configuration';
export const VALIDATING_CONFIGURATION_NAME = 'workloadspread-validating-webhook-configuration';

/** The Secret holding the generated CA and serving certificate, shared by every replica. */
export const DEFAULT_SECRET_NAME = 'workloadspread-webhook-certs';
