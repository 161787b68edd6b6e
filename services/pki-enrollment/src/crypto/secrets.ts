import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Encryption at rest of the controller's private keys: AES-256-GCM, 96-bit random IV, the row's
 * name as additional data (a ciphertext cannot be moved to another row), with a key derived by
 * HKDF-SHA256 from `ZITI_PKI_KEY` when set, else from the internal secret.
 *
 * Stored form: `v1.<iv b64>.<tag b64>.<ciphertext b64>`.
 */
export class KeyVault {
  private readonly key: Buffer;

  constructor(material: string) {
    if (!material) throw new Error('pki-enrollment: a key-encryption secret is required (ZITI_PKI_KEY or the internal secret)');
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(material, 'utf8'), Buffer.from('ziti-pki-enrollment'), Buffer.from('private keys at rest v1'), 32));
  }

  seal(name: string, plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(name, 'utf8'));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join('.');
  }

  /** Throws when the ciphertext was made with another key or for another name. */
  open(name: string, sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error(`pki-enrollment: unreadable sealed key "${name}"`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(name, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(
        `pki-enrollment: the private key "${name}" can not be decrypted: ZITI_PKI_KEY (or the internal secret it defaults to) differs from the one it was stored with`,
      );
    }
  }
}
