/**
 * ResourceRefs of the kinds the manager reads or writes beyond the client's
 * built-in table (`src/client/resources.ts` `BUILTIN`): the WorkloadSpread
 * itself and OpenKruise's workloads. Custom kinds of the whitelist are
 * resolved through discovery instead, since their plural is not known here.
 */
import type { ResourceRef } from '../client/resources.ts';
import { GROUP, KIND, PLURAL, VERSION } from '../api/names.ts';

export const WORKLOADSPREAD_REF: ResourceRef = Object.freeze({ group: GROUP, version: VERSION, resource: PLURAL, kind: KIND, namespaced: true });

/** OpenKruise's CloneSet in the version the controller caches (spec §4.1: the typed v1alpha1 one). */
export const CLONESET_REF: ResourceRef = Object.freeze({ group: 'apps.kruise.io', version: 'v1alpha1', resource: 'clonesets', kind: 'CloneSet', namespaced: true });
