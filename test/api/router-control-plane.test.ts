// Edge routers on the control channel: hello, edge sync, presence on both APIs, and the refusals.
import { CtrlHeader, EdgeContentType, edgeCtrlPb, encodeFrame, routerHelloMessage } from '@ziti/channel';
import type { EdgeApi } from '../support/clients.js';
import { useController } from '../support/controller.js';
import type { RouterDouble } from '../support/router-double.js';
import { type RouterIdentity, enrollRouter } from '../support/router-enroll.js';
import { connectRouter, edgeRouter, enrolledRouter, fabricGet, poll } from '../support/router-fixtures.js';
import { foreignIdentity, hostileFrames, rawCtrlConnection, readUntilClosed } from '../support/router-hostile.js';

const ctl = useController();
let mgmt: EdgeApi;
let first: RouterIdentity;
let firstDouble: RouterDouble;
const edgePort = 31_022;

const host = () => ({ host: '127.0.0.1', port: ctl().running.routerCtrlPort });

/** A connection attempt the controller refuses: the TLS handshake or the hello fails, or the socket closes. */
async function expectRefusedConnect(attempt: () => Promise<RouterDouble>): Promise<void> {
  let double: RouterDouble | undefined;
  try {
    double = await attempt();
  } catch {
    return;
  }
  const closed = await poll(() => double!.channel.closed, 5_000);
  await double.close();
  expect(closed).toBe(true);
}

/** The first router is still online and its channel open. */
async function expectFirstUnaffected(): Promise<void> {
  expect(firstDouble.channel.closed).toBe(false);
  expect(await edgeRouter(mgmt, first.routerId)).toMatchObject({ isOnline: true });
}

beforeAll(async () => {
  mgmt = await ctl().adminSession();
  first = await enrolledRouter(mgmt, `er-cp-first-${Date.now()}`);
}, 60_000);
afterAll(async () => firstDouble?.close());

describe('an enrolled edge router connects', () => {
  it('gets its hello accepted, the edge sync, and shows online with its listeners on both APIs', async () => {
    firstDouble = await connectRouter(ctl(), first, { hostname: 'er-first.local', edgeListeners: [{ advertise: `127.0.0.1:${edgePort}` }] });
    expect(firstDouble.hello.result.headers.get(4)?.length ?? 0).toBeGreaterThan(0);
    expect(firstDouble.hello.controllerVersion).toBeDefined();
    const caps = firstDouble.hello.result.headers.get(CtrlHeader.Capabilities)!;
    expect(caps[0]! & 0x40).toBe(0x40);
    const serverHello = await firstDouble.waitFor(EdgeContentType.ServerHello);
    expect(edgeCtrlPb.ServerHello.decode(serverHello.body).version).toBeTruthy();

    const synced = await poll(async () => {
      const r = await edgeRouter(mgmt, first.routerId);
      return r.isOnline === true && r.syncStatus === 'SYNC_DONE' ? r : undefined;
    });
    expect(synced).toMatchObject({ isOnline: true, syncStatus: 'SYNC_DONE', hostname: 'er-first.local', supportedProtocols: { tls: `tls://127.0.0.1:${edgePort}` } });
    const routers = (await fabricGet(ctl(), mgmt, '/routers')) as { id: string; connected: boolean }[];
    expect(routers.find((r) => r.id === first.routerId)).toMatchObject({ connected: true });
  });

  it('goes offline on both APIs when it closes', async () => {
    const other = await enrolledRouter(mgmt, `er-cp-close-${Date.now()}`);
    const d = await connectRouter(ctl(), other);
    expect(await poll(async () => (await edgeRouter(mgmt, other.routerId)).isOnline === true)).toBe(true);
    await d.close();
    expect(await poll(async () => (await edgeRouter(mgmt, other.routerId)).isOnline === false)).toBe(true);
    const routers = (await fabricGet(ctl(), mgmt, '/routers')) as { id: string; connected: boolean }[];
    expect(routers.find((r) => r.id === other.routerId)).toMatchObject({ connected: false });
    await expectFirstUnaffected();
  });
});

describe('refusals close the connection and affect no other router', () => {
  it('refuses a connection without a client certificate', async () => {
    let socket: Awaited<ReturnType<typeof rawCtrlConnection>>;
    try {
      socket = await rawCtrlConnection(host());
    } catch {
      return expectFirstUnaffected();
    }
    socket.write(encodeFrame(routerHelloMessage({ routerId: first.routerId })));
    const r = await readUntilClosed(socket, 5_000);
    expect(r.closed).toBe(true);
    expect(r.bytes.length).toBe(0);
    await expectFirstUnaffected();
  });

  it('refuses a certificate from a foreign CA naming an enrolled router', async () => {
    const foreign = foreignIdentity(first.routerId);
    await expectRefusedConnect(() => connectRouter(ctl(), { ...first, certPem: foreign.certPem, keyPem: foreign.keyPem }));
    await expectFirstUnaffected();
  });

  it('refuses a router created but not enrolled (another router’s certificate: fingerprint mismatch)', async () => {
    const name = `er-cp-unenrolled-${Date.now()}`;
    const created = await mgmt.call('POST', '/edge-routers', { name, isTunnelerEnabled: false });
    const unenrolledId = created.body.data.id as string;
    await expectRefusedConnect(() => connectRouter(ctl(), { ...first, routerId: unenrolledId }));
    expect(await edgeRouter(mgmt, unenrolledId)).toMatchObject({ isOnline: false });
    await expectFirstUnaffected();
  });

  it('refuses a disabled router, and disconnects a connected one when it is disabled', async () => {
    const r = await enrolledRouter(mgmt, `er-cp-disabled-${Date.now()}`);
    const d = await connectRouter(ctl(), r);
    expect(await poll(async () => (await edgeRouter(mgmt, r.routerId)).isOnline === true)).toBe(true);
    expect((await mgmt.call('PATCH', `/edge-routers/${r.routerId}`, { disabled: true })).status).toBe(200);
    expect(await poll(() => d.channel.closed)).toBe(true);
    expect(await poll(async () => (await edgeRouter(mgmt, r.routerId)).isOnline === false)).toBe(true);
    await d.close();
    await expectRefusedConnect(() => connectRouter(ctl(), r));
    expect(await edgeRouter(mgmt, r.routerId)).toMatchObject({ isOnline: false });
    await expectFirstUnaffected();
  });

  it('closes connections that send garbage, a bad magic, absurd lengths or a non-hello first frame', async () => {
    for (const frame of [hostileFrames.garbage(), hostileFrames.badMagic(), hostileFrames.absurdBodyLength(), hostileFrames.negativeHeaderLength(), hostileFrames.headerOverrun(), hostileFrames.notAHello()]) {
      const s = await rawCtrlConnection({ ...host(), certPem: first.certPem, keyPem: first.keyPem });
      s.write(frame);
      expect((await readUntilClosed(s, 10_000)).closed).toBe(true);
    }
    await expectFirstUnaffected();
  });

  it('a second connection of the same router replaces the first', async () => {
    const r = await enrolledRouter(mgmt, `er-cp-twice-${Date.now()}`);
    const a = await connectRouter(ctl(), r);
    expect(await poll(async () => (await edgeRouter(mgmt, r.routerId)).isOnline === true)).toBe(true);
    const b = await connectRouter(ctl(), r);
    expect(await poll(() => a.channel.closed)).toBe(true);
    expect(b.channel.closed).toBe(false);
    await b.waitFor(EdgeContentType.ServerHello);
    expect(await poll(async () => (await edgeRouter(mgmt, r.routerId)).isOnline === true)).toBe(true);
    await a.close();
    await b.close();
    await expectFirstUnaffected();
  });

  it('re-enrolling a router disconnects it and refuses its old certificate until it enrolls again; deleting one disconnects it', async () => {
    const r = await enrolledRouter(mgmt, `er-cp-reenroll-${Date.now()}`);
    const d = await connectRouter(ctl(), r);
    expect(await poll(async () => (await edgeRouter(mgmt, r.routerId)).isOnline === true)).toBe(true);
    expect((await mgmt.call('POST', `/edge-routers/${r.routerId}/re-enroll`)).status).toBe(200);
    expect(await poll(() => d.channel.closed)).toBe(true);
    await d.close();
    await expectRefusedConnect(() => connectRouter(ctl(), r));
    const jwt = (await mgmt.call('GET', `/edge-routers/${r.routerId}`)).body.data.enrollmentJwt as string;
    const again = await enrollRouter(jwt);
    const d2 = await connectRouter(ctl(), again);
    expect(await poll(async () => (await edgeRouter(mgmt, r.routerId)).isOnline === true)).toBe(true);
    expect((await mgmt.call('DELETE', `/edge-routers/${r.routerId}`)).status).toBe(200);
    expect(await poll(() => d2.channel.closed)).toBe(true);
    await d2.close();
    await expectRefusedConnect(() => connectRouter(ctl(), again));
    await expectFirstUnaffected();
  });
});
