import { auth, type EdgeApi } from '../support/clients.js';
import { totp } from '../support/clients-identity.js';
import { networkBuilder, sessionClients } from '../support/clients-session.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectSuccess } from '../support/envelope.js';

/**
 * MFA posture checks that prompt on wake/unlock (reference §6.11, §5.3): an ENDPOINT_STATE
 * response after MFA names the services whose MFA timeout changed, and the client service list
 * evaluates the MFA query with the caller's MFA completion.
 */

const ctl = useController();
failOnConformanceProblems();

const GRACE_SECONDS = 300;
const TIMEOUT_SECONDS = 3600;

let net: ReturnType<typeof networkBuilder>;
let client: EdgeApi;
let api: ReturnType<typeof sessionClients>;
let serviceId: string;
let serviceName: string;
let checkId: string;
let otherServiceId: string;

beforeAll(async () => {
  const mgmt = await ctl().adminSession('management');
  net = networkBuilder(mgmt);
  const tag = net.unique('pwu');
  const identity = await net.identity([`${tag}-u`]);

  checkId = await net.postureCheck('MFA', { timeoutSeconds: TIMEOUT_SECONDS, promptOnWake: true, promptOnUnlock: false }, [`${tag}-mfa`]);
  serviceId = await net.service([`${tag}-s`]);
  serviceName = (await mgmt.call('GET', `/services/${serviceId}`)).body.data.name as string;
  await net.servicePolicy('Dial', [`#${tag}-u`], [`#${tag}-s`], [`#${tag}-mfa`]);
  // Reachable without the MFA check: never named by a wake.
  otherServiceId = await net.service([`${tag}-o`]);
  await net.servicePolicy('Dial', [`#${tag}-u`], [`#${tag}-o`]);

  const login = await auth.login(ctl().http, identity.username, identity.password, 'client');
  if (!login.token) throw new Error(`login failed: ${login.res.text}`);
  client = login.session;
  api = sessionClients(client);
});

const mfaQueryOf = async (id: string) => {
  const res = await client.call('GET', '/services?limit=500');
  expectSuccess(res);
  const svc = (res.body.data as { id: string; postureQueries: { postureQueries: { id: string; queryType: string; isPassing: boolean }[] }[] }[]).find((s) => s.id === id);
  return svc?.postureQueries.flatMap((p) => p.postureQueries).find((q) => q.id === checkId);
};

describe('MFA checks prompting on wake', () => {
  it('a woken response before MFA names no service, and the MFA query fails', async () => {
    const res = await api.postureResponse({ id: 'state', typeId: 'ENDPOINT_STATE', woken: true });
    expectSuccess(res, 201);
    expect(res.body.data.services).toEqual([]);
    expect(await mfaQueryOf(serviceId)).toMatchObject({ queryType: 'MFA', isPassing: false });
  });

  it('after MFA the service list shows the MFA query passing', async () => {
    expectSuccess(await client.call('POST', '/current-identity/mfa'), 201);
    const mfa = await client.call('GET', '/current-identity/mfa');
    const secret = new URL(mfa.body.data.provisioningUrl).searchParams.get('secret')!;
    expectSuccess(await client.call('POST', '/current-identity/mfa/verify', { code: totp(secret) }));

    expect(await mfaQueryOf(serviceId)).toMatchObject({ queryType: 'MFA', isPassing: true });
  });

  it('a woken response after MFA lists the service with the check’s timeout and the re-prompt grace', async () => {
    const res = await api.postureResponse({ id: 'state', typeId: 'ENDPOINT_STATE', woken: true });
    expectSuccess(res, 201);
    expect(res.body.data.services).toEqual([{ id: serviceId, name: serviceName, postureQueryType: 'MFA', timeout: TIMEOUT_SECONDS, timeoutRemaining: GRACE_SECONDS }]);
    expect((res.body.data.services as { id: string }[]).map((s) => s.id)).not.toContain(otherServiceId);
  });

  it('the bulk form answers the same, and an unlock (not prompting) names no service', async () => {
    const bulk = await api.postureResponseBulk([{ id: 'state', typeId: 'ENDPOINT_STATE', woken: true }]);
    expectSuccess(bulk, 200);
    expect((bulk.body.data.services as { id: string }[]).map((s) => s.id)).toEqual([serviceId]);

    const unlocked = await api.postureResponse({ id: 'state', typeId: 'ENDPOINT_STATE', unlocked: true });
    expectSuccess(unlocked, 201);
    expect(unlocked.body.data.services).toEqual([]);
  });
});
