import { type KeyObject, createECDH, createPrivateKey, hkdfSync } from 'node:crypto';

// The order n of the P-256 group.
const P256_N = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

/**
 * The EC P-256 key derived from a secret (HKDF-SHA256, 48 bytes reduced into [1, n-1] as FIPS
 * 186-4 B.4.1 does): whoever holds the secret holds the key, and nobody needs to send it. The
 * edge API's server key is made this way, so the gateway (TLS) and pki-enrollment (the JWTs SDKs
 * verify against the certificate served at `iss`) hold the same key without it crossing the
 * wire. `purpose` separates keys made from one secret.
 */
export function deriveEcKey(secret: string, purpose: string): KeyObject {
  if (secret.length === 0) throw new Error('deriveEcKey: the secret is empty');
  const okm = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.from('ziti-derived-ec-key'), Buffer.from(purpose, 'utf8'), 48));
  const d = (BigInt(`0x${okm.toString('hex')}`) % (P256_N - 1n)) + 1n;
  const dBytes = Buffer.from(d.toString(16).padStart(64, '0'), 'hex');
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(dBytes);
  const point = ecdh.getPublicKey();
  return createPrivateKey({
    key: { kty: 'EC', crv: 'P-256', d: dBytes.toString('base64url'), x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') },
    format: 'jwk',
  });
}

/** The purpose of the edge API server key (its TLS certificate, enrollment and session JWTs). */
export const EDGE_SERVER_KEY_PURPOSE = 'edge-api-server-key/v1';
