import type { X509Certificate } from 'node:crypto';
import type { EdgeApi } from '../support/clients.js';
import { deviceKeys, sessionCerts } from '../support/clients-pki.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectEmpty, expectError, expectList, expectSuccess } from '../support/envelope.js';
import { certificates, chainsTo, fingerprintOf } from '../support/x509.js';

/** `/current-api-session/certificates` (api_session_certificates_test): ephemeral certificates scoped to their API session. */

const ctl = useController();
failOnConformanceProblems();

let client: EdgeApi;
beforeAll(async () => {
  client = await ctl().adminSession('client');
});

describe('API-session certificates', () => {
  it('are issued from a CSR: 201 with the certificate and the CA pool; the certificate chains to the controller root', async () => {
    const res = await sessionCerts(client).create(deviceKeys('session-device').csr);
    expectSuccess(res, 201);
    const { id, certificate, cas, _links } = res.body.data;
    expect(_links.self.href).toBe(`./current-api-session/certificates/${id}`);
    const [leaf] = certificates(certificate) as [X509Certificate];
    const [root, intermediate] = certificates(cas) as [X509Certificate, X509Certificate];
    expect(chainsTo(leaf, [intermediate], root)).toBe(true);
    expect(certificates(ctl().running.caCertPem)[0]!.raw).toEqual(root.raw);
    expect(leaf.subjectAltName).toMatch(/^URI:spiffe:\/\/[^/]+\/identity\/[^/]+\/apiSession\/[^/]+$/);
    expect(Date.parse(leaf.validTo) - Date.now()).toBeLessThanOrEqual(12 * 3600_000 + 60_000);

    const detail = await sessionCerts(client).get(id);
    expectSuccess(detail);
    expect(detail.body.data).toMatchObject({ id, certificate, subject: 'CN=session-device', fingerprint: fingerprintOf(leaf) });
    const list = await sessionCerts(client).list();
    expectList(list);
    expect(list.body.data.map((c: { id: string }) => c.id)).toContain(id);
  });

  it('refuse a bad CSR, and a missing one', async () => {
    expectError(await sessionCerts(client).create('nope'), 400, 'COULD_NOT_PROCESS_CSR');
    expectError(await client.call('POST', '/current-api-session/certificates', {}), 400, 'COULD_NOT_VALIDATE');
  });

  it('are invisible to another API session of the same identity, and deletable by their own', async () => {
    const created = await sessionCerts(client).create(deviceKeys().csr);
    const id = created.body.data.id as string;
    const other = await ctl().adminSession('client');
    expectError(await sessionCerts(other).get(id), 404, 'NOT_FOUND');
    expectError(await sessionCerts(other).delete(id), 404, 'NOT_FOUND');
    expect((await sessionCerts(other).list()).body.data).toEqual([]);
    expectEmpty(await sessionCerts(client).delete(id));
    expectError(await sessionCerts(client).get(id), 404, 'NOT_FOUND');
  });

  it('are out of reach once their API session ended (logout); their deletion on api-session.deleted is covered by pki-enrollment\'s integration tests', async () => {
    const session = await ctl().adminSession('client');
    const id = (await sessionCerts(session).create(deviceKeys().csr)).body.data.id as string;
    expectEmpty(await session.currentApiSession.delete());
    expectError(await sessionCerts(session).get(id), 401, 'UNAUTHORIZED');
    const fresh = await ctl().adminSession('client');
    expectError(await sessionCerts(fresh).get(id), 404, 'NOT_FOUND');
  });

  it('need a session', async () => {
    expectError(await ctl().http.get('/edge/client/v1/current-api-session/certificates'), 401, 'UNAUTHORIZED');
  });
});
