/**
 * The install's container arguments mean what the install intends: the Deployment's args, from
 * `workloadspread manifests` and from the chart, go through the real `workloadspread manager` flag
 * parser (commander + `managerSettings`, with the manager itself not started), after the kubelet's
 * `$(POD_NAMESPACE)` substitution, and come out as the settings the RBAC and the Service assume.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { captureIo } from '../testing/cli-io.ts';
import { readFileSync } from 'node:fs';
import { CHART_DIR, helmTemplate, helmTemplateRaw, helmValues } from '../testing/helm.ts';
import { installObjects } from './install-manifests.ts';
import { defaultInstallValues, INSTALL_NAMES, type InstallValues } from './install-values.ts';
import { registerManagerCommand } from './main.ts';
import { managerSettings, type ManagerFlags, type ManagerSettings } from './manager.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test navigation of parsed YAML

/** Parses `manager <args>` with the real command definition, returning the checked settings. */
async function parseManagerArgs(args: string[], namespace: string): Promise<ManagerSettings> {
  const io = captureIo();
  const program = new Command('workloadspread').exitOverride();
  registerManagerCommand(program, io, () => {});
  const manager = program.commands.find((c) => c.name() === 'manager');
  assert.ok(manager, 'no manager command');
  let settings: ManagerSettings | undefined;
  manager.action((opts: ManagerFlags) => {
    settings = managerSettings(opts, io, '/nonexistent');
  });
  // The kubelet expands $(VAR) references to the container's environment.
  const expanded = args.map((a) => a.replaceAll('$(POD_NAMESPACE)', namespace));
  await program.parseAsync(['manager', ...expanded], { from: 'user' });
  assert.ok(settings, 'the manager action did not run');
  return settings;
}

function deploymentArgs(objects: { kind?: string }[]): string[] {
  const d = objects.find((o) => o.kind === 'Deployment') as Obj | undefined;
  assert.ok(d);
  return d.spec.template.spec.containers[0].args as string[];
}

describe('the install starts the manager with the settings it assumes', () => {
  test('default install (manifests): namespace, ports, leader election, generated certificates, no self-registration', async () => {
    const values = defaultInstallValues();
    const s = await parseManagerArgs(deploymentArgs(installObjects({ namespace: 'workloadspread-system', values })), 'workloadspread-system');
    assert.equal(s.namespace, 'workloadspread-system');
    assert.equal(s.webhookPort, values.webhook.port);
    assert.equal(s.webhookService, INSTALL_NAMES.service);
    assert.equal(s.leaderElect, true);
    assert.equal(s.leaderElectionId, INSTALL_NAMES.lease);
    assert.equal(s.whitelistConfigMap, INSTALL_NAMES.whitelistConfigMap);
    assert.equal(s.registerWebhooks, false, 'the install ships the webhook configurations; the manager must not need create on them');
    assert.equal(s.certDir, undefined);
    assert.equal(s.webhookUrl, undefined);
    assert.equal(s.workers, 3);
    assert.equal(s.unschedulableRecoverySeconds, 300);
    assert.equal(s.guardPodDeletion, false, 'budgets guard evictions only unless asked (docs/disruption-budgets.md)');
    assert.equal(s.webhookHost, '0.0.0.0');
    assert.equal(s.clientCaFile, undefined);
    assert.equal(s.allowPrivilegedSubsetPatches, false);
    assert.equal(s.logLevel, 'info');
    assert.deepEqual(s.metricsAddress, { host: '0.0.0.0', port: 8080 });
    assert.deepEqual(s.healthAddress, { host: '0.0.0.0', port: 8081 });
    assert.equal(s.kubeApiQps, values.manager.kubeApi.qps);
    assert.equal(s.kubeApiBurst, values.manager.kubeApi.burst);
    assert.deepEqual([s.leaseDurationMs, s.renewDeadlineMs, s.retryPeriodMs], [15_000, 10_000, 2_000]);
  });

  test('chart with other Lease timings and API rate limits: they reach the manager', async () => {
    const overrides = { leaderElection: { leaseDuration: '1m30s', renewDeadline: '1500ms', retryPeriod: '1.2s' }, manager: { kubeApi: { qps: 7.5, burst: 120 } } };
    const args = deploymentArgs(await helmTemplate(overrides, { release: 'ws', namespace: 'ops' }));
    const s = await parseManagerArgs(args, 'ops');
    assert.equal(s.leaderElect, true);
    assert.deepEqual([s.leaseDurationMs, s.renewDeadlineMs, s.retryPeriodMs], [90_000, 1_500, 1_200]);
    assert.equal(s.kubeApiQps, 7.5);
    assert.equal(s.kubeApiBurst, 120);
    const values = (await helmValues(overrides)) as unknown as InstallValues;
    assert.deepEqual(deploymentArgs(installObjects({ namespace: 'ops', values })), args);
    // No limit: qps 0.
    const unlimited = await parseManagerArgs(deploymentArgs(await helmTemplate({ manager: { kubeApi: { qps: 0 } } }, { release: 'ws', namespace: 'ops' })), 'ops');
    assert.equal(unlimited.kubeApiQps, 0);
  });

  test('chart with watchNamespaces: the manager caches those only; refused with the cluster webhook scope', async () => {
    const overrides = { manager: { watchNamespaces: ['team-a', 'team-b'] } };
    const args = deploymentArgs(await helmTemplate(overrides, { release: 'ws', namespace: 'ops' }));
    assert.deepEqual((await parseManagerArgs(args, 'ops')).watchNamespaces, ['team-a', 'team-b']);
    const values = (await helmValues(overrides)) as unknown as InstallValues;
    assert.deepEqual(deploymentArgs(installObjects({ namespace: 'ops', values })), args, 'the chart and workloadspread manifests render the same');
    assert.equal((await parseManagerArgs(deploymentArgs(await helmTemplate({}, { release: 'ws', namespace: 'ops' })), 'ops')).watchNamespaces, undefined, 'every namespace by default');
    const both = { manager: { watchNamespaces: ['team-a'] }, webhook: { scope: 'cluster' } };
    const refused = await helmTemplateRaw(both);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /manager\.watchNamespaces needs webhook\.scope: namespaces/);
    assert.throws(() => installObjects({ namespace: 'ops', values: { ...values, webhook: { ...values.webhook, scope: 'cluster' } } }), /manager\.watchNamespaces needs webhook\.scope: namespaces/);
  });

  test('chart with non-default values: every value reaches the manager', async () => {
    const overrides = {
      replicas: 1,
      leaderElection: { enabled: false },
      logLevel: 'debug',
      manager: { workers: 7, unschedulableRecoverySeconds: 60, guardPodDeletion: true, allowPrivilegedSubsetPatches: true },
      webhook: { port: 10250, host: '10.1.2.3', clientAuth: { caBundle: 'PEM', allowedNames: ['kube-apiserver-admission', 'apiserver-2'] } },
      metrics: { port: 9090 },
      health: { port: 9091 },
      certificates: { certManager: { enabled: true } },
    };
    const args = deploymentArgs(await helmTemplate(overrides, { release: 'ws', namespace: 'ops' }));
    const s = await parseManagerArgs(args, 'ops');
    assert.equal(s.namespace, 'ops');
    assert.equal(s.leaderElect, false);
    assert.equal(s.logLevel, 'debug');
    assert.equal(s.workers, 7);
    assert.equal(s.unschedulableRecoverySeconds, 60);
    assert.equal(s.guardPodDeletion, true, 'manager.guardPodDeletion turns --guard-pod-deletion on');
    assert.equal(s.webhookPort, 10250);
    assert.equal(s.webhookHost, '10.1.2.3');
    assert.equal(s.clientCaFile, `${INSTALL_NAMES.clientCaDir}/ca.crt`);
    assert.deepEqual(s.clientCertAllowedNames, ['kube-apiserver-admission', 'apiserver-2']);
    assert.equal(s.allowPrivilegedSubsetPatches, true);
    assert.deepEqual(s.metricsAddress, { host: '0.0.0.0', port: 9090 });
    assert.deepEqual(s.healthAddress, { host: '0.0.0.0', port: 9091 });
    assert.equal(s.certDir, INSTALL_NAMES.certDir);
    // The same args from the TS builder for the same values.
    const values = (await helmValues(overrides)) as unknown as InstallValues;
    assert.deepEqual(deploymentArgs(installObjects({ namespace: 'ops', values })), args);
  });

  test('chart with a webhook URL and other names: the manager gets the URL (for its certificate) and finds its objects by the names the chart gave them', async () => {
    const overrides = { fullnameOverride: 'platform-ws', webhook: { url: 'https://ws.example.com:9443/' } };
    const objects = await helmTemplate(overrides, { release: 'ws', namespace: 'ops' });
    const s = await parseManagerArgs(deploymentArgs(objects), 'ops');
    assert.equal(s.webhookUrl, 'https://ws.example.com:9443');
    assert.equal(s.registerWebhooks, false, 'the chart owns the configurations: the manager only keeps its caBundle and namespaces');
    assert.equal(s.webhookService, 'platform-ws-webhook');
    assert.equal(s.certSecret, 'platform-ws-webhook-certs');
    assert.equal(s.leaderElectionId, 'platform-ws-manager');
    assert.equal(s.whitelistConfigMap, 'platform-ws-configuration');
    const byKind = (kind: string) => objects.filter((o) => o.kind === kind).map((o) => o.metadata?.name);
    assert.deepEqual(byKind('Service'), [s.webhookService]);
    assert.deepEqual(byKind('ConfigMap'), [s.whitelistConfigMap]);
    const role = objects.find((o) => o.kind === 'Role') as Obj;
    assert.deepEqual(role['rules'].flatMap((r: Obj) => r.resourceNames ?? []), [s.leaderElectionId, s.certSecret, s.whitelistConfigMap]);
    const values = (await helmValues(overrides)) as unknown as InstallValues;
    assert.deepEqual(deploymentArgs(installObjects({ namespace: 'ops', values })), deploymentArgs(objects));
  });

  test('default install: the manager\'s default names are the install\'s', async () => {
    const s = await parseManagerArgs(deploymentArgs(installObjects({ namespace: 'x', values: defaultInstallValues() })), 'x');
    assert.equal(s.certSecret, INSTALL_NAMES.secret);
    assert.equal(s.webhookService, INSTALL_NAMES.service);
  });

  test('every log level the chart schema allows is one the manager accepts', async () => {
    const schema = JSON.parse(readFileSync(`${CHART_DIR}/values.schema.json`, 'utf8')) as Obj;
    for (const level of schema['properties'].logLevel.enum as string[]) {
      const values = defaultInstallValues();
      values.logLevel = level;
      const s = await parseManagerArgs(deploymentArgs(installObjects({ namespace: 'x', values })), 'x');
      assert.equal(s.logLevel, level);
    }
  });
});
