import { X509Certificate } from 'node:crypto';
import { internalRpc } from '@ziti/service-kit';
import { newChangeEvent } from '@ziti/messaging';
import { PkiEnrollmentServiceClient, type RouterEnrollment, type VerifyClientCertificateResponse } from '@ziti/proto';
import { decodeJwt, jwtVerify } from 'jose';
import { createTestCa, csrPem, ecKeyPair } from './testing/certs.js';
import { type TestService, call, pemToDers, principal, startTestService } from './testing/harness.js';

const admin = principal();
const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();

describe('CAs, client certificates, routers and API-session certificates', () => {
  let t: TestService;
  // Each method called as the context that calls it in the controller.
  let grpc: ReturnType<typeof internalRpc<PkiEnrollmentServiceClient>>;
  const rpc = <Res>(method: keyof PkiEnrollmentServiceClient & string, req: object) => grpc.call<Res>(method, req);
  beforeAll(async () => {
    t = await startTestService();
    grpc = internalRpc(PkiEnrollmentServiceClient, t.grpcAddress, 'pki-enrollment');
  });
  afterAll(async () => {
    grpc?.close();
    await t?.stop();
  });

  const caBody = (ca: { certPem: string }, over: Record<string, unknown> = {}) => ({
    name: `ca-${Math.random().toString(36).slice(2)}`, certPem: ca.certPem, isAutoCaEnrollmentEnabled: true, isOttCaEnrollmentEnabled: true,
    isAuthEnabled: true, identityRoles: ['from-ca', 'devices'], ...over,
  });
  const verify = (id: string, pem: string) => call(t.url, { path: `/cas/${id}/verify`, principal: admin, raw: pem, headers: { 'content-type': 'text/plain' } });
  async function createdVerifiedCa(over: Record<string, unknown> = {}) {
    const ca = createTestCa();
    const id = (await call(t.url, { path: '/cas', principal: admin, json: caBody(ca, over) })).body.data.id as string;
    const token = (await call(t.url, { path: `/cas/${id}`, principal: admin })).body.data.verificationToken as string;
    expect((await verify(id, ca.issue(token).certPem)).status).toBe(200);
    return { ca, id };
  }

  describe('CAs', () => {
    it('are created unverified, with a verification token, links and defaults; a non-CA or reused certificate is refused', async () => {
      const ca = createTestCa();
      const res = await call(t.url, { path: '/cas', principal: admin, json: caBody(ca, { name: 'first-ca' }) });
      expect(res.status).toBe(201);
      const d = (await call(t.url, { path: `/cas/${res.body.data.id}`, principal: admin })).body.data;
      expect(d).toMatchObject({
        name: 'first-ca', isVerified: false, identityNameFormat: '[caName]-[commonName]', identityRoles: ['from-ca', 'devices'],
        fingerprint: new X509Certificate(ca.certPem).fingerprint.replace(/:/g, '').toLowerCase(),
        _links: { self: { href: `./cas/${d.id}` }, verify: { href: `./cas/${d.id}/verify` }, jwt: { href: `./cas/${d.id}/jwt` } },
      });
      expect(d.verificationToken).toMatch(/^[0-9a-f-]{36}$/);
      expect(d).not.toHaveProperty('externalIdClaim');

      const again = await call(t.url, { path: '/cas', principal: admin, json: caBody(ca) });
      expect([again.status, again.body.error.cause.field]).toEqual([400, 'certPem']);
      const sameName = await call(t.url, { path: '/cas', principal: admin, json: caBody(createTestCa(), { name: 'first-ca' }) });
      expect([sameName.status, sameName.body.error.cause.field]).toEqual([400, 'name']);
      const leaf = await call(t.url, { path: '/cas', principal: admin, json: caBody({ certPem: ca.issue('not-a-ca').certPem }) });
      expect([leaf.status, leaf.body.error.code]).toEqual([400, 'CERTIFICATE_IS_NOT_CA']);
      const claim = await call(t.url, {
        path: '/cas', principal: admin,
        json: caBody(createTestCa(), { externalIdClaim: { location: 'SAN_URI', matcher: 'PREFIX', matcherCriteria: 'x', parser: 'NONE', parserCriteria: '', index: 0 } }),
      });
      expect([claim.status, claim.body.error.cause.field]).toEqual([400, 'externalIdClaim.matcher']);
    });

    it('verify: the token as common name and the CA signature are required, once', async () => {
      const ca = createTestCa();
      const id = (await call(t.url, { path: '/cas', principal: admin, json: caBody(ca) })).body.data.id;
      const token = (await call(t.url, { path: `/cas/${id}`, principal: admin })).body.data.verificationToken;
      const wrongCn = await verify(id, ca.issue('not-the-token').certPem);
      expect([wrongCn.status, wrongCn.body.error.code]).toEqual([400, 'INVALID_COMMON_NAME']);
      const otherCa = await verify(id, createTestCa().issue(token).certPem);
      expect([otherCa.status, otherCa.body.error.code]).toEqual([400, 'CERTIFICATE_FAILED_VALIDATION']);
      const key = await verify(id, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');
      expect([key.status, key.body.error.code]).toEqual([400, 'EXPECTED_PEM_CERTIFICATE']);
      expect((await verify(id, ca.issue(token).certPem)).status).toBe(200);
      const twice = await verify(id, ca.issue(token).certPem);
      expect([twice.status, twice.body.error.code]).toEqual([409, 'CA_ALREADY_VERIFIED']);
      const d = (await call(t.url, { path: `/cas/${id}`, principal: admin })).body.data;
      expect(d.isVerified).toBe(true);
      expect(d._links).not.toHaveProperty('verify');
    });

    it('serves its enrollment JWT as application/jwt, and patches merge the externalId claim', async () => {
      const { id } = await createdVerifiedCa();
      const jwt = await call(t.url, { path: `/cas/${id}/jwt`, principal: admin });
      expect(jwt.headers.get('content-type')).toBe('application/jwt');
      const signing = await rpc<{ certPem: string }>('getSigningCertificate', {});
      const { payload } = await jwtVerify(jwt.text, new X509Certificate(signing.certPem).publicKey, { audience: 'openziti-enroller' });
      expect(payload).toEqual({ em: 'ca', iss: 'https://ctrl.example.test:1280/', sub: id, jti: id, aud: ['openziti-enroller'] });

      const claim = { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE', parserCriteria: '', index: 0 };
      expect((await call(t.url, { method: 'PATCH', path: `/cas/${id}`, principal: admin, json: { externalIdClaim: claim } })).status).toBe(200);
      expect((await call(t.url, { method: 'PATCH', path: `/cas/${id}`, principal: admin, json: { externalIdClaim: { index: 1 }, name: 'patched' } })).status).toBe(200);
      const d = (await call(t.url, { path: `/cas/${id}`, principal: admin })).body.data;
      expect(d).toMatchObject({ name: 'patched', externalIdClaim: { ...claim, index: 1 }, isVerified: true, identityRoles: ['from-ca', 'devices'] });
      const put = await call(t.url, {
        method: 'PUT', path: `/cas/${id}`, principal: admin,
        json: { name: 'put', identityNameFormat: '', identityRoles: [], isAuthEnabled: false, isAutoCaEnrollmentEnabled: false, isOttCaEnrollmentEnabled: false },
      });
      expect(put.status).toBe(200);
      const after = (await call(t.url, { path: `/cas/${id}`, principal: admin })).body.data;
      expect(after).toMatchObject({ name: 'put', identityRoles: [], isAuthEnabled: false, identityNameFormat: '[caName]-[commonName]' });
      expect(after._links).not.toHaveProperty('jwt');
    });

    it('auto-enrolls a device: an identity named by the format, with the CA roles; unverified CAs and missing claims are refused', async () => {
      const { ca, id } = await createdVerifiedCa({ identityNameFormat: '[caName] - [commonName] - [requestedName]', name: 'Acme CA' });
      const device = ca.issue('sensor-7');
      const res = await call(t.url, { api: 'client', path: '/enroll/ca', method: 'POST', chain: pemToDers(device.certPem), json: { name: 'bob' } });
      expect([res.status, res.body]).toEqual([200, { data: {}, meta: {} }]);
      const created = [...t.directory.identities.values()].find((i) => i.name === 'Acme CA - sensor-7 - bob');
      expect(created).toMatchObject({ roleAttributes: ['from-ca', 'devices'] });
      expect(t.directory.authenticators.find((a) => a.identityId === created!.id)).toMatchObject({ method: 'cert', caId: id });

      const unverified = createTestCa();
      await call(t.url, { path: '/cas', principal: admin, json: caBody(unverified) });
      const refused = await call(t.url, { api: 'client', path: '/enroll?method=ca', method: 'POST', chain: pemToDers(unverified.issue('x').certPem) });
      expect([refused.status, refused.body.error.code]).toEqual([400, 'CERT_FAILED_VALIDATION']);
      const none = await call(t.url, { api: 'client', path: '/enroll/ca', method: 'POST' });
      expect([none.status, none.body.error.code]).toEqual([400, 'CERT_FAILED_VALIDATION']);

      const claimed = await createdVerifiedCa({ externalIdClaim: { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE', parserCriteria: '', index: 0 } });
      const noClaim = await call(t.url, { api: 'client', path: '/enroll/ca', method: 'POST', chain: pemToDers(claimed.ca.issue('no-uri').certPem) });
      expect([noClaim.status, noClaim.body.error.code]).toEqual([400, 'MISSING_CERT_CLAIM']);
      const withClaim = await call(t.url, { api: 'client', path: '/enroll/ca', method: 'POST', chain: pemToDers(claimed.ca.issue('uri', { uris: ['spiffe://acme/dev/9'] }).certPem) });
      expect(withClaim.status).toBe(200);
      expect([...t.directory.identities.values()].find((i) => i.externalId === 'spiffe://acme/dev/9')).toBeDefined();
    });

    it('ottca: the enrollment CA must have issued the presented certificate', async () => {
      const { ca, id } = await createdVerifiedCa();
      const identity = t.directory.add('ottca-user');
      const eid = (await call(t.url, { path: '/enrollments', principal: admin, json: { method: 'ottca', caId: id, identityId: identity.id, expiresAt: inAnHour() } })).body.data.id;
      const token = (await call(t.url, { path: `/enrollments/${eid}`, principal: admin })).body.data.token;
      const foreign = await call(t.url, { api: 'client', path: '/enroll/ottca', json: { token }, chain: pemToDers(createTestCa().issue('x').certPem) });
      expect([foreign.status, foreign.body.error.code]).toEqual([400, 'CERT_FAILED_VALIDATION']);
      const device = ca.issue('ottca-device');
      const ok = await call(t.url, { api: 'client', path: '/enroll/ottca', json: { token }, chain: pemToDers(device.certPem) });
      expect(ok.status).toBe(200);
      expect(t.directory.authenticators.find((a) => a.identityId === identity.id)).toMatchObject({
        caId: id, isIssuedByNetwork: false, fingerprint: new X509Certificate(device.certPem).fingerprint.replace(/:/g, '').toLowerCase(),
      });
    });

    it('delete removes the CA and its enrollments, and asks identity-auth to drop its authenticators', async () => {
      const { id } = await createdVerifiedCa();
      const identity = t.directory.add('ca-delete');
      const eid = (await call(t.url, { path: '/enrollments', principal: admin, json: { method: 'ottca', caId: id, identityId: identity.id, expiresAt: inAnHour() } })).body.data.id;
      const seen: string[] = [];
      const sub = await t.bus.subscribeBroadcast('pki-enrollment', ['ca.deleted'], (e) => {
        seen.push((e.data as { caId: string }).caId);
      });
      try {
        expect((await call(t.url, { method: 'DELETE', path: `/cas/${id}`, principal: admin })).status).toBe(200);
        expect((await call(t.url, { path: `/cas/${id}`, principal: admin })).status).toBe(404);
        expect((await call(t.url, { path: `/enrollments/${eid}`, principal: admin })).status).toBe(404);
        expect(t.directory.deletedCaAuthenticators).toContain(id);
        for (let i = 0; i < 100 && !seen.includes(id); i++) await new Promise((r) => setTimeout(r, 20));
        expect(seen).toContain(id);
      } finally {
        await sub.stop();
      }
    });
  });

  describe('VerifyClientCertificate', () => {
    it('verifies first-party chains (improper without the intermediate), third-party ones with their externalId, and refuses others', async () => {
      const identity = t.directory.add('verify-me');
      const eid = (await call(t.url, { path: '/enrollments', principal: admin, json: { method: 'ott', identityId: identity.id, expiresAt: inAnHour() } })).body.data.id;
      const token = (await call(t.url, { path: `/enrollments/${eid}`, principal: admin })).body.data.token;
      const cert = (await call(t.url, { api: 'client', path: '/enroll/ott', json: { token, clientCsr: csrPem(ecKeyPair()) } })).body.data.cert as string;
      const [leaf, int] = pemToDers(cert);

      const proper = await rpc<VerifyClientCertificateResponse>('verifyClientCertificate', { chainDer: [leaf, int] });
      expect(proper).toMatchObject({ verified: true, improperClientCertChain: false, fingerprint: t.directory.authenticators.find((a) => a.identityId === identity.id)!.fingerprint, isExpired: false });
      expect(proper.ca).toBeUndefined();
      const improper = await rpc<VerifyClientCertificateResponse>('verifyClientCertificate', { chainDer: [leaf] });
      expect(improper).toMatchObject({ verified: true, improperClientCertChain: true });

      const claimed = await createdVerifiedCa({ externalIdClaim: { location: 'COMMON_NAME', matcher: 'ALL', matcherCriteria: '', parser: 'SPLIT', parserCriteria: '.', index: 1 } });
      const third = await rpc<VerifyClientCertificateResponse>('verifyClientCertificate', { chainDer: pemToDers(claimed.ca.issue('dev.ext-42').certPem) });
      expect(third).toMatchObject({ verified: true, externalId: 'ext-42', missingExternalIdClaim: false, ca: { id: claimed.id, identityRoles: ['from-ca', 'devices'] } });

      const authOff = await createdVerifiedCa({ isAuthEnabled: false });
      expect((await rpc<VerifyClientCertificateResponse>('verifyClientCertificate', { chainDer: pemToDers(authOff.ca.issue('x').certPem) })).verified).toBe(false);
      expect((await rpc<VerifyClientCertificateResponse>('verifyClientCertificate', { chainDer: pemToDers(createTestCa().issue('x').certPem) })).verified).toBe(false);
      expect((await rpc<VerifyClientCertificateResponse>('verifyClientCertificate', { chainDer: [] })).verified).toBe(false);
    });
  });

  describe('routers', () => {
    it('enroll with erott, extend with the current certificate (the old one stops working), re-enroll (the old JWT stops working)', async () => {
      const routerId = 'router-1';
      const created = await rpc<RouterEnrollment>('createRouterEnrollment', { routerId, routerType: 'edge', routerName: 'er-one', expiresAt: '' });
      expect(created).toMatchObject({ routerId, isVerified: false, routerType: 'edge' });
      // `ziti router enroll` writes the `ctrls` endpoints into the router's config (no ctrl address configured here: the edge host, port 6262).
      expect(decodeJwt(created.jwt)).toMatchObject({ em: 'erott', sub: routerId, jti: created.token, aud: [''], ctrls: ['tls:ctrl.example.test:6262'] });
      const listed = await call(t.url, { path: `/enrollments?filter=${encodeURIComponent(`edgeRouter="${routerId}"`)}`, principal: admin });
      expect(listed.body.data[0]).toMatchObject({ method: 'erott', edgeRouterId: routerId, edgeRouter: { id: routerId, name: 'er-one', entity: 'edge-routers' } });

      const clientKeys = ecKeyPair();
      const wrongCn = await call(t.url, { api: 'client', path: '/enroll/erott', json: { token: created.token, serverCsr: csrPem(ecKeyPair(), { commonName: 'x' }), clientCsr: csrPem(clientKeys, { commonName: 'not-the-router' }) } });
      expect([wrongCn.status, wrongCn.body.error.code]).toEqual([400, 'EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID']);
      const enrolled = await call(t.url, {
        api: 'client', path: `/enroll?method=erott&token=${created.token}`,
        json: { serverCertCsr: csrPem(ecKeyPair(), { commonName: routerId, dns: ['er1.example'], ips: ['10.9.8.7'] }), certCsr: csrPem(clientKeys, { commonName: routerId }) },
      });
      expect(enrolled.status).toBe(200);
      // As the controller answers: client and server certificates each with the intermediate (the chain minus the root), and the CA bundle.
      expect(pemToDers(enrolled.body.data.cert)).toHaveLength(2);
      expect(pemToDers(enrolled.body.data.serverCert)).toHaveLength(2);
      expect(pemToDers(enrolled.body.data.serverCert)[1]).toEqual(pemToDers(enrolled.body.data.ca)[1]);
      const server = new X509Certificate(enrolled.body.data.serverCert);
      expect(server.subjectAltName).toBe('DNS:er1.example, IP Address:10.9.8.7');
      expect(pemToDers(enrolled.body.data.ca)).toHaveLength(2);
      const state = await rpc<RouterEnrollment>('getRouterEnrollment', { routerId });
      const clientCert = new X509Certificate(enrolled.body.data.cert);
      expect(state).toMatchObject({ isVerified: true, token: '', fingerprint: clientCert.fingerprint.replace(/:/g, '').toLowerCase() });
      const reused = await call(t.url, { api: 'client', path: '/enroll/erott', json: { token: created.token, serverCsr: csrPem(ecKeyPair()), clientCsr: csrPem(ecKeyPair(), { commonName: routerId }) } });
      expect(reused.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');

      const extend = (chain: Buffer[]) =>
        call(t.url, { api: 'client', path: '/enroll/extend/router', chain, json: { certCsr: csrPem(ecKeyPair(), { commonName: routerId }), serverCertCsr: csrPem(ecKeyPair(), { commonName: routerId }) } });
      expect((await call(t.url, { api: 'client', path: '/enroll/extend/router', json: { certCsr: 'x', serverCertCsr: 'y' } })).status).toBe(401);
      const extended = await extend([clientCert.raw]);
      expect(extended.status).toBe(200);
      expect(pemToDers(extended.body.data.cert)).toHaveLength(2);
      expect(pemToDers(extended.body.data.serverCert)).toHaveLength(2);
      expect((await rpc<RouterEnrollment>('getRouterEnrollment', { routerId })).fingerprint).toBe(
        new X509Certificate(pemToDers(extended.body.data.cert)[0]!).fingerprint.replace(/:/g, '').toLowerCase(),
      );
      expect((await extend([clientCert.raw])).status).toBe(401);

      const again = await rpc<RouterEnrollment>('createRouterEnrollment', { routerId, routerType: 'edge', routerName: 'er-one', expiresAt: inAnHour() });
      expect(again).toMatchObject({ isVerified: false, fingerprint: '' });
      expect(again.token).not.toBe(created.token);
      await rpc('deleteRouterEnrollment', { routerId });
      await expect(rpc('getRouterEnrollment', { routerId })).rejects.toMatchObject({ code: 5 });
    });

    it('a transit router enrolls with trott, as `ziti router enroll` posts it', async () => {
      const routerId = 'transit-1';
      const created = await rpc<RouterEnrollment>('createRouterEnrollment', { routerId, routerType: 'transit', routerName: 'tr-one', expiresAt: '' });
      expect(decodeJwt(created.jwt)).toMatchObject({ em: 'trott', sub: routerId, jti: created.token, ctrls: ['tls:ctrl.example.test:6262'] });
      const enrolled = await call(t.url, {
        api: 'client', path: `/enroll?method=trott&token=${created.token}`,
        json: { serverCertCsr: csrPem(ecKeyPair(), { commonName: routerId }), certCsr: csrPem(ecKeyPair(), { commonName: routerId }) },
      });
      expect(enrolled.status).toBe(200);
      expect(Object.keys(enrolled.body.data).sort()).toEqual(['ca', 'cert', 'serverCert']);
      expect(pemToDers(enrolled.body.data.cert)).toHaveLength(2);
      expect((await rpc<RouterEnrollment>('getRouterEnrollment', { routerId })).isVerified).toBe(true);
    });
  });

  describe('API-session certificates', () => {
    it('are issued from a CSR for 12 hours, visible only to their session, and deleted with it', async () => {
      const mine = principal({ identityId: 'ident-1', apiSessionId: 'session-a', isAdmin: false, isDefaultAdmin: false });
      const other = principal({ identityId: 'ident-1', apiSessionId: 'session-b', isAdmin: false, isDefaultAdmin: false });
      const created = await call(t.url, { api: 'client', path: '/current-api-session/certificates', principal: mine, json: { csr: csrPem(ecKeyPair(), { commonName: 'sess' }) } });
      expect(created.status).toBe(201);
      const cert = new X509Certificate(created.body.data.certificate);
      expect(cert.subjectAltName).toMatch(/^URI:spiffe:\/\/[^/]+\/identity\/ident-1\/apiSession\/session-a$/);
      expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBeLessThanOrEqual(12 * 3600_000 + 120_000);
      expect(pemToDers(created.body.data.cas)).toHaveLength(2);
      const id = created.body.data.id;
      const detail = await call(t.url, { api: 'client', path: `/current-api-session/certificates/${id}`, principal: mine });
      expect(detail.body.data).toMatchObject({ id, subject: 'CN=sess', certificate: created.body.data.certificate });
      expect((await call(t.url, { api: 'client', path: `/current-api-session/certificates/${id}`, principal: other })).status).toBe(404);
      expect((await call(t.url, { api: 'client', path: '/current-api-session/certificates', principal: other })).body.data).toEqual([]);
      const bad = await call(t.url, { api: 'client', path: '/current-api-session/certificates', principal: mine, json: { csr: 'nope' } });
      expect([bad.status, bad.body.error.code]).toEqual([400, 'COULD_NOT_PROCESS_CSR']);

      await t.bus.publish(newChangeEvent('identity-auth', 'api-session.deleted', { apiSessionId: 'session-a', identityId: 'ident-1', tokenHashes: [] }));
      const list = async () => (await call(t.url, { api: 'client', path: '/current-api-session/certificates', principal: mine })).body.data;
      for (let i = 0; i < 100 && (await list()).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(await list()).toEqual([]);
    });
  });
});
