// `helm test` of the workloadspread chart (templates/tests/webhook-test.yaml runs it with `node -e` in
// the manager image; src/cli/chart-upgrade.test.ts runs this file against the embedded cluster).
//
// Asks the API server to create, as a dry run, a WorkloadSpread whose two subsets share a name: the
// CRD's schema accepts it, the manager's validating webhook refuses it. So the test passes only when
// the API server called the manager through the webhook configuration (its Service or URL, its
// certificate and caBundle) and the manager answered. Retries while the webhook cannot be called
// (a manager still starting), for TEST_TIMEOUT_SECONDS (default 60). Node built-ins only.
'use strict';
const https = require('node:https');
const fs = require('node:fs');

const dir = process.env.SERVICE_ACCOUNT_DIR || '/var/run/secrets/kubernetes.io/serviceaccount';
const host = process.env.KUBERNETES_SERVICE_HOST;
const port = Number(process.env.KUBERNETES_SERVICE_PORT || '443');
const webhook = process.env.WEBHOOK_NAME || 'vworkloadspread.workloadspread.io';
const timeoutMs = Number(process.env.TEST_TIMEOUT_SECONDS || '60') * 1000;
const deadline = Date.now() + timeoutMs;

function fail(message) {
  console.error(`FAIL: ${message}`);
  process.exit(1);
}

if (!host) fail('KUBERNETES_SERVICE_HOST is not set: not running in a cluster?');
let token;
let ca;
let namespace;
try {
  token = fs.readFileSync(`${dir}/token`, 'utf8').trim();
  ca = fs.readFileSync(`${dir}/ca.crt`);
  namespace = process.env.TEST_NAMESPACE || fs.readFileSync(`${dir}/namespace`, 'utf8').trim();
} catch (err) {
  fail(`cannot read the service account's credentials in ${dir}: ${err.message}`);
}

const body = JSON.stringify({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'WorkloadSpread',
  metadata: { name: 'helm-test-webhook', namespace },
  spec: {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'helm-test-webhook' },
    subsets: [
      { name: 'duplicate', maxReplicas: 1 },
      { name: 'duplicate', maxReplicas: 1 },
    ],
  },
});

function post() {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host,
        port,
        method: 'POST',
        path: `/apis/apps.kruise.io/v1alpha1/namespaces/${encodeURIComponent(namespace)}/workloadspreads?dryRun=All`,
        ca,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body) },
        timeout: 40_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          let message = text;
          try {
            message = JSON.parse(text).message || text;
          } catch {
            // not JSON: the text itself
          }
          resolve({ code: res.statusCode || 0, message });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 40 s')));
    req.on('error', (err) => resolve({ code: 0, message: `cannot reach the API server at ${host}:${port}: ${err.message}` }));
    req.end(body);
  });
}

async function main() {
  for (let attempt = 1; ; attempt++) {
    const { code, message } = await post();
    if (code >= 200 && code < 300) fail(`the API server admitted an invalid WorkloadSpread (${code}): webhook ${webhook} did not refuse it — is its failurePolicy Ignore while no manager answers?`);
    if (message.includes(`admission webhook "${webhook}" denied the request`) && message.includes('duplicated subset name')) {
      console.log(`ok: the API server called the WorkloadSpread manager (webhook ${webhook}), which answered: ${message}`);
      return;
    }
    const retry = code === 0 || message.includes('failed calling webhook');
    if (!retry || Date.now() >= deadline) fail(`${code === 0 ? '' : `${code} `}${message}`);
    console.log(`attempt ${attempt}: ${message}; trying again`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

main().catch((err) => fail(err && err.stack ? err.stack : String(err)));
