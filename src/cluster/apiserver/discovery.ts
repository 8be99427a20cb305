/**
 * Discovery documents, built from the resource registry on every request (so
 * a CRD is discoverable as soon as it is established):
 *
 * - `/version`: a 1.32 server (`gitVersion: v1.32.4-workloadspread`);
 * - `/api` (APIVersions), `/apis` (APIGroupList), `/apis/<g>` (APIGroup),
 *   `/api/v1` and `/apis/<g>/<v>` (APIResourceList, subresources as
 *   `pods/status` entries, with `storageVersionHash` computed as upstream);
 * - the aggregated form (`apidiscovery.k8s.io/v2` APIGroupDiscoveryList) that
 *   kubectl 1.32 asks `/api` and `/apis` for first, when the Accept header
 *   asks for it (v2, or v2beta1).
 */
import { createHash } from 'node:crypto';
import type { ResourceDef } from './resource-def.ts';
import type { ResourceRegistry } from './resources.ts';
import { SCALE_KIND } from './scale.ts';

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.4-workloadspread',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.6',
  compiler: 'gc',
  platform: 'linux/amd64',
};

interface SubresourceEntry {
  name: string;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
}

/** discovery.StorageVersionHash: the first 8 bytes of sha256("group/version/kind"), base64. */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

function subresourcesOf(def: ResourceDef): SubresourceEntry[] {
  const out: SubresourceEntry[] = [];
  if (def.subresources.status === true) out.push({ name: 'status', kind: def.kind, verbs: ['get', 'patch', 'update'] });
  if (def.subresources.scale !== undefined) out.push({ name: 'scale', group: SCALE_KIND.group, version: SCALE_KIND.version, kind: SCALE_KIND.kind, verbs: ['get', 'patch', 'update'] });
  for (const [name, handler] of Object.entries(def.subresources.handlers ?? {})) {
    const entry: SubresourceEntry = { name, kind: handler.kind?.kind ?? def.kind, verbs: handler.verbs };
    if (handler.kind !== undefined && (handler.kind.group !== def.group || handler.kind.version !== def.version)) {
      entry.group = handler.kind.group;
      entry.version = handler.kind.version;
    }
    out.push(entry);
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function servedIn(registry: ResourceRegistry, group: string, version: string): ResourceDef[] {
  return registry
    .all()
    .filter((d) => d.group === group && d.version === version)
    .sort((a, b) => (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0));
}

const groupVersion = (group: string, version: string) => (group === '' ? version : `${group}/${version}`);

export function apiVersions(hostPort: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: hostPort }] };
}

function apiGroup(name: string, versions: string[]): Record<string, unknown> {
  const vs = versions.map((v) => ({ groupVersion: groupVersion(name, v), version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(registry: ResourceRegistry): Record<string, unknown> {
  const groups = registry.groups().filter((g) => g.name !== '');
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => apiGroup(g.name, g.versions)) };
}

/** `/apis/<group>`; undefined when the group is not served. */
export function apiGroupDocument(registry: ResourceRegistry, group: string): Record<string, unknown> | undefined {
  const g = registry.groups().find((x) => x.name === group && group !== '');
  return g === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g.name, g.versions) };
}

/** `/api/v1` or `/apis/<g>/<v>`; undefined when nothing is served there. */
export function apiResourceList(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const defs = servedIn(registry, group, version);
  if (defs.length === 0) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const d of defs) {
    const entry: Record<string, unknown> = { name: d.plural, singularName: d.singular, namespaced: d.namespaced, kind: d.kind, verbs: d.verbs };
    if (d.shortNames.length > 0) entry['shortNames'] = d.shortNames;
    if (d.categories.length > 0) entry['categories'] = d.categories;
    // Resources without storage (the access reviews) have no storage version.
    if (d.virtualCreate === undefined) entry['storageVersionHash'] = storageVersionHash(d.group, d.version, d.kind);
    resources.push(entry);
    for (const sub of subresourcesOf(d)) {
      const s: Record<string, unknown> = { name: `${d.plural}/${sub.name}`, singularName: '', namespaced: d.namespaced };
      if (sub.group !== undefined) s['group'] = sub.group;
      if (sub.version !== undefined) s['version'] = sub.version;
      s['kind'] = sub.kind;
      s['verbs'] = sub.verbs;
      resources.push(s);
    }
  }
  const doc: Record<string, unknown> = { kind: 'APIResourceList' };
  if (group !== '') doc['apiVersion'] = 'v1';
  doc['groupVersion'] = groupVersion(group, version);
  doc['resources'] = resources;
  return doc;
}

// ---- aggregated discovery ----

/** The aggregated-discovery version the Accept header asks for, if any. */
export function aggregatedDiscoveryVersion(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  if (accept === undefined) return undefined;
  for (const part of accept.split(',')) {
    const params = part.split(';').map((p) => p.trim());
    if (!params.includes('g=apidiscovery.k8s.io') || !params.includes('as=APIGroupDiscoveryList')) continue;
    if (params.includes('v=v2')) return 'v2';
    if (params.includes('v=v2beta1')) return 'v2beta1';
  }
  return undefined;
}

function discoveryResource(d: ResourceDef): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    resource: d.plural,
    responseKind: { group: d.group, version: d.version, kind: d.kind },
    scope: d.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: d.singular,
    verbs: d.verbs,
  };
  if (d.shortNames.length > 0) entry['shortNames'] = d.shortNames;
  if (d.categories.length > 0) entry['categories'] = d.categories;
  const subs = subresourcesOf(d);
  if (subs.length > 0) {
    entry['subresources'] = subs.map((s) => ({
      subresource: s.name,
      responseKind: { group: s.group ?? d.group, version: s.version ?? d.version, kind: s.kind },
      verbs: s.verbs,
    }));
  }
  return entry;
}

/** APIGroupDiscoveryList for `/api` (core only) or `/apis` (every named group). */
export function aggregatedDiscovery(registry: ResourceRegistry, legacy: boolean, version: 'v2' | 'v2beta1'): Record<string, unknown> {
  const groups = registry.groups().filter((g) => (legacy ? g.name === '' : g.name !== ''));
  const items = groups.map((g) => ({
    metadata: g.name === '' ? { creationTimestamp: null } : { name: g.name, creationTimestamp: null },
    versions: g.versions.map((v) => ({ version: v, resources: servedIn(registry, g.name, v).map(discoveryResource), freshness: 'Current' })),
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}

export function aggregatedContentType(version: 'v2' | 'v2beta1'): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}
