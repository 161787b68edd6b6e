import { createPublicKey, randomUUID } from 'node:crypto';
import { type ServiceError, status } from '@grpc/grpc-js';
import type { RequestPrincipal } from '@ziti/http-kit';
import {
  type GetTokenVerificationKeysResponse,
  IdentityAuthServiceClient,
  type ListLegacyApiSessionsResponse,
  type ListRevocationsResponse,
  type TouchApiSessionsResponse,
} from '@ziti/proto';
import { type ContextName, internalChannelCredentials, internalRpc } from '@ziti/service-kit';
import { keyId } from './oidc/key-ring.js';
import { type FakeFabric, startFakeFabric } from './testing/fake-fabric.js';
import { C, Harness, M } from './testing/harness.js';
import { totpCodes } from './testing/totp-codes.js';

/** The router control plane's calls (fabric) and the events it follows, on a real database. */
describe('legacy API sessions for routers', () => {
  let h: Harness;
  let fabric: FakeFabric;
  let fabricAddress: string | undefined;
  let admin: RequestPrincipal;
  let rpc: ReturnType<typeof internalRpc<IdentityAuthServiceClient>>;

  beforeAll(async () => {
    fabric = await startFakeFabric();
    fabricAddress = fabric.address;
    h = await Harness.start({ secretsKey: 'router-sessions-test-key', fabricGrpc: () => fabricAddress });
    admin = (await h.login()).principal;
    rpc = internalRpc(IdentityAuthServiceClient, h.service.grpcAddress, 'identity-auth');
  });
  afterAll(async () => {
    rpc?.close();
    await h?.close();
    await fabric?.stop();
  });

  const list = (req: { ids?: string[]; afterId?: string; limit?: number }) =>
    rpc.call<ListLegacyApiSessionsResponse>('listLegacyApiSessions', { ids: [], afterId: '', limit: 0, ...req });
  const touch = (tokens: string[]) => rpc.call<TouchApiSessionsResponse>('touchApiSessions', { tokens });
  const createdEvents = async () => {
    await h.settle();
    return h.events.filter((e) => e.type === 'api-session.created');
  };

  it('a password login without TOTP is pushed: api-session.created carries ids only, the list has the raw token and the certificate fingerprints', async () => {
    const user = await h.createUser(admin, {}, 'router-pass1');
    const { token, principal } = await h.login(user.username, 'router-pass1', 'client');
    const events = (await createdEvents()).filter((e) => (e.data as { identityId: string }).identityId === user.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toEqual({ id: principal.apiSessionId, apiSessionId: principal.apiSessionId, identityId: user.id });
    expect(JSON.stringify(events[0])).not.toContain(token);
    expect(JSON.stringify(events[0])).not.toMatch(/token/i);

    // the identity's certificate authenticator (stored in another case: answered lowercase)
    const fp = 'AB'.repeat(20);
    await h.sql(`INSERT INTO authenticators (id, identity_id, method, fingerprint, cert_pem) VALUES ($1, $2, 'cert', $3, 'pem')`, [randomUUID(), user.id, fp]);
    const res = await list({ ids: [principal.apiSessionId, 'unknown-id'] });
    expect(res).toEqual({ apiSessions: [{ id: principal.apiSessionId, token, identityId: user.id, certFingerprints: [fp.toLowerCase()] }], nextAfterId: '' });
    // no log line carries the token
    expect(h.logs.join('\n')).not.toContain(token);
  });

  it('a session with TOTP pending is not pushed until its TOTP is done; then api-session.created', async () => {
    const user = await h.createUser(admin, {}, 'router-pass2');
    const first = await h.login(user.username, 'router-pass2', 'client');
    expect((await h.call('POST', `${C}/current-identity/mfa`, { principal: first.principal })).status).toBe(201);
    const secret = new URL((await h.call('GET', `${C}/current-identity/mfa`, { principal: first.principal })).body.data.provisioningUrl).searchParams.get('secret')!;
    const totp = totpCodes(secret);
    expect((await h.call('POST', `${C}/current-identity/mfa/verify`, { principal: first.principal, body: { code: totp() } })).status).toBe(200);
    // the first session was complete already: verifying the enrollment does not create it again
    expect((await createdEvents()).filter((e) => (e.data as { identityId: string }).identityId === user.id)).toHaveLength(1);

    const second = await h.login(user.username, 'router-pass2', 'client');
    expect((await list({ ids: [second.principal.apiSessionId] })).apiSessions).toEqual([]);
    expect((await createdEvents()).map((e) => (e.data as { id: string }).id)).not.toContain(second.principal.apiSessionId);

    expect((await h.call('POST', `${C}/authenticate/mfa`, { principal: second.principal, body: { code: totp() } })).status).toBe(200);
    const after = (await createdEvents()).filter((e) => (e.data as { id: string }).id === second.principal.apiSessionId);
    expect(after.map((e) => e.data)).toEqual([{ id: second.principal.apiSessionId, apiSessionId: second.principal.apiSessionId, identityId: user.id }]);
    expect(JSON.stringify(after)).not.toContain(second.token);
    expect((await list({ ids: [second.principal.apiSessionId] })).apiSessions.map((s) => s.token)).toEqual([second.token]);
  });

  it('pages every fully authenticated legacy session in id order; OIDC and idle sessions are left out', async () => {
    const user = await h.createUser(admin, {}, 'router-pass3');
    for (let i = 0; i < 3; i++) await h.login(user.username, 'router-pass3', 'client');
    const [own] = await h.sql<{ identity_id: string; authenticator_id: string }>('SELECT identity_id, authenticator_id FROM api_sessions LIMIT 1');
    await h.sql(`INSERT INTO api_sessions (id, token, identity_id, authenticator_id, kind, expires_at) VALUES ('oidc-1', $1, $2, $3, 'oidc', now() + interval '1 hour')`, [randomUUID(), own!.identity_id, own!.authenticator_id]);
    const idle = await h.login(user.username, 'router-pass3', 'client');
    await h.sql(`UPDATE api_sessions SET last_activity_at = now() - interval '2 hours' WHERE id = $1`, [idle.principal.apiSessionId]);

    const seen: string[] = [];
    let afterId = '';
    for (let pages = 0; pages < 50; pages++) {
      const page = await list({ afterId, limit: 2 });
      expect(page.apiSessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.apiSessions.map((s) => s.id));
      if (!page.nextAfterId) break;
      afterId = page.nextAfterId;
    }
    const [{ ids }] = await h.sql<{ ids: string[] }>(
      `SELECT array_agg(id ORDER BY id) AS ids FROM api_sessions WHERE kind <> 'oidc' AND (is_mfa_complete OR NOT is_mfa_required) AND last_activity_at > now() - interval '1 hour'`,
    );
    expect(seen).toEqual(ids);
    expect(seen).not.toContain('oidc-1');
    expect(seen).not.toContain(idle.principal.apiSessionId);
    expect((await list({ limit: 5000 })).apiSessions.length).toBe(ids.length);
  });

  it('TouchApiSessions marks the activity of the matching sessions and answers the unknown tokens and matched identities', async () => {
    const user = await h.createUser(admin, {}, 'router-pass4');
    const { token, principal } = await h.login(user.username, 'router-pass4', 'client');
    await h.sql(`UPDATE api_sessions SET last_activity_at = now() - interval '10 minutes' WHERE id = $1`, [principal.apiSessionId]);
    const idle = await h.login(user.username, 'router-pass4', 'client');
    await h.sql(`UPDATE api_sessions SET last_activity_at = now() - interval '2 hours' WHERE id = $1`, [idle.principal.apiSessionId]);
    const oidcToken = randomUUID();
    const [own] = await h.sql<{ authenticator_id: string }>('SELECT authenticator_id FROM api_sessions WHERE id = $1', [principal.apiSessionId]);
    await h.sql(`INSERT INTO api_sessions (id, token, identity_id, authenticator_id, kind, expires_at) VALUES ('oidc-2', $1, $2, $3, 'oidc', now() + interval '1 hour')`, [oidcToken, user.id, own!.authenticator_id]);

    const res = await touch([token, 'not-a-token', token, idle.token, oidcToken, 'a\u0000b', '']);
    expect(res.identityIds).toEqual([user.id]);
    expect(res.unknownTokens.sort()).toEqual(['a\u0000b', 'not-a-token', idle.token, oidcToken].sort());
    const [row] = await h.sql<{ fresh: boolean }>(`SELECT last_activity_at > now() - interval '1 minute' AS fresh FROM api_sessions WHERE id = $1`, [principal.apiSessionId]);
    expect(row!.fresh).toBe(true);
    const [stale] = await h.sql<{ fresh: boolean }>(`SELECT last_activity_at > now() - interval '1 hour' AS fresh FROM api_sessions WHERE id = $1`, [idle.principal.apiSessionId]);
    expect(stale!.fresh).toBe(false);
    expect(await touch([])).toEqual({ unknownTokens: [], identityIds: [] });
    expect(h.logs.join('\n')).not.toContain(token);
  });

  it('refuses more than 1000 ids and more than 10000 tokens with INVALID_ARGUMENT', async () => {
    await expect(list({ ids: Array.from({ length: 1001 }, (_, i) => `id-${i}`) })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    expect((await list({ ids: Array.from({ length: 1000 }, (_, i) => `id-${i}`) })).apiSessions).toEqual([]);
    await expect(touch(Array.from({ length: 10_001 }, (_, i) => `t-${i}`))).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    await expect(list({ afterId: 'a\u0000b' })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  });

  it('GetTokenVerificationKeys answers the published OIDC keys as SPKI DER with their JWKS kid', async () => {
    const { keys } = await rpc.call<GetTokenVerificationKeysResponse>('getTokenVerificationKeys', {});
    const jwks = await h.call('GET', '/oidc/keys');
    expect(keys.map((k) => k.kid).sort()).toEqual((jwks.body.keys as { kid: string }[]).map((k) => k.kid).sort());
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      const pub = createPublicKey({ key: Buffer.from(k.publicKeyDer), format: 'der', type: 'spki' });
      expect(pub.asymmetricKeyType).toBe('ec');
      expect(keyId(pub)).toBe(k.kid);
    }
    expect(JSON.stringify(keys)).not.toMatch(/PRIVATE/);
  });

  it('ListRevocations answers the live revocations (by id, or paged in id order) and each new one raises revocation.created with ids only', async () => {
    const user = await h.createUser(admin, {}, 'router-pass4');
    const jti = randomUUID();
    const expired = randomUUID();
    const before = Date.now();
    expect((await h.call('POST', `${M}/revocations`, { principal: admin, body: { id: jti } })).status).toBe(201);
    expect((await h.call('POST', `${M}/revocations`, { principal: admin, body: { id: user.id, type: 'IDENTITY' } })).status).toBe(201);
    await h.sql(`INSERT INTO revocations (id, type, expires_at, issued_before) VALUES ($1, 'JTI', now() - interval '1 second', now() - interval '1 hour')`, [expired]);
    await h.settle();
    const created = h.events.filter((e) => e.type === 'revocation.created').map((e) => e.data);
    expect(created).toEqual(expect.arrayContaining([{ revocationId: jti, type: 'JTI' }, { revocationId: user.id, type: 'IDENTITY' }]));

    const byId = await rpc.call<ListRevocationsResponse>('listRevocations', { ids: [jti, user.id, expired, 'no-such'], afterId: '', limit: 0 });
    expect(byId.nextAfterId).toBe('');
    expect(byId.revocations.map((r) => r.id).sort()).toEqual([jti, user.id].sort());
    const identityRevocation = byId.revocations.find((r) => r.id === user.id)!;
    expect(identityRevocation.type).toBe('IDENTITY');
    expect(identityRevocation.issuedBeforeMs).toBeGreaterThanOrEqual(before - 1000);
    expect(identityRevocation.expiresAtMs).toBeGreaterThan(Date.now() + 3600_000);

    // every live one, two a page: the expired row is never listed
    const seen: string[] = [];
    let afterId = '';
    do {
      const page = await rpc.call<ListRevocationsResponse>('listRevocations', { ids: [], afterId, limit: 2 });
      expect(page.revocations.length).toBeLessThanOrEqual(2);
      seen.push(...page.revocations.map((r) => r.id));
      afterId = page.nextAfterId;
    } while (afterId);
    expect(seen).toEqual([...seen].sort());
    expect(seen).toEqual(expect.arrayContaining([jti, user.id]));
    expect(seen).not.toContain(expired);
  });

  it('the four calls are for the fabric context only', async () => {
    for (const caller of ['gateway', 'policy', 'session', 'pki-enrollment', 'posture'] as ContextName[]) {
      const client = new IdentityAuthServiceClient(h.service.grpcAddress, internalChannelCredentials(caller, 'identity-auth'));
      try {
        const denied = (f: (cb: (e: ServiceError | null) => void) => void) => new Promise<number | undefined>((resolve) => f((e) => resolve(e?.code)));
        expect(await denied((cb) => client.listLegacyApiSessions({ ids: [], afterId: '', limit: 0 }, cb))).toBe(status.PERMISSION_DENIED);
        expect(await denied((cb) => client.touchApiSessions({ tokens: ['x'] }, cb))).toBe(status.PERMISSION_DENIED);
        expect(await denied((cb) => client.getTokenVerificationKeys({}, cb))).toBe(status.PERMISSION_DENIED);
        expect(await denied((cb) => client.listRevocations({ ids: [], afterId: '', limit: 0 }, cb))).toBe(status.PERMISSION_DENIED);
      } finally {
        client.close();
      }
    }
  });

  it('hasEdgeRouterConnection comes from fabric, one call per page; false when fabric does not serve it or is not configured', async () => {
    const user = await h.createUser(admin, {}, 'router-pass5');
    const other = await h.createUser(admin, {}, 'router-pass5');
    fabric.connected = new Set([user.id]);
    fabric.calls.length = 0;
    expect((await h.call('GET', `${M}/identities/${user.id}`, { principal: admin })).body.data.hasEdgeRouterConnection).toBe(true);
    expect((await h.call('GET', `${M}/identities/${other.id}`, { principal: admin })).body.data.hasEdgeRouterConnection).toBe(false);
    const page = await h.call('GET', `${M}/identities?limit=500`, { principal: admin });
    const byId = new Map((page.body.data as { id: string; hasEdgeRouterConnection: boolean }[]).map((i) => [i.id, i.hasEdgeRouterConnection]));
    expect([byId.get(user.id), byId.get(other.id)]).toEqual([true, false]);
    expect(fabric.calls).toHaveLength(3);
    expect(fabric.calls[2]!.identityIds).toEqual(expect.arrayContaining([user.id, other.id]));
    const me = (await h.login(user.username, 'router-pass5', 'client')).principal;
    expect((await h.call('GET', `${C}/current-identity`, { principal: me })).body.data.hasEdgeRouterConnection).toBe(true);

    fabric.connected = null; // UNIMPLEMENTED
    const unimplemented = await h.call('GET', `${M}/identities/${user.id}`, { principal: admin });
    expect([unimplemented.status, unimplemented.body.data.hasEdgeRouterConnection]).toEqual([200, false]);
    fabricAddress = undefined; // not configured
    const unset = await h.call('GET', `${C}/current-identity`, { principal: me });
    expect([unset.status, unset.body.data.hasEdgeRouterConnection]).toEqual([200, false]);
    fabricAddress = '127.0.0.1:1'; // unreachable
    const down = await h.call('GET', `${M}/identities/${user.id}`, { principal: admin });
    expect([down.status, down.body.data.hasEdgeRouterConnection]).toEqual([200, false]);
    fabricAddress = fabric.address;
    fabric.connected = new Set();
  });
});
