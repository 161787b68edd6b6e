import { X509Certificate, createHash } from 'node:crypto';
import * as tls from 'node:tls';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { HelloError, type HelloVerdict, type RouterHello, acceptHello, ctrlPb, encodeCapabilities } from '@ziti/channel';
import { ApiError } from '@ziti/errors';
import { verifyChain } from '@ziti/x509';
import type { RouterInfo } from '@ziti/proto';
import type { Peers } from '../grpc/peers.js';
import { routerChannel } from './adapter.js';
import type { RouterRegistry } from './registry.js';
import type { CtrlIdentity } from './server-identity.js';

/**
 * Capabilities this controller announces (reference §1.5): CreateTerminatorV2 (1),
 * SingleRouterLinkSource (2), CreateCircuitV2 (3), RouterDataModel (4) and
 * SupportsJWTLegacySessions (6); not GroupedCtrlChan (5): one socket per router.
 */
export const CONTROLLER_CAPABILITIES = [1, 2, 3, 4, 6];
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Connections that have not finished their hello; more are closed at once. */
const MAX_PENDING = 512;

function peerChain(socket: TLSSocket): X509Certificate[] {
  const out: X509Certificate[] = [];
  let c: PeerCertificate | undefined = socket.getPeerCertificate(true) as PeerCertificate & { issuerCertificate?: PeerCertificate };
  const seen = new Set<string>();
  while (c && c.raw && !seen.has(c.fingerprint256) && out.length < 8) {
    seen.add(c.fingerprint256);
    try {
      out.push(new X509Certificate(c.raw));
    } catch {
      break;
    }
    c = (c as PeerCertificate & { issuerCertificate?: PeerCertificate }).issuerCertificate;
  }
  return out;
}

export interface CtrlListenerDeps {
  peers: Peers;
  registry: RouterRegistry;
  identity: () => CtrlIdentity;
  controllerId: string;
  controllerVersion: string;
  log(m: string): void;
  problem(m: string, err?: unknown): void;
}

/** Why a router is refused; null when it may connect. */
async function admit(peers: Peers, hello: RouterHello, leaf: X509Certificate): Promise<{ router: RouterInfo } | { refused: string }> {
  const id = hello.routerId;
  if (!id || id.length > 256 || !/^[\w.:-]+$/.test(id)) return { refused: 'malformed router id' };
  if (hello.isGrouped && !hello.isFirstGroupConnection) return { refused: 'extra underlays are not supported (GroupedCtrlChan is not announced)' };
  let router: RouterInfo;
  try {
    router = await peers.getRouter(id);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'NOT_FOUND') return { refused: `unknown router ${id}` };
    throw err;
  }
  const enrollment = await peers.getRouterEnrollment(id);
  if (!enrollment.fingerprint) return { refused: `router ${id} has not completed enrollment` };
  const fingerprint = createHash('sha1').update(leaf.raw).digest('hex');
  if (enrollment.fingerprint.toLowerCase().replace(/[^0-9a-f]/g, '') !== fingerprint) return { refused: `router ${id}: certificate fingerprint does not match the enrolled one` };
  if (router.disabled) return { refused: `router ${id} is disabled` };
  return { router };
}

/** The link listeners a router's hello carries (header 1000, `ctrl_pb.Listeners`), bounded. */
function linkListeners(hello: RouterHello): ctrlPb.Listener[] {
  if (!hello.listeners) return [];
  try {
    const short = (v: string[]) => v.filter((x) => x.length <= 256).slice(0, 16);
    return ctrlPb.Listeners.decode(hello.listeners)
      .listeners.filter((l) => l.address.length > 0 && l.address.length <= 512 && l.protocol.length <= 64 && l.localBinding.length <= 256)
      .slice(0, 32)
      .map((l) => ({ address: l.address, protocol: l.protocol, costTags: short(l.costTags), groups: short(l.groups), localBinding: l.localBinding }));
  } catch {
    return [];
  }
}

/**
 * The TLS control listener routers dial (ALPN `ziti-ctrl`): client certificates are requested and
 * checked here (chain to the controller CA, SHA-1 fingerprint of the enrolled router, router known,
 * enrolled and enabled) before the hello is answered; anything else is closed with one log line.
 */
export async function startCtrlListener(host: string, port: number, d: CtrlListenerDeps): Promise<{ server: tls.Server; port: number; renew(): void; close(): Promise<void> }> {
  const context = () => ({ key: d.identity().keyPem, cert: d.identity().certPem });
  const server = tls.createServer({ ...context(), ALPNProtocols: ['ziti-ctrl'], requestCert: true, rejectUnauthorized: false, handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
  let pending = 0;
  const sockets = new Set<tls.TLSSocket>();
  server.on('tlsClientError', (err, socket) => {
    d.log(`fabric: control connection from ${socket.remoteAddress ?? '?'} refused: TLS handshake failed (${(err as NodeJS.ErrnoException).code ?? err.message})`);
    socket.destroy();
  });
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    const remote = `${socket.remoteAddress}:${socket.remotePort}`;
    socket.on('error', () => undefined);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    if (pending >= MAX_PENDING) {
      d.log(`fabric: control connection from ${remote} refused: too many connections awaiting their hello`);
      return void socket.destroy();
    }
    const chain = peerChain(socket);
    const leaf = chain[0];
    if (!leaf) {
      d.log(`fabric: control connection from ${remote} refused: no client certificate`);
      return void socket.destroy();
    }
    const id = d.identity();
    if (!verifyChain(leaf, [...chain.slice(1), ...id.intermediates], id.roots).ok) {
      d.log(`fabric: control connection from ${remote} refused: the client certificate does not chain to the controller CA`);
      return void socket.destroy();
    }
    pending++;
    let admitted: RouterInfo | undefined;
    const validate = async (hello: RouterHello): Promise<HelloVerdict> => {
      const verdict = await admit(d.peers, hello, leaf);
      if ('refused' in verdict) return { accept: false, reason: verdict.refused, silent: true };
      admitted = verdict.router;
      return { accept: true, controllerId: d.controllerId, controllerVersion: d.controllerVersion, capabilities: encodeCapabilities(CONTROLLER_CAPABILITIES) };
    };
    (async () => {
      try {
        const { hello, remainder } = await acceptHello(socket, validate);
        if (!admitted) return void socket.destroy();
        const channel = routerChannel(socket, { label: admitted.id, remoteAddress: remote, initialBytes: remainder, log: channelLog(d.log) });
        const listeners = linkListeners(hello);
        await d.registry.attach(admitted, channel, { version: hello.version, listenerAddresses: listeners.map((l) => l.address), linkListeners: listeners });
      } catch (err) {
        const why = err instanceof HelloError ? err.message : `internal error (${(err as Error).message})`;
        if (!(err instanceof HelloError)) d.problem(`fabric: control connection from ${remote} failed`, err);
        else d.log(`fabric: control connection from ${remote} refused: ${why}`);
        socket.destroy();
      } finally {
        pending--;
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as { port: number }).port,
    renew: () => server.setSecureContext(context()),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

function channelLog(log: (m: string) => void) {
  return {
    debug: () => undefined,
    info: (_o: object, m: string) => log(`fabric: ${m}`),
    warn: (_o: object, m: string) => log(`fabric: ${m}`),
  };
}
