import { type KeyObject, sign, verify } from 'node:crypto';

/** The parts of a compact JWS, decoded but not verified. */
export interface DecodedJwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  /** `<header>.<payload>`: what the signature covers. */
  signingInput: string;
  signature: Buffer;
}

const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url');

function decodeObject(part: string): Record<string, unknown> | null {
  if (!/^[A-Za-z0-9_-]+$/.test(part)) return null;
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A compact JWS split and decoded; null when it is not one (no verification here). */
export function decodeJwt(token: string): DecodedJwt | null {
  if (token.length > 16_384) return null;
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[2] || !/^[A-Za-z0-9_-]+$/.test(parts[2])) return null;
  const header = decodeObject(parts[0]!);
  const claims = decodeObject(parts[1]!);
  if (!header || !claims) return null;
  return { header, claims, signingInput: `${parts[0]}.${parts[1]}`, signature: Buffer.from(parts[2], 'base64url') };
}

/**
 * Signs `claims` as an ES256 compact JWS with header `{alg, kid, typ}`. The signature is computed on
 * libuv's thread pool (the callback form of `crypto.sign`), off the event loop.
 */
export function signEs256(key: KeyObject, kid: string, claims: Record<string, unknown>): Promise<string> {
  const input = `${b64url(JSON.stringify({ alg: 'ES256', kid, typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return new Promise((resolve, reject) =>
    sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }, (err, signature) =>
      err ? reject(err) : resolve(`${input}.${signature.toString('base64url')}`),
    ),
  );
}

/** True when `jwt`'s ES256 signature verifies with `key`. */
export function verifyEs256(key: KeyObject, jwt: DecodedJwt): Promise<boolean> {
  if (jwt.signature.length !== 64) return Promise.resolve(false);
  return new Promise((resolve) =>
    verify('sha256', Buffer.from(jwt.signingInput), { key, dsaEncoding: 'ieee-p1363' }, jwt.signature, (err, ok) => resolve(!err && ok)),
  );
}
