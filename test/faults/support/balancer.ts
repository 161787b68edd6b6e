import http from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** How often each replica's readiness is probed (a Kubernetes readiness probe, sped up). */
export const READINESS_PERIOD_MS = 500;

/**
 * One replica's readiness, as the kubelet sees it: `GET /readyz` on its HTTP port every
 * {@link READINESS_PERIOD_MS}; 200 = ready, anything else (or no answer within the period) = not.
 * One probe per replica serves both of its ports, as one pod's readiness gates all its Service ports.
 */
export class Readiness {
  ready = false;
  private timer?: NodeJS.Timeout;

  constructor(readonly httpPort: number) {}

  start(): this {
    const probe = () => {
      const req = http.get({ host: '127.0.0.1', port: this.httpPort, path: '/readyz', agent: false, timeout: READINESS_PERIOD_MS }, (res) => {
        this.ready = res.statusCode === 200;
        res.resume();
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        this.ready = false;
      });
    };
    probe();
    this.timer = setInterval(probe, READINESS_PERIOD_MS);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

export interface Backend {
  port: number;
  readiness: Readiness;
}

/**
 * A Kubernetes Service in miniature: a TCP listener that hands each new connection to the next
 * ready backend (round robin per connection, as kube-proxy spreads connections). A connection is
 * never moved: it ends with its backend, and the client's reconnect picks a ready one. With no ready
 * backend a connection is closed at once (a Service without endpoints refuses it).
 */
export class TcpBalancer {
  private server?: Server;
  private next = 0;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly name: string,
    private readonly backends: Backend[],
  ) {}

  async listen(port: number): Promise<void> {
    this.server = createServer((client) => this.route(client));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', () => resolve());
    });
  }

  private route(client: Socket): void {
    this.sockets.add(client);
    client.once('close', () => this.sockets.delete(client));
    const ready = this.backends.filter((b) => b.readiness.ready);
    if (ready.length === 0) {
      client.destroy();
      return;
    }
    const backend = ready[this.next++ % ready.length]!;
    const upstream = connect({ host: '127.0.0.1', port: backend.port });
    this.sockets.add(upstream);
    upstream.once('close', () => this.sockets.delete(upstream));
    upstream.setNoDelay(true);
    client.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
    // Either side ending ends the other: a killed replica's connections reset, as through kube-proxy.
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.once('close', () => upstream.destroy());
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
