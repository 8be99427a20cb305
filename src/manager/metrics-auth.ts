/**
 * Who may read the manager's secure metrics endpoint (`--metrics-secure`):
 * authentication and authorization delegated to the API server, as
 * controller-runtime's `filters.WithAuthenticationAndAuthorization` does.
 *
 * - The caller's bearer token (`Authorization: Bearer …`) goes to a
 *   TokenReview (the API server's audience). None, or one it does not
 *   authenticate: 401 `Unauthorized`.
 * - The user it names goes to a SubjectAccessReview for the non-resource URL
 *   of the request (its path) and the request's method lowercased as the verb
 *   (`get`), as kube-apiserver authorizes its own `/metrics`; RBAC grants it
 *   with `nonResourceURLs: ["/metrics"], verbs: ["get"]` (`/debug/pprof/*` for
 *   the profiles). Not allowed: 403 `Authorization denied for user <name>`.
 *   A path no route serves is not authorized: it is 404 to any authenticated
 *   caller, without an API request.
 * - A review that fails (the API server unreachable, or it refuses the
 *   manager the review itself): 500, logged; nothing is cached, the next
 *   request asks again.
 *
 * Decisions are cached on the clock for `ttlMs` (default 10 s): per token
 * (its SHA-256, never the token itself) and per user, path and verb; denials
 * too, so a caller retrying a bad token costs nothing more. Concurrent
 * requests waiting on the same review share it. A Prometheus scraping every
 * 15 s thus costs at most two API requests per scrape, and nothing when
 * scrapes come closer than the TTL. A revoked token or removed grant is
 * honoured within the TTL. Each cache holds at most `maxEntries` (default
 * 4096): expired entries go first, then the oldest.
 * Start at `DelegatedAuth.check`.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../clock/clock.ts';
import { describeError } from '../client/errors.ts';
import type { KubeClient } from '../client/http-client.ts';
import { silentLogger, type Logger } from '../client/logger.ts';
import type { FilterVerdict, RequestFilter } from './endpoints.ts';

export const DEFAULT_AUTH_CACHE_TTL_MS = 10_000;
const DEFAULT_MAX_ENTRIES = 4096;

/** A user as TokenReview reports it and SubjectAccessReview takes it. */
export interface ReviewedUser {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** Values kept until their time is up; loads of the same key at once share one promise. */
class ExpiringCache<V> {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #entries = new Map<string, { value: V; expires: number }>();
  readonly #loading = new Map<string, Promise<V>>();

  constructor(clock: Clock, ttlMs: number, max: number) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.#max = max;
  }

  async get(key: string, load: () => Promise<V>): Promise<V> {
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.expires > this.#clock.now()) return entry.value;
    const pending = this.#loading.get(key);
    if (pending !== undefined) return this.#clock.activity.waitFor(pending);
    const loading = load();
    this.#loading.set(key, loading);
    try {
      const value = await loading;
      this.#store(key, value);
      return value;
    } finally {
      this.#loading.delete(key);
    }
  }

  #store(key: string, value: V): void {
    const now = this.#clock.now();
    this.#entries.delete(key);
    if (this.#entries.size >= this.#max) {
      for (const [k, e] of this.#entries) if (e.expires <= now) this.#entries.delete(k);
      // Still full: drop the oldest (a Map iterates in insertion order).
      for (const k of this.#entries.keys()) {
        if (this.#entries.size < this.#max) break;
        this.#entries.delete(k);
      }
    }
    this.#entries.set(key, { value, expires: now + this.#ttlMs });
  }
}

type TokenDecision = { authenticated: true; user: ReviewedUser } | { authenticated: false };

interface TokenReviewAnswer {
  status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }; error?: string };
}

interface AccessReviewAnswer {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

export interface DelegatedAuthOptions {
  /** The manager's client (its identity needs `create` on tokenreviews and subjectaccessreviews). */
  client: KubeClient;
  clock: Clock;
  log?: Logger;
  ttlMs?: number;
  maxEntries?: number;
}

/** The bearer token of a request, if it carries one. */
function bearerToken(req: IncomingMessage): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m === null ? undefined : m[1];
}

export class DelegatedAuth implements RequestFilter {
  readonly #client: KubeClient;
  readonly #log: Logger;
  readonly #tokens: ExpiringCache<TokenDecision>;
  readonly #access: ExpiringCache<boolean>;

  constructor(options: DelegatedAuthOptions) {
    this.#client = options.client;
    this.#log = options.log ?? silentLogger;
    const ttl = options.ttlMs ?? DEFAULT_AUTH_CACHE_TTL_MS;
    const max = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.#tokens = new ExpiringCache(options.clock, ttl, max);
    this.#access = new ExpiringCache(options.clock, ttl, max);
  }

  async check(req: IncomingMessage, path: string, routed: boolean): Promise<FilterVerdict> {
    const token = bearerToken(req);
    if (token === undefined) return { allowed: false, code: 401, message: 'Unauthorized' };
    let who: TokenDecision;
    try {
      who = await this.authenticate(token);
    } catch (err) {
      this.#log.error({ path, err: describeError(err) }, 'metrics endpoint: authentication failed (TokenReview)');
      return { allowed: false, code: 500, message: 'Authentication failed' };
    }
    if (!who.authenticated) return { allowed: false, code: 401, message: 'Unauthorized' };
    if (!routed) return { allowed: true };
    const verb = (req.method ?? 'GET').toLowerCase();
    let allowed: boolean;
    try {
      allowed = await this.authorize(who.user, verb, path);
    } catch (err) {
      this.#log.error({ path, user: who.user.username, err: describeError(err) }, 'metrics endpoint: authorization failed (SubjectAccessReview)');
      return { allowed: false, code: 500, message: `Authorization for user ${who.user.username} failed` };
    }
    if (!allowed) {
      this.#log.debug({ path, verb, user: who.user.username }, 'metrics endpoint: request denied');
      return { allowed: false, code: 403, message: `Authorization denied for user ${who.user.username}` };
    }
    return { allowed: true };
  }

  /** Who the token is, by TokenReview (cached). */
  authenticate(token: string): Promise<TokenDecision> {
    const key = createHash('sha256').update(token).digest('hex');
    return this.#tokens.get(key, async () => {
      const answer = await this.#client.request<TokenReviewAnswer>({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      });
      const status = answer.status ?? {};
      const username = status.user?.username ?? '';
      if (status.authenticated !== true || username === '') return { authenticated: false };
      const user: ReviewedUser = { username, groups: status.user?.groups ?? [] };
      if (status.user?.uid !== undefined && status.user.uid !== '') user.uid = status.user.uid;
      if (status.user?.extra !== undefined && Object.keys(status.user.extra).length > 0) user.extra = status.user.extra;
      return { authenticated: true, user };
    });
  }

  /** Whether `user` may `verb` the non-resource URL `path`, by SubjectAccessReview (cached). */
  authorize(user: ReviewedUser, verb: string, path: string): Promise<boolean> {
    const key = JSON.stringify([user.username, user.uid ?? '', user.groups, user.extra ?? {}, verb, path]);
    return this.#access.get(key, async () => {
      const spec: Record<string, unknown> = { user: user.username, groups: user.groups, nonResourceAttributes: { path, verb } };
      if (user.uid !== undefined) spec['uid'] = user.uid;
      if (user.extra !== undefined) spec['extra'] = user.extra;
      const answer = await this.#client.request<AccessReviewAnswer>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
      });
      return answer.status?.allowed === true && answer.status.denied !== true;
    });
  }
}
