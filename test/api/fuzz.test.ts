import { writeFileSync } from 'node:fs';
import { ALL_ROUTES } from '@ziti/api-contract';
import { useController } from '../support/controller.js';
import { type Violation, checkResponse, specAvailable } from '../support/fuzz-checks.js';
import { ROW_COUNT_EXCEPTIONS, RowCounter } from '../support/fuzz-db.js';
import { type Callers, type Fixtures, createFixtures, realIdFor, refFor } from '../support/fuzz-fixtures.js';
import { FuzzHttp, type FuzzRequest } from '../support/fuzz-http.js';
import { BASES, type Caller, type Target } from '../support/fuzz-inputs.js';
import { CrashLog, EXTRA_FIELD, type Finding, FuzzRunner, describe as describeTarget, showFinding, showRequest } from '../support/fuzz-runner.js';
import { deepArray, deepObject, runSeed, seedFor } from '../support/fuzz-values.js';
import { specDir } from '../support/spec-validator.js';

/**
 * Spec-driven fuzzing of every operation of the contract (`ALL_ROUTES`, both APIs), each with an
 * admin, a non-admin and no session: malformed and hostile bodies, wrong types, NUL and lone
 * surrogates, boundary numbers, 5,000-deep nesting, bad ids, bad queries, odd headers. Each answer
 * must be no 5xx, a status the swagger spec documents for the operation (plus the pipeline's own,
 * `frameworkStatuses`), the exact error envelope without internal text; a refused request must
 * write no row; unknown body fields must be ignored; the controller must stay up.
 *
 * Inputs come from fast-check with a fixed seed (`FUZZ_SEED` overrides it); a failure names the
 * seed and the command that replays the operation. `FUZZ_FINDINGS=<file>` writes every finding.
 */

const SEED = runSeed();
const TARGETS: Target[] = ALL_ROUTES.flatMap((route) => route.apis.map((api) => ({ api, route })));

let http: FuzzHttp;
let counter: RowCounter;
let fixtures: Fixtures;
let callers: Callers;
let runner: FuzzRunner;
const crashes = new CrashLog();
const findings: Finding[] = [];
const started = Date.now();
// The controller logs every 500 with its stack: thousands of lines here. The harness keeps them
// out of the output (ZITI_TEST_LOG=1 shows them); the findings carry each answer.
const controllerErrors = () => {
  try {
    return ctl().logRecords().filter((r) => r.level === 'error').length;
  } catch {
    return 0; // the controller did not start
  }
};

// Registered before the harness's own hooks: this cleanup runs before the database is dropped.
afterAll(async () => {
  const file = process.env.FUZZ_FINDINGS;
  if (file) {
    const head = `fuzz run: seed ${SEED}, ${TARGETS.length} operations, ${runner?.requests ?? 0} requests (${runner?.settles ?? 0} successful writes settled in ${((runner?.settleMs ?? 0) / 1000).toFixed(1)} s), ${((Date.now() - started) / 1000).toFixed(1)} s, ` +
      `${findings.length} findings, ${crashes.total} uncaught errors, ${callers?.renewals ?? 0} session renewals, ${controllerErrors()} error lines of the controller\n` +
      `missing fixtures: ${fixtures?.missing.join('; ') || 'none'}\n\n`;
    writeFileSync(file, head + findings.map(showFinding).join('\n') + '\n');
  }
  crashes.uninstall();
  http?.close();
  await counter?.close();
});

const ctl = useController();

beforeAll(async () => {
  crashes.install();
  const c = ctl();
  http = new FuzzHttp(c.url, c.running.caCertPem);
  counter = await RowCounter.connect(c.options.databaseUrl!);
  const mgmt = await c.adminSession('management');
  ({ fixtures, callers } = await createFixtures(c.http, mgmt, c.admin));
  if (fixtures.missing.length) console.warn(`fuzz: fixtures not created (their operations get bogus ids only):\n  ${fixtures.missing.join('\n  ')}`);
  if (!specAvailable()) console.warn(`fuzz: documented statuses NOT checked: ${specDir()} missing (set ZITI_SPEC_DIR)`);
  await counter.settle();
  runner = new FuzzRunner({
    http,
    counter,
    crashes,
    token: (caller) => callers.token(caller),
    refreshCallers: () => callers.refresh(),
    context: (target, caller) => contextFor(target, caller),
  });
}, 180_000);

function contextFor(target: Target, caller: Caller) {
  const key = `${target.api} ${target.route.method} ${target.route.path} ${caller}`;
  let n = 0;
  const index = TARGETS.indexOf(target);
  return {
    seed: seedFor(SEED, key),
    unique: (p: string) => `fz-${p}-${index}-${caller}-${++n}`,
    refFor: (field: string) => refFor(fixtures, field),
    realId: (routePath: string, param: string) => realIdFor(fixtures, callers, caller, routePath, param),
  };
}

function failure(target: Target, found: Finding[]): string {
  const byRule = new Map<string, number>();
  for (const f of found) for (const v of f.violations) byRule.set(v.rule, (byRule.get(v.rule) ?? 0) + 1);
  const shown = found.slice(0, 25).map(showFinding).join('\n');
  return `${found.length} fuzz finding(s) for ${describeTarget(target)} (${[...byRule].map(([r, n]) => `${r}: ${n}`).join(', ')})\n` +
    `seed ${SEED}; replay: FUZZ_SEED=${SEED} npx jest api/fuzz -t '\\(${target.route.operationId}\\)'\n${shown}${found.length > 25 ? `\n… and ${found.length - 25} more` : ''}`;
}

describe('fuzz: every operation of the contract with an admin, a non-admin and no session', () => {
  test.each(TARGETS.map((t) => [describeTarget(t), t] as const))('%s', async (_name, target) => {
    const found = await runner.run(target);
    findings.push(...found);
    if (found.length) throw new Error(failure(target, found));
  }, 180_000);
});

describe('fuzz: unknown body fields are ignored', () => {
  it(`a password login with "${EXTRA_FIELD}" in the body succeeds`, async () => {
    const { username, password } = ctl().admin;
    const body = Buffer.from(JSON.stringify({ username, password, [EXTRA_FIELD]: 1 }));
    for (const api of ['client', 'management'] as const) {
      const res = await http.send({ method: 'POST', target: `${BASES[api]}/authenticate?method=password`, body });
      const token = res.status === 200 ? (JSON.parse(res.text) as { data?: { token?: unknown } }).data?.token : res.text.slice(0, 400);
      expect({ api, status: res.status, token }).toEqual({ api, status: 200, token: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    }
  });
});

describe('fuzz: refused logins of a real user write no row', () => {
  it('five wrong passwords for an existing username: 401 each, every row count unchanged (the failure counter is updated in place)', async () => {
    await counter.settle();
    const before = await counter.counts();
    for (let i = 0; i < 5; i++) {
      const res = await http.send({ method: 'POST', target: `${BASES.client}/authenticate?method=password`, body: Buffer.from(JSON.stringify({ username: fixtures.target.username, password: `wrong-${i}` })) });
      expect(res.status).toBe(401);
    }
    const after = await counter.counts();
    expect([...after].filter(([t, n]) => before.get(t) !== n).map(([t, n]) => `${t} ${before.get(t)}→${n}`)).toEqual([]);
  });
});

describe('fuzz: headers the HTTP parser refuses still get the error envelope', () => {
  const cases: { label: string; line: Buffer }[] = [
    { label: 'NUL in zt-session', line: Buffer.from('zt-session: a\u0000b', 'latin1') },
    { label: 'NUL in Authorization', line: Buffer.from('authorization: Bearer a\u0000b', 'latin1') },
    { label: 'NUL in content-type', line: Buffer.from('content-type: application/json\u0000', 'latin1') },
    { label: 'a bare CR in a header value', line: Buffer.from('zt-session: a\rb', 'latin1') },
  ];
  it.each(cases.map((c) => [c.label, c] as const))('%s → 400 in the envelope, controller still answering', async (_label, c) => {
    const res = await http.send({ method: 'GET', target: `${BASES.client}/version`, rawHeaderLines: [c.line] });
    const v = checkResponse(res, { allowed: new Set([400]), success: 0, patches: [] }, false);
    await expectAlive(v);
    expect(v).toEqual([]);
  });
});

/**
 * The requests that took the controller down or reached PostgreSQL with a NUL (known before this
 * suite); run last so that a crash can not hide other findings. Each must answer 4xx in the
 * envelope without internal text, and the controller must answer afterwards.
 */
describe('fuzz: known crashers answer 4xx and the controller survives', () => {
  const ANY_4XX = new Set(Array.from({ length: 100 }, (_, i) => 400 + i));
  const M = BASES.management;
  const C = BASES.client;
  const json = (o: unknown) => Buffer.from(JSON.stringify(o));
  const cases: { label: string; caller: Caller; req: () => FuzzRequest }[] = [
    { label: 'GET identities/%00/enrollments', caller: 'admin', req: () => ({ method: 'GET', target: `${M}/identities/%00/enrollments` }) },
    { label: 'GET identities/%00/posture-data', caller: 'admin', req: () => ({ method: 'GET', target: `${M}/identities/%00/posture-data` }) },
    { label: 'GET identities/%00/failed-service-requests', caller: 'admin', req: () => ({ method: 'GET', target: `${M}/identities/%00/failed-service-requests` }) },
    {
      label: 'POST enrollments with a NUL in identityId', caller: 'admin',
      req: () => ({ method: 'POST', target: `${M}/enrollments`, body: json({ method: 'ott', identityId: 'a\u0000b', expiresAt: new Date(Date.now() + 86_400_000).toISOString() }) }),
    },
    { label: 'password login with a NUL in the username', caller: 'none', req: () => ({ method: 'POST', target: `${C}/authenticate?method=password`, body: json({ username: 'ad\u0000min', password: 'x' }) }) },
    { label: 'POST enroll?method=ott&token=%00', caller: 'none', req: () => ({ method: 'POST', target: `${C}/enroll?method=ott&token=%00`, body: json({}) }) },
    { label: 'POST enroll/updb?token=a%00b', caller: 'none', req: () => ({ method: 'POST', target: `${C}/enroll/updb?token=a%00b`, body: json({ username: 'u', password: 'Passw0rd!Passw0rd' }) }) },
    { label: 'a 5,000-deep array body (identity create)', caller: 'admin', req: () => ({ method: 'POST', target: `${M}/identities`, body: Buffer.from(deepArray()) }) },
    { label: 'a 5,000-deep object body (identity create)', caller: 'admin', req: () => ({ method: 'POST', target: `${M}/identities`, body: Buffer.from(deepObject()) }) },
    { label: 'a 5,000-deep array as a login username', caller: 'none', req: () => ({ method: 'POST', target: `${C}/authenticate?method=password`, body: Buffer.from(`{"username":${deepArray()},"password":"x"}`) }) },
  ];
  it.each(cases.map((c) => [c.label, c] as const))('%s', async (_label, c) => {
    await callers.refresh();
    const before = await counter.counts();
    const req = c.req();
    const res = await http.send(req, callers.token(c.caller));
    const v = checkResponse(res, { allowed: ANY_4XX, success: 0, patches: [] }, false);
    for (const e of crashes.takeNew()) v.push({ rule: 'crash', message: `uncaught in the controller process: ${e}` });
    const after = await counter.counts();
    const changed = [...after].filter(([t, n]) => before.get(t) !== n && !ROW_COUNT_EXCEPTIONS.has(t)).map(([t, n]) => `${t} ${before.get(t)}→${n}`);
    if (changed.length) v.push({ rule: 'rows', message: changed.join(', ') });
    await expectAlive(v);
    expect({ request: showRequest(req), status: res.status, body: res.text.slice(0, 600), violations: v }).toEqual({ request: showRequest(req), status: res.status, body: res.text.slice(0, 600), violations: [] });
  }, 60_000);
});

async function expectAlive(v: Violation[]): Promise<void> {
  const alive = await http.send({ method: 'GET', target: `${BASES.client}/version` });
  if (alive.status !== 200) v.push({ rule: 'alive', message: `GET /version answered ${alive.status} ${alive.error ?? ''}` });
}
