// An edge router's data model, legacy API session pushes, terminators and single-router circuits.
import { randomBytes, randomUUID } from 'node:crypto';
import { EdgeErrorCode, ctrlPb, edgeCtrlPb } from '@ziti/channel';
import { auth, type EdgeApi } from '../support/clients.js';
import { networkBuilder, sessionClients } from '../support/clients-session.js';
import { useController } from '../support/controller.js';
import type { RouterDouble } from '../support/router-double.js';
import { connectRouter, edgeRouter, enrolledRouter, fabricGet, poll } from '../support/router-fixtures.js';

const ctl = useController();
let mgmt: EdgeApi;
let net: ReturnType<typeof networkBuilder>;
let double: RouterDouble;
let tag: string;
let serviceId: string;
let user: { id: string; token: string; api: ReturnType<typeof sessionClients> };

const events = (d: RouterDouble): edgeCtrlPb.DataState_Event[] => [...d.rdm.dataStates.flatMap((s) => s.events), ...d.rdm.changeSets.flatMap((c) => c.changes)];

beforeAll(async () => {
  mgmt = await ctl().adminSession();
  net = networkBuilder(mgmt);
  tag = net.unique('t');
  const identity = await net.identity([`${tag}-users`]);
  serviceId = await net.service([`${tag}-svc`]);
  await net.servicePolicy('Bind', [`@${identity.id}`], [`@${serviceId}`]);
  await net.servicePolicy('Dial', [`@${identity.id}`], [`@${serviceId}`]);
  const router = await enrolledRouter(mgmt, `er-dc-${Date.now()}`, [`${tag}-routers`]);
  await net.edgeRouterPolicy([`#${tag}-users`], [`#${tag}-routers`]);
  await net.serviceEdgeRouterPolicy([`#${tag}-svc`], [`#${tag}-routers`]);
  double = await connectRouter(ctl(), router);
  await poll(async () => (await edgeRouter(mgmt, router.routerId)).syncStatus === 'SYNC_DONE');
  const login = await auth.login(ctl().http, identity.username, identity.password, 'client');
  if (!login.token) throw new Error(`login failed: ${login.res.text}`);
  user = { id: identity.id, token: login.token, api: sessionClients(login.session) };
}, 90_000);
afterAll(async () => double?.close());

describe('router data model', () => {
  it('the first DataState carries the JWT validation keys, and the service created beforehand is in the model', async () => {
    const ok = await poll(() => double.rdm.dataStates.length > 0);
    expect(ok).toBe(true);
    const state = double.rdm.dataStates[0]!;
    expect(state.events.some((e) => e.publicKey?.usages.includes(edgeCtrlPb.DataState_PublicKey_Usage.JWTValidation))).toBe(true);
    // In the full state, or in a change set right after it when the service's change was still on its way.
    expect(await poll(() => events(double).some((e) => e.service?.id === serviceId))).toBe(true);
  });

  it('a service created afterwards arrives in a ChangeSet with a higher index', async () => {
    const endIndex = double.rdm.dataStates[0]!.endIndex;
    const later = await net.service([`${tag}-later`]);
    const cs = await poll(() => double.rdm.changeSets.find((c) => c.changes.some((e) => e.service?.id === later)));
    expect(cs).toBeDefined();
    expect(cs!.index).toBeGreaterThan(endIndex);
    expect(events(double).filter((e) => e.service?.id === later).length).toBeGreaterThan(0);
  });

  it('answers a subscription sent right after the hello (as a real router sends it), then sends it the changes', async () => {
    const eager = await connectRouter(ctl(), await enrolledRouter(mgmt, `er-dc-eager-${Date.now()}`), { subscribe: false });
    await eager.subscribe({ currentIndex: 0 });
    expect(await poll(() => eager.rdm.dataStates.length > 0)).toBe(true);
    const later = await net.service([`${tag}-eager`]);
    expect(await poll(() => eager.rdm.changeSets.some((c) => c.changes.some((e) => e.service?.id === later)))).toBe(true);
    await eager.close();
  });

  it('an identity created afterwards, and the policy that selects it, arrive in change sets', async () => {
    const other = await net.identity([`${tag}-users`, `${tag}-late`]);
    const policy = await net.servicePolicy('Dial', [`#${tag}-late`], [`@${serviceId}`]);
    const found = await poll(() => {
      const all = double.rdm.changeSets.flatMap((c) => c.changes);
      const identity = all.some((e) => e.identity?.id === other.id);
      const link = all.some((e) => e.servicePolicyChange?.policyId === policy && e.servicePolicyChange.add && e.servicePolicyChange.relatedEntityIds.includes(other.id));
      return identity && link;
    });
    expect(found).toBe(true);
  });

  it('a revocation (here of an identity, as POST /revocations writes it) arrives in a change set with its type and cutoff; one that exists at subscription time is in the full state', async () => {
    const revoked = await net.identity([`${tag}-revoked`]);
    const before = Date.now();
    expect((await mgmt.call('POST', '/revocations', { id: revoked.id, type: 'IDENTITY' })).status).toBe(201);
    const ev = await poll(() => double.rdm.changeSets.flatMap((c) => c.changes).find((e) => e.revocation?.id === revoked.id));
    expect(ev?.revocation).toMatchObject({ id: revoked.id, type: 'IDENTITY' });
    expect(ev!.revocation!.issuedBefore!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(ev!.revocation!.ExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 3600_000);

    const late = await connectRouter(ctl(), await enrolledRouter(mgmt, `er-dc-rev-${Date.now()}`));
    try {
      expect(await poll(() => late.rdm.dataStates.some((s) => s.events.some((e) => e.revocation?.id === revoked.id && e.revocation.type === 'IDENTITY')))).toBe(true);
    } finally {
      await late.close();
    }
  });

  it("an identity's hosting precedences and costs and appData, set through the management API, arrive in a change set", async () => {
    const patch = {
      defaultHostingPrecedence: 'required',
      defaultHostingCost: 42,
      serviceHostingPrecedences: { [serviceId]: 'failed' },
      serviceHostingCosts: { [serviceId]: 300 },
      appData: { site: `${tag}-lab` },
    };
    expect((await mgmt.call('PATCH', `/identities/${user.id}`, patch)).status).toBe(200);
    const changed = await poll(() =>
      double.rdm.changeSets.flatMap((c) => c.changes).find((e) => e.identity?.id === user.id && e.identity.defaultHostingCost === 42),
    );
    expect(changed?.identity).toMatchObject({
      id: user.id,
      defaultHostingPrecedence: ctrlPb.TerminatorPrecedence.Required,
      defaultHostingCost: 42,
      serviceHostingPrecedences: { [serviceId]: ctrlPb.TerminatorPrecedence.Failed },
      serviceHostingCosts: { [serviceId]: 300 },
    });
    expect(JSON.parse(changed!.identity!.appDataJson.toString())).toEqual({ site: `${tag}-lab` });
  });
});

describe('legacy API sessions, terminators and circuits', () => {
  let terminatorAddress: string;

  it('pushes the client login as ApiSessionAdded with its token', async () => {
    const s = await poll(() => double.apiSessions.get(user.token));
    expect(s).toMatchObject({ token: user.token, identityId: user.id });
  });

  it('creates a terminator for a Bind session and lists it with the router', async () => {
    const bind = await user.api.createSession(serviceId, 'Bind');
    expect(bind.status).toBe(201);
    terminatorAddress = randomUUID();
    const r = await double.createTerminator({ address: terminatorAddress, sessionToken: bind.body.data.token as string, apiSessionToken: user.token });
    expect(r).toMatchObject({ terminatorId: terminatorAddress, result: 0 });
    const list = (await mgmt.call('GET', '/terminators?limit=100')).body.data as { id: string; router?: { id: string }; service?: { id: string } }[];
    const t = list.find((x) => x.id === terminatorAddress);
    expect(t).toMatchObject({ router: { id: double.routerId }, service: { id: serviceId } });
    // What `ziti ops verify traffic` waits on: the service's terminators by the service's name.
    const service = (await mgmt.call('GET', `/services/${serviceId}`)).body.data as { name: string };
    const byName = await mgmt.call('GET', `/terminators?filter=${encodeURIComponent(`service.name = "${service.name}"`)}`);
    expect(byName.status).toBe(200);
    expect((byName.body.data as { id: string }[]).map((x) => x.id)).toEqual([terminatorAddress]);
  });

  it('refuses a Dial circuit without the initiator public key (service requires encryption), routes one with it, lists it, and unroutes it on a fault', async () => {
    const dial = await user.api.createSession(serviceId, 'Dial');
    expect(dial.status).toBe(201);
    double.routeAnswer = () => ({ success: true });
    const dialToken = dial.body.data.token as string;
    const plain = await double.createCircuit({ sessionToken: dialToken, apiSessionToken: user.token });
    expect(plain).toMatchObject({ ok: false, errorCode: EdgeErrorCode.EncryptionDataMissing });
    const c = await double.createCircuit({ sessionToken: dialToken, apiSessionToken: user.token, peerData: new Map([[1003, randomBytes(32)]]) });
    expect(c.ok ? 'ok' : `${String(c.errorCode)} ${c.errorMessage}`).toBe('ok');
    if (!c.ok) return;
    expect(c.circuitId).not.toBe('');
    expect(double.routes.some((r) => r.circuitId === c.circuitId)).toBe(true);
    // The circuit's row is written beside the answer, not before it: listed within moments.
    const listed = await poll(async () => ((await fabricGet(ctl(), mgmt, '/circuits')) as { id: string }[]).some((x) => x.id === c.circuitId));
    expect(listed).toBe(true);

    await double.sendFault(0, c.circuitId);
    const unrouted = await poll(() => double.unroutes.some((u) => u.circuitId === c.circuitId));
    expect(unrouted).toBe(true);
    const after = await poll(async () => ((await fabricGet(ctl(), mgmt, '/circuits')) as unknown[]).length === 0);
    expect(after).toBe(true);
  });

  it('refuses a dial with a Bind session token with an edge error code', async () => {
    const bind = await user.api.createSession(serviceId, 'Bind');
    const c = await double.createCircuit({ sessionToken: bind.body.data.token as string, apiSessionToken: user.token });
    expect(c.ok).toBe(false);
    if (c.ok) return;
    expect([EdgeErrorCode.WrongSessionType, EdgeErrorCode.InvalidSession]).toContain(c.errorCode);
    expect(double.channel.closed).toBe(false);
  });
});
