import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BalancedPort, freePort, type OwnServer, probeReadyz, startOwnBalancers, startOwnNats, startOwnPostgres, startOwnRedis } from '@ziti/test-kit';
import { writeInternalPki } from '@ziti/service-kit';
import { NodeProcess } from './processes.js';

/**
 * The controller as a platform team runs it: its own PostgreSQL, NATS (JetStream) and Redis, every
 * context as a separate process from its built `dist/main.js`, two replicas of identity-auth and of
 * session behind a balancer each (HTTP and gRPC, as a Kubernetes Service: `startOwnBalancers` of
 * `@ziti/test-kit`, in a process of its own), and two gateways. The contexts and gateways accept one address per upstream, so the balancer's address
 * is what they are given, as a Service name would be. Routers dial `routerCtrlPort`: fabric's
 * control listener, or, with fabric replicated, a balancer in front of every replica's.
 */

export const CONTEXTS = ['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture', 'fabric'] as const;
export type ContextName = (typeof CONTEXTS)[number];
/** The contexts that run two replicas by default. */
export const REPLICATED: readonly ContextName[] = ['identity-auth', 'session'];

export interface ClusterOptions {
  /**
   * The contexts run as two replicas behind a balancer (default {@link REPLICATED}). With
   * `fabric` among them, each fabric replica has its own router control listener, and routers dial
   * a balancer in front of both (TLS passes through it), as through a Kubernetes Service.
   */
  replicated?: readonly ContextName[];
}

const envPrefix = (ctx: ContextName) => ctx.toUpperCase().replace(/-/g, '_');

export interface Replica {
  name: string;
  context: ContextName;
  process: NodeProcess;
  httpPort: number;
  grpcPort: number;
  /** fabric: its own router control listener's port. */
  ctrlPort?: number;
}

export interface Gateway {
  name: string;
  url: string;
  port: number;
  process: NodeProcess;
}

export interface Cluster {
  /** Working directory of the run (data directories), removed by `close`. */
  dir: string;
  postgres: OwnServer;
  nats: OwnServer;
  redis: OwnServer;
  replicas: Replica[];
  gateways: Gateway[];
  /** The port routers dial for the control plane (a balancer's when fabric is replicated). */
  routerCtrlPort: number;
  admin: { username: string; password: string };
  /** Each process's internal certificate directory (`ca.crt`, `tls.crt`, `tls.key`), by context. */
  internalTls: Record<ContextName | 'gateway', string>;
  /** The last lines of every process's output (for a failure message). */
  outputs(): string;
  close(): Promise<void>;
}

/** Polls until `probe` holds, failing after `timeoutMs` with `what`. */
export async function until(probe: () => Promise<boolean> | boolean, what: string, timeoutMs: number, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** One HTTPS GET of a gateway path: its status, or 0 when nothing answered. */
export function gatewayStatus(url: string, path: string, timeoutMs = 2000): Promise<number> {
  return new Promise((resolve) => {
    // The suite measures availability; trust of the served certificate is the black-box suite's subject.
    const req = https.get(`${url}${path}`, { rejectUnauthorized: false, agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
  });
}

export async function waitGatewayReady(gw: Gateway, timeoutMs = 180_000): Promise<void> {
  await until(async () => (await gatewayStatus(gw.url, '/ziti-internal/readyz')) === 200, `${gw.name} to be ready\n${gw.process.output()}`, timeoutMs, 500);
}

export async function waitReplicaReady(r: Replica, timeoutMs = 180_000): Promise<void> {
  await until(() => probeReadyz(r.httpPort), `${r.name} to be ready\n${r.process.output()}`, timeoutMs);
}

/** Starts everything; each process's output goes to `<logDir>/<name>.log` (emptied first, kept after `close`). */
export async function startCluster(logDir: string, options: ClusterOptions = {}): Promise<Cluster> {
  const replicated = options.replicated ?? REPLICATED;
  const dir = mkdtempSync(join(tmpdir(), 'ziti-faults-'));
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  const [postgres, nats, redis] = await Promise.all([startOwnPostgres(), startOwnNats(), startOwnRedis()]);
  const processes: NodeProcess[] = [];
  let balancers: { close(): Promise<void> } | undefined;
  const admin = { username: 'admin', password: `Adm!${randomBytes(12).toString('base64url')}9a` };
  const gatewayPorts = [await freePort(), await freePort()];

  const close = async () => {
    for (const p of processes.slice().reverse()) await p.close().catch(() => undefined);
    await balancers?.close();
    for (const s of [postgres, nats, redis]) await s.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  const outputs = () => processes.map((p) => `--- ${p.name} (pid ${p.pid ?? 'none'})\n${p.output().split('\n').slice(-15).join('\n')}`).join('\n');

  try {
    const base: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      DATABASE_URL: postgres.url,
      NATS_URL: nats.url,
      REDIS_URL: redis.url,
      ZITI_INTERNAL_SECRET: randomBytes(32).toString('hex'),
      ZITI_BIND_HOST: '127.0.0.1',
      ZITI_METRICS_PORT: '0',
      ZITI_INSTANCE_ID: 'faults',
      ZITI_USER: admin.username,
      ZITI_PWD: admin.password,
      ZITI_SHUTDOWN_GRACE_SECONDS: '2',
      ZITI_DEPENDENCY_WAIT_SECONDS: '300',
      ZITI_CTRL_ADVERTISED_ADDRESS: `127.0.0.1:${gatewayPorts[0]}`,
    };
    // The internal plane's CA and one certificate per context, as cert-manager would issue them.
    const internalTls = writeInternalPki(join(dir, 'internal-tls'));
    // The seed of the edge server key: only the gateways and pki-enrollment hold it.
    const serverKeySecret = randomBytes(32).toString('hex');
    for (const ctx of CONTEXTS) {
      const migrate = new NodeProcess(`migrate-${ctx}`, `services/${ctx}/dist/migrate.js`, base, logDir);
      await migrate.runToEnd();
    }

    // Per context: its replicas' ports, and the address the others use (a balancer's when replicated).
    type Ports = Omit<Replica, 'process'>;
    const planned: Ports[] = [];
    const balanced: BalancedPort[] = [];
    const addresses: NodeJS.ProcessEnv = {};
    for (const ctx of CONTEXTS) {
      const count = replicated.includes(ctx) ? 2 : 1;
      const own: Ports[] = [];
      for (let i = 1; i <= count; i++) {
        own.push({ name: count > 1 ? `${ctx}-${i}` : ctx, context: ctx, httpPort: await freePort(), grpcPort: await freePort(), ...(ctx === 'fabric' ? { ctrlPort: await freePort() } : {}) });
      }
      let [httpPort, grpcPort] = [own[0]!.httpPort, own[0]!.grpcPort];
      if (count > 1) {
        [httpPort, grpcPort] = [await freePort(), await freePort()];
        balanced.push({ listenPort: httpPort, backends: own.map((r) => ({ port: r.httpPort, readyzPort: r.httpPort, readyzScheme: 'https' as const })) });
        balanced.push({ listenPort: grpcPort, backends: own.map((r) => ({ port: r.grpcPort, readyzPort: r.httpPort, readyzScheme: 'https' as const })) });
      }
      addresses[`${envPrefix(ctx)}_URL`] = `https://127.0.0.1:${httpPort}`;
      addresses[`${envPrefix(ctx)}_GRPC`] = `127.0.0.1:${grpcPort}`;
      planned.push(...own);
    }
    // The router control plane: fabric's TLS listener, or a balancer in front of every replica's.
    const fabrics = planned.filter((r) => r.context === 'fabric');
    let routerCtrlPort = fabrics[0]!.ctrlPort!;
    if (fabrics.length > 1) {
      routerCtrlPort = await freePort();
      balanced.push({ listenPort: routerCtrlPort, backends: fabrics.map((r) => ({ port: r.ctrlPort!, readyzPort: r.httpPort, readyzScheme: 'https' as const })) });
    }
    // What routers dial: the listener certificate's name (fabric) and the `ctrls` of enrollment JWTs (pki-enrollment).
    const routerCtrlAddress = `127.0.0.1:${routerCtrlPort}`;
    balancers = await startOwnBalancers(balanced);

    const replicas: Replica[] = planned.map((r) => {
      const dataDir = join(dir, r.name);
      mkdirSync(dataDir);
      const env = {
        ...base,
        ...addresses,
        ZITI_DATA_DIR: dataDir,
        ZITI_INTERNAL_TLS_DIR: internalTls[r.context],
        ...(r.context === 'pki-enrollment' ? { ZITI_SERVER_KEY_SECRET: serverKeySecret, ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS: routerCtrlAddress } : {}),
        ...(r.context === 'fabric'
          ? { ZITI_ROUTER_CTRL_LISTEN: `127.0.0.1:${r.ctrlPort}`, ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS: routerCtrlAddress, ZITI_FABRIC_RELAY_ADDRESS: `127.0.0.1:${r.grpcPort}` }
          : {}),
        [`${envPrefix(r.context)}_HTTP_PORT`]: String(r.httpPort),
        [`${envPrefix(r.context)}_GRPC_PORT`]: String(r.grpcPort),
      };
      const proc = new NodeProcess(r.name, `services/${r.context}/dist/main.js`, env, logDir);
      processes.push(proc);
      return { ...r, process: proc };
    });
    // First replicas first: the first identity-auth creates the default admin, pki-enrollment the PKI.
    const first = replicas.filter((r) => !r.name.endsWith('-2'));
    for (const r of first) r.process.start();
    for (const r of first) await waitReplicaReady(r);
    const seconds = replicas.filter((r) => r.name.endsWith('-2'));
    for (const r of seconds) r.process.start();
    for (const r of seconds) await waitReplicaReady(r);

    const gateways: Gateway[] = gatewayPorts.map((port, i) => {
      const name = `gateway-${String.fromCharCode(97 + i)}`;
      const dataDir = join(dir, name);
      mkdirSync(dataDir);
      const env = { ...base, ...addresses, ZITI_DATA_DIR: dataDir, ZITI_INTERNAL_TLS_DIR: internalTls.gateway, ZITI_SERVER_KEY_SECRET: serverKeySecret, ZITI_CTRL_LISTEN_HOST: '127.0.0.1', ZITI_CTRL_PORT: String(port), ZITI_CTRL_ADVERTISED_ADDRESS: `127.0.0.1:${port}` };
      const proc = new NodeProcess(name, 'services/gateway/dist/main.js', env, logDir);
      processes.push(proc);
      return { name, url: `https://127.0.0.1:${port}`, port, process: proc };
    });
    for (const g of gateways) g.process.start();
    for (const g of gateways) await waitGatewayReady(g);
    return { dir, postgres, nats, redis, replicas, gateways, routerCtrlPort, admin, internalTls, outputs, close };
  } catch (err) {
    const message = `${(err as Error).message}\n${outputs()}`;
    await close();
    throw new Error(message);
  }
}
