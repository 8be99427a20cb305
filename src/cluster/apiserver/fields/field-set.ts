/**
 * Sets of field paths in their wire form, `FieldsV1` (structured-merge-diff's
 * fieldpath.Set): a tree of objects whose keys are path elements —
 * `f:<field>`, `k:<key fields as JSON>` (an element of an associative list),
 * `v:<value as JSON>` (an element of a set list), `i:<index>` — and whose
 * `.` key marks a node that is itself a member of the set as well as the
 * parent of members. A node with no keys is a member.
 *
 * Trees are immutable: every operation returns a new tree or one of its
 * inputs, unchanged subtrees shared. Keys are kept in upstream's order
 * (fields, then keys, then values, then indexes; `.` last), so what is built
 * here serializes as the real API server writes it. The root is never a
 * member: `{}` at the root is the empty set.
 */
export type FieldTree = { readonly [key: string]: FieldTree };

export const SELF = '.';
export const EMPTY: FieldTree = Object.freeze({}) as FieldTree;

function hasKeys(node: FieldTree): boolean {
  for (const _ in node) return true;
  return false;
}

/** True when the set holds nothing. */
export function isEmptySet(tree: FieldTree): boolean {
  return !hasKeys(tree);
}

/** A non-root node is a member when it has no children or carries `.`. */
export function isMember(node: FieldTree): boolean {
  return node[SELF] !== undefined || !hasKeys(node);
}

function rank(key: string): number {
  switch (key.charCodeAt(0)) {
    case 102: // f
      return 0;
    case 107: // k
      return 1;
    case 118: // v
      return 2;
    case 105: // i
      return 3;
    default:
      return key === SELF ? 5 : 4;
  }
}

/** Upstream's order of path elements (`.` last). */
export function compareKeys(a: string, b: string): number {
  if (a.charCodeAt(0) === b.charCodeAt(0) && a !== SELF && b !== SELF) return a < b ? -1 : a > b ? 1 : 0;
  const r = rank(a) - rank(b);
  if (r !== 0) return r;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Builds a node from children given in order; undefined when it holds nothing. */
export function node(children: [string, FieldTree][], member: boolean): FieldTree | undefined {
  if (children.length === 0) return member ? EMPTY : undefined;
  const out: Record<string, FieldTree> = {};
  for (const [k, v] of children) out[k] = v;
  if (member) out[SELF] = EMPTY;
  return out;
}

/** The keys of a node's children (`.` excluded). */
export function childKeys(tree: FieldTree): string[] {
  const keys = Object.keys(tree);
  const i = keys.indexOf(SELF);
  if (i >= 0) keys.splice(i, 1);
  return keys;
}

/** Recursively sorts a freshly built tree into upstream's key order. */
export function canonical(tree: FieldTree): FieldTree {
  const keys = childKeys(tree);
  if (keys.length === 0) return tree;
  keys.sort(compareKeys);
  const out: Record<string, FieldTree> = {};
  for (const k of keys) out[k] = canonical(tree[k] as FieldTree);
  if (tree[SELF] !== undefined) out[SELF] = EMPTY;
  return out;
}

function unionAt(a: FieldTree, b: FieldTree, root: boolean): FieldTree {
  if (a === b) return a;
  const ak = childKeys(a);
  const bk = childKeys(b);
  const member = !root && (isMember(a) || isMember(b));
  const children: [string, FieldTree][] = [];
  let i = 0;
  let j = 0;
  while (i < ak.length || j < bk.length) {
    const ka = ak[i];
    const kb = bk[j];
    const c = ka === undefined ? 1 : kb === undefined ? -1 : compareKeys(ka, kb);
    if (c < 0) {
      children.push([ka as string, a[ka as string] as FieldTree]);
      i++;
    } else if (c > 0) {
      children.push([kb as string, b[kb as string] as FieldTree]);
      j++;
    } else {
      children.push([ka as string, unionAt(a[ka as string] as FieldTree, b[ka as string] as FieldTree, false)]);
      i++;
      j++;
    }
  }
  return node(children, member) ?? EMPTY;
}

/** Every path of either set. */
export function union(a: FieldTree, b: FieldTree): FieldTree {
  if (isEmptySet(a)) return b;
  if (isEmptySet(b)) return a;
  return unionAt(a, b, true);
}

function differenceAt(a: FieldTree, b: FieldTree, root: boolean): FieldTree | undefined {
  const aMember = !root && isMember(a);
  const member = aMember && !(!root && isMember(b));
  let changed = member !== aMember;
  const children: [string, FieldTree][] = [];
  for (const k of childKeys(a)) {
    const ac = a[k] as FieldTree;
    const bc = b[k];
    if (bc === undefined) {
      children.push([k, ac]);
      continue;
    }
    const d = differenceAt(ac, bc, false);
    if (d !== ac) changed = true;
    if (d !== undefined) children.push([k, d]);
  }
  if (!changed) return a;
  return node(children, member);
}

/** The paths of `a` that are not in `b` (`a` itself when none is removed). */
export function difference(a: FieldTree, b: FieldTree): FieldTree {
  if (isEmptySet(a) || isEmptySet(b)) return a;
  return differenceAt(a, b, true) ?? EMPTY;
}

function intersectionAt(a: FieldTree, b: FieldTree, root: boolean): FieldTree | undefined {
  const member = !root && isMember(a) && isMember(b);
  const children: [string, FieldTree][] = [];
  for (const k of childKeys(a)) {
    const bc = b[k];
    if (bc === undefined) continue;
    const i = intersectionAt(a[k] as FieldTree, bc, false);
    if (i !== undefined) children.push([k, i]);
  }
  return node(children, member);
}

/** The paths in both sets. */
export function intersection(a: FieldTree, b: FieldTree): FieldTree {
  if (isEmptySet(a) || isEmptySet(b)) return EMPTY;
  return intersectionAt(a, b, true) ?? EMPTY;
}

/** The member paths of a set, each as its list of keys, in the set's order. */
export function memberPaths(tree: FieldTree): string[][] {
  const out: string[][] = [];
  const walk = (n: FieldTree, path: string[], root: boolean): void => {
    if (!root && isMember(n)) out.push(path);
    for (const k of childKeys(n)) walk(n[k] as FieldTree, [...path, k], false);
  };
  walk(tree, [], true);
  return out;
}

/** Whether a value is a well-formed FieldsV1 tree (objects all the way down). */
export function isFieldTree(value: unknown): value is FieldTree {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const v of Object.values(value as Record<string, unknown>)) if (!isFieldTree(v)) return false;
  return true;
}

// ---- path elements ----

/** `f:name` */
export function fieldKey(name: string): string {
  return `f:${name}`;
}

/** `k:{"name":"x","protocol":"TCP"}`: the key fields of an associative-list element, sorted by name. */
export function keyKey(fields: readonly string[], item: Record<string, unknown>, defaults?: Readonly<Record<string, unknown>>): string | undefined {
  const names = fields.length > 1 ? [...fields].sort() : fields;
  let s = 'k:{';
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    let v = item[name];
    if (v === undefined || v === null) v = defaults?.[name];
    if (v === undefined || v === null) return undefined;
    if (i > 0) s += ',';
    s += `${JSON.stringify(name)}:${JSON.stringify(v)}`;
  }
  return `${s}}`;
}

/** `v:"value"`: an element of a set list. */
export function valueKey(value: unknown): string {
  return `v:${JSON.stringify(value)}`;
}

function valueText(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : v === null ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** One path element as upstream prints it: `.spec`, `[name="app"]`, `[="x"]`, `[0]`. */
export function formatElement(key: string): string {
  const body = key.slice(2);
  switch (key.slice(0, 2)) {
    case 'f:':
      return `.${body}`;
    case 'k:': {
      try {
        const fields = JSON.parse(body) as Record<string, unknown>;
        return `[${Object.keys(fields)
          .map((k) => `${k}=${valueText(fields[k])}`)
          .join(',')}]`;
      } catch {
        return `[${body}]`;
      }
    }
    case 'v:': {
      try {
        return `[=${valueText(JSON.parse(body))}]`;
      } catch {
        return `[=${body}]`;
      }
    }
    case 'i:':
      return `[${body}]`;
    default:
      return key;
  }
}

/** A path as upstream prints it: `.spec.containers[name="app"].image`. */
export function formatPath(keys: readonly string[]): string {
  return keys.map(formatElement).join('');
}
