import { createSchemaPool } from '@ziti/db-kit';
import { type TestDatabase, createTestDatabase, testInfra } from '@ziti/test-kit';
import type { Pool } from 'pg';
import { SecretBox } from '../domain/mfa/secret-box.js';
import { SCHEMA, runMigrations } from '../schema.js';
import { KeyRing, sqlKeyStore } from './key-ring.js';
import { decodeJwt } from './jwt.js';

describe('KeyRing (oidc_keys on PostgreSQL)', () => {
  let db: TestDatabase;
  let pool: Pool;
  const box = new SecretBox('key-ring-test-secret');
  let clock = Date.now();
  const now = () => clock;
  const ring = (opts: { reloadMs?: number } = {}) => new KeyRing(sqlKeyStore(pool), box, { now, ...opts });

  beforeAll(async () => {
    db = await createTestDatabase((await testInfra()).databaseUrl, 'keyring');
    await runMigrations(db.url);
    pool = createSchemaPool(db.url, SCHEMA);
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });
  beforeEach(async () => {
    clock = Date.now();
    await pool.query('DELETE FROM oidc_keys');
  });

  it('creates the first key on first use, signs ES256 with its kid, and verifies what it signed', async () => {
    const a = ring();
    const token = await a.sign({ sub: 'x', exp: Math.floor(clock / 1000) + 60 });
    const jwt = decodeJwt(token)!;
    expect(jwt.header).toEqual({ alg: 'ES256', kid: expect.any(String), typ: 'JWT' });
    const rows = await pool.query('SELECT id, private_key FROM oidc_keys');
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0].id).toBe(jwt.header.kid);
    expect(rows.rows[0].private_key).toMatch(/^v1\./); // sealed, not PEM
    await expect(a.verify(token)).resolves.toEqual({ ok: true, claims: { sub: 'x', exp: expect.any(Number) }, kid: jwt.header.kid });
    expect((await a.jwks()).keys).toEqual([expect.objectContaining({ kid: jwt.header.kid, kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })]);
    expect(JSON.stringify(await a.jwks())).not.toContain('"d"');
  });

  it('refuses a tampered token, a token of an unknown key, and an expired one (as expired)', async () => {
    const a = ring();
    const token = await a.sign({ sub: 'x', exp: Math.floor(clock / 1000) + 60 });
    const [h, p, s] = token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'admin', exp: Math.floor(clock / 1000) + 60 })).toString('base64url')}.${s}`;
    await expect(a.verify(forged)).resolves.toEqual({ ok: false, error: 'invalid' });
    await expect(a.verify(`${h}.${p}`)).resolves.toEqual({ ok: false, error: 'invalid' });
    await expect(a.verify('not-a-jwt')).resolves.toEqual({ ok: false, error: 'invalid' });
    const otherKid = `${Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'nope', typ: 'JWT' })).toString('base64url')}.${p}.${s}`;
    await expect(a.verify(otherKid)).resolves.toEqual({ ok: false, error: 'invalid' });
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid: decodeJwt(token)!.header.kid })).toString('base64url')}.${p}.`;
    await expect(a.verify(none)).resolves.toEqual({ ok: false, error: 'invalid' });
    clock += 61_000;
    await expect(a.verify(token)).resolves.toEqual({ ok: false, error: 'expired' });
    await expect(a.verify(token, { ignoreExpiry: true })).resolves.toMatchObject({ ok: true });
  });

  it('a rotation on one replica: the other learns the new key from a token that names it, old tokens stay valid', async () => {
    const a = ring();
    const b = ring(); // another replica, same table
    const before = await a.sign({ sub: 'before' });
    await expect(b.verify(before)).resolves.toMatchObject({ ok: true });
    const newKid = await a.rotate();
    const after = await a.sign({ sub: 'after' });
    expect(decodeJwt(after)!.header.kid).toBe(newKid);
    clock += 1500; // b reloads on an unknown kid at most once a second
    await expect(b.verify(after)).resolves.toMatchObject({ ok: true, kid: newKid });
    await expect(b.verify(before)).resolves.toMatchObject({ ok: true });
    expect((await b.jwks()).keys.map((k) => k.kid).sort()).toEqual([decodeJwt(before)!.header.kid, newKid].sort());
  });

  it('a retired key verifies until it is pruned, one token lifetime after retirement', async () => {
    const a = ring();
    const old = await a.sign({ sub: 'old' });
    await a.rotate();
    clock += 23 * 3600_000;
    await expect(a.prune()).resolves.toBe(0);
    await expect(a.verify(old, { ignoreExpiry: true })).resolves.toMatchObject({ ok: true });
    clock += 2 * 3600_000;
    await expect(a.verify(old, { ignoreExpiry: true })).resolves.toEqual({ ok: false, error: 'invalid' });
    await expect(a.prune()).resolves.toBe(1);
    expect((await a.jwks()).keys).toHaveLength(1);
  });

  it('replicas racing to rotate an old key rotate it once', async () => {
    await ring().sign({ sub: 'first' });
    clock += 31 * 86_400_000;
    const results = await Promise.all([ring().rotateIfOlderThan(30 * 86_400_000), ring().rotateIfOlderThan(30 * 86_400_000)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const rows = await pool.query('SELECT retired_at FROM oidc_keys');
    expect(rows.rows.filter((r) => r.retired_at === null)).toHaveLength(1);
    expect(rows.rows).toHaveLength(2);
    await expect(ring().rotateIfOlderThan(30 * 86_400_000)).resolves.toBe(false);
  });
});
