import { randomUUID } from 'node:crypto';
import { type RequestPrincipal, principalCacheKey } from '@ziti/http-kit';
import type { Cache } from '@ziti/messaging';
import { revocationMarkerKey } from '@ziti/http-kit';
import { Revocations } from './oidc/revocations.js';
import { type Harness, C, M } from './testing/harness.js';
import { INVALID_BEARER, OidcFixture, nowSeconds } from './testing/oidc.js';

/**
 * Revocations (OIDC.md "Revocations", "How a revocation reaches every replica at once"): the
 * management API, the rows and Redis markers written by identity disable/delete and session ends, the prune.
 * OIDC sessions are inserted as the provider stores them (UUID id, kind 'oidc', token `oidc:<uuid>`).
 */
describe('OIDC revocations', () => {
  let f: OidcFixture;
  let h: Harness;
  let admin: RequestPrincipal;
  let redis: Cache;

  beforeAll(async () => {
    f = await OidcFixture.start();
    ({ h, admin, redis } = f);
  });
  afterAll(async () => {
    await f?.close();
  });

  describe('/revocations', () => {
    const post = (body: unknown, principal = admin) => h.call('POST', `${M}/revocations`, { principal, body });
    const marker = (type: string, id: string) => redis.get(revocationMarkerKey(type as 'JTI', id));

    it('creates a JTI revocation by default, for 24 h, with its marker, and shows it', async () => {
      const id = randomUUID();
      const started = Date.now();
      const res = await post({ id, tags: { why: 'leaked' } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ data: { id, _links: { self: { href: `./revocations/${id}` } } }, meta: {} });
      const detail = await h.call('GET', `${M}/revocations/${id}`, { principal: admin });
      expect(detail.status).toBe(200);
      expect(detail.body.data).toEqual({
        id, type: 'JTI', tags: { why: 'leaked' }, expiresAt: expect.any(String), createdAt: expect.any(String), updatedAt: expect.any(String),
        _links: { self: { href: `./revocations/${id}` } },
      });
      const expiresIn = Date.parse(detail.body.data.expiresAt) - started;
      expect(expiresIn).toBeGreaterThanOrEqual(86_400_000 - 1000);
      expect(expiresIn).toBeLessThanOrEqual(86_400_000 + 60_000);
      const [row] = await h.sql<{ issued_before: Date }>('SELECT issued_before FROM revocations WHERE id = $1', [id]);
      expect(await marker('JTI', id)).toBe(String(row!.issued_before.getTime()));
    });

    it('replaces a revocation of the same id with a fresh cutoff', async () => {
      const identityId = await f.user();
      expect((await post({ id: identityId, type: 'IDENTITY' })).status).toBe(201);
      const [first] = await h.sql<{ issued_before: Date }>('SELECT issued_before FROM revocations WHERE id = $1', [identityId]);
      await new Promise((r) => setTimeout(r, 20));
      expect((await post({ id: identityId, type: 'IDENTITY', tags: { n: 2 } })).status).toBe(201);
      const rows = await h.sql<{ issued_before: Date; tags: unknown }>('SELECT issued_before, tags FROM revocations WHERE id = $1', [identityId]);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.issued_before.getTime()).toBeGreaterThan(first!.issued_before.getTime());
      expect(rows[0]!.tags).toEqual({ n: 2 });
      expect(await marker('IDENTITY', identityId)).toBe(String(rows[0]!.issued_before.getTime()));
    });

    it('validates the id and type', async () => {
      for (const type of ['JTI', 'API_SESSION', undefined]) {
        const res = await post({ id: 'not-a-uuid', type });
        expect([res.status, res.body.error.code]).toEqual([400, 'COULD_NOT_VALIDATE']);
        expect(res.body.error.cause).toMatchObject({ field: 'id', reason: 'must be a valid UUID v4', value: 'not-a-uuid' });
      }
      const unknown = await post({ id: 'no-such-identity', type: 'IDENTITY' });
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'NOT_FOUND']);
      const badType = await post({ id: randomUUID(), type: 'SESSION' });
      expect([badType.status, badType.body.error.cause.field]).toEqual([400, 'type']);
      expect((await post({ type: 'JTI' })).status).toBe(400);
      expect((await h.call('GET', `${M}/revocations/${randomUUID()}`, { principal: admin })).status).toBe(404);
    });

    it('lists with filter, sort and paging; admins only (admin_readonly may read)', async () => {
      const ids = [randomUUID(), randomUUID()];
      for (const id of ids) expect((await post({ id, type: 'API_SESSION' })).status).toBe(201);
      const q = encodeURIComponent(`type = "API_SESSION" and id in ["${ids[0]}", "${ids[1]}"] sort by id asc`);
      const res = await h.call('GET', `${M}/revocations?filter=${q}&limit=1`, { principal: admin });
      expect(res.status).toBe(200);
      expect(res.body.meta.pagination).toEqual({ limit: 1, offset: 0, totalCount: 2 });
      expect(res.body.data.map((r: { id: string }) => r.id)).toEqual([[...ids].sort()[0]]);
      expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['id', 'type', 'expiresAt', 'createdAt']));
      const user = { ...admin, isAdmin: false, isDefaultAdmin: false, permissions: [] };
      expect((await h.call('GET', `${M}/revocations`, { principal: user })).status).toBe(401);
      expect((await post({ id: randomUUID() }, user)).status).toBe(401);
      const ro = { ...user, permissions: ['admin_readonly'] };
      expect((await h.call('GET', `${M}/revocations`, { principal: ro })).status).toBe(200);
      expect((await post({ id: randomUUID() }, ro)).status).toBe(401);
      expect((await h.call('GET', `${C}/revocations`, { principal: admin })).status).toBe(404);
    });

    it('prunes expired revocations in batches', async () => {
      await h.sql(
        `INSERT INTO revocations (id, type, expires_at, issued_before)
         SELECT gen_random_uuid()::text, 'JTI', now() - interval '1 minute', now() - interval '1 day' FROM generate_series(1, 1203)`,
      );
      const live = randomUUID();
      expect((await post({ id: live })).status).toBe(201);
      const pruned = await f.withUow((uow) => new Revocations(uow, redis).prune());
      expect(pruned).toBeGreaterThanOrEqual(1203);
      expect(await h.sql("SELECT id FROM revocations WHERE expires_at < now()")).toEqual([]);
      expect(await h.sql('SELECT id FROM revocations WHERE id = $1', [live])).toHaveLength(1);
    });
  });

  describe('what ends an identity or a session revokes its tokens', () => {
    const revocation = async (id: string) => (await h.sql<{ type: string; issued_before: Date }>('SELECT type, issued_before FROM revocations WHERE id = $1', [id]))[0];

    it('disabling an identity writes an IDENTITY revocation and its marker; disabling it again keeps the first', async () => {
      const identityId = await f.user();
      const sid = await f.oidcSession(identityId);
      const token = await f.accessToken(identityId, sid, { iat: nowSeconds() - 1 });
      expect((await h.call('POST', `${M}/identities/${identityId}/disable`, { principal: admin, body: { durationMinutes: 0 } })).status).toBe(200);
      const r = await revocation(identityId);
      expect(r?.type).toBe('IDENTITY');
      expect(await redis.get(revocationMarkerKey('IDENTITY', identityId))).toBe(String(r!.issued_before.getTime()));
      expect(await h.sql('SELECT id FROM api_sessions WHERE id = $1', [sid])).toEqual([]);
      expect(await f.refusal(token)).toBe(INVALID_BEARER);
      await new Promise((res) => setTimeout(res, 20));
      expect((await h.call('POST', `${M}/identities/${identityId}/disable`, { principal: admin, body: { durationMinutes: 5 } })).status).toBe(200);
      expect((await revocation(identityId))!.issued_before.getTime()).toBe(r!.issued_before.getTime());
    });

    it('a password lockout is a disable too', async () => {
      await h.sql('UPDATE auth_policies SET primary_updb_max_attempts = 2, primary_updb_lockout_duration_minutes = 5');
      try {
        const u = await h.createUser(admin);
        for (let i = 0; i < 2; i++) await h.call('POST', `${C}/authenticate?method=password`, { body: { username: u.username, password: 'wrong-password' } });
        expect((await revocation(u.id))?.type).toBe('IDENTITY');
        expect(await redis.get(revocationMarkerKey('IDENTITY', u.id))).toMatch(/^\d+$/);
      } finally {
        await h.sql('UPDATE auth_policies SET primary_updb_max_attempts = 0, primary_updb_lockout_duration_minutes = 0');
      }
    });

    it('deleting an identity writes an IDENTITY revocation and its marker', async () => {
      const identityId = await f.user();
      expect((await h.call('DELETE', `${M}/identities/${identityId}`, { principal: admin })).status).toBe(200);
      const r = await revocation(identityId);
      expect(r?.type).toBe('IDENTITY');
      expect(await redis.get(revocationMarkerKey('IDENTITY', identityId))).toBe(String(r!.issued_before.getTime()));
    });

    it('ending an OIDC session (logout or management delete) writes an API_SESSION revocation and its marker', async () => {
      const identityId = await f.user();
      const sid = await f.oidcSession(identityId);
      const token = await f.accessToken(identityId, sid);
      const principal = (await h.resolveBearer(token)).principal as RequestPrincipal;
      await redis.set(principalCacheKey(token), '{}', 30);
      expect((await h.call('DELETE', `${C}/current-api-session`, { principal })).status).toBe(200);
      expect((await revocation(sid))?.type).toBe('API_SESSION');
      expect(await redis.get(revocationMarkerKey('API_SESSION', sid))).toMatch(/^\d+$/);
      expect(await f.refusal(token)).toBe(INVALID_BEARER);

      const sid2 = await f.oidcSession(identityId);
      expect((await h.call('DELETE', `${M}/api-sessions/${sid2}`, { principal: admin })).status).toBe(200);
      expect((await revocation(sid2))?.type).toBe('API_SESSION');
      expect(await redis.get(revocationMarkerKey('API_SESSION', sid2))).toMatch(/^\d+$/);
    });

    it('ending a legacy session revokes nothing', async () => {
      const { principal } = await h.login();
      expect((await h.call('DELETE', `${C}/current-api-session`, { principal })).status).toBe(200);
      expect(await revocation(principal.apiSessionId)).toBeUndefined();
    });
  });
});
