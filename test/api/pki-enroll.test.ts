import { BASE, type EdgeApi } from '../support/clients.js';
import { deviceKeys, enrollPem, enrollments, newEnrollment, newIdentity } from '../support/clients-pki.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectFieldError, expectSuccess } from '../support/envelope.js';

/**
 * The enroll flows' refusals (§6.6, §3.2, api_error_test, request_body_limit_test): unknown and
 * used tokens, expiry, bad CSRs, the method check, content negotiation (406/415), the body limit.
 * None of them consumes the enrollment. (Successful enrollment needs identity-auth's
 * CreateCertAuthenticator: see api/pki-phase2.test.ts.pending.)
 */

const ctl = useController();
failOnConformanceProblems();

const UNKNOWN = '6f1c2b9e-0d1a-4c55-9e1f-0a1b2c3d4e5f';
let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
});

async function ottToken(): Promise<{ id: string; token: string }> {
  const identity = await newIdentity(mgmt);
  const e = await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
  return { id: e.id, token: e.token };
}

const stillThere = async (id: string) => expectSuccess(await enrollments(mgmt).get(id));

describe('unknown tokens answer JSON errors (api_error_test)', () => {
  it.each([undefined, '*/*', 'application/json', 'application/x-pem-file, application/json'])('Accept %s → 400 INVALID_ENROLLMENT_TOKEN in JSON', async (accept) => {
    const res = await ctl().http.request({ method: 'POST', path: `${BASE.client}/enroll?token=${UNKNOWN}`, headers: accept === undefined ? { accept: '' } : { accept } });
    expectError(res, 400, 'INVALID_ENROLLMENT_TOKEN');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('Accept: application/x-pem-file alone → 406 (spec negotiation)', async () => {
    const res = await ctl().http.request({ method: 'POST', path: `${BASE.client}/enroll?token=${UNKNOWN}`, headers: { accept: 'application/x-pem-file' } });
    expect(res.status).toBe(406);
    expect(res.body.error).toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field: 'Accept' } });
  });

  it('a PEM body with an Accept that excludes JSON → 415 UNSUPPORTED_MEDIA', async () => {
    const res = await enrollPem(ctl().http, UNKNOWN, deviceKeys().csr, { accept: 'application/x-pem-file' });
    expectError(res, 415, 'UNSUPPORTED_MEDIA');
  });

  it('an unsupported content type → 415', async () => {
    const res = await enrollPem(ctl().http, UNKNOWN, '<csr/>', { contentType: 'application/xml' });
    expect(res.status).toBe(415);
    expect(res.body.error.cause.field).toBe('Content-Type');
  });

  it('unknown tokens on the root alias and on the typed routes', async () => {
    expectError(await enrollPem(ctl().http, UNKNOWN, deviceKeys().csr, { path: '/enroll' }), 400, 'INVALID_ENROLLMENT_TOKEN');
    expectError(await ctl().http.post(`${BASE.client}/enroll/ott`, { token: UNKNOWN, clientCsr: deviceKeys().csr }), 400, 'INVALID_ENROLLMENT_TOKEN');
    expectError(await ctl().http.post(`${BASE.client}/enroll/updb?token=${UNKNOWN}`, { password: 'Secret-123' }), 400, 'INVALID_ENROLLMENT_TOKEN');
    expectError(await ctl().http.post(`${BASE.client}/enroll/erott`, { token: UNKNOWN, clientCsr: 'x', serverCsr: 'y' }), 400, 'INVALID_ENROLLMENT_TOKEN');
  });
});

describe('a valid token with bad input keeps the enrollment', () => {
  it('an unparsable CSR → 400 COULD_NOT_PROCESS_CSR (PEM and typed routes)', async () => {
    const { id, token } = await ottToken();
    expectError(await enrollPem(ctl().http, token, 'not a certificate request'), 400, 'COULD_NOT_PROCESS_CSR');
    expectError(await enrollPem(ctl().http, token, 'garbage', { contentType: 'text/plain' }), 400, 'COULD_NOT_PROCESS_CSR');
    expectError(await ctl().http.post(`${BASE.client}/enroll/ott`, { token, clientCsr: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----' }), 400, 'COULD_NOT_PROCESS_CSR');
    await stillThere(id);
  });

  it('a method that is not the enrollment\'s → 400 INVALID_ENROLL_METHOD', async () => {
    const { id, token } = await ottToken();
    expectError(await enrollPem(ctl().http, token, deviceKeys().csr, { method: 'updb' }), 400, 'INVALID_ENROLL_METHOD');
    expectError(await enrollPem(ctl().http, token, deviceKeys().csr, { method: 'erott' }), 400, 'INVALID_ENROLL_METHOD');
    await stillThere(id);
  });

  it('an updb enrollment without a password → 400 COULD_NOT_VALIDATE (password)', async () => {
    const identity = await newIdentity(mgmt);
    const e = await newEnrollment(mgmt, { method: 'updb', identityId: identity.id, username: `${identity.name}-pw` });
    expectFieldError(await ctl().http.post(`${BASE.client}/enroll?method=updb&token=${e.token}`, {}), 'password');
    expectFieldError(await ctl().http.post(`${BASE.client}/enroll/updb?token=${e.token}`, { password: 'abc' }), 'password');
    await stillThere(e.id);
  });

  it('an expired enrollment → 400 ENROLLMENT_EXPIRED', async () => {
    const identity = await newIdentity(mgmt);
    const res = await enrollments(mgmt).create({ method: 'ott', identityId: identity.id, expiresAt: new Date(Date.now() + 1500).toISOString() });
    const id = res.body.data.id as string;
    const token = (await enrollments(mgmt).get(id)).body.data.token as string;
    await new Promise((r) => setTimeout(r, 2000));
    expectError(await enrollPem(ctl().http, token, deviceKeys().csr), 400, 'ENROLLMENT_EXPIRED');
    await stillThere(id);
  });
});

describe('the body limit', () => {
  it('a CSR body over 1 MiB → 413 REQUEST_ENTITY_TOO_LARGE before anything else', async () => {
    const { id, token } = await ottToken();
    const big = Buffer.alloc(1024 * 1024 + 1, 'A');
    const res = await ctl().http.request({ method: 'POST', path: `${BASE.client}/enroll?token=${token}`, raw: big, headers: { 'content-type': 'application/x-pem-file' } });
    expectError(res, 413, 'REQUEST_ENTITY_TOO_LARGE');
    const chunked = await ctl().http.request({
      method: 'POST', path: `/enroll?token=${token}`, chunks: [big.subarray(0, 600_000), big.subarray(600_000)], headers: { 'content-type': 'application/x-pem-file' },
    });
    expectError(chunked, 413, 'REQUEST_ENTITY_TOO_LARGE');
    await stillThere(id);
  });
});
