import { principalCacheKey } from '@ziti/http-kit';
import { Harness, M } from './testing/harness.js';

/** Controller settings' events and known controllers; an identity's trace in its principals and the cache drops it causes. */
describe('controller settings and identity tracing', () => {
  let h: Harness;
  let admin: Awaited<ReturnType<Harness['login']>>['principal'];

  beforeAll(async () => {
    h = await Harness.start({ instanceId: 'ctrl-a' });
    admin = (await h.login()).principal;
  });
  afterAll(async () => {
    await h?.close();
  });

  it('names the known controller by ZITI_INSTANCE_ID and stores controller-settings.updated for each change', async () => {
    expect((await h.call('POST', `${M}/controller-settings`, { principal: admin, body: { controllerId: 'ctrl-b' } })).body.error.cause.field).toBe('controllerId');
    expect((await h.call('POST', `${M}/controller-settings`, { principal: admin, body: { controllerId: 'ctrl-a', oidc: { redirectUris: ['https://a/cb'] } } })).status).toBe(201);
    expect((await h.call('PATCH', `${M}/controller-settings/ctrl-a/effective`, { principal: admin, body: { oidc: { postLogoutUris: [] } } })).status).toBe(200);
    expect((await h.call('DELETE', `${M}/controller-settings/ctrl-a/effective`, { principal: admin })).status).toBe(200);
    await h.settle();
    const events = h.events.filter((e) => e.type === 'controller-settings.updated').map((e) => e.data);
    expect(events).toEqual([
      { settingId: 'ctrl-a', change: 'created', oidc: { redirectUris: ['https://a/cb'] } },
      { settingId: 'ctrl-a', change: 'updated', oidc: { redirectUris: ['https://a/cb'], postLogoutUris: [] } },
      { settingId: 'ctrl-a', change: 'deleted', oidc: null },
    ]);
    // A refused write stores nothing.
    const before = await h.sql('SELECT count(*)::int AS n FROM outbox_events');
    expect((await h.call('PUT', `${M}/controller-settings/global/effective`, { principal: admin, body: { oidc: { redirectUris: ['relative'] } } })).status).toBe(400);
    expect(await h.sql('SELECT count(*)::int AS n FROM outbox_events')).toEqual(before);
  });

  it('a trace travels in the principal (login and resolution) until it ends; enabling and disabling drop the cached principals', async () => {
    const user = await h.createUser(admin);
    const { token, principal } = await h.login(user.username, user.password);
    expect(principal.trace).toBeUndefined();
    await h.cache.set(principalCacheKey(token), '{"stale":true}', 30);

    const on = await h.call('PUT', `${M}/identities/${user.id}/trace`, { principal: admin, body: { enabled: true, duration: '5m', traceId: 't-1', channels: ['establishPath'] } });
    expect(on.body.data).toMatchObject({ enabled: true, traceId: 't-1' });
    expect(await h.cache.get(principalCacheKey(token))).toBeNull();
    expect((await h.principal(token)).trace).toEqual({ traceId: 't-1', until: on.body.data.until, channels: ['establishPath'] });
    // A login while traced caches a principal that carries the trace.
    const again = await h.login(user.username, user.password);
    expect(JSON.parse((await h.cache.get(principalCacheKey(again.token)))!).principal.trace).toMatchObject({ traceId: 't-1' });
    await h.settle();
    expect(h.events.filter((e) => e.type === 'identity.updated' && (e.data as { identityId: string }).identityId === user.id).length).toBeGreaterThan(0);

    await h.cache.set(principalCacheKey(token), '{"stale":true}', 30);
    expect((await h.call('PUT', `${M}/identities/${user.id}/trace`, { principal: admin, body: { enabled: false } })).body.data).toEqual({ enabled: false });
    expect(await h.cache.get(principalCacheKey(token))).toBeNull();
    expect((await h.principal(token)).trace).toBeUndefined();

    // One that has run out is not carried.
    await h.sql("UPDATE identities SET trace_id = 'old', trace_until = now() - interval '1 second' WHERE id = $1", [user.id]);
    expect((await h.principal(token)).trace).toBeUndefined();
  });
});
