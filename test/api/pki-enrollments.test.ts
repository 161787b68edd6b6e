import type { X509Certificate } from 'node:crypto';
import type { EdgeApi } from '../support/clients.js';
import { cas, caBody, deviceKeys, enrollPem, enrollments, inMinutes, jose, newEnrollment, newIdentity } from '../support/clients-pki.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';
import { fingerprintOf, servedCertificate, thirdPartyCa } from '../support/x509.js';

/** Management enrollments (§6.5, §1.2): create, detail, JWT claims, 409/400, list, refresh, delete. */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let served: X509Certificate;
let issuer: string;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  const url = new URL(ctl().url);
  served = await servedCertificate(url.hostname, Number(url.port));
  issuer = `https://${url.host}`;
});

describe('create and detail', () => {
  it('an OTT enrollment: 201, then a detail whose JWT has exactly the claims of §6.5 and verifies with the served certificate', async () => {
    const identity = await newIdentity(mgmt);
    const expiresAt = inMinutes(90);
    const res = await enrollments(mgmt).create({ method: 'ott', identityId: identity.id, expiresAt });
    const id = expectCreated(res, 'enrollments');
    const detail = await enrollments(mgmt).get(id);
    expectSuccess(detail);
    const e = detail.body.data;
    expect(e).toMatchObject({
      id, method: 'ott', identityId: identity.id, caId: null, tags: {},
      identity: { id: identity.id, entity: 'identities', _links: { self: { href: `./identities/${identity.id}` } } },
      _links: { self: { href: `./enrollments/${id}` } },
    });
    expect(Date.parse(e.expiresAt)).toBe(Date.parse(expiresAt));
    expect(e.token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const { jwtVerify, decodeProtectedHeader } = await jose();
    expect(decodeProtectedHeader(e.jwt)).toEqual({ alg: 'ES256', kid: fingerprintOf(served), typ: 'JWT' });
    const { payload } = await jwtVerify(e.jwt, served.publicKey, { audience: '', issuer });
    expect(payload).toEqual({
      iss: issuer, sub: identity.id, aud: [''], exp: Math.floor(Date.parse(expiresAt) / 1000), jti: e.token, em: 'ott', ctrls: [expect.any(String)],
    });
    expect(payload).not.toHaveProperty('iat');
  });

  it('updb and ottca enrollments carry their username and CA', async () => {
    const identity = await newIdentity(mgmt);
    const updb = await newEnrollment(mgmt, { method: 'updb', identityId: identity.id, username: `${identity.name}-login` });
    expect(updb).toMatchObject({ method: 'updb', username: `${identity.name}-login` });
    expect((await jose()).decodeJwt(updb.jwt).em).toBe('updb');

    const caId = expectCreated(await cas(mgmt).create(caBody(thirdPartyCa())), 'cas');
    const ottca = await newEnrollment(mgmt, { method: 'ottca', identityId: identity.id, caId });
    expect(ottca).toMatchObject({ method: 'ottca', caId });
    expect((await jose()).decodeJwt(ottca.jwt).em).toBe('ottca');
  });

  it('one outstanding enrollment per identity and method: a second is 409 ENROLLMENT_EXISTS', async () => {
    const identity = await newIdentity(mgmt);
    await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
    expectError(await enrollments(mgmt).create({ method: 'ott', identityId: identity.id, expiresAt: inMinutes(10) }), 409, 'ENROLLMENT_EXISTS');
    expectCreated(await enrollments(mgmt).create({ method: 'updb', identityId: identity.id, username: `${identity.name}-u`, expiresAt: inMinutes(10) }), 'enrollments');
  });

  it('bad input is 400 COULD_NOT_VALIDATE on the field, and creates nothing', async () => {
    const identity = await newIdentity(mgmt);
    const cases: [Record<string, unknown>, string][] = [
      [{ method: 'ott', identityId: identity.id, expiresAt: new Date(Date.now() - 1000).toISOString() }, 'expiresAt'],
      [{ method: 'ott', identityId: identity.id }, 'expiresAt'],
      [{ method: 'ott', identityId: identity.id, expiresAt: 'soon' }, 'expiresAt'],
      [{ method: 'ott', expiresAt: inMinutes(10) }, 'identityId'],
      [{ method: 'ottca', identityId: identity.id, expiresAt: inMinutes(10), caId: 'invalid' }, 'caId'],
      [{ method: 'ottca', identityId: identity.id, expiresAt: inMinutes(10) }, 'caId'],
      [{ method: 'updb', identityId: identity.id, expiresAt: inMinutes(10) }, 'username'],
      [{ method: 'magic', identityId: identity.id, expiresAt: inMinutes(10) }, 'method'],
    ];
    for (const [body, field] of cases) expectFieldError(await enrollments(mgmt).create(body), field);
    const mine = await mgmt.call('GET', `/identities/${identity.id}/enrollments`);
    expectList(mine);
    expect(mine.body.data).toEqual([]);
  });
});

describe('list, per identity, delete', () => {
  it('lists with ZitiQL filters and paging; /identities/{id}/enrollments lists one identity\'s', async () => {
    const identity = await newIdentity(mgmt);
    const ott = await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
    const updb = await newEnrollment(mgmt, { method: 'updb', identityId: identity.id, username: `${identity.name}-x` });
    const list = await enrollments(mgmt).list({ filter: `identity="${identity.id}"`, sort: 'method asc' });
    expectList(list);
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([ott.id, updb.id]);
    expect(list.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 2 });
    expect(list.body.meta.filterableFields).toEqual(expect.arrayContaining(['id', 'method', 'identity', 'expiresAt', 'createdAt']));
    const one = await enrollments(mgmt).list({ filter: `identity="${identity.id}" and method="updb"` });
    expect(one.body.data.map((e: { id: string }) => e.id)).toEqual([updb.id]);
    expectError(await enrollments(mgmt).list({ filter: 'nope = 1' }), 400, 'INVALID_FILTER');

    const mine = await mgmt.call('GET', `/identities/${identity.id}/enrollments`);
    expectList(mine);
    expect(mine.body.data.map((e: { id: string }) => e.id).sort()).toEqual([ott.id, updb.id].sort());
  });

  it('delete: 200 empty, then 404; the token no longer enrolls', async () => {
    const identity = await newIdentity(mgmt);
    const e = await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
    expectEmpty(await enrollments(mgmt).delete(e.id));
    expectError(await enrollments(mgmt).get(e.id), 404, 'NOT_FOUND');
    expectError(await enrollments(mgmt).delete(e.id), 404, 'NOT_FOUND');
    expectError(await enrollPem(ctl().http, e.token, deviceKeys().csr), 400, 'INVALID_ENROLLMENT_TOKEN');
  });

  it('needs a management session', async () => {
    expectError(await ctl().http.get('/edge/management/v1/enrollments'), 401, 'UNAUTHORIZED');
    const client = await ctl().adminSession('client');
    expectError(await client.call('GET', '/enrollments'), 404, 'NOT_FOUND');
  });
});

describe('refresh', () => {
  it('a bad or missing expiresAt is 400 and changes nothing', async () => {
    const identity = await newIdentity(mgmt);
    const e = await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
    for (const body of [{}, { expiresAt: 'x' }, { expiresAt: new Date(Date.now() - 60_000).toISOString() }]) {
      const res = await mgmt.call('POST', `/enrollments/${e.id}/refresh`, body);
      expectError(res, 400, 'COULD_NOT_VALIDATE');
      expect(res.body.error.cause.field).toBe('expiresAt');
    }
    const after = (await enrollments(mgmt).get(e.id)).body.data;
    expect([after.token, after.jwt, after.expiresAt]).toEqual([e.token, e.jwt, e.expiresAt]);
  });

  it('a valid one: a new token, JWT and expiry; the old JWT no longer enrolls', async () => {
    const identity = await newIdentity(mgmt);
    const e = await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
    const expiresAt = inMinutes(240);
    const res = await mgmt.call('POST', `/enrollments/${e.id}/refresh`, { expiresAt });
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ id: e.id, _links: { self: { href: `./enrollments/${e.id}` } } });
    const after = (await enrollments(mgmt).get(e.id)).body.data;
    expect(after.token).not.toBe(e.token);
    expect(after.jwt).not.toBe(e.jwt);
    expect(Date.parse(after.expiresAt)).toBe(Date.parse(expiresAt));
    const { jwtVerify } = await jose();
    const { payload } = await jwtVerify(after.jwt, served.publicKey, { audience: '' });
    expect(payload).toMatchObject({ jti: after.token, exp: Math.floor(Date.parse(expiresAt) / 1000), sub: identity.id });
    expectError(await enrollPem(ctl().http, e.token, deviceKeys().csr), 400, 'INVALID_ENROLLMENT_TOKEN');
  });

  it('an unknown enrollment is 404', async () => {
    expectError(await mgmt.call('POST', '/enrollments/nope/refresh', { expiresAt: inMinutes(10) }), 404, 'NOT_FOUND');
  });
});
