/**
 * The Service strategy (k8s.io/kubernetes/pkg/registry/core/service): defaults
 * (type ClusterIP, sessionAffinity None, port protocol TCP and targetPort =
 * port, single-stack IPv4, traffic policies), cluster IP allocation from
 * 10.96.0.0/12 (10.96.0.1 is the `kubernetes` Service's), node ports from
 * 30000-32767, port validation, and immutable cluster IPs.
 *
 * The allocator lives in one `ServiceAllocator` per API server; released IPs
 * become free again (the server calls `release` when a Service is deleted).
 * A dry-run create allocates too (and never releases); the range is large
 * enough for that not to matter here.
 */
import { deepEqual } from '../../../k8s/json.ts';
import { invalid, notSupported, required, root, type FieldError } from '../../../k8s/field-errors.ts';
import { validateLabels } from '../../../k8s/meta-validation.ts';
import { asArray, asNumber, asRecord, asString } from '../../../k8s/raw-json.ts';
import type { KubeObject } from '../../../k8s/types.ts';
import type { ResourceStrategy } from '../resource-def.ts';
import { setIfAbsent, specOf, strategy } from './base.ts';

const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
// 10.96.0.0/12 as a 32-bit number range; .0 is the network address.
const CIDR_BASE = (10 << 24) | (96 << 16);
const CIDR_SIZE = 1 << 20;

export class ServiceAllocator {
  #ips = new Set<string>();
  #ports = new Set<number>();
  #nextIp = 1;
  #nextPort = 30000;

  /** Reserves `ip` (when free) or the next free address. */
  allocateIp(requested?: string): string | undefined {
    if (requested !== undefined && requested !== '') {
      if (this.#ips.has(requested)) return undefined;
      this.#ips.add(requested);
      return requested;
    }
    for (let i = 0; i < CIDR_SIZE - 2; i++) {
      const offset = ((this.#nextIp - 1 + i) % (CIDR_SIZE - 2)) + 1;
      const n = CIDR_BASE + offset;
      const ip = `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
      if (!this.#ips.has(ip)) {
        this.#ips.add(ip);
        this.#nextIp = offset + 1;
        return ip;
      }
    }
    return undefined;
  }

  allocatePort(requested?: number): number | undefined {
    if (requested !== undefined && requested !== 0) {
      if (this.#ports.has(requested)) return undefined;
      this.#ports.add(requested);
      return requested;
    }
    for (let p = this.#nextPort; p <= 32767; p++) {
      if (!this.#ports.has(p)) {
        this.#ports.add(p);
        this.#nextPort = p + 1;
        return p;
      }
    }
    return undefined;
  }

  /** Frees everything a deleted Service held. */
  release(service: KubeObject): void {
    const spec = asRecord(service['spec']) ?? {};
    for (const ip of asArray(spec['clusterIPs']) ?? []) if (typeof ip === 'string') this.#ips.delete(ip);
    for (const port of asArray(spec['ports']) ?? []) {
      const nodePort = asNumber(asRecord(port)?.['nodePort']);
      if (nodePort !== undefined) this.#ports.delete(nodePort);
    }
  }
}

function defaultService(obj: KubeObject): void {
  const spec = specOf(obj);
  setIfAbsent(spec, 'type', 'ClusterIP');
  setIfAbsent(spec, 'sessionAffinity', 'None');
  const type = asString(spec['type']);
  for (const port of asArray(spec['ports']) ?? []) {
    const p = asRecord(port);
    if (p === undefined) continue;
    setIfAbsent(p, 'protocol', 'TCP');
    if (p['targetPort'] === undefined || p['targetPort'] === null || p['targetPort'] === 0 || p['targetPort'] === '') p['targetPort'] = p['port'];
  }
  if (type !== 'ExternalName') setIfAbsent(spec, 'internalTrafficPolicy', 'Cluster');
  if (type === 'NodePort' || type === 'LoadBalancer') setIfAbsent(spec, 'externalTrafficPolicy', 'Cluster');
}

function validateService(obj: KubeObject): FieldError[] {
  const spec = asRecord(obj['spec']) ?? {};
  const path = root('spec');
  const errs: FieldError[] = [];
  const type = asString(spec['type']) ?? '';
  if (!SERVICE_TYPES.includes(type)) errs.push(notSupported(path.child('type'), type, SERVICE_TYPES));
  const ports = asArray(spec['ports']) ?? [];
  const headless = asString(spec['clusterIP']) === 'None';
  if (ports.length === 0 && type !== 'ExternalName' && !headless) errs.push(required(path.child('ports')));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const p = asRecord(port) ?? {};
    const pp = path.child('ports').index(i);
    const name = asString(p['name']) ?? '';
    if (ports.length > 1 && name === '') errs.push(required(pp.child('name')));
    if (name !== '' && names.has(name)) errs.push({ type: 'FieldValueDuplicate', field: pp.child('name').toString(), badValue: name, detail: '' });
    names.add(name);
    const n = asNumber(p['port']) ?? 0;
    if (n < 1 || n > 65535) errs.push(invalid(pp.child('port'), n, 'must be between 1 and 65535, inclusive'));
    const protocol = asString(p['protocol']) ?? '';
    if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(pp.child('protocol'), protocol, PROTOCOLS));
  });
  if (type === 'ExternalName' && (asString(spec['externalName']) ?? '') === '') errs.push(required(path.child('externalName')));
  errs.push(...validateLabels(spec['selector'], path.child('selector')));
  return errs;
}

export function serviceStrategy(allocator: ServiceAllocator): ResourceStrategy {
  return strategy({
    applyDefaults: defaultService,
    resetStatusOnCreate: true,
    allowCreateOnUpdate: true,
    prepareForCreate: (obj) => {
      obj.status = { loadBalancer: {} };
      const spec = specOf(obj);
      const type = asString(spec['type']);
      if (type === 'ExternalName') return;
      const requested = asString(spec['clusterIP']);
      if (requested === 'None') {
        spec['clusterIPs'] = ['None'];
      } else {
        const ip = allocator.allocateIp(requested);
        if (ip !== undefined) {
          spec['clusterIP'] = ip;
          spec['clusterIPs'] = [ip];
        }
      }
      setIfAbsent(spec, 'ipFamilies', ['IPv4']);
      setIfAbsent(spec, 'ipFamilyPolicy', 'SingleStack');
      if (type === 'NodePort' || type === 'LoadBalancer') {
        for (const port of asArray(spec['ports']) ?? []) {
          const p = asRecord(port);
          if (p === undefined) continue;
          const nodePort = allocator.allocatePort(asNumber(p['nodePort']));
          if (nodePort !== undefined) p['nodePort'] = nodePort;
        }
      }
    },
    prepareForUpdate: (obj, old) => {
      const spec = specOf(obj);
      const oldSpec = asRecord(old['spec']) ?? {};
      // An update that omits the allocated addresses keeps them (as upstream's "patch allocated values").
      for (const key of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) {
        if (spec[key] === undefined && oldSpec[key] !== undefined) spec[key] = oldSpec[key];
      }
    },
    validate: validateService,
    validateUpdate: (obj, old) => {
      const errs = validateService(obj);
      const spec = asRecord(obj['spec']) ?? {};
      const oldSpec = asRecord(old['spec']) ?? {};
      if (oldSpec['clusterIPs'] !== undefined && !deepEqual(spec['clusterIPs'], oldSpec['clusterIPs'])) {
        errs.push(invalid(root('spec', 'clusterIPs').index(0), (asArray(spec['clusterIPs']) ?? [])[0] ?? '', 'may not change once set'));
      }
      return errs;
    },
  });
}
