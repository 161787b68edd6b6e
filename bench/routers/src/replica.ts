import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { freePort, probeReadyz } from '@ziti/test-kit';
import { Client } from 'pg';

/** The repository root (this file runs as bench/routers/dist/bench/routers/src/replica.js). */
const REPO_ROOT = path.resolve(__dirname, '../../../../../..');

export interface ReplicaOptions {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  internalSecret: string;
  /** The fabric identity's directory of the internal PKI the all-in-one controller holds too. */
  internalTlsDir: string;
  /** The controller id routers see: the same on every replica. */
  instanceId: string;
  /** gRPC `host:port` of the contexts fabric calls, by context name. */
  grpc: Record<string, string>;
  logFile: string;
  /** Node options (e.g. `--cpu-prof`). */
  execArgv?: string[];
}

export interface Replica {
  ctrlPort: number;
  pid: number | undefined;
  stop(): Promise<void>;
}


/**
 * A second fabric replica: the standalone process (`services/fabric/dist/main.js`) configured by
 * its environment as a pod is, on the all-in-one controller's database, NATS and Redis, calling
 * its contexts' gRPC listeners with an internal certificate of the same CA. Its output goes to
 * `logFile`. Resolves once it is ready; `ctrlPort` is its router control listener.
 */
export async function startFabricReplica(o: ReplicaOptions): Promise<Replica> {
  const [httpPort, grpcPort, ctrlPort] = [await freePort(), await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    DATABASE_URL: o.databaseUrl,
    NATS_URL: o.natsUrl,
    REDIS_URL: o.redisUrl,
    ZITI_INTERNAL_SECRET: o.internalSecret,
    ZITI_INTERNAL_TLS_DIR: o.internalTlsDir,
    ZITI_INSTANCE_ID: o.instanceId,
    ZITI_BIND_HOST: '127.0.0.1',
    ZITI_METRICS_PORT: '0',
    ZITI_SHUTDOWN_GRACE_SECONDS: '2',
    FABRIC_HTTP_PORT: String(httpPort),
    FABRIC_GRPC_PORT: String(grpcPort),
    ZITI_ROUTER_CTRL_LISTEN: `127.0.0.1:${ctrlPort}`,
    ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS: `127.0.0.1:${ctrlPort}`,
    POLICY_GRPC: o.grpc.policy,
    IDENTITY_AUTH_GRPC: o.grpc['identity-auth'],
    PKI_ENROLLMENT_GRPC: o.grpc['pki-enrollment'],
    SESSION_GRPC: o.grpc.session,
  };
  const log = createWriteStream(o.logFile, { flags: 'a' });
  const proc: ChildProcess = spawn(process.execPath, [...(o.execArgv ?? []), path.join(REPO_ROOT, 'services/fabric/dist/main.js')], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.pipe(log);
  proc.stderr!.pipe(log);
  const stop = () =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
  const deadline = Date.now() + 120_000;
  while (!(await probeReadyz(httpPort))) {
    if (proc.exitCode !== null) throw new Error(`the second fabric replica exited ${proc.exitCode} (see ${o.logFile})`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the second fabric replica was not ready within 120 s (see ${o.logFile})`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  // Ready is not yet reachable: its first heartbeat row has no relay address (its gRPC listener
  // was not up yet), the next one (5 s later) has; until then routes to its routers from the other
  // replica fail. The benchmark measures the steady state, after it.
  const pg = new Client({ connectionString: o.databaseUrl });
  await pg.connect();
  try {
    for (;;) {
      const { rows } = await pg.query<{ n: string }>(`SELECT count(*) AS n FROM fabric.replicas WHERE relay_address <> ''`);
      if (Number(rows[0]!.n) >= 2) break;
      if (Date.now() > deadline) throw new Error('the second fabric replica never listed its relay address');
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await pg.end();
  }
  return { ctrlPort, pid: proc.pid, stop };
}
