import { type KeyObject, X509Certificate } from 'node:crypto';
import { isStorableText, quotedHeaderParam } from '@ziti/http-kit';
import type { ExternalJwtSigner } from '../auth-model.js';

/** Where keys of JWKS signers come from (clients/jwks-fetcher.ts): fetched, cached, SSRF-checked. */
export interface JwksSource {
  /** The key with this `kid` from the signer's JWKS endpoint (refetched when unknown, at most once a second). */
  key(jwksEndpoint: string, kid: string): Promise<KeyObject | null>;
}

/** Why a bearer token did not verify, in the `error` vocabulary of `WWW-Authenticate` (§3.4). */
export type TokenError = 'missing' | 'expired' | 'invalid';

export type TokenCheck = { ok: true; signer: ExternalJwtSigner; claims: Record<string, unknown> } | { ok: false; error: TokenError };

/** Asymmetric algorithms only: `none` and HMAC never verify an external token. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const RANK: Record<TokenError, number> = { missing: 0, invalid: 1, expired: 2 };

type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } });
let josePromise: Promise<Jose> | undefined;
/** jose ships only ES modules: loaded once with a dynamic import. */
const jose = (): Promise<Jose> => (josePromise ??= import('jose'));

function decodePart(part: string | undefined): Record<string, unknown> | null {
  if (!part) return null;
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Verifies external JWTs (§2.2 ext-jwt): the signer is the enabled one whose `issuer` equals the
 * token's `iss`; its key is the signer's certificate or the JWKS key named by the token's `kid`;
 * signature, expiry (and not-before), issuer and audience are checked.
 */
export class JwtVerifier {
  private readonly certKeys = new Map<string, KeyObject>();

  constructor(private readonly jwks: JwksSource) {}

  /** The first of `tokens` that verifies against one of `signers`, else the most telling failure. */
  async verifyAny(tokens: readonly string[], signers: readonly ExternalJwtSigner[]): Promise<TokenCheck> {
    let worst: TokenError = 'missing';
    for (const token of tokens) {
      const r = await this.verify(token, signers);
      if (r.ok) return r;
      if (RANK[r.error] > RANK[worst]) worst = r.error;
    }
    return { ok: false, error: worst };
  }

  /** A token that is not a JWT, or names no known issuer, is `missing` (it is not a token of these signers). */
  async verify(token: string, signers: readonly ExternalJwtSigner[]): Promise<TokenCheck> {
    const parts = token.split('.');
    const header = decodePart(parts[0]);
    const payload = decodePart(parts[1]);
    if (parts.length !== 3 || !header || !payload || typeof payload.iss !== 'string') return { ok: false, error: 'missing' };
    const signer = signers.find((s) => s.enabled && s.issuer === payload.iss);
    if (!signer) return { ok: false, error: 'missing' };
    const key = await this.keyOf(signer, typeof header.kid === 'string' ? header.kid : undefined).catch(() => null);
    if (!key) return { ok: false, error: 'invalid' };
    const j = await jose();
    try {
      const { payload: claims } = await j.jwtVerify(token, key, { issuer: signer.issuer, audience: signer.audience, algorithms: ALGORITHMS });
      return { ok: true, signer, claims: claims as Record<string, unknown> };
    } catch (err) {
      return { ok: false, error: err instanceof j.errors.JWTExpired ? 'expired' : 'invalid' };
    }
  }

  private async keyOf(signer: ExternalJwtSigner, kid: string | undefined): Promise<KeyObject | null> {
    if (signer.certPem) {
      const cacheKey = `${signer.id}:${signer.fingerprint}`;
      let key = this.certKeys.get(cacheKey);
      if (!key) {
        key = new X509Certificate(signer.certPem).publicKey;
        if (this.certKeys.size > 1000) this.certKeys.clear();
        this.certKeys.set(cacheKey, key);
      }
      return key;
    }
    if (!signer.jwksEndpoint || !kid) return null;
    return this.jwks.key(signer.jwksEndpoint, kid);
  }
}

/**
 * The identity claim of a verified token: `claimsProperty` is a JSON pointer (`/sub`, `/a/b`) or a
 * top-level claim name (`sub`). Only a non-empty string that can name a stored identity counts
 * (a NUL or an unpaired surrogate can not, and would only reach the database as an error).
 */
export function identityClaim(claims: Record<string, unknown>, claimsProperty: string): string | null {
  let v: unknown = claims;
  const path = claimsProperty.startsWith('/')
    ? claimsProperty.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    : [claimsProperty];
  for (const seg of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.prototype.hasOwnProperty.call(v, seg)) return null;
    v = (v as Record<string, unknown>)[seg];
  }
  return typeof v === 'string' && v !== '' && isStorableText(v) ? v : null;
}

/**
 * The claim a selector of the enrollment settings names (`enrollNameClaimsSelector`,
 * `enrollAttributeClaimsSelector`): a JSON pointer, `/` prepended when missing (`name` = `/name`,
 * `a/b` = `/a/b`); array elements by index. `undefined` when it names nothing.
 */
export function claimAt(claims: Record<string, unknown>, selector: string): unknown {
  const pointer = selector.startsWith('/') ? selector : `/${selector}`;
  let v: unknown = claims;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(v)) {
      if (!/^(0|[1-9][0-9]*)$/.test(seg) || Number(seg) >= v.length) return undefined;
      v = v[Number(seg)];
    } else if (v !== null && typeof v === 'object' && Object.prototype.hasOwnProperty.call(v, seg)) {
      v = (v as Record<string, unknown>)[seg];
    } else {
      return undefined;
    }
  }
  return v;
}

const DESCRIPTION: Record<TokenError, string> = {
  missing: 'no matching token was provided',
  expired: 'token expired',
  invalid: 'token is invalid',
};

/** A `WWW-Authenticate` value of the ext-jwt realms (§3.4), signer ids and issuers joined with `|`. */
export function extJwtChallenge(realm: 'primary' | 'secondary', error: TokenError, signers: readonly ExternalJwtSigner[]): string {
  const ids = signers.map((s) => s.id).join('|');
  const issuers = signers.map((s) => s.issuer).join('|');
  // Ids and issuers are data (an issuer may hold any text): quoted and escaped, never raw (RFC 7235 §2.1).
  return `Bearer realm="openziti-${realm}-ext-jwt" error="${error}" error_description="${DESCRIPTION[error]}" id=${quotedHeaderParam(ids)} issuer=${quotedHeaderParam(issuers)}`;
}

/** The bearer tokens of a request's `Authorization` headers (at most 3, as the controller processes). */
export function bearerTokens(values: readonly string[] | undefined): string[] {
  const out: string[] = [];
  for (const v of values ?? []) {
    for (const part of v.split(',')) {
      const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(part);
      if (m) out.push(m[1]!);
      if (out.length === 3) return out;
    }
  }
  return out;
}
