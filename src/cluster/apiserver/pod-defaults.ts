/**
 * Scheme defaults of pods and pod templates (k8s.io/kubernetes/pkg/apis/core/v1/defaults.go:
 * SetDefaults_Pod, SetDefaults_PodSpec, SetDefaults_Container and friends), the
 * fields a user sees appear after `kubectl apply`.
 *
 * Pod-only defaults (not templates, as upstream keeps them out of templates so
 * that workloads do not roll on upgrade): `enableServiceLinks`, requests
 * copied from limits. Admission-time defaults (serviceAccountName, priority,
 * the not-ready/unreachable tolerations of DefaultTolerationSeconds) are not
 * scheme defaults and belong to the admission plugins.
 * Everything tolerates malformed input: fields of the wrong type are left alone.
 */
import { asArray, asRecord, asString } from '../../k8s/raw-json.ts';

type Json = Record<string, unknown>;

function setIfAbsent(obj: Json, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

/** The tag of an image reference as docker's parser reads it; `latest` when there is neither tag nor digest. */
export function imageTag(image: string): string {
  if (image.includes('@')) {
    const beforeDigest = image.slice(0, image.indexOf('@'));
    const lastSlash = beforeDigest.lastIndexOf('/');
    const colon = beforeDigest.indexOf(':', lastSlash + 1);
    return colon >= 0 ? beforeDigest.slice(colon + 1) : '';
  }
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  return colon >= 0 ? image.slice(colon + 1) : 'latest';
}

function defaultProbe(probe: unknown): void {
  const p = asRecord(probe);
  if (p === undefined) return;
  setIfAbsent(p, 'timeoutSeconds', 1);
  setIfAbsent(p, 'periodSeconds', 10);
  setIfAbsent(p, 'successThreshold', 1);
  setIfAbsent(p, 'failureThreshold', 3);
  const httpGet = asRecord(p['httpGet']);
  if (httpGet !== undefined) {
    setIfAbsent(httpGet, 'path', '/');
    setIfAbsent(httpGet, 'scheme', 'HTTP');
  }
}

function defaultContainer(container: unknown, hostNetwork: boolean): void {
  const c = asRecord(container);
  if (c === undefined) return;
  if ((asString(c['imagePullPolicy']) ?? '') === '') {
    c['imagePullPolicy'] = imageTag(asString(c['image']) ?? '') === 'latest' ? 'Always' : 'IfNotPresent';
  }
  setIfAbsent(c, 'terminationMessagePath', '/dev/termination-log');
  setIfAbsent(c, 'terminationMessagePolicy', 'File');
  setIfAbsent(c, 'resources', {});
  for (const port of asArray(c['ports']) ?? []) {
    const p = asRecord(port);
    if (p === undefined) continue;
    setIfAbsent(p, 'protocol', 'TCP');
    if (hostNetwork && p['hostPort'] === undefined && typeof p['containerPort'] === 'number') p['hostPort'] = p['containerPort'];
  }
  for (const env of asArray(c['env']) ?? []) {
    const fieldRef = asRecord(asRecord(asRecord(env)?.['valueFrom'])?.['fieldRef']);
    if (fieldRef !== undefined) setIfAbsent(fieldRef, 'apiVersion', 'v1');
  }
  defaultProbe(c['livenessProbe']);
  defaultProbe(c['readinessProbe']);
  defaultProbe(c['startupProbe']);
}

const MODE_0644 = 420;

function defaultVolume(volume: unknown): void {
  const v = asRecord(volume);
  if (v === undefined) return;
  const sources = Object.keys(v).filter((k) => k !== 'name');
  if (sources.length === 0) v['emptyDir'] = {};
  for (const key of ['configMap', 'secret', 'downwardAPI', 'projected']) {
    const source = asRecord(v[key]);
    if (source !== undefined) setIfAbsent(source, 'defaultMode', MODE_0644);
  }
}

/** SetDefaults_PodSpec and the defaults of everything inside it. */
export function defaultPodSpec(spec: unknown): void {
  const s = asRecord(spec);
  if (s === undefined) return;
  setIfAbsent(s, 'dnsPolicy', 'ClusterFirst');
  setIfAbsent(s, 'restartPolicy', 'Always');
  setIfAbsent(s, 'securityContext', {});
  setIfAbsent(s, 'terminationGracePeriodSeconds', 30);
  setIfAbsent(s, 'schedulerName', 'default-scheduler');
  const hostNetwork = s['hostNetwork'] === true;
  for (const c of asArray(s['containers']) ?? []) defaultContainer(c, hostNetwork);
  for (const c of asArray(s['initContainers']) ?? []) defaultContainer(c, hostNetwork);
  for (const v of asArray(s['volumes']) ?? []) defaultVolume(v);
}

/** Defaults of a pod template (workload `spec.template`). */
export function defaultPodTemplate(template: unknown): void {
  const t = asRecord(template);
  if (t === undefined) return;
  defaultPodSpec(t['spec']);
}

/** SetDefaults_Pod: the pod spec defaults plus the pod-only ones. */
export function defaultPod(pod: Json): void {
  const spec = asRecord(pod['spec']);
  if (spec === undefined) return;
  defaultPodSpec(spec);
  setIfAbsent(spec, 'enableServiceLinks', true);
  for (const list of [spec['containers'], spec['initContainers']]) {
    for (const container of asArray(list) ?? []) {
      const resources = asRecord(asRecord(container)?.['resources']);
      const limits = asRecord(resources?.['limits']);
      if (resources === undefined || limits === undefined) continue;
      const requests = asRecord(resources['requests']) ?? {};
      for (const [name, value] of Object.entries(limits)) if (requests[name] === undefined) requests[name] = value;
      resources['requests'] = requests;
    }
  }
}
