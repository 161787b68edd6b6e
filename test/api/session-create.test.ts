import { createHash, createPublicKey, type X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { auth, type EdgeApi } from '../support/clients.js';
import { networkBuilder, sessionClients, verifyJwt } from '../support/clients-session.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';

/**
 * Client POST /sessions (reference §5.4, §6.4): the order of its refusals, the 201 body, the
 * session token's claims and signature, deduplication; reading and deleting sessions on both APIs.
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let net: ReturnType<typeof networkBuilder>;
let user: { id: string; client: EdgeApi; api: ReturnType<typeof sessionClients> };
const svc: Record<string, string> = {};

/** The gateway's TLS server certificate, as a client sees it. */
function serverCertificate(url: string, ca: string): Promise<X509Certificate> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca, servername: hostname }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.end();
      if (cert) resolve(cert);
      else reject(new Error('no peer certificate'));
    });
    socket.on('error', reject);
  });
}

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  net = networkBuilder(mgmt);
  const tag = net.unique('t');
  const identity = await net.identity([`${tag}-users`]);
  const login = await auth.login(ctl().http, identity.username, identity.password, 'client');
  if (!login.token) throw new Error(`login failed: ${login.res.text}`);
  user = { id: identity.id, client: login.session, api: sessionClients(login.session) };

  await net.edgeRouter([`${tag}-routers`]);
  await net.edgeRouterPolicy([`#${tag}-users`], [`#${tag}-routers`]);
  svc.dial = await net.service([`${tag}-dial`]);
  svc.both = await net.service([`${tag}-both`]);
  svc.bindOnly = await net.service([`${tag}-bind`]);
  svc.invisible = await net.service([`${tag}-nobody`]);
  svc.posture = await net.service([`${tag}-posture`]);
  svc.noRouters = await net.service([`${tag}-lonely`]);
  await net.serviceEdgeRouterPolicy([`#${tag}-dial`, `#${tag}-both`, `#${tag}-bind`, `#${tag}-posture`, `#${tag}-nobody`], [`#${tag}-routers`]);
  await net.servicePolicy('Dial', [`#${tag}-users`], [`#${tag}-dial`, `#${tag}-both`, `#${tag}-lonely`]);
  await net.servicePolicy('Bind', [`#${tag}-users`], [`#${tag}-both`, `#${tag}-bind`]);
  await net.postureCheck('DOMAIN', { domains: ['never.example'] }, [`${tag}-pc`]);
  svc.posturePolicy = await net.servicePolicy('Dial', [`#${tag}-users`], [`#${tag}-posture`], [`#${tag}-pc`]);
});

describe('success', () => {
  it('201 with the session, its edge routers and a token that is a JWT signed with the controller certificate', async () => {
    const res = await user.api.createSession(svc.dial!);
    expectSuccess(res, 201);
    const s = res.body.data;
    expect(s.id).toMatch(/^c[0-9a-z]{24}$/);
    expect(s).toMatchObject({
      apiSessionId: expect.any(String),
      identityId: user.id,
      serviceId: svc.dial,
      type: 'Dial',
      service: { id: svc.dial, entity: 'services' },
      apiSession: { entity: 'api-sessions' },
      _links: { self: { href: `./sessions/${s.id}` } },
    });
    expect(s.edgeRouters).toHaveLength(1);
    expect(s.edgeRouters[0]).toMatchObject({ isOnline: false, disabled: false, supportedProtocols: expect.any(Object), urls: expect.any(Object) });

    const cert = await serverCertificate(ctl().url, ctl().running.caCertPem);
    const { valid, header, claims } = verifyJwt(s.token, createPublicKey(cert.publicKey.export({ type: 'spki', format: 'pem' })));
    expect(valid).toBe(true);
    expect(header.kid).toBe(createHash('sha1').update(cert.raw).digest('hex'));
    expect(Object.keys(claims).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'sub', 'z_asid', 'z_iid', 'z_leg', 'z_st', 'z_t']);
    expect(claims).toMatchObject({ sub: svc.dial, aud: ['openziti'], jti: s.id, z_asid: s.apiSessionId, z_iid: user.id, z_t: 's', z_st: 'Dial', z_leg: true });
    expect(claims.iss).toMatch(/^https:\/\//);
    expect(Number(claims.exp) - Number(claims.iat)).toBeGreaterThanOrEqual(365 * 24 * 3600);
  });

  it('a repeat for the same API session, service and type returns the same session; another type is another session', async () => {
    const first = (await user.api.createSession(svc.both!, 'Dial')).body.data;
    const again = await user.api.createSession(svc.both!, 'Dial');
    expectSuccess(again, 201);
    expect([again.body.data.id, again.body.data.token]).toEqual([first.id, first.token]);
    const bind = await user.api.createSession(svc.both!, 'Bind');
    expectSuccess(bind, 201);
    expect(bind.body.data.id).not.toBe(first.id);
    expect(bind.body.data.type).toBe('Bind');
  });
});

describe('refusals, in the order of §5.4', () => {
  it('a service the identity may not see → 404 NOT_FOUND (also an unknown id)', async () => {
    expectError(await user.api.createSession(svc.invisible!), 404, 'NOT_FOUND');
    expectError(await user.api.createSession('no-such-service'), 404, 'NOT_FOUND');
  });

  it('a type the policies do not permit → 400 COULD_NOT_VALIDATE on ServiceId', async () => {
    const res = await user.api.createSession(svc.bindOnly!, 'Dial');
    expectFieldError(res, 'ServiceId');
    expect(res.body.error.cause.reason).toBe('service not found');
    expectFieldError(await user.api.createSession(svc.dial!, 'Bind'), 'ServiceId');
  });

  it('failing posture → 409 INVALID_POSTURE naming the failing policy, recorded as a failed service request', async () => {
    const res = await user.api.createSession(svc.posture!);
    expectError(res, 409, 'INVALID_POSTURE');
    expect(res.body.error.cause.message).toBe(`Failed to pass posture checks for service policies: [${svc.posturePolicy}]`);
    expect(res.body.error.cause.data[svc.posturePolicy!]).toEqual([{ id: expect.any(String), typeId: 'DOMAIN', isPassing: false }]);
    const failed = await sessionClients(mgmt).failedServiceRequests(user.id);
    expectSuccess(failed);
    expect(failed.body.data.at(-1)).toMatchObject({
      serviceId: svc.posture,
      sessionType: 'Dial',
      policyFailures: [{ policyId: svc.posturePolicy, checks: [{ postureCheckType: 'DOMAIN', expectedValue: ['never.example'], actualValue: '' }] }],
    });
  });

  it('no edge router shared by the identity’s and the service’s policies → 400 NO_EDGE_ROUTERS_AVAILABLE', async () => {
    expectError(await user.api.createSession(svc.noRouters!), 400, 'NO_EDGE_ROUTERS_AVAILABLE');
  });

  it('an unauthenticated caller → 401', async () => {
    expectError(await sessionClients(user.client.withToken(undefined)).createSession(svc.dial!), 401, 'UNAUTHORIZED');
  });
});

describe('reading and deleting', () => {
  it('client: lists and details the caller’s own sessions', async () => {
    const s = (await user.api.createSession(svc.dial!)).body.data;
    const list = await user.api.sessions.list();
    expectList(list);
    expect(list.body.data.every((x: { identityId: string }) => x.identityId === user.id)).toBe(true);
    expect(list.body.data.map((x: { id: string }) => x.id)).toContain(s.id);
    const detail = await user.api.sessions.get(s.id);
    expectSuccess(detail);
    expect(detail.body.data).toMatchObject({ id: s.id, token: s.token, serviceId: svc.dial });
    const filtered = await user.api.sessions.list({ filter: `service = "${svc.dial}"` });
    expect(filtered.body.data.map((x: { id: string }) => x.id)).toEqual([s.id]);
  });

  it('management: an admin lists every session, details one with its service policies, reads its route path', async () => {
    const s = (await user.api.createSession(svc.dial!)).body.data;
    const api = sessionClients(mgmt);
    const list = await api.sessions.list({ filter: `identity = "${user.id}"`, limit: -1 });
    expectList(list);
    expect(list.body.data.map((x: { id: string }) => x.id)).toContain(s.id);
    const detail = await api.sessions.get(s.id);
    expectSuccess(detail);
    expect(detail.body.data.servicePolicies).toEqual([expect.objectContaining({ entity: 'service-policies' })]);
    const path = await api.routePath(s.id);
    expectSuccess(path);
    expect(path.body.data).toEqual({ routePath: [] });
  });

  it('DELETE ends the session: 404 afterwards, and a new create makes a new one', async () => {
    const s = (await user.api.createSession(svc.dial!)).body.data;
    expectEmpty(await user.api.sessions.delete(s.id));
    expectError(await user.api.sessions.get(s.id), 404, 'NOT_FOUND');
    expectError(await user.api.sessions.delete(s.id), 404, 'NOT_FOUND');
    const fresh = await user.api.createSession(svc.dial!);
    expectSuccess(fresh, 201);
    expect(fresh.body.data.id).not.toBe(s.id);
  });
});
