import { auth, type EdgeApi } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectEmpty, expectError, expectList, expectSuccess } from '../support/envelope.js';

/** Management API sessions: list, detail, delete (reference §1.2, §2.3, §7). */

const ctl = useController();
failOnConformanceProblems();

const INVALID = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"';

let admin: EdgeApi;
let adminIdentityId: string;
beforeAll(async () => {
  admin = await ctl().adminSession('management');
  const me = await admin.currentIdentity.get();
  expectSuccess(me);
  adminIdentityId = me.body.data.id;
});

async function newSession(api: 'client' | 'management' = 'client'): Promise<{ session: EdgeApi; id: string }> {
  const { res, session } = await auth.login(ctl().http, ctl().admin.username, ctl().admin.password, api);
  expectSuccess(res);
  return { session, id: res.body.data.id };
}

describe('list and detail', () => {
  it('lists the sessions, each with token, identity and links', async () => {
    const a = await newSession('client');
    const b = await newSession('management');
    const res = await admin.apiSessions.list({ limit: -1 });
    expectList(res);
    const byId = new Map(res.body.data.map((s: any) => [s.id, s]));
    for (const s of [a, b]) {
      expect(byId.get(s.id)).toMatchObject({ id: s.id, token: s.session.token, identityId: adminIdentityId, identity: { id: adminIdentityId, entity: 'identities' } });
    }
    expect(res.body.meta.pagination.totalCount).toBe(res.body.data.length);
  });

  it('filters by id', async () => {
    const a = await newSession();
    const res = await admin.apiSessions.list({ filter: `id = "${a.id}"` });
    expectList(res);
    expect(res.body.data.map((s: { id: string }) => s.id)).toEqual([a.id]);
  });

  it('detail → the session, with ./api-sessions/<id> as self link', async () => {
    const a = await newSession();
    const res = await admin.apiSessions.get(a.id);
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ id: a.id, token: a.session.token, identityId: adminIdentityId, isMfaRequired: false });
    expect(res.body.data._links.self.href).toBe(`./api-sessions/${a.id}`);
  });

  it("the identity's detail reports hasApiSession", async () => {
    const res = await admin.identities.get(adminIdentityId);
    expectSuccess(res);
    expect(res.body.data.hasApiSession).toBe(true);
  });

  it('an unknown id → 404 NOT_FOUND', async () => {
    expectError(await admin.apiSessions.get('doesNotExist'), 404, 'NOT_FOUND');
  });

  it('without a session → 401 UNAUTHORIZED', async () => {
    expectError(await admin.withToken(undefined).apiSessions.list(), 401, 'UNAUTHORIZED');
  });
});

describe('delete', () => {
  it('DELETE /api-sessions/{id} → that token gets 401 at once, and the session is gone', async () => {
    const victim = await newSession('client');
    expectSuccess(await victim.session.currentIdentity.get());
    expectEmpty(await admin.apiSessions.delete(victim.id));
    for (let i = 0; i < 3; i++) {
      const res = await victim.session.currentIdentity.get();
      expectError(res, 401, 'UNAUTHORIZED');
      expect(res.headers['www-authenticate']).toBe(INVALID);
    }
    expectError(await admin.apiSessions.get(victim.id), 404, 'NOT_FOUND');
    expectError(await admin.apiSessions.delete(victim.id), 404, 'NOT_FOUND');
    expectSuccess(await admin.currentIdentity.get());
  });

  it('a session deleted while in use on the management API is refused there too', async () => {
    const victim = await newSession('management');
    expectList(await victim.session.identities.list());
    expectEmpty(await admin.apiSessions.delete(victim.id));
    expectError(await victim.session.identities.list(), 401, 'UNAUTHORIZED');
  });

  it('logout removes the session from the list', async () => {
    const s = await newSession();
    expectEmpty(await s.session.currentApiSession.delete());
    expectError(await admin.apiSessions.get(s.id), 404, 'NOT_FOUND');
  });
});
