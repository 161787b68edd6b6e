import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface HttpListener {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens with a context's express app (port 0 = ephemeral) and closes gracefully. */
export function listenHttp(app: Express, host: string, port: number): Promise<HttpListener> {
  return new Promise((resolve, reject) => {
    const server: Server = app.listen(port, host);
    server.keepAliveTimeout = 65_000;
    server.once('error', reject);
    server.once('listening', () => {
      const actual = (server.address() as AddressInfo).port;
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve({
        url: `http://${shownHost}:${actual}`,
        port: actual,
        close: () =>
          new Promise<void>((res) => {
            server.close(() => res());
            server.closeIdleConnections();
            setTimeout(() => server.closeAllConnections(), 5_000).unref();
          }),
      });
    });
  });
}
