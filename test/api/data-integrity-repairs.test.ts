import { auth, type EdgeApi } from '../support/clients.js';
import { ids, policyBuilder, unique } from '../support/clients-policy.js';
import { LONG_AGO, type IntegrityReplica, type IntegrityResults, contextSql, findings, run, startIntegrityReplica } from '../support/clients-integrity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectSuccess } from '../support/envelope.js';
import { RowCounter } from '../support/fuzz-db.js';

/**
 * Each kind of drift the data integrity check knows, made directly in the database as a bug or a
 * crash would leave it: reported by a check (which changes nothing), repaired by a fix (reported
 * `fixed: true`, the state right again), and a clean check afterwards.
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let replica: IntegrityReplica;
let fixer: EdgeApi;
let rows: RowCounter;
let build: ReturnType<typeof policyBuilder>;

const sql = (schema: string, text: string, params: unknown[] = []) => contextSql(ctl(), schema, text, params);
const serviceIdsOf = async (identityId: string) => ids(await mgmt.call('GET', `/identities/${identityId}/services?limit=100`));

/** A check that must change nothing: every table's row count is the same after it. */
async function checkOnly(): Promise<IntegrityResults> {
  const before = await rows.counts();
  const r = await run(mgmt);
  expect(await rows.counts()).toEqual(before);
  expect(r).toMatchObject({ fixingErrors: false, error: null });
  return r;
}

async function fix(): Promise<IntegrityResults> {
  const r = await run(fixer, true, mgmt);
  expect(r).toMatchObject({ fixingErrors: true, error: null });
  return r;
}

/** The one finding whose description is exactly `description`, with its `fixed`. */
function expectFinding(r: IntegrityResults, description: string, fixed: boolean): void {
  expect(r.results.filter((x) => x.description === description)).toEqual([{ description, fixed }]);
}

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  build = policyBuilder(mgmt);
  replica = await startIntegrityReplica(ctl());
  const login = await auth.login(replica.gateway.http, ctl().admin.username, ctl().admin.password, 'management');
  expectSuccess(login.res);
  fixer = login.session;
  rows = await RowCounter.connect(ctl().options.databaseUrl!);
}, 60_000);

afterAll(async () => {
  await rows?.close();
  await replica?.gateway.stop();
});

describe('data integrity: projections against their sources', () => {
  it('finds missing, differing and extra identity and posture check projections, and re-syncs them from the source', async () => {
    const a = await build.identity(['integ-proj']);
    const b = await build.identity(['integ-proj'], { defaultHostingCost: 7, serviceHostingPrecedences: { s1: 'required' }, appData: { site: 'lab' } });
    const svc = await build.service(['integ-proj-svc']);
    await build.servicePolicy('Dial', ['#integ-proj-svc'], ['#integ-proj']);
    const pcName = unique('pc');
    const pcRes = await mgmt.call('POST', '/posture-checks', { name: pcName, typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:ff'], roleAttributes: ['integ-pc'] });
    expect(pcRes.status).toBe(201);
    const pc = pcRes.body.data.id as string;
    const pc2Res = await mgmt.call('POST', '/posture-checks', { name: unique('pc'), typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:01'] });
    const pc2 = pc2Res.body.data.id as string;
    expect(await serviceIdsOf(b.id)).toEqual([svc]);
    const aName = (await mgmt.identities.get(a.id)).body.data.name as string;
    const bName = (await mgmt.identities.get(b.id)).body.data.name as string;

    // a's projection lost (its source settled long ago), b's corrupted, one that identity-auth never had.
    await sql('identity_auth', `UPDATE "identities" SET "updated_at" = $2 WHERE "id" = $1`, [a.id, LONG_AGO()]);
    await sql('policy', `DELETE FROM "identities" WHERE "id" = $1`, [a.id]);
    await sql(
      'policy',
      `UPDATE "identities" SET "name" = 'integ-corrupt', "role_attributes" = '{}', "is_admin" = true, "default_hosting_cost" = 0, "service_hosting_precedences" = '{}', "app_data" = '{}' WHERE "id" = $1`,
      [b.id],
    );
    await sql('policy', `INSERT INTO "identities" ("id", "name", "created_at", "updated_at") VALUES ('integ-extra-id', 'integ-extra', $1, $1)`, [LONG_AGO()]);
    await sql('policy', `UPDATE "posture_checks" SET "name" = 'integ-corrupt-pc', "role_attributes" = '{x}' WHERE "id" = $1`, [pc]);
    await sql('posture', `UPDATE "posture_checks" SET "updated_at" = $2 WHERE "id" = $1`, [pc2, LONG_AGO()]);
    await sql('policy', `DELETE FROM "posture_checks" WHERE "id" = $1`, [pc2]);

    const missingA = `policy: identity projection ${a.id} is missing (identity-auth has it)`;
    const extra = 'policy: identity projection integ-extra-id (integ-extra) is extra (identity-auth does not have it)';
    const missingPc = `policy: posture check projection ${pc2} is missing (posture has it)`;
    const checked = await checkOnly();
    expectFinding(checked, missingA, false);
    expectFinding(checked, extra, false);
    expectFinding(checked, missingPc, false);
    const [differs] = findings(checked, `identity projection ${b.id} differs from identity-auth`);
    expect(differs?.fixed).toBe(false);
    expect(differs?.description).toContain(`name "integ-corrupt" ≠ "${bName}"`);
    expect(differs?.description).toContain('roleAttributes [] ≠ [integ-proj]');
    expect(differs?.description).toContain('isAdmin true ≠ false');
    expect(differs?.description).toContain('defaultHostingCost 0 ≠ 7');
    expect(differs?.description).toContain('serviceHostingPrecedences {} ≠ {"s1":"required"}');
    expect(differs?.description).toContain('appData {} ≠ {"site":"lab"}');
    const [pcDiffers] = findings(checked, `posture check projection ${pc} differs from posture`);
    expect(pcDiffers?.description).toContain(`name "integ-corrupt-pc" ≠ "${pcName}"`);
    expect(pcDiffers?.description).toContain('roleAttributes [x] ≠ [integ-pc]');
    expect((await sql('policy', `SELECT "name" FROM "identities" WHERE "id" = $1`, [b.id]))[0].name).toBe('integ-corrupt');

    const fixed = await fix();
    for (const d of [missingA, extra, missingPc, differs!.description, pcDiffers!.description]) expectFinding(fixed, d, true);
    const restored = await sql('policy', `SELECT "id", "name", "is_admin", "role_attributes" FROM "identities" WHERE "id" = ANY($1)`, [[a.id, b.id, 'integ-extra-id']]);
    expect(restored.sort((x, y) => x.name.localeCompare(y.name))).toEqual(
      [
        { id: a.id, name: aName, is_admin: false, role_attributes: ['integ-proj'] },
        { id: b.id, name: bName, is_admin: false, role_attributes: ['integ-proj'] },
      ].sort((x, y) => x.name.localeCompare(y.name)),
    );
    expect(await sql('policy', `SELECT "default_hosting_cost", "service_hosting_precedences", "app_data" FROM "identities" WHERE "id" = $1`, [b.id])).toEqual([
      { default_hosting_cost: 7, service_hosting_precedences: { s1: 'required' }, app_data: { site: 'lab' } },
    ]);
    expect(await sql('policy', `SELECT "name", "role_attributes" FROM "posture_checks" WHERE "id" = $1`, [pc])).toEqual([{ name: pcName, role_attributes: ['integ-pc'] }]);
    expect(await sql('policy', `SELECT 1 FROM "posture_checks" WHERE "id" = $1`, [pc2])).toHaveLength(1);
    expect(await serviceIdsOf(a.id)).toEqual([svc]);
    expect(await serviceIdsOf(b.id)).toEqual([svc]);
    expect((await checkOnly()).results).toEqual([]);
  });
});

describe('data integrity: policy links and ref-counted pairs', () => {
  it('finds pairs and links that differ from the role lists, and rebuilds them', async () => {
    const c = await build.identity(['integ-links']);
    const d = await build.identity(['integ-other']);
    const svc = await build.service(['integ-links-svc']);
    const sp = await build.servicePolicy('Dial', ['#integ-links-svc'], ['#integ-links']);
    const er = await build.edgeRouter(['integ-links-er']);
    const erp = await build.edgeRouterPolicy(['#integ-links-er'], [`@${c.id}`]);
    expect(await serviceIdsOf(c.id)).toEqual([svc]);

    await sql('policy', `DELETE FROM "identity_services" WHERE "identity_id" = $1`, [c.id]);
    await sql('policy', `DELETE FROM "erp_edge_routers" WHERE "policy_id" = $1`, [erp]);
    await sql('policy', `INSERT INTO "sp_identities" ("policy_id", "identity_id") VALUES ($1, $2)`, [sp, d.id]);
    expect(await serviceIdsOf(c.id)).toEqual([]);

    const pair = `policy: identity_services pair (identity ${c.id}, service ${svc}) has dial 0, bind 0; the policy links give dial 1, bind 0`;
    const missingLink = `policy: edge router policy ${erp} (erp_edge_routers) is missing edge router ${er}, which its roles select`;
    const extraLink = `policy: service policy ${sp} (sp_identities) links identity ${d.id}, which its roles do not select`;
    const routerPair = `policy: identity_edge_routers pair (identity ${c.id}, edge router ${er}) has n 1; the policy links give n 0`;
    const checked = await checkOnly();
    for (const x of [pair, missingLink, extraLink, routerPair]) expectFinding(checked, x, false);

    const fixed = await fix();
    for (const x of [pair, missingLink, extraLink, routerPair]) expectFinding(fixed, x, true);
    expect(await serviceIdsOf(c.id)).toEqual([svc]);
    expect(await serviceIdsOf(d.id)).toEqual([]);
    expect(ids(await mgmt.call('GET', `/identities/${c.id}/edge-routers?limit=100`))).toEqual([er]);
    expect((await checkOnly()).results).toEqual([]);
  });
});

describe('data integrity: references to entities another context deleted', () => {
  it('finds sessions, enrollments, certificates and authenticators of gone entities, and deletes them', async () => {
    const e = await build.identity();
    const svc = await build.service();
    const me = (await mgmt.currentApiSession.get()).body.data;
    const [adminId, apiSessionId] = [me.identity.id as string, me.id as string];
    const old = LONG_AGO();
    const future = new Date(Date.now() + 86_400_000);

    await sql('identity_auth', `INSERT INTO "authenticators" ("id", "identity_id", "method", "fingerprint", "cert_pem", "ca_id", "created_at", "updated_at") VALUES ('integ-authn', $1, 'cert', 'integ-fp', 'x', 'integ-gone-ca', $2, $2)`, [e.id, old]);
    await sql('pki_enrollment', `INSERT INTO "enrollments" ("id", "method", "token", "jwt", "expires_at", "identity_id", "created_at") VALUES ('integ-enr-i', 'ott', 'integ-tok-1', 'x', $1, 'integ-gone-identity', $2)`, [future, old]);
    await sql('pki_enrollment', `INSERT INTO "enrollments" ("id", "method", "token", "jwt", "expires_at", "edge_router_id", "created_at") VALUES ('integ-enr-r', 'erott', 'integ-tok-2', 'x', $1, 'integ-gone-er', $2)`, [future, old]);
    await sql('pki_enrollment', `INSERT INTO "router_certs" ("router_id", "router_type", "fingerprint", "cert_pem", "server_cert_pem", "created_at") VALUES ('integ-gone-router', 'edge', 'integ-fp-r', 'x', 'x', $1)`, [old]);
    await sql('pki_enrollment', `INSERT INTO "api_session_certificates" ("id", "api_session_id", "identity_id", "subject", "fingerprint", "cert_pem", "valid_from", "valid_to", "created_at") VALUES ('integ-asc', 'integ-gone-as', $1, 'x', 'integ-fp-asc', 'x', $2, $3, $2)`, [adminId, old, future]);
    const session = (id: string, as: string, identity: string, service: string) =>
      sql('session', `INSERT INTO "sessions" ("id", "token", "api_session_id", "identity_id", "service_id", "type", "created_at") VALUES ($1, 'x', $2, $3, $4, 'Dial', $5)`, [id, as, identity, service, old]);
    await session('integ-sess-as', 'integ-gone-as2', adminId, svc);
    await session('integ-sess-id', apiSessionId, 'integ-gone-id2', svc);
    await session('integ-sess-svc', apiSessionId, adminId, 'integ-gone-svc');
    await sql('session', `INSERT INTO "identity_service_updates" ("identity_id", "last_change_at") VALUES ('integ-gone-id3', $1)`, [old]);

    const expected = [
      'identity-auth: certificate authenticator integ-authn of identity ' + e.id + ' refers to CA integ-gone-ca, which pki-enrollment no longer has',
      'pki-enrollment: enrollment integ-enr-i refers to identity integ-gone-identity, which identity-auth no longer has',
      'pki-enrollment: edge router enrollment integ-enr-r refers to router integ-gone-er, which policy no longer has',
      'pki-enrollment: router certificate integ-gone-router refers to router integ-gone-router, which policy no longer has',
      'pki-enrollment: API session certificate integ-asc refers to API session integ-gone-as, which identity-auth no longer has',
      'session: session integ-sess-as refers to API session integ-gone-as2, which identity-auth no longer has',
      'session: session integ-sess-id refers to identity integ-gone-id2, which identity-auth no longer has',
      'session: session integ-sess-svc refers to service integ-gone-svc, which policy no longer has',
      'session: service-update time integ-gone-id3 refers to identity integ-gone-id3, which identity-auth no longer has',
    ];
    const checked = await checkOnly();
    for (const x of expected) expectFinding(checked, x, false);
    expect(checked.results).toHaveLength(expected.length);

    const fixed = await fix();
    for (const x of expected) expectFinding(fixed, x, true);
    expect(await sql('identity_auth', `SELECT "id" FROM "authenticators" WHERE "identity_id" = $1`, [e.id])).toHaveLength(1);
    expect(await sql('pki_enrollment', `SELECT "id" FROM "enrollments" WHERE "id" LIKE 'integ-%' UNION ALL SELECT "router_id" FROM "router_certs" WHERE "router_id" LIKE 'integ-%' UNION ALL SELECT "id" FROM "api_session_certificates" WHERE "id" LIKE 'integ-%'`)).toEqual([]);
    expect(await sql('session', `SELECT "id" FROM "sessions" WHERE "id" LIKE 'integ-%' UNION ALL SELECT "identity_id" FROM "identity_service_updates" WHERE "identity_id" LIKE 'integ-%'`)).toEqual([]);
    expectSuccess(await mgmt.identities.get(e.id));
    expect((await checkOnly()).results).toEqual([]);
  });

  it('finds a tunneler-enabled edge router whose identity identity-auth lost, and creates it again', async () => {
    const er = await build.edgeRouter([], { isTunnelerEnabled: true });
    const name = (await mgmt.call('GET', `/edge-routers/${er}`)).body.data.name as string;
    expectSuccess(await mgmt.identities.get(er));
    await sql('identity_auth', `DELETE FROM "identities" WHERE "id" = $1`, [er]);
    await sql('policy', `UPDATE "identities" SET "created_at" = $2 WHERE "id" = $1`, [er, LONG_AGO()]);
    expect((await mgmt.identities.get(er)).status).toBe(404);

    const finding = `policy: the identity of tunneler-enabled edge router ${er} (${name}) is missing in identity-auth`;
    const checked = await checkOnly();
    expectFinding(checked, finding, false);
    expect(checked.results).toHaveLength(1);
    expect((await mgmt.identities.get(er)).status).toBe(404);
    expectFinding(await fix(), finding, true);
    const restored = await mgmt.identities.get(er);
    expectSuccess(restored);
    expect(restored.body.data).toMatchObject({ id: er, name, typeId: 'Router' });
    expect((await checkOnly()).results).toEqual([]);
  });

  it('leaves references younger than the grace period alone (their creating transaction may not have committed)', async () => {
    await sql('pki_enrollment', `INSERT INTO "enrollments" ("id", "method", "token", "jwt", "expires_at", "identity_id") VALUES ('integ-enr-new', 'ott', 'integ-tok-new', 'x', now() + interval '1 day', 'integ-not-yet')`);
    expect((await checkOnly()).results).toEqual([]);
    await sql('pki_enrollment', `DELETE FROM "enrollments" WHERE "id" = 'integ-enr-new'`);
  });
});

describe('data integrity: outbox', () => {
  it('finds an event no relay published, and publishes it', async () => {
    const [{ id }] = await sql(
      'session',
      `INSERT INTO "outbox_events" ("id", "type", "source", "data", "occurred_at") VALUES (gen_random_uuid(), 'integrity.probe', 'session', '{}', $1) RETURNING "id"`,
      [LONG_AGO()],
    );
    const checked = await checkOnly();
    const [finding] = findings(checked, `session: outbox event ${id} (integrity.probe)`);
    expect(finding).toEqual({ description: expect.stringContaining('was never published'), fixed: false });
    expect((await sql('session', `SELECT "published_at" FROM "outbox_events" WHERE "id" = $1`, [id]))[0].published_at).toBeNull();
    expectFinding(await fix(), finding!.description, true);
    expect((await sql('session', `SELECT "published_at" FROM "outbox_events" WHERE "id" = $1`, [id]))[0].published_at).not.toBeNull();
    expect((await checkOnly()).results).toEqual([]);
  });
});
