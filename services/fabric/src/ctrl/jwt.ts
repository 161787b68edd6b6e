import { type KeyObject, verify } from 'node:crypto';

const MAX_TOKEN = 16 * 1024;
const CLOCK_SKEW_S = 5;
const HASH: Record<string, string> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512', RS256: 'sha256', RS384: 'sha384', RS512: 'sha512', PS256: 'sha256' };

function part(token: string, i: number): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(Buffer.from(token.split('.')[i] ?? '', 'base64url').toString('utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The `kid` of a compact JWS's header; undefined when the token is not one. */
export function jwtKid(token: string): string | undefined {
  if (token.length > MAX_TOKEN || token.split('.').length !== 3) return undefined;
  const h = part(token, 0);
  return typeof h?.kid === 'string' ? h.kid : undefined;
}

/**
 * The claims of a compact JWS signed by `key` with the algorithm its header names (ES256/384/512,
 * RS256/384/512, PS256), within its `nbf`/`exp`; undefined otherwise. `none` and HMAC never verify.
 */
export function verifyJwt(token: string, key: KeyObject, now = Date.now() / 1000): Record<string, unknown> | undefined {
  if (token.length > MAX_TOKEN) return undefined;
  const [h, p, sig] = token.split('.');
  if (!h || !p || !sig) return undefined;
  const header = part(token, 0);
  const alg = typeof header?.alg === 'string' ? header.alg : '';
  const hash = HASH[alg];
  if (!hash) return undefined;
  const signature = Buffer.from(sig, 'base64url');
  const data = Buffer.from(`${h}.${p}`);
  let ok = false;
  try {
    if (alg.startsWith('ES')) ok = verify(hash, data, { key, dsaEncoding: 'ieee-p1363' }, signature);
    else if (alg.startsWith('PS')) ok = verify(hash, data, { key, padding: 6, saltLength: 32 }, signature);
    else ok = verify(hash, data, key, signature);
  } catch {
    return undefined;
  }
  if (!ok) return undefined;
  const claims = part(token, 1);
  if (!claims) return undefined;
  if (typeof claims.exp === 'number' && claims.exp + CLOCK_SKEW_S < now) return undefined;
  if (typeof claims.nbf === 'number' && claims.nbf - CLOCK_SKEW_S > now) return undefined;
  return claims;
}
