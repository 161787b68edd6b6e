import { once } from 'node:events';
import net from 'node:net';
import { Channel, type ChannelLog } from './channel.js';
import { ContentType, Header } from './constants.js';
import { ChannelClosedError, RequestTimeoutError } from './errors.js';
import { FrameDecoder, type Message, encodeFrame, newMessage } from './frame.js';
import { decodeUint64, encodeUint64, getInt32 } from './headers.js';

const quiet: ChannelLog = { debug: () => undefined, info: () => undefined, warn: () => undefined };
const servers: net.Server[] = [];
const sockets: net.Socket[] = [];

/** Two connected TCP sockets on loopback. */
async function socketPair(): Promise<[net.Socket, net.Socket]> {
  const server = net.createServer();
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const accepted = once(server, 'connection');
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  await once(client, 'connect');
  const [peer] = (await accepted) as [net.Socket];
  sockets.push(client, peer);
  return [client, peer];
}

/** Reads frames a raw socket receives. */
function frames(socket: net.Socket): { next(pred?: (m: Message) => boolean): Promise<Message> } {
  const d = new FrameDecoder();
  const got: Message[] = [];
  const waiting: (() => void)[] = [];
  socket.on('data', (c: Buffer) => {
    got.push(...d.feed(c));
    waiting.splice(0).forEach((w) => w());
  });
  return {
    async next(pred = () => true) {
      for (;;) {
        const i = got.findIndex(pred);
        if (i >= 0) return got.splice(i, 1)[0]!;
        await new Promise<void>((r) => waiting.push(r));
      }
    },
  };
}

const closedWith = (ch: Channel) => new Promise<string>((r) => ch.onClose(r));

afterEach(() => {
  sockets.splice(0).forEach((s) => s.destroy());
  servers.splice(0).forEach((s) => s.close());
});

describe('Channel', () => {
  it('resolves a request with its reply, copying reflected headers and setting header 1', async () => {
    const [a, b] = await socketPair();
    const ca = new Channel(a, { log: quiet, heartbeatIntervalMs: 0 });
    const cb = new Channel(b, { log: quiet, heartbeatIntervalMs: 0 });
    cb.handle(1052, (m, ch) => ch.reply(m, newMessage(ContentType.Result, `ok ${m.body.toString()}`)));
    const req = newMessage(1052, 'ifaces', [[128, Buffer.from('trace-id')]]);
    const reply = await ca.request(req, { timeoutMs: 5000 });
    expect(reply.contentType).toBe(ContentType.Result);
    expect(reply.body.toString()).toBe('ok ifaces');
    expect(getInt32(reply.headers, Header.ReplyFor)).toBe(req.sequence);
    expect(reply.headers.get(128)).toEqual(Buffer.from('trace-id'));
    const second = newMessage(1052, 'again');
    await ca.request(second);
    expect(second.sequence).toBe(req.sequence + 1);
    ca.close('done');
  });

  it('dispatches a reply nobody waits for by content type, and drops unknown content types', async () => {
    const [a, b] = await socketPair();
    const ca = new Channel(a, { log: quiet, heartbeatIntervalMs: 0 });
    const cb = new Channel(b, { log: quiet, heartbeatIntervalMs: 0 });
    const seen: Message[] = [];
    cb.handle(20217, (m) => void seen.push(m));
    const stray = newMessage(20217, 'late');
    stray.headers.set(Header.ReplyFor, Buffer.from([9, 9, 0, 0]));
    await ca.send(newMessage(777, 'nobody'));
    await ca.send(newMessage(777, 'nobody'));
    await ca.send(stray);
    await ca.send(newMessage(20217, 'x'));
    while (seen.length < 2) await new Promise((r) => setTimeout(r, 5));
    expect(seen.map((m) => m.body.toString())).toEqual(['late', 'x']);
    expect(cb.droppedUnknown).toBe(2);
    expect(cb.closed).toBe(false);
  });

  it('rejects a request without a reply after its timeout, and pending requests on close', async () => {
    const [a] = await socketPair();
    const ca = new Channel(a, { log: quiet, heartbeatIntervalMs: 0 });
    await expect(ca.request(newMessage(20218), { timeoutMs: 50 })).rejects.toBeInstanceOf(RequestTimeoutError);
    const pending = ca.request(newMessage(20218), { timeoutMs: 60_000 });
    ca.close('shutting down');
    await expect(pending).rejects.toEqual(new ChannelClosedError('shutting down'));
    await expect(ca.send(newMessage(1))).rejects.toBeInstanceOf(ChannelClosedError);
  });

  it('echoes a heartbeat (header 5) as header 6 on a standalone type-5 message, without dispatching it', async () => {
    const [a, raw] = await socketPair();
    const ca = new Channel(a, { log: quiet, heartbeatIntervalMs: 0 });
    const handled: Message[] = [];
    ca.handle(ContentType.Heartbeat, (m) => void handled.push(m));
    const rx = frames(raw);
    const hb = newMessage(ContentType.Heartbeat, undefined, [[Header.Heartbeat, encodeUint64(1234567890123456789n)]]);
    raw.write(encodeFrame(hb));
    const echo = await rx.next();
    expect(echo.contentType).toBe(ContentType.Heartbeat);
    expect(decodeUint64(echo.headers.get(Header.HeartbeatResponse)!)).toBe(1234567890123456789n);
    expect(handled).toHaveLength(0);
  });

  it('sends heartbeats, stays open while they are answered, and closes when answers stop', async () => {
    const [a, raw] = await socketPair();
    const ca = new Channel(a, { log: quiet, heartbeatIntervalMs: 20, unresponsiveMs: 150, heartbeatCheckMs: 10 });
    const closed = closedWith(ca);
    const rx = frames(raw);
    for (let i = 0; i < 3; i++) {
      const hb = await rx.next((m) => m.headers.has(Header.Heartbeat));
      expect(hb.headers.get(Header.Heartbeat)).toHaveLength(8);
      raw.write(encodeFrame(newMessage(ContentType.Heartbeat, undefined, [[Header.HeartbeatResponse, hb.headers.get(Header.Heartbeat)!]])));
    }
    expect(ca.closed).toBe(false);
    expect(await closed).toMatch(/unresponsive/);
  });

  it('closes on a malformed frame and on peer close', async () => {
    const [a, raw] = await socketPair();
    const ca = new Channel(a, { log: quiet, heartbeatIntervalMs: 0 });
    const closed = closedWith(ca);
    const bad = Buffer.alloc(20);
    Buffer.from([3, 6, 9, 0x0c]).copy(bad);
    bad.writeInt32LE(-1, 16);
    raw.write(bad);
    expect(await closed).toBe('malformed frame: NEGATIVE_LENGTH');
    const [b, raw2] = await socketPair();
    const cb = new Channel(b, { log: quiet, heartbeatIntervalMs: 0 });
    const closed2 = closedWith(cb);
    raw2.end();
    expect(await closed2).toBe('peer closed');
  });

  it('waits for drain and closes a peer that never reads', async () => {
    const [a, raw] = await socketPair();
    raw.pause();
    const ca = new Channel(a, { log: quiet, heartbeatIntervalMs: 0, drainTimeoutMs: 300 });
    const closed = closedWith(ca);
    const chunk = Buffer.alloc(1024 * 1024);
    const sends: Promise<void>[] = [];
    for (let i = 0; i < 64 && !ca.closed; i++) sends.push(ca.send(newMessage(6, chunk)));
    expect(await closed).toBe('peer is not reading');
    const results = await Promise.allSettled(sends);
    expect(results.some((r) => r.status === 'rejected')).toBe(true);
  });

  it('delivers queued sends in order once the peer reads again', async () => {
    const [a, raw] = await socketPair();
    raw.pause();
    const ca = new Channel(a, { log: quiet, heartbeatIntervalMs: 0, drainTimeoutMs: 10_000 });
    const chunk = Buffer.alloc(256 * 1024);
    const sends = Array.from({ length: 40 }, (_, i) => ca.send(newMessage(6, Buffer.concat([Buffer.from([i]), chunk]))));
    await new Promise((r) => setTimeout(r, 50));
    const rx = frames(raw);
    raw.resume();
    await Promise.all(sends);
    const order: number[] = [];
    for (let i = 0; i < 40; i++) order.push((await rx.next()).body[0]!);
    expect(order).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(ca.closed).toBe(false);
  });
});
