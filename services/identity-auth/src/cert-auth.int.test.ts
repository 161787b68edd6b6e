import { internalTestClient } from '@ziti/service-kit';
import { X509Certificate } from 'node:crypto';
import { type ServiceError } from '@grpc/grpc-js';
import { fromGrpcError } from '@ziti/errors';
import { CLIENT_CERT_HEADER, type RequestPrincipal, signClientCertChain } from '@ziti/http-kit';
import { IdentityAuthServiceClient } from '@ziti/proto';
import { EXTEND_REQUESTED_HEADER } from './http/authenticate.js';
import { selfSignedCert } from './testing/certs.js';
import { type FakePki, startFakePki } from './testing/fake-pki.js';
import { C, Harness, M, SECRET } from './testing/harness.js';

/** identity-auth's side of issue 4 against a stand-in pki-enrollment: the RPCs it serves, the enrollments it asks for, `method=cert`. */
describe('certificates and enrollments (pki-enrollment phase 2)', () => {
  let h: Harness;
  let pki: FakePki;
  let admin: RequestPrincipal;
  let grpc: IdentityAuthServiceClient;

  const rpc = <T>(method: string, req: object): Promise<T> =>
    new Promise((resolve, reject) =>
      (grpc as unknown as Record<string, (r: object, cb: (e: ServiceError | null, r: T) => void) => void>)[method]!.call(grpc, req, (err, res) =>
        err ? reject(fromGrpcError(err)) : resolve(res),
      ),
    );
  const newIdentity = async (body: Record<string, unknown> = {}) => {
    const res = await h.call('POST', `${M}/identities`, { principal: admin, body: { name: `id-${Math.random().toString(36).slice(2, 10)}`, type: 'Device', isAdmin: false, ...body } });
    if (res.status !== 201) throw new Error(res.text);
    return res.body.data.id as string;
  };
  const certLogin = (certPem: string | null, headers: Record<string, string> = {}) =>
    h.call('POST', `${C}/authenticate?method=cert`, {
      headers: certPem ? { [CLIENT_CERT_HEADER]: signClientCertChain(SECRET, [new X509Certificate(certPem).raw], 'r1'), ...headers } : headers,
    });

  beforeAll(async () => {
    pki = await startFakePki();
    h = await Harness.start({ pkiEnrollmentGrpc: pki.address });
    admin = (await h.login()).principal;
    grpc = internalTestClient(IdentityAuthServiceClient, h.service.grpcAddress, 'identity-auth');
  });
  afterAll(async () => {
    grpc?.close();
    await h?.close();
    await pki?.stop();
  });

  describe('RPCs', () => {
    it('CreateCertAuthenticator: unknown identity 404, stores the leaf, 409 CERT_IN_USE and MAX_AUTHENTICATOR_METHODS_REACHED', async () => {
      const cert = selfSignedCert('dev');
      await expect(rpc('createCertAuthenticator', { identityId: 'nope', certPem: cert.certPem, fingerprint: cert.fingerprint, isIssuedByNetwork: true, caId: '' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const id = await newIdentity();
      const chain = cert.certPem + selfSignedCert('intermediate').certPem;
      const a = await rpc<{ id: string; method: string; fingerprint: string }>('createCertAuthenticator', { identityId: id, certPem: chain, fingerprint: '', isIssuedByNetwork: true, caId: '' });
      expect(a).toMatchObject({ method: 'cert', fingerprint: cert.fingerprint });
      const [row] = await h.sql('SELECT cert_pem, is_issued_by_network, ca_id FROM authenticators WHERE id = $1', [a.id]);
      expect(new X509Certificate(row.cert_pem).subject).toBe('CN=dev');
      expect(row).toMatchObject({ is_issued_by_network: true, ca_id: null });
      await expect(rpc('createCertAuthenticator', { identityId: await newIdentity(), certPem: cert.certPem, fingerprint: '', isIssuedByNetwork: false, caId: 'ca1' })).rejects.toMatchObject({ code: 'CERT_IN_USE', status: 409 });
      const other = selfSignedCert('other');
      await expect(rpc('createCertAuthenticator', { identityId: id, certPem: other.certPem, fingerprint: '', isIssuedByNetwork: true, caId: '' })).rejects.toMatchObject({ code: 'MAX_AUTHENTICATOR_METHODS_REACHED' });
    });

    it('CreateUpdbAuthenticator: the auth policy password rules, unique usernames', async () => {
      const id = await newIdentity();
      await expect(rpc('createUpdbAuthenticator', { identityId: id, username: 'enrolled-user', password: 'abc' })).rejects.toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field: 'password' } });
      await rpc('createUpdbAuthenticator', { identityId: id, username: 'enrolled-user', password: 'abcdef' });
      await expect(rpc('createUpdbAuthenticator', { identityId: await newIdentity(), username: 'enrolled-user', password: 'abcdef' })).rejects.toMatchObject({ cause: { field: 'username' } });
      expect((await h.call('POST', `${C}/authenticate?method=password`, { body: { username: 'enrolled-user', password: 'abcdef' } })).status).toBe(200);
    });

    it('CreateIdentityFromCa: [identityId], the name counter, the CA roles, externalId without authenticator, identity.created', async () => {
      const a = selfSignedCert('cam');
      const first = await rpc<{ id: string; name: string; roleAttributes: string[] }>('createIdentityFromCa', {
        name: 'Acme-cam', roleAttributes: ['iot'], caId: 'ca1', certPem: a.certPem, fingerprint: a.fingerprint, externalId: '', authPolicyId: '',
      });
      expect(first).toMatchObject({ name: 'Acme-cam', roleAttributes: ['iot'], typeId: 'Default', authPolicyId: 'default', isAdmin: false });
      const b = selfSignedCert('cam');
      const second = await rpc<{ name: string }>('createIdentityFromCa', { name: 'Acme-cam', roleAttributes: [], caId: 'ca1', certPem: b.certPem, fingerprint: b.fingerprint, externalId: '', authPolicyId: '' });
      expect(second.name).toBe('Acme-cam000001');
      const withId = await rpc<{ id: string; name: string }>('createIdentityFromCa', { name: 'x-[identityId]', roleAttributes: [], caId: 'ca1', certPem: '', fingerprint: '', externalId: 'ext-42', authPolicyId: 'missing' });
      expect(withId.name).toBe(`x-${withId.id}`);
      expect(await h.sql('SELECT id FROM authenticators WHERE identity_id = $1', [withId.id])).toEqual([]);
      expect(await h.sql('SELECT ca_id, fingerprint FROM authenticators WHERE identity_id = $1', [first.id])).toEqual([{ ca_id: 'ca1', fingerprint: a.fingerprint }]);
      await h.settle();
      expect(h.events.filter((e) => e.type === 'identity.created').map((e) => (e.data as { identityId: string }).identityId)).toEqual(expect.arrayContaining([first.id, withId.id]));
      await expect(rpc('createIdentityFromCa', { name: 'dup', roleAttributes: [], caId: 'ca1', certPem: a.certPem, fingerprint: a.fingerprint, externalId: '', authPolicyId: '' })).rejects.toMatchObject({ code: 'CERT_IN_USE' });
    });

    it('DeleteCaAuthenticators and the ca.deleted event delete the CA\'s cert authenticators (idempotently)', async () => {
      for (const caId of ['gone1', 'gone1', 'gone2']) {
        const c = selfSignedCert('d');
        await rpc('createCertAuthenticator', { identityId: await newIdentity(), certPem: c.certPem, fingerprint: '', isIssuedByNetwork: false, caId });
      }
      expect(await rpc('deleteCaAuthenticators', { caId: 'gone1' })).toEqual({ deleted: 2 });
      expect(await rpc('deleteCaAuthenticators', { caId: 'gone1' })).toEqual({ deleted: 0 });
      await h.bus.publish({ id: 'ev-ca-1', type: 'ca.deleted', source: 'pki-enrollment', occurredAt: new Date().toISOString(), data: { caId: 'gone2' } });
      await h.bus.idle();
      expect(await h.sql("SELECT id FROM authenticators WHERE ca_id IN ('gone1', 'gone2')")).toEqual([]);
    });
  });

  describe('enrollments of identities', () => {
    it('create asks for each enrollment (vouching for the identity); detail and list show them; delete removes them', async () => {
      const id = await newIdentity({ name: 'enrolled-dev', enrollment: { ott: true, updb: 'enrolled-dev' } });
      expect(pki.creates.filter((c) => c.identityId === id)).toEqual([
        expect.objectContaining({ method: 'ott', identityTrusted: true, identityName: 'enrolled-dev' }),
        expect.objectContaining({ method: 'updb', username: 'enrolled-dev', identityTrusted: true }),
      ]);
      const detail = (await h.call('GET', `${M}/identities/${id}`, { principal: admin })).body.data;
      expect(detail.enrollment).toEqual({
        ott: { id: expect.any(String), jwt: 'jwt-ott', token: expect.any(String), expiresAt: expect.any(String) },
        updb: { id: expect.any(String), jwt: 'jwt-updb', token: expect.any(String), expiresAt: expect.any(String) },
      });
      const list = await h.call('GET', `${M}/identities?filter=${encodeURIComponent('name = "enrolled-dev"')}`, { principal: admin });
      expect(list.body.data[0].enrollment).toEqual(detail.enrollment);
      expect((await h.call('DELETE', `${M}/identities/${id}`, { principal: admin })).status).toBe(200);
      expect(pki.deletedForIdentities).toContain(id);
    });

    it('a refused enrollment rolls the identity back and deletes the enrollments already made', async () => {
      pki.refuseMethod = 'ottca';
      try {
        const res = await h.call('POST', `${M}/identities`, { principal: admin, body: { name: 'half-made', type: 'Device', isAdmin: false, enrollment: { ott: true, ottca: 'nope' } } });
        expect([res.status, res.body.error.code, res.body.error.cause.field]).toEqual([400, 'COULD_NOT_VALIDATE', 'caId']);
        const made = pki.creates.find((c) => c.identityName === 'half-made' && c.method === 'ott');
        expect(pki.enrollments.find((e) => e.identityId === made!.identityId)).toBeUndefined();
        expect(pki.deletedEnrollments).toHaveLength(1);
        expect(await h.sql("SELECT id FROM identities WHERE name = 'half-made'")).toEqual([]);
      } finally {
        pki.refuseMethod = undefined;
      }
    });
  });

  describe('method=cert', () => {
    it('refuses no certificate, a forged chain header and an unverified chain with 401 INVALID_AUTH', async () => {
      const cert = selfSignedCert('x');
      expect((await certLogin(null)).body.error.code).toBe('INVALID_AUTH');
      expect((await certLogin(null, { [CLIENT_CERT_HEADER]: signClientCertChain('another-secret', [new X509Certificate(cert.certPem).raw], 'r1') })).status).toBe(401);
      expect((await certLogin(cert.certPem)).body.error.code).toBe('INVALID_AUTH');
    });

    it('logs in by fingerprint with the session flags; expired certificates follow the auth policy', async () => {
      const cert = selfSignedCert('net');
      const id = await newIdentity();
      const a = await rpc<{ id: string }>('createCertAuthenticator', { identityId: id, certPem: cert.certPem, fingerprint: '', isIssuedByNetwork: true, caId: '' });
      await h.sql('UPDATE authenticators SET is_extend_requested = true WHERE id = $1', [a.id]);
      pki.verdicts.set(cert.fingerprint, { verified: true, improperClientCertChain: true, leafPem: cert.certPem });
      const res = await certLogin(cert.certPem);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ identityId: id, authenticatorId: a.id, isCertExtendable: true, isCertExtendRequested: true, isCertKeyRollRequested: false, improperClientCertChain: true });
      expect(res.headers.get(EXTEND_REQUESTED_HEADER)).toBe('true');
      // a certificate login without TOTP is fully authenticated: routers learn of it (ids only)
      await h.settle();
      expect(h.events.filter((e) => e.type === 'api-session.created' && (e.data as { id: string }).id === res.body.data.id).map((e) => e.data)).toEqual([
        { id: res.body.data.id, apiSessionId: res.body.data.id, identityId: id },
      ]);

      pki.verdicts.set(cert.fingerprint, { verified: true, leafPem: cert.certPem, isExpired: true });
      expect((await certLogin(cert.certPem)).status).toBe(200);
      await h.sql("UPDATE auth_policies SET primary_cert_allow_expired_certs = false WHERE id = 'default'");
      try {
        expect((await certLogin(cert.certPem)).body.error.code).toBe('INVALID_AUTH');
      } finally {
        await h.sql("UPDATE auth_policies SET primary_cert_allow_expired_certs = true WHERE id = 'default'");
      }
    });

    it('records on each login whether a network-issued certificate resolved to the root (lastAuthResolvedToRoot); not for third-party ones', async () => {
      const cert = selfSignedCert('rooted');
      const id = await newIdentity();
      const a = await rpc<{ id: string }>('createCertAuthenticator', { identityId: id, certPem: cert.certPem, fingerprint: '', isIssuedByNetwork: true, caId: '' });
      const stored = async (authId: string) => (await h.call('GET', `${M}/authenticators/${authId}`, { principal: admin })).body.data.lastAuthResolvedToRoot;
      expect(await stored(a.id)).toBe(false);
      pki.verdicts.set(cert.fingerprint, { verified: true, improperClientCertChain: false, leafPem: cert.certPem });
      expect((await certLogin(cert.certPem)).status).toBe(200);
      expect(await stored(a.id)).toBe(true);
      // Only the intermediates the controller holds completed the chain: no longer resolved to the root.
      pki.verdicts.set(cert.fingerprint, { verified: true, improperClientCertChain: true, leafPem: cert.certPem });
      expect((await certLogin(cert.certPem)).status).toBe(200);
      expect(await stored(a.id)).toBe(false);
      const [{ updated_at: before }] = await h.sql('SELECT updated_at FROM authenticators WHERE id = $1', [a.id]);
      expect((await certLogin(cert.certPem)).status).toBe(200); // unchanged: nothing written
      const [{ updated_at: after }] = await h.sql('SELECT updated_at FROM authenticators WHERE id = $1', [a.id]);
      expect(after).toEqual(before);

      const third = selfSignedCert('third-party');
      const b = await rpc<{ id: string }>('createCertAuthenticator', { identityId: await newIdentity(), certPem: third.certPem, fingerprint: '', isIssuedByNetwork: false, caId: 'ca1' });
      pki.verdicts.set(third.fingerprint, { verified: true, improperClientCertChain: false, leafPem: third.certPem });
      expect((await certLogin(third.certPem)).status).toBe(200);
      expect(await stored(b.id)).toBe(false);
    });

    it('auto-enrolls an unknown device of a CA that allows it; refuses one whose CA lacks the externalId claim', async () => {
      const cert = selfSignedCert('kiosk');
      const ca = { id: 'ca9', name: 'Store CA', isAutoCaEnrollmentEnabled: true, identityRoles: ['store'], identityNameFormat: '', authPolicyId: '', trustedForAdmins: true };
      pki.verdicts.set(cert.fingerprint, { verified: true, leafPem: cert.certPem, ca });
      const res = await certLogin(cert.certPem);
      expect(res.status).toBe(200);
      const identity = (await h.call('GET', `${M}/identities/${res.body.data.identityId}`, { principal: admin })).body.data;
      expect(identity).toMatchObject({ name: 'Store CA-kiosk', roleAttributes: ['store'], authenticators: { cert: { fingerprint: cert.fingerprint } } });
      expect(res.body.data.isCertExtendable).toBe(false);

      const other = selfSignedCert('claimless');
      pki.verdicts.set(other.fingerprint, { verified: true, leafPem: other.certPem, ca, missingExternalIdClaim: true });
      expect((await certLogin(other.certPem)).body.error.code).toBe('INVALID_AUTH');
    });
  });
});
