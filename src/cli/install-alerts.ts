/**
 * The alerts of docs/operations.md ("Metrics and alerts") as Prometheus
 * alerting rules: what the chart's opt-in PrometheusRule
 * (`metrics.prometheusRule.enabled`, templates/prometheusrule.yaml) and
 * `workloadspread manifests` render. Tests keep the three equal: the chart's
 * rules and these (chart.test.ts), the documentation's table and these
 * (install-alerts.test.ts).
 *
 * Series whose names other software exposes too (controller-runtime's,
 * client-go's, the workqueue's, leader election's) are narrowed to the
 * manager's namespace — the `namespace` label the Prometheus Operator's
 * ServiceMonitor (or a PodMonitor) puts on every series it scrapes. The
 * `workloadspread_*` series are the manager's alone. Pure.
 */
import { stringify } from 'yaml';

export interface AlertRule {
  alert: string;
  expr: string;
  /** How long the expression must hold; omitted: fires at once. */
  for?: string;
  labels: { severity: 'critical' | 'warning' | 'info' };
  annotations: { summary: string; description: string };
}

export interface AlertOptions {
  /** The manager's namespace. */
  namespace: string;
  /** The manager's Deployment. */
  deployment: string;
  /** The leader-election Lease. */
  lease: string;
  /** The manager runs in the cluster (`manager.enabled`): the alert on its Deployment's replicas applies. */
  inCluster: boolean;
}

/** The rules, in the order of the documentation's table. */
export function managerAlerts(o: AlertOptions): AlertRule[] {
  const ns = `namespace="${o.namespace}"`;
  const rules: (AlertRule | false)[] = [
    o.inCluster && {
      alert: 'WorkloadSpreadManagerUnavailable',
      expr: `kube_deployment_status_replicas_available{${ns}, deployment="${o.deployment}"} < 1`,
      for: '5m',
      labels: { severity: 'critical' },
      annotations: { summary: 'No WorkloadSpread manager replica is available.', description: 'With failurePolicy Fail, no pod in a namespace the pod webhooks cover can be created or deleted (needs kube-state-metrics).' },
    },
    {
      alert: 'WorkloadSpreadAdmissionSlow',
      expr: `histogram_quantile(0.99, sum by (le, webhook) (rate(controller_runtime_webhook_latency_seconds_bucket{${ns}}[5m]))) > 2`,
      for: '10m',
      labels: { severity: 'warning' },
      annotations: { summary: 'Admission reviews of {{ $labels.webhook }} take more than 2 s (p99).', description: 'Every pod create waits for the webhook; at the timeout (10 s by default) the API server gives up and the create fails.' },
    },
    {
      alert: 'WorkloadSpreadAdmissionErrors',
      expr: 'sum by (webhook) (rate(workloadspread_admission_duration_seconds_count{result="errored"}[5m])) > 0',
      for: '5m',
      labels: { severity: 'critical' },
      annotations: { summary: 'Admission reviews of {{ $labels.webhook }} are failing.', description: 'An errored admission is a refused pod creation (or deletion).' },
    },
    {
      alert: 'WorkloadSpreadReconcileErrors',
      expr: `rate(controller_runtime_reconcile_errors_total{${ns}, controller="workloadspread"}[10m]) > 0`,
      for: '15m',
      labels: { severity: 'warning' },
      annotations: { summary: 'WorkloadSpread reconciles keep failing.', description: 'Status and deletion costs are going stale.' },
    },
    {
      alert: 'WorkloadSpreadNoSubsetAvailable',
      expr: 'increase(workloadspread_no_subset_available_total[15m]) > 0',
      labels: { severity: 'warning' },
      annotations: { summary: 'Pods of WorkloadSpread {{ $labels.workloadspread }} were admitted outside every subset.', description: 'All subsets were full (also a NoSubsetAvailable Warning event on the WorkloadSpread).' },
    },
    {
      alert: 'WorkloadSpreadSubsetOverLimit',
      expr: 'workloadspread_status_subset_replicas > workloadspread_spec_subsets_max_replicas',
      for: '15m',
      labels: { severity: 'warning' },
      annotations: { summary: 'Subset {{ $labels.subset }} of WorkloadSpread {{ $labels.workloadspread }} holds more pods than its limit.', description: 'A lowered maxReplicas is not enforced on running pods; scale-in removes them first.' },
    },
    {
      alert: 'WorkloadSpreadSubsetUnschedulable',
      expr: 'workloadspread_status_subset_schedulable == 0',
      for: '30m',
      labels: { severity: 'warning' },
      annotations: { summary: 'Subset {{ $labels.subset }} of WorkloadSpread {{ $labels.workloadspread }} is not schedulable.', description: 'Adaptive rescheduling keeps skipping it: check its nodes.' },
    },
    {
      alert: 'WorkloadSpreadStatusWriteConflicts',
      expr: 'sum(rate(workloadspread_status_write_conflicts_total[5m])) > 5',
      for: '10m',
      labels: { severity: 'warning' },
      annotations: { summary: 'WorkloadSpread status writes keep conflicting.', description: 'Replicas or writers keep fighting over the same WorkloadSpread status; admissions give up after 4 conflicts.' },
    },
    {
      alert: 'WorkloadSpreadStatusWritesFailing',
      expr: 'sum(rate(workloadspread_status_writes_total{result="Error"}[5m])) > 0',
      for: '5m',
      labels: { severity: 'warning' },
      annotations: { summary: 'WorkloadSpread status writes are failing.', description: 'Admissions that need a reservation fail while the status cannot be written.' },
    },
    {
      alert: 'WorkloadSpreadAPIServerErrors',
      expr: `sum(rate(rest_client_requests_total{${ns}, code=~"5..|<error>"}[5m])) > 0`,
      for: '10m',
      labels: { severity: 'warning' },
      annotations: { summary: 'The WorkloadSpread manager gets errors from the API server.', description: 'The manager cannot reach or use the API server.' },
    },
    {
      alert: 'WorkloadSpreadLeaderElection',
      expr: `sum(leader_election_master_status{${ns}, name="${o.lease}"}) != 1`,
      for: '5m',
      labels: { severity: 'warning' },
      annotations: { summary: 'No WorkloadSpread manager replica leads, or more than one does.', description: 'Nobody (or, briefly, two replicas) runs the controller.' },
    },
    {
      alert: 'WorkloadSpreadBacklog',
      expr: `workqueue_depth{${ns}, name="workloadspread"} > 100`,
      for: '10m',
      labels: { severity: 'warning' },
      annotations: { summary: 'The WorkloadSpread controller has more than 100 keys waiting.', description: 'The controller cannot keep up.' },
    },
    {
      alert: 'WorkloadSpreadCertificateExpiry',
      expr: 'workloadspread_webhook_certificate_not_after_timestamp_seconds - time() < 14 * 86400',
      for: '1h',
      labels: { severity: 'warning' },
      annotations: { summary: 'The webhook serving certificate expires within 14 days.', description: 'Generated certificates renew 30 days ahead; this fires only when renewal is not happening. At expiry the API server can no longer call the webhooks.' },
    },
    {
      alert: 'WorkloadSpreadRebalanceStuck',
      expr: 'workloadspread_rebalance_pending_pods > 0 and workloadspread_rebalance_moves_in_flight == 0',
      for: '1h',
      labels: { severity: 'warning' },
      annotations: { summary: 'WorkloadSpread {{ $labels.workloadspread }} has pods out of place and makes no move.', description: 'See status.rebalance.reason (budget refusals, no room) and the RebalanceBlocked event.' },
    },
    {
      alert: 'WorkloadSpreadRebalanceRefused',
      expr: 'increase(workloadspread_rebalance_evictions_total{result="refused"}[1h]) > 10',
      labels: { severity: 'info' },
      annotations: { summary: 'Disruption budgets keep refusing the rebalancer of WorkloadSpread {{ $labels.workloadspread }}.', description: 'A PodDisruptionBudget or DomainDisruptionBudget keeps refusing its evictions.' },
    },
  ];
  return rules.filter((r): r is AlertRule => r !== false);
}

/** Stand-ins for the names in charts/workloadspread/files/prometheus-rules.yaml, which the chart replaces. */
export const ALERT_PLACEHOLDERS: AlertOptions = Object.freeze({ namespace: '__NAMESPACE__', deployment: '__DEPLOYMENT__', lease: '__LEASE__', inCluster: true });

/** The chart's files/prometheus-rules.yaml: every rule with the stand-in names (`npx tsx scripts/gen-alerts.ts` writes it). */
export function alertRulesFile(): string {
  const header = '# Generated from src/cli/install-alerts.ts by `npx tsx scripts/gen-alerts.ts`; do not edit.\n# templates/prometheusrule.yaml replaces the __NAMES__ with the install\'s.\n';
  return header + stringify({ rules: managerAlerts(ALERT_PLACEHOLDERS) }, { lineWidth: 0 });
}
