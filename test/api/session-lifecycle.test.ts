import { auth, type EdgeApi } from '../support/clients.js';
import { eventually, networkBuilder, sessionClients } from '../support/clients-session.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectSuccess } from '../support/envelope.js';

/**
 * Sessions end when access ends (API session, policy, identity disabled or deleted, service
 * deleted), and `/current-api-session/service-updates` moves on relevant changes only (§7.5).
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let net: ReturnType<typeof networkBuilder>;

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  net = networkBuilder(mgmt);
});

/** A logged-in non-admin identity that may dial a fresh service through a fresh router. */
async function dialer() {
  const tag = net.unique('lc');
  const identity = await net.identity([`${tag}-u`]);
  await net.edgeRouter([`${tag}-r`]);
  await net.edgeRouterPolicy([`#${tag}-u`], [`#${tag}-r`]);
  const serviceId = await net.service([`${tag}-s`]);
  await net.serviceEdgeRouterPolicy([`#${tag}-s`], [`#${tag}-r`]);
  const policyId = await net.servicePolicy('Dial', [`#${tag}-u`], [`#${tag}-s`]);
  const login = async () => {
    const l = await auth.login(ctl().http, identity.username, identity.password, 'client');
    if (!l.token) throw new Error(`login failed: ${l.res.text}`);
    return { client: l.session, api: sessionClients(l.session) };
  };
  const first = await login();
  const created = await first.api.createSession(serviceId);
  expectSuccess(created, 201);
  return { tag, identity, serviceId, policyId, login, ...first, sessionId: created.body.data.id as string };
}

const gone = (api: ReturnType<typeof sessionClients>, id: string) =>
  eventually(() => api.sessions.get(id), (r) => r.status === 404, `session ${id} to end`);
const adminGone = (id: string) => eventually(() => sessionClients(mgmt).sessions.list({ filter: `id = "${id}"` }), (r) => r.body.data.length === 0, `session ${id} to end`);

describe('sessions end with access', () => {
  it('when their API session ends (logout)', async () => {
    const d = await dialer();
    expectSuccess(await d.client.currentApiSession.delete());
    await adminGone(d.sessionId);
  });

  it('when the only policy granting the service is deleted', async () => {
    const d = await dialer();
    expectSuccess(await mgmt.call('DELETE', `/service-policies/${d.policyId}`));
    await gone(d.api, d.sessionId);
  });

  it('when the identity loses the role attribute the policy selects', async () => {
    const d = await dialer();
    expectSuccess(await mgmt.identities.patch(d.identity.id, { roleAttributes: ['unrelated'] }));
    await gone(d.api, d.sessionId);
  });

  it('when the service is deleted', async () => {
    const d = await dialer();
    expectSuccess(await mgmt.call('DELETE', `/services/${d.serviceId}`));
    await gone(d.api, d.sessionId);
  });

  it('when the identity is disabled, or deleted', async () => {
    const a = await dialer();
    expectSuccess(await mgmt.call('POST', `/identities/${a.identity.id}/disable`, { durationMinutes: 0 }));
    await adminGone(a.sessionId);
    const b = await dialer();
    expectSuccess(await mgmt.identities.delete(b.identity.id));
    await adminGone(b.sessionId);
  });
});

describe('GET /current-api-session/service-updates', () => {
  it('answers lastChangeAt, stable while nothing relevant changes', async () => {
    const d = await dialer();
    const read = async () => {
      const res = await d.api.serviceUpdates();
      expectSuccess(res);
      return res.body.data.lastChangeAt as string;
    };
    const first = await read();
    expect(first).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Irrelevant: another identity, a service nobody is granted, a router policy of others.
    await net.identity(['someone-else']);
    await net.service([`${d.tag}-unrelated`]);
    // A relevant change of another identity, processed after the ones above: once it shows, they were processed too.
    const other = await dialer();
    const otherBefore = (await other.api.serviceUpdates()).body.data.lastChangeAt as string;
    await new Promise((r) => setTimeout(r, 5));
    expectSuccess(await mgmt.call('DELETE', `/service-policies/${other.policyId}`));
    await eventually(() => other.api.serviceUpdates(), (r) => r.body?.data?.lastChangeAt > otherBefore, 'the other identity’s change to be processed');
    expect(await read()).toBe(first);
  });

  it('moves when a policy grants the identity a new service', async () => {
    const d = await dialer();
    const before = (await d.api.serviceUpdates()).body.data.lastChangeAt as string;
    await new Promise((r) => setTimeout(r, 5));
    const extra = await net.service([`${d.tag}-extra`]);
    await net.servicePolicy('Bind', [`#${d.tag}-u`], [`@${extra}`]);
    await eventually(() => d.api.serviceUpdates(), (r) => r.body?.data?.lastChangeAt > before, 'lastChangeAt to move');
  });

  it('moves when the identity’s posture data changes', async () => {
    const d = await dialer();
    const before = (await d.api.serviceUpdates()).body.data.lastChangeAt as string;
    await new Promise((r) => setTimeout(r, 5));
    expectSuccess(await d.api.postureResponse({ id: 'os', typeId: 'OS', type: 'Linux', version: '6.1.0' }), 201);
    await eventually(() => d.api.serviceUpdates(), (r) => r.body?.data?.lastChangeAt > before, 'lastChangeAt to move');
    // The same data again is no change.
    const after = (await d.api.serviceUpdates()).body.data.lastChangeAt as string;
    expectSuccess(await d.api.postureResponse({ id: 'os', typeId: 'OS', type: 'Linux', version: '6.1.0' }), 201);
    const probe = await dialer();
    const probeBefore = (await probe.api.serviceUpdates()).body.data.lastChangeAt as string;
    await new Promise((r) => setTimeout(r, 5));
    expectSuccess(await probe.api.postureResponse({ id: 'os', typeId: 'OS', type: 'Linux', version: '1.0.0' }), 201);
    await eventually(() => probe.api.serviceUpdates(), (r) => r.body?.data?.lastChangeAt > probeBefore, 'the probe’s change to be processed');
    expect((await d.api.serviceUpdates()).body.data.lastChangeAt).toBe(after);
  });
});
