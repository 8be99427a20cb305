/**
 * ServiceAccount tokens: the TokenRequest API (`POST .../serviceaccounts/<name>/token`, what
 * `kubectl create token` and the kubelet's projected volumes call) and the authenticator that
 * accepts the tokens it issues, as kube-apiserver's bound ServiceAccount tokens behave:
 *
 * - a token is a JWT naming the ServiceAccount (`sub` = `system:serviceaccount:<ns>:<name>`,
 *   the `kubernetes.io` claim with its namespace, name and uid, and the bound object's when the
 *   request names one), with `aud`, `iat`, `nbf` and `exp`;
 * - it authenticates as `system:serviceaccount:<ns>:<name>` (uid: the ServiceAccount's) with the
 *   groups `system:serviceaccounts` and `system:serviceaccounts:<ns>` (the server adds
 *   `system:authenticated`), while it has not expired on the server's clock, its audiences
 *   include the API server's, and the ServiceAccount — and the bound Pod or Secret — still
 *   exists with the uid it had (a token outlives none of them: 401 after);
 * - the request: `spec.expirationSeconds` from 600 (10 minutes) to 2^32, default 3600;
 *   `spec.audiences` default the API server's; `spec.boundObjectRef` a Pod or Secret of the
 *   namespace (uid checked when given). The answer (201) is the request back with
 *   `metadata.name/namespace/creationTimestamp` and `status.token/expirationTimestamp`.
 *
 * The JWT is signed with HMAC-SHA256 by a key of this server's own (kube-apiserver signs with
 * the service-account key, RS256/ES256): the tokens are opaque to clients either way, and no
 * one outside this server verifies them.
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { invalid as invalidField, notSupported, required, type FieldError } from '../../k8s/field-errors.ts';
import { isPlainObject } from '../../k8s/json.ts';
import { asArray, asNumber, asRecord, asString } from '../../k8s/raw-json.ts';
import { formatTime } from '../../k8s/time.ts';
import type { KubeObject } from '../../k8s/types.ts';
import { badRequest, fail, invalid, notFound, ok, statusError, type Result } from './errors.ts';
import type { Clock } from '../../clock/clock.ts';
import { serviceAccountUsername } from './rbac-authorizer.ts';
import { storageKey, type GroupVersionKind, type SubresourceHandler, type SubresourceRequest, type SubresourceResponse, type UserInfo } from './resource-def.ts';
import type { ObjectStore } from './storage.ts';

export const TOKEN_REQUEST_KIND: GroupVersionKind = { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' };
/** The API server's audience and issuer (kube-apiserver's usual `--service-account-issuer`). */
export const API_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
const MAX_VERIFIED_TOKENS = 10_000;
const SERVICE_ACCOUNTS = storageKey({ group: '', plural: 'serviceaccounts' });
const BOUND_KINDS: Record<string, string> = { Pod: storageKey({ group: '', plural: 'pods' }), Secret: storageKey({ group: '', plural: 'secrets' }) };

interface Claims {
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  iss: string;
  jti: string;
  sub: string;
  'kubernetes.io': { namespace: string; serviceaccount: { name: string; uid: string }; pod?: { name: string; uid: string }; secret?: { name: string; uid: string } };
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export class ServiceAccountTokens {
  readonly #store: ObjectStore;
  readonly #clock: Clock;
  readonly #key = randomBytes(32);
  readonly #header = b64url(JSON.stringify({ alg: 'HS256', kid: randomUUID() }));
  /** Tokens whose signature was checked, with their claims and user (the same object each time: authorization caches by it). */
  readonly #verified = new Map<string, { claims: Claims; user: UserInfo }>();

  constructor(deps: { store: ObjectStore; clock: Clock }) {
    this.#store = deps.store;
    this.#clock = deps.clock;
  }

  /** Who a bearer token is: undefined when it is not one of ours, 'invalid' when it is but no longer holds. */
  authenticate(token: string): UserInfo | 'invalid' | undefined {
    let verified = this.#verified.get(token);
    if (verified === undefined) {
      const parts = token.split('.');
      if (parts.length !== 3 || parts[0] !== this.#header) return undefined;
      const expected = this.#sign(`${parts[0]}.${parts[1]}`);
      const given = Buffer.from(parts[2] ?? '', 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
      let claims: Claims;
      try {
        claims = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8')) as Claims;
      } catch {
        return 'invalid';
      }
      const k8s = claims['kubernetes.io'];
      const user: UserInfo = {
        username: serviceAccountUsername(k8s.namespace, k8s.serviceaccount.name),
        uid: k8s.serviceaccount.uid,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${k8s.namespace}`],
      };
      verified = { claims, user };
      // Signatures are checked once per token; what can change (time, the ServiceAccount, the bound object) at every request.
      if (this.#verified.size >= MAX_VERIFIED_TOKENS) this.#verified.clear();
      this.#verified.set(token, verified);
    }
    const { claims, user } = verified;
    const now = Math.floor(this.#clock.now() / 1000);
    if (now >= claims.exp || now < claims.nbf || !claims.aud.includes(API_AUDIENCE)) return 'invalid';
    const k8s = claims['kubernetes.io'];
    if (!this.#sameUid(SERVICE_ACCOUNTS, k8s.namespace, k8s.serviceaccount)) return 'invalid';
    if (k8s.pod !== undefined && !this.#sameUid(BOUND_KINDS['Pod'] as string, k8s.namespace, k8s.pod)) return 'invalid';
    if (k8s.secret !== undefined && !this.#sameUid(BOUND_KINDS['Secret'] as string, k8s.namespace, k8s.secret)) return 'invalid';
    return user;
  }

  #sameUid(resource: string, namespace: string, ref: { name: string; uid: string }): boolean {
    const obj = this.#store.get(resource, namespace, ref.name);
    return obj !== undefined && asString(obj.metadata?.uid) === ref.uid && obj.metadata?.deletionTimestamp === undefined;
  }

  #sign(input: string): Buffer {
    return createHmac('sha256', this.#key).update(input).digest();
  }

  /** Issues a token for a stored ServiceAccount (and, optionally, a bound Pod or Secret). */
  issue(serviceAccount: KubeObject, options: { expirationSeconds: number; audiences: string[]; bound?: { kind: string; object: KubeObject } }): { token: string; expirationTimestamp: string } {
    const now = Math.floor(this.#clock.now() / 1000);
    const namespace = asString(serviceAccount.metadata?.namespace) ?? '';
    const name = asString(serviceAccount.metadata?.name) ?? '';
    const k8s: Claims['kubernetes.io'] = { namespace, serviceaccount: { name, uid: asString(serviceAccount.metadata?.uid) ?? '' } };
    if (options.bound !== undefined) {
      const ref = { name: asString(options.bound.object.metadata?.name) ?? '', uid: asString(options.bound.object.metadata?.uid) ?? '' };
      if (options.bound.kind === 'Pod') k8s.pod = ref;
      else k8s.secret = ref;
    }
    const exp = now + options.expirationSeconds;
    const claims: Claims = { aud: options.audiences, exp, iat: now, iss: API_AUDIENCE, jti: randomUUID(), 'kubernetes.io': k8s, nbf: now, sub: serviceAccountUsername(namespace, name) };
    const payload = b64url(JSON.stringify(claims));
    const signature = this.#sign(`${this.#header}.${payload}`).toString('base64url');
    return { token: `${this.#header}.${payload}.${signature}`, expirationTimestamp: formatTime(exp * 1000) };
  }
}

/** `ValidateTokenRequest` and the bound object's kind. */
function validateTokenRequest(spec: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const seconds = spec['expirationSeconds'];
  if (typeof seconds === 'number') {
    if (seconds < MIN_EXPIRATION_SECONDS) errs.push(invalidField('spec.expirationSeconds', seconds, 'may not specify a duration less than 10 minutes'));
    if (seconds > MAX_EXPIRATION_SECONDS) errs.push(invalidField('spec.expirationSeconds', seconds, 'may not specify a duration larger than 2^32 seconds'));
  }
  const bound = asRecord(spec['boundObjectRef']);
  if (bound !== undefined) {
    const kind = asString(bound['kind']) ?? '';
    if (BOUND_KINDS[kind] === undefined) errs.push(notSupported('spec.boundObjectRef.kind', kind, Object.keys(BOUND_KINDS)));
    if ((asString(bound['name']) ?? '') === '') errs.push(required('spec.boundObjectRef.name'));
  }
  return errs;
}

/** The `serviceaccounts/token` subresource. */
export class TokenRequestHandler implements SubresourceHandler {
  readonly verbs = ['create'];
  readonly kind = TOKEN_REQUEST_KIND;
  readonly #tokens: ServiceAccountTokens;
  readonly #store: ObjectStore;
  readonly #now: () => number;

  constructor(deps: { tokens: ServiceAccountTokens; store: ObjectStore; now: () => number }) {
    this.#tokens = deps.tokens;
    this.#store = deps.store;
    this.#now = deps.now;
  }

  async handle(req: SubresourceRequest): Promise<Result<SubresourceResponse>> {
    if (req.verb !== 'create') return fail(badRequest('only POST is supported on serviceaccounts/token'));
    if (!isPlainObject(req.body)) return fail(badRequest('the object provided is unrecognized (must be of type TokenRequest)'));
    const body = structuredClone(req.body) as KubeObject;
    const kind = asString(body.kind) ?? '';
    if (kind !== '' && kind !== 'TokenRequest') return fail(badRequest(`${kind} in version "v1" cannot be handled as a TokenRequest: no kind ${JSON.stringify(kind)} is registered`));
    const spec = asRecord(body['spec']) ?? {};
    if (spec['expirationSeconds'] === undefined) spec['expirationSeconds'] = DEFAULT_EXPIRATION_SECONDS;
    const errs = validateTokenRequest(spec);
    if (errs.length > 0) return fail(invalid('TokenRequest', 'authentication.k8s.io', req.name, errs));
    const sa = this.#store.get(SERVICE_ACCOUNTS, req.namespace, req.name);
    if (sa === undefined) return fail(notFound({ group: '', resource: 'serviceaccounts' }, req.name));
    let bound: { kind: string; object: KubeObject } | undefined;
    const ref = asRecord(spec['boundObjectRef']);
    if (ref !== undefined) {
      const boundKind = asString(ref['kind']) ?? '';
      const boundName = asString(ref['name']) ?? '';
      const object = this.#store.get(BOUND_KINDS[boundKind] as string, req.namespace, boundName);
      if (object === undefined) return fail(notFound({ group: '', resource: `${boundKind.toLowerCase()}s` }, boundName));
      const uid = asString(ref['uid']) ?? '';
      if (uid !== '' && uid !== asString(object.metadata?.uid)) {
        return fail(statusError(409, 'Conflict', `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`));
      }
      bound = { kind: boundKind, object };
    }
    const audiences = (asArray(spec['audiences']) ?? []).filter((a): a is string => typeof a === 'string');
    if (audiences.length === 0) spec['audiences'] = [API_AUDIENCE];
    const expirationSeconds = asNumber(spec['expirationSeconds']) ?? DEFAULT_EXPIRATION_SECONDS;
    const issued = this.#tokens.issue(sa, { expirationSeconds, audiences: audiences.length === 0 ? [API_AUDIENCE] : audiences, ...(bound === undefined ? {} : { bound }) });
    if (spec['boundObjectRef'] === undefined) spec['boundObjectRef'] = null;
    const answer: KubeObject = {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name: req.name, namespace: req.namespace, creationTimestamp: formatTime(this.#now()) },
      spec,
      status: { token: issued.token, expirationTimestamp: issued.expirationTimestamp },
    };
    return ok({ code: 201, body: answer });
  }
}
