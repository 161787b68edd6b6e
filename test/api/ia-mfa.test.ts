import { type EdgeApi, uniqueName } from '../support/clients.js';
import { authPolicyBody, createUser, loginAs, totpCodes } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectSuccess } from '../support/envelope.js';
import { expectValid } from '../support/spec-validator.js';

/** TOTP MFA (reference §6.8, §2.4; mfa_ziti_test.go) through the gateway. */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
});

async function newSession(body: Record<string, unknown> = {}) {
  const user = await createUser(mgmt, body);
  const { res, session } = await loginAs(ctl().http, user, 'client');
  expectSuccess(res);
  return { user, session, login: res };
}

/** Enrolls and verifies; returns the recovery codes and the next unused TOTP codes. */
async function enroll(session: EdgeApi): Promise<{ code: () => string; codes: string[] }> {
  expectSuccess(await session.call('POST', '/current-identity/mfa'), 201);
  const d = (await session.call('GET', '/current-identity/mfa')).body.data;
  const code = totpCodes(new URL(d.provisioningUrl).searchParams.get('secret')!);
  expectEmpty(await session.call('POST', '/current-identity/mfa/verify', { code: code() }));
  return { code, codes: d.recoveryCodes };
}

describe('before enrollment', () => {
  it('every MFA endpoint answers 404; no auth queries; isMfaEnabled false', async () => {
    const { user, session } = await newSession();
    for (const [method, path, body] of [
      ['GET', '/current-identity/mfa'],
      ['DELETE', '/current-identity/mfa', { code: '' }],
      ['POST', '/current-identity/mfa/verify', { code: '' }],
      ['GET', '/current-identity/mfa/qr-code'],
      ['GET', '/current-identity/mfa/recovery-codes'],
      ['POST', '/current-identity/mfa/recovery-codes', { code: '' }],
    ] as const) {
      expectError(await session.call(method, path, body), 404, 'NOT_FOUND');
    }
    expect((await session.currentApiSession.get()).body.data.authQueries).toEqual([]);
    expect((await mgmt.identities.get(user.id)).body.data.isMfaEnabled).toBe(false);
    expectError(await session.call('POST', '/authenticate/mfa', { code: '123456' }), 409, 'MFA_NOT_ENROLLED');
  });
});

describe('enrollment', () => {
  it('201, a provisioning URL, 20 recovery codes and a PNG QR code while unverified; 409 MFA_EXISTS', async () => {
    const { user, session } = await newSession();
    const created = await session.call('POST', '/current-identity/mfa');
    expectSuccess(created, 201);
    expect(created.body.data._links.self.href).toBe('./current-identity/mfa');
    expectError(await session.call('POST', '/current-identity/mfa'), 409, 'MFA_EXISTS');
    const res = await session.call('GET', '/current-identity/mfa');
    expectValid('client', 'GET', '/current-identity/mfa', 200, res.body);
    expect(res.body.data.isVerified).toBe(false);
    expect(res.body.data.recoveryCodes).toHaveLength(20);
    for (const c of res.body.data.recoveryCodes) expect(c).toMatch(/^[A-Z2-7]{6}$/);
    const url = new URL(res.body.data.provisioningUrl);
    expect([url.protocol, url.host, decodeURIComponent(url.pathname)]).toEqual(['otpauth:', 'totp', `/openziti.io:${user.name}`]);
    const qr = await ctl().http.request({ method: 'GET', path: '/edge/client/v1/current-identity/mfa/qr-code', token: session.token, headers: { accept: 'image/png' }, validate: false });
    expect(qr.status).toBe(200);
    expect(qr.headers['content-type']).toBe('image/png');
    expect(Buffer.from(qr.text, 'latin1').subarray(1, 4).toString()).toBe('PNG');
    expect((await mgmt.identities.get(user.id)).body.data.isMfaEnabled).toBe(false);
    // an unverified enrollment does not make new sessions partial
    expect((await loginAs(ctl().http, user, 'client')).res.body.data.authQueries).toEqual([]);
  });

  it('verify: missing code 400 COULD_NOT_VALIDATE, empty/invalid/recovery code 400 MFA_INVALID_TOKEN, TOTP 200, again 404', async () => {
    const { user, session } = await newSession();
    await session.call('POST', '/current-identity/mfa');
    const d = (await session.call('GET', '/current-identity/mfa')).body.data;
    const code = totpCodes(new URL(d.provisioningUrl).searchParams.get('secret')!);
    expectError(await session.call('POST', '/current-identity/mfa/verify', {}), 400, 'COULD_NOT_VALIDATE');
    expectError(await session.call('POST', '/current-identity/mfa/verify', { code: '' }), 400, 'MFA_INVALID_TOKEN');
    expectError(await session.call('POST', '/current-identity/mfa/verify', { code: 'qwgjwoigrw92' }), 400, 'MFA_INVALID_TOKEN');
    expectError(await session.call('POST', '/current-identity/mfa/verify', { code: d.recoveryCodes[2] }), 400, 'MFA_INVALID_TOKEN');
    expectEmpty(await session.call('POST', '/current-identity/mfa/verify', { code: code() }));
    expect((await session.currentApiSession.get()).body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: true });
    expectError(await session.call('POST', '/current-identity/mfa/verify', { code: code() }), 404, 'NOT_FOUND');
    const v = (await session.call('GET', '/current-identity/mfa')).body.data;
    expect(v.isVerified).toBe(true);
    expect(v.provisioningUrl).toBeUndefined();
    expect(v.recoveryCodes).toBeUndefined();
    expectError(await session.call('GET', '/current-identity/mfa/qr-code'), 404, 'NOT_FOUND');
    expect((await mgmt.identities.get(user.id)).body.data.isMfaEnabled).toBe(true);
  });
});

describe('a verified identity', () => {
  it('starts partial sessions that reach only the partial endpoints until /authenticate/mfa', async () => {
    const { user, session } = await newSession();
    const { code } = await enroll(session);
    const { res, session: partial } = await loginAs(ctl().http, user, 'client');
    expect(res.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: false });
    expect(res.body.data.authQueries).toEqual([
      { typeId: 'MFA', provider: 'ziti', format: 'alphaNumeric', httpMethod: 'POST', httpUrl: './authenticate/mfa', minLength: 4, maxLength: 6, isTotpEnrolled: true },
    ]);
    expectError(await partial.currentIdentity.get(), 401, 'UNAUTHORIZED');
    expectError(await partial.call('GET', '/current-identity/authenticators'), 401, 'UNAUTHORIZED');
    expectError(await partial.call('GET', '/current-identity/mfa/recovery-codes'), 401, 'UNAUTHORIZED');
    expectSuccess(await partial.currentApiSession.get());
    expectSuccess(await partial.call('GET', '/current-identity/mfa'));
    expectError(await partial.call('POST', '/authenticate/mfa', { code: '' }), 400, 'MFA_INVALID_TOKEN');
    expectError(await partial.call('POST', '/authenticate/mfa', { code: '8f4b48er' }), 400, 'MFA_INVALID_TOKEN');
    expectEmpty(await partial.call('POST', '/authenticate/mfa', { code: code() }));
    expectSuccess(await partial.currentIdentity.get());
    expect((await partial.currentApiSession.get()).body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: true, authQueries: [] });
  });

  it('a recovery code completes a session once; reused it is refused', async () => {
    const { user, session } = await newSession();
    const { codes } = await enroll(session);
    const a = (await loginAs(ctl().http, user, 'client')).session;
    expectEmpty(await a.call('POST', '/authenticate/mfa', { code: codes[0] }));
    expectSuccess(await a.currentIdentity.get());
    const b = (await loginAs(ctl().http, user, 'client')).session;
    expectError(await b.call('POST', '/authenticate/mfa', { code: codes[0] }), 400, 'MFA_INVALID_TOKEN');
    expectError(await b.currentIdentity.get(), 401, 'UNAUTHORIZED');
  });

  it('recovery codes are shown for a TOTP code only and regenerated for any code', async () => {
    const { session } = await newSession();
    const { code, codes } = await enroll(session);
    expectError(await session.call('GET', '/current-identity/mfa/recovery-codes'), 400, 'MFA_INVALID_TOKEN');
    expectError(await session.call('GET', '/current-identity/mfa/recovery-codes', undefined, { 'mfa-validation-code': '6sa5d4f56sad' }), 400, 'MFA_INVALID_TOKEN');
    expectError(await session.call('GET', '/current-identity/mfa/recovery-codes', undefined, { 'mfa-validation-code': codes[10] }), 400, 'MFA_INVALID_TOKEN');
    const shown = await session.call('GET', '/current-identity/mfa/recovery-codes', undefined, { 'mfa-validation-code': code() });
    expectSuccess(shown);
    expect(shown.body.data.recoveryCodes).toEqual(codes);
    expectError(await session.call('POST', '/current-identity/mfa/recovery-codes', { code: '' }), 400, 'MFA_INVALID_TOKEN');
    expectEmpty(await session.call('POST', '/current-identity/mfa/recovery-codes', { code: code() }));
    const fresh = (await session.call('GET', '/current-identity/mfa/recovery-codes', undefined, { 'mfa-validation-code': code() })).body.data.recoveryCodes;
    expect(fresh).toHaveLength(20);
    expect(fresh).not.toEqual(codes);
  });

  it('removes its enrollment with a TOTP or a recovery code in mfa-validation-code', async () => {
    const { session } = await newSession();
    const { codes } = await enroll(session);
    expectError(await session.call('DELETE', '/current-identity/mfa'), 400, 'MFA_INVALID_TOKEN');
    expectError(await session.call('DELETE', '/current-identity/mfa', undefined, { 'mfa-validation-code': '44444' }), 400, 'MFA_INVALID_TOKEN');
    expectEmpty(await session.call('DELETE', '/current-identity/mfa', undefined, { 'mfa-validation-code': codes[3] }));
    expectError(await session.call('GET', '/current-identity/mfa'), 404, 'NOT_FOUND');
  });

  it('an admin removes it (DELETE /identities/{id}/mfa); a non-admin may not', async () => {
    const { user, session } = await newSession();
    await enroll(session);
    const nonAdmin = await loginAs(ctl().http, await createUser(mgmt), 'management');
    expectError(await nonAdmin.session.call('DELETE', `/identities/${user.id}/mfa`), 401, 'UNAUTHORIZED');
    expectEmpty(await mgmt.call('DELETE', `/identities/${user.id}/mfa`));
    expect((await mgmt.identities.get(user.id)).body.data.isMfaEnabled).toBe(false);
    expectError(await session.call('GET', '/current-identity/mfa'), 404, 'NOT_FOUND');
    expectError(await mgmt.call('DELETE', '/identities/does-not-exist/mfa'), 404, 'NOT_FOUND');
  });
});

describe('an auth policy that requires TOTP', () => {
  it('makes sessions partial until the identity enrolls and verifies', async () => {
    const policy = expectCreated(await mgmt.call('POST', '/auth-policies', authPolicyBody(uniqueName('ap-totp'), { secondary: { requireTotp: true } })), 'auth-policies');
    const { session, login } = await newSession({ authPolicyId: policy });
    expect(login.body.data.authQueries).toEqual([expect.objectContaining({ typeId: 'MFA', isTotpEnrolled: false })]);
    expectError(await session.currentIdentity.get(), 401, 'UNAUTHORIZED');
    expectSuccess(await session.call('POST', '/current-identity/mfa'), 201);
    const code = totpCodes(new URL((await session.call('GET', '/current-identity/mfa')).body.data.provisioningUrl).searchParams.get('secret')!);
    expectEmpty(await session.call('POST', '/current-identity/mfa/verify', { code: code() }));
    expectSuccess(await session.currentIdentity.get());
  });
});
