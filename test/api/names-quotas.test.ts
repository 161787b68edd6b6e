import { type EdgeApi, uniqueName } from '../support/clients.js';
import { createUser, loginAs } from '../support/clients-identity.js';
import { deviceKeys, sessionCerts } from '../support/clients-pki.js';
import { unique } from '../support/clients-policy.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectEmpty, expectError, expectFieldError, expectSuccess } from '../support/envelope.js';
import type { HttpResponse } from '../support/http.js';
import { thirdPartyCa } from '../support/x509.js';

/**
 * Names, counts and sizes one caller must not be able to stretch: entity names compared in one
 * form (NFC, no surrounding white space), the API sessions of an identity and the certificates of
 * an API session bounded, tags at most 16 KiB of JSON. The controller runs with small bounds.
 */

const MAX_SESSIONS = 3;
const MAX_SESSION_CERTS = 2;
const ctl = useController({ maxApiSessionsPerIdentity: MAX_SESSIONS, maxApiSessionCertificates: MAX_SESSION_CERTS });
failOnConformanceProblems();

// The admin logs in once: every further admin login would count against the admin's own bound.
let mgmt: EdgeApi;
let configTypeId: string;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  const type = await mgmt.call('POST', '/config-types', { name: unique('names-ct'), schema: {} });
  expectSuccess(type, 201);
  configTypeId = type.body.data.id as string;
});

const composed = (base: string) => `${base}-caf\u00e9`;
const decomposed = (base: string) => `${base}-cafe\u0301`;

/** What a refusal answers, without what differs between two requests (request id, the value sent). */
function refusal(res: HttpResponse) {
  const e = res.body?.error ?? {};
  return { status: res.status, code: e.code, message: e.message, field: e.cause?.field, reason: e.cause?.reason };
}

interface Kind {
  path: string;
  body: (name: string) => Record<string, unknown>;
  /** A PATCH body besides the name (posture checks name their type). */
  patch?: Record<string, unknown>;
}

const KINDS: Record<string, Kind> = {
  identity: { path: '/identities', body: (name) => ({ name, type: 'User', isAdmin: false }) },
  service: { path: '/services', body: (name) => ({ name, encryptionRequired: true }) },
  'service policy': { path: '/service-policies', body: (name) => ({ name, type: 'Dial', semantic: 'AnyOf', serviceRoles: [], identityRoles: [] }) },
  'edge router policy': { path: '/edge-router-policies', body: (name) => ({ name, semantic: 'AnyOf', edgeRouterRoles: [], identityRoles: [] }) },
  'service edge router policy': { path: '/service-edge-router-policies', body: (name) => ({ name, semantic: 'AnyOf', edgeRouterRoles: [], serviceRoles: [] }) },
  'config type': { path: '/config-types', body: (name) => ({ name, schema: {} }) },
  config: { path: '/configs', body: (name) => ({ name, configTypeId, data: {} }) },
  'edge router': { path: '/edge-routers', body: (name) => ({ name }) },
  router: { path: '/transit-routers', body: (name) => ({ name }) },
  'posture check': { path: '/posture-checks', body: (name) => ({ name, typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:ff'] }), patch: { typeId: 'MAC' } },
  'auth policy': {
    path: '/auth-policies',
    body: (name) => ({
      name,
      primary: {
        cert: { allowed: true, allowExpiredCerts: true },
        extJwt: { allowed: false, allowedSigners: [] },
        updb: { allowed: true, minPasswordLength: 5, requireSpecialChar: false, requireNumberChar: false, requireMixedCase: false, maxAttempts: 0, lockoutDurationMinutes: 0 },
      },
      secondary: { requireTotp: false, requireExtJwtSigner: null },
    }),
  },
  'external JWT signer': {
    path: '/external-jwt-signers',
    body: (name) => ({ name, enabled: true, issuer: uniqueName('iss'), audience: 'aud', jwksEndpoint: 'https://idp.example.com/jwks' }),
  },
  CA: {
    path: '/cas',
    body: (name) => ({ name, certPem: thirdPartyCa().certPem, isAutoCaEnrollmentEnabled: false, isOttCaEnrollmentEnabled: false, isAuthEnabled: false, identityRoles: [] }),
  },
};

describe.each(Object.entries(KINDS))('the name of a %s', (_kind, k) => {
  const create = (name: string) => mgmt.call('POST', k.path, k.body(name));

  it('is stored NFC-normalised and trimmed; other spellings of it clash as an exact duplicate does', async () => {
    const base = unique('n');
    const res = await create(` ${decomposed(base)} `);
    expectSuccess(res, 201);
    const id = res.body.data.id as string;
    expect((await mgmt.call('GET', `${k.path}/${id}`)).body.data.name).toBe(composed(base));

    const duplicate = refusal(await create(composed(base)));
    expect(duplicate).toMatchObject({ status: 400, code: 'COULD_NOT_VALIDATE', field: 'name' });
    for (const spelling of [decomposed(base), `${composed(base)} `, `\t${decomposed(base)}\u00a0`]) {
      expect(refusal(await create(spelling))).toEqual(duplicate);
    }
  });

  it('clashes on PATCH too, and a name of white space only is refused as the empty name', async () => {
    const base = unique('p');
    expectSuccess(await create(composed(base)), 201);
    const other = await create(unique('other'));
    expectSuccess(other, 201);
    const otherPath = `${k.path}/${other.body.data.id as string}`;
    const duplicate = refusal(await create(composed(base)));
    expect(refusal(await mgmt.call('PATCH', otherPath, { ...k.patch, name: ` ${decomposed(base)}` }))).toEqual(duplicate);

    const empty = refusal(await create(''));
    expect(empty).toMatchObject({ status: 400, code: 'COULD_NOT_VALIDATE', field: 'name' });
    expect(refusal(await create('   '))).toEqual(empty);
    expectFieldError(await mgmt.call('PATCH', otherPath, { ...k.patch, name: ' \t ' }), 'name');
  });

  it('is found by a filter that spells it decomposed', async () => {
    const base = unique('f');
    const id = (await create(composed(base))).body.data.id as string;
    const list = await mgmt.call('GET', `${k.path}?filter=${encodeURIComponent(`name = "${decomposed(base)}"`)}`);
    expectSuccess(list);
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([id]);
  });
});

describe('API sessions of one identity', () => {
  it('are bounded: a login beyond the bound ends the least recently active session, whose token stops working at once', async () => {
    const user = await createUser(mgmt);
    const sessions: EdgeApi[] = [];
    for (let i = 0; i < MAX_SESSIONS + 2; i++) {
      const { res, session } = await loginAs(ctl().http, user, 'client');
      expectSuccess(res);
      sessions.push(session);
    }
    const listed = await mgmt.call('GET', `/api-sessions?filter=${encodeURIComponent(`identity = "${user.id}"`)}`);
    expectSuccess(listed);
    expect(listed.body.data.map((s: { token: string }) => s.token).sort()).toEqual(sessions.slice(2).map((s) => s.token).sort());
    for (const gone of sessions.slice(0, 2)) expectError(await gone.currentIdentity.get(), 401, 'UNAUTHORIZED');
    for (const kept of sessions.slice(2)) expectSuccess(await kept.currentIdentity.get());
    // The owner can always log in again.
    expectSuccess((await loginAs(ctl().http, user, 'client')).res);
  });

  it('of other identities are not touched', async () => {
    const a = await createUser(mgmt);
    const b = await createUser(mgmt);
    const { session: bSession } = await loginAs(ctl().http, b, 'client');
    for (let i = 0; i < MAX_SESSIONS + 1; i++) expectSuccess((await loginAs(ctl().http, a, 'client')).res);
    expectSuccess(await bSession.currentIdentity.get());
  });
});

describe('certificates of one API session', () => {
  it('are bounded: 409 MAX_AUTHENTICATOR_METHODS_REACHED at the bound, a delete makes room, other sessions have their own', async () => {
    const user = await createUser(mgmt);
    const { session } = await loginAs(ctl().http, user, 'client');
    const made: string[] = [];
    for (let i = 0; i < MAX_SESSION_CERTS; i++) {
      const res = await sessionCerts(session).create(deviceKeys().csr);
      expectSuccess(res, 201);
      made.push(res.body.data.id as string);
    }
    const refused = await sessionCerts(session).create(deviceKeys().csr);
    expectError(refused, 409, 'MAX_AUTHENTICATOR_METHODS_REACHED');
    expect((await sessionCerts(session).list()).body.data).toHaveLength(MAX_SESSION_CERTS);

    const { session: other } = await loginAs(ctl().http, user, 'client');
    expectSuccess(await sessionCerts(other).create(deviceKeys().csr), 201);

    expectEmpty(await sessionCerts(session).delete(made[0]!));
    expectSuccess(await sessionCerts(session).create(deviceKeys().csr), 201);
  });
});

describe('tags', () => {
  /** Tags whose JSON is `bytes` long. */
  const tagsOf = (bytes: number) => ({ k: 'x'.repeat(bytes - 8) });

  it('a non-admin can not store 900 KB on its own authenticator: 400 on the tags field', async () => {
    const user = await createUser(mgmt);
    const { session } = await loginAs(ctl().http, user, 'client');
    const own = await session.call('GET', '/current-identity/authenticators');
    const id = own.body.data[0].id as string;
    const res = await session.call('PATCH', `/current-identity/authenticators/${id}`, { currentPassword: user.password, tags: tagsOf(900_000) });
    expectFieldError(res, 'tags');
    expect(res.body.error.cause.value).toBe('900000 bytes');
    expectSuccess(await session.call('PATCH', `/current-identity/authenticators/${id}`, { currentPassword: user.password, tags: { team: 'a' } }));
  });

  it('are at most 16 KiB of JSON on every entity, in every context', async () => {
    for (const k of [KINDS.identity!, KINDS.service!, KINDS['posture check']!, KINDS.CA!]) {
      expectFieldError(await mgmt.call('POST', k.path, { ...k.body(unique('t')), tags: tagsOf(16 * 1024 + 1) }), 'tags');
      const ok = await mgmt.call('POST', k.path, { ...k.body(unique('t')), tags: tagsOf(16 * 1024) });
      expectSuccess(ok, 201);
      expectFieldError(await mgmt.call('PATCH', `${k.path}/${ok.body.data.id as string}`, { ...k.patch, tags: tagsOf(20_000) }), 'tags');
    }
  });
});
