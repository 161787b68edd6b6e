import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import tls from 'node:tls';
import { Channel, newMessage } from '@ziti/channel';
import { ECHO_REPLY, ECHO_REQUEST } from './echo-child.js';
import { type Phase, run } from './load.js';

/** Key material of the echo process's TLS client (a router's enrolled identity serves). */
export interface EchoIdentity {
  keyPem: string;
  certPem: string;
  caPem: string;
}

/** One bare @ziti/channel over mutual TLS to the echo process, the way a router double holds its control channel. */
export async function echoChannel(port: number, id: EchoIdentity): Promise<Channel> {
  const socket = tls.connect({ host: '127.0.0.1', port, ca: id.caPem, cert: id.certPem, key: id.keyPem });
  await once(socket, 'secureConnect');
  socket.setNoDelay(true);
  return new Channel(socket, { label: 'echo client', heartbeatIntervalMs: 0 });
}

/** Request/reply round trips on one channel, `concurrency` in flight; the request carries about what a CreateCircuitV2 does. */
export function echoPhase(ch: Channel, ms: number, concurrency: number): Promise<Phase> {
  const body = randomBytes(1024);
  return run(ms, concurrency, async () => (await ch.request(newMessage(ECHO_REQUEST, body), { timeoutMs: 10_000 })).contentType === ECHO_REPLY);
}

/** How long `count` requests of `bytes` each take to reach the echo process and be answered, all sent at once (a bulk transfer's ceiling). */
export async function echoBulk(ch: Channel, count: number, bytes: number): Promise<number> {
  const body = randomBytes(bytes);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: count }, () => ch.request(newMessage(ECHO_REQUEST, body), { timeoutMs: 60_000 })));
  return performance.now() - t0;
}
