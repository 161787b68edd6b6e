import { type KeyObject, createPublicKey } from 'node:crypto';
import { isIP } from 'node:net';
import { ApiError } from '@ziti/errors';

/** The most names one control listener certificate may carry. */
export const MAX_CTRL_SANS = 32;
/** A public key PEM is a few hundred bytes (RSA 8192: under 2 KiB). */
const MAX_KEY_PEM_LENGTH = 16 * 1024;
const DNS_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

/** A DNS name (letters, digits, hyphens; labels of at most 63, at most 253 in all; no wildcard). */
export function isDnsName(name: string): boolean {
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  return n.length > 0 && n.length <= 253 && n.split('.').every((label) => DNS_LABEL.test(label));
}

/**
 * The names of a control listener certificate: each a DNS name or an IP address, 1 to 32 of them
 * (400 on `sans` otherwise, INVALID_ARGUMENT over gRPC). Lower-cased, duplicates dropped.
 */
export function ctrlSans(sans: readonly string[]): string[] {
  const given = (sans ?? []).map((s) => (typeof s === 'string' ? s.trim() : ''));
  if (given.length === 0) throw ApiError.field('sans', 'at least one DNS name or IP address is required', 0);
  if (given.length > MAX_CTRL_SANS) throw ApiError.field('sans', `at most ${MAX_CTRL_SANS} names`, given.length);
  for (const s of given) {
    if (!isIP(s) && !isDnsName(s)) throw ApiError.field('sans', 'each name must be a DNS name or an IP address', s.slice(0, 256));
  }
  return [...new Set(given.map((s) => s.toLowerCase()))];
}

/**
 * The public key a control listener certificate is issued for: a SubjectPublicKeyInfo PEM
 * (`PUBLIC KEY`) of an EC P-256 or P-384 key or an RSA key of at least 2048 bits. Anything else,
 * a private key included (none may cross the wire), is 400 on `publicKeyPem`.
 */
export function ctrlPublicKey(pem: string): KeyObject {
  const refuse = (reason: string) => ApiError.field('publicKeyPem', reason);
  if (typeof pem !== 'string' || pem.length === 0) throw refuse('a SubjectPublicKeyInfo PEM is required');
  if (pem.length > MAX_KEY_PEM_LENGTH) throw refuse('too long for a public key');
  const text = pem.trim();
  if (!text.startsWith('-----BEGIN PUBLIC KEY-----') || !text.endsWith('-----END PUBLIC KEY-----') || /PRIVATE/.test(text)) {
    throw refuse('must be one SubjectPublicKeyInfo PEM (BEGIN PUBLIC KEY)');
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: text, format: 'pem' });
  } catch {
    throw refuse('not a readable public key');
  }
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'ec' && (details.namedCurve === 'prime256v1' || details.namedCurve === 'secp384r1')) return key;
  if (key.asymmetricKeyType === 'rsa' && (details.modulusLength ?? 0) >= 2048 && (details.modulusLength ?? 0) <= 16384) return key;
  throw refuse('must be an EC P-256 or P-384 key or an RSA key of at least 2048 bits');
}
