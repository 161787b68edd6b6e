import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals secrets at rest (TOTP secrets and recovery codes): AES-256-GCM with a random 96-bit IV,
 * the owning record's id as associated data (a sealed value can not be moved to another identity),
 * stored as `v1.<base64url(iv | ciphertext | tag)>`. The key is HKDF-SHA256 of the configured
 * secret, so one deployment-wide secret is all that has to be kept.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(secret: string) {
    if (!secret) throw new Error('SecretBox: an encryption secret is required');
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), 'ziti-identity-auth', 'mfa-secrets-v1', 32));
  }

  seal(plain: string, aad: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, ct, cipher.getAuthTag()]).toString('base64url')}`;
  }

  /** Throws when the value was not sealed with this key and associated data. */
  open(sealed: string, aad: string): string {
    const [version, body] = sealed.split('.', 2);
    if (version !== VERSION || !body) throw new Error('SecretBox: unknown sealed value format');
    const raw = Buffer.from(body, 'base64url');
    const iv = raw.subarray(0, IV_BYTES);
    const tag = raw.subarray(raw.length - TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}
