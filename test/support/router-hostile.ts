import { once } from 'node:events';
import tls from 'node:tls';
import { CTRL_ALPN, ContentType, type DialHelloOptions, encodeFrame, newMessage, routerHelloMessage } from '@ziti/channel';
import { thirdPartyCa } from './x509.js';

/**
 * Misbehaving control-channel peers, for refusal tests: raw TLS connections (with the enrolled
 * certificate, a foreign CA's, or none) and frames that break the V2 framing.
 */

export interface RawCtrlOptions {
  host: string;
  port: number;
  /** Client certificate and key (PEM); omit both to present no certificate. */
  certPem?: string;
  keyPem?: string;
  /** Trust for the controller's certificate; omit to skip verification. */
  caPem?: string;
}

/** A TLS connection to the ctrl endpoint with ALPN `ziti-ctrl`; nothing sent yet. */
export async function rawCtrlConnection(o: RawCtrlOptions): Promise<tls.TLSSocket> {
  const socket = tls.connect({
    host: o.host,
    port: o.port,
    cert: o.certPem,
    key: o.keyPem,
    ca: o.caPem,
    rejectUnauthorized: o.caPem !== undefined,
    ALPNProtocols: [CTRL_ALPN],
  });
  await Promise.race([once(socket, 'secureConnect'), once(socket, 'error').then(([e]) => Promise.reject(e as Error))]);
  return socket;
}

/** Resolves with everything the peer sent until it closed the connection (or `timeoutMs` passed: then `closed` is false). */
export async function readUntilClosed(socket: tls.TLSSocket, timeoutMs = 10_000): Promise<{ bytes: Buffer; closed: boolean }> {
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => undefined);
  const closed = await Promise.race([
    once(socket, 'close').then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs)),
  ]);
  return { bytes: Buffer.concat(chunks), closed };
}

/** A client certificate for `routerId` from a CA the controller does not know. */
export function foreignIdentity(routerId: string): { certPem: string; keyPem: string; caPem: string } {
  const ca = thirdPartyCa('Foreign Router CA');
  return { ...ca.issue(routerId), caPem: ca.certPem };
}

function prefix(o: { magic?: number[]; contentType?: number; sequence?: number; headerLength: number; bodyLength: number }): Buffer {
  const p = Buffer.alloc(20);
  Buffer.from(o.magic ?? [3, 6, 9, 0x0c]).copy(p, 0);
  p.writeInt32LE(o.contentType ?? ContentType.Hello, 4);
  p.writeInt32LE(o.sequence ?? -1, 8);
  p.writeInt32LE(o.headerLength, 12);
  p.writeInt32LE(o.bodyLength, 16);
  return p;
}

/** Frames and byte strings that a controller must refuse (close the connection, never crash). */
export const hostileFrames = {
  /** Not a channel frame at all. */
  garbage: (): Buffer => Buffer.from('GET / HTTP/1.1\r\nHost: ctrl\r\n\r\n'),
  /** The V3 magic (03 06 09 0d), which OpenZiti answers with the unknown-version reply. */
  badMagic: (): Buffer => Buffer.concat([prefix({ magic: [3, 6, 9, 0x0d], headerLength: 0, bodyLength: 0 })]),
  /** A hello prefix claiming a 2 GiB body. */
  absurdBodyLength: (): Buffer => prefix({ headerLength: 0, bodyLength: 0x7fffffff }),
  /** A hello prefix with a negative header length. */
  negativeHeaderLength: (): Buffer => prefix({ headerLength: -8, bodyLength: 0 }),
  /** A header entry whose length runs past the header section. */
  headerOverrun: (): Buffer => {
    const entry = Buffer.alloc(12);
    entry.writeInt32LE(4, 0);
    entry.writeUInt32LE(1000, 4);
    return Buffer.concat([prefix({ headerLength: 12, bodyLength: 0 }), entry]);
  },
  /** The first `keep` bytes of a valid hello (the peer then stalls or closes). */
  truncatedHello: (hello: DialHelloOptions, keep = 25): Buffer => encodeFrame(routerHelloMessage(hello)).subarray(0, keep),
  /** A well-formed first frame that is not a hello. */
  notAHello: (): Buffer => {
    const m = newMessage(1052, 'x');
    m.sequence = 1;
    return encodeFrame(m);
  },
};
