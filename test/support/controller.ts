import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ControllerOptions, type RunningController, startController } from '@ziti/controller/dist/controller.js';
import { createTestDatabase, deleteStream, testInfra, type TestDatabase, type TestInfra } from '@ziti/test-kit';
import { auth, EdgeApi } from './clients.js';
import { HttpClient } from './http.js';

/**
 * The black-box harness: each test file starts ONE whole controller (gateway + six services) on an
 * ephemeral port, in a fresh database and data directory, against the real NATS and Redis of
 * `testInfra()`, and stops it (dropping the database) at the end.
 */

export type { ControllerOptions, RunningController };

export interface TestController {
  running: RunningController;
  options: ControllerOptions;
  infra: TestInfra;
  url: string;
  http: HttpClient;
  admin: { username: string; password: string };
  /** The text lines of the controller's `log` hook (traced requests, the start; printed when ZITI_TEST_LOG=1). */
  logs: string[];
  /** Every JSON line of the controller's structured log, as written (printed when ZITI_TEST_LOG=1). */
  logLines: string[];
  /** `logLines` from index `from` on, parsed. */
  logRecords(from?: number): Record<string, unknown>[];
  /** Logs the default admin in on the given API; fails the test unless it works. */
  adminSession(api?: 'client' | 'management'): Promise<EdgeApi>;
  stop(): Promise<void>;
}

/** A strong random password that satisfies any reasonable policy. */
export function strongPassword(): string {
  return `Zt!${randomBytes(18).toString('base64url')}9a`;
}

export async function startTestController(extra: Partial<ControllerOptions> = {}): Promise<TestController> {
  const infra = await testInfra();
  const db: TestDatabase = await createTestDatabase(infra.databaseUrl, 'bbt');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ziti-bbt-'));
  const logs: string[] = [];
  const logLines: string[] = [];
  const admin = { username: 'admin', password: strongPassword() };
  // Each controller gets its own NATS stream, subject prefix and cache key prefix, so durable
  // consumers never see another test controller's events (other files, earlier runs).
  const id = `${process.pid}${randomBytes(4).toString('hex')}`;
  const options: ControllerOptions = {
    natsStream: `ZT_BBT_${id}`,
    natsSubjectPrefix: `zt.bbt.${id}`,
    cacheKeyPrefix: `zt:bbt:${id}:`,
    dataDir,
    databaseUrl: db.url,
    natsUrl: infra.natsUrl,
    redisUrl: infra.redisUrl,
    listenHost: '127.0.0.1',
    port: 0,
    routerCtrlPort: 0,
    servicePorts: 'ephemeral',
    adminUsername: admin.username,
    adminPassword: admin.password,
    internalSecret: randomBytes(32).toString('hex'),
    serverKeySecret: randomBytes(32).toString('hex'),
    // No OpenZiti-format event stream unless a test asks for one (events.test.ts).
    events: null,
    log: (m) => {
      logs.push(m);
      if (process.env.ZITI_TEST_LOG === '1') console.log(`[controller] ${m}`);
    },
    // The structured log (access lines, server errors, background failures) is kept here, not printed.
    logging: {
      destination: {
        write: (line: string) => {
          logLines.push(line);
          if (process.env.ZITI_TEST_LOG === '1') process.stdout.write(line);
        },
      },
    },
    ...extra,
  };
  const cleanup = async () => {
    await db.drop().catch(() => undefined);
    await deleteStream(options.natsUrl, options.natsStream).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  };
  let running: RunningController;
  try {
    running = await startController(options);
  } catch (err) {
    await cleanup();
    throw err;
  }
  const http = new HttpClient(running.url, running.caCertPem);
  return {
    running,
    options,
    infra,
    url: running.url,
    http,
    admin,
    logs,
    logLines,
    logRecords: (from = 0) => logLines.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>),
    async adminSession(api = 'management') {
      const { res, token, session } = await auth.login(http, admin.username, admin.password, api);
      if (res.status !== 200 || !token) throw new Error(`admin login failed: ${res.status} ${res.text.slice(0, 500)}`);
      return session;
    },
    async stop() {
      http.close();
      try {
        await running.stop();
      } finally {
        await cleanup();
      }
    },
  };
}

/**
 * Registers `beforeAll`/`afterAll` that start and stop one controller for the test file, and
 * returns a getter for it (valid inside tests and hooks).
 */
export function useController(extra: Partial<ControllerOptions> = {}): () => TestController {
  let ctl: TestController | undefined;
  beforeAll(async () => {
    ctl = await startTestController(extra);
  }, 120_000);
  afterAll(async () => {
    await ctl?.stop();
  }, 60_000);
  return () => {
    if (!ctl) throw new Error('the controller did not start (see the beforeAll error)');
    return ctl;
  };
}

