import type { IncomingMessage } from 'node:http';
import { ApiError } from '@ziti/errors';
import { type RequestPrincipal, principalCacheKey } from '@ziti/http-kit';
import { createMemoryCache } from '@ziti/messaging';
import {
  Authenticator,
  MAX_BEARER_TOKENS,
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
      close: () => undefined,
    };
    const auth = new Authenticator({ cache: createMemoryCache({ now: () => NOW }), resolver, now: () => NOW });
    expect(await auth.resolveRequest('t')).toEqual({ principal: principal({ isFullyAuthenticated: false }), challenge });
    expect(await auth.resolveRequest('t', ['ext'])).toEqual({ principal: principal() });
  });

  it('treats a cache failure as a miss', async () => {
    const broken = { get: async () => { throw new Error('down'); }, set: async () => { throw new Error('down'); }, setIfAbsent: async () => false, increment: async () => 0, del: async () => undefined, close: async () => undefined };
    const { resolver, calls } = fakeResolver(async () => ({ principal: principal(), cacheTtlSeconds: 10 }));
    const logs: string[] = [];
    const auth = new Authenticator({ cache: broken, resolver, log: (m) => logs.push(m), now: () => NOW });
    expect((await auth.authenticate('t')).identityId).toBe('id1');
    expect(calls).toEqual(['t']);
    expect(logs).toHaveLength(2);
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
