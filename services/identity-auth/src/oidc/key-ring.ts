import { type KeyObject, createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { Pool } from 'pg';
import type { SecretBox } from '../domain/mfa/secret-box.js';
import { MAX_TOKEN_SECONDS } from './claims.js';
import { type DecodedJwt, decodeJwt, signEs256, verifyEs256 } from './jwt.js';

/** A key as stored: the private key sealed, the public one as a JWK. */
export interface StoredKey {
  id: string;
  alg: string;
  privateKey: string;
  publicJwk: Record<string, unknown>;
  createdAt: Date;
  retiredAt: Date | null;
}

/** Where the keys live (`oidc_keys`). */
export interface OidcKeyStore {
  /** Every key, newest first. */
  list(): Promise<StoredKey[]>;
  /**
   * Adds `key` and retires every other unretired key, as one step, unless an unretired key newer
   * than `unlessNewerThan` exists (another replica rotated first): then nothing changes and false.
   */
  rotate(key: StoredKey, unlessNewerThan?: Date): Promise<boolean>;
  /** Deletes keys retired before `cutoff`; how many. */
  deleteRetiredBefore(cutoff: Date): Promise<number>;
}

/** A key ready to verify (and, for the current one, to sign). */
interface LoadedKey {
  kid: string;
  publicKey: KeyObject;
  jwk: Record<string, unknown>;
  createdAt: Date;
  retiredAt: Date | null;
}

export type VerifiedToken = { ok: true; claims: Record<string, unknown>; kid: string } | { ok: false; error: 'invalid' | 'expired' };

/** `kid` of a public key: base64url SHA-256 of its SubjectPublicKeyInfo DER. */
export function keyId(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
}

/** A new ES256 key, its private half sealed with `box` (associated data: its id). */
export function newKey(box: SecretBox, now = new Date()): StoredKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const id = keyId(publicKey);
  const jwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  return {
    id,
    alg: 'ES256',
    privateKey: box.seal(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, id),
    publicJwk: { ...jwk, kid: id, alg: 'ES256', use: 'sig' },
    createdAt: now,
    retiredAt: null,
  };
}

export interface KeyRingOptions {
  /** How often the key set is read again (another replica may have rotated). Default 60 s. */
  reloadMs?: number;
  /** How long a retired key keeps verifying and stays published. Default the longest token lifetime. */
  retainMs?: number;
  now?: () => number;
}

/**
 * The OIDC provider's keys (OIDC.md "Keys and rotation"): the newest unretired key signs; every key
 * not yet pruned verifies and is published in the JWKS. The set is read again every `reloadMs`, for
 * the JWKS at most a second old, and at once (at most once a second) when a token names a key this
 * replica does not know.
 */
export class KeyRing {
  private keys: LoadedKey[] = [];
  private signing: { kid: string; key: KeyObject } | undefined;
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;
  private lastMissReload = -Infinity;
  private readonly reloadMs: number;
  private readonly retainMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: OidcKeyStore,
    private readonly box: SecretBox,
    opts: KeyRingOptions = {},
  ) {
    this.reloadMs = opts.reloadMs ?? 60_000;
    this.retainMs = opts.retainMs ?? MAX_TOKEN_SECONDS * 1000;
    this.now = opts.now ?? Date.now;
  }

  /** Signs `claims` with the current key (creating the first key when there is none). */
  async sign(claims: Record<string, unknown>): Promise<string> {
    await this.ensureSigningKey();
    const s = this.signing;
    if (!s) throw new Error('identity-auth: no OIDC signing key');
    return signEs256(s.key, s.kid, claims);
  }

  /**
   * Verifies a token's ES256 signature by its `kid`, and `exp`/`nbf` unless `ignoreExpiry`. Claims
   * are otherwise the caller's to check.
   */
  async verify(token: string, opts: { ignoreExpiry?: boolean } = {}): Promise<VerifiedToken> {
    const jwt = decodeJwt(token);
    if (!jwt || jwt.header.alg !== 'ES256' || typeof jwt.header.kid !== 'string') return { ok: false, error: 'invalid' };
    const key = await this.keyFor(jwt.header.kid);
    if (!key || !(await verifyEs256(key.publicKey, jwt))) return { ok: false, error: 'invalid' };
    if (!opts.ignoreExpiry) {
      const nowS = this.now() / 1000;
      const { exp, nbf } = jwt.claims;
      if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowS + 1)) return { ok: false, error: 'invalid' };
      if (exp !== undefined && typeof exp !== 'number') return { ok: false, error: 'invalid' };
      if (typeof exp === 'number' && exp <= nowS) return { ok: false, error: 'expired' };
    }
    return { ok: true, claims: jwt.claims, kid: jwt.header.kid };
  }

  /** The published key set: every key that may have signed a live token. */
  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    // Read again at most once a second: a rotation elsewhere is published at once.
    await this.ensureSigningKey(1000);
    return { keys: this.keys.filter((k) => this.live(k)).map((k) => k.jwk) };
  }

  /**
   * The public keys of the published key set (`jwks`), as SubjectPublicKeyInfo DER with their
   * `kid`: the keys routers verify OIDC access tokens with (the router data model).
   */
  async verificationKeys(): Promise<{ kid: string; publicKeyDer: Buffer }[]> {
    await this.ensureSigningKey(1000);
    return this.keys.filter((k) => this.live(k)).map((k) => ({ kid: k.kid, publicKeyDer: k.publicKey.export({ type: 'spki', format: 'der' }) }));
  }

  /** The `alg` values keys sign with. */
  readonly algorithms = ['ES256'];

  /** A new signing key; the previous one is retired (it keeps verifying for `retainMs`). Its kid. */
  async rotate(): Promise<string> {
    const key = newKey(this.box, new Date(this.now()));
    await this.store.rotate(key);
    await this.reload();
    return key.id;
  }

  /**
   * Rotates when the signing key is older than `maxAgeMs`; of replicas racing, one rotates (the
   * store refuses a rotation when a newer key appeared meanwhile). True when this call rotated.
   */
  async rotateIfOlderThan(maxAgeMs: number): Promise<boolean> {
    await this.reload();
    const current = this.keys.find((k) => k.retiredAt === null);
    if (current && this.now() - current.createdAt.getTime() < maxAgeMs) return false;
    const rotated = await this.store.rotate(newKey(this.box, new Date(this.now())), current?.createdAt ?? new Date(0));
    await this.reload();
    return rotated;
  }

  /** Deletes keys retired longer than `retainMs` ago. */
  async prune(): Promise<number> {
    const n = await this.store.deleteRetiredBefore(new Date(this.now() - this.retainMs));
    if (n > 0) await this.reload();
    return n;
  }

  /**
   * The key set, fresh enough; the first key is created when there is none (replicas racing create
   * one). The service calls it at start, so no request or background sweep creates the first key.
   */
  async ensureSigningKey(maxAgeMs = this.reloadMs): Promise<void> {
    if (this.now() - this.loadedAt >= maxAgeMs) await this.reload();
    if (this.signing) return;
    await this.store.rotate(newKey(this.box, new Date(this.now())), new Date(0));
    await this.reload();
  }

  private live(k: LoadedKey): boolean {
    return k.retiredAt === null || this.now() - k.retiredAt.getTime() < this.retainMs;
  }

  private async keyFor(kid: string): Promise<LoadedKey | undefined> {
    await this.fresh();
    let key = this.keys.find((k) => k.kid === kid);
    if (!key && this.now() - this.lastMissReload >= 1000) {
      this.lastMissReload = this.now();
      await this.reload();
      key = this.keys.find((k) => k.kid === kid);
    }
    return key && this.live(key) ? key : undefined;
  }

  private async fresh(): Promise<void> {
    if (this.now() - this.loadedAt >= this.reloadMs) await this.reload();
  }

  private reload(): Promise<void> {
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    const stored = await this.store.list();
    const keys: LoadedKey[] = [];
    let signing: { kid: string; key: KeyObject } | undefined;
    for (const s of stored) {
      if (s.alg !== 'ES256') continue;
      const publicKey = createPublicKey({ key: s.publicJwk as import('node:crypto').JsonWebKey, format: 'jwk' });
      keys.push({ kid: s.id, publicKey, jwk: s.publicJwk, createdAt: s.createdAt, retiredAt: s.retiredAt });
      if (!signing && s.retiredAt === null) signing = { kid: s.id, key: createPrivateKey(this.box.open(s.privateKey, s.id)) };
    }
    this.keys = keys;
    this.signing = signing;
    this.loadedAt = this.now();
  }
}

/** The key store on identity-auth's schema (`oidc_keys`). */
export function sqlKeyStore(pool: Pool): OidcKeyStore {
  const row = (r: Record<string, unknown>): StoredKey => ({
    id: r.id as string,
    alg: r.alg as string,
    privateKey: r.private_key as string,
    publicJwk: r.public_jwk as Record<string, unknown>,
    createdAt: r.created_at as Date,
    retiredAt: (r.retired_at as Date | null) ?? null,
  });
  return {
    async list() {
      const r = await pool.query('SELECT * FROM oidc_keys ORDER BY created_at DESC, id');
      return r.rows.map(row);
    },
    async rotate(key, unlessNewerThan) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        // One rotation at a time across replicas: the lock is held until commit.
        await client.query("SELECT pg_advisory_xact_lock(hashtext('identity_auth.oidc_keys'))");
        if (unlessNewerThan) {
          const newer = await client.query('SELECT 1 FROM oidc_keys WHERE retired_at IS NULL AND created_at > $1 LIMIT 1', [unlessNewerThan]);
          if (newer.rowCount) {
            await client.query('ROLLBACK');
            return false;
          }
        }
        await client.query('UPDATE oidc_keys SET retired_at = $1 WHERE retired_at IS NULL', [key.createdAt]);
        await client.query('INSERT INTO oidc_keys (id, alg, private_key, public_jwk, created_at) VALUES ($1, $2, $3, $4, $5)', [
          key.id,
          key.alg,
          key.privateKey,
          JSON.stringify(key.publicJwk),
          key.createdAt,
        ]);
        await client.query('COMMIT');
        return true;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async deleteRetiredBefore(cutoff) {
      const r = await pool.query('DELETE FROM oidc_keys WHERE retired_at IS NOT NULL AND retired_at < $1', [cutoff]);
      return r.rowCount ?? 0;
    },
  };
}
