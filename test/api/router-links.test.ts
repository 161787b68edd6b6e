// Routers joined by links: peer state, link verification and reports, multi-hop circuits, link faults.
import { X509Certificate, randomBytes, randomUUID } from 'node:crypto';
import { CtrlContentType, EdgeErrorCode, ctrlPb, newMessage } from '@ziti/channel';
import { auth, type EdgeApi } from '../support/clients.js';
import { networkBuilder, sessionClients } from '../support/clients-session.js';
import { useController } from '../support/controller.js';
import type { RouterDouble } from '../support/router-double.js';
import type { RouterIdentity } from '../support/router-enroll.js';
import { connectRouter, enrolledRouter, fabricGet, poll } from '../support/router-fixtures.js';

const ctl = useController();
const SMART_REROUTE_ATTEMPT = 99969996;

let mgmt: EdgeApi;
let tag: string;
let serviceId: string;
let user: { token: string; api: ReturnType<typeof sessionClients> };
const ids: Record<'a' | 'b' | 'c', RouterIdentity> = {} as never;
const names: Record<'a' | 'b' | 'c', string> = {} as never;
const dbl: Partial<Record<'a' | 'b' | 'c', RouterDouble>> = {};

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint.replace(/:/g, '').toLowerCase();
const listener = (port: number): ctrlPb.Listener => ({ address: `tls:127.0.0.1:${port}`, protocol: 'tls', costTags: [], groups: ['default'], localBinding: '' });
const connect = (k: 'a' | 'b' | 'c', port: number) => connectRouter(ctl(), ids[k], { linkListeners: [listener(port)] });
const healthyPeers = (d: RouterDouble) => new Set(d.peerStateChanges.flatMap((p) => p.changes.filter((c) => c.state === ctrlPb.PeerState.Healthy).map((c) => c.id)));
type LinkRow = { id: string; state: string; cost: number; staticCost: number; sourceRouter: { id: string }; destRouter: { id: string }; protocol: string; iteration: number };
const links = async () => (await fabricGet(ctl(), mgmt, '/links?limit=500')) as LinkRow[];
type Ref = { id: string; name: string; _links: Record<string, { href: string }> };
const circuits = async () => (await fabricGet(ctl(), mgmt, '/circuits?limit=500')) as { id: string; path: { nodes: Ref[]; links: Ref[] }; service: Ref; terminator: Ref }[];

beforeAll(async () => {
  mgmt = await ctl().adminSession();
  const net = networkBuilder(mgmt);
  tag = net.unique('links');
  const identity = await net.identity([`${tag}-users`]);
  serviceId = await net.service([`${tag}-svc`]);
  await net.servicePolicy('Bind', [`@${identity.id}`], [`@${serviceId}`]);
  await net.servicePolicy('Dial', [`@${identity.id}`], [`@${serviceId}`]);
  for (const k of ['a', 'b', 'c'] as const) ids[k] = await enrolledRouter(mgmt, (names[k] = `er-link-${k}-${Date.now()}`), [`${tag}-routers`]);
  await net.edgeRouterPolicy([`#${tag}-users`], [`#${tag}-routers`]);
  await net.serviceEdgeRouterPolicy([`#${tag}-svc`], [`#${tag}-routers`]);
  const login = await auth.login(ctl().http, identity.username, identity.password, 'client');
  if (!login.token) throw new Error(`login failed: ${login.res.text}`);
  user = { token: login.token, api: sessionClients(login.session) };
}, 90_000);
afterAll(async () => {
  for (const d of Object.values(dbl)) await d?.close();
});

describe('peers and links', () => {
  it('a router learns the connected routers and their link listeners; the others learn of it', async () => {
    dbl.a = await connect('a', 14001);
    dbl.b = await connect('b', 14002);
    // b gets a (already connected) at once; a is told of b when it connects
    expect(await poll(() => healthyPeers(dbl.b!).has(ids.a.routerId))).toBe(true);
    expect(await poll(() => healthyPeers(dbl.a!).has(ids.b.routerId))).toBe(true);
    const ofB = dbl.a!.peerStateChanges.flatMap((p) => p.changes).find((c) => c.id === ids.b.routerId)!;
    expect(ofB.listeners).toEqual([listener(14002)]);
    expect(ofB.version).toBe('v2.0.3');
  });

  it('answers VerifyRouter by the enrolled fingerprint', async () => {
    expect(await dbl.b!.verifyRouter(ids.a.routerId, [fingerprint(ids.a.certPem)])).toEqual({ success: true, message: 'router verified' });
    const wrong = await dbl.b!.verifyRouter(ids.a.routerId, [fingerprint(ids.b.certPem)]);
    expect(wrong.success).toBe(false);
    expect((await dbl.b!.verifyRouter('no-such-router', ['00'])).success).toBe(false);
  });

  it('lists the links routers report, with OpenZiti\'s initial cost; a full refresh removes what it no longer names', async () => {
    const stale = randomUUID();
    await dbl.a!.reportLinks([{ id: stale, destRouterId: ids.b.routerId, linkProtocol: 'tls', dialAddress: 'tls:127.0.0.1:14002', iteration: 1 }]);
    expect(await poll(async () => (await links()).some((l) => l.id === stale))).toBe(true);
    const ab = randomUUID();
    await dbl.a!.reportLinks([{ id: ab, destRouterId: ids.b.routerId, linkProtocol: 'tls', dialAddress: 'tls:127.0.0.1:14002', iteration: 1 }], true);
    expect(await poll(async () => (await links()).some((l) => l.id === ab) && !(await links()).some((l) => l.id === stale))).toBe(true);
    const row = (await links()).find((l) => l.id === ab)!;
    expect(row).toMatchObject({ state: 'Connected', staticCost: 1, cost: 130_001, protocol: 'tls', iteration: 1, sourceRouter: { id: ids.a.routerId }, destRouter: { id: ids.b.routerId } });
    const filtered = (await fabricGet(ctl(), mgmt, `/links?filter=${encodeURIComponent(`sourceRouter = "${ids.a.routerId}"`)}`)) as LinkRow[];
    expect(filtered.map((l) => l.id)).toEqual([ab]);
  });
});

describe('hostile link messages', () => {
  it('drops garbage RouterLinks, VerifyRouter and Fault bodies and absurd reports; the channel goes on and the links are as they were', async () => {
    const before = (await links()).map((l) => l.id).sort();
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x99]);
    await dbl.a!.send(newMessage(CtrlContentType.RouterLinks, garbage));
    await dbl.a!.send(newMessage(CtrlContentType.Fault, garbage));
    const verify = await dbl.a!.channel.request(newMessage(CtrlContentType.VerifyRouter, garbage), { timeoutMs: 5_000 });
    expect(verify.contentType).toBe(2);
    // a self link, an empty id, an id past its bound: none is a link
    await dbl.a!.reportLinks([
      { id: randomUUID(), destRouterId: ids.a.routerId, iteration: 1 },
      { id: '', destRouterId: ids.b.routerId, iteration: 1 },
      { id: 'x'.repeat(300), destRouterId: ids.b.routerId, iteration: 1 },
    ]);
    // the channel still answers, and nothing changed
    expect(await dbl.a!.verifyRouter(ids.b.routerId, [fingerprint(ids.b.certPem)])).toMatchObject({ success: true });
    expect((await links()).map((l) => l.id).sort()).toEqual(before);
  });
});

describe('circuits across links', () => {
  let circuitId: string;
  let abLink: string;

  it('routes a circuit dialed on one router to a terminator on another: a Route to each, with the link between them', async () => {
    abLink = (await links()).find((l) => l.sourceRouter.id === ids.a.routerId && l.destRouter.id === ids.b.routerId)!.id;
    const bind = await user.api.createSession(serviceId, 'Bind');
    expect(bind.status).toBe(201);
    const address = randomUUID();
    expect(await dbl.b!.createTerminator({ address, sessionToken: bind.body.data.token as string, apiSessionToken: user.token })).toMatchObject({ result: 0 });
    const dial = await user.api.createSession(serviceId, 'Dial');
    expect(dial.status).toBe(201);
    const c = await dbl.a!.createCircuit({ sessionToken: dial.body.data.token as string, apiSessionToken: user.token, peerData: new Map([[1003, randomBytes(32)]]) });
    expect(c.ok ? 'ok' : `${String(c.errorCode)} ${c.errorMessage}`).toBe('ok');
    if (!c.ok) return;
    circuitId = c.circuitId;
    const ra = dbl.a!.routes.find((r) => r.circuitId === circuitId)!;
    const rb = dbl.b!.routes.find((r) => r.circuitId === circuitId)!;
    expect(ra.egress).toBeUndefined();
    expect(ra.forwards).toEqual([
      { srcAddress: c.address, dstAddress: abLink, dstType: ctrlPb.DestType.Link },
      { srcAddress: abLink, dstAddress: c.address, dstType: ctrlPb.DestType.Start },
    ]);
    expect(rb.egress).toMatchObject({ binding: 'edge', destination: address });
    expect(rb.forwards).toEqual([
      { srcAddress: rb.egress!.address, dstAddress: abLink, dstType: ctrlPb.DestType.Link },
      { srcAddress: abLink, dstAddress: rb.egress!.address, dstType: ctrlPb.DestType.End },
    ]);
    const listed = await poll(async () => (await circuits()).find((x) => x.id === circuitId));
    expect(listed?.path.nodes.map((n) => n.id)).toEqual([ids.a.routerId, ids.b.routerId]);
    expect(listed?.path.links.map((l) => l.id)).toEqual([abLink]);
  });

  it('lists the circuit as OpenZiti does: routers and the service by name (with their terminators link), the link and the terminator by id', async () => {
    const listed = (await circuits()).find((x) => x.id === circuitId)!;
    const serviceName = (await mgmt.call('GET', `/services/${serviceId}`)).body.data.name as string;
    expect(listed.path.nodes).toEqual([ids.a, ids.b].map((r, i) => ({
      _links: { self: { href: `./routers/${r.routerId}` }, terminators: { href: `./routers/${r.routerId}/terminators` } },
      entity: 'routers',
      id: r.routerId,
      name: [names.a, names.b][i],
    })));
    expect(listed.path.links).toEqual([{ _links: { self: { href: `./links/${abLink}` } }, entity: 'links', id: abLink, name: abLink }]);
    expect(listed.service).toEqual({ _links: { self: { href: `./services/${serviceId}` }, terminators: { href: `./services/${serviceId}/terminators` } }, entity: 'services', id: serviceId, name: serviceName });
    expect(listed.terminator).toMatchObject({ entity: 'terminators', name: listed.terminator.id });
  });

  it('a link fault moves the circuit to another path (a third router), tells the link\'s other router, and the link goes', async () => {
    dbl.c = await connect('c', 14003);
    const ac = randomUUID();
    const cb = randomUUID();
    await dbl.a!.reportLinks([{ id: ac, destRouterId: ids.c.routerId, linkProtocol: 'tls', dialAddress: 'tls:127.0.0.1:14003', iteration: 1 }]);
    await dbl.c.reportLinks([{ id: cb, destRouterId: ids.b.routerId, linkProtocol: 'tls', dialAddress: 'tls:127.0.0.1:14002', iteration: 1 }]);
    expect(await poll(async () => (await links()).filter((l) => l.id === ac || l.id === cb).length === 2)).toBe(true);

    await dbl.a!.sendFault(ctrlPb.FaultSubject.LinkFault, abLink, 1);
    expect(await poll(() => dbl.b!.faults.some((f) => f.subject === ctrlPb.FaultSubject.LinkFault && f.id === abLink))).toBe(true);
    expect(await poll(async () => !(await links()).some((l) => l.id === abLink))).toBe(true);
    const rerouted = await poll(() => dbl.c!.routes.find((r) => r.circuitId === circuitId));
    expect(rerouted?.attempt).toBe(SMART_REROUTE_ATTEMPT);
    expect(rerouted?.forwards.map((f) => [f.srcAddress, f.dstAddress])).toEqual([[ac, cb], [cb, ac]]);
    const again = await poll(async () => (await circuits()).find((x) => x.id === circuitId && x.path.nodes.length === 3));
    expect(again?.path.nodes.map((n) => n.id)).toEqual([ids.a.routerId, ids.c.routerId, ids.b.routerId]);
    expect(again?.path.links.map((l) => l.id)).toEqual([ac, cb]);
  });

  it('refuses a bind and a dial through a router the identity may not use for the service (no edge router policy reaches it)', async () => {
    const outsider = await connectRouter(ctl(), await enrolledRouter(mgmt, `er-link-out-${Date.now()}`));
    try {
      const bind = await user.api.createSession(serviceId, 'Bind');
      const t = await outsider.createTerminator({ address: randomUUID(), sessionToken: bind.body.data.token as string, apiSessionToken: user.token });
      expect(t.result).not.toBe(0);
      const dial = await user.api.createSession(serviceId, 'Dial');
      const c = await outsider.createCircuit({ sessionToken: dial.body.data.token as string, apiSessionToken: user.token, peerData: new Map([[1003, randomBytes(32)]]) });
      expect(c).toMatchObject({ ok: false, errorCode: EdgeErrorCode.InvalidEdgeRouterForSession });
    } finally {
      await outsider.close();
    }
  });

  it('when no path is left the circuit ends: its routers are unrouted', async () => {
    const ac = (await links()).find((l) => l.sourceRouter.id === ids.a.routerId && l.destRouter.id === ids.c.routerId)!.id;
    await dbl.c!.sendFault(ctrlPb.FaultSubject.LinkFault, ac, 0);
    expect(await poll(() => dbl.a!.unroutes.some((u) => u.circuitId === circuitId) && dbl.b!.unroutes.some((u) => u.circuitId === circuitId))).toBe(true);
    expect(await poll(async () => !(await circuits()).some((x) => x.id === circuitId))).toBe(true);
  });

  it('a router that goes is unhealthy to its peers, and the links it reported go with it', async () => {
    const cLinks = (await links()).filter((l) => l.sourceRouter.id === ids.c.routerId).map((l) => l.id);
    expect(cLinks.length).toBeGreaterThan(0);
    await dbl.c!.close();
    const unhealthy = (d: RouterDouble) => d.peerStateChanges.some((p) => p.changes.some((c) => c.id === ids.c.routerId && c.state === ctrlPb.PeerState.Unhealthy));
    expect(await poll(() => unhealthy(dbl.a!) && unhealthy(dbl.b!))).toBe(true);
    expect(await poll(async () => !(await links()).some((l) => cLinks.includes(l.id)))).toBe(true);
  });
});
