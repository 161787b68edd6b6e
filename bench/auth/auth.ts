/**
 * `npm run bench:auth`: password-authentication throughput and latency through the gateway, next
 * to the raw Argon2id verify rate of this machine measured in the same run.
 *
 * It starts a whole controller (embedded PostgreSQL, in-process bus and cache by default; the real
 * servers when DATABASE_URL, NATS_URL and REDIS_URL are set, in a fresh database and isolated
 * stream / key prefix), creates one user with a password, then:
 *   1. raw: `verifyPassword` (the service's own Argon2id check: t=1, m=3 MiB, p=4) at concurrency 16;
 *   2. gateway: `POST /edge/client/v1/authenticate?method=password` over HTTPS (keep-alive) at
 *      concurrency 16, after a warm-up, from a worker thread with one lean TLS connection per
 *      concurrent client (the client shares the machine, so it does as little as a client can);
 *   3. raw again; the raw rate is the mean of 1 and 3.
 * and prints logins/s, p50/p99 latency and the ratio gateway/raw (goal ≥ 0.8).
 *
 * BENCH_SECONDS (default 10) is the length of each measured phase; BENCH_CONCURRENCY (default 16);
 * BENCH_WARMUP_SECONDS (default 10) the login warm-up (long enough for V8 to have optimised the
 * login path on a loaded 2-core machine: the figures are those of a controller that has been up).
 * With BENCH_PROFILE=<file>, a V8 CPU profile of the controller's thread during the measured login
 * phase is written to that file.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import tls from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector';
import { writeFile } from 'node:fs/promises';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { startController } from '@ziti/controller';
import { hashPassword, verifyPassword } from '@ziti/identity-auth/dist/domain/password.js';
import { createTestDatabase } from '@ziti/test-kit';

const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 16);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_SECONDS ?? 10) * 1000;
const GOAL = 0.8;

interface Phase {
  count: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
}

/** Runs `op` in `concurrency` loops for `ms`; counts successes and records their latencies. */
async function run(ms: number, concurrency: number, op: (lane: number) => Promise<boolean>): Promise<Phase> {
  const latenciesMs: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const ok = await op(lane).catch(() => false);
        if (ok) latenciesMs.push(performance.now() - t0);
        else errors++;
      }
    }),
  );
  return { count: latenciesMs.length, errors, seconds: (performance.now() - start) / 1000, latenciesMs };
}

const rate = (p: Phase) => p.count / p.seconds;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function request(agent: https.Agent, url: URL, method: string, body: unknown, token?: string): Promise<{ status: number; json: any }> {
  const payload = Buffer.from(JSON.stringify(body ?? {}));
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method, agent, headers: { 'content-type': 'application/json', 'content-length': payload.length, ...(token ? { 'zt-session': token } : {}) } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = text;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ziti-bench-'));
  await chmod(dataDir, 0o755); // as root, the embedded PostgreSQL runs as its own user and must reach its directory
  const real = !!(process.env.DATABASE_URL && process.env.NATS_URL && process.env.REDIS_URL);
  const db = real ? await createTestDatabase(process.env.DATABASE_URL!, 'bench') : undefined;
  const suffix = randomBytes(4).toString('hex');
  const adminPassword = `Bench!${randomBytes(12).toString('base64url')}1`;
  const ctl = await startController({
    dataDir,
    databaseUrl: db?.url,
    natsUrl: real ? process.env.NATS_URL : undefined,
    redisUrl: real ? process.env.REDIS_URL : undefined,
    natsStream: real ? `ZITI_BENCH_${suffix}` : undefined,
    natsSubjectPrefix: real ? `bench.${suffix}` : undefined,
    cacheKeyPrefix: real ? `bench:${suffix}:` : undefined,
    listenHost: '127.0.0.1',
    port: 0,
    servicePorts: 'ephemeral',
    adminPassword,
    log: () => undefined,
  });
  const agent = new https.Agent({ ca: ctl.caCertPem, keepAlive: true, maxSockets: CONCURRENCY });
  const at = (p: string) => new URL(p, ctl.url);
  try {
    const admin = await request(agent, at('/edge/management/v1/authenticate?method=password'), 'POST', { username: ctl.adminUsername, password: adminPassword });
    if (admin.status !== 200) throw new Error(`admin login failed: ${admin.status} ${JSON.stringify(admin.json)}`);
    const token = admin.json.data.token as string;
    const username = `bench-${suffix}`;
    const password = `Bench!${randomBytes(9).toString('base64url')}2`;
    const identity = await request(agent, at('/edge/management/v1/identities'), 'POST', { name: username, type: 'User', isAdmin: false }, token);
    if (identity.status !== 201) throw new Error(`identity create failed: ${identity.status}`);
    const authn = await request(agent, at('/edge/management/v1/authenticators'), 'POST', { method: 'updb', identityId: identity.json.data.id, username, password }, token);
    if (authn.status !== 201) throw new Error(`authenticator create failed: ${authn.status}`);

    const stored = await hashPassword(password);
    const rawOp = async () => verifyPassword(password, stored);

    console.log(`auth benchmark: ${CONCURRENCY} concurrent, ${SECONDS} s per phase, ${os.cpus().length} CPU(s), ${real ? 'real PostgreSQL/NATS/Redis' : 'embedded PostgreSQL, in-process bus and cache'}`);
    const raw1 = await run(SECONDS * 1000, CONCURRENCY, rawOp);
    const gw = await loadFromWorker({ url: ctl.url, ca: ctl.caCertPem, username, password });
    const raw2 = await run(SECONDS * 1000, CONCURRENCY, rawOp);

    const rawRate = (rate(raw1) + rate(raw2)) / 2;
    const sorted = [...gw.latenciesMs].sort((a, b) => a - b);
    const ratio = rate(gw) / rawRate;
    const f = (n: number, d = 1) => n.toFixed(d);
    console.log(`raw Argon2id verify:       ${f(rawRate)} /s (phases ${f(rate(raw1))} and ${f(rate(raw2))})`);
    console.log(`gateway password logins:   ${f(rate(gw))} /s (${gw.count} ok, ${gw.errors} failed)`);
    console.log(`gateway login latency:     p50 ${f(percentile(sorted, 50))} ms, p99 ${f(percentile(sorted, 99))} ms`);
    console.log(`ratio gateway / raw:       ${f(ratio, 2)} (goal >= ${GOAL}: ${ratio >= GOAL ? 'met' : 'NOT met'})`);
    if (gw.errors > 0) process.exitCode = 1;
  } finally {
    agent.destroy();
    await ctl.stop();
    await db?.drop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}

interface LoadJob {
  url: string;
  ca: string;
  username: string;
  password: string;
}

/** Runs the login load (warm-up, then the measured phase) in a worker thread; resolves its phase. */
function loadFromWorker(job: LoadJob): Promise<Phase> {
  const profile = process.env.BENCH_PROFILE ? profiler(process.env.BENCH_PROFILE) : undefined;
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: job });
    worker.on('message', (m: { measuring: true } | { phase: Phase }) => {
      if ('measuring' in m) void profile?.start();
      else void (profile?.stop() ?? Promise.resolve()).then(() => resolve(m.phase), reject);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => code !== 0 && reject(new Error(`load worker exited with ${code}`)));
  });
}

/** A V8 CPU profile of this thread (the controller's), written to `file` when stopped. */
function profiler(file: string): { start(): Promise<void>; stop(): Promise<void> } {
  const session = new Session();
  session.connect();
  const post = (method: string) =>
    new Promise<any>((resolve, reject) => session.post(method, (err, res) => (err ? reject(err) : resolve(res))));
  let started: Promise<unknown> = Promise.resolve();
  return {
    async start() {
      started = post('Profiler.enable').then(() => post('Profiler.start'));
      await started;
    },
    async stop() {
      await started;
      const { profile } = await post('Profiler.stop');
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * One keep-alive HTTPS connection that sends a fixed request and reads whole responses by their
 * `content-length`. The load generator shares the machine with the controller, so it does the
 * least work a client can: one TLS socket, the request bytes built once, and only the status line
 * and length read back (a remote client's work costs the controller nothing).
 */
class LeanConnection {
  private socket: tls.TLSSocket | undefined;
  private buffered: Buffer = Buffer.alloc(0);
  private pending: { resolve: (status: number) => void; reject: (err: Error) => void } | undefined;

  constructor(
    private readonly url: URL,
    private readonly ca: string,
  ) {}

  private open(): Promise<tls.TLSSocket> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: this.url.hostname, port: Number(this.url.port), ca: this.ca }, () => resolve(socket));
      socket.setNoDelay(true);
      socket.on('data', (chunk: Buffer) => this.onData(chunk));
      socket.on('error', (err) => this.fail(err, reject));
      socket.on('close', () => this.fail(new Error('connection closed'), reject));
    });
  }

  private fail(err: Error, reject: (err: Error) => void): void {
    this.socket = undefined;
    this.buffered = Buffer.alloc(0);
    const p = this.pending;
    this.pending = undefined;
    p?.reject(err);
    reject(err);
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const headEnd = this.buffered.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const head = this.buffered.toString('latin1', 0, headEnd);
    const m = /\r\ncontent-length: *(\d+)/i.exec(head);
    const total = headEnd + 4 + (m ? Number(m[1]) : 0);
    if (this.buffered.length < total) return;
    this.buffered = this.buffered.subarray(total);
    const p = this.pending;
    this.pending = undefined;
    p?.resolve(Number(head.slice(9, 12)));
  }

  /** Sends `request` and resolves with the response's status. */
  async send(request: Buffer): Promise<number> {
    const socket = this.socket ?? (this.socket = await this.open());
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      socket.write(request);
    });
  }

  close(): void {
    this.socket?.destroy();
  }
}

async function loadWorker(job: LoadJob): Promise<void> {
  const url = new URL('/edge/client/v1/authenticate?method=password', job.url);
  const body = JSON.stringify({ username: job.username, password: job.password });
  const request = Buffer.from(
    `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const connections = Array.from({ length: CONCURRENCY }, () => new LeanConnection(url, job.ca));
  const login = async (lane: number) => (await connections[lane]!.send(request)) === 200;
  await run(WARMUP_MS, CONCURRENCY, login);
  parentPort!.postMessage({ measuring: true });
  const phase = await run(SECONDS * 1000, CONCURRENCY, login);
  for (const c of connections) c.close();
  parentPort!.postMessage({ phase });
}

if (isMainThread) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  loadWorker(workerData as LoadJob).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
