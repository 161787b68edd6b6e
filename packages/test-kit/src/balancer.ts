import { spawn } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { probeReadyz } from './readyz.js';

/**
 * A Kubernetes Service in miniature, for tests that run replicas as separate processes: a TCP
 * listener per service port spreading connections over the replicas whose readiness probe passes.
 */

/** The kubelet's probe, sped up: every 500 ms, 1 s timeout, not ready after 3 failures in a row, ready after 1 success. */
export const READINESS = { periodMs: 500, timeoutMs: 1000, failureThreshold: 3 } as const;

/**
 * One replica's readiness: `GET /readyz` on its HTTP port (one probe per replica gates all its
 * ports, as for a pod); over HTTPS without checking the certificate when `scheme` says so, as a
 * kubelet's `scheme: HTTPS` probe does.
 */
export class Readiness {
  ready = false;
  private failures = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    readonly httpPort: number,
    readonly scheme: 'http' | 'https' = 'http',
  ) {}

  start(): this {
    const probe = () => void probeReadyz(this.httpPort, this.scheme, READINESS.timeoutMs).then((ok) => this.record(ok));
    probe();
    this.timer = setInterval(probe, READINESS.periodMs);
    return this;
  }

  private record(ok: boolean): void {
    this.failures = ok ? 0 : this.failures + 1;
    if (ok) this.ready = true;
    else if (this.failures >= READINESS.failureThreshold) this.ready = false;
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
 * Hands each new connection to the next ready backend (round robin per connection, as kube-proxy
 * spreads connections). A connection is never moved: it ends with its backend, and the client's
 * reconnect picks a ready one. With no ready backend a connection is closed at once (a Service
 * without endpoints refuses it).
 */
export class TcpBalancer {
  private server?: Server;
  private next = 0;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly backends: Backend[]) {}

  async listen(port: number): Promise<void> {
    const server = createServer((client) => this.route(client));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  private route(client: Socket): void {
    this.track(client);
    const ready = this.backends.filter((b) => b.readiness.ready);
    if (ready.length === 0) {
      client.destroy();
      return;
    }
    const backend = ready[this.next++ % ready.length]!;
    const upstream = connect({ host: '127.0.0.1', port: backend.port });
    this.track(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
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

/** One balanced port: where it listens, and per replica the port it forwards to and the HTTP port probed for readiness. */
export interface BalancedPort {
  listenPort: number;
  backends: { port: number; readyzPort: number; readyzScheme?: 'http' | 'https' }[];
}

/** Builds and opens the balancers in this process (replicas sharing a `readyzPort` share one probe). */
export async function openBalancers(ports: BalancedPort[]): Promise<{ close(): Promise<void> }> {
  const probes = new Map<number, Readiness>();
  const balancers: TcpBalancer[] = [];
  for (const p of ports) {
    const backends = p.backends.map((b) => {
      let readiness = probes.get(b.readyzPort);
      if (!readiness) probes.set(b.readyzPort, (readiness = new Readiness(b.readyzPort, b.readyzScheme).start()));
      return { port: b.port, readiness };
    });
    const balancer = new TcpBalancer(backends);
    await balancer.listen(p.listenPort);
    balancers.push(balancer);
  }
  return {
    async close() {
      for (const r of probes.values()) r.stop();
      for (const b of balancers) await b.close();
    },
  };
}

/**
 * The balancers as a process of their own (`dist/balancer-main.js`), as a Service is no part of the
 * client: a test process busy with its load can not stall them. The process ends with its parent.
 */
export async function startOwnBalancers(ports: BalancedPort[]): Promise<{ close(): Promise<void> }> {
  const child = spawn(process.execPath, [join(__dirname, 'balancer-main.js'), JSON.stringify(ports)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the balancer process exited ${code} before listening`)));
    child.stdout!.once('data', () => resolve());
  });
  child.removeAllListeners('exit');
  return {
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
