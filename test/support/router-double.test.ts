// The router double against a fake controller listener built on @ziti/channel (no controller).
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import tls from 'node:tls';
import {
  CTRL_ALPN,
  Channel,
  ContentType,
  CtrlContentType,
  CtrlHeader,
  CtrlMsgHeader,
  EdgeContentType,
  EdgeHeader,
  type Message,
  RouteErrorCode,
  type RouterHello,
  SINGLE_SOCKET_CONTROLLER_CAPABILITIES,
  acceptHello,
  ctrlPb,
  edgeCtrlPb,
  encodeBool,
  encodeCapabilities,
  encodeString,
  encodeUint32,
  getBool,
  getByte,
  getString,
  getStringSlice,
  getUint32,
  getUint64,
  newMessage,
} from '@ziti/channel';
import { certPem, issueCertificate, nameDer, spkiOf } from '@ziti/x509';
import { RouterDouble } from './router-double.js';
import { foreignIdentity, hostileFrames, rawCtrlConnection, readUntilClosed } from './router-hostile.js';

const day = 24 * 3600_000;
const window = { notBefore: new Date(Date.now() - day), notAfter: new Date(Date.now() + day) };
const newKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const pem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }).toString();
const rootKey = newKey();
const caPem = certPem(issueCertificate({ commonName: 'fake ctrl root', spkiDer: spkiOf(rootKey), selfKey: rootKey, kind: 'root', ...window }));
const issuer = { nameDer: nameDer('fake ctrl root'), privateKey: rootKey, spkiDer: spkiOf(rootKey) };
const serverKey = newKey();
const serverCert = certPem(issueCertificate({ commonName: 'ctrl', spkiDer: spkiOf(serverKey), issuer, kind: 'server', sans: { ip: ['127.0.0.1'] }, ...window }));
const routerKey = newKey();
const identity = {
  routerId: 'er-1',
  keyPem: pem(routerKey),
  certPem: certPem(issueCertificate({ commonName: 'er-1', spkiDer: spkiOf(routerKey), issuer, kind: 'client', ...window })),
  caPem,
};

/** A fake controller: accepts hellos, keeps each router's channel and what it received. */
let server: tls.Server;
let port: number;
const hellos: RouterHello[] = [];
const got: Message[] = [];
const refusals: string[] = [];
let ctrl: Channel | undefined;

beforeAll(async () => {
  server = tls.createServer({ cert: serverCert, key: pem(serverKey), ca: caPem, ALPNProtocols: [CTRL_ALPN], requestCert: true, rejectUnauthorized: false });
  server.on('secureConnection', (socket) => {
    acceptHello(socket, (h) => {
      if (!socket.authorized) return { accept: false, reason: `client certificate: ${String(socket.authorizationError ?? 'none')}`, silent: true };
      hellos.push(h);
      return { accept: true, controllerId: 'fake-ctrl', controllerVersion: 'v0.0.0|local|2020-01-01 01:01:01|linux|amd64', capabilities: encodeCapabilities(SINGLE_SOCKET_CONTROLLER_CAPABILITIES) };
    }).then(
      ({ remainder }) => {
        ctrl = new Channel(socket, { initialBytes: remainder, heartbeatIntervalMs: 0 });
        for (const t of [EdgeContentType.ClientHello, EdgeContentType.SubscribeToDataModelRequest, CtrlContentType.Fault, EdgeContentType.ApiSessionHeartbeat]) {
          ctrl.handle(t, (m) => void got.push(m));
        }
        ctrl.handle(EdgeContentType.CreateTerminatorV2Request, (m, ch) => {
          const req = edgeCtrlPb.CreateTerminatorV2Request.decode(m.body);
          const body = edgeCtrlPb.CreateTerminatorV2Response.encode({ terminatorId: req.address, result: 0, msg: '', errorCode: 0, retryHint: 0 }).finish();
          return ch.reply(m, newMessage(EdgeContentType.CreateTerminatorV2Response, Buffer.from(body)));
        });
        ctrl.handle(CtrlContentType.RemoveTerminatorsRequest, (m, ch) => {
          const ids = ctrlPb.RemoveTerminatorsRequest.decode(m.body).terminatorIds;
          return ch.reply(m, newMessage(ContentType.Result, `removed ${ids.join(',')}`, [[2, encodeBool(true)]]));
        });
        ctrl.handle(CtrlContentType.RouterInterfacesUpdate, (m, ch) => ch.reply(m, newMessage(ContentType.Result, '', [[2, encodeBool(true)]])));
        ctrl.handle(EdgeContentType.CreateCircuitV2Request, (m, ch) => {
          got.push(m);
          if (getString(m.headers, CtrlMsgHeader.CreateCircuitReqSessionToken) === 'bad') {
            return ch.reply(m, newMessage(EdgeContentType.Error, 'invalid session', [[EdgeHeader.ErrorCode, encodeUint32(3)]]));
          }
          return ch.reply(m, newMessage(EdgeContentType.CreateCircuitV2Response, undefined, [
            [CtrlMsgHeader.CreateCircuitRespCircuitId, encodeString('circ-1')],
            [CtrlMsgHeader.CreateCircuitRespAddress, encodeString('ingress-1')],
          ]));
        });
      },
      (err: { code?: string }) => refusals.push(String(err.code)),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as { port: number }).port;
});
afterAll(() => server.close());

describe('router double against a fake controller', () => {
  let router: RouterDouble;
  beforeAll(async () => {
    router = await RouterDouble.connect({
      identity,
      host: '127.0.0.1',
      port,
      hostname: 'er1.local',
      edgeListeners: [{ advertise: '127.0.0.1:3022' }],
      linkListeners: [{ address: 'tls:127.0.0.1:10080', protocol: 'tls', costTags: [], groups: ['default'], localBinding: '' }],
      heartbeatIntervalMs: 0,
    });
  });
  afterAll(() => router.close());

  it('sends the 2.x hello and reads the Result', () => {
    const h = hellos[0]!;
    expect(h).toMatchObject({ routerId: 'er-1', isGrouped: true, type: 'ctrl.default', isFirstGroupConnection: true, version: { version: 'v2.0.3' } });
    expect(h.capabilities).toEqual(Buffer.from([0x02]));
    expect(ctrlPb.Listeners.decode(h.listeners!).listeners[0]).toMatchObject({ address: 'tls:127.0.0.1:10080', protocol: 'tls', groups: ['default'] });
    expect(router.hello.controllerId).toBe('fake-ctrl');
    expect(router.hello.result.headers.get(CtrlHeader.Capabilities)).toEqual(Buffer.from([0x5e]));
  });

  it('answers ServerHello with ClientHello (reply, headers 1024/1025) and subscribes to the data model', async () => {
    const hello = newMessage(EdgeContentType.ServerHello, Buffer.from(edgeCtrlPb.ServerHello.encode({ version: 'v0.0.0', data: { instant: 'true' }, byteData: {} }).finish()));
    hello.headers.set(EdgeHeader.RouterDataModel, encodeBool(true));
    const reply = await ctrl!.request(hello, { timeoutMs: 5000 });
    expect(reply.contentType).toBe(EdgeContentType.ClientHello);
    expect(getBool(reply.headers, EdgeHeader.RouterDataModel)).toBe(true);
    expect(getUint64(reply.headers, EdgeHeader.RouterDataModelIndex)).toBe(0n);
    const ch = edgeCtrlPb.ClientHello.decode(reply.body);
    expect(ch).toMatchObject({ hostname: 'er1.local', protocols: ['tls:127.0.0.1:3022'] });
    expect(ch.listeners[0]!.advertise).toEqual({ value: 'tls:127.0.0.1:3022', protocol: 'tls', hostname: '127.0.0.1', port: 3022 });
    for (let i = 0; i < 100 && !got.some((m) => m.contentType === EdgeContentType.SubscribeToDataModelRequest); i++) await new Promise((r) => setTimeout(r, 20));
    const sub = edgeCtrlPb.SubscribeToDataModelRequest.decode(got.find((m) => m.contentType === EdgeContentType.SubscribeToDataModelRequest)!.body);
    expect(sub).toMatchObject({ currentIndex: 0, subscriptionDurationSeconds: 300, subscriptionId: router.rdm.subscriptionId });
  });

  it('records data states, change sets and legacy API sessions', async () => {
    const state = edgeCtrlPb.DataState.encode({ events: [{ action: 0, isSynthetic: false, publicKey: { data: Buffer.from('k'), kid: 'kid1', usages: [0], format: 0 } }], endIndex: 7, timelineId: 't1', caches: {} }).finish();
    await ctrl!.send(newMessage(EdgeContentType.DataState, Buffer.from(state), [[EdgeHeader.RouterDataModelSubscriptionId, encodeString(router.rdm.subscriptionId)]]));
    const cs = edgeCtrlPb.DataState_ChangeSet.encode({ index: 8, isSynthetic: false, changes: [], timestampId: '', previousIndex: 7 }).finish();
    await ctrl!.send(newMessage(EdgeContentType.DataStateChangeSet, Buffer.from(cs)));
    const added = edgeCtrlPb.ApiSessionAdded.encode({ isFullState: true, apiSessions: [{ token: 'tok-1', certFingerprints: ['ab'], id: 's1', identityId: 'i1' }] }).finish();
    await ctrl!.send(newMessage(EdgeContentType.ApiSessionAdded, Buffer.from(added), [[EdgeHeader.SyncStrategyType, encodeString('instant')]]));
    await ctrl!.send(newMessage(EdgeContentType.ApiSessionRemoved, Buffer.from(edgeCtrlPb.ApiSessionRemoved.encode({ tokens: [], ids: ['s1'] }).finish())));
    await router.waitFor(EdgeContentType.ApiSessionRemoved);
    expect(router.rdm.dataStates[0]).toMatchObject({ endIndex: 7, timelineId: 't1', events: [{ publicKey: { kid: 'kid1' } }] });
    expect(RouterDouble.isForSubscription(await router.waitFor(EdgeContentType.DataState), router.rdm.subscriptionId)).toBe(true);
    expect(router.rdm.changeSets[0]).toMatchObject({ index: 8, previousIndex: 7 });
    expect(router.apiSessionSyncs[0]).toMatchObject({ strategy: 'instant', added: { apiSessions: [{ token: 'tok-1' }] } });
    expect(router.apiSessions.size).toBe(0);
  });

  it('answers Route with a success or a chosen error code', async () => {
    const route = (circuitId: string) => newMessage(CtrlContentType.Route, Buffer.from(ctrlPb.Route.encode(ctrlPb.Route.fromPartial({ circuitId, attempt: 1 })).finish()));
    const ok = await ctrl!.request(route('c1'), { timeoutMs: 5000 });
    expect([ok.contentType, ok.body.toString(), getUint32(ok.headers, CtrlMsgHeader.RouteResultAttempt), getBool(ok.headers, CtrlMsgHeader.RouteResultSuccess)]).toEqual([1022, 'c1', 1, true]);
    router.routeAnswer = () => ({ success: false, errorCode: RouteErrorCode.ConnectionRefused, error: 'refused' });
    const bad = await ctrl!.request(route('c2'), { timeoutMs: 5000 });
    expect([bad.headers.has(CtrlMsgHeader.RouteResultSuccess), getByte(bad.headers, CtrlMsgHeader.RouteResultErrorCode), getString(bad.headers, CtrlMsgHeader.RouteResultError)]).toEqual([false, 4, 'refused']);
    expect(router.routes.map((r) => r.circuitId)).toEqual(['c1', 'c2']);
  });

  it('sends terminator, circuit, fault, heartbeat and interface messages and reads their answers', async () => {
    const t = await router.createTerminator({ sessionToken: 'bind-jwt', apiSessionToken: 'api', cost: 0 });
    expect(t.result).toBe(0);
    expect(await router.removeTerminators([t.terminatorId])).toEqual({ success: true, message: `removed ${t.terminatorId}` });
    expect(await router.updateInterfaces([{ name: 'eth0', addresses: ['10.0.0.1/24'] }])).toEqual({ success: true, message: '' });
    const c = await router.createCircuit({ sessionToken: 'dial-jwt', apiSessionToken: 'api', fingerprints: ['ff'], peerData: new Map([[1003, Buffer.from('pk')]]) });
    expect(c).toMatchObject({ ok: true, circuitId: 'circ-1', address: 'ingress-1' });
    const req = got.find((m) => m.contentType === EdgeContentType.CreateCircuitV2Request)!;
    expect([getString(req.headers, 11), getString(req.headers, 14), getStringSlice(req.headers, 12)]).toEqual(['dial-jwt', 'api', ['ff']]);
    expect(await router.createCircuit({ sessionToken: 'bad' })).toMatchObject({ ok: false, errorMessage: 'invalid session', errorCode: 3 });
    await router.sendFault(ctrlPb.FaultSubject.IngressFault, 'circ-1');
    await router.apiSessionHeartbeat(['tok-1']);
    for (let i = 0; i < 100 && !got.some((m) => m.contentType === EdgeContentType.ApiSessionHeartbeat); i++) await new Promise((r) => setTimeout(r, 20));
    expect(ctrlPb.Fault.decode(got.find((m) => m.contentType === CtrlContentType.Fault)!.body)).toMatchObject({ subject: 0, id: 'circ-1' });
    expect(edgeCtrlPb.ApiSessionHeartbeat.decode(got.find((m) => m.contentType === EdgeContentType.ApiSessionHeartbeat)!.body).tokens).toEqual(['tok-1']);
  });
});

describe('hostile peers against the fake controller', () => {
  it('a bad magic gets the unknown-version reply and a close; garbage, absurd lengths and a foreign CA get a close', async () => {
    const bad = await rawCtrlConnection({ host: '127.0.0.1', port, certPem: identity.certPem, keyPem: identity.keyPem });
    bad.write(hostileFrames.badMagic());
    const r = await readUntilClosed(bad);
    expect(r).toEqual({ bytes: Buffer.from('0306090a020000000100000002000000', 'hex'), closed: true });
    for (const frame of [hostileFrames.garbage(), hostileFrames.absurdBodyLength(), hostileFrames.negativeHeaderLength(), hostileFrames.headerOverrun(), hostileFrames.notAHello()]) {
      const s = await rawCtrlConnection({ host: '127.0.0.1', port, certPem: identity.certPem, keyPem: identity.keyPem });
      s.write(frame);
      expect((await readUntilClosed(s)).closed).toBe(true);
    }
    await expect(RouterDouble.connect({ identity: { ...identity, ...foreignIdentity('er-1'), caPem }, host: '127.0.0.1', port })).rejects.toMatchObject({ code: 'CLOSED' });
    const none = await rawCtrlConnection({ host: '127.0.0.1', port });
    none.write(hostileFrames.truncatedHello({ routerId: 'er-1' }, 1000));
    expect((await readUntilClosed(none)).closed).toBe(true);
    expect(refusals).toEqual(expect.arrayContaining(['BAD_FRAME', 'NOT_HELLO', 'REFUSED']));
  });
});
