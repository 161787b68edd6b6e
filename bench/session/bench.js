#!/usr/bin/env node
// Session and posture benchmark (`npm run bench:session`).
//
// On the data set of the policy benchmark (bench/policy/src/seed.ts: 100,000 identities, 2,000
// services, 500 edge routers, 250 policies of each kind; BENCH_SCALE scales the identities), seeded
// into a fresh database next to the all-in-one controller running in a child process (on the real
// PostgreSQL, NATS and Redis: BENCH_DATABASE_URL / NATS_URL / REDIS_URL, else the local servers).
// BENCH_IDENTITIES (default 50) seeded identities that may dial through a shared edge router get a
// password and log in; then, through the gateway (HTTPS, keep-alive):
//   1. POST /sessions for distinct (API session, service) pairs (up to BENCH_SERVICES, default 100,
//      services per identity), concurrency BENCH_CONCURRENCY (default 32);
//   2. the same requests again (deduplicated: the existing session comes back);
//   3. POST /posture-response (OS, unchanged data, as SDKs resubmit it) and -bulk (3 items),
//      BENCH_POSTURE_REQUESTS (default 5000) each.
// It prints requests per second and p50/p90/p99 latency of each. Not part of `npm test`.
// BENCH_REUSE=1 keeps the seeded database between runs; BENCH_PROFILE=<dir> writes a CPU profile of
// the controller for each session phase (<dir>/sessions-new.cpuprofile, sessions-repeat...).
'use strict';

const { fork } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');
const { Agent, request } = require('undici');
const { rebuildDerivedLinks } = require('@ziti/policy');
const { DEFAULT_SHAPE, seed } = require('../policy/dist/seed.js');

const env = process.env;
const IDENTITIES = Number(env.BENCH_IDENTITIES || 50);
const SERVICES = Number(env.BENCH_SERVICES || 100);
const CONCURRENCY = Number(env.BENCH_CONCURRENCY || 32);
const POSTURE_REQUESTS = Number(env.BENCH_POSTURE_REQUESTS || 5000);
const SCALE = Number(env.BENCH_SCALE || 1);
// Identities whose session creates warm the controller up before the measured phases (not measured).
const WARMUP_IDENTITIES = Number(env.BENCH_WARMUP_IDENTITIES || 10);
// BENCH_REUSE=1 keeps the seeded database of an earlier BENCH_REUSE run (its sessions are cleared).
const REUSE = env.BENCH_REUSE === '1';
const REUSE_ADMIN_PASSWORD = 'Bench!reuse-admin-1';

/** The bench database: fresh, or (BENCH_REUSE) the seeded one of an earlier run when it is complete. */
async function benchDatabase(adminUrl, name) {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    if (REUSE) {
      const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount > 0;
      if (exists && (await seeded(url.toString()))) return { url: url.toString(), reused: true };
    }
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return { url: url.toString(), reused: false };
}

/** True when the database holds a completed seed (marked at its end); clears what a run leaves behind. */
async function seeded(url) {
  const pg = new Client({ connectionString: url });
  await pg.connect();
  try {
    const marked = await pg.query(`SELECT 1 FROM pg_tables WHERE schemaname = 'public' AND tablename = 'bench_seeded_v2'`);
    if (marked.rowCount === 0) return false;
    await pg.query('TRUNCATE "session"."sessions"');
    await pg.query(`DELETE FROM "identity_auth"."api_sessions"`);
    await pg.query(`DELETE FROM "identity_auth"."authenticators" WHERE "username" LIKE 'bench-dialer-%'`);
    return true;
  } finally {
    await pg.end();
  }
}

/** Starts the controller in a child process; resolves with its URL, CA and a stop function. */
function startChild(opts) {
  const child = fork(join(__dirname, 'controller-child.js'), [JSON.stringify(opts)], { stdio: 'inherit', execArgv: (env.BENCH_NODE_FLAGS || '').split(' ').filter(Boolean) });
  const ask = (message, answer) => new Promise((done) => {
    const on = (m) => {
      if (m !== answer) return;
      child.off('message', on);
      done();
    };
    child.on('message', on);
    child.send(message);
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({
      ...m,
      stop: () => new Promise((done) => { child.once('exit', done); child.send('stop'); }),
      // BENCH_PROFILE=<dir>: a CPU profile of the controller around each measured phase.
      profiled: async (name, fn) => {
        if (!env.BENCH_PROFILE) return fn();
        await ask('profile-start', 'profile-started');
        try {
          return await fn();
        } finally {
          await ask(`profile-stop ${name}`, 'profile-stopped');
        }
      },
    }));
    child.once('exit', (code) => reject(new Error(`the controller exited (${code})`)));
  });
}

/** Waits until every context's outbox is published, then a little more for the consumers to finish. */
async function settle(pg) {
  for (let i = 0; i < 1200; i++) {
    const { rows } = await pg.query(
      `SELECT sum(n)::int AS n FROM (${['identity_auth', 'pki_enrollment', 'policy', 'session', 'posture']
        .map((s) => `SELECT count(*) AS n FROM "${s}"."outbox_events" WHERE "published_at" IS NULL`)
        .join(' UNION ALL ')}) AS u`,
    );
    if (rows[0].n === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 3000));
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Runs `jobs` (functions returning promises) `concurrency` at a time; returns throughput and latencies. */
async function load(jobs, concurrency) {
  const latencies = [];
  let next = 0;
  let failures = 0;
  const firstErrors = [];
  const started = process.hrtime.bigint();
  async function worker() {
    while (next < jobs.length) {
      const job = jobs[next++];
      const t0 = process.hrtime.bigint();
      try {
        await job();
      } catch (err) {
        failures++;
        if (firstErrors.length < 3) firstErrors.push(String(err.message ?? err).slice(0, 300));
      }
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return {
    requests: jobs.length,
    failures,
    firstErrors,
    seconds,
    perSecond: jobs.length / seconds,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
  };
}

function report(name, r) {
  const line = `${name.padEnd(44)} ${String(r.requests).padStart(6)} req  ${r.perSecond.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(1)} ms  p90 ${r.p90.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms${r.failures ? `  FAILURES ${r.failures}: ${r.firstErrors.join(' | ')}` : ''}`;
  console.log(line);
}

async function main() {
  const adminUrl = env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
  const { url: databaseUrl, reused } = await benchDatabase(adminUrl, 'ziti_bench_session');
  const dataDir = mkdtempSync(join(tmpdir(), 'ziti-bench-session-'));
  const admin = { username: 'admin', password: REUSE ? REUSE_ADMIN_PASSWORD : `Bench!${randomBytes(12).toString('hex')}` };
  const ctl = await startChild({
    dataDir,
    databaseUrl,
    natsUrl: env.NATS_URL || 'nats://127.0.0.1:4222',
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
    listenHost: '127.0.0.1',
    port: 0, routerCtrlPort: 0,
    adminUsername: admin.username,
    adminPassword: admin.password,
    // BENCH_REUSE: the stored PKI keys are sealed with it, so it stays the same across runs.
    internalSecret: REUSE ? 'bench-reuse-internal-secret-0123456789abcdef' : randomBytes(32).toString('hex'),
  });
  const dispatcher = new Agent({ connect: { ca: ctl.caCertPem }, connections: CONCURRENCY * 2, pipelining: 1, keepAliveTimeout: 30_000 });
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();

  async function call(method, path, body, token, expected) {
    const res = await request(`${ctl.url}${path}`, {
      method,
      dispatcher,
      headers: { 'content-type': 'application/json', ...(token ? { 'zt-session': token } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (expected !== undefined && res.statusCode !== expected) throw new Error(`${method} ${path} → ${res.statusCode} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : {};
  }
  const M = '/edge/management/v1';
  const C = '/edge/client/v1';

  try {
    const adminToken = (await call('POST', `${M}/authenticate?method=password`, admin, undefined, 200)).data.token;
    const mgmt = (method, path, body, expected = 201) => call(method, `${M}${path}`, body, adminToken, expected);
    const login = async (identityId, i) => {
      const creds = { username: `bench-dialer-${i}`, password: `Pw!${randomBytes(8).toString('hex')}` };
      await mgmt('POST', '/authenticators', { method: 'updb', identityId, ...creds });
      return (await call('POST', `${C}/authenticate?method=password`, creds, undefined, 200)).data.token;
    };

    const shape = { ...DEFAULT_SHAPE, identities: Math.round(DEFAULT_SHAPE.identities * SCALE), fanoutIdentities: Math.round(DEFAULT_SHAPE.fanoutIdentities * SCALE) };
    if (reused) {
      console.log('data set: reused from an earlier BENCH_REUSE run');
    } else {
      const measured = (await mgmt('POST', '/identities', { name: 'bench-user', type: 'User', isAdmin: false })).data.id;
      const t = Date.now();
      await seed(pg, shape, measured, (m) => console.log(`[seed] ${m}`));
      await rebuildDerivedLinks(databaseUrl);
      await pg.query('VACUUM ANALYZE');
      if (REUSE) await pg.query('CREATE TABLE "public"."bench_seeded_v2" ()');
      console.log(`data set (${shape.identities} identities, ${shape.services} services, ${shape.edgeRouters} edge routers, ${shape.policiesPerKind} policies of each kind) seeded in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    }

    // Seeded identities that may dial services through a shared edge router, with those services.
    const { rows } = await pg.query(
      `SELECT s.identity_id, (array_agg(s.service_id ORDER BY s.service_id))[1:$2] AS services
       FROM policy.identity_services s
       WHERE s.dial > 0 AND s.identity_id LIKE 'bi%' AND s.identity_id < 'bi005000'
         AND EXISTS (SELECT 1 FROM policy.identity_edge_routers ier JOIN policy.service_edge_routers ser ON ser.router_id = ier.router_id
                     WHERE ier.identity_id = s.identity_id AND ser.service_id = s.service_id)
       GROUP BY s.identity_id ORDER BY count(*) DESC LIMIT $1`,
      [IDENTITIES + WARMUP_IDENTITIES, SERVICES],
    );
    const dialers = [];
    for (const [i, r] of rows.entries()) dialers.push({ token: await login(r.identity_id, i), services: r.services });
    const pairs = dialers.slice(WARMUP_IDENTITIES).reduce((n, d) => n + d.services.length, 0);
    console.log(`${dialers.length - WARMUP_IDENTITIES} dialing identities logged in; ${pairs} (API session, service) pairs; concurrency ${CONCURRENCY}`);
    await settle(pg);

    // Warm-up on spare identities (every pooled connection prepares its statements, signing key, caches, JIT).
    const spare = dialers.splice(0, WARMUP_IDENTITIES);
    await load(spare.flatMap((d) => d.services.map((s) => () => call('POST', `${C}/sessions`, { serviceId: s }, d.token, 201))), CONCURRENCY);

    if (env.BENCH_BASELINE) {
      report('GET /version (anonymous, gateway only)', await load(Array.from({ length: 5000 }, () => () => call('GET', `${C}/version`, undefined, undefined, 200)), CONCURRENCY));
      report('GET /current-api-session/service-updates', await load(Array.from({ length: 5000 }, (_, i) => () => call('GET', `${C}/current-api-session/service-updates`, undefined, dialers[i % dialers.length].token, 200)), CONCURRENCY));
    }
    const creates = dialers.flatMap((d) => d.services.map((s) => () => call('POST', `${C}/sessions`, { serviceId: s, type: 'Dial' }, d.token, 201)));
    for (let i = creates.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [creates[i], creates[j]] = [creates[j], creates[i]];
    }
    report('POST /sessions (new sessions)', await ctl.profiled('sessions-new', () => load(creates, CONCURRENCY)));
    report('POST /sessions (repeat: deduplicated)', await ctl.profiled('sessions-repeat', () => load(creates, CONCURRENCY)));

    const postures = Array.from({ length: POSTURE_REQUESTS }, (_, i) => () =>
      call('POST', `${C}/posture-response`, { id: 'os', typeId: 'OS', type: 'Linux', version: '6.1.0', build: '1' }, dialers[i % dialers.length].token, 201));
    report('POST /posture-response (unchanged data)', await load(postures, CONCURRENCY));
    const bulk = Array.from({ length: POSTURE_REQUESTS }, (_, i) => () =>
      call('POST', `${C}/posture-response-bulk`, [
        { id: 'os', typeId: 'OS', type: 'Linux', version: '6.1.0', build: '1' },
        { id: 'domain', typeId: 'DOMAIN', domain: 'corp.example' },
        { id: 'mac', typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:ff'] },
      ], dialers[i % dialers.length].token, 200));
    report('POST /posture-response-bulk (3 items)', await load(bulk, CONCURRENCY));
  } finally {
    await pg.end().catch(() => undefined);
    await dispatcher.close().catch(() => undefined);
    await ctl.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
