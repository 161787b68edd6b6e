import type { IncomingMessage } from 'node:http';
import { ApiError } from '@ziti/errors';
import { type RequestPrincipal, principalCacheKey, principalGenerationKey, revocationMarkerKey } from '@ziti/http-kit';
import { createMemoryCache } from '@ziti/messaging';
import {
  Authenticator,
  INVALID_BEARER_CHALLENGE,
  MAX_BEARER_TOKENS,
  accessTokenClaims,
  bearerTokens,
  INVALID_TOKEN_CHALLENGE,
  MAX_CACHE_TTL_SECONDS,
  MISSING_TOKEN_CHALLENGE,
  missingTokenError,
  sessionHeaders,
  sessionToken,
} from './authenticator.js';
import type { SessionResolver } from './session-resolver.js';

const NOW = Date.parse('2026-03-01T10:00:00.000Z');

function principal(over: Partial<RequestPrincipal> = {}): RequestPrincipal {
  return {
    identityId: 'id1', identityName: 'admin', apiSessionId: 'as1', isAdmin: true, isDefaultAdmin: true,
    isFullyAuthenticated: true, permissions: [], configTypes: [], authenticatorId: 'au1',
    expiresAt: new Date(NOW + 1800_000).toISOString(), expirationSeconds: 1800, identityTypeId: 'Default', ...over,
  };
}

function fakeResolver(answer: (token: string) => Promise<{ principal: RequestPrincipal; cacheTtlSeconds: number }>) {
  const calls: string[] = [];
  const resolver: SessionResolver = {
    resolve: (token) => {
      calls.push(token);
      return answer(token);
    },
    resolveAccessToken: () => Promise.reject(new Error('not an OIDC test')),
    close: () => undefined,
  };
  return { resolver, calls };
}

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('sessionToken', () => {
  it('takes the first non-empty zt-session value, trimmed', () => {
    expect(sessionToken(req({ 'zt-session': '  tok  ' }))).toBe('tok');
    expect(sessionToken(req({ 'zt-session': ', second, third' }))).toBe('second');
  });

  it('ignores a bare Authorization: Bearer (no OIDC)', () => {
    expect(sessionToken(req({ authorization: 'Bearer abc' }))).toBeUndefined();
    expect(sessionToken(req({ 'zt-session': '   ' }))).toBeUndefined();
  });
});

describe('bearerTokens', () => {
  it('takes every Authorization: Bearer line, at most three, ignoring other schemes', () => {
    const r = (lines: string[]) => ({ headers: { authorization: lines[0] }, headersDistinct: { authorization: lines } }) as unknown as IncomingMessage;
    expect(bearerTokens(r(['Bearer a', 'bearer  b ', 'Basic xyz', 'Bearer c', 'Bearer d']))).toEqual(['a', 'b', 'c']);
    expect(MAX_BEARER_TOKENS).toBe(3);
    expect(bearerTokens(req({}))).toEqual([]);
    expect(bearerTokens(req({ authorization: 'Bearer only' }))).toEqual(['only']);
  });
});

describe('missingTokenError', () => {
  it('is 401 UNAUTHORIZED with both challenges in one header value', () => {
    const err = missingTokenError();
    expect([err.status, err.code]).toEqual([401, 'UNAUTHORIZED']);
    expect(err.headers['WWW-Authenticate']).toBe(
      'zt-session realm="zt-session" error="missing" error_description="no matching token was provided",Bearer realm="openziti-oidc" error="missing" error_description="no matching token was provided"',
    );
    expect(err.headers['WWW-Authenticate']).toBe(MISSING_TOKEN_CHALLENGE);
  });
});

describe('Authenticator', () => {
  it('caches a resolved principal and serves the next call from the cache', async () => {
    const cache = createMemoryCache({ now: () => NOW });
    const { resolver, calls } = fakeResolver(async () => ({ principal: principal(), cacheTtlSeconds: 20 }));
    const auth = new Authenticator({ cache, resolver, now: () => NOW });

    expect((await auth.authenticate('t1')).identityId).toBe('id1');
    expect((await auth.authenticate('t1')).identityId).toBe('id1');
    expect(calls).toEqual(['t1']);
    const entry = JSON.parse((await cache.get(principalCacheKey('t1')))!);
    expect(entry.expiresAt).toBe(new Date(NOW + 20_000).toISOString());
  });

  it('bounds the cache TTL by the maximum and by the session expiry, and skips caching when under a second', async () => {
    const sets: number[] = [];
    const cache = createMemoryCache({ now: () => NOW });
    const spy = { ...cache, set: async (k: string, v: string, ttl: number) => { sets.push(ttl); await cache.set(k, v, ttl); } };
    const answers = [
      { principal: principal(), cacheTtlSeconds: 3600 },
      { principal: principal({ expiresAt: new Date(NOW + 7_500).toISOString() }), cacheTtlSeconds: 20 },
      { principal: principal({ expiresAt: new Date(NOW + 500).toISOString() }), cacheTtlSeconds: 20 },
      { principal: principal(), cacheTtlSeconds: 0 },
    ];
    const { resolver } = fakeResolver(async () => answers.shift()!);
    const auth = new Authenticator({ cache: spy, resolver, now: () => NOW });
    for (const t of ['a', 'b', 'c', 'd']) await auth.authenticate(t);
    expect(sets).toEqual([MAX_CACHE_TTL_SECONDS, 7]);
  });

  it('asks identity-auth once for concurrent requests with the same token', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { resolver, calls } = fakeResolver(async () => {
      await gate;
      return { principal: principal(), cacheTtlSeconds: 10 };
    });
    const auth = new Authenticator({ cache: createMemoryCache(), resolver });
    const all = Promise.all([auth.authenticate('same'), auth.authenticate('same'), auth.authenticate('same')]);
    await new Promise((r) => setImmediate(r));
    release();
    await all;
    expect(calls).toEqual(['same']);
  });

  it('passes on a 401 with its challenge, and adds the invalid-token challenge when it has none', async () => {
    const withHeader = ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': 'zt-session realm="zt-session" error="expired"' } });
    const { resolver } = fakeResolver(async (t) => {
      throw t === 'x' ? withHeader : ApiError.of('UNAUTHORIZED');
    });
    const auth = new Authenticator({ cache: createMemoryCache(), resolver });
    await expect(auth.authenticate('x')).rejects.toBe(withHeader);
    const bare = (await auth.authenticate('y').catch((e: unknown) => e)) as ApiError;
    expect([bare.status, bare.code, bare.headers['WWW-Authenticate']]).toEqual([401, 'UNAUTHORIZED', INVALID_TOKEN_CHALLENGE]);
  });

  it('passes on other errors unchanged (identity-auth down is 503)', async () => {
    const { resolver } = fakeResolver(async () => {
      throw ApiError.of('TIMEOUT');
    });
    const auth = new Authenticator({ cache: createMemoryCache(), resolver });
    const err = (await auth.authenticate('z').catch((e: unknown) => e)) as ApiError;
    expect([err.status, err.code, err.headers]).toEqual([503, 'TIMEOUT', {}]);
  });

  it('passes bearer tokens to identity-auth and caches only complete principals resolved without them', async () => {
    const cache = createMemoryCache({ now: () => NOW });
    const seen: (readonly string[] | undefined)[] = [];
    const answers: Record<string, RequestPrincipal> = {
      partial: principal({ isFullyAuthenticated: false }),
      full: principal(),
    };
    const resolver: SessionResolver = {
      resolve: async (token, bearer) => {
        seen.push(bearer);
        return { principal: answers[token]!, cacheTtlSeconds: 30 };
      },
      resolveAccessToken: () => Promise.reject(new Error('not an OIDC test')),
      close: () => undefined,
    };
    const auth = new Authenticator({ cache, resolver, now: () => NOW });
    await auth.authenticate('partial');
    await auth.authenticate('partial');
    expect(seen).toHaveLength(2);
    expect(await cache.get(principalCacheKey('partial'))).toBeNull();

    await auth.authenticate('full', ['ext-jwt']);
    expect(seen[2]).toEqual(['ext-jwt']);
    expect(await cache.get(principalCacheKey('full'))).toBeNull();
    await auth.authenticate('full');
    expect(await cache.get(principalCacheKey('full'))).not.toBeNull();
    await auth.authenticate('full', ['ext-jwt']);
    expect(seen).toHaveLength(4);

    await cache.set(principalCacheKey('partial'), JSON.stringify({ principal: answers.partial, expiresAt: new Date(NOW + 10_000).toISOString() }), 10);
    await auth.authenticate('partial');
    expect(seen).toHaveLength(5);
  });

  it('hands on identity-auth\'s challenge for a session left partial by the request\'s bearer tokens', async () => {
    const challenge = 'Bearer realm="openziti-secondary-ext-jwt" error="missing" error_description="no matching token was provided" id="s1" issuer="https://idp"';
    const resolver: SessionResolver = {
      resolve: async (_token, bearer) =>
        bearer && bearer.length > 0
          ? { principal: principal(), cacheTtlSeconds: 0 }
          : { principal: principal({ isFullyAuthenticated: false }), cacheTtlSeconds: 0, wwwAuthenticate: challenge },
      resolveAccessToken: () => Promise.reject(new Error('not an OIDC test')),
      close: () => undefined,
    };
    const auth = new Authenticator({ cache: createMemoryCache({ now: () => NOW }), resolver, now: () => NOW });
    expect(await auth.resolveRequest('t')).toEqual({ principal: principal({ isFullyAuthenticated: false }), challenge });
    expect(await auth.resolveRequest('t', ['ext'])).toEqual({ principal: principal() });
  });

  it('treats a cache failure as a miss', async () => {
    const broken = { get: async () => { throw new Error('down'); }, mget: async () => { throw new Error('down'); }, set: async () => { throw new Error('down'); }, setIfAbsent: async () => false, increment: async () => 0, del: async () => undefined, close: async () => undefined };
    const { resolver, calls } = fakeResolver(async () => ({ principal: principal(), cacheTtlSeconds: 10 }));
    const logs: string[] = [];
    const auth = new Authenticator({ cache: broken, resolver, log: (m) => logs.push(m), now: () => NOW });
    expect((await auth.authenticate('t')).identityId).toBe('id1');
    expect(calls).toEqual(['t']);
    expect(logs).toHaveLength(2);
  });
});

const SEC = NOW / 1000;

/** A compact JWS with these claims (the signature is not looked at by the gateway). */
function jwt(claims: Record<string, unknown>, signature = 'c2ln'): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'ES256', kid: 'k1', typ: 'JWT' })}.${part(claims)}.${signature}`;
}
const accessClaims = (over: Record<string, unknown> = {}) => ({ jti: 'jti-1', z_asid: 'as1', sub: 'id1', iat: SEC - 60, nbf: SEC - 60, exp: SEC + 1800, z_t: 'a', ...over });

/** identity-auth's resolution of access tokens (a legacy token is not expected here). */
function oidcResolver(answer: (token: string) => Promise<{ principal: RequestPrincipal; cacheTtlSeconds: number; wwwAuthenticate?: string }>) {
  const calls: string[] = [];
  const resolver: SessionResolver = {
    resolve: () => Promise.reject(new Error('a legacy resolve was not expected')),
    resolveAccessToken: (token) => {
      calls.push(token);
      return answer(token);
    },
    close: () => undefined,
  };
  return { resolver, calls };
}

/** The memory cache, counting `mget` calls and recording `set` TTLs. */
function spiedCache() {
  const cache = createMemoryCache({ now: () => NOW });
  const spy = {
    ...cache,
    mgets: [] as (readonly string[])[],
    ttls: [] as number[],
    mget: async (keys: readonly string[]) => {
      spy.mgets.push(keys);
      return cache.mget(keys);
    },
    set: async (k: string, v: string, ttl: number) => {
      spy.ttls.push(ttl);
      await cache.set(k, v, ttl);
    },
  };
  return spy;
}

const rejection = async (p: Promise<unknown>) => (await p.then(() => undefined, (e: unknown) => e)) as ApiError;

describe('accessTokenClaims', () => {
  it('reads jti, z_asid, sub, iat and exp of the payload without verifying it', () => {
    expect(accessTokenClaims(jwt(accessClaims()))).toEqual({ jti: 'jti-1', apiSessionId: 'as1', sub: 'id1', iat: SEC - 60, exp: SEC + 1800 });
  });

  it.each([
    ['not a JWT', 'opaque-token'],
    ['two parts', 'a.b'],
    ['four parts', `${jwt(accessClaims())}.x`],
    ['a payload that is not base64url', 'eyJhbGciOiJFUzI1NiJ9.!!!.c2ln'],
    ['a payload that is not JSON', `eyJhbGciOiJFUzI1NiJ9.${Buffer.from('not json').toString('base64url')}.c2ln`],
    ['a payload that is an array', `eyJhbGciOiJFUzI1NiJ9.${Buffer.from('[1]').toString('base64url')}.c2ln`],
    ['no jti', jwt(accessClaims({ jti: undefined }))],
    ['no z_asid', jwt(accessClaims({ z_asid: undefined }))],
    ['an empty sub', jwt(accessClaims({ sub: '' }))],
    ['iat as a string', jwt(accessClaims({ iat: '1' }))],
    ['no exp', jwt(accessClaims({ exp: undefined }))],
  ])('refuses %s', (_label, token) => {
    expect(accessTokenClaims(token)).toBeUndefined();
  });
});

describe('Authenticator: OIDC access tokens', () => {
  it('refuses a malformed token with the invalid bearer challenge, without asking identity-auth', async () => {
    const { resolver, calls } = oidcResolver(async () => ({ principal: principal(), cacheTtlSeconds: 30 }));
    const auth = new Authenticator({ cache: createMemoryCache({ now: () => NOW }), resolver, now: () => NOW });
    for (const token of ['opaque', 'a.b.c', jwt(accessClaims({ jti: 7 }))]) {
      const err = await rejection(auth.resolveAccessToken(token));
      expect([err.status, err.code, err.headers['WWW-Authenticate']]).toEqual([401, 'UNAUTHORIZED', INVALID_BEARER_CHALLENGE]);
    }
    expect(calls).toEqual([]);
    expect(INVALID_BEARER_CHALLENGE).toBe('Bearer realm="openziti-oidc" error="invalid" error_description="token is invalid"');
  });

  it('resolves a miss through identity-auth, caches it, serves the next request from the cache, and reads the markers every time', async () => {
    const cache = spiedCache();
    const { resolver, calls } = oidcResolver(async () => ({ principal: principal(), cacheTtlSeconds: 20 }));
    const auth = new Authenticator({ cache, resolver, now: () => NOW });
    const token = jwt(accessClaims());
    expect(await auth.resolveAccessToken(token)).toEqual({ principal: principal(), oidc: true });
    expect(await auth.resolveAccessToken(token)).toEqual({ principal: principal(), oidc: true });
    expect(calls).toEqual([token]);
    expect(cache.ttls).toEqual([20]);
    const markers = [revocationMarkerKey('JTI', 'jti-1'), revocationMarkerKey('API_SESSION', 'as1'), revocationMarkerKey('IDENTITY', 'id1'), principalGenerationKey('id1')];
    expect(cache.mgets).toEqual([markers, markers]);
  });

  it('a new principal generation of the identity makes its cached principal stale: the next request asks identity-auth', async () => {
    const cache = createMemoryCache({ now: () => NOW });
    const answers = [principal({ isAdmin: true }), principal({ isAdmin: false }), principal({ isAdmin: false })];
    const { resolver, calls } = oidcResolver(async () => ({ principal: answers.shift()!, cacheTtlSeconds: 30 }));
    const auth = new Authenticator({ cache, resolver, now: () => NOW });
    const token = jwt(accessClaims());
    expect((await auth.resolveAccessToken(token)).principal.isAdmin).toBe(true);
    expect((await auth.resolveAccessToken(token)).principal.isAdmin).toBe(true);
    await cache.set(principalGenerationKey('id1'), 'g1', 120);
    expect((await auth.resolveAccessToken(token)).principal.isAdmin).toBe(false);
    expect(JSON.parse((await cache.get(principalCacheKey(token)))!)).toMatchObject({ generation: 'g1' });
    expect((await auth.resolveAccessToken(token)).principal.isAdmin).toBe(false);
    expect(calls).toHaveLength(2);
    // another identity's generation does not touch it
    await cache.set(principalGenerationKey('someone-else'), 'g9', 120);
    await auth.resolveAccessToken(token);
    expect(calls).toHaveLength(2);
  });

  it('a resolution under way when the generation changes is not shared with requests that read the new one', async () => {
    const cache = createMemoryCache({ now: () => NOW });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const answers = [principal({ isAdmin: true })];
    const { resolver, calls } = oidcResolver(async () => {
      const answer = answers.shift() ?? principal({ isAdmin: false });
      if (answer.isAdmin) await held;
      return { principal: answer, cacheTtlSeconds: 30 };
    });
    const auth = new Authenticator({ cache, resolver, now: () => NOW });
    const token = jwt(accessClaims());
    const before = auth.resolveAccessToken(token);
    await new Promise((r) => setImmediate(r));
    await cache.set(principalGenerationKey('id1'), 'g1', 120);
    const after = await auth.resolveAccessToken(token);
    release();
    expect((await before).principal.isAdmin).toBe(true);
    expect(after.principal.isAdmin).toBe(false);
    expect(calls).toHaveLength(2);
    // The older resolution wrote its entry last (under no generation): it is not served, the next request resolves again.
    expect(JSON.parse((await cache.get(principalCacheKey(token)))!).generation).toBeUndefined();
    expect((await auth.resolveAccessToken(token)).principal.isAdmin).toBe(false);
    expect(calls).toHaveLength(3);
    expect((await auth.resolveAccessToken(token)).principal.isAdmin).toBe(false);
    expect(calls).toHaveLength(3);
  });

  it('caches for at most 30 s and never past the token\'s exp; not under a second, not a partial principal', async () => {
    const cache = spiedCache();
    const answers = [
      { principal: principal(), cacheTtlSeconds: 3600 },
      { principal: principal(), cacheTtlSeconds: 20 },
      { principal: principal(), cacheTtlSeconds: 20 },
      { principal: principal({ isFullyAuthenticated: false }), cacheTtlSeconds: 20 },
    ];
    const { resolver } = oidcResolver(async () => answers.shift()!);
    const auth = new Authenticator({ cache, resolver, now: () => NOW });
    await auth.resolveAccessToken(jwt(accessClaims({ jti: 'a' })));
    await auth.resolveAccessToken(jwt(accessClaims({ jti: 'b', exp: SEC + 12 })));
    await auth.resolveAccessToken(jwt(accessClaims({ jti: 'c', exp: SEC })));
    await auth.resolveAccessToken(jwt(accessClaims({ jti: 'd' })));
    expect(cache.ttls).toEqual([MAX_CACHE_TTL_SECONDS, 12]);
  });

  it('does not serve a cached principal once the token\'s exp has passed (identity-auth decides)', async () => {
    let now = NOW;
    const cache = createMemoryCache({ now: () => now });
    const expired = ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': 'Bearer realm="openziti-oidc" error="expired" error_description="token is expired"' } });
    let valid = true;
    const { resolver, calls } = oidcResolver(async () => {
      if (!valid) throw expired;
      return { principal: principal(), cacheTtlSeconds: 30 };
    });
    const auth = new Authenticator({ cache, resolver, now: () => now });
    const token = jwt(accessClaims({ exp: SEC + 40 }));
    await auth.resolveAccessToken(token);
    // a stale entry still in the cache (written by a replica with another clock) past exp
    await cache.set(principalCacheKey(token), JSON.stringify({ principal: principal(), expiresAt: new Date(NOW + 3600_000).toISOString() }), 3600);
    now = NOW + 40_000;
    valid = false;
    await expect(auth.resolveAccessToken(token)).rejects.toBe(expired);
    expect(calls).toHaveLength(2);
  });

  it.each([
    ['JTI', 'jti-1'],
    ['API_SESSION', 'as1'],
  ] as const)('a %s marker revokes the token and drops its cached principal', async (type, id) => {
    const cache = createMemoryCache({ now: () => NOW });
    const { resolver, calls } = oidcResolver(async () => ({ principal: principal(), cacheTtlSeconds: 30 }));
    const auth = new Authenticator({ cache, resolver, now: () => NOW });
    const token = jwt(accessClaims());
    await auth.resolveAccessToken(token);
    expect(await cache.get(principalCacheKey(token))).not.toBeNull();
    await cache.set(revocationMarkerKey(type, id), String(NOW), 60);
    const err = await rejection(auth.resolveAccessToken(token));
    expect([err.status, err.code, err.headers['WWW-Authenticate']]).toEqual([401, 'UNAUTHORIZED', INVALID_BEARER_CHALLENGE]);
    expect(await cache.get(principalCacheKey(token))).toBeNull();
    expect(calls).toHaveLength(1);
    // another token of the same identity and a different jti and session is not touched
    expect((await auth.resolveAccessToken(jwt(accessClaims({ jti: 'jti-2', z_asid: 'as2' })))).principal.identityId).toBe('id1');
  });

  it('an IDENTITY marker revokes tokens issued before its issuedBefore, not those issued after', async () => {
    const cache = createMemoryCache({ now: () => NOW });
    const { resolver, calls } = oidcResolver(async () => ({ principal: principal(), cacheTtlSeconds: 30 }));
    const auth = new Authenticator({ cache, resolver, now: () => NOW });
    const before = jwt(accessClaims({ jti: 'old', iat: SEC - 60 }));
    const after = jwt(accessClaims({ jti: 'new', iat: SEC }));
    await auth.resolveAccessToken(before);
    await cache.set(revocationMarkerKey('IDENTITY', 'id1'), String(NOW - 30_000), 60);
    const err = await rejection(auth.resolveAccessToken(before));
    expect([err.status, err.headers['WWW-Authenticate']]).toEqual([401, INVALID_BEARER_CHALLENGE]);
    expect(await cache.get(principalCacheKey(before))).toBeNull();
    expect((await auth.resolveAccessToken(after)).principal.identityId).toBe('id1');
    expect(calls).toEqual([before, after]);
  });

  it('when the markers cannot be read, logs it and asks identity-auth even for a cached principal', async () => {
    const cache = createMemoryCache({ now: () => NOW });
    const broken = { ...cache, mget: async () => { throw new Error('redis down'); } };
    const { resolver, calls } = oidcResolver(async () => ({ principal: principal(), cacheTtlSeconds: 30 }));
    const logs: string[] = [];
    const auth = new Authenticator({ cache: broken, resolver, now: () => NOW, log: (m) => logs.push(m) });
    const token = jwt(accessClaims());
    await auth.resolveAccessToken(token);
    await auth.resolveAccessToken(token);
    expect(await cache.get(principalCacheKey(token))).not.toBeNull();
    expect(calls).toEqual([token, token]);
    expect(logs).toEqual(['revocation marker read failed: redis down', 'revocation marker read failed: redis down']);
  });

  it('passes on identity-auth\'s 401 with its challenge, and gives one without the invalid bearer challenge', async () => {
    const expired = ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': 'Bearer realm="openziti-oidc" error="expired" error_description="token is expired"' } });
    const { resolver } = oidcResolver(async (t) => {
      throw t.endsWith('.expired') ? expired : ApiError.of('UNAUTHORIZED');
    });
    const auth = new Authenticator({ cache: createMemoryCache({ now: () => NOW }), resolver, now: () => NOW });
    await expect(auth.resolveAccessToken(jwt(accessClaims(), 'expired'))).rejects.toBe(expired);
    const bare = await rejection(auth.resolveAccessToken(jwt(accessClaims(), 'bare')));
    expect([bare.status, bare.headers['WWW-Authenticate']]).toEqual([401, INVALID_BEARER_CHALLENGE]);
  });

  it('asks identity-auth once for concurrent requests with the same access token', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { resolver, calls } = oidcResolver(async () => {
      await gate;
      return { principal: principal(), cacheTtlSeconds: 10 };
    });
    const auth = new Authenticator({ cache: createMemoryCache({ now: () => NOW }), resolver, now: () => NOW });
    const token = jwt(accessClaims());
    const all = Promise.all([auth.resolveAccessToken(token), auth.resolveAccessToken(token)]);
    await new Promise((r) => setTimeout(r, 5));
    release();
    await all;
    expect(calls).toEqual([token]);
  });

  it('leaves the zt-session path as it was: an access token sent as zt-session is not served its bearer cache entry', async () => {
    const cache = createMemoryCache({ now: () => NOW });
    const legacyCalls: string[] = [];
    const resolver: SessionResolver = {
      resolve: async (token) => {
        legacyCalls.push(token);
        if (token === 'legacy-uuid') return { principal: principal({ identityId: 'legacy' }), cacheTtlSeconds: 30 };
        throw ApiError.of('UNAUTHORIZED');
      },
      resolveAccessToken: async () => ({ principal: principal(), cacheTtlSeconds: 30 }),
      close: () => undefined,
    };
    const auth = new Authenticator({ cache, resolver, now: () => NOW });
    expect(await auth.resolveRequest('legacy-uuid')).toEqual({ principal: principal({ identityId: 'legacy' }) });
    expect(await auth.resolveRequest('legacy-uuid')).toEqual({ principal: principal({ identityId: 'legacy' }) });
    const token = jwt(accessClaims());
    await auth.resolveAccessToken(token);
    const err = await rejection(auth.resolveRequest(token));
    expect([err.status, err.headers['WWW-Authenticate']]).toEqual([401, INVALID_TOKEN_CHALLENGE]);
    expect(legacyCalls).toEqual(['legacy-uuid', token]);
  });
});

describe('sessionHeaders', () => {
  it('gives the seconds left and the expiry in Go format', () => {
    expect(sessionHeaders(principal({ expiresAt: '2026-03-01T10:30:00.250Z' }), NOW)).toEqual({
      'expiration-seconds': '1800',
      'expires-at': '2026-03-01 10:30:00.25 +0000 UTC',
    });
  });
});
