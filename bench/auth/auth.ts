/**
 * `npm run bench:auth`: password-authentication throughput and latency through the gateway, next
 * to the raw Argon2id verify rate of this machine measured in the same run.
 *
 * It starts a whole controller (embedded PostgreSQL, in-process bus and cache by default; the real
 * servers when DATABASE_URL, NATS_URL and REDIS_URL are set, in a fresh database and isolated
 * stream / key prefix), creates the users (one by default) with a password, warms the login path
 * up, then alternates phases: raw, gateway, raw, gateway, …, raw, where
 *   - raw is `verifyPassword` (the service's own Argon2id check: t=1, m=3 MiB, p=4) at concurrency 16;
 *   - gateway is `POST /edge/client/v1/authenticate?method=password` over HTTPS (keep-alive) at
 *     concurrency 16, from a worker thread with one lean TLS connection per concurrent client (the
 *     client shares the machine, so it does as little as a client can).
 * Each gateway phase is compared with the mean of the raw phases on either side of it, so a machine
 * whose speed drifts during the run (a shared cloud host) skews the ratio less than one long phase
 * of each would. It prints each round's ratio, then logins/s, p50/p99 latency and the ratio over
 * all rounds (goal ≥ 0.8).
 *
 * BENCH_ROUNDS (default 3) is the number of gateway phases; BENCH_SECONDS (default 5) the length
 * of each phase; BENCH_CONCURRENCY (default 16); BENCH_USERS (default 1) the number of users the
 * concurrent clients log in as (client i as user i mod n); BENCH_WARMUP_SECONDS (default 10) the
 * login warm-up (long enough for V8 to have optimised the login path on a loaded 2-core machine:
 * the figures are those of a controller that has been up). With BENCH_PROFILE=<file>, a V8 CPU profile
 * of the controller's thread during the first gateway phase is written to that file.
 *
 * On Linux it also prints the CPU time per operation of each kind of phase (`cpu.ts`): the
 * controller's main thread, the load generator, the rest of the process (the hashing threads) and
 * PostgreSQL's local processes, and the idle time. Those move far less from run to run than the
 * throughput of a shared machine, so they show what a change to the login path saves.
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
import { loadGuardConfig } from '@ziti/gateway';
import { hashPassword, verifyPassword } from '@ziti/identity-auth/dist/domain/password.js';
import { createTestDatabase, deleteStream } from '@ziti/test-kit';
import { type CpuSplit, type CpuSum, addCpu, currentTid, emptyCpu, perOperation, sampleCpu } from './cpu.js';

const SECONDS = Number(process.env.BENCH_SECONDS || 5);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS || 3));
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 16);
const USERS = Math.max(1, Number(process.env.BENCH_USERS || 1));
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

/** Several phases as one: counts, errors, time and latencies added up. */
function merge(phases: Phase[]): Phase {
  return {
    count: phases.reduce((a, p) => a + p.count, 0),
    errors: phases.reduce((a, p) => a + p.errors, 0),
    seconds: phases.reduce((a, p) => a + p.seconds, 0),
    latenciesMs: phases.flatMap((p) => p.latenciesMs),
  };
}

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
    port: 0, routerCtrlPort: 0,
    servicePorts: 'ephemeral',
    adminPassword,
    // The gateway's login guards as `npm start` configures them (on by default; ZITI_AUTH_RATE_LIMITER, ZITI_LOGIN_FAILURES_*).
    guards: loadGuardConfig(process.env),
    // The bound on an identity's API sessions as `npm start` reads it (ZITI_MAX_API_SESSIONS_PER_IDENTITY, default 100).
    maxApiSessionsPerIdentity: process.env.ZITI_MAX_API_SESSIONS_PER_IDENTITY ? Number(process.env.ZITI_MAX_API_SESSIONS_PER_IDENTITY) : undefined,
    log: () => undefined,
    // Every line is still made (its cost is part of a login's), then dropped instead of flooding the output.
    logging: { destination: { write: () => true } },
  });
  const agent = new https.Agent({ ca: ctl.caCertPem, keepAlive: true, maxSockets: CONCURRENCY });
  const at = (p: string) => new URL(p, ctl.url);
  try {
    const admin = await request(agent, at('/edge/management/v1/authenticate?method=password'), 'POST', { username: ctl.adminUsername, password: adminPassword });
    if (admin.status !== 200) throw new Error(`admin login failed: ${admin.status} ${JSON.stringify(admin.json)}`);
    const token = admin.json.data.token as string;
    // BENCH_USERS identities, the concurrent clients spread over them (lane i logs in as user i mod n).
    const password = `Bench!${randomBytes(9).toString('base64url')}2`;
    const usernames: string[] = [];
    for (let u = 0; u < USERS; u++) {
      const username = `bench-${suffix}-${u}`;
      const identity = await request(agent, at('/edge/management/v1/identities'), 'POST', { name: username, type: 'User', isAdmin: false }, token);
      if (identity.status !== 201) throw new Error(`identity create failed: ${identity.status}`);
      const authn = await request(agent, at('/edge/management/v1/authenticators'), 'POST', { method: 'updb', identityId: identity.json.data.id, username, password }, token);
      if (authn.status !== 201) throw new Error(`authenticator create failed: ${authn.status}`);
      usernames.push(username);
    }

    const stored = await hashPassword(password);
    const rawOp = async () => verifyPassword(password, stored);

    console.log(
      `auth benchmark: ${CONCURRENCY} concurrent, ${ROUNDS} round(s) of ${SECONDS} s phases, ${os.cpus().length} CPU(s), ` +
        `${real ? 'real PostgreSQL/NATS/Redis' : 'embedded PostgreSQL, in-process bus and cache'}`,
    );
    const load = await startLoadWorker({ url: ctl.url, ca: ctl.caCertPem, usernames, password });
    const raws: Phase[] = [];
    const gws: Phase[] = [];
    const rawCpu = emptyCpu();
    const gwCpu = emptyCpu();
    /** Runs a phase and adds the CPU it used to `sum` (when /proc is there). */
    const measured = async (sum: CpuSum, phase: () => Promise<Phase>): Promise<Phase> => {
      const before = sampleCpu(load.tid());
      const p = await phase();
      const after = sampleCpu(load.tid());
      if (before && after) addCpu(sum, before, after, p.count);
      return p;
    };
    const rawPhase = () => measured(rawCpu, () => run(SECONDS * 1000, CONCURRENCY, rawOp));
    try {
      await load.phase(WARMUP_MS);
      raws.push(await rawPhase());
      for (let r = 0; r < ROUNDS; r++) {
        gws.push(await measured(gwCpu, () => load.phase(SECONDS * 1000, true)));
        raws.push(await rawPhase());
      }
    } finally {
      await load.close();
    }

    const f = (n: number, d = 1) => n.toFixed(d);
    const roundRaw = gws.map((_, r) => (rate(raws[r]!) + rate(raws[r + 1]!)) / 2);
    gws.forEach((gw, r) => {
      console.log(`round ${r + 1}: raw ${f(roundRaw[r]!)} /s, gateway ${f(rate(gw))} /s, ratio ${f(rate(gw) / roundRaw[r]!, 2)}`);
    });
    const rawRate = roundRaw.reduce((a, b) => a + b, 0) / roundRaw.length;
    const gw = merge(gws);
    const sorted = [...gw.latenciesMs].sort((a, b) => a - b);
    const ratio = rate(gw) / rawRate;
    console.log(`raw Argon2id verify:       ${f(rawRate)} /s (phases ${raws.map((p) => f(rate(p))).join(', ')})`);
    console.log(`gateway password logins:   ${f(rate(gw))} /s (${gw.count} ok, ${gw.errors} failed)`);
    console.log(`gateway login latency:     p50 ${f(percentile(sorted, 50))} ms, p99 ${f(percentile(sorted, 99))} ms`);
    console.log(`ratio gateway / raw:       ${f(ratio, 2)} (goal >= ${GOAL}: ${ratio >= GOAL ? 'met' : 'NOT met'})`);
    if (gwCpu.ops > 0 && rawCpu.ops > 0) {
      const split = (c: CpuSplit, load: boolean) =>
        `main thread ${f(c.main, 3)} ms, ${load ? `load generator ${f(c.load, 3)} ms, ` : ''}rest of the process ${f(c.rest, 3)} ms, ` +
        `PostgreSQL ${f(c.postgres, 3)} ms; idle ${f(c.idleCores, 2)} cores`;
      console.log(`CPU per raw verify:        ${split(perOperation(rawCpu), false)}`);
      console.log(`CPU per gateway login:     ${split(perOperation(gwCpu), true)}`);
    }
    if (gw.errors > 0) process.exitCode = 1;
  } finally {
    agent.destroy();
    await ctl.stop();
    await db?.drop().catch(() => undefined);
    if (real) await deleteStream(process.env.NATS_URL, `ZITI_BENCH_${suffix}`).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}

interface LoadJob {
  url: string;
  ca: string;
  usernames: string[];
  password: string;
}

type ToWorker = { run: number } | { close: true };
type FromWorker = { phase: Phase; tid?: number } | { closed: true };

interface LoadWorker {
  /** Runs the login load for `ms` in the worker; `measured` phases are profiled (BENCH_PROFILE). */
  phase(ms: number, measured?: boolean): Promise<Phase>;
  /** The worker's thread id, once it answered a phase (Linux). */
  tid(): number | undefined;
  close(): Promise<void>;
}

/** A worker thread that holds the lean connections and runs login phases on request. */
function startLoadWorker(job: LoadJob): Promise<LoadWorker> {
  const profile = process.env.BENCH_PROFILE ? profiler(process.env.BENCH_PROFILE) : undefined;
  const worker = new Worker(__filename, { workerData: job });
  let waiting: { resolve: (m: FromWorker) => void; reject: (err: Error) => void } | undefined;
  const fail = (err: Error) => {
    const w = waiting;
    waiting = undefined;
    w?.reject(err);
  };
  worker.on('message', (m: FromWorker) => {
    const w = waiting;
    waiting = undefined;
    w?.resolve(m);
  });
  worker.once('error', fail);
  worker.once('exit', (code) => fail(new Error(`load worker exited with ${code}`)));
  const ask = (m: ToWorker) =>
    new Promise<FromWorker>((resolve, reject) => {
      waiting = { resolve, reject };
      worker.postMessage(m);
    });
  let profiled = false;
  let tid: number | undefined;
  return Promise.resolve({
    async phase(ms, measured = false) {
      const profiling = measured && profile !== undefined && !profiled;
      if (profiling) await profile.start();
      const m = await ask({ run: ms });
      if (profiling) {
        profiled = true;
        await profile.stop();
      }
      if (!('phase' in m)) throw new Error('load worker: unexpected reply');
      tid = m.tid;
      return m.phase;
    },
    tid: () => tid,
    async close() {
      await ask({ close: true }).catch(() => undefined);
      await worker.terminate();
    },
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

function loadWorker(job: LoadJob): void {
  const url = new URL('/edge/client/v1/authenticate?method=password', job.url);
  const requests = job.usernames.map((username) => {
    const body = JSON.stringify({ username, password: job.password });
    return Buffer.from(
      `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  const connections = Array.from({ length: CONCURRENCY }, () => new LeanConnection(url, job.ca));
  const login = async (lane: number) => (await connections[lane]!.send(requests[lane % requests.length]!)) === 200;
  parentPort!.on('message', (m: ToWorker) => {
    if ('close' in m) {
      for (const c of connections) c.close();
      parentPort!.postMessage({ closed: true } satisfies FromWorker);
      return;
    }
    void run(m.run, CONCURRENCY, login).then((phase) => parentPort!.postMessage({ phase, tid: currentTid() } satisfies FromWorker));
  });
}

if (isMainThread) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  loadWorker(workerData as LoadJob);
}
