import { X509Certificate, createHash } from 'node:crypto';
import { type ServiceError, status } from '@grpc/grpc-js';
import { type ChangeEvent, newChangeEvent } from '@ziti/messaging';
import { type ListApiSessionCertificateFingerprintsResponse, PkiEnrollmentServiceClient } from '@ziti/proto';
import { type ContextName, internalChannelCredentials, internalRpc } from '@ziti/service-kit';
import { csrPem, ecKeyPair } from './testing/certs.js';
import { type TestService, call, pemToDers, principal, startTestService } from './testing/harness.js';

/** What routers accept from an SDK beside its identity's certificates: the API session's own ones (fabric). */
describe('API-session certificate fingerprints (fabric) and their events', () => {
  let t: TestService;
  let rpc: ReturnType<typeof internalRpc<PkiEnrollmentServiceClient>>;
  const events: ChangeEvent[] = [];

  beforeAll(async () => {
    t = await startTestService();
    rpc = internalRpc(PkiEnrollmentServiceClient, t.grpcAddress, 'pki-enrollment');
    await t.bus.subscribeBroadcast('pki-enrollment', ['api-session-certificate.created', 'api-session-certificate.deleted'], (e) => void events.push(e));
  });
  afterAll(async () => {
    rpc?.close();
    await t?.stop();
  });

  const fingerprints = (apiSessionIds: string[]) =>
    rpc.call<ListApiSessionCertificateFingerprintsResponse>('listApiSessionCertificateFingerprints', { apiSessionIds });
  const session = (apiSessionId: string, identityId: string) => principal({ identityId, apiSessionId, isAdmin: false, isDefaultAdmin: false });
  /** A certificate created by the session's owner: its id and the lowercase hex SHA-1 of its DER. */
  const create = async (who: ReturnType<typeof session>) => {
    const res = await call(t.url, { api: 'client', path: '/current-api-session/certificates', principal: who, json: { csr: csrPem(ecKeyPair(), { commonName: 'sdk' }) } });
    expect(res.status).toBe(201);
    const der = pemToDers(res.body.data.certificate)[0]!;
    return { id: res.body.data.id as string, fingerprint: createHash('sha1').update(der).digest('hex'), cert: new X509Certificate(der) };
  };
  const remove = (who: ReturnType<typeof session>, id: string) => call(t.url, { api: 'client', method: 'DELETE', path: `/current-api-session/certificates/${id}`, principal: who });
  const eventsOf = async (apiSessionId: string, count: number) => {
    for (let i = 0; i < 100 && events.filter((e) => (e.data as { apiSessionId: string }).apiSessionId === apiSessionId).length < count; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    return events.filter((e) => (e.data as { apiSessionId: string }).apiSessionId === apiSessionId);
  };

  it("answers each named session's certificate fingerprints (lowercase SHA-1 of the DER, oldest first), in the order asked, sessions without any left out", async () => {
    const a = session('fp-session-a', 'fp-ident-1');
    const b = session('fp-session-b', 'fp-ident-1');
    const a1 = await create(a);
    const a2 = await create(a);
    const b1 = await create(b);
    expect(a1.fingerprint).toMatch(/^[0-9a-f]{40}$/);
    expect(a1.cert.fingerprint.replace(/:/g, '').toLowerCase()).toBe(a1.fingerprint);
    const detail = await call(t.url, { api: 'client', path: `/current-api-session/certificates/${a1.id}`, principal: a });
    expect(detail.body.data.fingerprint).toBe(a1.fingerprint);

    expect(await fingerprints(['fp-session-b', 'no-such-session', 'fp-session-a', 'fp-session-b'])).toEqual({
      entries: [
        { apiSessionId: 'fp-session-b', fingerprints: [b1.fingerprint] },
        { apiSessionId: 'fp-session-a', fingerprints: [a1.fingerprint, a2.fingerprint] },
      ],
    });
    expect(await fingerprints([])).toEqual({ entries: [] });
  });

  it('a create and a delete raise api-session-certificate.created|deleted with ids only; a refused delete raises nothing', async () => {
    const who = session('fp-session-c', 'fp-ident-2');
    const c1 = await create(who);
    const created = await eventsOf('fp-session-c', 1);
    expect(created.map((e) => [e.source, e.type, e.data])).toEqual([
      ['pki-enrollment', 'api-session-certificate.created', { certificateId: c1.id, apiSessionId: 'fp-session-c', identityId: 'fp-ident-2' }],
    ]);
    expect(JSON.stringify(created)).not.toContain('CERTIFICATE');

    // another session of the same identity can not delete it: 404 and no event
    expect((await remove(session('fp-session-other', 'fp-ident-2'), c1.id)).status).toBe(404);
    expect((await remove(who, c1.id)).status).toBe(200);
    const both = await eventsOf('fp-session-c', 2);
    expect(both.map((e) => [e.type, e.data])).toEqual([
      ['api-session-certificate.created', { certificateId: c1.id, apiSessionId: 'fp-session-c', identityId: 'fp-ident-2' }],
      ['api-session-certificate.deleted', { certificateId: c1.id, apiSessionId: 'fp-session-c', identityId: 'fp-ident-2' }],
    ]);
    expect(await fingerprints(['fp-session-c'])).toEqual({ entries: [] });
    expect((await remove(who, c1.id)).status).toBe(404);
  });

  it("the session's end deletes its certificates (the session leaves routers with it: no certificate event)", async () => {
    const who = session('fp-session-d', 'fp-ident-3');
    await create(who);
    expect((await fingerprints(['fp-session-d'])).entries).toHaveLength(1);
    await t.bus.publish(newChangeEvent('identity-auth', 'api-session.deleted', { apiSessionId: 'fp-session-d', identityId: 'fp-ident-3', tokenHashes: [] }));
    for (let i = 0; i < 100 && (await fingerprints(['fp-session-d'])).entries.length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await fingerprints(['fp-session-d'])).toEqual({ entries: [] });
    // a later certificate's event has arrived: one for the deletion would have come before it
    await create(session('fp-session-d2', 'fp-ident-3'));
    expect(await eventsOf('fp-session-d2', 1)).toHaveLength(1);
    expect((await eventsOf('fp-session-d', 1)).map((e) => e.type)).toEqual(['api-session-certificate.created']);
  });

  it('refuses more than 1000 sessions with INVALID_ARGUMENT; ids no session can have name nothing', async () => {
    const who = session('fp-session-e', 'fp-ident-4');
    const e1 = await create(who);
    await expect(fingerprints(Array.from({ length: 1001 }, (_, i) => `s-${i}`))).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    const many = [...Array.from({ length: 999 }, (_, i) => `s-${i}`), 'fp-session-e'];
    expect(await fingerprints(many)).toEqual({ entries: [{ apiSessionId: 'fp-session-e', fingerprints: [e1.fingerprint] }] });
    expect(await fingerprints(['a\u0000b', '\ud800', 'x'.repeat(10_000), 'fp-session-e'])).toEqual({ entries: [{ apiSessionId: 'fp-session-e', fingerprints: [e1.fingerprint] }] });
  });

  it('is for the fabric context only', async () => {
    for (const caller of ['gateway', 'identity-auth', 'policy', 'session', 'posture'] as ContextName[]) {
      const client = new PkiEnrollmentServiceClient(t.grpcAddress, internalChannelCredentials(caller, 'pki-enrollment'));
      try {
        const code = await new Promise<number | undefined>((resolve) =>
          client.listApiSessionCertificateFingerprints({ apiSessionIds: ['fp-session-a'] }, (e: ServiceError | null) => resolve(e?.code)),
        );
        expect(code).toBe(status.PERMISSION_DENIED);
      } finally {
        client.close();
      }
    }
  });
});
