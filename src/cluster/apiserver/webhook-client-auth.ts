/**
 * Which client certificate the API server presents to an admission webhook,
 * as kube-apiserver picks it from the kubeconfig its AdmissionConfiguration
 * names (k8s.io/apiserver/pkg/util/webhook/authentication.go): the `users`
 * entries are looked up by the webhook's `host:port` —
 * `<service>.<namespace>.svc:<port>` for a service reference, the URL's host
 * (and port, when it has one) for a URL — first exactly, then as `*.` plus
 * each shorter suffix, then (port 443 only) the same without the port, then
 * the catch-all `*`. No entry: no client certificate (anonymous).
 *
 * Start at `WebhookClientCredentials.resolve`.
 */

export interface ClientCredentials {
  certPem: string;
  keyPem: string;
}

/** `host:port` as the API server looks it up; `port` undefined keeps the bare host (a URL without a port). */
export function credentialsKey(host: string, port: number | undefined): string {
  const h = host.includes(':') ? `[${host}]` : host;
  return port === undefined ? h : `${h}:${port}`;
}

function starMatches(target: string): string[] {
  const steps = target.split('.');
  const out: string[] = [];
  for (let i = 1; i < steps.length; i++) out.push(`*.${steps.slice(i).join('.')}`);
  return out;
}

export class WebhookClientCredentials {
  readonly #users = new Map<string, ClientCredentials>();

  /** Sets (or, with undefined, removes) the credentials of one kubeconfig user name. */
  set(name: string, credentials: ClientCredentials | undefined): void {
    if (credentials === undefined) this.#users.delete(name);
    else this.#users.set(name, credentials);
  }

  get size(): number {
    return this.#users.size;
  }

  /** The credentials for a webhook at `target` (`host:port` or a bare host), or undefined (anonymous). */
  resolve(target: string): ClientCredentials | undefined {
    const lookup = (key: string): ClientCredentials | undefined => {
      const exact = this.#users.get(key);
      if (exact !== undefined) return exact;
      for (const star of starMatches(key)) {
        const found = this.#users.get(star);
        if (found !== undefined) return found;
      }
      return undefined;
    };
    const direct = lookup(target);
    if (direct !== undefined) return direct;
    const m = /^(.*):443$/.exec(target);
    if (m?.[1] !== undefined) {
      const withoutPort = lookup(m[1]);
      if (withoutPort !== undefined) return withoutPort;
    }
    return this.#users.get('*');
  }
}
