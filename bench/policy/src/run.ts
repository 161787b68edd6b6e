import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { rebuildDerivedLinks } from '@ziti/policy';
import { Client } from 'pg';
import { Http, percentile } from './http.js';
import { DEFAULT_SHAPE, type SeedShape, type Seeded, seed } from './seed.js';

/**
 * `npm run bench:policy`: seeds the large data set straight into a separate database, starts the
 * all-in-one controller on it (in a child process, `startController` of apps/controller), and
 * measures through the gateway (HTTPS):
 * - client `GET /services?limit=500` for a non-admin identity that reaches hundreds of services;
 * - management `GET /identities?filter=name contains "…"&limit=10`;
 * - management `GET /service-policies/{id}/identities`;
 * - the fan-out of a service policy update that grants 10,000 identities a service: until the
 *   update answered, until sampled identities (the last one included) list the service, and until
 *   the `service-access.changed` events of the change are published.
 *
 * Environment: `BENCH_DATABASE_URL` (an admin connection; default postgresql://postgres@127.0.0.1:5432/postgres),
 * `BENCH_ITERATIONS` (default 200), `BENCH_SCALE` (fraction of the data set, default 1),
 * `BENCH_REUSE=1` (measure again on the data set of the previous run, skipping the seeding).
 */

const GOALS = { services: 60, identities: 50, fanoutMs: 5000 };

/** Passwords of the benchmark's own logins, stable across runs so BENCH_REUSE can log in again. */
const passwordOf = (name: string) => `Pw!${createHash('sha256').update(`ziti-bench-policy:${name}`).digest('base64url').slice(0, 16)}A1`;

function log(m: string): void {
  console.log(`[bench] ${m}`);
}

async function freshDatabase(adminUrl: string, name: string): Promise<string> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function measure(label: string, n: number, fn: (i: number) => Promise<{ status: number; ms: number }>): Promise<number[]> {
  for (let i = 0; i < Math.min(20, n); i++) await fn(i);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await fn(i);
    if (r.status !== 200) throw new Error(`${label}: status ${r.status}`);
    samples.push(r.ms);
  }
  return samples;
}

async function main(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? '1');
  const iterations = Number(process.env.BENCH_ITERATIONS ?? '200');
  const shape: SeedShape = {
    ...DEFAULT_SHAPE,
    identities: Math.round(DEFAULT_SHAPE.identities * scale),
    fanoutIdentities: Math.round(DEFAULT_SHAPE.fanoutIdentities * scale),
  };
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const reuse = process.env.BENCH_REUSE === '1';
  const databaseUrl = reuse ? (() => { const u = new URL(adminUrl); u.pathname = '/ziti_bench_policy'; return u.toString(); })() : await freshDatabase(adminUrl, 'ziti_bench_policy');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ziti-bench-policy-'));
  const adminPassword = passwordOf('admin');
  log(`database ${databaseUrl.replace(/\/\/[^@]*@/, '//')}; ${JSON.stringify(shape)}`);

  const child = fork(path.join(__dirname, 'controller-child.js'), [JSON.stringify({ dataDir, databaseUrl, port: 0, routerCtrlPort: 0, listenHost: '127.0.0.1', adminUsername: 'admin', adminPassword, internalSecret: passwordOf('internal-secret') })]);
  const ctl = await new Promise<{ url: string; caCertPem: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { url: string; caCertPem: string }));
    child.once('exit', (code) => reject(new Error(`the controller exited (${code})`)));
  });
  const stopController = () => new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.send('stop');
  });
  const http = new Http(ctl.url, ctl.caCertPem);
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const admin = await http.login('admin', adminPassword, 'management');
    const mgmt = (method: string, p: string, body?: unknown) => http.request(method, `/edge/management/v1${p}`, admin, body);
    /** An identity that can log in: created through the API (or found, when reusing the data set). */
    const login = async (identityId: string | null, name: string) => {
      let id = identityId;
      if (!id) {
        const found = await mgmt('GET', `/identities?filter=${encodeURIComponent(`name = "${name}"`)}`);
        id = found.body.data[0]?.id ?? ((await mgmt('POST', '/identities', { name, type: 'User', isAdmin: false })).body.data.id as string);
      }
      const username = `login-${name}`;
      const a = await mgmt('POST', '/authenticators', { method: 'updb', identityId: id, username, password: passwordOf(username) });
      if (a.status !== 201 && a.status !== 409 && a.status !== 400) throw new Error(`authenticator for ${name}: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
      return { id: id!, token: await http.login(username, passwordOf(username), 'client') };
    };
    const measured = await login(null, 'bench-user');

    let t = Date.now();
    let seeded: Seeded;
    if (reuse) {
      seeded = { fanoutPolicyId: 'bsp-fanout', fanoutServiceIds: ['bs-fanout-0', 'bs-fanout-1'], fanoutIdentityIds: (await pg.query(`SELECT id FROM policy.identities WHERE 'fanout' = ANY(role_attributes) ORDER BY id`)).rows.map((r) => r.id) };
      const reset = await mgmt('PATCH', `/service-policies/${seeded.fanoutPolicyId}`, { serviceRoles: ['@bs-fanout-0'] });
      if (reset.status !== 200) throw new Error(`fan-out reset: ${reset.status}`);
      log('reusing the data set of the previous run');
    } else {
      seeded = await seed(pg, shape, measured.id, log);
      log(`seeded in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      t = Date.now();
      await rebuildDerivedLinks(databaseUrl);
    }
    await pg.query('VACUUM ANALYZE');
    // The attribute-selected service policy with the most identities, for /service-policies/{id}/identities.
    const largePolicyId = (
      await pg.query(
        `SELECT l.policy_id AS id FROM policy.sp_identities l JOIN policy.service_policies p ON p.id = l.policy_id
         WHERE NOT ('#all' = ANY(p.identity_roles)) AND p.id LIKE 'bsp0%' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
      )
    ).rows[0].id as string;
    const sizes = await pg.query(
      `SELECT (SELECT count(*) FROM policy.identity_services) AS pairs, (SELECT count(*) FROM policy.identity_edge_routers) AS er_pairs,
              (SELECT count(*) FROM policy.identity_services WHERE identity_id = $1) AS user_services,
              (SELECT count(*) FROM policy.sp_identities WHERE policy_id = $2) AS large_policy_identities`,
      [measured.id, largePolicyId],
    );
    const s = sizes.rows[0];
    log(`derived links ${reuse ? 'kept' : `rebuilt in ${((Date.now() - t) / 1000).toFixed(1)} s`}: ${s.pairs} identity↔service pairs, ${s.er_pairs} identity↔router pairs`);
    log(`the measured identity reaches ${s.user_services} services; ${largePolicyId} selects ${s.large_policy_identities} identities`);

    // Sampled fan-out identities that do not reach the target service yet (the last such one
    // included) log in before the update.
    const target = seeded.fanoutServiceIds[1];
    const without = (
      await pg.query(
        `SELECT id FROM unnest($1::text[]) AS x(id) WHERE NOT EXISTS (SELECT 1 FROM policy.identity_services s WHERE s.identity_id = x.id AND s.service_id = $2) ORDER BY id`,
        [seeded.fanoutIdentityIds, target],
      )
    ).rows.map((r) => r.id as string);
    const sampleIds = [without[0], without[Math.floor(without.length / 2)], without.at(-1)!];
    const before = Number((await pg.query(`SELECT count(*) AS n FROM policy.identity_services WHERE service_id = $1`, [target])).rows[0].n);
    const samples: string[] = [];
    for (const id of sampleIds) samples.push((await login(id, `sample-${id}`)).token);

    const results: { name: string; p50: number; p99: number; goal: string; ok: boolean }[] = [];
    const record = (name: string, xs: number[], goal: number) => {
      const p99 = percentile(xs, 99);
      results.push({ name, p50: percentile(xs, 50), p99, goal: `p99 < ${goal} ms`, ok: p99 < goal });
    };

    const first = await http.request('GET', '/edge/client/v1/services?limit=500', measured.token);
    log(`client service list: ${first.body.data.length} of ${first.body.meta.pagination.totalCount} services per page`);
    record('client GET /services?limit=500', await measure('services', iterations, () => http.request('GET', '/edge/client/v1/services?limit=500', measured.token)), GOALS.services);
    record(
      'GET /identities?filter=name contains "…"&limit=10',
      await measure('identities', iterations, (i) =>
        mgmt('GET', `/identities?filter=${encodeURIComponent(`name contains "ty-0${String((i * 7919) % 10000).padStart(4, '0')}"`)}&limit=10`),
      ),
      GOALS.identities,
    );
    const spIdentities = await measure('sp identities', iterations, () => mgmt('GET', `/service-policies/${largePolicyId}/identities`));
    results.push({ name: 'GET /service-policies/{id}/identities', p50: percentile(spIdentities, 50), p99: percentile(spIdentities, 99), goal: '(no goal)', ok: true });

    // Fan-out: grant the fan-out identities a second service.
    const visible = (token: string) => http.request('GET', `/edge/client/v1/services?filter=${encodeURIComponent(`id = "${target}"`)}`, token).then((r) => r.body.data.length === 1);
    for (const tok of samples) if (await visible(tok)) throw new Error('fan-out service visible before the update');
    const start = Date.now();
    const patch = await mgmt('PATCH', `/service-policies/${seeded.fanoutPolicyId}`, { serviceRoles: seeded.fanoutServiceIds.map((id) => `@${id}`) });
    if (patch.status !== 200) throw new Error(`fan-out update: ${patch.status} ${JSON.stringify(patch.body)}`);
    const answered = Date.now() - start;
    const pending = new Set(samples);
    while (pending.size > 0) {
      for (const tok of [...pending]) if (await visible(tok)) pending.delete(tok);
      if (Date.now() - start > 60_000) throw new Error('fan-out: not visible after 60 s');
    }
    const seen = Date.now() - start;
    for (;;) {
      const r = await pg.query(`SELECT count(*) AS n FROM policy.outbox_events WHERE published_at IS NULL AND type = 'service-access.changed'`);
      if (Number(r.rows[0].n) === 0) break;
      if (Date.now() - start > 60_000) throw new Error('fan-out: events not published after 60 s');
      await new Promise((res) => setTimeout(res, 20));
    }
    const published = Date.now() - start;
    const granted = await pg.query(`SELECT count(*) AS n FROM policy.identity_services WHERE service_id = $1`, [target]);

    console.log('');
    console.log(`Policy benchmark (${shape.identities} identities, ${shape.services} services, ${shape.edgeRouters} edge routers, ${shape.policiesPerKind} policies of each kind; ${iterations} requests each)`);
    console.log('| Measurement | p50 (ms) | p99 (ms) | Goal | Met |');
    console.log('|---|---|---|---|---|');
    for (const r of results) console.log(`| ${r.name} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.goal} | ${r.ok ? 'yes' : 'NO'} |`);
    console.log(`| Fan-out: ${seeded.fanoutIdentityIds.length} identities granted a service (${Number(granted.rows[0].n) - before} new pairs): update answered | ${answered} | | | |`);
    console.log(`| Fan-out: last sampled identity lists the service | ${seen} | | < ${GOALS.fanoutMs} ms | ${seen < GOALS.fanoutMs ? 'yes' : 'NO'} |`);
    console.log(`| Fan-out: every service-access.changed event published | ${published} | | | |`);
  } finally {
    await pg.end();
    http.close();
    await stopController();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
