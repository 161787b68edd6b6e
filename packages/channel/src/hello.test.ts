import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import tls from 'node:tls';
import { certPem, issueCertificate, nameDer, spkiOf } from '@ziti/x509';
import { Channel, type ChannelLog } from './channel.js';
import { CTRL_ALPN, ContentType, ControllerCapability, CtrlHeader, Header, SINGLE_SOCKET_CONTROLLER_CAPABILITIES } from './constants.js';
import { HelloError } from './errors.js';
import { UNKNOWN_VERSION_REPLY, encodeFrame, newMessage } from './frame.js';
import { encodeCapabilities, getBool, getInt32, getString, hasCapability } from './headers.js';
import { type AcceptedHello, type HelloVerdict, type RouterHello, acceptHello, dialHello, parseVersionHeader } from './hello.js';

const quiet: ChannelLog = { debug: () => undefined, info: () => undefined, warn: () => undefined };

function pki() {
  const day = 24 * 3600_000;
  const window = { notBefore: new Date(Date.now() - day), notAfter: new Date(Date.now() + day) };
  const key = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const rootKey = key();
  const root = issueCertificate({ commonName: 'ctrl root', spkiDer: spkiOf(rootKey), selfKey: rootKey, kind: 'root', ...window });
  const issuer = { nameDer: nameDer('ctrl root'), privateKey: rootKey, spkiDer: spkiOf(rootKey) };
  const leaf = (cn: string, kind: 'server' | 'client', k: KeyObject) =>
    certPem(issueCertificate({ commonName: cn, spkiDer: spkiOf(k), issuer, kind, sans: kind === 'server' ? { ip: ['127.0.0.1'] } : {}, ...window }));
  const serverKey = key();
  const clientKey = key();
  return {
    ca: certPem(root),
    server: { cert: leaf('ctrl', 'server', serverKey), key: serverKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
    client: { cert: leaf('router-1', 'client', clientKey), key: clientKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
  };
}

const certs = pki();
let server: tls.Server;
let port: number;
let accepted: (socket: tls.TLSSocket) => void;

beforeAll(async () => {
  server = tls.createServer({ ...certs.server, ca: certs.ca, ALPNProtocols: [CTRL_ALPN], requestCert: true, rejectUnauthorized: false });
  server.on('secureConnection', (s) => accepted(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as { port: number }).port;
});
afterAll(() => server.close());

async function connect(): Promise<{ client: tls.TLSSocket; peer: tls.TLSSocket }> {
  const peer = new Promise<tls.TLSSocket>((r) => (accepted = r));
  const client = tls.connect({ host: '127.0.0.1', port, ca: certs.ca, ...certs.client, ALPNProtocols: [CTRL_ALPN] });
  await once(client, 'secureConnect');
  return { client, peer: await peer };
}

const accept = (controllerId = 'ctrl-1'): HelloVerdict => ({
  accept: true,
  controllerId,
  controllerVersion: 'v0.0.0|local|2020-01-01 01:01:01|linux|amd64',
  capabilities: encodeCapabilities(SINGLE_SOCKET_CONTROLLER_CAPABILITIES),
});

describe('hello over TLS', () => {
  it('accepts a 2.x router hello, answers with the Result headers, and hands the socket to a Channel', async () => {
    const { client, peer } = await connect();
    expect(peer.alpnProtocol).toBe(CTRL_ALPN);
    let seen: RouterHello | undefined;
    const acceptedP = acceptHello(peer, (h) => {
      seen = h;
      return accept();
    });
    const dialed = await dialHello(client, {
      routerId: 'router-1',
      version: 'v2.0.3|abc123|2026-08-20 10:00:00|linux|amd64',
      listeners: Buffer.from([0x0a, 0x00]),
      // A frame right behind the hello must survive the hand-over.
      headers: [],
    });
    const { hello, remainder }: AcceptedHello = await acceptedP;
    expect(hello).toMatchObject({
      routerId: 'router-1',
      version: { version: 'v2.0.3', revision: 'abc123', buildDate: '2026-08-20 10:00:00', os: 'linux', arch: 'amd64' },
      listeners: Buffer.from([0x0a, 0x00]),
      isGrouped: true,
      type: 'ctrl.default',
      isFirstGroupConnection: true,
      connectionId: undefined,
    });
    expect(seen?.routerId).toBe('router-1');
    expect(hasCapability(hello.capabilities, 1)).toBe(true);
    const r = dialed.result;
    expect([r.contentType, r.sequence, getInt32(r.headers, Header.ReplyFor), getBool(r.headers, Header.ResultSuccess)]).toEqual([ContentType.Result, -1, -1, true]);
    expect(r.body).toHaveLength(0);
    expect(dialed.controllerVersion).toEqual(parseVersionHeader('v0.0.0|local|2020-01-01 01:01:01|linux|amd64'));
    expect(dialed.controllerId).toBe('ctrl-1');
    expect(r.headers.get(CtrlHeader.Capabilities)).toEqual(Buffer.from([0x5e]));
    expect(r.headers.get(CtrlHeader.LegacyCapabilities)).toEqual(Buffer.from([0x5e]));
    expect(hasCapability(dialed.capabilities, ControllerCapability.SupportsJWTLegacySessions)).toBe(true);
    expect(getString(r.headers, Header.Type)).toBe('ctrl.default');
    expect(getBool(r.headers, Header.IsGrouped)).toBe(true);
    expect(r.headers.get(Header.GroupSecret)).toHaveLength(16);
    expect(dialed.connectionId).toMatch(/^[0-9a-f]{32}$/);

    const ctrl = new Channel(peer, { log: quiet, heartbeatIntervalMs: 0, initialBytes: remainder });
    const router = new Channel(client, { log: quiet, heartbeatIntervalMs: 0, initialBytes: dialed.remainder });
    router.handle(20000, (m, ch) => ch.reply(m, newMessage(20001, 'client hello')));
    const reply = await ctrl.request(newMessage(20000, 'server hello'), { timeoutMs: 5000 });
    expect(reply.body.toString()).toBe('client hello');
    router.close('done');
    ctrl.close('done');
  });

  it('keeps a frame that arrives in the same chunk as the hello', async () => {
    const { client, peer } = await connect();
    const hello = newMessage(ContentType.Hello, 'router-1');
    hello.sequence = -1;
    const next = newMessage(1052, 'after');
    next.sequence = 1;
    client.write(Buffer.concat([encodeFrame(hello), encodeFrame(next)]));
    const { remainder } = await acceptHello(peer, () => accept());
    const got = new Promise<string>((r) => {
      const ch = new Channel(peer, { log: quiet, heartbeatIntervalMs: 0, initialBytes: remainder });
      ch.handle(1052, (m) => r(m.body.toString()));
    });
    expect(await got).toBe('after');
    client.destroy();
  });

  it('refuses with a failed Result carrying the reason', async () => {
    const { client, peer } = await connect();
    const acceptedP = acceptHello(peer, () => ({ accept: false, reason: 'router unknown' })).catch((e: unknown) => e);
    await expect(dialHello(client, { routerId: 'nobody' })).rejects.toMatchObject({ code: 'REFUSED', message: expect.stringContaining('router unknown') });
    expect(await acceptedP).toMatchObject({ code: 'REFUSED', hello: { routerId: 'nobody' } });
  });

  it('closes silently when told to', async () => {
    const { client, peer } = await connect();
    const acceptedP = acceptHello(peer, () => ({ accept: false, reason: 'bad cert', silent: true })).catch((e: unknown) => e);
    await expect(dialHello(client, { routerId: 'x' })).rejects.toMatchObject({ code: 'CLOSED' });
    expect(await acceptedP).toBeInstanceOf(HelloError);
  });

  it('writes the unknown-version reply on a bad magic, then closes', async () => {
    const { client, peer } = await connect();
    const acceptedP = acceptHello(peer, () => accept());
    const received: Buffer[] = [];
    client.on('data', (c: Buffer) => received.push(c));
    client.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    await expect(acceptedP).rejects.toMatchObject({ code: 'BAD_FRAME' });
    await once(client, 'end');
    expect(Buffer.concat(received)).toEqual(UNKNOWN_VERSION_REPLY);
  });

  it('refuses a first frame that is not a hello, an oversized hello, and a silent peer', async () => {
    const first = await connect();
    const p1 = acceptHello(first.peer, () => accept());
    first.client.write(encodeFrame(newMessage(1052, 'x')));
    await expect(p1).rejects.toMatchObject({ code: 'NOT_HELLO' });

    const second = await connect();
    const p2 = acceptHello(second.peer, () => accept());
    second.client.write(encodeFrame(newMessage(0, Buffer.alloc(5000))));
    await expect(p2).rejects.toMatchObject({ code: 'BAD_FRAME', message: expect.stringContaining('BODY_TOO_LONG') });

    const third = await connect();
    await expect(acceptHello(third.peer, () => accept(), { timeoutMs: 100 })).rejects.toMatchObject({ code: 'TIMEOUT' });
    [first, second, third].forEach((c) => c.client.destroy());
  });

  it('reports a validator failure and closes', async () => {
    const { client, peer } = await connect();
    const p = acceptHello(peer, () => {
      throw new Error('db down');
    }).catch((e: unknown) => Promise.reject(e));
    p.catch(() => undefined);
    const closed = once(client, 'close');
    await dialHello(client, { routerId: 'r' }).catch(() => undefined);
    await expect(p).rejects.toMatchObject({ code: 'VALIDATOR_FAILED' });
    await closed;
  });
});
