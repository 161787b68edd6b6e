import { type ChildProcess, spawn } from 'node:child_process';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InternalCredentials, holdInternalCredentials, internalRequest, readInternalTlsDir, writeInternalPki } from '@ziti/service-kit';
import { signPrincipal } from '@ziti/http-kit';
import { createTestDatabase, type TestDatabase, testInfra } from '@ziti/test-kit';
import { Client } from 'pg';
import { runMigrations } from './index.js';

/**
 * The standalone posture process (its built `dist/main.js`) as Kubernetes runs it: started before
 * its database is reachable it waits, answering not-ready, and becomes ready once the database
 * answers; SIGTERM lets an in-flight request finish while readiness and new requests get 503,
 * then it exits 0.
 */

const SECRET = 'process-test-internal-secret-0123456789';
// The internal plane as cert-manager would lay it out: the process reads posture's, the test calls as the gateway.
const TLS_DIR = mkdtempSync(join(tmpdir(), 'posture-process-tls-'));
const TLS = writeInternalPki(TLS_DIR, { names: ['gateway', 'posture'] });
holdInternalCredentials(new InternalCredentials('gateway', readInternalTlsDir(TLS.gateway)));
afterAll(() => rmSync(TLS_DIR, { recursive: true, force: true }));
const MAIN = join(__dirname, '..', 'dist', 'main.js');

const admin = {
  identityId: 'admin-id', identityName: 'admin', apiSessionId: 'as-1', isAdmin: true, isDefaultAdmin: true,
  isFullyAuthenticated: true, permissions: [], configTypes: [], authenticatorId: 'auth-1',
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(), expirationSeconds: 3600, identityTypeId: 'Default',
};

interface Reply { status: number; text: string; json: any }

/** A GET of the process's internal HTTPS port, as the gateway. */
async function get(port: number, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await internalRequest(`https://127.0.0.1:${port}${path}`, { as: 'gateway', headers });
  return { status: res.status, text: res.text, json: res.json ?? undefined };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A TCP proxy on `port` to `target` (started late: the database "comes up"). */
async function startProxy(port: number, target: { host: string; port: number }): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = connect(target.port, target.host);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the posture process', () => {
  let db: TestDatabase;
  let infra: Awaited<ReturnType<typeof testInfra>>;
  let child: ChildProcess | undefined;
  let proxy: { close(): Promise<void> } | undefined;
  let output = '';
  let exited: Promise<number | null>;
  let httpPort: number;

  beforeAll(async () => {
    infra = await testInfra();
    db = await createTestDatabase(infra.databaseUrl, 'proc');
    await runMigrations(db.url, () => undefined);
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await proxy?.close();
    await db.drop();
  });

  function spawnPosture(databaseUrl: string, extra: Record<string, string> = {}): { exit: Promise<number | null>; output: () => string } {
    let out = '';
    const p = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: databaseUrl,
        NATS_URL: infra.natsUrl,
        REDIS_URL: infra.redisUrl,
        ZITI_INTERNAL_SECRET: SECRET,
        ZITI_INTERNAL_TLS_DIR: TLS.posture,
        ZITI_BIND_HOST: '127.0.0.1',
        POSTURE_HTTP_PORT: String(httpPort),
        POSTURE_GRPC_PORT: '0',
        POLICY_GRPC: '127.0.0.1:1',
        IDENTITY_AUTH_GRPC: '127.0.0.1:1',
        ...extra,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child = p;
    return { exit: new Promise((r) => p.once('exit', (code) => r(code))), output: () => out };
  }

  it('gives up with a clear message, exit 1, when the database stays unreachable past the wait', async () => {
    httpPort = await freePort();
    const closed = await freePort();
    const url = new URL(db.url);
    url.host = `127.0.0.1:${closed}`;
    const started = Date.now();
    const p = spawnPosture(url.toString(), { ZITI_DEPENDENCY_WAIT_SECONDS: '2' });
    expect(await p.exit).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(p.output()).toMatch(/"level":"fatal".*"context":"posture","msg":"not started: PostgreSQL is not reachable after 2 s: connect ECONNREFUSED/);
    expect(p.output()).not.toMatch(/\n\s+at /);
  }, 30_000);

  it('waits for its database, not ready meanwhile, and becomes ready once the database answers', async () => {
    httpPort = await freePort();
    const dbPort = await freePort();
    const real = new URL(db.url);
    const proxied = new URL(db.url);
    proxied.host = `127.0.0.1:${dbPort}`;
    const p = spawnPosture(proxied.toString(), { ZITI_DEPENDENCY_WAIT_SECONDS: '120', ZITI_SHUTDOWN_GRACE_SECONDS: '10' });
    exited = p.exit;

    const pending = await until('the pending listener', () => get(httpPort, '/readyz'), 20_000);
    expect(pending.status).toBe(503);
    expect(pending.json).toEqual({ service: 'posture', ready: false });
    expect((await get(httpPort, '/healthz')).status).toBe(200);
    const refused = await get(httpPort, '/edge/management/v1/posture-checks');
    expect(refused.status).toBe(503);
    expect(refused.json.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', requestId: expect.any(String) });

    // Several retries pass: still one line about the database, no stack, the process alive.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(child!.exitCode).toBeNull();
    expect(p.output().match(/waiting for PostgreSQL/g)).toHaveLength(1);
    expect(p.output()).not.toMatch(/\n\s+at /);
    expect((await get(httpPort, '/readyz')).status).toBe(503);

    proxy = await startProxy(dbPort, { host: real.hostname, port: Number(real.port || 5432) });
    const ready = await until('readiness', async () => ((await get(httpPort, '/readyz')).status === 200 ? true : undefined), 20_000);
    expect(ready).toBe(true);
    expect(p.output()).toMatch(/"context":"posture","msg":"PostgreSQL is reachable \(waited \d+\.\d s\)"/);
    output = p.output();
  }, 60_000);

  it('on SIGTERM: readiness and new requests 503 at once, the in-flight request finishes, exit 0', async () => {
    expect(child?.exitCode).toBeNull();
    const headers = (rid: string) => ({ 'x-ziti-principal': signPrincipal(SECRET, admin, rid), 'x-ziti-request-id': rid });
    expect((await get(httpPort, '/edge/management/v1/posture-checks', headers('warm'))).status).toBe(200);

    // Hold the table the list reads, so the request stays in flight.
    const locker = new Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE posture.posture_checks IN ACCESS EXCLUSIVE MODE');
      let settled = false;
      const inFlight = get(httpPort, '/edge/management/v1/posture-checks', headers('slow')).finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 500));
      expect(settled).toBe(false);

      const signalledAt = Date.now();
      child!.kill('SIGTERM');
      await until('not-ready', async () => ((await get(httpPort, '/readyz')).status === 503 ? true : undefined), 5_000);
      const refused = await get(httpPort, '/edge/management/v1/posture-checks', headers('new'));
      expect(refused.status).toBe(503);
      expect(refused.json.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', requestId: expect.any(String) });
      expect(refused.text).not.toMatch(/posture_checks|Error:|\bat /);
      expect(settled).toBe(false);
      expect(child!.exitCode).toBeNull();

      await locker.query('COMMIT');
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(answer.json.data).toEqual([]);

      expect(await exited).toBe(0);
      expect(Date.now() - signalledAt).toBeLessThan(10_000 + 5_000);
      await expect(get(httpPort, '/readyz')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await locker.end().catch(() => undefined);
    }
    expect(output).not.toContain('\n    at ');
  }, 60_000);
});
