/**
 * Test support for `src/kube/` and `src/controller/`: the embedded API server
 * (client test bed) with the WorkloadSpread CRD installed, namespaces, and
 * builders for the objects the tests create. Not used by production code.
 */
import assert from 'node:assert/strict';
import { workloadSpreadCrd } from '../api/crd.ts';
import type { Subset, WorkloadSpread } from '../api/workloadspread.ts';
import type { VirtualClock } from '../clock/virtual-clock.ts';
import type { ServingCertificate } from '../client/loopback-certificates.ts';
import type { KubeObject } from '../k8s/types.ts';
import { startClientTestBed, type ClientTestBed } from './client-test-bed.ts';

export const T0 = Date.UTC(2026, 0, 1);

/** The test bed with the WorkloadSpread CRD served. */
export async function startKubeTestBed(clock: VirtualClock, certificate: ServingCertificate): Promise<ClientTestBed> {
  const bed = await startClientTestBed(clock, certificate);
  const created = await bed.server.control.create(workloadSpreadCrd() as KubeObject);
  assert.ok(created.ok, JSON.stringify(!created.ok && created.status));
  await clock.quiesce();
  return bed;
}

let nsSeq = 0;

/** A fresh namespace (created in-process). */
export async function createNamespace(bed: ClientTestBed, prefix = 'ns'): Promise<string> {
  const name = `${prefix}${++nsSeq}`;
  const r = await bed.server.control.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.ok(r.ok, JSON.stringify(!r.ok && r.status));
  return name;
}

/** Creates an object in-process and returns the stored copy; fails the test on error. */
export async function createObject<T extends KubeObject = KubeObject>(bed: ClientTestBed, obj: KubeObject): Promise<T> {
  const r = await bed.server.control.create(obj);
  assert.ok(r.ok, `create ${obj.kind} ${obj.metadata?.name ?? ''}: ${JSON.stringify(!r.ok && r.status)}`);
  return r.value as T;
}

export function workloadSpread(namespace: string, name: string, subsets: Subset[], target: { apiVersion?: string; kind?: string; name?: string } = {}): WorkloadSpread & KubeObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name, namespace },
    spec: {
      targetRef: { apiVersion: target.apiVersion ?? 'apps/v1', kind: target.kind ?? 'Deployment', name: target.name ?? 'web' },
      subsets,
    },
  };
}

/** A minimal valid pod spec with one container and optional requests. */
export function podSpec(requests: Record<string, string> = {}): Record<string, unknown> {
  return { containers: [{ name: 'main', image: 'nginx', ...(Object.keys(requests).length > 0 ? { resources: { requests } } : {}) }] };
}

/** A namespaced CRD `<plural>.<group>` with status and scale subresources (scale selector at `.status.selector`). */
export function customWorkloadCrd(group: string, kind: string, plural: string, versions: string[] = ['v1']): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: plural.replace(/s$/, ''), kind, listKind: `${kind}List` },
      versions: versions.map((name, i) => ({
        name,
        served: true,
        storage: i === 0,
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      })),
    },
  };
}

/** The whitelist config map's JSON for these workloads. */
export function whitelistJson(workloads: { Group: string; Version?: string; Kind: string; replicasPath?: string; subResources?: { Group: string; Version: string; Kind: string }[] }[]): string {
  return JSON.stringify({ workloads });
}
