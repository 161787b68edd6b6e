import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { ALL_ROUTES, type RouteDef } from '@ziti/api-contract';
import { ApiError } from '@ziti/errors';
import { principalCacheEntry, principalCacheKey } from '@ziti/http-kit';
import { type Cache, createMemoryCache } from '@ziti/messaging';
import type { ProxiedRequest } from '../http/proxy.js';
import { testPrincipal } from '../testing/harness.js';
import { createLoginGuard, isOidcLogin, oidcUsernameOf, usernameOf } from './login-guard.js';

const route = (operationId: string): RouteDef => ALL_ROUTES.find((r) => r.operationId === operationId)!;
const AUTHENTICATE = route('authenticate');

/** A response the test ends by hand: answered (delivered, with a status and headers) or dropped. */
class FakeResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableFinished = false;
  closed = false;
  private readonly headers = new Map<string, string>();
  getHeader(name: string) {
    return this.headers.get(name);
  }
  answer(status: number, headers: Record<string, string> = {}) {
    for (const [k, v] of Object.entries(headers)) this.headers.set(k, v);
    this.statusCode = status;
    this.headersSent = true;
    this.end();
  }
  end() {
    this.writableFinished = true;
    this.closed = true;
    this.emit('finish');
    this.emit('close');
    return this;
  }
  drop() {
    this.closed = true;
    this.emit('close');
  }
}

const request = (client: string, socket: object = {}) => ({ zitiClientAddress: client, socket, headers: {} }) as unknown as ProxiedRequest;
const passwordBody = (username: string) => Buffer.from(JSON.stringify({ username, password: 'whatever' }));

/** Drives the guard as the gateway app does; answers the response (or the refusal). */
async function attempt(
  guard: ReturnType<typeof createLoginGuard>,
  opts: { route?: RouteDef; client?: string; username?: string; search?: string; socket?: object },
): Promise<{ refused?: ApiError; res: FakeResponse }> {
  const res = new FakeResponse();
  const body = opts.username === undefined ? Buffer.alloc(0) : passwordBody(opts.username);
  const search = opts.search ?? (opts.username === undefined ? '?method=cert' : '?method=password');
  try {
    await guard.admit(opts.route ?? AUTHENTICATE, request(opts.client ?? '198.51.100.1', opts.socket), res as unknown as ServerResponse, body, search);
    return { res };
  } catch (err) {
    return { refused: err as ApiError, res };
  }
}

/** Lets the counting that follows an answer (an increment) settle. */
const settle = () => new Promise<void>((r) => setImmediate(r));

describe('login guard: failed-login limits', () => {
  it('ends a failed login only once it is counted, so the caller can not try again before the count lands', async () => {
    const inner = createMemoryCache();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const cache: Cache = { ...inner, increment: async (key, ttl) => (await held, inner.increment(key, ttl)) };
    const guard = createLoginGuard({ cache, loginFailureLimits: { perUsername: 10, perAddress: 30 } });
    const { res } = await attempt(guard, { username: 'alice' });
    let finished = false;
    res.once('finish', () => (finished = true));
    res.answer(401);
    await settle();
    expect(finished).toBe(false);
    release();
    await held;
    await settle();
    expect(finished).toBe(true);
  });

  it('refuses a burst of wrong passwords for one username with 429 SERVER_TOO_MANY_REQUESTS, and lets another user from elsewhere in', async () => {
    const guard = createLoginGuard({ cache: createMemoryCache(), loginFailureLimits: { perUsername: 10, perAddress: 30 } });
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < 15; i++) {
      const { refused, res } = await attempt(guard, { client: `198.51.100.${i + 1}`, username: 'alice' });
      if (refused) outcomes.push(`${refused.status} ${refused.code}`);
      else {
        res.answer(401);
        await settle();
        outcomes.push(401);
      }
    }
    expect(outcomes).toEqual([...Array<number>(10).fill(401), ...Array<string>(5).fill('429 SERVER_TOO_MANY_REQUESTS')]);
    const other = await attempt(guard, { client: '203.0.113.5', username: 'bob' });
    expect(other.refused).toBeUndefined();
  });

  it('refuses an address after its limit of failures of any method (certificate logins count too)', async () => {
    const guard = createLoginGuard({ cache: createMemoryCache(), loginFailureLimits: { perUsername: 100, perAddress: 3 } });
    for (const username of [undefined, 'u1', undefined]) {
      const { refused, res } = await attempt(guard, { client: '203.0.113.9', username });
      expect(refused).toBeUndefined();
      res.answer(401);
      await settle();
    }
    expect((await attempt(guard, { client: '203.0.113.9', username: 'fresh' })).refused?.code).toBe('SERVER_TOO_MANY_REQUESTS');
    expect((await attempt(guard, { client: '203.0.113.9', search: '?method=ext-jwt' })).refused?.status).toBe(429);
    expect((await attempt(guard, { client: '203.0.113.10', username: 'fresh' })).refused).toBeUndefined();
  });

  it('counts only refused credentials (401): successes, bad requests and dropped answers count nothing', async () => {
    const guard = createLoginGuard({ cache: createMemoryCache(), loginFailureLimits: { perUsername: 1, perAddress: 1 } });
    for (const end of [(r: FakeResponse) => r.answer(200), (r: FakeResponse) => r.answer(400), (r: FakeResponse) => r.drop()]) {
      const { refused, res } = await attempt(guard, { username: 'carol' });
      expect(refused).toBeUndefined();
      end(res);
      await settle();
    }
    expect((await attempt(guard, { username: 'carol' })).refused).toBeUndefined();
  });

  it('never refuses with both limits and the limiter off', async () => {
    const guard = createLoginGuard({ cache: createMemoryCache(), loginFailureLimits: { perUsername: 0, perAddress: 0 }, authRateLimiter: { enabled: false } });
    expect(guard.limiter).toBeUndefined();
    for (let i = 0; i < 300; i++) {
      const { refused, res } = await attempt(guard, { username: 'dave' });
      expect(refused).toBeUndefined();
      if (i % 2 === 0) res.answer(401); // half stay outstanding
    }
  });
});

describe('login guard: auth rate limiter', () => {
  const noFailureLimits = { perUsername: 0, perAddress: 0 };

  it('admits logins and enrollments into one window and refuses beyond it; other routes pass untouched', async () => {
    const guard = createLoginGuard({ cache: createMemoryCache(), loginFailureLimits: noFailureLimits, authRateLimiter: { minSize: 5, maxSize: 5 } });
    const held = [];
    for (const op of ['enroll', 'enrollOtt', 'getEnrollmentJwks']) held.push(await attempt(guard, { route: route(op) }));
    held.push(await attempt(guard, { username: 'erin' }), await attempt(guard, { search: '?method=cert' }));
    expect(held.map((h) => h.refused)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect((await attempt(guard, { route: route('enrollUpdb') })).refused?.code).toBe('SERVER_TOO_MANY_REQUESTS');
    expect((await attempt(guard, { route: route('enrollToken') })).refused?.code).toBe('SERVER_TOO_MANY_REQUESTS');
    expect((await attempt(guard, { username: 'erin' })).refused?.status).toBe(429);
    for (const op of ['listEnrollments', 'listIdentities', 'authenticateMfa']) {
      expect(guard.admit(route(op), request('198.51.100.1'), new FakeResponse() as unknown as ServerResponse, Buffer.alloc(0), '')).toBeUndefined();
    }
    held[0]!.res.answer(200);
    expect((await attempt(guard, { username: 'erin' })).refused).toBeUndefined();
  });

  it('backs off when an answer could not be delivered or the context timed out', async () => {
    const guard = createLoginGuard({ cache: createMemoryCache(), loginFailureLimits: noFailureLimits, authRateLimiter: { minSize: 5, maxSize: 40 } });
    const held = [];
    for (let i = 0; i < 30; i++) held.push((await attempt(guard, { username: `u${i}` })).res);
    held[24]!.drop(); // position 25 → window 15
    expect(guard.limiter!.windowSize).toBe(15);
    held[21]!.answer(503); // position 22 → 12
    expect(guard.limiter!.windowSize).toBe(12);
    held[0]!.answer(401); // a failure: unchanged
    expect(guard.limiter!.windowSize).toBe(12);
  });

  it('releases the place of a caller that left while the failure counters were being read (a slow cache)', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const memory = createMemoryCache();
    // Reads of the shared cache wait until the test opens the gate, as a cache that stalls does.
    const slow: Cache = { ...memory, get: async (key: string) => (await gate, memory.get(key)) };
    const guard = createLoginGuard({ cache: slow, loginFailureLimits: { perUsername: 10, perAddress: 30 }, authRateLimiter: { minSize: 5, maxSize: 5 } });
    const res = new FakeResponse();
    const admitted = guard.admit(AUTHENTICATE, request('198.51.100.1'), res as unknown as ServerResponse, passwordBody('ann'), '?method=password');
    res.drop(); // the caller gives up before the guard is done with it
    open();
    await admitted;
    expect(guard.limiter!.inFlight).toBe(0);
    // The window is whole: five callers in a row are let in.
    for (let i = 0; i < 5; i++) expect((await attempt(guard, { username: `v${i}` })).refused).toBeUndefined();
  });

  it('lets one login of a learned admin credential per 10 s past a full window; a false claim uses nothing up', async () => {
    let now = 5_000_000;
    const cache: Cache = createMemoryCache({ now: () => now });
    const guard = createLoginGuard({ cache, loginFailureLimits: noFailureLimits, authRateLimiter: { minSize: 5, maxSize: 5 }, now: () => now });
    // The admin logs in once while there is room; the guard learns the credential from the new session's principal.
    const token = 'admin-session-token';
    await cache.set(principalCacheKey(token), principalCacheEntry(testPrincipal({ isAdmin: true }), 30, now), 30);
    const first = await attempt(guard, { username: 'admin' });
    first.res.answer(200, { 'zt-session': token });
    await settle();
    now += 10_001;
    for (let i = 0; i < 5; i++) await attempt(guard, { username: `sdk-${i}` }); // the window fills up
    expect((await attempt(guard, { username: 'sdk-x' })).refused?.status).toBe(429);

    const wrong = await attempt(guard, { username: 'admin' }); // claims the admin's username
    expect(wrong.refused).toBeUndefined();
    expect((await attempt(guard, { username: 'admin' })).refused?.status).toBe(429); // one claim at a time
    wrong.res.answer(401);
    const right = await attempt(guard, { username: 'admin' });
    expect(right.refused).toBeUndefined();
    right.res.answer(200, { 'zt-session': 'another' });
    now += 10_000;
    expect((await attempt(guard, { username: 'admin' })).refused?.status).toBe(429);
    now += 1;
    expect((await attempt(guard, { username: 'admin' })).refused).toBeUndefined();
    expect(guard.limiter!.inFlight).toBe(5);
  });

  it('does not grant the bypass to a credential learned to be a non-admin’s', async () => {
    const cache = createMemoryCache();
    const guard = createLoginGuard({ cache, loginFailureLimits: noFailureLimits, authRateLimiter: { minSize: 5, maxSize: 5 } });
    await cache.set(principalCacheKey('t'), principalCacheEntry(testPrincipal({ isAdmin: false }), 30, Date.now()), 30);
    (await attempt(guard, { username: 'user' })).res.answer(200, { 'zt-session': 't' });
    await settle();
    for (let i = 0; i < 5; i++) await attempt(guard, { username: `sdk-${i}` });
    expect((await attempt(guard, { username: 'user' })).refused?.status).toBe(429);
  });
});

/** Drives the guard's OIDC entry as the gateway app does for a request passed through to `/oidc`. */
async function attemptOidc(
  guard: ReturnType<typeof createLoginGuard>,
  path: string,
  opts: { method?: string; client?: string; body?: string; contentType?: string } = {},
): Promise<{ refused?: ApiError; res: FakeResponse; passed: boolean }> {
  const res = new FakeResponse();
  const req = { zitiClientAddress: opts.client ?? '198.51.100.1', socket: {}, method: opts.method ?? 'POST', headers: opts.contentType ? { 'content-type': opts.contentType } : {} } as unknown as ProxiedRequest;
  try {
    const admitted = guard.admitOidc(path, req, res as unknown as ServerResponse, Buffer.from(opts.body ?? ''));
    if (admitted) await admitted;
    return { res, passed: admitted === undefined };
  } catch (err) {
    return { refused: err as ApiError, res, passed: false };
  }
}

describe('login guard: OIDC provider logins', () => {
  const noFailureLimits = { perUsername: 0, perAddress: 0 };
  const LIMITED = ['/oidc/login/password', '/oidc/login/username', '/oidc/login/cert', '/oidc/login/ext-jwt', '/oidc/login/totp', '/oidc/login/totp/enroll', '/oidc/login/totp/enroll/verify', '/oidc/oauth/token', '/oidc/oauth/token/'];

  it('knows the POSTs to /oidc/login/* and /oidc/oauth/token as logins, nothing else', () => {
    for (const path of LIMITED) expect(isOidcLogin('POST', path)).toBe(true);
    for (const path of ['/oidc/login', '/oidc/login/', '/oidc/authorize', '/oidc/keys', '/oidc/revoke', '/oidc/oauth/tokens', '/oidc/.well-known/openid-configuration']) {
      expect(isOidcLogin('POST', path)).toBe(false);
    }
    expect(isOidcLogin('GET', '/oidc/login/password')).toBe(false);
    expect(isOidcLogin('GET', '/oidc/oauth/token')).toBe(false);
  });

  it('admits every OIDC login into the auth limiter\'s window, shared with POST /authenticate, and refuses beyond it', async () => {
    const guard = createLoginGuard({ cache: createMemoryCache(), loginFailureLimits: noFailureLimits, authRateLimiter: { minSize: 9, maxSize: 9 } });
    const held = [];
    for (const path of LIMITED.slice(0, 8)) held.push(await attemptOidc(guard, path, { body: '{}' }));
    held.push(await attempt(guard, { username: 'erin' }));
    expect(held.map((h) => h.refused)).toEqual(Array(9).fill(undefined));
    expect(guard.limiter!.inFlight).toBe(9);
    for (const path of LIMITED) expect((await attemptOidc(guard, path)).refused?.code).toBe('SERVER_TOO_MANY_REQUESTS');
    expect((await attempt(guard, { username: 'erin' })).refused?.status).toBe(429);
    // the rest of the provider is never limited
    for (const [method, path] of [['GET', '/oidc/authorize'], ['GET', '/oidc/login/password'], ['POST', '/oidc/revoke'], ['GET', '/oidc/keys']] as const) {
      const r = await attemptOidc(guard, path, { method });
      expect([r.refused, r.passed]).toEqual([undefined, true]);
    }
    // a login that redirects (to the callback) succeeded: its place is given back
    held[0]!.res.answer(302);
    expect(guard.limiter!.inFlight).toBe(8);
    expect((await attemptOidc(guard, '/oidc/login/password')).refused).toBeUndefined();
  });

  it('counts 401s of password logins per username (JSON or form body) and per address', async () => {
    const guard = createLoginGuard({ cache: createMemoryCache(), loginFailureLimits: { perUsername: 2, perAddress: 100 }, authRateLimiter: { enabled: false } });
    const fail = async (path: string, body: string, contentType: string | undefined, client: string) => {
      const r = await attemptOidc(guard, path, { body, contentType, client });
      expect(r.refused).toBeUndefined();
      r.res.answer(401);
      await settle();
    };
    await fail('/oidc/login/password', JSON.stringify({ username: 'alice', password: 'x' }), 'application/json', '198.51.100.1');
    await fail('/oidc/login/username', 'username=alice&password=x', 'application/x-www-form-urlencoded', '198.51.100.2');
    expect((await attemptOidc(guard, '/oidc/login/password', { body: 'username=alice&password=y', contentType: 'application/x-www-form-urlencoded', client: '198.51.100.3' })).refused?.code).toBe('SERVER_TOO_MANY_REQUESTS');
    // POST /authenticate shares the counter
    expect((await attempt(guard, { client: '198.51.100.4', username: 'alice' })).refused?.status).toBe(429);
    expect((await attemptOidc(guard, '/oidc/login/password', { body: JSON.stringify({ username: 'bob' }), client: '198.51.100.5' })).refused).toBeUndefined();
  });

  it('counts 401s of every primary login per address; second factors and the token endpoint only take a ticket', async () => {
    const guard = createLoginGuard({ cache: createMemoryCache(), loginFailureLimits: { perUsername: 100, perAddress: 2 }, authRateLimiter: { enabled: false } });
    for (const path of ['/oidc/login/totp', '/oidc/oauth/token', '/oidc/login/totp/enroll/verify']) {
      const r = await attemptOidc(guard, path, { client: '203.0.113.9' });
      expect(r.passed).toBe(true); // no limiter: nothing to wait for
      r.res.answer(401);
      await settle();
    }
    for (const path of ['/oidc/login/cert', '/oidc/login/ext-jwt']) {
      const r = await attemptOidc(guard, path, { client: '203.0.113.9' });
      expect(r.refused).toBeUndefined();
      r.res.answer(401);
      await settle();
    }
    expect((await attemptOidc(guard, '/oidc/login/cert', { client: '203.0.113.9' })).refused?.status).toBe(429);
    expect((await attemptOidc(guard, '/oidc/login/cert', { client: '203.0.113.10' })).refused).toBeUndefined();
  });
});

describe('oidcUsernameOf', () => {
  it('reads the username of a form or JSON body', () => {
    expect(oidcUsernameOf(Buffer.from('password=x&username=al%20ice'), 'application/x-www-form-urlencoded; charset=utf-8')).toBe('al ice');
    expect(oidcUsernameOf(Buffer.from('password=x'), 'application/x-www-form-urlencoded')).toBeUndefined();
    expect(oidcUsernameOf(Buffer.from('{"username":"bob"}'), 'application/json')).toBe('bob');
    expect(oidcUsernameOf(Buffer.from('{"username":"bob"}'), undefined)).toBe('bob');
    expect(oidcUsernameOf(Buffer.alloc(0), 'application/x-www-form-urlencoded')).toBeUndefined();
  });
});

describe('usernameOf', () => {
  it('reads the username of a password body, and does not parse a body nested deeper than bodies may be', () => {
    expect(usernameOf(passwordBody('alice'))).toBe('alice');
    expect(usernameOf(Buffer.from('{"username":5}'))).toBeUndefined();
    expect(usernameOf(Buffer.from('not json'))).toBeUndefined();
    const parse = jest.spyOn(JSON, 'parse');
    try {
      expect(usernameOf(Buffer.from(`{"username":"alice","x":${'['.repeat(5000)}${']'.repeat(5000)}}`))).toBeUndefined();
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });
});
