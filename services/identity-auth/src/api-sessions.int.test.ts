import type { ServiceError } from '@grpc/grpc-js';
import { fromGrpcError } from '@ziti/errors';
import { type RequestPrincipal, principalCacheKey, tokenHash } from '@ziti/http-kit';
import { Harness, M } from './testing/harness.js';

describe('management API sessions', () => {
  let h: Harness;
  let admin: RequestPrincipal;

  beforeAll(async () => {
    h = await Harness.start();
    admin = (await h.login()).principal;
  });
  afterAll(async () => {
    await h?.close();
  });

  it('lists API sessions with paging and filters', async () => {
    const second = await h.login();
    const res = await h.call('GET', `${M}/api-sessions`, { principal: admin });
    expect(res.status).toBe(200);
    expect(res.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 2 });
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['id', 'identity', 'token', 'createdAt', 'lastActivityAt']));
    const one = await h.call('GET', `${M}/api-sessions?filter=${encodeURIComponent(`id = "${second.principal.apiSessionId}"`)}`, { principal: admin });
    expect(one.body.data.map((s: any) => s.id)).toEqual([second.principal.apiSessionId]);
    const byIdentity = await h.call('GET', `${M}/api-sessions?filter=${encodeURIComponent(`identity = "${admin.identityId}" sort by createdAt desc`)}`, {
      principal: admin,
    });
    expect(byIdentity.body.data[0].id).toBe(second.principal.apiSessionId);
    expect((await h.call('GET', `${M}/api-sessions?filter=${encodeURIComponent('bogus = 1')}`, { principal: admin })).body.error.code).toBe('INVALID_FILTER');
  });

  it('shows one API session', async () => {
    const { token, principal } = await h.login();
    const res = await h.call('GET', `${M}/api-sessions/${principal.apiSessionId}`, { principal: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: principal.apiSessionId,
      token,
      identityId: admin.identityId,
      identity: { id: admin.identityId, name: 'Default Admin', entity: 'identities' },
      configTypes: [],
      authQueries: [],
      isMfaRequired: false,
      isMfaComplete: false,
      isCertExtendable: false,
      ipAddress: expect.any(String),
      tags: {},
      _links: {
        self: { href: `./api-sessions/${principal.apiSessionId}` },
        sessions: { href: `./api-sessions/${principal.apiSessionId}/sessions` },
      },
    });
    expect(res.body.data.expiresAt).toBeUndefined();
    expect((await h.call('GET', `${M}/api-sessions/unknown`, { principal: admin })).status).toBe(404);
  });

  it('deletes an API session: its token stops working at once', async () => {
    const { token, principal } = await h.login();
    await h.cache.set(principalCacheKey(token), '{}', 30);
    const res = await h.call('DELETE', `${M}/api-sessions/${principal.apiSessionId}`, { principal: admin });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {}, meta: {} });
    expect(await h.cache.get(principalCacheKey(token))).toBeNull();
    const err = await h.resolve(token).then(
      () => null,
      (e: ServiceError) => fromGrpcError(e),
    );
    expect(err?.code).toBe('UNAUTHORIZED');
    expect((await h.call('DELETE', `${M}/api-sessions/${principal.apiSessionId}`, { principal: admin })).status).toBe(404);
    await h.settle();
    const e = h.events.find((x) => x.type === 'api-session.deleted' && x.data.apiSessionId === principal.apiSessionId);
    expect(e?.data).toEqual({ apiSessionId: principal.apiSessionId, identityId: admin.identityId, tokenHashes: [tokenHash(token)] });
  });

  it('is for admins only (admin_readonly may read)', async () => {
    const user = { ...admin, isAdmin: false, isDefaultAdmin: false, permissions: ['identity'] };
    const res = await h.call('GET', `${M}/api-sessions`, { principal: user });
    expect([res.status, res.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    const ro = { ...user, permissions: ['admin_readonly'] };
    expect((await h.call('GET', `${M}/api-sessions`, { principal: ro })).status).toBe(200);
    expect((await h.call('DELETE', `${M}/api-sessions/${admin.apiSessionId}`, { principal: ro })).status).toBe(401);
  });

  it('is not served on the client API', async () => {
    expect((await h.call('GET', '/edge/client/v1/api-sessions', { principal: admin })).status).toBe(404);
  });
});
