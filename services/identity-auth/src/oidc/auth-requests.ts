import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Cache } from '@ziti/messaging';

/** How long an auth request, and a code issued for it, live (OIDC.md "Authorization request"). */
export const AUTH_REQUEST_SECONDS = 10 * 60;

/** What a primary login tells the API session that the code exchange will create. */
export interface LoginFacts {
  identityId: string;
  identityName: string;
  authenticatorId: string;
  /** The primary method: `password`, `cert` or `ext-jwt`. */
  method: string;
  /** Seconds since the epoch. */
  authTime: number;
  /** The identity has a verified TOTP enrollment. */
  totpEnrolled: boolean;
  /** TOTP is open until `amr` holds `totp`. */
  totpRequired: boolean;
  /** The policy's required secondary ext-jwt signer, if any. */
  requiredSigner: string | null;
  /** SHA-1 hex of the login certificate (certificate logins). */
  certFingerprint?: string;
  cert?: { improperClientCertChain: boolean; isCertExtendable: boolean; isCertExtendRequested: boolean; isCertKeyRollRequested: boolean };
  ipAddress: string;
  sdkInfo: Record<string, unknown> | null;
  envInfo: Record<string, unknown> | null;
  csrPem?: string;
}

/** An authorization request, from `/authorize` to the code exchange. */
export interface AuthRequest {
  /** 32 random bytes, base64url. */
  id: string;
  /** The API session id (`z_asid`, UUID v4) the code exchange will create. */
  apiSessionId: string;
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state: string;
  nonce: string;
  codeChallenge: string;
  audience: string[];
  configTypes: string[];
  /** Milliseconds since the epoch: the request (and its code) end 10 minutes later. */
  createdAt: number;
  amr: string[];
  login?: LoginFacts;
  /**
   * SHA-256 (base64url) of the one-time ticket of the callback: minted when a login step completes
   * the request and handed only to the caller of that step (in its redirect), so whoever merely
   * knows the request id (who started it) cannot fetch the code. Taken by the callback.
   */
  ticket?: string;
  /**
   * SHA-256 (base64url) of the login binding: minted by the primary login and handed only to its
   * caller (a cookie); the steps that could complete the request without a factor of the identity
   * (TOTP enrollment mid-login) need it.
   */
  binding?: string;
}

const requestKey = (id: string) => `ziti:oidc:auth-request:${id}`;
const codeKey = (code: string) => `ziti:oidc:code:${code}`;
const claimKey = (code: string) => `ziti:oidc:code-claimed:${code}`;

/** 32 random bytes, base64url (URL-safe: the C SDK sends ids and codes unescaped). */
export const randomId = () => randomBytes(32).toString('base64url');

/** Well-formed ids and codes only reach the cache. */
const ID_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** True for the shape of an auth request id, code, ticket or binding (32 random bytes, base64url). */
export const isRandomId = (v: string | undefined): v is string => v !== undefined && ID_SHAPE.test(v);

/** The stored form of a ticket or binding: its SHA-256, base64url. */
export const secretHash = (secret: string) => createHash('sha256').update(secret).digest('base64url');

/** `secret` is the one whose hash is `hash` (constant time). */
export function matchesSecret(secret: string | undefined, hash: string | undefined): boolean {
  if (!hash || !isRandomId(secret)) return false;
  const a = Buffer.from(secretHash(secret));
  const b = Buffer.from(hash);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Auth requests and codes in the shared cache, so that every replica serves every step. */
export class AuthRequests {
  constructor(
    private readonly cache: Cache,
    private readonly now: () => number = Date.now,
  ) {}

  async create(fields: Omit<AuthRequest, 'id' | 'apiSessionId' | 'createdAt' | 'amr'>): Promise<AuthRequest> {
    const request: AuthRequest = { ...fields, id: randomId(), apiSessionId: randomUUID(), createdAt: this.now(), amr: [] };
    await this.cache.set(requestKey(request.id), JSON.stringify(request), AUTH_REQUEST_SECONDS);
    return request;
  }

  /** The request, or null when unknown, expired or malformed. */
  async get(id: string | undefined): Promise<AuthRequest | null> {
    if (!id || !ID_SHAPE.test(id)) return null;
    const text = await this.cache.get(requestKey(id));
    if (!text) return null;
    const request = JSON.parse(text) as AuthRequest;
    return this.remaining(request) > 0 ? request : null;
  }

  /** Stores the changed request for the rest of its lifetime. */
  async save(request: AuthRequest): Promise<void> {
    const left = this.remaining(request);
    if (left > 0) await this.cache.set(requestKey(request.id), JSON.stringify(request), left);
  }

  /** A new code for the request (valid for the rest of the request's lifetime). */
  async issueCode(request: AuthRequest): Promise<string> {
    const code = randomId();
    await this.cache.set(codeKey(code), request.id, Math.max(1, this.remaining(request)));
    return code;
  }

  /**
   * The request of `code`, once: the first caller on any replica claims it (`setIfAbsent`) and
   * the request is dropped; every later caller gets null.
   */
  async redeem(code: string): Promise<AuthRequest | null> {
    if (!ID_SHAPE.test(code)) return null;
    const id = await this.cache.get(codeKey(code));
    if (!id) return null;
    if (!(await this.cache.setIfAbsent(claimKey(code), '1', AUTH_REQUEST_SECONDS))) return null;
    const request = await this.get(id);
    await this.cache.del(codeKey(code), requestKey(id));
    return request;
  }

  private remaining(request: AuthRequest): number {
    return Math.ceil((request.createdAt + AUTH_REQUEST_SECONDS * 1000 - this.now()) / 1000);
  }
}
