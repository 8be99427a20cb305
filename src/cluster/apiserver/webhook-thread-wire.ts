/**
 * What crosses between the API server and its webhook thread
 * (webhook-thread.ts, webhook-thread-entry.ts): plain data only — a `URL`
 * does not survive the structured clone, so a target travels with its URL
 * as text.
 */
import type { ClientCredentials } from './webhook-client-auth.ts';
import type { WebhookCallResult, WebhookTarget } from './webhook-client.ts';

export type WireTarget = Omit<WebhookTarget, 'url'> & { href: string };

export interface ThreadCall {
  id: number;
  target: WireTarget;
  body: string;
  caPem: string | undefined;
  clientCertificate: ClientCredentials | undefined;
  timeoutMs: number;
  label: string;
}

export interface ThreadAnswer {
  id: number;
  result: WebhookCallResult;
  /** Wall milliseconds from before the request was made until the whole answer was read, on the webhook thread. */
  elapsedMs: number;
}

export function targetToWire(target: WebhookTarget): WireTarget {
  const { url, ...rest } = target;
  return { ...rest, href: url.href };
}

export function targetFromWire(wire: WireTarget): WebhookTarget {
  const { href, ...rest } = wire;
  return { ...rest, url: new URL(href) };
}
