import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { auth, type EdgeApi } from '../support/clients.js';
import { policyBuilder } from '../support/clients-policy.js';
import { createUser, loginAs } from '../support/clients-identity.js';
import { type IntegrityReplica, contextSql, findings, results, run, startIntegrityReplica, waitForEnd } from '../support/clients-integrity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectSuccess } from '../support/envelope.js';

/**
 * The data integrity operations (reference §6.14) as an API: the results document before, during
 * and after a run, admin only, one run at a time across gateway replicas (429 RATE_LIMITED), the
 * snapshot a fix takes first (and a fix that repairs nothing when it cannot take one), and the
 * 1,000-result cap. Each kind of drift and its repair is in data-integrity-repairs.test.ts.
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let replica: IntegrityReplica;
let viaReplica: EdgeApi;

/** An identity↔edge-router pair no edge router policy gives (a drift the check finds in policy's own step). */
async function plantPair(identityId: string, routerId: string): Promise<void> {
  await contextSql(ctl(), 'policy', `INSERT INTO "identity_edge_routers" ("identity_id", "router_id", "n") VALUES ($1, $2, 1)`, [identityId, routerId]);
}
const pairCount = async (identityId: string) =>
  Number((await contextSql(ctl(), 'policy', `SELECT count(*)::int AS n FROM "identity_edge_routers" WHERE "identity_id" = $1`, [identityId]))[0].n);

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  replica = await startIntegrityReplica(ctl());
  const login = await auth.login(replica.gateway.http, ctl().admin.username, ctl().admin.password, 'management');
  expectSuccess(login.res);
  viaReplica = login.session;
}, 60_000);

afterAll(async () => {
  await replica?.gateway.stop();
});

describe('/database/data-integrity-results', () => {
  it('shows no run before the first one: nulls for the times and the error, no results, limit -1', async () => {
    const res = await results(mgmt);
    expectSuccess(res);
    expect(res.body).toEqual({
      data: { inProgress: false, fixingErrors: false, tooManyErrors: false, startTime: null, endTime: null, error: null, results: [] },
      meta: { pagination: { limit: -1, offset: 0, totalCount: 0 } },
    });
  });

  it('reports nothing for a consistent database with identities, services, routers and policies', async () => {
    const build = policyBuilder(mgmt);
    const user = await build.identity(['integ-clean']);
    const svc = await build.service(['integ-clean']);
    const er = await build.edgeRouter(['integ-clean']);
    await build.servicePolicy('Dial', [`@${svc}`], ['#integ-clean']);
    await build.edgeRouterPolicy([`@${er}`], [`@${user.id}`]);
    await build.serviceEdgeRouterPolicy(['#all'], ['#integ-clean']);
    const before = Date.now();
    const r = await run(mgmt);
    expect(r).toMatchObject({ inProgress: false, fixingErrors: false, tooManyErrors: false, error: null, results: [] });
    expect(Date.parse(r.startTime!)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(r.endTime!)).toBeGreaterThanOrEqual(Date.parse(r.startTime!));
    const res = await results(mgmt);
    expect(res.body.meta).toEqual({ pagination: { limit: -1, offset: 0, totalCount: 0 } });
  });

  it('is for admins only: a non-admin and a missing session get 401 on all three operations', async () => {
    const user = await createUser(mgmt, { isAdmin: false });
    const { session: plain } = await loginAs(ctl().http, user);
    const anonymous = mgmt.withToken(undefined);
    for (const api of [plain, anonymous]) {
      expectError(await api.call('POST', '/database/check-data-integrity'), 401, 'UNAUTHORIZED');
      expectError(await api.call('POST', '/database/fix-data-integrity'), 401, 'UNAUTHORIZED');
      expectError(await results(api), 401, 'UNAUTHORIZED');
    }
    expectSuccess(await results(mgmt));
  });

  it('runs one at a time across replicas, and shows what a run found so far while it runs', async () => {
    await plantPair('integ-ghost-1', 'integ-router-1');
    const held = replica.holdAfter('own:policy');
    expect((await viaReplica.call('POST', '/database/check-data-integrity')).status).toBe(202);
    await held.reached;
    try {
      expectError(await mgmt.call('POST', '/database/check-data-integrity'), 429, 'RATE_LIMITED');
      expectError(await mgmt.call('POST', '/database/fix-data-integrity'), 429, 'RATE_LIMITED');
      expectError(await viaReplica.call('POST', '/database/check-data-integrity'), 429, 'RATE_LIMITED');
      for (const reader of [mgmt, viaReplica]) {
        const res = await results(reader);
        expectSuccess(res);
        expect(res.body.data).toMatchObject({ inProgress: true, fixingErrors: false, endTime: null, error: null });
        expect(typeof res.body.data.startTime).toBe('string');
        expect(findings(res.body.data, 'integ-ghost-1', 'integ-router-1', 'identity_edge_routers')).toEqual([
          { description: 'policy: identity_edge_routers pair (identity integ-ghost-1, edge router integ-router-1) has n 1; the policy links give n 0', fixed: false },
        ]);
      }
    } finally {
      held.release();
    }
    const done = await waitForEnd(mgmt);
    expect(findings(done, 'integ-ghost-1')).toEqual([expect.objectContaining({ fixed: false })]);
    expect(await pairCount('integ-ghost-1')).toBe(1);
  });

  it('fix takes a snapshot first (the drift still there when it is taken), then repairs', async () => {
    await plantPair('integ-ghost-2', 'integ-router-2');
    replica.snapshot.probe = () => pairCount('integ-ghost-2');
    const taken = replica.snapshot.taken.length;
    const r = await run(viaReplica, true, mgmt);
    expect(replica.snapshot.taken.slice(taken)).toEqual([1]);
    expect(r).toMatchObject({ fixingErrors: true, error: null, tooManyErrors: false });
    expect(findings(r, 'integ-ghost-2')).toEqual([expect.objectContaining({ fixed: true })]);
    expect(findings(r, 'integ-ghost-1')).toEqual([expect.objectContaining({ fixed: true })]);
    expect(await pairCount('integ-ghost-2')).toBe(0);
    expect((await run(mgmt)).results).toEqual([]);
  });

  it('fix repairs nothing when the snapshot fails; the controller itself writes a snapshot file first', async () => {
    await plantPair('integ-ghost-3', 'integ-router-3');
    replica.snapshot.failWith = 'disk full';
    try {
      const r = await run(viaReplica, true);
      expect(r).toMatchObject({ inProgress: false, fixingErrors: true, results: [] });
      expect(r.error).toContain('snapshot failed');
      expect(r.error).toContain('disk full');
      expect(await pairCount('integ-ghost-3')).toBe(1);
    } finally {
      replica.snapshot.failWith = null;
    }
    // The controller's own gateway takes a real snapshot (the snapshotter of POST /database/snapshot,
    // without its once-a-minute limit) before it repairs.
    const dir = join(ctl().options.dataDir, 'snapshots');
    const files = () => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.jsonl.gz')) : []);
    const before = files().length;
    const r = await run(mgmt, true);
    expect(r).toMatchObject({ fixingErrors: true, error: null });
    expect(findings(r, 'integ-ghost-3')).toEqual([expect.objectContaining({ fixed: true })]);
    expect(files()).toHaveLength(before + 1);
    expect(await pairCount('integ-ghost-3')).toBe(0);
  });

  it('reports at most 1,000 results, then tooManyErrors', async () => {
    await contextSql(
      ctl(),
      'policy',
      `INSERT INTO "identity_edge_routers" ("identity_id", "router_id", "n") SELECT 'integ-many', 'r' || g, 1 FROM generate_series(1, 1100) g`,
    );
    const r = await run(mgmt);
    expect(r.error).toBeNull();
    expect(r.results).toHaveLength(1000);
    expect(r.tooManyErrors).toBe(true);
    expect((await results(mgmt)).body.meta.pagination).toEqual({ limit: -1, offset: 0, totalCount: 1000 });
    const fixed = await run(viaReplica, true);
    expect(fixed.tooManyErrors).toBe(true);
    expect(fixed.results.every((x) => x.fixed)).toBe(true);
    expect(await pairCount('integ-many')).toBe(0);
    expect(await run(mgmt)).toMatchObject({ tooManyErrors: false, results: [] });
  });
});
