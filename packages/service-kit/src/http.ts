import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ApiError } from '@ziti/errors';
import { type HttpApp, answerClientError, createDrain, sendError, shortId } from '@ziti/http-kit';
import { registerHttpApp } from './in-process.js';
import { type ContextName, type InternalCredentials, internalCredentials, peerContext } from './internal-tls.js';

export interface HttpListener {
  url: string;
  port: number;
  /**
   * Graceful: new requests are answered 503 `SERVICE_UNAVAILABLE`, those in flight finish (for at
   * most the shutdown grace), then the listener closes.
   */
  close(): Promise<void>;
}

/** Paths any caller may probe on an internal listener (a kubelet has no internal identity): they tell only whether the context is up. */
const PROBE_PATHS = new Set(['/healthz', '/readyz']);

// A TLS connection's peer does not change: it is read once per connection, not once per request.
const gatewaySockets = new WeakMap<TLSSocket, boolean>();

/** Whether a request on an internal listener comes from the gateway (its verified internal certificate). */
export function fromGateway(req: IncomingMessage): boolean {
  const socket = req.socket as TLSSocket;
  let known = gatewaySockets.get(socket);
  if (known === undefined) {
    known = socket.authorized === true && peerContext(socket.getPeerCertificate?.()) === 'gateway';
    gatewaySockets.set(socket, known);
  }
  return known;
}

/**
 * The listener of an internal HTTP port: the probes answer anyone; every other request must come
 * from the gateway (mutual TLS with its internal certificate), else 401 `UNAUTHORIZED` in the
 * envelope and the connection closes, so no limit of the gateway can be skipped by calling a
 * context directly.
 */
export function gatewayOnly(app: HttpApp): HttpApp {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (fromGateway(req) || PROBE_PATHS.has((req.url ?? '/').split('?')[0]!)) return app(req, res);
    res.setHeader('connection', 'close');
    sendError(res, ApiError.of('UNAUTHORIZED'), shortId());
  };
}

/** HTTPS options of an internal listener of `creds`: client certificates requested and checked against the internal CA. */
export function internalServerOptions(creds: InternalCredentials) {
  return { ...creds.tlsOptions(), requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' as const };
}

/**
 * Listens with a context's HTTP app (port 0 = ephemeral) over HTTPS with the context's internal
 * identity, answering only the gateway (`gatewayOnly`), and closes gracefully. A renewed internal
 * certificate is served from the next handshake on. The gateway of the same process hands
 * requests for this URL to the app directly (`localHttpApp`).
 */
export function listenHttp(app: HttpApp, host: string, port: number, context: ContextName): Promise<HttpListener> {
  const creds = internalCredentials(context);
  return new Promise((resolve, reject) => {
    const drain = createDrain();
    const server: Server = createServer(internalServerOptions(creds), drain.listener(gatewayOnly(app))).listen(port, host);
    const unwatch = creds.onUpdate(() => server.setSecureContext(internalServerOptions(creds)));
    server.keepAliveTimeout = 65_000;
    server.on('clientError', (err: Error, socket) => answerClientError(err, socket, shortId()));
    server.once('error', (err) => {
      unwatch();
      reject(err);
    });
    server.once('listening', () => {
      const actual = (server.address() as AddressInfo).port;
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      const url = `https://${shownHost}:${actual}`;
      const unregister = registerHttpApp(url, app);
      resolve({
        url,
        port: actual,
        close: () => {
          unregister();
          unwatch();
          return drain.close(server);
        },
      });
    });
  });
}
