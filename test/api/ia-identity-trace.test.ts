import type { EdgeApi } from '../support/clients.js';
import { createUser, loginAs } from '../support/clients-identity.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectFieldError, expectSuccess } from '../support/envelope.js';
import { expectValid } from '../support/spec-validator.js';

/**
 * Identity tracing (`PUT /identities/{id}/trace`, the controller's `updateTracing`): Go durations,
 * a generated trace id, `{enabled, traceId, until}`; while a trace runs the gateway logs each
 * request of that identity with the trace id, from the very next request on, and stops at once
 * when it is disabled or has run out.
 */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
});

const trace = (id: string, body: unknown, api: EdgeApi = mgmt) => api.call('PUT', `/identities/${id}/trace`, body);
/** The trace lines the controller logged since `from` (an index into its log). */
const traceLines = (from: number) => ctl().logs.slice(from).filter((l) => l.startsWith('trace '));
/** A line is written once its answer is sent, which may be just after the client read it. */
const settle = () => new Promise((r) => setTimeout(r, 100));

describe('PUT /identities/{id}/trace', () => {
  it('enables with a Go duration and answers {enabled, traceId, until}; a missing trace id is generated', async () => {
    const user = await createUser(mgmt);
    const before = Date.now();
    const res = await trace(user.id, { enabled: true, duration: '1h30m', traceId: 'my-trace', channels: ['selectPath'], extra: true });
    expectSuccess(res);
    expectValid('management', 'PUT', '/identities/{id}/trace', 200, res.body);
    expect(res.body.data).toEqual({ enabled: true, traceId: 'my-trace', until: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    const until = Date.parse(res.body.data.until);
    expect(until).toBeGreaterThanOrEqual(before + 90 * 60_000 - 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 90 * 60_000 + 1000);

    const generated = await trace(user.id, { enabled: true, duration: '10m' });
    expectSuccess(generated);
    expect(generated.body.data.traceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

    const off = await trace(user.id, { enabled: false, duration: 'ignored when disabled' });
    expectSuccess(off);
    expect(off.body.data).toEqual({ enabled: false });
    expect((await trace(user.id, {})).body.data).toEqual({ enabled: false });
  });

  it('404 for an unknown identity; 400 on duration for a bad or missing one; wrong types 400', async () => {
    expectError(await trace('no-such-identity', { enabled: true, duration: '1m' }), 404, 'NOT_FOUND');
    const user = await createUser(mgmt);
    for (const duration of ['5 minutes', '10', '3d', '', undefined]) {
      const res = await trace(user.id, { enabled: true, duration });
      expectFieldError(res, 'duration');
      expect(res.body.error.cause.reason).toMatch(/^time: /);
    }
    expectFieldError(await trace(user.id, { enabled: 'yes', duration: '1m' }), 'enabled');
    expectFieldError(await trace(user.id, { enabled: true, duration: 60 }), 'duration');
    expectFieldError(await trace(user.id, { enabled: true, duration: '1m', channels: 'all' }), 'channels');
    expectFieldError(await trace(user.id, { enabled: true, duration: '1m', traceId: 'x'.repeat(300) }), 'traceId');
    expectError(await trace(user.id, { enabled: true, duration: '1m', traceId: 'a\u0000b' }), 400, 'COULD_NOT_VALIDATE');
  });

  it('needs identity.update: non-admins are refused, the permission grants it', async () => {
    const target = await createUser(mgmt);
    const plain = (await loginAs(ctl().http, await createUser(mgmt))).session;
    const readonly = (await loginAs(ctl().http, await createUser(mgmt, { permissions: ['admin_readonly'] }))).session;
    const updater = (await loginAs(ctl().http, await createUser(mgmt, { permissions: ['identity.update'] }))).session;
    expectError(await trace(target.id, { enabled: true, duration: '1m' }, plain), 401, 'UNAUTHORIZED');
    expectError(await trace(target.id, { enabled: true, duration: '1m' }, readonly), 401, 'UNAUTHORIZED');
    expectSuccess(await trace(target.id, { enabled: false }, updater));
  });
});

describe('traced requests in the controller log', () => {
  it('logs the traced identity\'s requests with the trace id (from the very next request), not another\'s, and none after disable', async () => {
    const traced = await createUser(mgmt);
    const other = await createUser(mgmt);
    const tracedSession = (await loginAs(ctl().http, traced, 'client')).session;
    const otherSession = (await loginAs(ctl().http, other, 'client')).session;
    // Both principals are cached by now: the trace must reach the cached one too.
    expectSuccess(await tracedSession.call('GET', '/current-identity'));
    expectSuccess(await otherSession.call('GET', '/current-identity'));

    expectSuccess(await trace(traced.id, { enabled: true, duration: '5m', traceId: `bbt-${traced.id}` }));
    const from = ctl().logs.length;
    const mine = await tracedSession.call('GET', '/current-identity');
    expectSuccess(mine);
    const missing = await tracedSession.call('GET', '/services/not-a-service');
    const theirs = await otherSession.call('GET', '/current-identity');
    expectSuccess(theirs);

    expect(missing.status).toBe(404);
    await settle();
    const lines = traceLines(from);
    expect(lines).toHaveLength(2);
    // Request ids are shortids: letters, digits, '.' and '-'; identity ids too (escaped for the pattern).
    const id = traced.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const l of lines) expect(l).toMatch(new RegExp(`^trace traceId=bbt-${id} requestId=[\\w.-]+ identityId=${id} `));
    expect(lines[0]).toMatch(/ method=GET path=\/edge\/client\/v1\/current-identity status=200 latencyMs=\d+\.\d$/);
    expect(lines[1]).toMatch(/ method=GET path=\/edge\/client\/v1\/services\/not-a-service status=404 latencyMs=\d+\.\d$/);
    expect(new Set(lines.map((l) => /requestId=(\S+)/.exec(l)![1])).size).toBe(2);
    expect(lines.some((l) => l.includes(other.id))).toBe(false);

    expectSuccess(await trace(traced.id, { enabled: false }));
    const afterDisable = ctl().logs.length;
    expectSuccess(await tracedSession.call('GET', '/current-identity'));
    expectSuccess(await tracedSession.call('GET', '/current-api-session'));
    await settle();
    expect(traceLines(afterDisable)).toEqual([]);
  });

  it('a trace that has run out stops by itself', async () => {
    const user = await createUser(mgmt);
    const session = (await loginAs(ctl().http, user, 'management')).session;
    const started = await trace(user.id, { enabled: true, duration: '1s', traceId: `short-${user.id}` });
    expectSuccess(started);
    const from = ctl().logs.length;
    expectSuccess(await session.call('GET', '/current-identity'));
    await settle();
    expect(traceLines(from).filter((l) => l.includes(`traceId=short-${user.id} `))).toHaveLength(1);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(started.body.data.until) - Date.now() + 50)));
    const later = ctl().logs.length;
    expectSuccess(await session.call('GET', '/current-identity'));
    expectSuccess(await session.call('GET', '/current-api-session'));
    await settle();
    expect(traceLines(later)).toEqual([]);
  });
});
