/**
 * The resource registry: every resource the API server serves, looked up by
 * URL (group, version, plural), by kind, or by short name. Built-in kinds are
 * registered at start (builtin-resources.ts); the CRD controller
 * (crd-controller.ts) registers and unregisters custom resources; extensions
 * re-register a resource to swap its strategy or add subresource handlers.
 *
 * Invariants: (group, version, plural) is unique; registering it again
 * replaces the previous definition in place (discovery order is kept).
 * Group order in discovery: built-in groups in registration order, then the
 * others sorted by name (as upstream sorts CRD groups after its own).
 */
import type { ResourceDef, SubresourceHandler } from './resource-def.ts';

export type RegistryListener = () => void;

export class ResourceRegistry {
  #defs: ResourceDef[] = [];
  #listeners = new Set<RegistryListener>();

  /** Adds a resource, or replaces the one with the same group, version and plural. */
  register(def: ResourceDef): void {
    const i = this.#defs.findIndex((d) => d.group === def.group && d.version === def.version && d.plural === def.plural);
    if (i >= 0) this.#defs[i] = def;
    else this.#defs.push(def);
    this.#changed();
  }

  /** Removes a resource; true when it was registered. */
  unregister(group: string, version: string, plural: string): boolean {
    const before = this.#defs.length;
    this.#defs = this.#defs.filter((d) => !(d.group === group && d.version === version && d.plural === plural));
    const removed = this.#defs.length !== before;
    if (removed) this.#changed();
    return removed;
  }

  /** Attaches (or replaces) a subresource handler, e.g. `pods/eviction`. False when the resource is unknown. */
  setSubresourceHandler(group: string, version: string, plural: string, name: string, handler: SubresourceHandler): boolean {
    const def = this.get(group, version, plural);
    if (def === undefined) return false;
    this.register({ ...def, subresources: { ...def.subresources, handlers: { ...def.subresources.handlers, [name]: handler } } });
    return true;
  }

  get(group: string, version: string, plural: string): ResourceDef | undefined {
    return this.#defs.find((d) => d.group === group && d.version === version && d.plural === plural);
  }

  /** The resource serving `kind` in `group/version`. */
  byKind(group: string, version: string, kind: string): ResourceDef | undefined {
    return this.#defs.find((d) => d.group === group && d.version === version && d.kind === kind);
  }

  /** Every served version of a group and plural (custom resources may have several). */
  versionsOf(group: string, plural: string): ResourceDef[] {
    return this.#defs.filter((d) => d.group === group && d.plural === plural);
  }

  all(): readonly ResourceDef[] {
    return this.#defs;
  }

  /** Groups with their versions, in discovery order; the core group is `''`. */
  groups(): { name: string; versions: string[] }[] {
    const builtinOrder: string[] = [];
    const others: string[] = [];
    const versions = new Map<string, string[]>();
    for (const d of this.#defs) {
      let vs = versions.get(d.group);
      if (vs === undefined) {
        vs = [];
        versions.set(d.group, vs);
        (d.builtin ? builtinOrder : others).push(d.group);
      }
      if (!vs.includes(d.version)) vs.push(d.version);
    }
    const names = [...builtinOrder, ...others.filter((g) => !builtinOrder.includes(g)).sort()];
    return names.map((name) => ({ name, versions: sortVersions(versions.get(name) ?? []) }));
  }

  /** Called after every change (discovery caches listen). Returns an unsubscribe function. */
  onChange(listener: RegistryListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    for (const l of this.#listeners) l();
  }
}

/**
 * Kubernetes version priority (`version.CompareKubeAwareVersionStrings`): GA
 * before beta before alpha, higher numbers first, non-conforming names last
 * in lexical order. The first entry is the preferred version.
 */
export function sortVersions(versions: readonly string[]): string[] {
  const parse = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (m === null) return undefined;
    const level = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [level, Number(m[1]), m[3] === undefined ? 0 : Number(m[3])];
  };
  return [...versions].sort((a, b) => {
    const pa = parse(a);
    const pb = parse(b);
    if (pa === undefined && pb === undefined) return a < b ? -1 : a > b ? 1 : 0;
    if (pa === undefined) return 1;
    if (pb === undefined) return -1;
    if (pa[0] !== pb[0]) return pb[0] - pa[0];
    if (pa[1] !== pb[1]) return pb[1] - pa[1];
    return pb[2] - pa[2];
  });
}
