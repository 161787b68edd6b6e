import { auth, type EdgeApi } from '../support/clients.js';
import { totp } from '../support/clients-identity.js';
import { eventually, networkBuilder, sessionClients } from '../support/clients-session.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectSuccess } from '../support/envelope.js';

/**
 * Posture evaluation as POST /sessions applies it (reference §6.11): each kind of check failing,
 * then passing once the endpoint reports matching posture data; a session ends when its posture
 * stops passing; MFA fails without MFA in the API session.
 */

const ctl = useController();
failOnConformanceProblems();

let net: ReturnType<typeof networkBuilder>;
let api: ReturnType<typeof sessionClients>;
let client: EdgeApi;
let tag: string;

beforeAll(async () => {
  const mgmt = await ctl().adminSession('management');
  net = networkBuilder(mgmt);
  tag = net.unique('pe');
  const identity = await net.identity([`${tag}-u`]);
  const login = await auth.login(ctl().http, identity.username, identity.password, 'client');
  if (!login.token) throw new Error(`login failed: ${login.res.text}`);
  client = login.session;
  api = sessionClients(client);
  await net.edgeRouter([`${tag}-r`]);
  await net.edgeRouterPolicy([`#${tag}-u`], [`#${tag}-r`]);
  await net.serviceEdgeRouterPolicy(['#all'], [`#${tag}-r`]);
});

/** A service dialable only through a policy that requires one posture check. */
async function guardedService(typeId: string, fields: Record<string, unknown>): Promise<{ serviceId: string; checkId: string }> {
  const kind = net.unique(typeId.toLowerCase());
  const checkId = await net.postureCheck(typeId, fields, [kind]);
  const serviceId = await net.service([kind]);
  await net.servicePolicy('Dial', [`#${tag}-u`], [`#${kind}`], [`#${kind}`]);
  return { serviceId, checkId };
}

const CASES: { typeId: string; fields: Record<string, unknown>; failing: (id: string) => unknown[]; passing: (id: string) => unknown[] }[] = [
  {
    typeId: 'OS',
    fields: { operatingSystems: [{ type: 'Windows', versions: ['>=10.0.0 <11.0.0'] }] },
    failing: (id) => [{ id, typeId: 'OS', type: 'Windows', version: '11.0.22000' }],
    passing: (id) => [{ id, typeId: 'OS', type: 'windows', version: '10.0.19041' }],
  },
  {
    typeId: 'DOMAIN',
    fields: { domains: ['Corp.Example'] },
    failing: (id) => [{ id, typeId: 'DOMAIN', domain: 'home.example' }],
    passing: (id) => [{ id, typeId: 'DOMAIN', domain: 'corp.EXAMPLE' }],
  },
  {
    typeId: 'MAC',
    fields: { macAddresses: ['AA:BB:CC:DD:EE:FF'] },
    failing: (id) => [{ id, typeId: 'MAC', macAddresses: ['11:22:33:44:55:66'] }],
    passing: (id) => [{ id, typeId: 'MAC', macAddresses: ['11:22:33:44:55:66', 'aa-bb-cc-dd-ee-ff'] }],
  },
  {
    typeId: 'PROCESS',
    fields: { process: { osType: 'Linux', path: '/usr/bin/agent', hashes: ['ABCDEF01'], signerFingerprint: '00FF' } },
    failing: (id) => [{ id, typeId: 'PROCESS', path: '/usr/bin/agent', isRunning: true, hash: 'ffffffff', signerFingerprints: ['00ff'] }],
    passing: (id) => [{ id, typeId: 'PROCESS', path: '/usr/bin/agent', isRunning: true, hash: 'abcdef01', signerFingerprints: ['00:ff'] }],
  },
  {
    typeId: 'PROCESS_MULTI',
    fields: { semantic: 'AllOf', processes: [{ osType: 'Linux', path: '/bin/a' }, { osType: 'Linux', path: '/bin/b', hashes: ['01'] }] },
    failing: (id) => [{ id, typeId: 'PROCESS', path: '/bin/a', isRunning: true }],
    passing: (id) => [
      { id, typeId: 'PROCESS', path: '/bin/a', isRunning: true },
      { id, typeId: 'PROCESS', path: '/bin/b', isRunning: true, hash: '01' },
    ],
  },
];

describe.each(CASES)('$typeId checks', ({ typeId, fields, failing, passing }) => {
  it('refuse the session with failing posture data (409), then admit it once the data passes', async () => {
    const { serviceId, checkId } = await guardedService(typeId, fields);
    expectError(await api.createSession(serviceId), 409, 'INVALID_POSTURE');
    expectSuccess(await api.postureResponseBulk(failing(checkId)), 200);
    const refused = await api.createSession(serviceId);
    expectError(refused, 409, 'INVALID_POSTURE');
    expect(Object.values(refused.body.error.cause.data as Record<string, { id: string }[]>).flat().map((c) => c.id)).toEqual([checkId]);
    expectSuccess(await api.postureResponseBulk(passing(checkId)), 200);
    expectSuccess(await api.createSession(serviceId), 201);
  });
});

describe('sessions follow posture', () => {
  it('a session ends when its posture stops passing', async () => {
    const { serviceId, checkId } = await guardedService('DOMAIN', { domains: ['ends.example'] });
    expectSuccess(await api.postureResponse({ id: checkId, typeId: 'DOMAIN', domain: 'ends.example' }), 201);
    const s = (await api.createSession(serviceId)).body.data;
    expectSuccess(await api.postureResponse({ id: checkId, typeId: 'DOMAIN', domain: 'elsewhere.example' }), 201);
    await eventually(() => api.sessions.get(s.id), (r) => r.status === 404, 'the session to end');
  });
});

describe('MFA checks', () => {
  it('refuse a session whose API session did not pass MFA, naming the check in the cause', async () => {
    const { serviceId, checkId } = await guardedService('MFA', { timeoutSeconds: 60, promptOnWake: true });
    const res = await api.createSession(serviceId);
    expectError(res, 409, 'INVALID_POSTURE');
    expect(Object.values(res.body.error.cause.data as Record<string, { id: string; typeId: string }[]>).flat()).toEqual([{ id: checkId, typeId: 'MFA', isPassing: false }]);
  });

  it('admit a session once the API session passed MFA, and refuse again once the MFA timeout lapsed', async () => {
    const kind = net.unique('mfa-timeout');
    await net.postureCheck('MFA', { timeoutSeconds: 3 }, [kind]);
    const first = await net.service([kind]);
    const second = await net.service([kind]);
    await net.servicePolicy('Dial', [`#${tag}-u`], [`#${kind}`], [`#${kind}`]);
    const identity = await net.identity([`${tag}-u`]);
    const login = await auth.login(ctl().http, identity.username, identity.password, 'client');
    const user = sessionClients(login.session);
    expectError(await user.createSession(first), 409, 'INVALID_POSTURE');

    expectSuccess(await login.session.call('POST', '/current-identity/mfa'), 201);
    const mfa = await login.session.call('GET', '/current-identity/mfa');
    const secret = new URL(mfa.body.data.provisioningUrl).searchParams.get('secret')!;
    expectSuccess(await login.session.call('POST', '/current-identity/mfa/verify', { code: totp(secret) }));
    expectSuccess(await user.createSession(first), 201);

    // A repeat would return the first session unchecked: the second service is asked once, after the timeout.
    await new Promise((r) => setTimeout(r, 4_000));
    expectError(await user.createSession(second), 409, 'INVALID_POSTURE');
  });

  it('end a session within seconds once its MFA timeout lapsed, as the controller\'s 5-second posture enforcement does', async () => {
    const kind = net.unique('mfa-lapse');
    await net.postureCheck('MFA', { timeoutSeconds: 2 }, [kind]);
    const serviceId = await net.service([kind]);
    await net.servicePolicy('Dial', [`#${tag}-u`], [`#${kind}`], [`#${kind}`]);
    const identity = await net.identity([`${tag}-u`]);
    const login = await auth.login(ctl().http, identity.username, identity.password, 'client');
    const user = sessionClients(login.session);
    expectSuccess(await login.session.call('POST', '/current-identity/mfa'), 201);
    const mfa = await login.session.call('GET', '/current-identity/mfa');
    const secret = new URL(mfa.body.data.provisioningUrl).searchParams.get('secret')!;
    const passedAt = Date.now();
    expectSuccess(await login.session.call('POST', '/current-identity/mfa/verify', { code: totp(secret) }));
    const created = await user.createSession(serviceId);
    expectSuccess(created, 201);
    expectSuccess(await user.sessions.get(created.body.data.id), 200);

    // Polled without a deadline of its own: the session must end well before the old 60-second sweep could have ended it.
    await eventually(() => user.sessions.get(created.body.data.id), (r) => r.status === 404, 'the session to end', 40_000);
    const endedAfterMs = Date.now() - passedAt;
    expect(endedAfterMs).toBeGreaterThanOrEqual(1_500);
    expect(endedAfterMs).toBeLessThan(30_000);
  });
});
