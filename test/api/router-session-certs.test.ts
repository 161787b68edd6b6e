// API-session certificates on edge routers: a router accepts an SDK's client certificate only when
// its fingerprint is among the legacy API session's `certFingerprints` (OpenZiti
// `ApiSession.CertFingerprints`: the identity's certificate authenticators and the session's own
// certificates).
import { auth, type EdgeApi } from '../support/clients.js';
import { deviceKeys, sessionCerts } from '../support/clients-pki.js';
import { networkBuilder } from '../support/clients-session.js';
import { useController } from '../support/controller.js';
import { expectEmpty, expectSuccess } from '../support/envelope.js';
import type { RouterDouble } from '../support/router-double.js';
import { connectRouter, edgeRouter, enrolledRouter, poll } from '../support/router-fixtures.js';
import { certificates, fingerprintOf } from '../support/x509.js';

const ctl = useController();
let mgmt: EdgeApi;
let double: RouterDouble;
let user: { token: string; client: EdgeApi };

beforeAll(async () => {
  mgmt = await ctl().adminSession();
  const identity = await networkBuilder(mgmt).identity();
  const router = await enrolledRouter(mgmt, `er-sc-${Date.now()}`);
  double = await connectRouter(ctl(), router);
  await poll(async () => (await edgeRouter(mgmt, router.routerId)).syncStatus === 'SYNC_DONE');
  const login = await auth.login(ctl().http, identity.username, identity.password, 'client');
  if (!login.token) throw new Error(`login failed: ${login.res.text}`);
  user = { token: login.token, client: login.session };
}, 90_000);
afterAll(async () => double?.close());

const pushedPrints = (d: RouterDouble) => d.apiSessions.get(user.token)?.certFingerprints ?? [];

describe('API-session certificates on routers', () => {
  it("a certificate the session creates reaches the router in its session's fingerprints (lowercase SHA-1 hex); a router connecting later has it in the full state; deleting it takes it away", async () => {
    expect(await poll(() => double.apiSessions.get(user.token))).toBeDefined();
    // a password identity: no certificate authenticator, so nothing yet
    expect(pushedPrints(double)).toEqual([]);

    const created = await sessionCerts(user.client).create(deviceKeys('router-sdk').csr);
    expectSuccess(created, 201);
    const fingerprint = fingerprintOf(certificates(created.body.data.certificate as string)[0]!);
    expect(fingerprint).toMatch(/^[0-9a-f]{40}$/);
    expect((await sessionCerts(user.client).get(created.body.data.id as string)).body.data.fingerprint).toBe(fingerprint);
    expect(await poll(() => pushedPrints(double).includes(fingerprint))).toBe(true);
    expect(pushedPrints(double)).toEqual([fingerprint]);

    const late = await connectRouter(ctl(), await enrolledRouter(mgmt, `er-sc-late-${Date.now()}`));
    try {
      const full = await poll(() => late.apiSessionSyncs.flatMap((s) => s.added.apiSessions).find((s) => s.token === user.token));
      expect(full?.certFingerprints).toEqual([fingerprint]);
    } finally {
      await late.close();
    }

    const second = await sessionCerts(user.client).create(deviceKeys('router-sdk-2').csr);
    expectSuccess(second, 201);
    const secondPrint = fingerprintOf(certificates(second.body.data.certificate as string)[0]!);
    expect(await poll(() => pushedPrints(double).length === 2)).toBe(true);
    expect(pushedPrints(double)).toEqual([fingerprint, secondPrint]);

    expectEmpty(await sessionCerts(user.client).delete(created.body.data.id as string));
    expect(await poll(() => !pushedPrints(double).includes(fingerprint))).toBe(true);
    expect(pushedPrints(double)).toEqual([secondPrint]);
  });
});
