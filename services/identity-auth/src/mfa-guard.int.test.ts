import { randomBytes } from 'node:crypto';
import type { RequestPrincipal } from '@ziti/http-kit';
import { type Cache, createRedisCache } from '@ziti/messaging';
import { testInfra } from '@ziti/test-kit';
import { MFA_MAX_FAILURES, MfaGuard } from './domain/mfa/mfa-guard.js';
import { type RunningService, startService } from './service.js';
import { C, Harness } from './testing/harness.js';
import { cacheMfaGuardStore } from './store/mfa-guard-cache.js';
import { totpCodes, wrongTotpCodes } from './testing/totp-codes.js';

/** One-time TOTP codes and the per-session limit of wrong codes, on a real Redis shared by two instances. */
describe('MFA codes: replay and guessing guards', () => {
  let h: Harness;
  let admin: RequestPrincipal;
  let redisA: Cache;
  let redisB: Cache;
  let other: RunningService;
  const PASSWORD = 'guard-pass1';

  beforeAll(async () => {
    const { redisUrl } = await testInfra();
    const keyPrefix = `test:idauth:${randomBytes(6).toString('hex')}:`;
    // Two connections to the same Redis: what two replicas of identity-auth share.
    redisA = await createRedisCache(redisUrl, { keyPrefix });
    redisB = await createRedisCache(redisUrl, { keyPrefix });
    h = await Harness.start({ cache: redisA });
    other = await startService(h.deps({ cache: redisB }));
    admin = (await h.login()).principal;
  });
  afterAll(async () => {
    await other?.stop();
    await h?.close();
    await redisA?.close();
    await redisB?.close();
  });

  const post = (p: RequestPrincipal, path: string, body: unknown, baseUrl?: string) => h.call('POST', `${C}${path}`, { principal: p, body, baseUrl });
  const get = (p: RequestPrincipal, path: string, headers: Record<string, string>) => h.call('GET', `${C}${path}`, { principal: p, headers });
  const result = (r: { status: number; body: any }) => (r.status === 200 ? 200 : `${r.status} ${r.body?.error?.code}`);
  const INVALID = '400 MFA_INVALID_TOKEN';

  /** A user with a verified TOTP enrollment (verified with the first of its codes). */
  async function enrolled() {
    const user = await h.createUser(admin, {}, PASSWORD);
    const { principal } = await h.login(user.username, PASSWORD, 'client');
    expect((await post(principal, '/current-identity/mfa', undefined)).status).toBe(201);
    const detail = (await h.call('GET', `${C}/current-identity/mfa`, { principal })).body.data;
    const secret = new URL(detail.provisioningUrl).searchParams.get('secret')!;
    const totp = totpCodes(secret);
    expect(result(await post(principal, '/current-identity/mfa/verify', { code: totp() }))).toBe(200);
    return { user, secret, totp, recoveryCodes: detail.recoveryCodes as string[], principal };
  }

  /** A new, partial API session of the user. */
  const partial = async (username: string) => {
    const { principal } = await h.login(username, PASSWORD, 'client');
    expect(principal.isFullyAuthenticated).toBe(false);
    return principal;
  };
  const isComplete = async (p: RequestPrincipal) => (await h.call('GET', `${C}/current-api-session`, { principal: p })).body.data.isMfaComplete;

  it('one code completes MFA on one API session only; a code of another step still works', async () => {
    const { user, totp } = await enrolled();
    const [a, b] = [await partial(user.username), await partial(user.username)];
    const code = totp();
    expect(result(await post(a, '/authenticate/mfa', { code }))).toBe(200);
    expect(result(await post(b, '/authenticate/mfa', { code }))).toBe(INVALID);
    expect(await isComplete(b)).toBe(false);
    expect(result(await post(b, '/authenticate/mfa', { code: totp() }))).toBe(200);
    expect(await isComplete(b)).toBe(true);
  });

  it('the same code sent by many sessions at once completes exactly one', async () => {
    const { user, totp } = await enrolled();
    const sessions = await Promise.all(Array.from({ length: 8 }, () => partial(user.username)));
    const code = totp();
    const results = await Promise.all(sessions.map((s) => post(s, '/authenticate/mfa', { code }).then(result)));
    expect(results.filter((r) => r === 200)).toHaveLength(1);
    expect(results.filter((r) => r === INVALID)).toHaveLength(sessions.length - 1);
    expect((await Promise.all(sessions.map(isComplete))).filter(Boolean)).toHaveLength(1);
  });

  it('a code used on one instance is refused on another (the claim is in the shared cache)', async () => {
    const { user, totp } = await enrolled();
    const [a, b] = [await partial(user.username), await partial(user.username)];
    const code = totp();
    expect(result(await post(a, '/authenticate/mfa', { code }))).toBe(200);
    expect(result(await post(b, '/authenticate/mfa', { code }, other.httpUrl))).toBe(INVALID);
    expect(result(await post(b, '/authenticate/mfa', { code: totp() }, other.httpUrl))).toBe(200);
  });

  it('a code accepted by one endpoint is refused by every other one', async () => {
    const { user, totp, principal } = await enrolled();
    const code = totp();
    expect(result(await post(await partial(user.username), '/authenticate/mfa', { code }))).toBe(200);
    expect(result(await get(principal, '/current-identity/mfa/recovery-codes', { 'mfa-validation-code': code }))).toBe(INVALID);
    expect(result(await post(principal, '/current-identity/mfa/recovery-codes', { code }))).toBe(INVALID);
    expect(result(await h.call('DELETE', `${C}/current-identity/mfa`, { principal, headers: { 'mfa-validation-code': code } }))).toBe(INVALID);
    expect(result(await h.call('DELETE', `${C}/current-identity/mfa`, { principal, body: { code } }))).toBe(INVALID);
    expect((await h.call('GET', `${C}/current-identity/mfa`, { principal })).status).toBe(200); // still enrolled
  });

  it(`after ${MFA_MAX_FAILURES} wrong codes a session cannot complete MFA, even with the right code; a new login can`, async () => {
    const { user, secret, totp } = await enrolled();
    const s = await partial(user.username);
    for (const code of wrongTotpCodes(secret, MFA_MAX_FAILURES)) expect(result(await post(s, '/authenticate/mfa', { code }))).toBe(INVALID);
    const right = totp();
    expect(result(await post(s, '/authenticate/mfa', { code: right }))).toBe(INVALID);
    expect(result(await post(s, '/authenticate/mfa', { code: totp() }, other.httpUrl))).toBe(INVALID);
    expect(await isComplete(s)).toBe(false);
    // the refused right code was not used up: a new session completes with it
    expect(result(await post(await partial(user.username), '/authenticate/mfa', { code: right }))).toBe(200);
  });

  it(`after ${MFA_MAX_FAILURES - 1} wrong codes the right one still completes the session`, async () => {
    const { user, secret, totp } = await enrolled();
    const s = await partial(user.username);
    for (const code of wrongTotpCodes(secret, MFA_MAX_FAILURES - 1)) expect(result(await post(s, '/authenticate/mfa', { code }))).toBe(INVALID);
    expect(result(await post(s, '/authenticate/mfa', { code: totp() }))).toBe(200);
  });

  it(`concurrent code checks of one session on two instances: exactly ${MFA_MAX_FAILURES} are admitted`, async () => {
    const guards = [new MfaGuard(cacheMfaGuardStore(redisA, () => undefined)), new MfaGuard(cacheMfaGuardStore(redisB, () => undefined))];
    const sessionId = `burst-${randomBytes(4).toString('hex')}`;
    const outcomes = await Promise.allSettled(Array.from({ length: 3 * MFA_MAX_FAILURES }, (_, i) => guards[i % 2]!.admit(sessionId)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(MFA_MAX_FAILURES);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.code)).toEqual(
      Array(2 * MFA_MAX_FAILURES).fill('MFA_INVALID_TOKEN'),
    );
  });

  it('verifying an enrollment has the same per-session limit', async () => {
    const user = await h.createUser(admin, {}, PASSWORD);
    const s = (await h.login(user.username, PASSWORD, 'client')).principal;
    await post(s, '/current-identity/mfa', undefined);
    const secret = new URL((await h.call('GET', `${C}/current-identity/mfa`, { principal: s })).body.data.provisioningUrl).searchParams.get('secret')!;
    const totp = totpCodes(secret);
    for (const code of wrongTotpCodes(secret, MFA_MAX_FAILURES)) expect(result(await post(s, '/current-identity/mfa/verify', { code }))).toBe(INVALID);
    expect(result(await post(s, '/current-identity/mfa/verify', { code: totp() }))).toBe(INVALID);
    const fresh = (await h.login(user.username, PASSWORD, 'client')).principal;
    expect(result(await post(fresh, '/current-identity/mfa/verify', { code: totp() }))).toBe(200);
  });

  it('a session older than the completion window cannot complete MFA', async () => {
    const { user, totp } = await enrolled();
    const s = await partial(user.username);
    await h.sql(`UPDATE api_sessions SET created_at = now() - interval '25 hours' WHERE id = $1`, [s.apiSessionId]);
    expect(result(await post(s, '/authenticate/mfa', { code: totp() }))).toBe(INVALID);
    expect(await isComplete(s)).toBe(false);
  });

  it('one recovery code used by many sessions at once completes exactly one', async () => {
    const { user, recoveryCodes } = await enrolled();
    const sessions = await Promise.all(Array.from({ length: 6 }, () => partial(user.username)));
    const results = await Promise.all(sessions.map((s) => post(s, '/authenticate/mfa', { code: recoveryCodes[0] }).then(result)));
    expect(results.filter((r) => r === 200)).toHaveLength(1);
    expect(results.filter((r) => r === INVALID)).toHaveLength(sessions.length - 1);
  });

  it('a cache that does not answer refuses the code with 503, never accepts it unchecked', async () => {
    const { user, totp } = await enrolled();
    const broken: Cache = {
      mget: async (keys) => keys.map(() => null),
      get: async () => null,
      set: async () => undefined,
      setIfAbsent: async () => Promise.reject(new Error('connection refused')),
      increment: async () => Promise.reject(new Error('connection refused')),
      del: async () => undefined,
      close: async () => undefined,
    };
    const down = await startService(h.deps({ cache: broken }));
    try {
      const s = await partial(user.username);
      const r = await post(s, '/authenticate/mfa', { code: totp() }, down.httpUrl);
      expect([r.status, r.body.error.code]).toEqual([503, 'TIMEOUT']);
      expect(await isComplete(s)).toBe(false);
    } finally {
      await down.stop();
    }
  });
});
