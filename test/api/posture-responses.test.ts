import { auth, type EdgeApi } from '../support/clients.js';
import { eventually, sessionClients } from '../support/clients-session.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectFieldError, expectSuccess } from '../support/envelope.js';

/**
 * Client posture responses (single and bulk) and what management sees of them: an identity's
 * posture data, kept per identity and per API session, and dropped with the API session
 * (reference §6.11, §1.2 posture rows).
 */

const ctl = useController();
failOnConformanceProblems();

let client: EdgeApi;
let clientApi: ReturnType<typeof sessionClients>;
let mgmtApi: ReturnType<typeof sessionClients>;
let identityId: string;
let apiSessionId: string;

beforeAll(async () => {
  client = await ctl().adminSession('client');
  clientApi = sessionClients(client);
  mgmtApi = sessionClients(await ctl().adminSession('management'));
  const current = await client.currentApiSession.get();
  identityId = current.body.data.identity.id;
  apiSessionId = current.body.data.id;
});

const postureData = async (id = identityId) => {
  const res = await mgmtApi.postureData(id);
  expectSuccess(res);
  return res.body.data;
};

describe('POST /posture-response', () => {
  it('answers 201 with the services whose timeouts changed (none here) and records OS, domain and MAC', async () => {
    for (const body of [
      { id: 'os-check', typeId: 'OS', type: 'Windows', version: '10.0.19041', build: '19041' },
      { id: 'domain-check', typeId: 'DOMAIN', domain: 'Corp.Example' },
      { id: 'mac-check', typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:ff'] },
    ]) {
      const res = await clientApi.postureResponse(body);
      expectSuccess(res, 201);
      expect(res.body.data).toEqual({ services: [] });
    }
    const pd = await postureData();
    expect(pd.os).toMatchObject({ postureCheckId: 'os-check', type: 'Windows', version: '10.0.19041', build: '19041', timedOut: false });
    expect(pd.domain).toMatchObject({ postureCheckId: 'domain-check', domain: 'Corp.Example' });
    expect(pd.mac).toMatchObject({ postureCheckId: 'mac-check', addresses: ['aa:bb:cc:dd:ee:ff'] });
  });

  it('records processes with their hash and signer fingerprints cleaned to lower-case hex', async () => {
    const res = await clientApi.postureResponse({ id: 'proc-check', typeId: 'PROCESS', path: '/usr/bin/agent', isRunning: true, hash: 'AB:CD:EF', signerFingerprints: ['00-FF'] });
    expectSuccess(res, 201);
    const pd = await postureData();
    expect(pd.processes).toEqual([
      expect.objectContaining({ postureCheckId: 'proc-check', isRunning: true, binaryHash: 'abcdef', signerFingerprints: ['00ff'] }),
    ]);
  });

  it('keeps endpoint state per API session', async () => {
    expectSuccess(await clientApi.postureResponse({ id: 'state', typeId: 'ENDPOINT_STATE', woken: true }), 201);
    const pd = await postureData();
    expect(pd.apiSessionPostureData[apiSessionId]).toMatchObject({ mfa: { apiSessionId, passedMfa: false }, endpointState: { wokenAt: expect.stringMatching(/^\d{4}-/) } });
  });

  it('refuses unknown typeIds and missing fields, and ignores fields of another kind', async () => {
    expectFieldError(await clientApi.postureResponse({ id: 'x', typeId: 'MFA' }), 'typeId');
    expectFieldError(await clientApi.postureResponse({ id: 'x', typeId: 'OS', type: 'Linux' }), 'version');
    expectSuccess(await clientApi.postureResponse({ id: 'x', typeId: 'DOMAIN', domain: 'a', macAddresses: [] }), 201);
    expectFieldError(await clientApi.postureResponse({ typeId: 'DOMAIN', domain: 'a' }), 'id');
  });
});

describe('POST /posture-response-bulk', () => {
  it('answers 200 and applies every response; a bad item refuses the whole body', async () => {
    const res = await clientApi.postureResponseBulk([
      { id: 'os-check', typeId: 'OS', type: 'Linux', version: '6.1.0' },
      { id: 'domain-check', typeId: 'DOMAIN', domain: 'other.example' },
    ]);
    expectSuccess(res, 200);
    expect(res.body.data).toEqual({ services: [] });
    const pd = await postureData();
    expect([pd.os.type, pd.domain.domain]).toEqual(['Linux', 'other.example']);

    const bad = await clientApi.postureResponseBulk([{ id: 'd', typeId: 'DOMAIN', domain: 'never.example' }, { id: 'x', typeId: 'NOPE' }]);
    expectFieldError(bad, '1.typeId');
    expect((await postureData()).domain.domain).toBe('other.example');
  });
});

describe('posture data lifecycle', () => {
  it('drops an API session’s state when it ends, keeping the identity’s data', async () => {
    const second = await auth.login(ctl().http, ctl().admin.username, ctl().admin.password, 'client');
    const secondApi = sessionClients(second.session);
    const secondId = (await second.session.currentApiSession.get()).body.data.id as string;
    expectSuccess(await secondApi.postureResponse({ id: 'state', typeId: 'ENDPOINT_STATE', unlocked: true }), 201);
    expect(Object.keys((await postureData()).apiSessionPostureData)).toContain(secondId);

    expectSuccess(await second.session.currentApiSession.delete());
    await eventually(postureData, (pd) => !(secondId in pd.apiSessionPostureData), 'the ended API session to leave the posture data');
    expect((await postureData()).domain.domain).toBe('other.example');
  });

  it('an identity without posture data has the empty view', async () => {
    const mgmt = await ctl().adminSession('management');
    const res = await mgmt.identities.create({ name: `pd-${Date.now()}`, type: 'Default', isAdmin: false });
    const pd = await postureData(res.body.data.id);
    expect(pd).toMatchObject({ apiSessionPostureData: {}, processes: [], os: { type: '', version: '' }, domain: { domain: '' }, mac: { addresses: [] } });
    expect((await mgmtApi.failedServiceRequests(res.body.data.id)).body.data).toEqual([]);
  });

  it('answers 404 for an identity that does not exist', async () => {
    expectError(await mgmtApi.postureData('no-such-identity'), 404, 'NOT_FOUND');
    expectError(await mgmtApi.failedServiceRequests('no-such-identity'), 404, 'NOT_FOUND');
  });

  it('is a management operation (unknown on the client API)', async () => {
    expectError(await clientApi.postureData(identityId), 404, 'NOT_FOUND');
  });
});
