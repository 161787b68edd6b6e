import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HttpApp, answerClientError, createDrain, shortId } from '@ziti/http-kit';
import { registerHttpApp } from './in-process.js';

export interface HttpListener {
  url: string;
  port: number;
  /**
   * Graceful: new requests are answered 503 `SERVICE_UNAVAILABLE`, those in flight finish (for at
   * most the shutdown grace), then the listener closes.
   */
  close(): Promise<void>;
}

/**
 * Listens with a context's HTTP app (port 0 = ephemeral) and closes gracefully. The gateway of
 * the same process hands requests for this URL to the app directly (`localHttpApp`).
 */
export function listenHttp(app: HttpApp, host: string, port: number): Promise<HttpListener> {
  return new Promise((resolve, reject) => {
    const drain = createDrain();
    const server: Server = createServer(drain.listener(app)).listen(port, host);
    server.keepAliveTimeout = 65_000;
    server.on('clientError', (err: Error, socket) => answerClientError(err, socket, shortId()));
    server.once('error', reject);
    server.once('listening', () => {
      const actual = (server.address() as AddressInfo).port;
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      const url = `http://${shownHost}:${actual}`;
      const unregister = registerHttpApp(url, app);
      resolve({
        url,
        port: actual,
        close: () => {
          unregister();
          return drain.close(server);
        },
      });
    });
  });
}
