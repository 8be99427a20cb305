/**
 * JSON text of stored objects, computed once per (immutable) stored object
 * and shared by every list response and watch stream that sends it. Typed
 * (built-in) list items carry no apiVersion/kind, as a real server's typed
 * lists do; custom resources keep them.
 */
import type { KubeObject } from '../../k8s/types.ts';

const objectText = new WeakMap<object, string>();
const itemText = new WeakMap<object, string>();

/** The JSON of an object as a single response or a watch event sends it. */
export function objectJson(obj: KubeObject): string {
  let text = objectText.get(obj);
  if (text === undefined) {
    text = JSON.stringify(obj);
    objectText.set(obj, text);
  }
  return text;
}

/** The JSON of an object as an item of a list. */
export function listItemJson(obj: KubeObject, builtin: boolean): string {
  if (!builtin) return objectJson(obj);
  let text = itemText.get(obj);
  if (text === undefined) {
    const { apiVersion: _apiVersion, kind: _kind, ...rest } = obj;
    text = JSON.stringify(rest);
    itemText.set(obj, text);
  }
  return text;
}

/** A list response body: `{"kind":..., "apiVersion":..., "metadata":..., "items":[...]}` built from cached item texts. */
export function listJson(kind: string, apiVersion: string, metadata: Record<string, unknown>, items: readonly KubeObject[], builtin: boolean): string {
  const parts: string[] = new Array<string>(items.length);
  for (let i = 0; i < items.length; i++) parts[i] = listItemJson(items[i] as KubeObject, builtin);
  return `{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(metadata)},"items":[${parts.join(',')}]}`;
}
